/* remote.c - rank 0's processes on other nodes (multinode,
 * DESIGN-MULTINODE.md).
 *
 * A job's process whose rank runs elsewhere (job_proc_node) is journaled
 * here as any other (proc-intent first); its effect is a `node-exec` sent
 * to the node through the relay, the cairn-exec module that holds a
 * `node-relay` stream open to us and forwards each message over Flux.
 * Nodes answer with REPORTs (`node-report`, remote_report.c), which are
 * journaled before anything is done with them; a report of an end is answered
 * with `node-ack` once its proc-exit is committed, so the node keeps it until
 * then.
 *
 * Nothing here is journaled that a job's events do not already say: which
 * processes are remote follows from the job's config snapshot, so after a
 * restart remote_track() is told of each unfinished one and asks its node
 * again. The asking is the heartbeat: every `poll` seconds each unfinished
 * process is asked about; a node that stays silent for `timeout` while a
 * relay is there has its processes lost (a drain, an exception: a lost
 * process's consequences, job_decide.c), and new ones for it are lost at
 * once until it is remote_heard from again.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"
#include "core/idset.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/remote.h"
#include "exec/remote_private.h"
#include "exec/turn.h"
#include "journal/outbox.h"
#include "server/server.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "journal/crashpoint.h"

#define REMOTE_TICK 1.0 /* seconds between looks at the clock */
#define REMOTE_TICK_BACKLOG 0.02 /* ... while messages wait for room */
/* What may be queued for the relay (cairnd drops a client more than
 * SERVER_MAX_OUTPUT_DEFAULT behind): the rest waits for the next tick. */
#define RELAY_BUDGET (SERVER_MAX_OUTPUT_DEFAULT / 4)

/* How long remote.gone remembers one given up on: after its kill was sent
 * (its node's report of the end then comes, or the node had forgotten
 * it), and at most, if its node never answers again. Its job may be long
 * over: what ran on unseen is killed all the same (issue 33). */
#define GONE_AFTER_KILL 60.0
#define GONE_MAX (24 * 3600.0)

static void tick_cb (struct ev_loop *loop, ev_timer *w, int revents);

struct remote *remote_create (struct ev_loop *loop,
                              struct journal *journal,
                              struct outbox *outbox,
                              struct quota *quota,
                              struct jobtable *jobs,
                              struct turn *turn,
                              struct jobctx *jctx)
{
    struct remote *r = calloc (1, sizeof (*r));
    if (!r || !(r->procs = hashmap_create ()) ||
        !(r->nodes = hashmap_create ()) || !(r->gone = hashmap_create ())) {
        if (r) {
            hashmap_destroy (r->procs);
            hashmap_destroy (r->nodes);
            free (r);
        }
        return NULL;
    }
    r->loop = loop;
    r->journal = journal;
    r->outbox = outbox;
    r->quota = quota;
    r->jobs = jobs;
    r->turn = turn;
    r->jctx = jctx;
    if (!(r->outq = json_array ())) {
        json_decref (r->outq);
        hashmap_destroy (r->procs);
        hashmap_destroy (r->nodes);
        hashmap_destroy (r->gone);
        free (r);
        return NULL;
    }
    ev_timer_init (&r->tick, tick_cb, REMOTE_TICK, REMOTE_TICK);
    r->tick.data = r;
    return r;
}

void remote_destroy (struct remote *r)
{
    size_t pos = 0;
    void *v;
    if (!r)
        return;
    int saved = errno;
    ev_timer_stop (r->loop, &r->tick);
    while ((v = hashmap_next (r->procs, &pos, NULL)))
        free (v);
    pos = 0;
    while ((v = hashmap_next (r->nodes, &pos, NULL)))
        free (v);
    pos = 0;
    while ((v = hashmap_next (r->gone, &pos, NULL)))
        free (v);
    hashmap_destroy (r->procs);
    hashmap_destroy (r->nodes);
    hashmap_destroy (r->gone);
    json_decref (r->outq);
    free (r);
    errno = saved;
}

static struct rnode *node_get (struct remote *r, uint32_t rank)
{
    char key[16];
    struct rnode *n;
    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    if ((n = hashmap_get (r->nodes, key)))
        return n;
    if (!(n = calloc (1, sizeof (*n))))
        return NULL;
    memcpy (n->key, key, sizeof (key));
    if (hashmap_put (r->nodes, n->key, n) < 0) {
        free (n);
        return NULL;
    }
    return n;
}

