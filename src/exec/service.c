/* service.c - RFC 32 requests (cairn-protocol(7)) as cairnd serves them.
 *
 * A request that changes a job is answered only after the events it caused
 * are committed (turn_ack), so a client is never told something a crash
 * could take back. Requests that cannot be understood get EPROTO, bad
 * values EINVAL, unknown jobs ENOENT; per-job failures after a job was
 * accepted travel as `exception` responses, never as errors.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/eventlog.h"
#include "core/jobid.h"
#include "core/rv1.h"
#include "core/signame.h"
#include "exec/bind.h"
#include "exec/daemon_private.h"
#include "exec/remote.h"
#include "journal/outbox.h"
#include "util/log.h"
#include "exec/service_views.h"
#include "exec/usercost.h"

typedef void (*handler_f) (struct cairnd *d,
                           struct conn *c,
                           int64_t matchtag,
                           json_t *payload);

static int
get_id (struct conn *c, int64_t matchtag, json_t *payload, uint64_t *id)
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
static struct jobentry *
get_job (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    uint64_t id;
    struct journal_jobinfo info;
    if (get_id (c, matchtag, payload, &id) < 0)
        return NULL;
    struct jobentry *je = jobtable_get (d->jobs, id);
    if (je)
        return je;
    if (journal_job_info (d->journal, id, &info) == 0)
        conn_respond_error (c, matchtag, EINVAL, "job %ju is already clean",
                            (uintmax_t)id);
    else
        conn_respond_error (c, matchtag, ENOENT, "job %ju not found",
                            (uintmax_t)id);
    return NULL;
}

/* Root, cairnd's own uid and a Flux instance's owner (a resource
 * manager submitting for its users) are privileged (trust.h). */
static bool privileged (const struct cairnd *d, uid_t uid)
{
    return trust_privileged (d->trust, uid);
}

struct submitter {
    json_int_t uid;       /* the accept's userid, -1 if unknown */
    bool privileged;      /* not "privileged": false in the accept */
    json_int_t shell_uid; /* its shells start as: the IMP's, else uid */
};

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

/* Who submitted job id: its owner (accept's userid, -1 if the job is
 * unknown) and whether a privileged client sent it. */
static struct submitter job_submitter (struct cairnd *d, uint64_t id)
{
    struct jobentry *je = jobtable_get (d->jobs, id);
    struct cairn_error err;
    struct submitter s = {.uid = -1, .privileged = true, .shell_uid = -1};
    if (je) {
        s.uid = job_userid (je->job);
        s.privileged = job_privileged (je->job);
        s.shell_uid = job_shell_uid (je->job);
        return s;
    }
    (void)journal_read_job (d->journal, id, 0, submitter_cb, &s, &err);
    return s;
}

static json_t *response (uint64_t id, const char *type, json_t *data)
{
    return json_pack ("{s:I s:s s:o}", "id", (json_int_t)id, "type", type,
                      "data", data ? data : json_object ());
}

/* ---- start ---- */

struct backlog {
    struct conn *c;
    int64_t matchtag;
    bool events; /* the stream's view: progress events too */
    int64_t since;
    int64_t count;
    const struct job *job;
    json_t *sent;  /* output offsets, when the stream asked for output */
    uint32_t upto; /* events from this seq on reach the stream as effects */
};

/* Resend one committed event, as respond_subs() in daemon.c sent it live,
 * unless it is among the first `since` of this view. */
static int
backlog_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct backlog *b = arg;
    if (seq >= b->upto)
        return 1; /* on disk, not acted on yet: its effects send it */
    json_t *entry = eventlog_entry_decode (line, len, NULL);
    const char *name;
    bool progress;
    if (!entry)
        return 0;
    if (eventlog_entry_parse (entry, NULL, &name, NULL) < 0)
        goto done;
    enum job_event ev = job_event_of (name);
    if (b->sent && ev == JOB_EV_LOG) { /* not counted by since */
        output_send_log (b->c, b->matchtag, id, b->sent, entry);
        goto done;
    }
    /* `since` counts the responses a client has had, but for `accepted`
     * and, in the plain view, `start`: a client whose first contact with a
     * job is a reattach never gets them there, so no client could count
     * them reliably. In the events view `start` is a response like any
     * other: a client that reattached before the shells started (cairnd
     * restarted during the prolog) still needs it. */
    if (ev == JOB_EV_ACCEPT || (ev == JOB_EV_START && !b->events))
        goto done;
    progress = job_ev_is_progress (ev);
    if (!job_ev_is_response (ev) && !(progress && b->events))
        goto done;
    if (++b->count > b->since) {
        json_t *r = progress ? job_progress_response (b->job, entry)
                             : job_response (b->job, entry);
        if (r)
            conn_respond (b->c, b->matchtag, r);
        json_decref (r);
    }
