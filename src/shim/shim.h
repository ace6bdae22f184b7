/* shim.h - the two faces of the cairn-shim program.
 *
 * cairn-shim runs one command (shim_main, the contract in
 * exec/shim_proto.h). Started as `cairn-shim --spawner FD` it is instead
 * cairnd's spawner (shim_serve, the wire in exec/spawner_proto.h): it
 * forks a shim per request that runs shim_main without an exec, so that a
 * command costs one exec (its own), not two.
 */
#ifndef CAIRN_SHIM_H
#define CAIRN_SHIM_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Run the command of argv (a shim's argv, argv[0] its name) with the
 * environment `environ`, supervise it, write its exit record. Returns the
 * shim's exit code (shim_proto.h). */
int shim_main (int argc, char *argv[]);

/* For the crash harness only: when > 0, the command's process SIGKILLs
 * this pid (cairnd) right after making its start marker, before it joins
 * its cgroup and drops to --user: the crash point "shim.drop.before",
 * counted by the supervisor at each start and carried out by the
 * command's process (serve.c). One per thread: each of the supervisor's
 * workers starts its own commands. */
extern _Thread_local pid_t shim_kill_at_drop;

/* `cairn-shim --drop ...`: a command's last steps as its user, after the
 * exec that frees the supervisor's vfork (shim/drop.c says why and
 * what its argv and environment hold). Returns only on a usage error
 * before anything ran. */
int shim_drop_main (int argc, char *argv[]);

/* The byte before each entry of `cairn-shim --drop`'s environment, so
 * that no libc reads any of them as a variable (drop.c). */
#define SHIM_DROP_ENV_MARK '\x01'

/* Give every signal but SIGKILL and SIGSTOP the default disposition, the
 * two glibc keeps for itself included (its sigaction() refuses them, yet
 * its posix_spawn() leaves them ignored in the process it starts: the raw
 * system call resets them). System calls only: safe in a vfork child. */
void shim_signals_default (void);

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

/* Supervise the commands cairnd (pid cairnd, which the crash point
 * "shim.drop.before" kills) asks for on sock (shim/serve.c,
 * exec/spawner_proto.h), telling the keeper on keeper (or -1: none) of
 * each command's output pipes (supervise/keeper_proto.h). Once cairnd's end is closed, start nothing more
 * and exit when the last command has been seen through. Never returns:
 * exits 0 then, 1 on a broken request stream or a failed setup. */
void shim_serve (int sock, pid_t cairnd, int keeper)
    __attribute__ ((noreturn));

/* Keep the node (shim/keep.c, exec/keeper_proto.h): answer cairnd's
 * requests on sock, starting each supervisor as `shim --spawner 3 CAIRND`;
 * see each inherited command of a dead supervisor through (its exit
 * record appended to its marker). Once cairnd's end is closed, exit when
 * no supervisor and no inherited command is left. Never returns: exits 0
 * then (at once if cairnd, whose pid is cairnd, is already gone), 1 on a
 * failed setup. */
void shim_keep (int sock, pid_t cairnd, const char *shim)
    __attribute__ ((noreturn));

/* Field 22 of /proc/PID/stat into *ticks: pid's start in clock ticks
 * since boot. 0, or -1 (no such process, or a line not understood). */
int shim_start_ticks (pid_t pid, unsigned long long *ticks);

/* Count the live processes (zombies aside) of session sid other than its
 * leader, sending each sig unless sig is 0 (session.c). The caller holds
 * the leader, the command's process, unreaped, so that sid names the
 * command's session and no other. Returns the count, or -1 when /proc
 * cannot be read. */
int shim_session_left (pid_t sid, int sig);

/* False when session sid (its leader, a zombie of ours, just ended) can
 * have no other live process: none of our parent's (the keeper's)
 * children, where the leader's live children went, is in it (session.c
 * says what this misses). True when some may be, or it cannot tell: then
 * shim_session_left looks through /proc. */
bool shim_session_maybe (pid_t sid);

/* How many 5 ms looks shim_session_drain takes at most (2 s in all, as
 * long as a cgroup's removal waits). */
#define SHIM_DRAIN_TRIES 400

/* True if pid (a zombie of ours, so its pid cannot be reused) leads a
 * session of its own. */
bool shim_session_leader (pid_t pid);

/* SIGKILL what is left of session sid (its leader's group too) until
 * none is left, looking every 5 ms, at most tries times (the leader held
 * unreaped, as above). Returns how many were still there at the last
 * look: 0 once the session is empty. */
int shim_session_drain (pid_t sid, int tries);

/* After the leader of session sid was reaped, with processes of the
 * session left: SIGKILL them again and count them (shim_session_left).
 * Their ids hold sid taken, so a live process whose pid is sid means the
 * session emptied and the pid was reused: 0 then. */
int shim_session_linger (pid_t sid);

#endif /* CAIRN_SHIM_H */
