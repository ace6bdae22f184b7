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
 * An invalid value is refused with job-exec's message ("invalid
 * kill-timeout: 1f", "invalid max-kill-count=-1"), cairnd's reason after
 * it. Refused as well, each with a line saying why, because they would
 * not mean what they mean in flux-config-exec(5): `service` other than
 * "rexec" (sdexec: cairnd confines jobs with cgroup-parent), a `method`
 * other than "bulk-exec" (job-exec's way of running shells, the one
 * cairn's stands for), and, at load, Flux's own prolog and epilog:
 * [job-manager.prolog] or [job-manager.epilog] set, or the perilog.so
 * jobtap plugin loaded (every prolog and epilog would run twice, cairnd's
 * and perilog's). `job-shell`, `imp` and the shells' timeouts are
 * shellconf.h's.
 */
#ifndef CAIRN_FLUX_EXECCONF_H
#define CAIRN_FLUX_EXECCONF_H

#include <stddef.h>
#include <flux/core.h>
#include <jansson.h>

/* Is argv[i] one of the settings above (KEY=VALUE)? Then the module's
 * argument parser leaves it to execconf_load(). */
bool execconf_is_arg (const char *arg);

/* Read and check the settings (conf, then args; conf may be NULL).
 * Returns the per-job config object ({"exec": {...}}, only what the site
 * set; an empty object when nothing), a new reference; or NULL with
 * errno EINVAL and every reason in err (joined by "; "), or ENOMEM. With
 * perilog (at load), also refuses Flux's own prolog and epilog, asking
 * the job-manager (job-manager.jobtap) which plugins it has loaded. */
json_t *execconf_load (flux_t *h,
                       const flux_conf_t *conf,
                       bool perilog,
                       int argc,
                       char **argv,
                       char *err,
                       size_t errsz);

/* cairnd's exec settings (its stats' "exec") with the site's over them:
 * what job-exec's stats fields show. New reference, or NULL. */
json_t *execconf_effective (const json_t *cairnd_exec, const json_t *over);

#endif /* CAIRN_FLUX_EXECCONF_H */