done:
    json_decref (entry);
    return 0;
}

static void start_reattach (struct cairnd *d,
                            struct conn *c,
                            int64_t matchtag,
                            uint64_t id,
                            int64_t since,
                            bool events,
                            json_t *sent)
{
    struct journal_jobinfo info;
    struct cairn_error err;
    struct jobentry *je = jobtable_get (d->jobs, id);
    struct job *gone = NULL;

    if (!je && journal_job_info (d->journal, id, &info) < 0) {
        conn_respond_error (c, matchtag, ENOENT, "job %ju not found",
                            (uintmax_t)id);
        json_decref (sent);
        return;
    }
    /* The responses are built from the job as the live ones are; of the
     * job, they need only its id, so a finished job (no longer in memory)
     * is stood in for by an empty one. */
    if (!je && !(gone = job_create (id))) {
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        json_decref (sent);
        return;
    }
    /* who submitted it: a resource manager adopts only its own jobs
     * (cairn-exec(8)), never a user's that took the id of one of them */
    struct submitter sub = job_submitter (d, id);
    json_t *r = response (id, "reattached",
                          json_pack ("{s:I s:b}", "userid", sub.uid,
                                     "privileged", sub.privileged));
    conn_respond (c, matchtag, r);
    json_decref (r);
    /* Everything acted on so far (W9); the rest reaches the new subscriber
     * through the effects of its batch: a batch on disk whose effects have
     * not run (it lands later, turn.c flush()), a batch in flight, and
     * what this turn adds. A job no longer in memory was acted on to its
     * end. */
    struct backlog b = {.c = c,
                        .matchtag = matchtag,
                        .events = events,
                        .since = since,
                        .job = je ? je->job : gone,
                        .sent = sent,
                        .upto = je ? jobtable_acted (je) : UINT32_MAX};
    if (journal_read_job (d->journal, id, 0, backlog_cb, &b, &err) < 0)
        log_msg (LOG_ERR, "reattach %ju: %s", (uintmax_t)id, err.text);
    job_destroy (gone);
    if (je)
        streams_add (d->streams, je, c, matchtag, true, events, sent);
    else
        json_decref (sent);
}

/* The output offsets of a start request: NULL without "output": true;
 * else a copy of "output-offsets" (rank -> {stdout, stderr} >= 0), or {}.
 * Sets *bad with the message for a malformed one. */
static json_t *output_offsets (json_t *payload, const char **bad)
{
    json_t *o = json_object_get (payload, "output");
    json_t *offs = json_object_get (payload, "output-offsets");
    const char *rank, *stream;
    json_t *r, *v;

    *bad = NULL;
    if (o && !json_is_boolean (o)) {
        *bad = "output: must be true or false";
        return NULL;
    }
    if (!json_is_true (o))
        return NULL;
    if (!offs)
        return json_object ();
    json_object_foreach (offs, rank, r)
    {
        if (!json_is_object (r) || rank[0] < '0' || rank[0] > '9')
            goto bad;
        json_object_foreach (r, stream, v)
        {
            if ((strcmp (stream, "stdout") && strcmp (stream, "stderr")) ||
                !json_is_integer (v) || json_integer_value (v) < 0)
                goto bad;
        }
    }
    if (json_is_object (offs))
        return json_deep_copy (offs);
bad:
    *bad = "output-offsets: must map ranks to {\"stdout\": N, "
           "\"stderr\": N}, N >= 0";
    return NULL;
}

/* limits.max-jobs holds the privileged clients' active jobs only; the
 * users' are counted apart, all of them together at most
 * limits.users-jobs-share of it. Were they counted together, users at
 * their quotas would fill max-jobs and refuse root's and the resource
 * manager's starts (issue 51); so cairnd holds at most (1 + share) x
 * max-jobs. The users' jobs are the quotas' count (quota.h): no walk
 * over the jobs at a start, however many are active. */
static int check_max_jobs (struct cairnd *d, bool priv, struct cairn_error *err)
{
    size_t total = jobtable_count (d->jobs);
    size_t users = quota_users_active (d->quota);
    size_t max = (size_t)d->cfg.max_jobs;
    size_t share = (size_t)(d->cfg.users_jobs_share * (double)max);

    if (users > total)
        users = total;
    if (priv && total - users >= max)
        return errset (err, EAGAIN,
                       "too many active jobs of privileged clients (limit "
                       "%zu, limits.max-jobs; users' jobs are not counted)",
                       max);
    if (!priv && users >= share)
        return errset (err, EDQUOT,
                       "start: the users' jobs together are %zu active, the "
                       "most limits.users-jobs-share (%.2f of limits.max-jobs "
                       "%zu) allows",
                       users, d->cfg.users_jobs_share, max);
    return 0;
}

