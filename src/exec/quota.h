/* quota.h - the unprivileged clients' quotas (issue 30; quota.c says how
 * a job's bytes are counted).
 *
 * A user on the public socket (not root, cairnd's uid or the instance
 * owner: service_privileged(), trust.h) has at most limits.user-max-jobs
 * active jobs and limits.user-max-journal-bytes of journal; all such
 * users together at most limits.users-journal-share of
 * journal.max-size: at a start, and at every request of theirs that
 * journals (issue 51). The count lives in memory, fed by what cairnd
 * stages and purges; nothing here writes the journal (no crash points).
 */
#ifndef CAIRN_QUOTA_H
#define CAIRN_QUOTA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/error.h"
#include "core/job.h"
#include "journal/journal.h"

struct quota;

/* An empty count over journal j, under cfg's limits (both kept, not
 * copied: they outlive it). NULL with ENOMEM. */
struct quota *quota_create (struct journal *j, const struct cairn_config *cfg);
void quota_destroy (struct quota *q);

/* Count the unprivileged clients' jobs in the journal afresh (at startup,
 * and after another process purged jobs). -1 with err (a journal read
 * error). */
int quota_count (struct quota *q, struct cairn_error *err);
/* Event seq of job (ev, its line len bytes) was staged for the
 * journal. */
void quota_staged (struct quota *q,
                   const struct job *job,
                   uint32_t seq,
                   enum job_event ev,
                   size_t len);
/* Job id was purged from the journal by cairnd. */
void quota_purged (struct quota *q, uint64_t id);
/* May unprivileged uid start a job whose accept takes about need bytes?
 * 0, or -1 with EDQUOT and the limit named in err: limits.user-max-jobs,
 * limits.user-max-journal-bytes, or limits.users-journal-share; or with
 * the errno of a count that could not be made again (quota_count). On 0
 * the job and its bytes are promised: they count until quota_settle(). */
int quota_check (struct quota *q,
                 uid_t uid,
                 size_t need,
                 struct cairn_error *err);
/* May unprivileged uid's request on a job it has (an exception, a kill,
 * an expiration, critical ranks) have about need more bytes journaled
 * (quota_need)? As quota_check, without the count of active jobs: 0, or
 * -1 with EDQUOT and limits.user-max-journal-bytes or
 * limits.users-journal-share named in err ("... and this request needs
 * N bytes more ..."), or the errno of a count that could not be made
 * again. On 0 the bytes are promised until quota_settle(). */
int quota_check_request (struct quota *q,
                         uid_t uid,
                         size_t need,
                         struct cairn_error *err);
/* What nevents events whose lines total len bytes count for (each one's
 * key and LMDB's bookkeeping too), for quota_check_request. */
size_t quota_need (size_t nevents, size_t len);
/* All unprivileged users' active jobs: accepted and not clean, and the
 * starts let in (quota_check) and not staged yet. Kept as a count: no
 * walk over the users or the jobs. */
size_t quota_users_active (const struct quota *q);
/* Everything the checks let in was staged (quota_staged counted it) or
 * never will be: forget the promises. cairnd calls it when nothing is
 * left to stage. */
void quota_settle (struct quota *q);

/* Is the journal too full for a new job? The last 10% of its largest map
 * (at least 1 MiB), and what active_jobs may still write (their output
 * caps and events), are kept for the jobs already accepted. A size that
 * cannot be read: not full. */
bool quota_journal_full (const struct quota *q, size_t active_jobs);

#endif /* CAIRN_QUOTA_H */
