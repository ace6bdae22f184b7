/* orphan.h - cairnd jobs whose ranks Flux no longer holds.
 *
 * Two ways a broker restart leaves cairnd working on ranks that Flux's
 * scheduler counts as free:
 *
 * - a job Flux lost entirely (submitted after the last KVS checkpoint):
 *   its eventlog is gone. cairnd is told to end it (a fatal `exec`
 *   exception: shells killed, epilog run).
 * - partial-release mode (fctx.partial): the job's final release went to
 *   the job-manager before its epilogs ended and cairn-flux-housekeeping
 *   held each rank, but Flux does not persist housekeeping (flux-core
 *   #6121 for stock housekeeping): the job is inactive and its helpers
 *   gone.
 *
 * Each time the module connects to cairnd, orphan asks the job-manager for
 * its housekeeping list, then cairnd for its active jobs (`list`), and
 * looks at those the module started (client FJOB_CLIENT) that have no
 * start stream here. Their unreleased, undrained ranks are drained in
 * Flux ("cairn: job ... still running (...)") and each is undrained when
 * cairnd releases it; a rank cairnd drained itself stays drained. Best
 * effort: the scheduler may place a job on such a rank in the moment
 * between the broker's start and the drain.
 */
#ifndef CAIRN_FLUX_ORPHAN_H
#define CAIRN_FLUX_ORPHAN_H

#include <stdbool.h>
#include <jansson.h>

struct fctx;

/* cairnd is up: look for such jobs. */
void orphan_run (struct fctx *ctx);

/* cairnd went away, or the module unloads: forget every watch (a drain
 * stays until the next orphan_run finds the job again or an operator
 * undrains it). */
void orphan_cancel_all (struct fctx *ctx);

#endif /* CAIRN_FLUX_ORPHAN_H */
