/* execconf.h - job-exec's settings, as a Flux site writes them, for
 * cairn-exec.so.
 *
 * A site configures job-exec in the broker's [exec] table, and the same
 * keys as module arguments (`flux module reload job-exec KEY=VALUE`, which
 * win over the table). Those that cairn has are given job-exec's meaning:
 *
 *   kill-timeout, max-kill-timeout, term-signal, kill-signal,
 *   max-kill-count, max-start-delay-percent
 *
 * become, for each job the module starts, its config in cairnd
 * (jobspec attributes.system.cairn.config = {"exec": {...}}, snapshotted
 * with the job), over cairnd's own cairn.conf values; a key the site did
 * not set stays cairnd's. They are checked at load with cairnd's own
 * rules, so an invalid one refuses the module, naming it.
 *
 * Refused at load, each with a line saying why, because they would not
 * mean what they mean in flux-config-exec(5): `imp` (cairnd runs each
 * job's shells as its user itself), `service` other than "rexec" (sdexec:
 * cairnd confines jobs with cgroup-parent), `method` (one method), and
 * Flux's own prolog and epilog: [job-manager.prolog] or
 * [job-manager.epilog] set, or the perilog.so jobtap plugin loaded (every
 * prolog and epilog would run twice, cairnd's and perilog's).
 * `job-shell` is the shell cairn runs (cairn_exec.c); other keys are
 * left to the parts of the module that use them.
 */
#ifndef CAIRN_FLUX_EXECCONF_H
#define CAIRN_FLUX_EXECCONF_H

#include <stddef.h>
#include <flux/core.h>
#include <jansson.h>

/* Is argv[i] one of the settings above (KEY=VALUE)? Then the module's
 * argument parser leaves it to execconf_load(). */
bool execconf_is_arg (const char *arg);

/* Read and check the settings (h's config, then args). Returns the
 * per-job config object ({"exec": {...}}, only what the site set; an
 * empty object when nothing), a new reference; or NULL with errno EINVAL
 * and every reason in err (lines joined by "; "), or ENOMEM. May ask the
 * job-manager (job-manager.jobtap) which plugins it has loaded. */
json_t *
execconf_load (flux_t *h, int argc, char **argv, char *err, size_t errsz);

/* cairnd's exec settings (its stats' "exec") with the site's over them:
 * what job-exec's stats fields show. New reference, or NULL. */
json_t *execconf_effective (const json_t *cairnd_exec, const json_t *over);

#endif /* CAIRN_FLUX_EXECCONF_H */