static void
req_start (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    uint64_t id;
    json_int_t userid = -1, since = 0;
    json_t *jobspec = NULL, *R = NULL, *events = NULL;
    int reattach = 0;
    json_error_t jerr;
    struct cairn_error err = {{0}};
    struct journal_jobinfo info;

    if (get_id (c, matchtag, payload, &id) < 0)
        return;
    if (json_unpack_ex (payload, &jerr, 0, "{s?I s?o s?o s?b s?I s?o}",
                        "userid", &userid, "jobspec", &jobspec, "R", &R,
                        "reattach", &reattach, "since", &since, "events",
                        &events) < 0) {
        conn_respond_error (c, matchtag, EPROTO, "start: %s", jerr.text);
        return;
    }
    if (since < 0) {
        conn_respond_error (c, matchtag, EPROTO, "since: must be >= 0");
        return;
    }
    if (events && !json_is_boolean (events)) {
        conn_respond_error (c, matchtag, EINVAL,
                            "events: must be true or false");
        return;
    }
    const char *bad;
    json_t *sent = output_offsets (payload, &bad);
    if (bad) {
        conn_respond_error (c, matchtag, EINVAL, "%s", bad);
        return;
    }
    if (reattach) {
        start_reattach (d, c, matchtag, id, since, json_is_true (events),
                        sent);
        return;
    }
    bool want_output = sent != NULL; /* a new job: nothing sent yet */
    json_decref (sent);
    if (userid < 0 || userid > UINT32_MAX) {
        conn_respond_error (c, matchtag, EPROTO,
                            "userid: missing or not a valid uid");
        return;
    }
    if (!json_is_object (R) || !json_is_object (jobspec)) {
        conn_respond_error (c, matchtag, EPROTO, "%s: missing or not an object",
                            json_is_object (R) ? "jobspec" : "R");
        return;
    }
    /* a job of a Flux instance: from that instance's connection only */
    const char *instance = NULL;
    (void)json_unpack (jobspec, "{s?{s?{s?{s?s}}}}", "attributes", "system",
                       "cairn", "instance", &instance);
    if (bind_check_start (d->bindings, c, instance, &err) < 0) {
        conn_respond_error (c, matchtag, EBUSY, "%s", err.text);
        return;
    }
    if (jobtable_get (d->jobs, id) ||
        journal_job_info (d->journal, id, &info) == 0) {
        /* never run a job twice: a client that lost track must reattach */
        json_t *r = response (
            id, "exception",
            json_pack ("{s:i s:s s:s}", "severity", 0, "type", "exec", "note",
                       "job already exists; send start with reattach to "
                       "follow it"));
        conn_respond (c, matchtag, r);
        json_decref (r);
        conn_respond_error (c, matchtag, EEXIST, "job %ju already exists",
                            (uintmax_t)id);
        return;
    }
    int purged = journal_purged (d->journal, id);
    if (purged != 0) {
        conn_respond_error (c, matchtag, purged > 0 ? EEXIST : errno,
                            purged > 0 ? "job %ju was purged from the journal: "
                                         "its id cannot be used again"
                                       : "job %ju: cannot read the journal",
                            (uintmax_t)id);
        return;
    }
    if (quota_journal_full (d->quota, jobtable_count (d->jobs))) {
        /* Not journaled (there is no room): the job never existed here.
         * A fatal exception and the final release end its stream as
         * RFC 32 wants, so the resource manager frees its resources. */
        log_msg (LOG_WARNING, "refusing job %ju: the journal is full",
                 (uintmax_t)id);
        json_t *r = response (
            id, "exception",
            json_pack ("{s:i s:s s:s}", "severity", 0, "type", "exec", "note",
                       "cairnd's journal is full: no new jobs until space is "
                       "made (cairn purge, or a larger journal.max-size)"));
        conn_respond (c, matchtag, r);
        json_decref (r);
        r = response (id, "release",
                      json_pack ("{s:s s:b}", "ranks", "all", "final", 1));
        conn_respond (c, matchtag, r);
        json_decref (r);
        return;
    }
    bool priv = privileged (d, conn_uid (c));
    if (check_max_jobs (d, priv, &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        return;
    }
    if (!priv) {
        /* what its accept will take: the jobspec and R, and the config */
        size_t need = json_dumpb (jobspec, NULL, 0, JSON_COMPACT) +
                      json_dumpb (R, NULL, 0, JSON_COMPACT) + 1024;
        if (quota_check (d->quota, conn_uid (c), need, &err) < 0) {
            conn_respond_error (c, matchtag, errno, "start: %s", err.text);
            return;
        }
    }
    struct rv1 *rv = rv1_decode (R, &err);
    if (!rv) {
        conn_respond_error (c, matchtag, EINVAL, "%s", err.text);
        return;
    }
    size_t nranks = rv1_nranks (rv);
    rv1_destroy (rv);
    if (nranks > d->cfg.max_ranks) {
        conn_respond_error (c, matchtag, EINVAL,
                            "R: %zu ranks, more than the limit of %zu", nranks,
                            d->cfg.max_ranks);
        return;
    }
    struct job *job = job_create (id);
    struct jobentry *je = job ? jobtable_add (d->jobs, job) : NULL;
    struct job_ctx ctx;
    if (!je) {
        job_destroy (job);
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        return;
    }
    if (!privileged (d, conn_uid (c)))
        job_set_unprivileged (job);
    if (trust_start (d->trust, conn_uid (c), (uint32_t)userid, jobspec, job,
                     &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        jobtable_remove (je);
        return;
    }
    jobctx_fill (d->jctx, &ctx);
    if (job_accept (job, &ctx, (uint32_t)userid, R, jobspec, &d->cfg.job,
                    je->pending, &err) < 0) {
        conn_respond_error (c, matchtag, errno == EINVAL ? EINVAL : errno, "%s",
                            err.text);
        jobtable_remove (je);
        return;
    }
    streams_add (d->streams, je, c, matchtag, false, json_is_true (events),
                 want_output ? json_object () : NULL);
    jobtable_dirty (je);
}

/* ---- requests on a running job ---- */

/* Finish a request that called into the job: answer the error now, or
 * payload (taken) once the events it staged are committed. */
static void finish_with (struct cairnd *d,
                         struct jobentry *je,
                         struct conn *c,
                         int64_t matchtag,
                         int rc,
                         struct cairn_error *err,
                         json_t *payload)
{
    if (rc < 0) {
        json_decref (payload);
        conn_respond_error (c, matchtag, errno ? errno : EINVAL, "%s",
                            err->text);
        return;
    }
    jobtable_dirty (je);
    turn_ack (d->turn, c, matchtag, payload);
}

static void finish (struct cairnd *d,
                    struct jobentry *je,
                    struct conn *c,
                    int64_t matchtag,
                    int rc,
                    struct cairn_error *err)
{
    finish_with (d, je, c, matchtag, rc, err, json_object ());
}

static void req_exception (struct cairnd *d,
                           struct conn *c,
                           int64_t matchtag,
                           json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    const char *type = NULL, *note = "";
    json_int_t severity = -1, ws = -1;
    json_error_t jerr;
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je)
        return;
    if (json_unpack_ex (payload, &jerr, 0, "{s:s s:I s?s s?I}", "type", &type,
                        "severity", &severity, "note", &note, "wait_status",
                        &ws) < 0) {
        conn_respond_error (c, matchtag, EPROTO, "exception: %s", jerr.text);
        return;
    }
    /* checked here, on the request's 64-bit values: job_raise() takes ints */
    if (severity < 0 || severity > 7) {
        conn_respond_error (c, matchtag, EINVAL,
                            "severity: must be 0..7, not %" JSON_INTEGER_FORMAT,
                            severity);
        return;
    }
    if (ws > INT_MAX) {
        conn_respond_error (c, matchtag, EINVAL,
                            "wait_status: must be at most %d, not "
                            "%" JSON_INTEGER_FORMAT,
                            INT_MAX, ws);
        return;
    }
    if (!privileged (d, conn_uid (c)) && strlen (note) > USERCOST_NOTE_MAX) {
        conn_respond_error (c, matchtag, EINVAL,
                            "exception: note: %zu bytes, more than the %d a "
                            "user's exception may carry",
                            strlen (note), USERCOST_NOTE_MAX);
        return;
    }
    /* Weighed against the user's quota (usercost.h), but for the first
     * fatal one: it ends the job (a cancel), and what it writes is the
     * job's end, which the journal keeps room for (quota_journal_full),
     * with a bounded note; a user over its quota may still cancel. */
    size_t type_len = json_dumpb (json_object_get (payload, "type"), NULL, 0,
                                  JSON_ENCODE_ANY);
    size_t note_len = json_dumpb (json_object_get (payload, "note"), NULL, 0,
                                  JSON_ENCODE_ANY);
    if ((severity != 0 || job_fatal (je->job)) &&
        !usercost_admit (
            d->cost, c, matchtag, "exception",
            usercost_exception (je->job, (int)severity, type_len, note_len)))
        return;
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_raise (je->job, &ctx, type, (int)severity, note,
                        ws < 0 ? -1 : (int)ws, je->pending, &err);
    finish (d, je, c, matchtag, rc, &err);
}

void service_kill (struct cairnd *d,
                   struct jobentry *je,
                   struct conn *c,
                   int64_t matchtag,
                   int signum)
{
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    /* weighed now, when its signals are staged: a held kill too */
    if (!usercost_admit (d->cost, c, matchtag, "kill", usercost_kill (je->job)))
        return;
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_kill (je->job, &ctx, signum, je->pending, &err);
    finish (d, je, c, matchtag, rc, &err);
}

static void
req_kill (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    json_int_t signum;

    if (!je)
        return;
    if (json_unpack (payload, "{s:I}", "signum", &signum) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "signum: missing or not an integer");
        return;
    }
    if (signum <= 0 || signum >= 65) { /* before job_kill() cuts it to int */
        conn_respond_error (c, matchtag, EINVAL,
                            "signum: %" JSON_INTEGER_FORMAT " is not a signal",
                            signum);
        return;
    }
    /* A shell whose start is journaled but not made has nothing to
     * signal yet: the kill waits for it (killwait.c). */
    if (job_shells_starting (je->job)) {
        /* weighed before it is held, and again when it is carried out */
        if (!usercost_admit (d->cost, c, matchtag, "kill",
                             usercost_kill (je->job)))
            return;
        if (killwait_add (d->kills, je, c, matchtag, (int)signum) == 0)
            return;
        if (errno == EAGAIN)
            conn_respond_error (c, matchtag, EAGAIN,
                                "job %ju: %d kills already wait for its "
                                "shells to start",
                                (uintmax_t)job_id (je->job), KILLWAIT_MAX);
        else
            conn_respond_error (c, matchtag, errno, "%s", strerror (errno));
        return;
    }
    service_kill (d, je, c, matchtag, (int)signum);
}

