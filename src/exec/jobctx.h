/* jobctx.h - what the job state machine is told of the world at each
 * decision (core/job.h's struct job_ctx): the time, the daemon's owner,
 * whether a uid is a known user, a fresh execid, whether a job's client
 * is away.
 *
 * Execids are random (version 4) UUIDs from a pool of getrandom() bytes
 * that this room owns; whether a job's client is away is the streams'
 * owner's to say (its ops).
 */
#ifndef CAIRN_JOBCTX_H
#define CAIRN_JOBCTX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct job_ctx; /* core/job.h */
struct jobctx;

struct jobctx_ops {
    /* Does no stream that asked for job id's events follow it (its
     * client, the Flux module, is away: a broker restart, a reload)? */
    bool (*client_away) (void *arg, uint64_t id);
};

/* The context of a daemon run by uid (root: multiuser). NULL with errno
 * ENOMEM. */
struct jobctx *
jobctx_create (uid_t uid, const struct jobctx_ops *ops, void *arg);

/* NULL is fine; errno is kept. */
void jobctx_destroy (struct jobctx *x);

/* Fill ctx for a decision now; valid while x lives. */
void jobctx_fill (struct jobctx *x, struct job_ctx *ctx);

/* The jobs' clock: wall time, epoch seconds (job_ctx.now). */
double jobctx_now (void);

#endif /* CAIRN_JOBCTX_H */
