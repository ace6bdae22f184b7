/* orphan.h - ranks whose epilog outlived Flux's housekeeping.
 *
 * In partial-release mode (fctx.partial) a job's final release goes to the
 * job-manager before its epilogs end, and cairn-flux-housekeeping holds
 * each rank until cairnd releases it. Flux does not persist housekeeping:
 * after a restart of the rank-0 broker the job is inactive, its helpers
 * are gone, and the scheduler counts those ranks as free while cairnd's
 * epilog may still run on them (flux-core #6121 for stock housekeeping).
 *
 * Each time the module connects to cairnd in that mode, orphan asks
 * cairnd for its active jobs (`list`); a job that is past the shells,
 * still holds ranks in cairnd, is a Flux job of this instance past its
 * `free` event and is not in the job-manager's housekeeping list has
 * those ranks drained in Flux ("cairn: epilog of job ... still running"),
 * and each is undrained when cairnd releases it, unless cairnd drained it
 * itself. Best effort: the scheduler may place a job on such a rank in
 * the moment between the broker's start and the drain.
 */
#ifndef CAIRN_FLUX_ORPHAN_H
#define CAIRN_FLUX_ORPHAN_H

#include <stdbool.h>
#include <jansson.h>

struct fctx;

/* cairnd is up: look for such jobs (does nothing unless ctx->partial). */
void orphan_run (struct fctx *ctx);

/* A message from cairnd: true if it was orphan's (and was used). */
bool orphan_cairnd_message (struct fctx *ctx, const json_t *msg);

/* cairnd went away, or the module unloads: forget every watch (a drain
 * stays until the next orphan_run finds the job again or an operator
 * undrains it). */
void orphan_cancel_all (struct fctx *ctx);

#endif /* CAIRN_FLUX_ORPHAN_H */
