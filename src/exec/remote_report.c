/* remote_report.c - what rank 0 makes of a node's REPORT (node-report,
 * DESIGN-MULTINODE.md): journaled before anything is done with it, and
 * acknowledged to the node once that is committed. A report about a
 * process rank 0 waits on becomes its proc-spawn, proc-exit (with its
 * output), proc-fail or proc-lost; one about a process given up on is a
 * late report, recorded as proc-late whether or not its job is over; a
 * process that runs although it was given up on is killed.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"
#include "exec/jobctx.h"
#include "exec/jobread.h"
#include "exec/jobtable.h"
#include "exec/quota.h"
#include "exec/remote.h"
#include "exec/remote_private.h"
#include "exec/turn.h"
#include "journal/journal.h"
#include "journal/outbox.h"
#include "node/nodeproc.h"
#include "server/server.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "journal/crashpoint.h"

/* The job a report names ("id": a node sends it since issue 33), or 0. */
static uint64_t report_job (const json_t *report)
{
    json_int_t id = json_integer_value (json_object_get (report, "id"));
    return id > 0 ? (uint64_t)id : 0;
}

/* The effect of a node-ack to rank for execid, for the outbox. */
static struct outbox_effect
node_ack (struct remote *r, uint32_t rank, const char *execid)
{
    return (struct outbox_effect){
        .fn = remote_ack_effect, .arg = r, .key = execid, .op = (int)rank};
}

struct late_stage {
    struct remote *r;
    const struct job *job; /* as read back from the journal */
    json_t *entry;         /* the proc-late */
};

/* outbox_put's staging of a done job's proc-late: the next event of its
 * eventlog, the job left done; its bytes in its user's quota, as every
 * event's (stage_job). */
static int stage_late (void *arg)
{
    struct late_stage *ls = arg;
    struct journal *j = ls->r->journal;
    uint64_t id = job_id (ls->job);
    struct journal_jobinfo info;
    char *line;
    size_t len;

    if (journal_job_batched (j, id, &info) < 0)
        return -1;
    if (info.active) { /* it is cairnd_job's then, never ours */
        errno = EBUSY;
        return -1;
    }
    if (!(line = eventlog_entry_encode (ls->entry)))
        return -1;
    len = strlen (line);
    if (journal_append (j, id, info.nevents, line, len) < 0) {
        free (line);
        return -1;
    }
    free (line);
    quota_staged (ls->r->quota, ls->job, info.nevents, JOB_EV_PROC_LATE, len);
    return 0;
}

/* A late report of a process of job id, a job that is done and no longer
 * in memory: recorded all the same (issue 33), at the end of its eventlog
 * (cairn show, cairn eventlog), and acknowledged once that is committed.
 * Returns 0 when it is staged (its ack queued); 1 when it could not be
 * staged (logged; not acknowledged, so the node keeps it and sends it
 * again); -1 when there is nothing to record: the job was purged, the
 * process did not end lost (a repeat of a known end), its late report is
 * recorded already. */
static int record_late_done (struct remote *r,
                             uint32_t rank,
                             uint64_t id,
                             const char *execid,
                             const json_t *report)
{
    struct cairn_error err = {{0}};
    struct job_ctx ctx;
    json_t *out = json_array ();
    struct job *job = NULL;
    int rc = -1;

    if (!out)
        errset (&err, ENOMEM, "out of memory");
    else
        job = jobread (r->journal, id, &err);
    if (!job) {
        if (errno != ENOENT)
            log_msg (LOG_ERR, "%s: a late report of job %ju not recorded: %s",
                     execid, (uintmax_t)id, err.text);
        goto done;
    }
    jobctx_fill (r->jctx, &ctx);
    if (job_state (job) != JOB_DONE ||
        job_proc_late (job, &ctx, execid, report, out) < 0)
        goto done;
    CRASHPOINT ("remote.late.done");
    struct late_stage ls = {r, job, json_array_get (out, 0)};
    struct outbox_effect e = node_ack (r, rank, execid);
    if (outbox_put (r->outbox, OUTBOX_REMOTE, stage_late, &ls, &e) < 0) {
        log_msg (LOG_ERR, "%s: a late report of job %ju not recorded: %s",
                 execid, (uintmax_t)id, strerror (errno));
        rc = 1; /* not acknowledged: the node keeps it, and sends it again */
        goto done;
    }
    log_msg (LOG_INFO,
             "job %ju (done): %s: a late report from rank %u: "
             "recorded",
             (uintmax_t)id, execid, (unsigned)rank);
    rc = 0;
done:
    json_decref (out);
    job_destroy (job);
    return rc;
}

