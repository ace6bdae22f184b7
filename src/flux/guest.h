/* guest.h - a job's guest KVS namespace, kept as Flux's job-exec keeps it.
 *
 * flux-shell writes its own events and output into namespace job-<id>, and
 * `flux run` / `flux job attach` read them through the symlink
 * job.<id>.guest, so both must exist before the shells start. At the end
 * the namespace is copied (grafted) to job.<id>.guest in the primary
 * namespace and removed, before the final release: job-info switches to
 * the copy then. exec.eventlog (RFC 50) is the exec system's own log there:
 * init and starting (or reattach), shell-exit (fshell.h), complete, done.
 *
 * Every call is asynchronous and returns a future (flux_future_get() gives
 * 0 or -1 with errno); the caller destroys it.
 */
#ifndef CAIRN_FLUX_GUEST_H
#define CAIRN_FLUX_GUEST_H

#include <stdbool.h>
#include <flux/core.h>
#include <jansson.h>

/* Create namespace job-<id> owned by userid; then, both at once, append
 * `init` and `starting` to its exec.eventlog (`reattach` when reattach is
 * true) and link job.<id>.guest to it. A namespace that already exists is
 * adopted (a module reload, or a start request sent again after the job-manager
 * restarted): its log goes on where it was. */
flux_future_t *guest_create (flux_t *h,
                             flux_jobid_t id,
                             uint32_t userid,
                             bool reattach);

/* Append one RFC 18 entry {timestamp, name, context?} to job-<id>'s
 * exec.eventlog. context may be NULL. */
flux_future_t *guest_post (flux_t *h,
                           flux_jobid_t id,
                           const char *name,
                           const json_t *context);

/* Append `done`, graft the namespace at job.<id>.guest, remove it. The
 * future is fulfilled when all three are done; an error in one step is
 * logged and does not stop the next (a job must be released whatever
 * happened); the future carries the last step's outcome. */
flux_future_t *guest_finish (flux_t *h, flux_jobid_t id);

#endif /* CAIRN_FLUX_GUEST_H */
