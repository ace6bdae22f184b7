/* shellconf.h - the keys of job-exec's settings that cairn-exec.so itself
 * uses (flux-config-exec(5)), from the broker's [exec] table and from the
 * module's arguments (KEY=VALUE, which win over the table), with Flux's
 * job-exec defaults and job-exec's messages:
 *
 *   barrier-timeout     FSD, default "30m": how long the shells that
 *                       entered the first start barrier wait for the
 *                       others; 0 waits for ever
 *   shell-exit-timeout  FSD or "none", default "30s": how long shells may
 *                       outlive the leader shell; "none" or 0 waits for
 *                       ever
 *   job-shell           the shell a job runs unless its jobspec names one
 *                       (default: Flux's own flux-shell)
 *   imp                 the site's IMP: shown in the stats only, since
 *                       cairnd runs shells through the IMP its own
 *                       cairn.conf names (cairn-exec(8))
 *
 * The kill settings of [exec] are execconf.h's.
 */
#ifndef CAIRN_FLUX_SHELLCONF_H
#define CAIRN_FLUX_SHELLCONF_H

#include <flux/core.h>
#include <jansson.h>

struct shellconf {
    double barrier_timeout;    /* seconds, 0 = none */
    double shell_exit_timeout; /* seconds, 0 = none */
    char *job_shell;           /* never NULL once read */
    char *imp;                 /* NULL when not set */
};

#define SHELLCONF_BARRIER_TIMEOUT 1800.
#define SHELLCONF_SHELL_EXIT_TIMEOUT 30.

/* Is arg one of the keys above (KEY=VALUE)? */
bool shellconf_is_arg (const char *arg);

/* Read the settings of conf, then args, into sc (whose strings it owns:
 * shellconf_clear). Returns 0; or -1 with sc untouched and job-exec's
 * message in err ("invalid shell-exit-timeout: soon", "error reading
 * config value exec.job-shell: ...", "invalid duration '55p' specified
 * for exec.barrier-timeout"), errno EINVAL; or ENOMEM. An invalid value
 * is refused, never replaced by the default. */
int shellconf_read (const flux_conf_t *conf,
                    int argc,
                    char **argv,
                    struct shellconf *sc,
                    char *err,
                    size_t len);

void shellconf_clear (struct shellconf *sc);

/* job-exec's stats "config" fields that these settings are:
 * default_job_shell, flux_imp_path (when set), default_barrier_timeout,
 * shell_exit_timeout. New reference, or NULL. */
json_t *shellconf_stats (const struct shellconf *sc);

#endif /* CAIRN_FLUX_SHELLCONF_H */
