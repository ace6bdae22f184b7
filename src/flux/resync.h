/* resync.h - jobs whose prolog or epilog events only cairnd can finish.
 *
 * The job-manager sends exec a `start` only for a job in RUN with no
 * prolog pending, and nothing at all for a job in CLEANUP. So after the
 * rank-0 broker restarts (flux-core #4108), a job whose `prolog-start` or
 * `epilog-start` is in its eventlog without the matching `*-finish` would
 * wait for ever: perilog.so's processes died with the broker; cairnd's did
 * not, and cairnd's journal knows how they ended.
 *
 * Each time cairnd comes up, resync asks the job-manager for its active
 * jobs (job-manager.list) and, for each one in RUN or CLEANUP that has
 * such an unmatched start and no start stream here, reattaches to it in
 * cairnd (events view) and posts what the eventlog is missing, in order:
 * the prolog/epilog events, the exceptions and drains that go with them,
 * up to and including the awaited `*-finish`; then it lets go (for a
 * prolog, the job-manager's `start` request follows and fjob takes over).
 * A job cairnd has no record of gets a fatal `exec` exception and the
 * missing `*-finish` with status 1, so that it still ends.
 */
#ifndef CAIRN_FLUX_RESYNC_H
#define CAIRN_FLUX_RESYNC_H

#include <stdbool.h>
#include <flux/core.h>
#include <jansson.h>

struct fctx;

/* cairnd is up: look for such jobs. */
void resync_run (struct fctx *ctx);

/* cairnd went away: drop every resync (the next resync_run starts over;
 * what was posted is in the eventlogs, so nothing is posted twice). */
void resync_cancel_all (struct fctx *ctx);

/* A shell's barrier request for job id, which has no start stream here:
 * if resync is on that job (or has just posted its prolog-finish), the
 * request is kept (returns true) until the job-manager's start request
 * follows; the shells cairnd starts when its prolog ends can get there
 * first. Returns false otherwise (the caller answers ENOENT). */
bool resync_park_barrier (struct fctx *ctx,
                          flux_jobid_t id,
                          uint32_t rank,
                          const flux_msg_t *msg);

/* The job's start stream exists now: give it the barrier requests kept
 * for it. */
void resync_hand_barriers (struct fctx *ctx, struct fjob *job);

/* Answer every kept barrier request with EIO (the module is unloading). */
void resync_drop_barriers (struct fctx *ctx);

/* What resync saw of job id's events in cairnd's stream, up to the
 * *-finish it posted ({name: count}, new reference), or NULL; forgotten
 * once taken. The job's eventlog in the KVS may not show those posts yet
 * when the job-manager's `start` request follows them, so fjob counts
 * an event as present if either says so. */
json_t *resync_take_seen (struct fctx *ctx, flux_jobid_t id);

#endif /* CAIRN_FLUX_RESYNC_H */
