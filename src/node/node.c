/* node.c - cairnd in the node role ("role": "node", DESIGN-MULTINODE.md):
 * it runs the processes a rank-0 cairnd asks for, and keeps no job.
 *
 * Each process is one record of the journal's nodeprocs table, keyed by
 * the execid rank 0 chose, written before anything is done (each record
 * and its effect go through the outbox, outbox.h): the intent
 * before the spawn, the pid after it, the end before it is reported. So a
 * `node-exec` sent again after any crash (of rank 0, of this cairnd, of a
 * broker between them) finds the record and is answered from it: nothing
 * runs twice. Until rank 0 says `node-ack`, after it has journaled the
 * end, every `node-watch` stream gets the end again; then the exit records
 * go, and the record stays, acknowledged, as the node's own account of
 * what ran there, until the journal's retention purges it.
 *
 * Processes run under cairn-shim exactly as a job's do (procs.h: the
 * start, the exit records, the pidfd watch), and a restarted node judges
 * each one as a restarted rank-0 cairnd does (procs_look).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/job.h"
#include "core/utf8.h"
#include "node/node.h"
#include "node/nodeproc.h"
#include "procs/procs.h"
#include "server/server.h"
#include "util/hashmap.h"
#include "journal/outbox.h"
#include "supervise/exitfile.h"
#include "util/log.h"
#include "supervise/procfs.h"
#include "journal/crashpoint.h"

struct nproc {
    struct node *n;
    char execid[EXECID_LEN + 1];
    json_t *rec;               /* as journaled (or about to be) */
    enum nodeproc_state state; /* rec's "state", decoded; move() sets both */
    struct conn *reply;        /* a node-exec waiting for the spawn, or NULL */
    int64_t reply_mt;
};

/* What a record's commit lets the node do (its outbox effect's op):
 * nothing more, spawn it, push its end to node-watch streams, kill what a
 * lost one left and push its end, remove its exit records. */
enum nwork_type { NW_NONE = -1, NW_SPAWN, NW_PUSH, NW_LOST, NW_REMOVE };

struct watcher {
    struct watcher *next;
    struct conn *conn;
    int64_t matchtag;
};

struct node {
    struct journal *journal;
    struct outbox *outbox;
    struct procs *procs;
    char bootid[40];
    const struct node_ops *ops;
    void *ops_arg;
    struct hashmap *recs; /* execid -> nproc */
    struct watcher *watchers;
    char host[256];
};