/* "node HOST (rank R)" */
static void node_name (const struct jobentry *je,
                       uint32_t rank,
                       char *buf,
                       size_t len)
{
    struct idset *one = idset_create ();
    char *host = NULL;
    if (one && idset_set (one, rank) == 0)
        host = job_hosts (je->job, one);
    snprintf (buf, len, "node %s (rank %u)", host ? host : "?",
              (unsigned)rank);
    free (host);
    idset_destroy (one);
}

static void relay_write (struct remote *r, const json_t *msg)
{
    CRASHPOINT ("remote.send.before");
    if (conn_respond (r->relay, r->relay_mt, msg) < 0)
        log_msg (LOG_WARNING, "relay: %s to rank %ju: %s",
                 json_string_value (json_object_get (msg, "topic")),
                 (uintmax_t)json_integer_value (json_object_get (msg, "rank")),
                 strerror (errno));
    CRASHPOINT ("remote.send.after");
}

/* Write what waits in r->outq while there is room. */
static void relay_flush (struct remote *r)
{
    size_t n = 0;
    while (r->relay && n < json_array_size (r->outq) &&
           conn_pending (r->relay) <= RELAY_BUDGET)
        relay_write (r, json_array_get (r->outq, n++));
    while (n-- > 0)
        json_array_remove (r->outq, 0);
    if (json_array_size (r->outq) > 0)
        r->backlog = true;
}

/* One message to a node through the relay. Dropped when there is none
 * (everything is asked again once one comes). When the relay's queue has
 * no room for it now: a node-exec (queue false) is not sent, false is
 * returned, and it is asked again at the next tick, which comes soon
 * then; another message (queue true: an ack, a signal, asked for once)
 * waits in r->outq for room. */
bool remote_relay_send (struct remote *r,
                        uint32_t rank,
                        const char *topic,
                        json_t *payload_new,
                        bool queue)
{
    json_t *msg = json_pack ("{s:I s:s s:o}", "rank", (json_int_t)rank,
                             "topic", topic, "payload", payload_new);
    bool sent = true;
    if (!msg || !r->relay)
        ;
    else if (json_array_size (r->outq) > 0 ||
             conn_pending (r->relay) > RELAY_BUDGET) {
        r->backlog = true;
        if (!ev_is_active (&r->tick))
            ev_timer_start (r->loop, &r->tick);
        if (queue && json_array_append (r->outq, msg) < 0)
            log_msg (LOG_ERR, "relay: %s to rank %u: out of memory", topic,
                     (unsigned)rank);
        sent = queue;
    } else
        relay_write (r, msg);
    json_decref (msg);
    return sent;
}

static void ask (struct remote *r, struct rproc *rp)
{
    struct jobentry *je = rp->je;
    const struct job_proc *p = job_proc_find (je->job, rp->execid);
    char **argv = NULL;
    const char *cwd = NULL;
    json_t *env = NULL, *jargv = NULL, *o = NULL;
    static const char *const phases[] = {"prolog", "shell", "epilog"};

    if (!p || p->state == PROC_DONE || !r->relay)
        return;
    if (rp->answered) { /* a heartbeat: the node has the rest */
        rp->t_sent = jobctx_now ();
        if (!remote_relay_send (
                r, rp->rank, "node-exec",
                json_pack ("{s:s s:b}", "execid", rp->execid, "query", 1),
                false))
            rp->t_sent = 0;
        goto signal;
    }
    if (job_proc_command (je->job, p, &argv, &cwd, &env) < 0 ||
        !(jargv = json_array ()))
        goto nomem;
    for (char **a = argv; *a; a++)
        if (json_array_append_new (jargv, json_string (*a)) < 0)
            goto nomem;
    o = json_pack ("{s:s s:I s:s s:I s:O s:O s:s? s:I}", "execid", rp->execid,
                   "id", (json_int_t)job_id (je->job), "phase",
                   phases[p->phase], "rank", (json_int_t)rp->rank, "argv",
                   jargv, "env", env, "cwd", cwd, "max-output",
                   (json_int_t)job_output_room (je->job, p->phase));
    if (!o)
        goto nomem;
    /* a shell runs as its job's user there too (a node as root) */
    if (p->phase == PHASE_SHELL &&
        json_object_set_new (o, "user",
                             json_integer (job_shell_uid (je->job))) < 0) {
        json_decref (o);
        goto nomem;
    }
    rp->t_sent = jobctx_now ();
    if (!remote_relay_send (r, rp->rank, "node-exec", o, false))
        rp->t_sent = 0;
signal:
    /* a termination journaled before a crash or a lost message: again
     * (harmless if it arrived; the escalation clock is unchanged) */
    if (rp->t_sent > 0 && p->terminating && p->term_signum > 0)
        remote_relay_send (r, rp->rank, "node-signal",
                           json_pack ("{s:s s:i}", "execid", rp->execid,
                                      "signum", p->term_signum),
                           true);
    goto done;
nomem:
    log_msg (LOG_ERR, "job %s: %s: cannot build node-exec: out of memory",
             je->name, rp->execid);
done:
    job_argv_free (argv);
    json_decref (env);
    json_decref (jargv);
}

