/* cmd.h - one command under cairn-shim's supervision: its arguments, its
 * start, the cap on its output files, its end and its exit record, as
 * exec/shim_proto.h describes them. shim_main (cairn-shim.c) runs one
 * command through it; the calls are per command and keep no state of
 * their own, so that one process may supervise several.
 *
 * The life of a command:
 *   shim_cmd_parse -> shim_cmd_opendir -> shim_cmd_used? -> shim_cmd_start
 *   -> (shim_cmd_relay, shim_cmd_cap)* -> its process exits (unreaped)
 *   -> shim_cmd_exited -> shim_cmd_finish -> shim_cmd_drain (if processes
 *   were left) -> reap it -> shim_cmd_free (the supervisor), or
 *   shim_cmd_exited -> shim_cmd_drain -> reap -> shim_cmd_finish (a shim
 *   run by hand, which has no keeper behind it)
 * A start that fails (-1) goes straight to shim_cmd_finish with
 * SHIM_STATUS_NOEXEC.
 */
#ifndef CAIRN_SHIM_CMD_H
#define CAIRN_SHIM_CMD_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct shim;

/* When an output cap is first applied after the start (shim_cmd_cap). */
#define SHIM_CAP_FIRST_NS (100LL * 1000 * 1000)

/* ---- how each command's process starts ----
 * One setting per process (per thread for the crash point), kept here
 * with the start that reads them; the supervisor (serve.c) sets them
 * before its first start, a lone shim leaves them as they are. */

/* Set by the supervisor (serve.c) for every command it starts: it has
 * default dispositions, exactly shim_sigset() blocked, its own session and
 * 0-2 on /dev/null already, so a command's process does not set them up
 * again; and a command outlives its supervisor (no death signal: the
 * keeper, a subreaper, inherits it). False in an exec'd shim, which may start
 * from anything and whose command dies with it. */
extern bool shim_fresh;

/* The descriptor limit each command's process starts with: the
 * supervisor raises its own to hold two pipes per live command (serve.c)
 * and its commands take this one back. rlim_cur RLIM_INFINITY: nothing
 * to take back. */
extern struct rlimit shim_nofile;

/* For the crash harness only: when > 0, the command's process SIGKILLs
 * this pid (cairnd) right after making its start marker, before it joins
 * its cgroup and drops to --user: the crash point "shim.drop.before",
 * counted by the supervisor at each start and carried out by the
 * command's process (serve.c). One per thread: each of the supervisor's
 * workers starts its own commands. */
extern _Thread_local pid_t shim_kill_at_drop;

/* Give every signal but SIGKILL and SIGSTOP the default disposition, the
 * two glibc keeps for itself included (its sigaction() refuses them, yet
 * its posix_spawn() leaves them ignored in the process it starts: the raw
 * system call resets them). System calls only: safe in a vfork child. */
void shim_signals_default (void);

/* Once per process, before any start: open our own executable (for the
 * commands that run as a user: drop.c). Returns 0, or -1 with errno (then
 * --user commands fail to start, saying so). */
int shim_cmd_init (void);

/* Parse a shim's argv (argv[0] its name; shim_proto.h) for the command of
 * execid. Returns the command, or NULL with errno: EINVAL, a usage error
 * (said on stderr; exit code 2), or ENOMEM. */
struct shim *shim_cmd_parse (int argc, char *argv[], const char *execid);

/* Open --exitdir. Returns 0, or -1 (said on stderr; exit code 3). */
int shim_cmd_opendir (struct shim *s);

/* The exit dir opened by shim_cmd_opendir (ours: do not close it), or -1. */
int shim_cmd_dirfd (const struct shim *s);

/* True if the execid was used already: its marker or exit file exists
 * (said on stderr; exit code 4). Touch nothing of it then. */
bool shim_cmd_used (struct shim *s);

