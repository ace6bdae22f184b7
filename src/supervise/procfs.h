/* procfs.h - what the live system says about processes.
 *
 * Used when cairnd records a spawn (start time, boot id) and by the
 * reconciler after a restart. Every function takes the proc root (or a file
 * path) so tests can point it at a fake tree; NULL means the real one.
 */
#ifndef CAIRN_EXEC_PROCFS_H
#define CAIRN_EXEC_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Set *start to field 22 (starttime, clock ticks since boot) of
 * <procroot>/<pid>/stat. The line is parsed after its LAST ')' since the
 * command name may contain spaces and parentheses. procroot NULL = "/proc".
 * Returns 0, or -1 with errno: ENOENT or ESRCH (no such process, or it
 * vanished while being read), EINVAL (unparsable line), or the error of
 * open/read. */
int procfs_starttime (const char *procroot,
                      pid_t pid,
                      unsigned long long *start);

/* Read the boot id from path (NULL = /proc/sys/kernel/random/boot_id) into
 * buf, without the trailing newline. Returns 0, or -1 with errno: ERANGE
 * (buf too small), EINVAL (empty file), or the error of open/read. */
int procfs_bootid (const char *path, char *buf, size_t len);

/* Is pid a zombie that no supervisor will see through: its parent is not
 * a cairn-shim (init, a subreaper, a dead cairnd's heir), so no exit record
 * will come for it? 1 yes, 0 no (running, or its supervisor's zombie), -1
 * with errno (ENOENT: gone). */
int procfs_zombie_unsupervised (const char *procroot, pid_t pid);

/* Find the shim of execid among the live processes: scan <procroot>/<pid>
 * for processes owned by our effective uid whose environ holds exactly the
 * entry "CAIRN_EXECID=<execid>". The command and its descendants inherit
 * that entry, so among the matches pick the shim: a match whose parent is
 * not itself a match, then the oldest (smallest start time), then one named
 * "cairn-shim", then the lowest pid. Processes that vanish or cannot be
 * read during the scan are skipped. Used at restart only, for intents that
 * have no pid recorded.
 * Returns the pid, or -1 with errno: ENOENT (no match), EINVAL (execid not
 * canonical), ENOMEM, or the error of opening procroot. */
pid_t procfs_find_execid (const char *procroot, const char *execid);

/* Open a pidfd on pid FIRST, then check that <procroot>/<pid>/stat still
 * shows start time `start`: in that order a reused pid cannot slip through
 * (the pidfd pins the process the check then looks at).
 * Returns 0 and *pidfd (close-on-exec, the caller closes it) if pid is still
 * the process that was recorded; -1 with errno ESRCH if it is gone or the
 * pid now belongs to another process (no fd is left open); -1 with another
 * errno (EMFILE, EACCES, EINVAL...) if it could not be told, in which case
 * the caller must not conclude that the process is gone. */
int procfs_pidfd_verify (const char *procroot,
                         pid_t pid,
                         unsigned long long start,
                         int *pidfd);

/* Reap what cairnd inherits: it is a child subreaper, so a job's process
 * that leaves its command (double fork, setsid) comes to it when its
 * parent dies, and so does everything when it runs as a container's PID 1.
 * Reap each zombie child of ours (<procroot>/<self>/task/<self>/children)
 * that is not a cairn-shim (the supervisor; a shim is collected through
 * its pidfd, with its status) and for which keep (pid, arg) is false (a
 * command cairnd adopted from a dead supervisor, whose status it reads).
 * Returns how many were reaped, or -1 with errno (reading the list). */
int procfs_reap_strays (const char *procroot,
                        bool (*keep) (pid_t pid, void *arg),
                        void *arg);

/* Send signum to every process of ours (of any uid when we are root: a
 * root cairnd's commands run as their users) whose environment holds
 * CAIRN_EXECID=<execid>: what is left of a process whose shim was lost
 * (processes inherit the variable; one that rewrote its environment
 * escapes). Each is pinned with a pidfd and checked again before it is
 * signalled, so a recycled pid is never hit. Returns how many were
 * signalled, or -1 (EINVAL for a bad execid, or opendir's errno). */
int procfs_kill_execid (const char *procroot, const char *execid, int signum);

/* Send signum to every process of session sid but its leader, the
 * process of leader_pidfd (a command leads its session; a job shell's
 * tasks sit in groups of their own in it). Only while the leader has not
 * exited: then its pid, the session's id, cannot name another session.
 * Each process is pinned with a pidfd and checked again (its session, the
 * leader still there) before it is signalled. Returns how many were
 * signalled, or -1 with errno (EINVAL, or opendir's). */
int procfs_signal_session (const char *procroot,
                           pid_t sid,
                           int leader_pidfd,
                           int signum);

/* True if s is a canonical UUID: 36 characters, lowercase hex digits and
 * dashes in the 8-4-4-4-12 pattern. NULL is not. */
bool uuid_is_canonical (const char *s);

#endif /* CAIRN_EXEC_PROCFS_H */
