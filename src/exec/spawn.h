/* spawn.h - start, signal and reap cairn-shim processes from cairnd.
 *
 * cairnd never runs a command itself: it spawns cairn-shim (see
 * shim_proto.h), which runs the command and leaves its wait status in the
 * exit dir. cairnd then knows the shim only by its pidfd.
 */
#ifndef CAIRN_EXEC_SPAWN_H
#define CAIRN_EXEC_SPAWN_H

#include <sys/types.h>

#include "core/error.h"

struct shim_spec {
    const char *shim;    /* path of cairn-shim */
    const char *exitdir; /* <statedir>/exits */
    const char *execid;  /* canonical lowercase UUID */
    char *const *argv;   /* the command, NULL-terminated, argv[0] non-NULL */
    char *const *envp;   /* full environment of the command; it must contain
                          * CAIRN_EXECID=<execid> (the caller builds it) */
    const char *cwd;     /* working directory of the command, or NULL */
    size_t max_output;   /* keep at most this many bytes (plus one, the
                          * truncation mark) of each of the command's
                          * output files on disk; 0 = no cap */
};

/* Spawn the shim for spec with posix_spawn (glibc clones with CLONE_VM |
 * CLONE_VFORK: the daemon is not copied). The shim gets spec->envp,
 * default signal dispositions, a new session, stdin, stdout and stderr on
 * /dev/null and no other file descriptor (closed in the child whether or
 * not they are close-on-exec). Its signal mask blocks shim_sigset() from the
 * start, so a shim_signal() right after this returns cannot kill it (the
 * shim gives the command an empty mask). Then open a pidfd on it
 * (close-on-exec). On success set *pid and *pidfd (the caller closes it)
 * and return 0.
 * Errors (-1, errno, err):
 *   EINVAL  bad spec: missing field, execid not canonical, envp without
 *           CAIRN_EXECID=<execid> (the shim would write under another name)
 *   ENOENT, EACCES, EAGAIN, ENOMEM, ...  from posix_spawn; the message
 *           names the shim path
 *   EMFILE, ENFILE, ENOMEM  from pidfd_open: the shim is then killed and
 *           reaped, but it may already have started the command (check
 *           exitfile_started() before running the execid again)
 *   whatever fault_inject ("exec.spawn") asks for (tests)
 */
int shim_spawn (const struct shim_spec *spec,
                pid_t *pid,
                int *pidfd,
                struct cairn_error *err);

/* Ask the shim behind pidfd to send signum (1..NSIG-1, any signal including
 * SIGKILL and SIGSTOP) to its command's process group, by sending it
 * SHIM_RELAY_SIGNAL with the value attached. Returns 0, or -1 with errno:
 * EINVAL (bad signum), ESRCH (the shim is gone), EPERM, EBADF. */
int shim_signal (int pidfd, int signum);

/* Reap the shim behind pidfd if it has exited, without blocking.
 * Returns 0 and sets *status to the shim's own wait status (0 when it
 * wrote the exit file; see shim_proto.h), or -1 with errno:
 *   EAGAIN  still running
 *   ECHILD  not our child (after a cairnd restart the shim is adopted by
 *           init or a subreaper: watch the pidfd, then read the exit file)
 *           or already reaped
 *   EBADF, EINVAL  not a pidfd */
int shim_reap (int pidfd, int *status);

#endif /* CAIRN_EXEC_SPAWN_H */