/* Start the command with envp (NULL: environ as it is at the exec),
 * looked up in envp's PATH (shim_proto.h), in a session and process group
 * of its own. The caller blocks the signals it waits for; the command's
 * process starts with none blocked and default dispositions. Returns 0 when a
 * process was made (shim_cmd_pid; it may still have failed before its exec: the
 * exit file will say), or -1 when nothing was started (the reason goes into the
 * exit record). */
int shim_cmd_start (struct shim *s, char **envp);

/* The command's process (its process group and session too), or 0. */
pid_t shim_cmd_pid (const struct shim *s);

/* Send sig to the command's process group (to the process itself if it
 * left the group); a SIGKILL also kills its cgroup. */
void shim_cmd_relay (struct shim *s, int sig);

/* True if the output files are capped (--max-output). */
bool shim_cmd_capped (const struct shim *s);

/* Before shim_cmd_start, under the supervisor: make the pipes the
 * command will write into instead of its output files (cmd.c says why;
 * the start still makes the files, empty); the command gets their write
 * ends on 1 and 2. Without this call the
 * command writes its files itself (a lone shim), and shim_cmd_capped says
 * they are cut on a timer. 0, or -1 with s's error set (the start is then
 * to be finished as failed: shim_cmd_finish). */
int shim_cmd_pipes (struct shim *s);

/* --max-output: the cap, or 0 for none. */
unsigned long long shim_cmd_max_output (const struct shim *s);

/* The supervisor's end of the command's stdout (stream 0) or stderr (1)
 * pipe, non-blocking, or -1 (none made, or closed by
 * shim_cmd_pipe_close). */
int shim_cmd_pipe (const struct shim *s, int stream);

/* Read what the pipe of stream holds (a few pipefuls at most) into its
 * output file, keeping at most the cap + 1 bytes there and dropping the
 * rest (outpipe.h). An enum outpipe_state: at OUTPIPE_END (every writer
 * gone, an error, or no pipe) close it (shim_cmd_pipe_close). */
int shim_cmd_pipe_drain (struct shim *s, int stream);

/* Close the pipe of stream (its last writer's next write gets SIGPIPE or
 * EPIPE, unless another process holds a read end too). */
void shim_cmd_pipe_close (struct shim *s, int stream);

/* Cut the output files back to the cap. wait_ns is the interval that led
 * here; returns the next one: shorter while the command writes past the
 * cap, doubling up to 30 s while it does not. */
long long shim_cmd_cap (struct shim *s, long long wait_ns);

/* The command's process has exited and is not reaped yet (its pid, the
 * group's and the session's id, cannot be reused): count what is left of
 * its session (shim_cmd_leftover). None left: kill what is left of its
 * group and cgroup. Some left: nothing is killed yet, so that the record
 * can say how many first (shim_cmd_finish, then shim_cmd_drain). */
void shim_cmd_exited (struct shim *s);

/* How many processes of the command's session were still there when its
 * process ended (shim_cmd_exited); the record's "leftover". */
int shim_cmd_leftover (const struct shim *s);

/* The exit record shim_cmd_finish wrote, when it wrote one with no
 * "error" (not one cairn-shim --drop left): its status, output sizes (-1:
 * not said) and leftover. False otherwise: the record is to be read. */
bool shim_cmd_record (const struct shim *s,
                      int *status,
                      long long *out_size,
                      long long *err_size,
                      int *leftover);

/* With processes left (shim_cmd_leftover > 0), the process still unreaped:
 * SIGKILL the session (group and cgroup too) until it is empty, at most
 * SHIM_DRAIN_TRIES looks, and remove the cgroup. Returns how many
 * survived (said on stderr), 0 when none. */
int shim_cmd_drain (struct shim *s);

/* Cut the output files a last time, remove the cgroup (not yet when
 * processes were left and shim_cmd_drain has not run) and write the exit
 * record with status (and "leftover"). Returns 0, or -1 (said on stderr;
 * exit code 3). */
int shim_cmd_finish (struct shim *s, int status);

/* Close and free. Accepts NULL. */
void shim_cmd_free (struct shim *s);

#endif /* CAIRN_SHIM_CMD_H */