static void req_expiration (struct cairnd *d,
                            struct conn *c,
                            int64_t matchtag,
                            json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    double expiration;
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je)
        return;
    if (json_unpack (payload, "{s:F}", "expiration", &expiration) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "expiration: missing or not a number");
        return;
    }
    /* As in Flux and Slurm, a job's owner may shorten its time limit, never
     * lengthen or remove it: the limit is the resource manager's (a
     * privileged client's), who gave the job its resources for that long. */
    uid_t uid = conn_uid (c);
    double now_limit = job_expiration (je->job);
    if (!privileged (d, uid) && expiration >= 0 &&
        (expiration == 0 || (now_limit > 0 && expiration > now_limit))) {
        char was[64] = "none";
        if (now_limit > 0)
            snprintf (was, sizeof (was), "%.3f", now_limit);
        conn_respond_error (c, matchtag, EPERM,
                            "expiration: permission denied: uid %u may only "
                            "shorten job %ju's time limit (now %s), not %s "
                            "it: only root and cairnd's uid %u may",
                            (unsigned)uid, (uintmax_t)job_id (je->job), was,
                            expiration == 0 ? "remove" : "lengthen",
                            (unsigned)d->uid);
        return;
    }
    if (!usercost_admit (d->cost, c, matchtag, "expiration",
                         usercost_expiration (je->job)))
        return;
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_set_expiration (je->job, &ctx, expiration, je->pending, &err);
    /* the answer: the time limit now in force (job_time_limit) */
    finish_with (
        d, je, c, matchtag, rc, &err,
        rc == 0 ? json_pack ("{s:f}", "expiration", job_time_limit (je->job))
                : NULL);
}