/* The process is lost: its node is silent, or was when it was asked. */
static void give_up (struct remote *r, struct rproc *rp, const char *why)
{
    struct jobentry *je = rp->je;
    struct job_ctx ctx;
    char name[160], note[320];
    node_name (je, rp->rank, name, sizeof (name));
    snprintf (note, sizeof (note), "%s %s", name, why);
    log_msg (LOG_WARNING, "job %s: %s: %s", je->name, rp->execid, note);
    rp->given_up = true;
    jobctx_fill (r->jctx, &ctx);
    (void)job_proc_lost (je->job, &ctx, rp->execid, note, je->pending);
    jobtable_dirty (je);
}

static struct rproc *
track (struct remote *r, struct jobentry *je, const char *execid)
{
    const struct job_proc *p = job_proc_find (je->job, execid);
    struct rproc *rp;
    int64_t rank = p ? job_proc_node (je->job, p) : -1;

    if (rank < 0 || !r)
        return NULL;
    if ((rp = hashmap_get (r->procs, execid)))
        return rp;
    if (!(rp = calloc (1, sizeof (*rp))))
        return NULL;
    rp->je = je;
    rp->id = job_id (je->job);
    rp->rank = (uint32_t)rank;
    rp->t_track = jobctx_now ();
    snprintf (rp->execid, sizeof (rp->execid), "%s", execid);
    if (hashmap_put (r->procs, rp->execid, rp) < 0) {
        free (rp);
        return NULL;
    }
    if (!ev_is_active (&r->tick))
        ev_timer_start (r->loop, &r->tick);
    return rp;
}

int remote_track (struct remote *r, struct jobentry *je, const char *execid)
{
    if (!track (r, je, execid)) {
        log_msg (LOG_ERR, "job %s: %s: cannot track it: %s", je->name, execid,
                 strerror (errno ? errno : ENOMEM));
        return -1;
    }
    return 0;
}

void remote_exec (struct remote *r, struct jobentry *je, const char *execid)
{
    struct rproc *rp = track (r, je, execid);
    struct rnode *n;

    if (!rp) {
        struct job_ctx ctx;
        jobctx_fill (r->jctx, &ctx);
        (void)job_proc_failed (je->job, &ctx, execid,
                               "cannot track a process on another node: out "
                               "of memory",
                               je->pending);
        jobtable_dirty (je);
        return;
    }
    if ((n = node_get (r, rp->rank)) && n->down) {
        give_up (r, rp, n->why);
        return;
    }
    ask (r, rp);
}

void remote_signal (struct remote *r,
                    struct jobentry *je,
                    const char *execid,
                    int signum)
{
    struct rproc *rp = r ? hashmap_get (r->procs, execid) : NULL;
    if (rp)
        remote_relay_send (
            r, rp->rank, "node-signal",
            json_pack ("{s:s s:i}", "execid", execid, "signum", signum), true);
}

static void ack (struct remote *r, uint32_t rank, const char *execid)
{
    remote_relay_send (r, rank, "node-ack",
                       json_pack ("{s:[s]}", "execids", execid), true);
}

/* A node-ack whose cause is committed (OUTBOX_REMOTE). */
void remote_ack_effect (void *arg, const char *execid, int rank, json_t *data)
{
    ack (arg, (uint32_t)rank, execid);
}

