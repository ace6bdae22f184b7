/* spawner.h - the process that starts every cairn-shim for cairnd.
 *
 * Why a separate process: a child made by fork, vfork or posix_spawn holds a
 * copy of its parent's descriptor table from the clone until its exec (or
 * its closefrom). If cairnd is SIGKILLed in that window, the copies of its
 * listening socket, journal and pidfds outlive it: a client can connect to a
 * socket nobody serves, and a lock held through a shared open file
 * description blocks the restart. cairnd therefore starts the spawner first
 * thing, before any of those descriptors exist, and the spawner (which never
 * holds them) clones the shims.
 *
 * The spawner is cairn-shim itself (`cairn-shim --spawner`, shim/serve.c),
 * and each shim is a clone of it that runs the shim's code without an
 * exec: a command costs the exec of the command only (BENCHMARKS.md,
 * "Spawn path"). Each shim is cloned with CLONE_PARENT, so
 * cairnd - not the spawner - is its parent and can reap it with
 * waitid(P_PIDFD), exactly as if cairnd had spawned it; its pidfd comes back
 * to cairnd over a unix socket (SCM_RIGHTS).
 *
 * A shim's process is set to die with cairnd until the shim itself takes
 * that back (its first act), and checks that cairnd is still there first:
 * a start that cairnd's death cut short never runs anything, so a
 * restarted cairnd may safely start an intent it finds no shim for. Once
 * past that check, a shim shows its execid in /proc/PID/environ
 * (spawner_proto.h), as an exec'd one did.
 *
 * The spawner dies with cairnd (PR_SET_PDEATHSIG, and EOF on its socket),
 * ignores the terminal's SIGINT/SIGTERM/SIGHUP (cairnd decides when to stop)
 * and is itself a crash point ("spawner.clone.after").
 */
#ifndef CAIRN_EXEC_SPAWNER_H
#define CAIRN_EXEC_SPAWNER_H

#include <sys/types.h>

#include "core/error.h"
#include "exec/spawn.h"
#include "exec/spawner_proto.h"

struct spawner;

/* Start the spawner: fork, then exec `shim --spawner 3`. Call it before
 * opening any descriptor that must not reach a command (cairnd's lock,
 * journal, socket, pidfds); the spawner keeps only its socket and 0-2, and
 * every shim starts with 0-2 on /dev/null and nothing else. The spawner
 * gets our environment (CAIRN_CRASH_AT and the like reach its crash point)
 * plus the execid slot.
 * Environment read here, for tests only: CAIRN_TEST_SPAWN_HOLD=PATH makes
 * each shim's process, right after its clone (before it ties its life to
 * cairnd's), write its pid to PATH.held and wait until PATH no longer
 * exists: the worst of the pre-exec window, held open.
 * Returns the spawner, or NULL with errno and err: EMFILE/ENFILE (socket),
 * EAGAIN/ENOMEM (fork), or the exec's error ("spawner: cannot run SHIM:
 * ..."). Caller destroys it with spawner_destroy(). */
struct spawner *spawner_create (const char *shim, struct cairn_error *err);

/* Spawn the shim for spec through the spawner. The shim gets spec->envp,
 * default signal dispositions, a new session, stdin, stdout and stderr on
 * /dev/null and no other file descriptor. Its signal mask blocks
 * shim_sigset() from the start, so a shim_signal() right after this returns
 * cannot kill it (the shim gives the command an empty mask). The caller's
 * process is the shim's parent. On success set *pid and *pidfd (a pidfd on
 * the shim, close-on-exec; the caller closes it) and, unless starttime is
 * NULL, *starttime: the shim's start in clock ticks since boot as
 * /proc/PID/stat's field 22 gives it, taken off the clock around the clone
 * (spawner_proto.h), or 0 when the clock could not tell; and return 0.
 * Errors (-1, errno, err):
 *   EINVAL  bad spec (shim_spec_check)
 *   EAGAIN, ENOMEM  the clone failed; nothing was started
 *   EPROTO  the spawner could not read the request
 *   E2BIG   the command and environment exceed SPAWNER_MAX_REQUEST
 *   EPIPE   the spawner is gone (crashed or killed). Nothing was started,
 *           or the spawner died after the clone and the shim runs: the
 *           caller cannot tell, so it must treat the execid as an intent
 *           with no pid, which only a restart's reconciliation resolves
 *   whatever fault_inject ("exec.spawn") asks for (tests)
 */
int spawner_spawn (struct spawner *sp,
                   const struct shim_spec *spec,
                   pid_t *pid,
                   int *pidfd,
                   unsigned long long *starttime,
                   struct cairn_error *err);

/* The next ENDED message (spawner_proto.h) into *m: a command the
 * supervisor has seen through (its exit file written, its process
 * reaped). Returns 0, or -1 with errno EAGAIN (none now) or EPIPE (the
 * supervisor is gone). SUPERVISOR BRANCH: work in progress. */
int spawner_ended (struct spawner *sp, struct spawner_msg *m);

/* The socket to the supervisor: readable when an ENDED may be there. */
int spawner_sock (const struct spawner *sp);

/* A pidfd on the spawner process (readable when it has exited), so that the
 * caller can notice its death without waiting for the next spawn. */
int spawner_pidfd (const struct spawner *sp);

/* The spawner's pid (for logs). */
pid_t spawner_pid (const struct spawner *sp);

/* Close the socket (the spawner exits on EOF), reap the spawner and free.
 * Accepts NULL; preserves errno. */
void spawner_destroy (struct spawner *sp);

#endif /* CAIRN_EXEC_SPAWNER_H */