static struct idset *
get_ranks (struct conn *c, int64_t matchtag, json_t *payload)
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

static void req_critical_ranks (struct cairnd *d,
                                struct conn *c,
                                int64_t matchtag,
                                json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    struct idset *ranks;
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je || !(ranks = get_ranks (c, matchtag, payload)))
        return;
    char *enc = idset_encode (ranks); /* as the event will carry them */
    if (!enc) {
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        idset_destroy (ranks);
        return;
    }
    size_t need = usercost_critical (je->job, strlen (enc));
    free (enc);
    if (!usercost_admit (d->cost, c, matchtag, "critical-ranks", need)) {
        idset_destroy (ranks);
        return;
    }
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_set_critical (je->job, &ctx, ranks, je->pending, &err);
    idset_destroy (ranks);
    finish (d, je, c, matchtag, rc, &err);
}

static void req_fail_ranks (struct cairnd *d,
                            struct conn *c,
                            int64_t matchtag,
                            json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    struct idset *ranks;
    const char *note = "";
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je || !(ranks = get_ranks (c, matchtag, payload)))
        return;
    (void)json_unpack (payload, "{s?s}", "note", &note);
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_fail_ranks (je->job, &ctx, ranks, note, je->pending, &err);
    idset_destroy (ranks);
    finish (d, je, c, matchtag, rc, &err);
}

static void
req_resume (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    struct cairn_error err = {{0}};
    struct job_ctx ctx;
    json_error_t jerr;
    int ready = 0;

    if (!je)
        return;
    if (json_unpack_ex (payload, &jerr, 0, "{s?b}", "ready", &ready) < 0) {
        conn_respond_error (c, matchtag, EPROTO, "resume: %s", jerr.text);
        return;
    }
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_resume (je->job, &ctx, ready, je->pending, &err);
    finish (d, je, c, matchtag, rc, &err);
}