static void ack (struct node *n, struct conn *c, int64_t matchtag, json_t *r)
{
    n->ops->ack (n->ops_arg, c, matchtag, r);
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool acked (const struct nproc *np)
{
    return json_is_true (json_object_get (np->rec, "acked"));
}

/* An acknowledged record stays in memory only so that its execid is
 * never started again: what it ran and printed stays in the journal, not
 * here (a node keeps a week of them by default). */
static void slim (struct nproc *np)
{
    static const char *const heavy[] = {"argv", "env", "cwd", "stdout",
                                        "stderr"};
    for (size_t i = 0; i < sizeof (heavy) / sizeof (heavy[0]); i++)
        json_object_del (np->rec, heavy[i]);
}

struct node *node_create (struct journal *j,
                          struct outbox *ob,
                          struct procs *procs,
                          const char *bootid,
                          const struct node_ops *ops,
                          void *arg)
{
    struct node *n = calloc (1, sizeof (*n));
    if (!n || !(n->recs = hashmap_create ())) {
        free (n);
        errno = ENOMEM;
        return NULL;
    }
    n->journal = j;
    n->outbox = ob;
    n->procs = procs;
    snprintf (n->bootid, sizeof (n->bootid), "%s", bootid);
    n->ops = ops;
    n->ops_arg = arg;
    if (gethostname (n->host, sizeof (n->host) - 1) < 0)
        snprintf (n->host, sizeof (n->host), "?");
    return n;
}

static void nproc_free (struct nproc *np)
{
    if (np) {
        json_decref (np->rec);
        free (np);
    }
}

void node_destroy (struct node *n)
{
    size_t pos = 0;
    struct nproc *np;
    if (!n)
        return;
    while ((np = hashmap_next (n->recs, &pos, NULL))) {
        procs_unwatch (n->procs, np->execid); /* a process still running */
        nproc_free (np);
    }
    hashmap_destroy (n->recs);
    while (n->watchers) {
        struct watcher *w = n->watchers;
        n->watchers = w->next;
        free (w);
    }
    free (n);
}

static void node_effect (void *arg, const char *execid, int op, json_t *data);

struct staging {
    struct node *n;
    const char *execid;
    const char *rec; /* NULL: remove the record */
};

static int stage_rec (void *arg)
{
    struct staging *st = arg;
    return journal_nodeproc (st->n->journal, st->execid, st->rec);
}

/* Journal np's record as it is now, with the commit of the turn's batch,
 * and then do op (O1). -1 with errno: nothing staged, nothing will be
 * done. */
static int rec_put_op (struct node *n, struct nproc *np, enum nwork_type op)
{
    char *s = json_dumps (np->rec, JSON_COMPACT);
    struct staging st = {n, np->execid, s};
    struct outbox_effect e = {
        .fn = node_effect, .arg = n, .key = np->execid, .op = (int)op};
    int rc;
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    rc = outbox_put (n->outbox, OUTBOX_NODE, stage_rec, &st,
                     op != NW_NONE ? &e : NULL);
    free (s);
    return rc;
}

/* rec_put_op where a failure leaves no way on but a restart, which judges
 * the process again from the records on disk. */
static void
rec_put_or_exit (struct node *n, struct nproc *np, enum nwork_type op)
{
    if (rec_put_op (n, np, op) < 0) {
        char why[200];
        snprintf (why, sizeof (why), "%s: cannot journal its record: %s",
                  np->execid, strerror (errno));
        n->ops->journal_failed (n->ops_arg, why);
    }
}

/* op for a record on disk already (O2). */
static void after (struct node *n, struct nproc *np, enum nwork_type op)
{
    struct outbox_effect e = {
        .fn = node_effect, .arg = n, .key = np->execid, .op = (int)op};
    /* a lost push or removal is redone by the next node-watch or node-ack;
     * a spawn by the next node-exec, which finds the intent */
    if (outbox_after (n->outbox, OUTBOX_NODE, &e) < 0)
        log_msg (LOG_ERR, "%s: out of memory queueing work", np->execid);
}

size_t node_nprocs (const struct node *n)
{
    return n ? hashmap_count (n->recs) : 0;
}

bool node_has (const struct node *n, const char *execid)
{
    struct nproc *np = n ? hashmap_get (n->recs, execid) : NULL;
    return np && !acked (np);
}

size_t node_purge (struct node *n, double cutoff, size_t max)
{
    size_t pos = 0, k = 0;
    struct nproc *np;
    if (!n)
        return 0;
    while (k < max && (np = hashmap_next (n->recs, &pos, NULL))) {
        json_t *t = json_object_get (np->rec, "t_acked");
        if (!acked (np) || !t || json_number_value (t) >= cutoff)
            continue;
        struct staging st = {n, np->execid, NULL};
        if (outbox_put (n->outbox, OUTBOX_NODE, stage_rec, &st, NULL) < 0)
            break;
        hashmap_del (n->recs, np->execid);
        nproc_free (np);
        k++;
    }
    return k;
}

static void rec_set (struct nproc *np, const char *key, json_t *v)
{
    if (v)
        json_object_set_new (np->rec, key, v);
}

/* Every change of a record's state goes through here, by the table
 * (nodeproc.h): np->state and the record's "state" string move together.
 * A move the table refuses is a bug of this file: logged, -1 with errno
 * EINVAL, and the record left as it was, so the caller journals and does
 * nothing. */
static int move (struct nproc *np, enum nodeproc_event ev)
{
    struct cairn_error err = {{0}};
    enum nodeproc_state to;

    if (nodeproc_next (np->state, ev, &to, &err) < 0) {
        log_msg (LOG_ERR, "%s: its record refuses %s", np->execid, err.text);
        errno = EINVAL;
        return -1;
    }
    np->state = to;
    rec_set (np, "state", json_string (nodeproc_state_name (to)));
    return 0;
}

/* The REPORT of np (DESIGN-MULTINODE.md). */
static json_t *report (const struct node *n, const struct nproc *np)
{
    static const char *const keys[] = {
        "id",
        "state",
        "pid",
        "starttime",
        "bootid",
        "status",
        "error",
        "stdout",
        "stderr",
        "stdout-truncated",
        "stderr-truncated",
    };
    json_t *o = json_pack ("{s:s s:s}", "execid", np->execid, "host", n->host);
    for (size_t i = 0; o && i < sizeof (keys) / sizeof (keys[0]); i++) {
        json_t *v = json_object_get (np->rec, keys[i]);
        if (v)
            json_object_set (o, keys[i], v);
    }
    return o;
}

/* np ended (by ev, with error): journal it, then do op (NW_PUSH, or
 * NW_LOST). */
static void end_as (struct node *n,
                    struct nproc *np,
                    enum nodeproc_event ev,
                    const char *error,
                    enum nwork_type op)
{
    if (move (np, ev) < 0)
        return;
    if (error)
        rec_set (np, "error", json_string (error));
    rec_put_or_exit (n, np, op);
}

static void end_with (struct node *n,
                      struct nproc *np,
                      enum nodeproc_event ev,
                      const char *error)
{
    end_as (n, np, ev, error, NW_PUSH);
}

/* Output as a JSON string: bytes that are not UTF-8 become U+FFFD. */
static json_t *output (struct node *n,
                       const char *execid,
                       const char *stream,
                       size_t max,
                       size_t *len,
                       bool *trunc)
{
    char *buf = exitfile_read_output (procs_exitdir (n->procs), execid, stream,
                                      max, len, trunc);
    json_t *s = buf ? utf8_string (buf, *len, true, NULL, NULL) : NULL;
    free (buf);
    if (!buf)
        *len = 0;
    return s;
}

/* A watched process ended (shim_status as procs_owner_ops.ended's). */
static void node_collect (struct node *n, struct nproc *np, int shim_status)
{
    int xfd = procs_exitdir (n->procs);
    int status;
    char *error = NULL;

    CRASHPOINT ("node.exitfile.read");
    if (exitfile_read (xfd, np->execid, &status, &error) == 0) {
        /* checked before the record takes its status and output */
        if (!nodeproc_allows (np->state, NODEPROC_EV_EXITED)) {
            (void)move (np, NODEPROC_EV_EXITED); /* logs the refusal */
            free (error);
            return;
        }
        json_int_t max =
            json_integer_value (json_object_get (np->rec, "max-output"));
        size_t olen = 0, elen = 0;
        bool ot = false, et = false;
        json_t *out = output (n, np->execid, "out", (size_t)max, &olen, &ot);
        json_t *err =
            output (n, np->execid, "err",
                    (size_t)max > olen ? (size_t)max - olen : 0, &elen, &et);
        rec_set (np, "status", json_integer (status));
        rec_set (np, "stdout", out);
        rec_set (np, "stderr", err);
        rec_set (np, "stdout-truncated", json_boolean (ot));
        rec_set (np, "stderr-truncated", json_boolean (et));
        end_with (n, np, NODEPROC_EV_EXITED, error);
        free (error);
        return;
    }
    if (shim_status < 0 && !exitfile_started (xfd, np->execid)) {
        /* adopted from the last cairnd, which died before the process
         * marked the start: the command never ran (proc_collect says why) */
        log_msg (LOG_INFO,
                 "%s: the process ended before starting the "
                 "command: starting it again",
                 np->execid);
        if (move (np, NODEPROC_EV_UNSTARTED) == 0)
            rec_put_or_exit (n, np, NW_SPAWN);
        return;
    }
    char note[160];
    procs_gone_note (
        note, sizeof (note), shim_status,
        (pid_t)json_integer_value (json_object_get (np->rec, "pid")));
    /* what the shim started may outlive it: no user work runs on unseen
     * once the loss is committed (NW_LOST; proc_finished does the same for
     * a job's) */
    end_as (n, np, NODEPROC_EV_LOST, note, NW_LOST);
}

/* rec is not used: a node reads the record, rarely hot */
static void nproc_ended (void *owner,
                         const char *execid,
                         int shim_status,
                         const struct procs_exit *rec)
{
    struct nproc *np = owner;
    node_collect (np->n, np, shim_status);
}

/* A node's starts are synchronous: nothing is answered later. */
static const struct procs_owner_ops nproc_ops = {.ended = nproc_ended};

static int nproc_watch (struct nproc *np, pid_t pid, int pidfd)
{
    return procs_watch (np->n->procs, np->execid, pid, pidfd, np, &nproc_ops);
}

static void spawn (struct node *n, struct nproc *np)
{
    json_t *jargv = json_object_get (np->rec, "argv");
    /* the shim finds its execid in the environment (shim_proto.h) */
    json_t *env = json_deep_copy (json_object_get (np->rec, "env"));
    const char *cwd = json_string_value (json_object_get (np->rec, "cwd"));
    size_t max =
        (size_t)json_integer_value (json_object_get (np->rec, "max-output"));
    size_t argc = json_array_size (jargv);
    char **argv = calloc (argc + 1, sizeof (*argv));
    struct cairn_error err = {{0}};
    struct procs_started st;

    if (np->state != NODEPROC_INTENT)
        goto done; /* asked twice in one turn */
    if (!argv || !env ||
        json_object_set_new (env, "CAIRN_EXECID", json_string (np->execid)) <
            0) {
        end_with (n, np, NODEPROC_EV_FAILED, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < argc; i++)
        argv[i] = (char *)json_string_value (json_array_get (jargv, i));
    json_t *user = json_object_get (np->rec, "user");
    if (procs_start (n->procs, np->execid, argv, env, cwd, max,
                     json_is_integer (user) ? json_integer_value (user) : -1,
                     false, np, &nproc_ops, &st, &err) < 0) {
        log_msg (LOG_WARNING, "%s: %s", np->execid, err.text);
        end_with (n, np, NODEPROC_EV_FAILED, err.text);
        goto done;
    }
    if (st.pid == 0) { /* its exit record says why it could not start */
        node_collect (n, np, 0);
        goto done;
    }
    if (nproc_watch (np, st.pid, st.pidfd) < 0) {
        close (st.pidfd);
        log_msg (LOG_ERR, "%s: cannot watch pid %d", np->execid, (int)st.pid);
    } else
        procs_watch_started (n->procs, np->execid, &st);
    if (move (np, NODEPROC_EV_SPAWNED) == 0) {
        rec_set (np, "pid", json_integer (st.pid));
        rec_set (np, "starttime", json_integer ((json_int_t)st.starttime));
        rec_set (np, "bootid", json_string (n->bootid));
        rec_put_or_exit (n, np, NW_NONE);
    }
done:
    free (argv);
    json_decref (env);
    if (np->reply) { /* once this turn's records are committed */
        ack (n, np->reply, np->reply_mt, report (n, np));
        np->reply = NULL;
    }
}

/* The effect of a committed record (OUTBOX_NODE). */
static void node_effect (void *arg, const char *execid, int op, json_t *data)
{
    struct node *n = arg;
    struct nproc *np = hashmap_get (n->recs, execid);

    switch ((enum nwork_type)op) {
    case NW_NONE:
        break;
    case NW_SPAWN:
        if (np)
            spawn (n, np);
        break;
    case NW_LOST: {
        int k = procs_kill_leftovers (n->procs, execid);
        if (k > 0)
            log_msg (LOG_WARNING, "%s: killed %d leftover process(es)", execid,
                     k);
    }
        /* fall through */
    case NW_PUSH:
        if (!np || !nodeproc_is_end (np->state) || acked (np))
            break;
        for (struct watcher *wt = n->watchers; wt; wt = wt->next) {
            json_t *r = report (n, np);
            CRASHPOINT ("node.push.before");
            if (r && conn_respond (wt->conn, wt->matchtag, r) < 0)
                log_msg (LOG_WARNING, "%s: report to client %ju: %s", execid,
                         (uintmax_t)conn_id (wt->conn), strerror (errno));
            json_decref (r);
        }
        break;
    case NW_REMOVE:
        if (!np || acked (np))
            (void)exitfile_remove (procs_exitdir (n->procs), execid);
        break;
    }
}

/* ---- requests ---- */

static bool strings (const json_t *a)
{
    size_t i;
    json_t *v;
    if (!json_is_array (a) || json_array_size (a) == 0)
        return false;
    json_array_foreach (a, i, v)
    {
        if (!json_is_string (v))
            return false;
    }
    return true;
}

static bool string_values (const json_t *o)
{
    const char *k;
    json_t *v;
    if (!json_is_object (o))
        return false;
    json_object_foreach ((json_t *)o, k, v)
    {
        if (!json_is_string (v))
            return false;
    }
    return true;
}

/* The request handlers below are only called in the node role
 * (service.c). */

void node_req_exec (struct node *n,
                    struct conn *c,
                    int64_t matchtag,
                    json_t *payload)
{
    const char *execid, *phase, *cwd = NULL;
    json_int_t id, rank, max;
    json_t *argv, *env, *jcwd = NULL;
    struct nproc *np;
    int query = 0;

    /* {"execid", "query": true}: rank 0's heartbeat about one the node
     * answered for before; "unknown" if it has no record of it */
    if (json_unpack (payload, "{s:s s:b}", "execid", &execid, "query",
                     &query) == 0 &&
        query) {
        if ((np = hashmap_get (n->recs, execid)))
            ack (n, c, matchtag, report (n, np));
        else
            ack (n, c, matchtag,
                 json_pack ("{s:s s:s s:s}", "execid", execid, "state",
                            nodeproc_state_name (NODEPROC_UNKNOWN), "host",
                            n->host));
        return;
    }
    if (json_unpack (payload, "{s:s s:I s:s s:I s:o s:o s?o s:I}", "execid",
                     &execid, "id", &id, "phase", &phase, "rank", &rank, "argv",
                     &argv, "env", &env, "cwd", &jcwd, "max-output",
                     &max) < 0 ||
        (jcwd && !json_is_null (jcwd) && !(cwd = json_string_value (jcwd))) ||
        !uuid_is_canonical (execid) || !strings (argv) ||
        !string_values (env) || max < 0 || id < 0 || rank < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-exec: want {\"execid\": a lowercase UUID, "
                            "\"id\", \"phase\", \"rank\", \"argv\": [strings], "
                            "\"env\": {name: string}, \"cwd\": string or "
                            "null, "
                            "\"max-output\"}");
        return;
    }
    if ((np = hashmap_get (n->recs, execid))) {
        /* asked again: a query. Answered once what it says is on disk. */
        if (np->state == NODEPROC_INTENT && !np->reply) {
            np->reply = c;
            np->reply_mt = matchtag;
        } else
            ack (n, c, matchtag, report (n, np));
        return;
    }
    json_t *user = json_object_get (payload, "user");
    if (user && (!json_is_integer (user) || json_integer_value (user) < 0 ||
                 json_integer_value (user) > UINT32_MAX)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-exec: user: must be a uid");
        return;
    }
    struct cairn_error terr = {{0}};
    if (n->ops->may_exec (n->ops_arg, conn_uid (c), payload, &terr) <
        0) { /* T4 */
        conn_respond_error (c, matchtag, errno, "%s", terr.text);
        return;
    }
    if (!(np = calloc (1, sizeof (*np))) ||
        !(np->rec = json_pack ("{s:I s:s s:I s:O s:O s:I s:s}", "id", id,
                               "phase", phase, "rank", rank, "argv", argv,
                               "env", env, "max-output", max, "state",
                               nodeproc_state_name (NODEPROC_INTENT))) ||
        (cwd && json_object_set_new (np->rec, "cwd", json_string (cwd)) < 0) ||
        (user && json_object_set (np->rec, "user", user) < 0)) {
        nproc_free (np);
        conn_respond_error (c, matchtag, ENOMEM, "node-exec: out of memory");
        return;
    }
    np->n = n;
    np->state = NODEPROC_INTENT;
    snprintf (np->execid, sizeof (np->execid), "%s", execid);
    if (hashmap_put (n->recs, np->execid, np) < 0) {
        nproc_free (np);
        conn_respond_error (c, matchtag, ENOMEM, "node-exec: out of memory");
        return;
    }
    if (rec_put_op (n, np, NW_SPAWN) < 0) { /* O1: then it never runs */
        int errnum = errno;
        hashmap_del (n->recs, np->execid);
        nproc_free (np);
        conn_respond_error (c, matchtag, errnum,
                            "node-exec: cannot journal its intent: %s",
                            strerror (errnum));
        return;
    }
    np->reply = c;
    np->reply_mt = matchtag;
}

void node_req_signal (struct node *n,
                      struct conn *c,
                      int64_t matchtag,
                      json_t *payload)
{
    const char *execid;
    int signum;
    json_t *none;

    if (json_unpack (payload, "{s:s s:i}", "execid", &execid, "signum",
                     &signum) < 0 ||
        signum <= 0 || signum >= 65) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-signal: want {\"execid\", \"signum\": 1-64}");
        return;
    }
    if (!procs_watched (n->procs, execid)) {
        conn_respond_error (c, matchtag, ENOENT, "%s is not running here",
                            execid);
        return;
    }
    procs_signal (n->procs, execid, signum, false);
    none = json_object ();
    conn_respond (c, matchtag, none);
    json_decref (none);
}

void node_req_ack (struct node *n,
                   struct conn *c,
                   int64_t matchtag,
                   json_t *payload)
{
    json_t *ids, *v;
    size_t i;

    if (json_unpack (payload, "{s:o}", "execids", &ids) < 0 ||
        !json_is_array (ids)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-ack: want {\"execids\": [...]}");
        return;
    }
    json_array_foreach (ids, i, v)
    {
        const char *execid = json_string_value (v);
        struct nproc *np = execid ? hashmap_get (n->recs, execid) : NULL;
        /* only an end is forgotten: rank 0 acknowledges what it gave up
         * on too, and that may still run here (it is killed when rank 0
         * hears of it) */
        if (!np || !nodeproc_allows (np->state, NODEPROC_EV_ACKED) ||
            acked (np) || move (np, NODEPROC_EV_ACKED) < 0)
            continue;
        rec_set (np, "acked", json_true ());
        rec_set (np, "t_acked", json_real (now ()));
        /* the whole record: the batch has its copy */
        if (rec_put_op (n, np, NW_REMOVE) < 0) {
            log_msg (LOG_WARNING,
                     "%s: cannot journal its node-ack: %s "
                     "(its end is reported again)",
                     execid, strerror (errno));
            json_object_del (np->rec, "acked");
            json_object_del (np->rec, "t_acked");
            continue;
        }
        slim (np);
    }
    ack (n, c, matchtag, json_object ());
}

void node_req_watch (struct node *n,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload)
{
    struct watcher *w;
    size_t pos = 0;
    struct nproc *np;

    if (!(w = calloc (1, sizeof (*w)))) {
        conn_respond_error (c, matchtag, ENOMEM, "node-watch: out of memory");
        return;
    }
    w->conn = c;
    w->matchtag = matchtag;
    w->next = n->watchers;
    n->watchers = w;
    /* every end rank 0 has not acknowledged: it may have missed it */
    while ((np = hashmap_next (n->recs, &pos, NULL)))
        if (nodeproc_is_end (np->state) && !acked (np))
            ack (n, c, matchtag, report (n, np));
}

void node_conn_gone (struct node *n, struct conn *c)
{
    size_t pos = 0;
    struct nproc *np;
    if (!n)
        return;
    for (struct watcher **pp = &n->watchers; *pp;) {
        struct watcher *w = *pp;
        if (w->conn == c) {
            *pp = w->next;
            free (w);
        } else
            pp = &w->next;
    }
    while ((np = hashmap_next (n->recs, &pos, NULL)))
        if (np->reply == c)
            np->reply = NULL;
}

/* ---- restart ---- */

static int
replay_one (const char *execid, const char *rec, size_t len, void *arg)
{
    struct node *n = arg;
    struct nproc *np = calloc (1, sizeof (*np));
    if (!np || !(np->rec = json_loadb (rec, len, 0, NULL))) {
        nproc_free (np);
        errno = np ? EINVAL : ENOMEM;
        return -1;
    }
    np->n = n;
    snprintf (np->execid, sizeof (np->execid), "%s", execid);
    /* the record's state decoded once, here; a record in none of its
     * states is not one a node wrote */
    const char *state = json_string_value (json_object_get (np->rec, "state"));
    if (nodeproc_state_of (state, &np->state) < 0 ||
        !nodeproc_is_record (np->state)) {
        log_msg (LOG_ERR,
                 "%s: its record's state \"%s\" is none of a "
                 "process record's",
                 execid, state ? state : "");
        nproc_free (np);
        errno = EINVAL;
        return -1;
    }
    if (acked (np))
        slim (np);
    if (hashmap_put (n->recs, np->execid, np) < 0) {
        nproc_free (np);
        return -1;
    }
    return 0;
}

static int
reconcile_one (struct node *n, struct nproc *np, struct cairn_error *err)
{
    bool spawned = np->state == NODEPROC_RUNNING;
    struct proc_look look;

    if (nodeproc_is_end (np->state))
        return 0; /* an end, waiting for its node-ack */
    json_t *r = np->rec;
    if (procs_look (n->procs, np->execid, spawned,
                    (pid_t)json_integer_value (json_object_get (r, "pid")),
                    (unsigned long long)json_integer_value (
                        json_object_get (r, "starttime")),
                    spawned ? json_string_value (json_object_get (r, "bootid"))
                            : "",
                    &look, err) < 0)
        return -1;
    switch (look.verdict) {
    case LOOK_EXITED:
        node_collect (n, np, -1);
        break;
    case LOOK_ALIVE:
        log_msg (LOG_DEBUG, "%s (pid %d) still running: watching it again",
                 np->execid, (int)look.pid);
        if (nproc_watch (np, look.pid, look.pidfd) < 0) {
            close (look.pidfd);
            return errprintf (err, "cannot watch %s again: %s", np->execid,
                              strerror (errno));
        }
        if (!spawned && move (np, NODEPROC_EV_SPAWNED) == 0) {
            rec_set (np, "pid", json_integer (look.pid));
            rec_set (np, "starttime",
                     json_integer ((json_int_t)look.starttime));
            rec_set (np, "bootid", json_string (n->bootid));
            rec_put_or_exit (n, np, NW_NONE);
        }
        break;
    case LOOK_UNSTARTED:
        log_msg (LOG_INFO, "%s: %s: starting it %s", np->execid, look.why,
                 spawned ? "again" : "now");
        if (spawned) {
            if (move (np, NODEPROC_EV_UNSTARTED) == 0)
                rec_put_or_exit (n, np, NW_SPAWN);
        } else
            after (n, np, NW_SPAWN); /* the intent is on disk */
        break;
    case LOOK_LOST:
        log_msg (LOG_WARNING, "%s: %s", np->execid, look.why);
        end_with (n, np, NODEPROC_EV_LOST, look.why);
        break;
    }
    return 0;
}

int node_reconcile (struct node *n, struct cairn_error *err)
{
    size_t pos = 0;
    struct nproc *np;

    if (journal_foreach_nodeproc (n->journal, replay_one, n, err) < 0)
        return errprefix (err, "replaying the nodeprocs table");
    while ((np = hashmap_next (n->recs, &pos, NULL)))
        if (reconcile_one (n, np, err) < 0)
            return -1;
    if (hashmap_count (n->recs) > 0)
        log_msg (LOG_INFO, "node: %zu process record(s) replayed",
                 hashmap_count (n->recs));
    return 0;
}
