/* spawner.h - cairnd's supervisor: the one process that starts, watches
 * and sees through every command of the node.
 *
 * Why a separate process: a child made by fork, vfork or posix_spawn holds a
 * copy of its parent's descriptor table from the clone until its exec (or
 * its closefrom). If cairnd is SIGKILLed in that window, the copies of its
 * listening socket, journal and pidfds outlive it: a client can connect to a
 * socket nobody serves, and a lock held through a shared open file
 * description blocks the restart. So cairnd starts nothing itself: the
 * node's keeper (keeper.h), forked before any of those descriptors
 * existed, starts each supervisor, and the supervisor (which never holds
 * them) starts the commands.
 *
 * The supervisor is cairn-shim itself (`cairn-shim --spawner`,
 * shim/serve.c). It vforks each command and execs it (no process between
 * them: a command costs its own exec only, BENCHMARKS.md "Spawn path"),
 * caps its output, writes its exit record while it is a zombie, reaps it and
 * sends an ENDED message; cairnd gets a pidfd on the command with the
 * STARTED answer (SCM_RIGHTS), and signals the command's process group
 * through it. The wire is in spawner_proto.h.
 *
 * Lifetimes. The supervisor outlives cairnd: it starts nothing once
 * cairnd's end of the socket is closed, and exits when its last command is
 * seen through; a restarted cairnd starts a supervisor of its own and
 * waits for the old one's commands through their exit records. The commands
 * outlive the supervisor: the keeper, its parent and a subreaper, inherits
 * them if it dies and writes their exit records itself, whether cairnd
 * lives or not. Only the supervisor and the keeper both dying before a
 * command ends loses that command's status.
 *
 * Crash points: "spawner.clone.after" (after a command's start, before its
 * STARTED), "supervisor.exitfile.before" and "supervisor.reap.before" (a
 * command a zombie, before and after its exit record), and
 * "supervisor.session.kill" (its record written with processes of its
 * session left, before their kill: shim/cmd.h) in the supervisor;
 * "shim.drop.before" is counted there too and carried out by the
 * command's process (it kills cairnd). The fault point
 * "shim.exitfile.write" fails an exit record's write.
 */
#ifndef CAIRN_EXEC_SPAWNER_H
#define CAIRN_EXEC_SPAWNER_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/error.h"
#include "supervise/keeper.h"
#include "supervise/spawn.h"
#include "supervise/spawner_proto.h"

struct spawner;

/* Start a supervisor through the keeper k (keeper_supervisor): it keeps
 * only its socket and 0-2, and every command starts with 0-2 set up and
 * nothing else. It gets the keeper's environment, which is cairnd's at the
 * keeper's start (CAIRN_CRASH_AT and the like reach its crash points).
 * Environment read there, for tests only: CAIRN_TEST_SPAWN_HOLD=PATH makes
 * the supervisor, on each request before it looks at it, write its pid to
 * PATH.held and wait until PATH no longer exists: the worst of the window
 * between cairnd's request and the start, held open.
 * Returns the supervisor, or NULL with errno and err: EMFILE/ENFILE
 * (socket), or keeper_supervisor's error (EPIPE: the keeper is gone;
 * the fork's; the exec's: "supervisor: cannot run SHIM: ..."). Caller
 * destroys it with spawner_destroy(). */
struct spawner *spawner_create (struct keeper *k, struct cairn_error *err);

/* Start spec's command through the supervisor (spec->shim is only named
 * in errors; the rest is the shim command line of shim_proto.h). The
 * command gets spec->envp, default signal dispositions, an empty signal
 * mask, its own process group, stdin on /dev/null, stdout and stderr on
 * its output files and no other descriptor. On success set *pid and
 * *pidfd (a pidfd on the command, close-on-exec; the caller closes it; the
 * caller is not its parent) and, unless starttime is NULL, *starttime: its
 * start in clock ticks since boot as /proc/PID/stat's field 22 gives it,
 * or 0 when the supervisor's clock could not tell (spawner_proto.h); and
 * return 0. *pid 0 (and *pidfd -1) means nothing was started and the exit
 * file says why (a missing user, an output file that could not be made).
 * Its end comes later as an ENDED (spawner_ended).
 * Errors (-1, errno, err):
 *   EINVAL  bad spec (shim_spec_check)
 *   EEXIST  the execid was used already (its marker or exit file exists);
 *           nothing was touched ("its execid was used already")
 *   EPROTO  the supervisor could not read the request
 *   E2BIG   the command and environment exceed SPAWNER_MAX_REQUEST
 *   EPIPE   the supervisor is gone (crashed or killed). Nothing was
 *           started, or it died after the start and the command runs:
 *           the caller cannot tell until the supervisor is dead and the
 *           exit dir settled (exitdir_settle); then the command's marker
 *           says (procs_recover)
 *   another errno: the supervisor's (EAGAIN, ENOMEM: its vfork failed)
 *   whatever fault_inject ("exec.spawn") asks for (tests)
 */
