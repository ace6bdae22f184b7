/* shrink.h - a job that runs on fewer ranks than it was given.
 *
 * A tolerated prolog failure (jobspec attributes.system.exec.
 * prolog-failures-allowed) leaves ranks out of a job. flux-shell sizes the
 * job from R (job-info.update-watch on job.<id>.R: shell count, task
 * layout, the shells' barrier), so before any shell starts the job's R in
 * the primary KVS namespace is rewritten to hold only the ranks that run.
 * cairnd waits for that (the job's jobspec has attributes.system.cairn.
 * hold-on-shrink): its `hold` event names those ranks, and the module says
 * `resume` once the commit is done.
 *
 * The job-manager keeps its own copy of R, so the ranks left out stay
 * allocated to the job until its final release, as Flux expects; they are
 * drained (cairnd's `drain`). A job-manager that restarts reads the
 * rewritten R, as the shells did. Tasks are laid out over the remaining
 * ranks by flux-shell (oversubscribing them when the jobspec asked for
 * more tasks than they have cores).
 */
#ifndef CAIRN_FLUX_SHRINK_H
#define CAIRN_FLUX_SHRINK_H

#include <flux/core.h>
#include <jansson.h>

/* Rewrite job id's R (R is what the job-manager gave the module) to hold
 * only the ranks of idset string `ranks` (rv1_fragment(); the scheduler's
 * "scheduling" part is kept as it was). Rewriting it twice with the same
 * ranks gives the same R (a replay after a restart). Returns the KVS
 * commit's future (flux_future_get() gives 0 or -1 with errno), or NULL
 * with errno (EINVAL: R or ranks unusable, with a message in errbuf). */
flux_future_t *shrink_commit (flux_t *h,
                              flux_jobid_t id,
                              const json_t *R,
                              const char *ranks,
                              char *errbuf,
                              size_t errlen);

#endif /* CAIRN_FLUX_SHRINK_H */
