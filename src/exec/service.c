/* service.c - the service's table (service.h): which request goes to
 * which handler, who may send it and which role serves it, all checked
 * before any handler runs; and what the handlers share (service_private.h).
 * The handlers are service_start.c's, service_job.c's and
 * service_admin.c's; the views' (service_views.h), the node role's
 * (node.h) and rank 0's from its nodes (remote.h) are
 * forwarded from here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "core/jobid.h"
#include "exec/jobtable.h"
#include "exec/remote.h"
#include "exec/service_private.h"
#include "exec/service_views.h"
#include "journal/journal.h"
#include "node/node.h"
#include "server/server.h"
#include "util/log.h"

struct service *service_create (const struct service_lent *lent,
                                const struct service_ops *ops,
                                void *arg)
{
    struct service *svc = calloc (1, sizeof (*svc));

    if (!svc)
        return NULL;
    svc->cfg = lent->cfg;
    svc->uid = lent->uid;
    svc->t_start = lent->t_start;
    svc->journal = lent->journal;
    svc->outbox = lent->outbox;
    svc->jobs = lent->jobs;
    svc->turn = lent->turn;
    svc->streams = lent->streams;
    svc->jctx = lent->jctx;
    svc->trust = lent->trust;
    svc->cost = lent->cost;
    svc->quota = lent->quota;
    svc->bindings = lent->bindings;
    svc->kills = lent->kills;
    svc->procs = lent->procs;
    svc->views = lent->views;
    svc->node = lent->node;
    svc->remote = lent->remote;
    svc->ops = *ops;
    svc->arg = arg;
    return svc;
}

void service_destroy (struct service *svc)
{
    int saved = errno;
    free (svc); /* nothing else is its own */
    errno = saved;
}

void service_stopping (struct service *svc)
{
    svc->stopping = true;
}

/* ---- what the handlers share (service_private.h) ---- */

int service_get_id (struct conn *c,
                    int64_t matchtag,
                    json_t *payload,
                    uint64_t *id)
{
    json_t *o = json_object_get (payload, "id");
    if (!o) {
        conn_respond_error (c, matchtag, EPROTO, "id: missing");
        return -1;
    }
    if (!json_is_integer (o) || json_integer_value (o) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "id: must be a non-negative integer");
        return -1;
    }
    *id = (uint64_t)json_integer_value (o);
    return 0;
}

/* The active job named by payload.id, or an error response. */
struct jobentry *service_get_job (struct service *svc,
                                  struct conn *c,
                                  int64_t matchtag,
                                  json_t *payload)
{
    uint64_t id;
    struct journal_jobinfo info;
    if (service_get_id (c, matchtag, payload, &id) < 0)
        return NULL;
    struct jobentry *je = jobtable_get (svc->jobs, id);
    if (je)
        return je;
    if (journal_job_info (svc->journal, id, &info) == 0)
        conn_respond_error (c, matchtag, EINVAL, "job %ju is already clean",
                            (uintmax_t)id);
    else
        conn_respond_error (c, matchtag, ENOENT, "job %ju not found",
                            (uintmax_t)id);
    return NULL;
}

static int submitter_cb (
    uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct submitter *s = arg;
    json_t *e = json_loadb (line, len, 0, NULL);
    int priv = 1;
    (void)json_unpack (e, "{s:{s:I s?b}}", "context", "userid", &s->uid,
                       "privileged", &priv);
    s->privileged = priv;
    s->shell_uid = trust_shell_uid (json_object_get (e, "context"));
    json_decref (e);
    return 1; /* the accept event is enough */
}

/* What the accept says (service_private.h), unknown till read. */
struct submitter service_submitter (struct service *svc, uint64_t id)
{
    struct jobentry *je = jobtable_get (svc->jobs, id);
    struct cairn_error err;
    struct submitter s = {.uid = -1, .privileged = true, .shell_uid = -1};
    if (je) {
        s.uid = job_userid (je->job);
        s.privileged = job_privileged (je->job);
        s.shell_uid = job_shell_uid (je->job);
        return s;
    }
    (void)journal_read_job (svc->journal, id, 0, submitter_cb, &s, &err);
    return s;
}

json_t *service_response (uint64_t id, const char *type, json_t *data)
{
    return json_pack ("{s:I s:s s:o}", "id", (json_int_t)id, "type", type,
                      "data", data ? data : json_object ());
}

struct idset *
service_get_ranks (struct conn *c, int64_t matchtag, json_t *payload)
{
    const char *s;
    struct cairn_error err;
    struct idset *ranks;
    if (json_unpack (payload, "{s:s}", "ranks", &s) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "ranks: missing or not a string");
        return NULL;
    }
    if (!(ranks = idset_decode (s, &err)))
        conn_respond_error (c, matchtag, EINVAL, "ranks: %s", err.text);
    return ranks;
}

/* ---- forwarded: the views, rank 0's from its nodes, the node role's ---- */

/* What cairn jobs, show, eventlog read (service_views.h). */
static void
req_jobs (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    views_req_jobs (svc->views, c, mt, p);
}