int spawner_spawn (struct spawner *sp,
                   const struct shim_spec *spec,
                   pid_t *pid,
                   int *pidfd,
                   unsigned long long *starttime,
                   struct cairn_error *err);

/* Queue the request for spec without waiting for its answer; it goes to
 * the supervisor with the next spawner_send() or spawner_spawn(), or at
 * once when the queue reaches SPAWNER_BATCH_MAX bytes. Its STARTED comes
 * later through spawner_next(), in the order of the requests
 * (spawner_spawn's own answers excepted). cairnd queues a loop turn's
 * starts and sends them in one send() (issue 35: a send per start was a
 * tenth of its loop). The wire is a byte stream (spawner_proto.h): the
 * supervisor reads requests sent together exactly as ones sent apart.
 * Errors as spawner_spawn's that come before an answer: EINVAL, E2BIG,
 * ENOMEM, and EPIPE from a send of a full queue (then the requests queued
 * with it are lost with the supervisor, as spawner_send says). */
int spawner_request (struct spawner *sp,
                     const struct shim_spec *spec,
                     struct cairn_error *err);
#define SPAWNER_BATCH_MAX (64 * 1024)

/* Are requests queued, not sent yet? */
bool spawner_queued (const struct spawner *sp);

/* Send the queued requests. Returns 0 (also when none were queued), or -1
 * with errno and err: EPIPE when the supervisor is gone. Either way the
 * queue is empty after it: requests a dead supervisor never read are
 * among its unanswered ones, which the caller judges once it is dead and
 * the exit dir settled (procs_recover, procs_orphans_settle), as
 * it judges ones it read and died before starting. */
int spawner_send (struct spawner *sp, struct cairn_error *err);

/* The next message: a STARTED answering a spawner_request() (*fd its
 * pidfd, or -1), or an ENDED (*fd -1). Those read while spawner_spawn
 * waited come first. Never blocks. Returns 0, or -1 with errno EAGAIN
 * (none now; or, once, none at the last read, which found the socket
 * empty: msgread.h. Wait for spawner_sock() to be readable, level-
 * triggered, and call again), EPIPE (the supervisor is gone) or EPROTO (a
 * STARTED that answers nothing). */
int spawner_next (struct spawner *sp, struct spawner_msg *m, int *fd);

/* What a STARTED says, as spawner_spawn returns it: *pid, *pidfd (fd,
 * now the caller's) and *starttime (unless NULL), *pid 0 when nothing was
 * started and the exit record says why; or -1 with errno and err (fd
 * closed). what names the command in err. */
int spawner_started (const struct spawner_msg *m,
                     int fd,
                     const char *what,
                     pid_t *pid,
                     int *pidfd,
                     unsigned long long *starttime,
                     struct cairn_error *err);

/* spawner_next() for a caller that only uses spawner_spawn: the next
 * ENDED message into *m, a command the supervisor has seen through (its
 * exit record written, its process reaped), or could not (code 3). Never
 * blocks. Returns 0, or -1 with errno EAGAIN (none now, as for
 * spawner_next) or EPIPE (the supervisor is gone). */
int spawner_ended (struct spawner *sp, struct spawner_msg *m);

/* The socket to the supervisor: readable when an ENDED may be there. */
int spawner_sock (const struct spawner *sp);

/* A pidfd on the supervisor (readable when it has exited), so that the
 * caller can notice its death without waiting for the next spawn. */
int spawner_pidfd (const struct spawner *sp);

/* The supervisor's pid. */
pid_t spawner_pid (const struct spawner *sp);

/* Close the socket and free. The supervisor lives on until its commands
 * are seen through (it starts nothing more); its parent, the keeper,
 * reaps it. Accepts NULL; preserves errno. */
void spawner_destroy (struct spawner *sp);

#endif /* CAIRN_EXEC_SPAWNER_H */
