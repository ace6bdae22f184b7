/* service_start.c - the service's start (service.h): a new job, accepted
 * once its sender, its instance, the limits and the quotas let it; or a
 * reattach, answered with the job's responses so far (its backlog) before
 * its stream follows it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"
#include "core/job.h"
#include "core/rv1.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/output.h"
#include "exec/quota.h"
#include "exec/service_private.h"
#include "exec/streams.h"
#include "journal/journal.h"
#include "server/server.h"
#include "util/log.h"

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

static void start_reattach (struct service *svc,
                            struct conn *c,
                            int64_t matchtag,
                            uint64_t id,
                            int64_t since,
                            bool events,
                            json_t *sent)
{
    struct journal_jobinfo info;
    struct cairn_error err;
    struct jobentry *je = jobtable_get (svc->jobs, id);
    struct job *gone = NULL;

    if (!je && journal_job_info (svc->journal, id, &info) < 0) {
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
    struct submitter sub = service_submitter (svc, id);
    json_t *r = service_response (id, "reattached",
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
    if (journal_read_job (svc->journal, id, 0, backlog_cb, &b, &err) < 0)
        log_msg (LOG_ERR, "reattach %ju: %s", (uintmax_t)id, err.text);
    job_destroy (gone);
    if (je)
        streams_add (svc->streams, je, c, matchtag, true, events, sent);
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
static int
check_max_jobs (struct service *svc, bool priv, struct cairn_error *err)
{
    size_t total = jobtable_count (svc->jobs);
    size_t users = quota_users_active (svc->quota);
    size_t max = (size_t)svc->cfg->max_jobs;
    size_t share = (size_t)(svc->cfg->users_jobs_share * (double)max);

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
                       users, svc->cfg->users_jobs_share, max);
    return 0;
}

void service_req_start (struct service *svc,
                        struct conn *c,
                        int64_t matchtag,
                        json_t *payload)
{
    uint64_t id;
    json_int_t userid = -1, since = 0;
    json_t *jobspec = NULL, *R = NULL, *events = NULL;
    int reattach = 0;
    json_error_t jerr;
    struct cairn_error err = {{0}};
    struct journal_jobinfo info;

    if (service_get_id (c, matchtag, payload, &id) < 0)
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
        start_reattach (svc, c, matchtag, id, since, json_is_true (events),
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
    if (bind_check_start (svc->bindings, c, instance, &err) < 0) {
        conn_respond_error (c, matchtag, EBUSY, "%s", err.text);
        return;
    }
    if (jobtable_get (svc->jobs, id) ||
        journal_job_info (svc->journal, id, &info) == 0) {
        /* never run a job twice: a client that lost track must reattach */
        json_t *r = service_response (
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
    int purged = journal_purged (svc->journal, id);
    if (purged != 0) {
        conn_respond_error (c, matchtag, purged > 0 ? EEXIST : errno,
                            purged > 0 ? "job %ju was purged from the journal: "
                                         "its id cannot be used again"
                                       : "job %ju: cannot read the journal",
                            (uintmax_t)id);
        return;
    }
    if (quota_journal_full (svc->quota, jobtable_count (svc->jobs))) {
        /* Not journaled (there is no room): the job never existed here.
         * A fatal exception and the final release end its stream as
         * RFC 32 wants, so the resource manager frees its resources. */
        log_msg (LOG_WARNING, "refusing job %ju: the journal is full",
                 (uintmax_t)id);
        json_t *r = service_response (
            id, "exception",
            json_pack ("{s:i s:s s:s}", "severity", 0, "type", "exec", "note",
                       "cairnd's journal is full: no new jobs until space is "
                       "made (cairn purge, or a larger journal.max-size)"));
        conn_respond (c, matchtag, r);
        json_decref (r);
        r = service_response (
            id, "release", json_pack ("{s:s s:b}", "ranks", "all", "final", 1));
        conn_respond (c, matchtag, r);
        json_decref (r);
        return;
    }
    bool priv = service_privileged (svc, conn_uid (c));
    if (check_max_jobs (svc, priv, &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        return;
    }
    if (!priv) {
        /* what its accept will take: the jobspec and R, and the config */
        size_t need = json_dumpb (jobspec, NULL, 0, JSON_COMPACT) +
                      json_dumpb (R, NULL, 0, JSON_COMPACT) + 1024;
        if (quota_check (svc->quota, conn_uid (c), need, &err) < 0) {
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
    if (nranks > svc->cfg->max_ranks) {
        conn_respond_error (c, matchtag, EINVAL,
                            "R: %zu ranks, more than the limit of %zu", nranks,
                            svc->cfg->max_ranks);
        return;
    }
    struct job *job = job_create (id);
    struct jobentry *je = job ? jobtable_add (svc->jobs, job) : NULL;
    struct job_ctx ctx;
    if (!je) {
        job_destroy (job);
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        return;
    }
    if (!service_privileged (svc, conn_uid (c)))
        job_set_unprivileged (job);
    if (trust_start (svc->trust, conn_uid (c), (uint32_t)userid, jobspec, job,
                     &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        jobtable_remove (je);
        return;
    }
    jobctx_fill (svc->jctx, &ctx);
    if (job_accept (job, &ctx, (uint32_t)userid, R, jobspec, &svc->cfg->job,
                    je->pending, &err) < 0) {
        conn_respond_error (c, matchtag, errno == EINVAL ? EINVAL : errno, "%s",
                            err.text);
        jobtable_remove (je);
        return;
    }
    streams_add (svc->streams, je, c, matchtag, false, json_is_true (events),
                 want_output ? json_object () : NULL);
    jobtable_dirty (je);
}