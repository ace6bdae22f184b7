/* usercost.h - what a user's request on a running job will have cairnd
 * journal, weighed before anything is staged (issue 51; quota.h).
 *
 * Quotas checked only at a start left a running job's owner free to fill
 * the journal with requests on it: `exception` notes of a MiB each, and
 * `kill`s that journal one event per shell of a job of many ranks. Each
 * request of service.c's handlers[] that journals (exception, kill,
 * expiration, critical-ranks; a held kill again when it is carried out)
 * is weighed here first, if its sender is not privileged: over the
 * sender's quota or the users' share, or with the journal full, it is
 * refused and nothing is journaled.
 *
 * Each weight is an upper bound of the bytes the request's decision can
 * stage at once (quota_need): its own event, and where it may end the
 * job (a fatal exception, an expiration, critical ranks) the fatal
 * exception and one proc-signal per live process that the end emits.
 */
#ifndef CAIRN_EXEC_USERCOST_H
#define CAIRN_EXEC_USERCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/idset.h"
#include "core/job.h"

struct conn;     /* server/server.h */
struct trust;    /* exec/trust.h */
struct quota;    /* exec/quota.h */
struct jobtable; /* exec/jobtable.h */
struct usercost;

/* The longest note a user's exception may carry. A note is a sentence
 * for a human (stock Flux bounds it only by its message size); a user's
 * 1 MiB notes were the attack. Privileged clients relay notes as they
 * come. */
#define USERCOST_NOTE_MAX 4096

/* The weight of an exception of severity on job, with type and note
 * (their lengths once encoded in JSON: json_dumpb of the strings). */
size_t usercost_exception (const struct job *job,
                           int severity,
                           size_t type_len,
                           size_t note_len);
/* The weight of a kill of job (one proc-signal per live process). */
size_t usercost_kill (const struct job *job);
/* The weight of an expiration on job (it may end the job). */
size_t usercost_expiration (const struct job *job);
/* The weight of critical ranks on job, ranks_len the encoded idset's
 * length (it may end the job: a rank made critical that failed). */
size_t usercost_critical (const struct job *job, size_t ranks_len);

/* The judge of unprivileged requests' weight, lent whom cairnd trusts,
 * the users' quotas and the active jobs (their room in the journal).
 * NULL with errno ENOMEM. */
struct usercost *usercost_create (const struct trust *trust,
                                  struct quota *quota,
                                  const struct jobtable *jobs);

/* NULL is fine; errno is kept. */
void usercost_destroy (struct usercost *u);

/* May c's sender have need bytes (a usercost_*) journaled by its request
 * topic? True at once for a privileged sender. Otherwise true only if
 * the journal is not full (quota_journal_full: its rest is the running
 * jobs' and the privileged clients') and the sender's quota and the
 * users' share allow it (quota_check_request, which promises the bytes);
 * else answers c with ENOSPC or EDQUOT and a message that names the
 * limit, and returns false. */
bool usercost_admit (struct usercost *u,
                     struct conn *c,
                     int64_t matchtag,
                     const char *topic,
                     size_t need);

#endif /* CAIRN_EXEC_USERCOST_H */