static void
req_post (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    struct jobentry *je = get_job (d, c, matchtag, payload);
    const char *name = NULL;
    json_t *context = NULL;
    json_error_t jerr;
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je)
        return;
    if (json_unpack_ex (payload, &jerr, 0, "{s:s s?o}", "name", &name,
                        "context", &context) < 0) {
        conn_respond_error (c, matchtag, EPROTO, "post: %s", jerr.text);
        return;
    }
    jobctx_fill (d->jctx, &ctx);
    errno = 0;
    int rc = job_post (je->job, &ctx, name, context, je->pending, &err);
    finish (d, je, c, matchtag, rc, &err);
}

static json_t *ranks_json (const struct idset *s);

static int drained_cb (uint32_t rank, const char *rec, size_t len, void *arg)
{
    return idset_set (arg, rank) < 0 ? -1 : 0;
}

struct undrain {
    struct cairnd *d;
    const struct idset *ranks;
    size_t staged; /* ranks whose removal is in the batch */
};

static int stage_undrain (void *arg)
{
    struct undrain *u = arg;
    for (uint32_t r = idset_first (u->ranks); r != IDSET_INVALID_ID;
         r = idset_next (u->ranks, r), u->staged++)
        if (journal_drain (u->d->journal, r, NULL) < 0)
            return -1;
    return 0;
}

/* undrain {ranks, only-drained?}: return drained ranks to service (cairn
 * undrain). Every rank must be drained, unless only-drained: then those
 * that are not are left out (the module mirroring Flux's undrains). Under
 * a bound Flux instance only its connection may (bind.h). The reply,
 * {"ranks": those undrained}, waits for the commit (outbox.h, O5). A
 * staging failure after some ranks were staged cannot be taken back out
 * of the batch: cairnd exits then, as for a failed commit, and the
 * restart finds every rank still drained. */