static void
req_job_events (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    views_req_job_events (svc->views, c, mt, p);
}

/* Rank 0's requests from its nodes (remote.h), for an exec-role cairnd
 * (the table refuses them in the node role, where svc->remote is NULL). */
static void
req_remote_relay (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    req_node_relay (svc->remote, c, mt, p);
}

static void
req_remote_report (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    req_node_report (svc->remote, c, mt, p);
}

static void
req_remote_hello (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    req_node_hello (svc->remote, c, mt, p);
}

static void
req_remote_state (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    req_node_state (svc->remote, c, mt, p);
}

/* The node role's requests (node.h), for a node-role cairnd. */
static void
req_node_exec (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    node_req_exec (svc->node, c, mt, p);
}

static void
req_node_signal (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    node_req_signal (svc->node, c, mt, p);
}

static void
req_node_ack (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    node_req_ack (svc->node, c, mt, p);
}

static void
req_node_watch (struct service *svc, struct conn *c, int64_t mt, json_t *p)
{
    node_req_watch (svc->node, c, mt, p);
}

enum role { EXEC = 1, NODE = 2, BOTH = 3 };

/* Who may send a request (SO_PEERCRED, SECURITY.md): anyone; the job's
 * owner (its userid) or a privileged uid (service_privileged()); a
 * privileged uid only; a privileged uid only, about a job (payload "id").
 * On a job, the Flux instance's owner is held to its instance's jobs
 * (trust.h T5). */
enum access { ANYONE, OWNER, PRIVILEGED, PRIVILEGED_JOB };

static const struct {
    const char *topic;
    service_handler_f fn;
    enum access access;
    enum role role; /* the roles that serve it */
} handlers[] = {
    {"start", service_req_start, OWNER, EXEC},
    {"exception", service_req_exception, OWNER, EXEC},
    {"kill", service_req_kill, OWNER, EXEC},
    {"expiration", service_req_expiration, OWNER, EXEC},
    {"critical-ranks", service_req_critical_ranks, OWNER, EXEC},
    {"fail-ranks", service_req_fail_ranks, PRIVILEGED_JOB, EXEC},
    {"resume", service_req_resume, PRIVILEGED_JOB, EXEC},
    {"post", service_req_post, PRIVILEGED_JOB, EXEC},
    {"undrain", service_req_undrain, PRIVILEGED, EXEC},
    {"bind", service_req_bind, PRIVILEGED, BOTH},
    {"list", service_req_list, ANYONE, BOTH},
    {"stats", service_req_stats, ANYONE, BOTH},
    /* what cairn jobs, show, eventlog read (service_views.c) */
    {"jobs", req_jobs, ANYONE, EXEC},
    {"job-events", req_job_events, OWNER, EXEC},
    /* multinode (remote.c, node.c) */
    {"node-relay", req_remote_relay, PRIVILEGED, EXEC},
    {"node-report", req_remote_report, PRIVILEGED, EXEC},
    {"node-hello", req_remote_hello, PRIVILEGED, EXEC},
    {"node-state", req_remote_state, PRIVILEGED, EXEC},
    {"node-exec", req_node_exec, PRIVILEGED, NODE},
    {"node-signal", req_node_signal, PRIVILEGED, NODE},
    {"node-ack", req_node_ack, PRIVILEGED, NODE},
    {"node-watch", req_node_watch, PRIVILEGED, NODE},
};

/* The jobspec flag of a start payload that makes its job wait for a
 * `resume`, or NULL. resume is a privileged request (the resource
 * manager's: cairn-exec.so says with it that a Flux job's shells may
 * start), so a user's job with one would wait for ever, holding its
 * quota, its time limit not counting until its shells start (issue 51). */
static const char *resume_flag (json_t *payload)
{
    static const char *const flags[] = {"hold-start", "hold-on-shrink"};
    json_t *cairn = NULL;

    (void)json_unpack (payload, "{s:{s:{s:{s:o}}}}", "jobspec", "attributes",
                       "system", "cairn", &cairn);
    for (size_t i = 0; i < sizeof (flags) / sizeof (flags[0]); i++) {
        if (json_is_true (json_object_get (cairn, flags[i])))
            return flags[i];
    }
    return NULL;
}

/* May the Flux instance's owner send this request? Any a resource manager
 * may (a new job: trust_start), but on a job only on one its instance
 * started (T5): not on a user's own job, nor root's. */
static bool owner_allowed (struct service *svc,
                           struct conn *c,
                           const char *topic,
                           int64_t matchtag,
                           json_t *payload,
                           enum access access)
{
    uid_t uid = conn_uid (c);
    json_t *id = json_object_get (payload, "id");

