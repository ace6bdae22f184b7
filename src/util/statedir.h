/* statedir.h - where cairn keeps its state, found the same way by every
 * program (cairnd, cairn, the shim's callers, tests).
 *
 * The state directory holds the journal, the exit records and the socket
 * ("<statedir>/cairn.sock"), so the daemon and its clients must agree on
 * it without talking to each other first.
 */
#ifndef CAIRN_EXEC_STATEDIR_H
#define CAIRN_EXEC_STATEDIR_H

#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

/* The state directory of root (and of any uid 0 caller). */
#define STATEDIR_SYSTEM "/var/lib/cairn"

/* The socket's name inside the state directory. */
#define STATEDIR_SOCKET_NAME "cairn.sock"

/* Resolve the state directory, first match wins:
 *   1. opt (a --statedir option) if non-NULL;
 *   2. $CAIRN_STATEDIR if set and non-empty;
 *   3. cfg_statedir (the config file's "statedir") if non-NULL and
 *      non-empty;
 *   4. STATEDIR_SYSTEM when the effective uid is 0;
 *   5. $XDG_STATE_HOME/cairn if $XDG_STATE_HOME is an absolute path (the
 *      XDG spec says a relative one is to be ignored);
 *   6. $HOME/.local/state/cairn if $HOME is set and non-empty.
 * The path is returned as found (a relative opt stays relative) except
 * that trailing slashes are dropped ("/" stays "/"). Nothing is created or
 * checked on disk.
 * Returns a malloc'd path (caller frees), or NULL with errno set and err
 * filled: EINVAL (opt is ""), ENOENT (nothing matched: HOME unset),
 * ENOMEM.
 */
char *statedir_resolve (const char *opt,
                        const char *cfg_statedir,
                        struct cairn_error *err);

/* statedir_resolve() as if the effective uid were euid: step 4 applies
 * only when euid is 0. For tests, and for tools acting for another user.
 */
char *statedir_resolve_as (const char *opt,
                           const char *cfg_statedir,
                           uid_t euid,
                           struct cairn_error *err);

/* The socket path "<statedir>/cairn.sock" (no doubled '/' when statedir
 * ends in one). Returns a malloc'd string (caller frees), or NULL with
 * errno = EINVAL (statedir NULL or "") or ENOMEM.
 */
char *statedir_socket (const char *statedir);

/* s with each "%r" replaced by rank, in decimal (malloc'd), or NULL
 * (ENOMEM): the statedir=DIR of cairn-exec.so and cairn-flux-housekeeping
 * for brokers that share a host, each rank with its own cairnd. */
char *statedir_expand_rank (const char *s, uint32_t rank);

#endif /* CAIRN_EXEC_STATEDIR_H */
