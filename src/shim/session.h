/* session.h - what is left of a command's session once its process has
 * ended: count it, kill it, drain it (session.c says how, and why a pid
 * cannot be taken for another's meanwhile). cmd.c asks it at each
 * command's end; the keeper (keep.c) for the commands it inherits.
 */
#ifndef CAIRN_SHIM_SESSION_H
#define CAIRN_SHIM_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

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

#endif /* CAIRN_SHIM_SESSION_H */