    if (access == PRIVILEGED ||
        (!strcmp (topic, "start") &&
         !json_is_true (json_object_get (payload, "reattach"))))
        return true;
    if (!json_is_integer (id) || json_integer_value (id) < 0)
        return true; /* EPROTO from its handler */
    struct submitter s =
        service_submitter (svc, (uint64_t)json_integer_value (id));
    if (s.uid < 0 || trust_owner_job (svc->trust, uid, s.shell_uid))
        return true; /* unknown: ENOENT from its handler */
    conn_respond_error (c, matchtag, EPERM,
                        "%s: permission denied: job %jd is uid %jd's, not "
                        "one the Flux instance started: uid %u (the "
                        "instance's owner) acts on its instance's jobs only",
                        topic, (intmax_t)json_integer_value (id),
                        (intmax_t)s.uid, (unsigned)uid);
    return false;
}

/* May uid send this request? If not, answer EPERM and return false. A
 * request naming a job nobody knows passes: its handler says ENOENT. */
static bool allowed (struct service *svc,
                     struct conn *c,
                     const char *topic,
                     int64_t matchtag,
                     json_t *payload,
                     enum access access)
{
    uid_t uid = conn_uid (c);
    json_t *id = json_object_get (payload, "id");
    json_int_t owner;

    if (access == ANYONE)
        return true;
    if (trust_is_owner (svc->trust, uid))
        return owner_allowed (svc, c, topic, matchtag, payload, access);
    if (service_privileged (svc, uid))
        return true;
    if (svc->uid != 0) { /* not root: it runs its own uid's jobs only */
        conn_respond_error (c, matchtag, EPERM,
                            "%s: permission denied: this cairnd serves uid %u "
                            "only",
                            topic, (unsigned)svc->uid);
        return false;
    }
    if (access == PRIVILEGED || access == PRIVILEGED_JOB) {
        conn_respond_error (c, matchtag, EPERM,
                            "%s: permission denied: only root and cairnd's "
                            "uid %u may do this",
                            topic, (unsigned)svc->uid);
        return false;
    }
    if (!strcmp (topic, "start") &&
        !json_is_true (json_object_get (payload, "reattach"))) {
        json_t *u = json_object_get (payload, "userid");
        if (json_is_integer (u) && json_integer_value (u) != (json_int_t)uid) {
            conn_respond_error (c, matchtag, EPERM,
                                "start: permission denied: uid %u may start "
                                "jobs of its own uid only, not %jd",
                                (unsigned)uid,
                                (intmax_t)json_integer_value (u));
            return false;
        }
        /* ids below JOBID_USER_MIN are the resource manager's and root's:
         * a user who took one first would have cairn-exec.so wait for that
         * user's job as if it were the Flux job of that id */
        if (json_is_integer (id) && json_integer_value (id) >= 0 &&
            (uint64_t)json_integer_value (id) < JOBID_USER_MIN) {
            conn_respond_error (c, matchtag, EPERM,
                                "start: permission denied: job id %jd is "
                                "not a user's: uid %u may start jobs with "
                                "ids from %ju up only (those below are for "
                                "root and cairnd's uid)",
                                (intmax_t)json_integer_value (id),
                                (unsigned)uid, (uintmax_t)JOBID_USER_MIN);
            return false;
        }
        const char *flag = resume_flag (payload);
        if (flag) {
            conn_respond_error (c, matchtag, EPERM,
                                "start: permission denied: "
                                "attributes.system.cairn.%s is the resource "
                                "manager's: uid %u's job would wait for ever "
                                "for a resume, which only root, cairnd's uid "
                                "and a Flux instance send",
                                flag, (unsigned)uid);
            return false;
        }
        return true; /* its own (or malformed: EPROTO from req_start) */
    }
    if (!json_is_integer (id) || json_integer_value (id) < 0 ||
        (owner =
             service_submitter (svc, (uint64_t)json_integer_value (id)).uid) <
            0 ||
        owner == (json_int_t)uid)
        return true;
    conn_respond_error (
        c, matchtag, EPERM, "%s: permission denied: job %jd belongs to uid %jd",
        topic, (intmax_t)json_integer_value (id), (intmax_t)owner);
    return false;
}

void service_request (struct service *svc,
                      struct conn *c,
                      const char *topic,
                      int64_t matchtag,
                      json_t *payload)
{
    for (size_t i = 0; i < sizeof (handlers) / sizeof (handlers[0]); i++) {
        if (strcmp (handlers[i].topic, topic) != 0)
            continue;
        if (!allowed (svc, c, topic, matchtag, payload, handlers[i].access))
            return;
        if (svc->stopping) {
            conn_respond_error (c, matchtag, EAGAIN, "cairnd is stopping");
            return;
        }
        if (!(handlers[i].role & (svc->node ? NODE : EXEC))) {
            conn_respond_error (c, matchtag, ENOSYS,
                                svc->node
                                    ? "%s: this cairnd is a node (\"role\": "
                                      "\"node\"): that is for rank 0's "
                                      "cairnd"
                                    : "%s: this cairnd is not a node (its "
                                      "config has no \"role\": \"node\")",
                                topic);
            return;
        }
        handlers[i].fn (svc, c, matchtag, payload);
        return;
    }
    conn_respond_error (c, matchtag, ENOSYS, "unknown topic '%s'", topic);
}
