/* service_job.c - the service's requests on a running job (service.h):
 * exception, kill, expiration, critical-ranks, fail-ranks, resume, post.
 * Each is decided by the job state machine (core/job.h) and answered once
 * the events it staged are committed (turn_ack); a user's is weighed
 * against its quota first (usercost.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/killwait.h"
#include "exec/service_private.h"
#include "exec/turn.h"
#include "exec/usercost.h"
#include "journal/journal.h"
#include "server/server.h"
#include "util/log.h"

/* Finish a request that called into the job: answer the error now, or
 * payload (taken) once the events it staged are committed. */
static void finish_with (struct service *svc,
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
    turn_ack (svc->turn, c, matchtag, payload);
}

static void finish (struct service *svc,
                    struct jobentry *je,
                    struct conn *c,
                    int64_t matchtag,
                    int rc,
                    struct cairn_error *err)
{
    finish_with (svc, je, c, matchtag, rc, err, json_object ());
}

void service_req_exception (struct service *svc,
                            struct conn *c,
                            int64_t matchtag,
                            json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
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
    if (!service_privileged (svc, conn_uid (c)) &&
        strlen (note) > USERCOST_NOTE_MAX) {
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
            svc->cost, c, matchtag, "exception",
            usercost_exception (je->job, (int)severity, type_len, note_len)))
        return;
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_raise (je->job, &ctx, type, (int)severity, note,
                        ws < 0 ? -1 : (int)ws, je->pending, &err);
    finish (svc, je, c, matchtag, rc, &err);
}

void service_kill (struct service *svc,
                   struct jobentry *je,
                   struct conn *c,
                   int64_t matchtag,
                   int signum)
{
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    /* weighed now, when its signals are staged: a held kill too */
    if (!usercost_admit (svc->cost, c, matchtag, "kill",
                         usercost_kill (je->job)))
        return;
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_kill (je->job, &ctx, signum, je->pending, &err);
    finish (svc, je, c, matchtag, rc, &err);
}

void service_req_kill (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
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
        if (!usercost_admit (svc->cost, c, matchtag, "kill",
                             usercost_kill (je->job)))
            return;
        if (killwait_add (svc->kills, je, c, matchtag, (int)signum) == 0)
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
    service_kill (svc, je, c, matchtag, (int)signum);
}

void service_req_expiration (struct service *svc,
                             struct conn *c,
                             int64_t matchtag,
                             json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
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
    if (!service_privileged (svc, uid) && expiration >= 0 &&
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
                            (unsigned)svc->uid);
        return;
    }
    if (!usercost_admit (svc->cost, c, matchtag, "expiration",
                         usercost_expiration (je->job)))
        return;
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_set_expiration (je->job, &ctx, expiration, je->pending, &err);
    /* the answer: the time limit now in force (job_time_limit) */
    finish_with (
        svc, je, c, matchtag, rc, &err,
        rc == 0 ? json_pack ("{s:f}", "expiration", job_time_limit (je->job))
                : NULL);
}

void service_req_critical_ranks (struct service *svc,
                                 struct conn *c,
                                 int64_t matchtag,
                                 json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
    struct idset *ranks;
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je || !(ranks = service_get_ranks (c, matchtag, payload)))
        return;
    char *enc = idset_encode (ranks); /* as the event will carry them */
    if (!enc) {
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        idset_destroy (ranks);
        return;
    }
    size_t need = usercost_critical (je->job, strlen (enc));
    free (enc);
    if (!usercost_admit (svc->cost, c, matchtag, "critical-ranks", need)) {
        idset_destroy (ranks);
        return;
    }
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_set_critical (je->job, &ctx, ranks, je->pending, &err);
    idset_destroy (ranks);
    finish (svc, je, c, matchtag, rc, &err);
}

void service_req_fail_ranks (struct service *svc,
                             struct conn *c,
                             int64_t matchtag,
                             json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
    struct idset *ranks;
    const char *note = "";
    struct cairn_error err = {{0}};
    struct job_ctx ctx;

    if (!je || !(ranks = service_get_ranks (c, matchtag, payload)))
        return;
    (void)json_unpack (payload, "{s?s}", "note", &note);
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_fail_ranks (je->job, &ctx, ranks, note, je->pending, &err);
    idset_destroy (ranks);
    finish (svc, je, c, matchtag, rc, &err);
}

void service_req_resume (struct service *svc,
                         struct conn *c,
                         int64_t matchtag,
                         json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
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
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_resume (je->job, &ctx, ready, je->pending, &err);
    finish (svc, je, c, matchtag, rc, &err);
}

void service_req_post (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload)
{
    struct jobentry *je = service_get_job (svc, c, matchtag, payload);
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
    jobctx_fill (svc->jctx, &ctx);
    errno = 0;
    int rc = job_post (je->job, &ctx, name, context, je->pending, &err);
    finish (svc, je, c, matchtag, rc, &err);
}