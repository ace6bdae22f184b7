/* fjob.h - one Flux job relayed between the job-manager and cairnd.
 *
 * The job-manager's `start` request (RFC 32) becomes a cairnd `start` whose
 * jobspec runs Flux's own flux-shell on every rank, each with the FLUX_URI
 * of its own broker, after the guest namespace exists. cairnd's responses
 * come back on that stream, with the prolog, epilog and drain events
 * (`events: true`), and are turned into what Flux expects, one at a time
 * and in order:
 *
 *   start, exception, finish    the same start-stream responses
 *   release (not final)         the same (the job-manager only logs it)
 *   release (final)             exec.eventlog `done`, guest namespace
 *                               grafted and removed, then the final release
 *                               (in partial-release mode, fctx.partial: at
 *                               `finish` already; epilog-* not posted)
 *   prolog-*, epilog-*          posted to the job's eventlog
 *                               (job-manager.post-event), with perilog's
 *                               descriptions
 *   drain                       resource.drain, answered before going on
 *   hold                        the job's R shrunk in the KVS to the ranks
 *                               that run (shrink.h), then `resume`
 *   shell-end                   what job-exec does at a shell's end
 *                               (fshell.h): lost-shell to the leader
 *                               shell, exec.eventlog shell-exit, timers
 *
 * The module asks for shell-end with the jobspec's shell-leader. cairnd
 * decides it in its core, journaled with the shell's end, rather than
 * the module deriving it from proc-exit: a replay (a reattach after a
 * reload, `since` counting) must give the same sequence, and only the
 * journal's fold knows which process was which rank's shell.
 *
 * cairnd journals everything before it answers, so when the connection to
 * it breaks the job just reattaches (`since` = what was received) once it
 * is back: nothing is lost or sent twice.
 */
#ifndef CAIRN_FLUX_FJOB_H
#define CAIRN_FLUX_FJOB_H

#include <stdbool.h>
#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

struct fctx;
struct fjob;

/* attributes.system.cairn.client of the jobs the module starts: how it
 * tells them from other clients' in cairnd's `list` (orphan.h). One cairnd
 * serves one Flux instance. */
#define FJOB_CLIENT "flux"

struct fjob_ops; /* what the module lends a job (fctx.h) */

/* Take the job-manager's start request (payload already unpacked into
 * id, userid, jobspec, R, reattach; msg is kept until the final release).
 * ops (copied) and arg are the module's (fjob_ops). Returns the job, or
 * NULL with errno (ENOMEM). The caller keeps it (fjobs.h) until
 * ops->released. */
struct fjob *fjob_create (struct fctx *ctx,
                          const struct fjob_ops *ops,
                          void *arg,
                          const flux_msg_t *msg,
                          flux_jobid_t id,
                          uint32_t userid,
                          json_t *jobspec,
                          json_t *R,
                          bool reattach);

/* Begin: guest namespace, broker URIs, then the cairnd request. */
void fjob_begin (struct fjob *job);

void fjob_destroy (struct fjob *job);

flux_jobid_t fjob_id (const struct fjob *job);
uint32_t fjob_userid (const struct fjob *job);

/* cairnd is back (reattach the stream) or gone (wait). */
void fjob_cairnd_state (struct fjob *job, bool up);

/* The job-exception event (a cancel, a timeout raised by the
 * job-manager...): pass it on to cairnd. */
void fjob_exception (struct fjob *job,
                     const char *type,
                     int severity,
                     int wait_status);

/* job-exec.shell-barrier from the shell on broker rank `rank`. */
void fjob_barrier (struct fjob *job, const flux_msg_t *msg, uint32_t rank);

/* The broker ranks of shell ranks `shell_ranks` (an idset string of
 * indices into the job's shells, as flux-shell and a sub-instance's
 * job-exec.critical-ranks count them: the i-th lowest broker rank that runs
 * a shell, after a shrink the i-th of those kept). Returns a new idset
 * string (caller frees), or NULL with errno EINVAL and a message in err
 * (a malformed idset or an index past the last shell), or ENOMEM. */
char *fjob_broker_ranks (const struct fjob *job,
                         const char *shell_ranks,
                         char *err,
                         size_t errsz);

/* job-exec.expiration and job-exec.critical-ranks: relay to cairnd and
 * answer msg with cairnd's answer. */
void fjob_relay_request (struct fjob *job,
                         const char *topic,
                         const flux_msg_t *msg,
                         json_t *payload);

/* What `flux module stats` shows of the job. New reference. */
json_t *fjob_stats (const struct fjob *job);

#endif /* CAIRN_FLUX_FJOB_H */
