/* t_service.c - the socket service (service.h) alone: the real rooms it
 * is lent (a journal in a throwaway directory, the job table, the turn,
 * trust, quotas...), this file's conn_* in place of the server's and
 * procs_* in place of the supervisor's and req_node_* in place of the
 * remote room's (the linker takes none of them), and ops that record what
 * the wiring is asked.
 *
 * What it checks is the table before any handler runs (topic, access,
 * role, stopping) with its exact errno and message, that a start lands
 * in the job table and a second one of the same id is refused, that what
 * the wiring keeps (stats' counters) is asked through the ops, and that
 * rank 0's node requests reach the remote room from root only. Before the
 * service was a room (issue 52) only a whole cairnd could show any of it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "unit/jtmp.h"

#include "core/config.h"
#include "core/jobspec.h"
#include "core/rv1.h"
#include "exec/bind.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/killwait.h"
#include "exec/output.h"
#include "exec/quota.h"
#include "exec/remote.h"
#include "exec/service.h"
#include "exec/service_views.h"
#include "exec/streams.h"
#include "exec/trust.h"
#include "exec/turn.h"
#include "exec/usercost.h"
#include "journal/outbox.h"
#include "node/node.h"
#include "procs/procs.h"
#include "server/server.h"

#define USER 4321 /* an unprivileged uid */

/* The server's, recorded instead of sent: the last answer of each. */
struct conn {
    uid_t uid;
};
static struct conn root_conn = {0}, user_conn = {USER};
static int last_errnum;     /* the last error response's, else 0 */
static char last_text[512]; /* its message, or the last payload's JSON */
static int nresponses;

int conn_respond (struct conn *c, int64_t matchtag, const json_t *payload)
{
    char *s = json_dumps (payload, JSON_COMPACT | JSON_SORT_KEYS);
    (void)c, (void)matchtag;
    last_errnum = 0;
    snprintf (last_text, sizeof (last_text), "%s", s ? s : "?");
    free (s);
    nresponses++;
    return 0;
}

int conn_respond_error (
    struct conn *c, int64_t matchtag, int errnum, const char *fmt, ...)
{
    va_list ap;
    (void)c, (void)matchtag;
    va_start (ap, fmt);
    vsnprintf (last_text, sizeof (last_text), fmt, ap);
    va_end (ap);
    last_errnum = errnum;
    nresponses++;
    return 0;
}

uid_t conn_uid (const struct conn *c)
{
    return c->uid;
}

uint64_t conn_id (const struct conn *c)
{
    return c == &root_conn ? 1 : 2;
}

/* The procs.h calls the turn and stats make: no process is started. */
struct procs {
    int unused;
};
static struct procs procs;
void procs_send (struct procs *p)
{
    (void)p;
}
void procs_forget_kick (struct procs *p)
{
    (void)p;
}
size_t procs_count (const struct procs *p)
{
    (void)p;
    return 0;
}
size_t procs_asked (const struct procs *p)
{
    (void)p;
    return 0;
}
uint64_t procs_nspawned (const struct procs *p)
{
    (void)p;
    return 0;
}
const char *procs_cgroup (const struct procs *p)
{
    (void)p;
    return NULL;
}

/* The node role's handlers and live output: never reached here (an exec
 * role service, no stream asks for output), stubbed so that the linker
 * takes neither room, nor the supervisor's library through them. */
void node_req_exec (struct node *n, struct conn *c, int64_t mt, json_t *p)
{
    (void)n, (void)c, (void)mt, (void)p;
}
void node_req_signal (struct node *n, struct conn *c, int64_t mt, json_t *p)
{
    (void)n, (void)c, (void)mt, (void)p;
}
void node_req_ack (struct node *n, struct conn *c, int64_t mt, json_t *p)
{
    (void)n, (void)c, (void)mt, (void)p;
}
void node_req_watch (struct node *n, struct conn *c, int64_t mt, json_t *p)
{
    (void)n, (void)c, (void)mt, (void)p;
}
void output_send_log (struct conn *c,
                      int64_t matchtag,
                      uint64_t id,
                      json_t *sent,
                      const json_t *entry)
{
    (void)c, (void)matchtag, (void)id, (void)sent, (void)entry;
}

/* ---- the wiring's side (service_ops) ---- */

static int64_t relayed; /* the matchtag req_node_relay was given, or -1 */

static uint64_t jobs_done (void *arg)
{
    (void)arg;
    return 7;
}
static int nconns (void *arg)
{
    (void)arg;
    return 3;
}
static const struct service_ops service_ops = {.jobs_done = jobs_done,
                                               .nconns = nconns};