/* A report about a process we no longer wait on: the end of one given up
 * on (recorded as proc-late, whether or not its job is still active), or
 * a repeat of an end already journaled, or one of a job purged long ago
 * (only acknowledged). One still running after it was given up on is
 * killed: no user work runs on unseen. late: it was given up on
 * (remote.gone), as far as this cairnd knows; after a restart the
 * report's own job id says whose it is. */
static void report_stale (struct remote *r,
                          uint32_t rank,
                          const char *execid,
                          enum nodeproc_state state,
                          const json_t *report,
                          const struct rproc *late)
{
    uint64_t id = late ? late->id : report_job (report);
    struct jobentry *je = id ? jobtable_get (r->jobs, id) : NULL;

    if (state == NODEPROC_INTENT || state == NODEPROC_UNKNOWN)
        return; /* asked twice: the other answer comes with the spawn; or
                   a query the node could not answer: asked again whole */
    if (state == NODEPROC_RUNNING) {
        log_msg (LOG_WARNING,
                 "rank %u: %s runs although it was given up "
                 "on: killing it",
                 (unsigned)rank, execid);
        remote_relay_send (
            r, rank, "node-signal",
            json_pack ("{s:s s:i}", "execid", execid, "signum", SIGKILL), true);
        return;
    }
    if (je) {
        struct job_ctx ctx;
        jobctx_fill (r->jctx, &ctx);
        if (job_proc_late (je->job, &ctx, execid, report, je->pending) == 0) {
            log_msg (LOG_INFO, "job %s: %s: a late report (%s): recorded",
                     je->name, execid, nodeproc_state_name (state));
            jobtable_dirty (je);
            return; /* acknowledged once proc-late is committed */
        }
    } else if (id) {
        int rc = record_late_done (r, rank, id, execid, report);
        if (rc >= 0)
            return; /* acknowledged once it is committed, or not at all */
    }
    /* the end it repeats may be in this turn's batch, not yet on disk: the
     * node may forget it only after the commit (O2) */
    struct outbox_effect e = node_ack (r, rank, execid);
    if (outbox_after (r->outbox, OUTBOX_REMOTE, &e) < 0)
        log_msg (LOG_ERR, "%s: cannot queue its node-ack", execid);
}

static char *capped (const char *s, size_t room, bool *trunc)
{
    size_t len = s ? strlen (s) : 0;
    if (len > room) {
        *trunc = true;
        len = room;
    }
    return s ? strndup (s, len) : NULL;
}

static void report_ended (struct jobentry *je,
                          const struct job_proc *p,
                          const json_t *rep,
                          const struct job_ctx *ctx)
{
    int status = 0, otrunc = 0, etrunc = 0;
    const char *error = NULL, *out = NULL, *err = NULL;
    bool ot, et;

    (void)json_unpack ((json_t *)rep, "{s?i s?s s?s s?s s?b s?b}", "status",
                       &status, "error", &error, "stdout", &out, "stderr", &err,
                       "stdout-truncated", &otrunc, "stderr-truncated",
                       &etrunc);
    ot = otrunc;
    et = etrunc;
    size_t room = job_output_room (je->job, p->phase);
    char *o = capped (out, room, &ot);
    size_t olen = o ? strlen (o) : 0;
    char *e = capped (err, room > olen ? room - olen : 0, &et);
    struct job_proc_end end = {.status = status,
                               .error = error,
                               .outdata = o,
                               .out_trunc = ot,
                               .errdata = e,
                               .err_trunc = et};
    if (job_proc_exited (je->job, ctx, p->execid, &end, je->pending) < 0)
        log_msg (LOG_ERR, "job %s: exit of %s: %s", je->name, p->execid,
                 strerror (errno));
    free (o);
    free (e);
}