static void
req_undrain (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    struct idset *ranks = get_ranks (c, matchtag, payload);
    struct idset *drained = idset_create (), *missing = NULL;
    struct cairn_error err = {{0}};
    json_t *only = json_object_get (payload, "only-drained");

    if (!ranks)
        goto done;
    if (only && !json_is_boolean (only)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "undrain: only-drained: must be true or false");
        goto done;
    }
    if (bind_check_undrain (d->bindings, c, &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        goto done;
    }
    if (!drained || !(missing = idset_copy (ranks))) {
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        goto done;
    }
    if (journal_foreach_drain (d->journal, drained_cb, drained, &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        goto done;
    }
    idset_subtract (missing, drained);
    if (json_is_true (only) && !idset_empty (ranks)) {
        idset_subtract (ranks, missing); /* those not drained: left out */
        idset_destroy (missing);
        if (!(missing = idset_create ())) {
            conn_respond_error (c, matchtag, ENOMEM, "out of memory");
            goto done;
        }
        if (idset_empty (ranks)) {
            turn_ack (d->turn, c, matchtag, json_pack ("{s:s}", "ranks", ""));
            goto done;
        }
    }
    if (idset_empty (ranks) || !idset_empty (missing)) {
        char *s = idset_encode (missing);
        conn_respond_error (c, matchtag, EINVAL,
                            idset_empty (ranks) ? "ranks: empty"
                            : idset_count (missing) == 1
                                ? "rank %s is not drained"
                                : "ranks %s are not drained",
                            s ? s : "?");
        free (s);
        goto done;
    }
    struct undrain u = {.d = d, .ranks = ranks};
    if (outbox_put (d->outbox, OUTBOX_JOBS, stage_undrain, &u, NULL) < 0) {
        char why[128];
        snprintf (why, sizeof (why), "undrain: %s", strerror (errno));
        if (u.staged > 0) /* in the batch, and no way to take them out */
            turn_journal_failed (why);
        conn_respond_error (c, matchtag, errno, "%s", why);
        goto done;
    }
    turn_ack (d->turn, c, matchtag,
                json_pack ("{s:o}", "ranks", ranks_json (ranks)));
done:
    idset_destroy (ranks);
    idset_destroy (drained);
    idset_destroy (missing);
}

/* ---- read-only requests ---- */

static json_t *ranks_json (const struct idset *s)
{
    char *str = idset_encode (s);
    json_t *o = json_string (str ? str : "");
    free (str);
    return o;
}

static void
req_list (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    json_t *jobs = json_array ();
    size_t pos = 0;
    struct jobentry *je;
    while ((je = jobtable_next (d->jobs, &pos))) {
        const struct job *job = je->job;
        json_t *o = json_pack (
            "{s:I s:s s:o s:o s:o s:f s:i s:I}", "id", (json_int_t)job_id (job),
            "state", job_state_name (job_state (job)), "ranks",
            ranks_json (job_ranks (job)), "released",
            ranks_json (job_released (job)), "drained",
            ranks_json (job_drained (job)), "t_accept", job_t_accept (job),
            "userid", (int)job_userid (job), "nprocs",
            (json_int_t)job_nprocs (job));
        if (o && job_client (job))
            json_object_set_new (o, "client", json_string (job_client (job)));
        if (o && !job_privileged (job)) /* a user's, not a resource
                                           manager's (cairn-protocol(7)) */
            json_object_set_new (o, "privileged", json_false ());
        json_array_append_new (jobs, o);
    }
    json_t *r = json_pack ("{s:o}", "jobs", jobs);
    conn_respond (c, matchtag, r);
    json_decref (r);
}

/* The Flux instance of this connection (bind.h). */
static void
req_bind (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    const char *uuid = NULL, *name = NULL;
    struct cairn_error err = {{0}};

    (void)json_unpack (payload, "{s?s s?s}", "instance", &uuid, "name", &name);
    if (bind_conn (d->bindings, c, uuid, name, &err) < 0) {
        /* its module tries again every 10 s: said once */
        if (errno == EBUSY && strcmp (d->bind_refused, uuid) != 0) {
            log_msg (LOG_WARNING, "%s", err.text);
            snprintf (d->bind_refused, sizeof (d->bind_refused), "%s", uuid);
        }
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        return;
    }
    d->bind_refused[0] = '\0';
    log_msg (LOG_INFO, "client %ju: bound to Flux instance %s (%s)",
             (uintmax_t)conn_id (c), uuid, name);
    json_t *r = json_pack ("{s:s}", "instance", uuid);
    conn_respond (c, matchtag, r);
    json_decref (r);
}

static void
req_stats (struct cairnd *d, struct conn *c, int64_t matchtag, json_t *payload)
{
    struct journal_stats st = {0};
    (void)journal_stats (d->journal, &st);
    json_t *r = json_pack (
        "{s:s s:f s:I s:I s:I s:I s:I s:i s:{s:I s:I s:I s:I s:I s:I}}",
        "instance", journal_instance (d->journal), "uptime",
        jobctx_now () - d->t_start, "jobs",
        (json_int_t)jobtable_count (d->jobs), "processes",
        (json_int_t)procs_count (d->procs), "spawned",
        (json_int_t)procs_nspawned (d->procs), "commits",
        (json_int_t)turn_ncommits (d->turn), "jobs-done",
        (json_int_t)d->njobs_done, "connections",
        server_nconns (d->server) +
            (d->public_server ? server_nconns (d->public_server) : 0),
        "journal", "map-size", (json_int_t)st.map_size, "map-used",
        (json_int_t)st.map_used, "max-map-size", (json_int_t)st.max_map_size,
        "data-used", (json_int_t)st.data_used, "jobs", (json_int_t)st.njobs,
        "events", (json_int_t)st.nevents);
    /* the kill settings, as Flux's job-exec reports its own */
    const struct exec_config *x = &d->cfg.job.exec;
    json_t *e = json_pack (
        "{s:f s:f s:s s:s s:i}", "kill-timeout", x->kill_timeout,
        "max-kill-timeout", x->max_kill_timeout, "term-signal",
        signame_str (x->term_signal), "kill-signal",
        signame_str (x->kill_signal), "max-kill-count", x->max_kill_count);
    if (r && e)
        json_object_set_new (r, "exec", e);
    else
        json_decref (e);
    /* the Flux instance served (bind.h), while its module is connected */
    json_t *fi = bind_describe (d->bindings);
    if (r && fi)
        json_object_set_new (r, "flux-instance", fi);
    else
        json_decref (fi);
    /* how a process's leftovers are found and killed (procs_cgroup.c) */
    if (r)
        json_object_set_new (
            r, "confinement",
            json_string (procs_cgroup (d->procs) ? "cgroup" : "process-group"));
    /* kills waiting for a job's shells to start (killwait.c) */
    if (r)
        json_object_set_new (
            r, "kills-waiting",
            json_integer ((json_int_t)killwait_count (d->kills)));
    /* jobs requests whose summaries are being made (service_views.c) */
    if (r)
        json_object_set_new (r, "views-waiting",
                             json_integer ((json_int_t)views_pending (d)));
    conn_respond (c, matchtag, r);
    json_decref (r);
}

/* Rank 0's requests about processes on other nodes (remote.h), for an
 * exec-role cairnd. */
static void
svc_node_relay (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    req_node_relay (d->remote, c, mt, p);
}

static void
svc_node_report (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    req_node_report (d->remote, c, mt, p);
}

static void
svc_node_hello (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    req_node_hello (d->remote, c, mt, p);
}

static void
svc_node_state (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    req_node_state (d->remote, c, mt, p);
}

/* The node role's requests (node.h), for a node-role cairnd. */
static void
req_node_exec (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    node_req_exec (d->node, c, mt, p);
}

static void
req_node_signal (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    node_req_signal (d->node, c, mt, p);
}

static void
req_node_ack (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    node_req_ack (d->node, c, mt, p);
}

static void
req_node_watch (struct cairnd *d, struct conn *c, int64_t mt, json_t *p)
{
    node_req_watch (d->node, c, mt, p);
}

enum role { EXEC = 1, NODE = 2, BOTH = 3 };

/* Who may send a request (SO_PEERCRED, SECURITY.md): anyone; the job's
 * owner (its userid) or a privileged uid (privileged()); a privileged uid
 * only; a privileged uid only, about a job (payload "id"). On a job, the
 * Flux instance's owner is held to its instance's jobs (trust.h T5). */
enum access { ANYONE, OWNER, PRIVILEGED, PRIVILEGED_JOB };

static const struct {
    const char *topic;
    handler_f fn;
    enum access access;
    enum role role; /* the roles that serve it */
} handlers[] = {
    {"start", req_start, OWNER, EXEC},
    {"exception", req_exception, OWNER, EXEC},
    {"kill", req_kill, OWNER, EXEC},
    {"expiration", req_expiration, OWNER, EXEC},
    {"critical-ranks", req_critical_ranks, OWNER, EXEC},
    {"fail-ranks", req_fail_ranks, PRIVILEGED_JOB, EXEC},
    {"resume", req_resume, PRIVILEGED_JOB, EXEC},
    {"post", req_post, PRIVILEGED_JOB, EXEC},
    {"undrain", req_undrain, PRIVILEGED, EXEC},
    {"bind", req_bind, PRIVILEGED, BOTH},
    {"list", req_list, ANYONE, BOTH},
    {"stats", req_stats, ANYONE, BOTH},
    /* what cairn jobs, show, eventlog read (service_views.c) */
    {"jobs", req_jobs, ANYONE, EXEC},
    {"job-events", req_job_events, OWNER, EXEC},
    /* multinode (remote.c, node.c) */
    {"node-relay", svc_node_relay, PRIVILEGED, EXEC},
    {"node-report", svc_node_report, PRIVILEGED, EXEC},
    {"node-hello", svc_node_hello, PRIVILEGED, EXEC},
    {"node-state", svc_node_state, PRIVILEGED, EXEC},
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
static bool owner_allowed (struct cairnd *d,
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
    struct submitter s = job_submitter (d, (uint64_t)json_integer_value (id));
    if (s.uid < 0 || trust_owner_job (d->trust, uid, s.shell_uid))
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
static bool allowed (struct cairnd *d,
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
    if (trust_is_owner (d->trust, uid))
        return owner_allowed (d, c, topic, matchtag, payload, access);
    if (privileged (d, uid))
        return true;
    if (d->uid != 0) { /* not root: it runs its own uid's jobs only */
        conn_respond_error (c, matchtag, EPERM,
                            "%s: permission denied: this cairnd serves uid %u "
                            "only",
                            topic, (unsigned)d->uid);
        return false;
    }
    if (access == PRIVILEGED || access == PRIVILEGED_JOB) {
        conn_respond_error (c, matchtag, EPERM,
                            "%s: permission denied: only root and cairnd's "
                            "uid %u may do this",
                            topic, (unsigned)d->uid);
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
        (owner = job_submitter (d, (uint64_t)json_integer_value (id)).uid) <
            0 ||
        owner == (json_int_t)uid)
        return true;
    conn_respond_error (c, matchtag, EPERM,
                        "%s: permission denied: job %jd belongs to uid %jd",
                        topic, (intmax_t)json_integer_value (id),
                        (intmax_t)owner);
    return false;
}

void service_request (struct conn *c,
                      const char *topic,
                      int64_t matchtag,
                      json_t *payload,
                      void *arg)
{
    struct cairnd *d = arg;
    for (size_t i = 0; i < sizeof (handlers) / sizeof (handlers[0]); i++) {
        if (strcmp (handlers[i].topic, topic) != 0)
            continue;
        if (!allowed (d, c, topic, matchtag, payload, handlers[i].access))
            return;
        if (d->stopping) {
            conn_respond_error (c, matchtag, EAGAIN, "cairnd is stopping");
            return;
        }
        if (!(handlers[i].role & (d->node ? NODE : EXEC))) {
            conn_respond_error (c, matchtag, ENOSYS,
                                d->node ? "%s: this cairnd is a node (\"role\": "
                                          "\"node\"): that is for rank 0's "
                                          "cairnd"
                                        : "%s: this cairnd is not a node (its "
                                          "config has no \"role\": \"node\")",
                                topic);
            return;
        }
        handlers[i].fn (d, c, matchtag, payload);
        return;
    }
    conn_respond_error (c, matchtag, ENOSYS, "unknown topic '%s'", topic);
}