void remote_finished (struct remote *r,
                      struct jobentry *je,
                      const char *execid)
{
    struct rproc *rp = r ? hashmap_get (r->procs, execid) : NULL;
    if (!rp)
        return;
    ack (r, rp->rank, execid);
    hashmap_del (r->procs, execid);
    /* one given up on may still run there: remembered, to be killed when
     * its node answers again (node_back) */
    rp->t_gone = jobctx_now ();
    rp->je = NULL; /* the job may end before its node answers */
    if (!rp->given_up || hashmap_put (r->gone, rp->execid, rp) < 0)
        free (rp);
    else if (!ev_is_active (&r->tick)) /* gone_prune's clock */
        ev_timer_start (r->loop, &r->tick);
}

/* Node rank answers again after it was silent: whatever was given up on
 * there must not run on unseen, whether or not its job is over. (Killing
 * one that ended is harmless: the node answers ENOENT.) It stays
 * remembered until its end is reported, so that the report is recorded
 * as late, or GONE_AFTER_KILL passed (gone_prune). */
static void node_back (struct remote *r, uint32_t rank)
{
    size_t pos = 0;
    struct rproc *rp;
    while ((rp = hashmap_next (r->gone, &pos, NULL))) {
        if (rp->rank != rank || rp->killed)
            continue;
        log_msg (LOG_INFO, "rank %u answers again: killing %s, given up on "
                           "while it was silent, if it still runs",
                 (unsigned)rank, rp->execid);
        remote_relay_send (
            r, rank, "node-signal",
            json_pack ("{s:s s:i}", "execid", rp->execid, "signum", SIGKILL),
            true);
        rp->killed = true;
        rp->t_killed = jobctx_now ();
    }
}

/* Forget what was given up on once its kill is well past, or its node
 * stayed silent for GONE_MAX. */
static void gone_prune (struct remote *r)
{
    double now = jobctx_now ();
    size_t pos = 0;
    struct rproc *rp;
    while ((rp = hashmap_next (r->gone, &pos, NULL))) {
        if (rp->killed ? now - rp->t_killed < GONE_AFTER_KILL
                       : now - rp->t_gone < GONE_MAX)
            continue;
        hashmap_del (r->gone, rp->execid);
        free (rp);
    }
}

/* A node was remote_heard from. */
void remote_heard (struct remote *r, uint32_t rank)
{
    struct rnode *n = node_get (r, rank);
    if (!n)
        return;
    if (n->down)
        log_msg (LOG_INFO, "rank %u: its node answers again", (unsigned)rank);
    n->heard = jobctx_now ();
    n->down = false;
    node_back (r, rank);
}

void remote_late (struct remote *r, struct jobentry *je, json_t *ctx)
{
    const struct job_proc *p;
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    int64_t rank;
    if (execid && (p = job_proc_find (je->job, execid)) &&
        (rank = job_proc_node (je->job, p)) >= 0)
        ack (r, (uint32_t)rank, execid);
}

/* ---- the clock ---- */

static void tick_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct remote *r = w->data;
    double now = jobctx_now ();
    size_t pos = 0;
    struct rproc *rp;

    gone_prune (r);
    r->backlog = false;
    relay_flush (r);
    if (hashmap_count (r->procs) == 0 && hashmap_count (r->gone) == 0 &&
        !r->backlog) {
        ev_timer_stop (loop, w);
        return;
    }
    while ((rp = hashmap_next (r->procs, &pos, NULL))) {
        const struct multinode_config *m = &job_config (rp->je->job)->multinode;
        struct rnode *n = node_get (r, rp->rank);
        const struct job_proc *p = job_proc_find (rp->je->job, rp->execid);
        if (!n || !p || p->state == PROC_DONE)
            continue; /* its end is on its way to the journal */
        /* silence counts only while a relay could have carried an answer */
        double since = fmax (fmax (rp->t_track, n->heard), r->relay_since);
        if (r->relay && now - since > m->timeout) {
            char why[96];
            snprintf (why, sizeof (why), "unreachable for %.0fs", now - since);
            n->down = true;
            snprintf (n->why, sizeof (n->why),
                      "is unreachable (silent past multinode.timeout)");
            give_up (r, rp, why);
        } else if (now - rp->t_sent >= m->poll)
            ask (r, rp);
    }
    w->repeat = r->backlog ? REMOTE_TICK_BACKLOG : REMOTE_TICK;
    ev_timer_again (loop, w);
}