/* Rank 0's requests from its nodes: remote.h's, stubbed (the linker then
 * takes no remote room): node-relay's records its matchtag. */
void req_node_relay (struct remote *r, struct conn *c, int64_t mt, json_t *p)
{
    (void)r, (void)c, (void)p;
    relayed = mt;
}
void req_node_report (struct remote *r, struct conn *c, int64_t mt, json_t *p)
{
    (void)r, (void)c, (void)mt, (void)p;
}
void req_node_hello (struct remote *r, struct conn *c, int64_t mt, json_t *p)
{
    (void)r, (void)c, (void)mt, (void)p;
}
void req_node_state (struct remote *r, struct conn *c, int64_t mt, json_t *p)
{
    (void)r, (void)c, (void)mt, (void)p;
}

static void no_due (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
}
/* A job forgotten: its streams and held kills go first, as the wiring's
 * forget does (streams_destroy wants none left). */
static struct streams *streams_;
static struct killwait *kills_;
static void forget (void *arg, struct jobentry *je)
{
    (void)arg;
    streams_drop_job (streams_, je);
    killwait_drop (kills_, je);
}
static const struct jobtable_ops table_ops = {.due = no_due, .forget = forget};
static void no_staging (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
}
static void no_effects (void *arg, struct jobentry *je, json_t *events)
{
    (void)arg, (void)je, (void)events;
}
static const struct turn_ops turn_ops = {.staging = no_staging,
                                         .effects = no_effects};
static bool never_away (void *arg, uint64_t id)
{
    (void)arg, (void)id;
    return false;
}
static const struct jobctx_ops jobctx_ops = {.client_away = never_away};
static void no_watch (void *arg, int delta)
{
    (void)arg, (void)delta;
}
static const struct streams_ops streams_ops = {.watch = no_watch};
static struct service *svc; /* for the held kills' ops */
static void held_kill (
    void *arg, struct jobentry *je, struct conn *c, int64_t mt, int signum)
{
    (void)arg;
    service_kill (svc, je, c, mt, signum);
}
static const struct killwait_ops killwait_ops = {.kill = held_kill};

struct world {
    char *dir;
    struct journal *journal;
    struct ev_loop *loop;
    struct cairn_config cfg;
    struct outbox *outbox;
    struct jobtable *jobs;
    struct quota *quota;
    struct turn *turn;
    struct streams *streams;
    struct jobctx *jctx;
    struct trust *trust;
    struct usercost *cost;
    struct bindings *bindings;
    struct killwait *kills;
    struct views *views;
};

static void world_init (struct world *w)
{
    struct cairn_error err = {{0}};

    memset (w, 0, sizeof (*w));
    w->dir = tmpdir_create_as ("t_service");
    w->journal = xopen (w->dir, &(struct journal_opts){.nosync = true});
    config_init (&w->cfg);
    if (!(w->trust = trust_create (&w->cfg, 0, &err)))
        BAIL_OUT ("trust_create: %s", err.text);
    if (!(w->loop = ev_loop_new (EVFLAG_AUTO)) ||
        !(w->outbox = outbox_create ()) ||
        !(w->jobs = jobtable_create (w->loop, &table_ops, NULL)) ||
        !(w->quota = quota_create (w->journal, &w->cfg)) ||
        !(w->turn = turn_create (w->loop, w->journal, w->outbox, w->jobs,
                                 w->quota, &procs, 0, &turn_ops, NULL)) ||
        !(w->streams = streams_create (&streams_ops, NULL)) ||
        !(w->jctx = jobctx_create (0, &jobctx_ops, NULL)) ||
        !(w->cost = usercost_create (w->trust, w->quota, w->jobs)) ||
        !(w->bindings = bind_create (w->jobs)) ||
        !(w->kills = killwait_create (&killwait_ops, NULL)) ||
        !(w->views = views_create (w->loop, w->journal, w->jobs, w->trust)))
        BAIL_OUT ("world_init: out of memory");
    streams_ = w->streams;
    kills_ = w->kills;
    struct service_lent lent = {.cfg = &w->cfg,
                                .uid = 0,
                                .t_start = jobctx_now (),
                                .journal = w->journal,
                                .outbox = w->outbox,
                                .jobs = w->jobs,
                                .turn = w->turn,
                                .streams = w->streams,
                                .jctx = w->jctx,
                                .trust = w->trust,
                                .cost = w->cost,
                                .quota = w->quota,
                                .bindings = w->bindings,
                                .kills = w->kills,
                                .procs = &procs,
                                .views = w->views,
                                .node = NULL};
    if (!(svc = service_create (&lent, &service_ops, NULL)))
        BAIL_OUT ("service_create: out of memory");
    relayed = -1;
}

