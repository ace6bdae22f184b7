/* shellconf.h - the keys of the broker's [exec] table for the job shells'
 * watch (fshell.h), with Flux's job-exec defaults (flux-config-exec(5)):
 *
 *   barrier-timeout     FSD, default "30m": how long the shells that
 *                       entered the first start barrier wait for the
 *                       others; 0 waits for ever
 *   shell-exit-timeout  FSD or "none", default "30s": how long shells may
 *                       outlive the leader shell; "none" or 0 waits for
 *                       ever
 *
 * The kill settings of [exec] are execconf.h's.
 */
#ifndef CAIRN_FLUX_SHELLCONF_H
#define CAIRN_FLUX_SHELLCONF_H

#include <flux/core.h>

struct shellconf {
    double barrier_timeout;    /* seconds, 0 = none */
    double shell_exit_timeout; /* seconds, 0 = none */
};

#define SHELLCONF_BARRIER_TIMEOUT 1800.
#define SHELLCONF_SHELL_EXIT_TIMEOUT 30.

/* Read [exec] of h's config into ec. Returns 0, or -1 with a message
 * naming the key in err ("[exec] barrier-timeout: invalid duration
 * \"soon\": ...", "[exec] shell-exit-timeout: not a string"): an
 * invalid value is refused, never replaced by the default. */
int shellconf_read (flux_t *h, struct shellconf *ec, char *err, size_t len);

#endif /* CAIRN_FLUX_SHELLCONF_H */