void req_node_report (struct remote *r,
                      struct conn *c,
                      int64_t matchtag,
                      json_t *payload)
{
    json_t *rep = NULL;
    json_int_t rank;
    const char *execid, *name, *host = NULL, *bootid = "", *error = NULL;
    json_int_t pid = 0, start = 0;
    enum nodeproc_state state;
    struct job_ctx ctx;

    if (json_unpack (payload, "{s:I s:o}", "rank", &rank, "report", &rep) < 0 ||
        rank < 0 || rank > UINT32_MAX ||
        json_unpack (rep, "{s:s s:s s?s s?I s?I s?s s?s}", "execid", &execid,
                     "state", &name, "host", &host, "pid", &pid, "starttime",
                     &start, "bootid", &bootid, "error", &error) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-report: want {\"rank\": R, \"report\": "
                            "{\"execid\", \"state\", ...}}");
        return;
    }
    /* the report's state decoded once, here (nodeproc.h) */
    if (nodeproc_state_of (name, &state) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-report: unknown state \"%s\"", name);
        return;
    }
    if (state == NODEPROC_ENDED &&
        !json_is_integer (json_object_get (rep, "status"))) {
        conn_respond_error (c, matchtag, EPROTO,
                            "node-report: an ended process needs its status");
        return;
    }
    /* a late report of one given up on is recorded; its kill is moot */
    struct rproc *late = hashmap_get (r->gone, execid);
    if (late && state != NODEPROC_RUNNING)
        hashmap_del (r->gone, execid);
    remote_heard (r, (uint32_t)rank);
    struct rproc *rp = hashmap_get (r->procs, execid);
    const struct job_proc *p = rp ? job_proc_find (rp->je->job, execid) : NULL;
    if (rp && rp->rank == (uint32_t)rank) {
        /* a query it could not answer: the whole request next time */
        rp->answered = state != NODEPROC_UNKNOWN;
        if (!rp->answered)
            rp->t_sent = 0;
    }
    if (!p || p->state == PROC_DONE || rp->rank != (uint32_t)rank ||
        state == NODEPROC_INTENT || state == NODEPROC_UNKNOWN) {
        report_stale (r, (uint32_t)rank, execid, state, rep, late);
        if (late && state != NODEPROC_RUNNING)
            free (late);
        turn_ack (r->turn, c, matchtag, json_object ());
        return;
    }
    struct jobentry *je = rp->je;
    jobctx_fill (r->jctx, &ctx);
    CRASHPOINT ("remote.report.before");
    switch (state) {
    case NODEPROC_RUNNING:
        if (p->state == PROC_INTENT &&
            job_proc_spawned_on (je->job, &ctx, execid, (pid_t)pid,
                                 (unsigned long long)start, bootid, host,
                                 je->pending) < 0)
            log_msg (LOG_ERR, "job %s: spawn record of %s: %s", je->name,
                     execid, strerror (errno));
        break;
    case NODEPROC_ENDED:
        report_ended (je, p, rep, &ctx);
        break;
    case NODEPROC_FAILED:
        (void)job_proc_failed (je->job, &ctx, execid,
                               error ? error : "the node could not start it",
                               je->pending);
        break;
    case NODEPROC_LOST:
        (void)job_proc_lost (je->job, &ctx, execid,
                             error ? error : "lost on its node", je->pending);
        break;
    case NODEPROC_INTENT:  /* stale, above */
    case NODEPROC_UNKNOWN: /* stale, above */
    case NODEPROC_NSTATES:
        break;
    }
    jobtable_dirty (je);
    turn_ack (r->turn, c, matchtag, json_object ());
}
