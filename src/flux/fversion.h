/* fversion.h - the flux-core cairn-exec.so was built for, against the one
 * that loads it.
 *
 * The module uses flux-core's internal interfaces (job-exec's protocol,
 * the job-manager's events, the resource module's), which change between
 * versions without notice: it loads only into the flux-core it was built
 * against (README, "Flux versions"), and says so otherwise rather than
 * misbehave. Pure: no Flux needed (unit/t_fversion).
 */
#ifndef CAIRN_FVERSION_H
#define CAIRN_FVERSION_H

#include <stddef.h>

/* 0 when running (flux_core_version_string() of the broker) is built
 * (FLUX_CORE_VERSION_STRING at build time); else -1 with a message naming
 * both in buf. */
int fversion_check (const char *built,
                    const char *running,
                    char *buf,
                    size_t len);

#endif /* CAIRN_FVERSION_H */
