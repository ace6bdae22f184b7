/* jobread.h - a job as its committed events leave it: the journal's
 * eventlog of one job folded back (job_apply) into a struct job.
 *
 * The replay at restart (reconcile.h) reads every active job this way, and
 * a late report of a job no longer in memory (remote.h) reads one that is
 * done. Pure: it reads the journal and nothing else.
 */
#ifndef CAIRN_JOBREAD_H
#define CAIRN_JOBREAD_H

#include <stdint.h>

#include "core/error.h"

struct journal; /* journal/journal.h */
struct job;     /* core/job.h */

/* Job id as its committed events in j leave it (also a job that is done,
 * for what may still be recorded of it); the caller destroys it. NULL
 * with errno and err: ENOENT (no such job), EINVAL (an event the fold
 * refuses), ENOMEM. */
struct job *jobread (struct journal *j, uint64_t id, struct cairn_error *err);

#endif /* CAIRN_JOBREAD_H */