/* ---- requests (only in the exec role: service.c) ---- */

void req_node_relay (struct remote *r,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload)
{
    size_t pos = 0;
    struct rproc *rp;

    if (r->relay && r->relay != c)
        conn_respond_error (r->relay, r->relay_mt, ECONNRESET,
                            "another relay took over");
    r->relay = c;
    r->relay_mt = matchtag;
    r->relay_since = jobctx_now ();
    log_msg (LOG_INFO, "node relay connected (client %ju); asking about %zu "
                       "process(es) on other nodes",
             (uintmax_t)conn_id (c), hashmap_count (r->procs));
    while ((rp = hashmap_next (r->procs, &pos, NULL)))
        ask (r, rp);
}

void remote_conn_gone (struct remote *r, struct conn *c)
{
    if (r && r->relay == c) {
        r->relay = NULL;
        json_array_clear (r->outq); /* asked again, or sent again by the
                                       nodes (node-watch) */
        log_msg (LOG_WARNING, "node relay gone: nodes are not asked until "
                              "it is back");
    }
}

void req_node_hello (struct remote *r,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload)
{
    json_int_t rank;
    const char *host = "?";
    size_t pos = 0, nasked = 0;
    struct rproc *rp;

    if (json_unpack (payload, "{s:I s?s}", "rank", &rank, "host", &host) < 0 ||
        rank < 0 || rank > UINT32_MAX) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-hello: want {\"rank\": R, \"host\": H}");
        return;
    }
    remote_heard (r, (uint32_t)rank);
    while ((rp = hashmap_next (r->procs, &pos, NULL)))
        if (rp->rank == (uint32_t)rank) {
            ask (r, rp);
            nasked++;
        }
    log_msg (LOG_INFO, "node %s (rank %ju) is up; asked about %zu process(es)",
             host, (uintmax_t)rank, nasked);
    turn_ack (r->turn, c, matchtag, json_object ());
}

/* Flux's word on nodes (issue 33): the rank-0 module watches the brokers
 * online (Flux's overlay) and says when some leave or come back. A node
 * whose broker left is not waited on for multinode.timeout: its processes
 * are lost now, and new ones for it until it is remote_heard from or back
 * online. What runs on there unseen is killed when it comes back (gone).
 * One pass over the processes, whatever the number of ranks; the answer
 * goes once the proc-lost events are committed. */
void req_node_state (struct remote *r,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload)
{
    const char *ranks, *why = "its broker left Flux's overlay";
    int online;
    struct cairn_error err = {{0}};
    struct idset *set;
    char note[160];
    size_t pos = 0, nlost = 0;
    struct rproc *rp;

    if (json_unpack (payload, "{s:s s:b s?s}", "ranks", &ranks, "online",
                     &online, "why", &why) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-state: want {\"ranks\": IDSET, \"online\": "
                            "BOOL, \"why\": S}");
        return;
    }
    if (!(set = idset_decode (ranks, &err))) {
        conn_respond_error (c, matchtag, EINVAL, "node-state: ranks: %s",
                            err.text);
        return;
    }
    snprintf (note, sizeof (note), "lost: %s", why);
    for (uint32_t rank = idset_first (set); rank != IDSET_INVALID_ID;
         rank = idset_next (set, rank)) {
        struct rnode *n = node_get (r, rank);
        if (n) {
            n->down = !online;
            snprintf (n->why, sizeof (n->why), "%s", note);
        }
    }
    while (!online && (rp = hashmap_next (r->procs, &pos, NULL))) {
        const struct job_proc *p = job_proc_find (rp->je->job, rp->execid);
        if (!idset_test (set, rp->rank) || rp->given_up || !p ||
            p->state == PROC_DONE)
            continue;
        give_up (r, rp, note);
        nlost++;
    }
    if (online)
        log_msg (LOG_INFO, "ranks %s: online in Flux", ranks);
    else
        log_msg (LOG_WARNING, "ranks %s: %s; %zu process(es) lost", ranks, note,
                 nlost);
    idset_destroy (set);
    turn_ack (r->turn, c, matchtag,
              json_pack ("{s:I}", "lost", (json_int_t)nlost));
}
