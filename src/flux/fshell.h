/* fshell.h - a Flux job's shells as job-exec watches them: their start
 * barrier, and what each one's end means (issue 37).
 *
 * flux-shell's leader (shell rank 0, on the job's first rank) waits for
 * every other shell, and every shell waits in two start barriers that
 * the module serves (job-exec.shell-barrier). cairnd tells the module of
 * each shell's end with a `shell-end` event on the job's stream (the
 * jobspec's shell-leader attribute asks for it; cairn-journal(5)). From
 * those the module does what job-exec does (flux-core bulkexec.c,
 * job-exec.c, barrier.c):
 *
 *   a shell killed by a signal, or lost, on shell rank > 0
 *       `lost-shell` to the leader (RPC <userid>-shell-<f58plain>.exception
 *       on its broker), severity 0 on a critical rank, else 2: the leader
 *       stops waiting for it (cairnd raises the job's exceptions itself)
 *   a shell's end while a start barrier waits
 *       every waiting shell (and any that enters later) gets EIO
 *   a shell's end before the first barrier is complete, no fatal
 *   exception before
 *       fatal: "HOST (rank R) terminated before first barrier"; for a
 *       job of another user than the instance's (multiuser) its rank is
 *       drained if it had not entered the barrier
 *   the first barrier not complete barrier-timeout after the first
 *   shell entered
 *       the ranks not in it drained ("job ID start timeout: possible
 *       node hang"), fatal: "start barrier timeout waiting for N/T nodes
 *       (ranks R)"
 *   the leader's end
 *       exec.eventlog `shell-exit` {rank, wait_status, active_ranks?};
 *       with shells still active, shell-exit-timeout later (unless a fatal
 *       exception came or they all ended) fatal: "job shells still active
 *       on HOSTS (ranks R) T after leader shell exit"
 *
 * Fatal exceptions go through the job's fatal callback (fjob.c: cairnd
 * journals them, stops the shells and sends them back on the stream).
 *
 * The timers live in the module only. A module reload loses them: a job
 * reattached after a reload was past its first barrier (else it is ended
 * as unrecoverable, fjob.c), so only the shell-exit timer matters; the
 * reattach replays the job's shell-end events, so the timer starts again,
 * for a full shell-exit-timeout, from the replayed leader's end.
 */
#ifndef CAIRN_FLUX_FSHELL_H
#define CAIRN_FLUX_FSHELL_H

#include <stdbool.h>
#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/shellconf.h"

struct fshell;

/* Answer a shell's NORESPONSE barrier request: success (errnum 0) lets it
 * go on, EIO makes it exit. */
void fshell_barrier_reply (flux_t *h, const flux_msg_t *req, int errnum);

/* End the job with a fatal exec exception with this note. */
typedef void (*fshell_fatal_f) (void *arg, const char *note);

/* The shells of job id (owner userid, f58 its F58 id) on broker ranks
 * ranks[0..n-1] (ascending; copied). recovered: the job was handed over
 * after a reload (its first barrier is past, or the job is ended anyway).
 * NULL with errno (ENOMEM). */
struct fshell *fshell_create (flux_t *h,
                              const struct shellconf *conf,
                              flux_jobid_t id,
                              uint32_t userid,
                              const char *f58,
                              const uint32_t *ranks,
                              size_t n,
                              bool recovered,
                              fshell_fatal_f fatal,
                              void *arg);

/* The job's own start-barrier timeout over conf's barrier-timeout:
 * seconds, 0 = none (jobspec attributes.system.exec.bulkexec.
 * barrier-timeout, which job-exec takes too). Before the first shell
 * enters. -1 with errno (ENOMEM). */
int fshell_set_barrier_timeout (struct fshell *fs, double seconds);

/* Answers every waiting shell with EIO; stops the timers. */
void fshell_destroy (struct fshell *fs);

/* The shells run on these ranks only (an idset string: R shrunk after a
 * tolerated prolog failure). -1 EINVAL if it cannot be read. */
int fshell_keep (struct fshell *fs, const char *ranks);

/* A shell's job-exec.shell-barrier request (NORESPONSE), from the shell
 * on broker rank `rank`: parked until every shell is in. */
void fshell_barrier (struct fshell *fs, const flux_msg_t *msg, uint32_t rank);

/* Answer every waiting shell: 0 lets it go on, EIO makes it exit. */
void fshell_release (struct fshell *fs, int errnum);

/* cairnd's shell-end event (its data). */
void fshell_end (struct fshell *fs, const json_t *data);

/* A fatal exception, or the job's finish: no more timers, no more
 * shell-exit fatal. */
void fshell_stop (struct fshell *fs);

/* The job was recovered and its exec.eventlog (text) already has a
 * shell-exit: it is not posted again. */
void fshell_recovered_log (struct fshell *fs, const char *log);

size_t fshell_nwaiting (const struct fshell *fs);
size_t fshell_count (const struct fshell *fs);

#endif /* CAIRN_FLUX_FSHELL_H */
