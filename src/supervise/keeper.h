/* keeper.h - cairnd's side of the node's keeper (the program is
 * shim/keep.c, the wire exec/keeper_proto.h).
 *
 * The keeper is the one process cairnd forks: first thing, before the
 * lock, the journal, the socket or any pidfd exists. It is a child
 * subreaper and the parent of every supervisor (spawner.h), so that
 *   - a supervisor, the first or a replacement, starts from the keeper's
 *     small descriptor table: cairnd forks nothing once it holds
 *     descriptors a stray copy of which would outlive it (its listening
 *     socket, its lock);
 *   - the commands of a supervisor that dies go to the keeper, which
 *     appends each one's exit record to its marker when it ends, as the
 *     supervisor would have. cairnd never becomes their parent, so its own
 *     stop or crash costs no status: only the supervisor and the keeper
 *     both dying before a command ends loses that command's status.
 * The keeper outlives cairnd until its supervisors have exited and no
 * command it inherited still runs. A restarted cairnd starts a keeper of
 * its own.
 */
#ifndef CAIRN_EXEC_KEEPER_H
#define CAIRN_EXEC_KEEPER_H

#include <sys/types.h>

#include "core/error.h"

struct keeper;

/* Start the keeper: fork, then exec `shim --keeper 3 PID SHIM` (PID ours).
 * Call it before opening any descriptor that must not reach a command;
 * its child is killed with us until its exec. Keeps 0-2 taken (on
 * /dev/null if we were started with them closed), so that no descriptor
 * of ours lands there. Returns the keeper, or NULL with errno and err:
 * EMFILE/ENFILE (socket), EAGAIN/ENOMEM (fork), or the exec's error
 * ("keeper: cannot run SHIM: ..."). keeper_destroy() frees it. */
struct keeper *keeper_create (const char *shim, struct cairn_error *err);

/* Give the keeper the exit dir (a descriptor it duplicates), where it
 * finds the markers of inherited commands and appends their records.
 * Returns 0, or -1 with errno and err (EPIPE: the keeper is gone;
 * ETIMEDOUT: it did not answer in 10 s; its own error). */
int keeper_exitdir (struct keeper *k, int dirfd, struct cairn_error *err);

/* Ask the keeper for a new supervisor on sock (the supervisor's end of a
 * socketpair; the caller keeps and closes its own copy). Returns its pid
 * and sets *pidfd (close-on-exec, the caller's; we are not its parent), or
 * -1 with errno and err as keeper_exitdir, or the keeper's fork or exec
 * error ("cannot run SHIM: No such file or directory": ENOENT). */
pid_t keeper_supervisor (struct keeper *k,
                         int sock,
                         int *pidfd,
                         struct cairn_error *err);

/* The keeper's pid and a pidfd on it (readable once it died). */
pid_t keeper_pid (const struct keeper *k);
int keeper_pidfd (const struct keeper *k);

/* Close our end: the keeper goes on until its work is done, then exits.
 * A keeper that already died is reaped. NULL is fine; errno is kept. */
void keeper_destroy (struct keeper *k);

#endif /* CAIRN_EXEC_KEEPER_H */
