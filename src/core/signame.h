/* signame.h - signal names and numbers.
 *
 * Names are the kernel's ("SIGTERM"). Real-time signals are named relative
 * to SIGRTMIN ("SIGRTMIN", "SIGRTMIN+3"), because their numbers depend on
 * how many the C library keeps for itself. Numbers between the standard
 * signals and SIGRTMIN (32 and 33 with glibc) are reserved by the C library:
 * they have no name and are rejected, so every accepted signal can be
 * written back as a name.
 */
#ifndef CAIRN_SIGNAME_H
#define CAIRN_SIGNAME_H

#include <jansson.h>

#include "core/error.h"

/* Parse a signal given as a name with or without the "SIG" prefix, in any
 * case ("SIGTERM", "TERM", "sigterm"), as "SIGRTMIN+n" / "SIGRTMAX-n", or
 * as a decimal number ("15"). Returns 0 with *signum set, or -1 with
 * errno = EINVAL and a message in err (unknown name, number outside
 * 1..SIGRTMAX, reserved number). *signum is only written on success.
 */
int signame_parse (const char *s, int *signum, struct cairn_error *err);

/* Return the name of signum ("SIGTERM", "SIGRTMIN+2"): a constant string
 * from a static table, never to be freed. NULL if signum has no name
 * (0, negative, reserved, above SIGRTMAX).
 */
const char *signame_str (int signum);

/* Read a signal from JSON: a string as signame_parse(), or an integer in
 * 1..SIGRTMAX that has a name. Returns 0, or -1 with errno = EINVAL and a
 * message in err.
 */
int signame_parse_json (const json_t *o, int *signum, struct cairn_error *err);

#endif /* CAIRN_SIGNAME_H */