static void world_fini (struct world *w)
{
    service_destroy (svc);
    svc = NULL;
    turn_destroy (w->turn);
    jobtable_destroy (w->jobs);
    views_destroy (w->views);
    streams_destroy (w->streams);
    killwait_destroy (w->kills);
    bind_destroy (w->bindings);
    usercost_destroy (w->cost);
    jobctx_destroy (w->jctx);
    quota_destroy (w->quota);
    trust_destroy (w->trust);
    outbox_destroy (w->outbox);
    ev_loop_destroy (w->loop);
    journal_close (w->journal);
    config_free (&w->cfg);
    tmpdir_destroy (w->dir);
}

/* Send topic with payload (taken) from c; the number of responses. */
static int ask (struct conn *c, const char *topic, json_t *payload)
{
    int n = nresponses;
    last_errnum = 0;
    last_text[0] = '\0';
    service_request (svc, c, topic, 1, payload);
    json_decref (payload);
    return nresponses - n;
}

static void is_error (int errnum, const char *text, const char *what)
{
    is_int (last_errnum, errnum, "%s: errno %d", what, errnum);
    is_str (last_text, text, "%s: its message", what);
}

/* A start payload of job id for userid, one rank. */
static json_t *start_payload (uint64_t id, int userid)
{
    char *av[] = {"/bin/true", NULL};
    json_t *R = rv1_create (1, 1, "node0", 0);
    json_t *js = jobspec_create (av, 1, "/tmp", NULL, 0, 0);
    if (!R || !js)
        BAIL_OUT ("start_payload: out of memory");
    return json_pack ("{s:I s:i s:o s:o}", "id", (json_int_t)id, "userid",
                      userid, "R", R, "jobspec", js);
}

static void test_table (void)
{
    struct world w;
    world_init (&w);

    ask (&root_conn, "nope", json_object ());
    is_error (ENOSYS, "unknown topic 'nope'", "an unknown topic");

    ask (&root_conn, "node-exec", json_object ());
    is_error (ENOSYS,
              "node-exec: this cairnd is not a node (its config has no "
              "\"role\": \"node\")",
              "a node role's topic in the exec role");

    ask (&user_conn, "undrain", json_pack ("{s:s}", "ranks", "0"));
    is_error (EPERM,
              "undrain: permission denied: only root and cairnd's uid 0 "
              "may do this",
              "a user's privileged request");

    ask (&user_conn, "start", start_payload (1u << 30, 0));
    is_error (EPERM,
              "start: permission denied: uid 4321 may start jobs of its "
              "own uid only, not 0",
              "a user's start for another uid");

    ask (&root_conn, "kill", json_pack ("{s:i s:i}", "id", 99, "signum", 15));
    is_error (ENOENT, "job 99 not found", "a kill of an unknown job");

    ask (&user_conn, "node-relay", json_object ());
    is_error (EPERM,
              "node-relay: permission denied: only root and cairnd's uid 0 "
              "may do this",
              "a user's node-relay");
    is_int (relayed, -1, "a user's node-relay never reaches remote");
    ask (&root_conn, "node-relay", json_object ());
    is_int (relayed, 1, "root's node-relay goes to remote");

    world_fini (&w);
}

static void test_start (void)
{
    struct world w;
    world_init (&w);

    int n = ask (&root_conn, "start", start_payload (42, 0));
    is_int (n, 0, "a start is not answered before its commit");
    ok (jobtable_get (w.jobs, 42) != NULL, "the job is in the job table");
    ask (&root_conn, "start", start_payload (42, 0));
    is_error (EEXIST, "job 42 already exists", "a second start of job 42");
    turn_flush_all (w.turn);

    ask (&root_conn, "stats", json_object ());
    json_t *st = json_loads (last_text, 0, NULL);
    is_int (json_integer_value (json_object_get (st, "jobs-done")), 7,
            "stats: jobs-done is the ops'");
    is_int (json_integer_value (json_object_get (st, "connections")), 3,
            "stats: connections is the ops'");
    is_int (json_integer_value (json_object_get (st, "jobs")), 1,
            "stats: jobs is the job table's");
    json_decref (st);

    service_stopping (svc);
    ask (&root_conn, "start", start_payload (43, 0));
    is_error (EAGAIN, "cairnd is stopping", "a start once stopping");
    ok (jobtable_get (w.jobs, 43) == NULL, "and no job 43");

    world_fini (&w);
}

int main (void)
{
    plan (NO_PLAN);
    test_table ();
    test_start ();
    done_testing ();
}
