/* usercost.c - a user's request weighed before it is staged (usercost.h).
 *
 * The weights are upper bounds of the event lines as eventlog_entry_encode
 * writes them (compact JSON, keys in order), plus quota.c's overhead per
 * event. An event's frame is
 *   {"timestamp":T,"name":"N","context":{...}}
 * 13 + 24 (a double, %.17g at its longest) + 9 + 16 (the longest of cairn's
 * names) + 13 + 2 bytes: 80 with the context's own.
 */
#include <errno.h>

#include <stdlib.h>

#include "exec/jobtable.h"
#include "exec/quota.h"
#include "exec/trust.h"
#include "exec/usercost.h"
#include "server/server.h"
#include "util/log.h"

#define FRAME 80
/* "type":T,"severity":N,"note":N,"wait_status":2147483647: 52 besides
 * the type's and the note's encodings */
#define EXCEPTION_LINE (FRAME + 52)
/* "execid":"<EXECID_LEN>","signum":NN,"reason":"terminate","kill":true */
#define SIGNAL_LINE (FRAME + 56 + EXECID_LEN)
/* "expiration":<a double> */
#define EXPIRATION_LINE (FRAME + 13 + 24)
/* the time limit's own exception: "timeout", "resource allocation
 * expired" (job_decide.c), with room */
#define TIMEOUT_LINE (EXCEPTION_LINE + 32 + 64)
/* "ranks":"..." besides the idset's encoding */
#define CRITICAL_LINE (FRAME + 10)

size_t usercost_exception (const struct job *job,
                           int severity,
                           size_t type_len,
                           size_t note_len)
{
    size_t n = severity == 0 ? job_procs_live (job) : 0;
    return quota_need (1 + n,
                       EXCEPTION_LINE + type_len + note_len + n * SIGNAL_LINE);
}

size_t usercost_kill (const struct job *job)
{
    size_t n = job_procs_live (job);
    return quota_need (n, n * SIGNAL_LINE);
}

size_t usercost_expiration (const struct job *job)
{
    size_t n = job_procs_live (job);
    return quota_need (2 + n, EXPIRATION_LINE + TIMEOUT_LINE + n * SIGNAL_LINE);
}

size_t usercost_critical (const struct job *job, size_t ranks_len)
{
    /* a rank made critical that has failed already ends the job at once
     * (job_set_critical steps the job): an exception of cairn's own (a
     * note of at most 200 bytes, job_decide.c, and the ranks, a subset
     * of these) and the end's signals */
    size_t n = job_procs_live (job);
    return quota_need (2 + n, CRITICAL_LINE + EXCEPTION_LINE + 256 +
                                  2 * ranks_len + n * SIGNAL_LINE);
}

struct usercost {
    const struct trust *trust;
    struct quota *quota;
    const struct jobtable *jobs;
};

struct usercost *usercost_create (const struct trust *trust,
                                  struct quota *quota,
                                  const struct jobtable *jobs)
{
    struct usercost *u = calloc (1, sizeof (*u));
    if (!u)
        return NULL;
    u->trust = trust;
    u->quota = quota;
    u->jobs = jobs;
    return u;
}

void usercost_destroy (struct usercost *u)
{
    int saved = errno;
    free (u);
    errno = saved;
}

bool usercost_admit (struct usercost *u,
                     struct conn *c,
                     int64_t matchtag,
                     const char *topic,
                     size_t need)
{
    struct cairn_error err = {{0}};
    uid_t uid = conn_uid (c);

    if (trust_privileged (u->trust, uid))
        return true;
    /* the rest of the journal is for the jobs already running to reach
     * their ends, and for the privileged clients */
    if (quota_journal_full (u->quota, jobtable_count (u->jobs))) {
        conn_respond_error (c, matchtag, ENOSPC,
                            "%s: cairnd's journal is full: what is left is "
                            "kept for the running jobs' ends and for root's "
                            "and cairnd's uid's requests",
                            topic);
        return false;
    }
    if (quota_check_request (u->quota, uid, need, &err) < 0) {
        int e = errno;
        log_msg (LOG_DEBUG, "refusing %s of uid %u: %s", topic, (unsigned)uid,
                 err.text);
        conn_respond_error (c, matchtag, e, "%s: %s", topic, err.text);
        return false;
    }
    return true;
}
