/* spawn.h - describe, signal and reap cairn-shim processes from cairnd.
 *
 * cairnd never runs a command itself: it has cairn-shim (see shim_proto.h)
 * started by the spawner (spawner.h); the shim runs the command and leaves
 * its wait status in the exit dir. cairnd then knows the shim only by its
 * pidfd.
 */
#ifndef CAIRN_EXEC_SPAWN_H
#define CAIRN_EXEC_SPAWN_H

#include <stdbool.h>
#include <sys/resource.h>
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
    const char *home;    /* without cwd: the directory to start in, or /
                          * when the command's user cannot enter it
                          * (--home); NULL: neither, the shim's own */
    size_t max_output;   /* keep at most this many bytes (plus one, the
                          * truncation mark) of each of the command's
                          * output files on disk; 0 = no cap */
    bool as_user;        /* run the command as uid (the shim stays root,
                          * and must be root unless uid is its own);
                          * false (a zeroed spec) = as the shim's user */
    uid_t uid;           /* the command's user, if as_user */
    const gid_t *groups; /* with as_user: the user's groups, the primary
                          * one first (--groups), as cairnd resolved them;
                          * ngroups 0: the shim reads /etc/passwd and
                          * /etc/group itself */
    size_t ngroups;
    bool rlimits;        /* cap the command's RLIMIT_NOFILE and
                          * RLIMIT_NPROC at nofile and nproc (--rlimit) */
    struct rlimit nofile, nproc;
    const char *cgroup;  /* the command's own cgroup v2 directory (made
                          * and removed by the shim, --cgroup), or NULL */
    int pids_max;        /* with cgroup: its pids.max, or 0 (none) */
    size_t memory_max;   /* with cgroup: its memory.max in bytes, or 0 */
};

/* Check spec for spawner_spawn() (spawner.h). Returns 0, or -1 with errno
 * and err: EINVAL  missing field, execid not canonical, or envp without
 * CAIRN_EXECID=<execid> (the shim would write under another name). */
int shim_spec_check (const struct shim_spec *spec, struct cairn_error *err);

/* The shim's argv for spec: shim --exitdir DIR [--cwd DIR | --home DIR]
 * [--max-output N] [--rlimit nofile=S:H --rlimit nproc=S:H]
 * [--user UID] [--cgroup DIR [--cgroup-limit pids.max=N]
 * [--cgroup-limit memory.max=N]] -- command...  The strings are borrowed from spec, but the
 * numbers: max-output's is written into buf, the uid's into the array's
 * own allocation. Returns the array (caller frees the array only, which
 * frees the uid's string too), or NULL with errno ENOMEM. */
char **shim_argv (const struct shim_spec *spec, char *buf, size_t bufsize);


/* Reap the shim behind pidfd if it has exited, without blocking.
 * Returns 0 and sets *status to the shim's own wait status (0 when it
 * wrote the exit record; see shim_proto.h), or -1 with errno:
 *   EAGAIN  still running
 *   ECHILD  not our child (after a cairnd restart the shim is adopted by
 *           init or a subreaper: watch the pidfd, then read the exit record)
 *           or already reaped
 *   EBADF, EINVAL  not a pidfd */
int shim_reap (int pidfd, int *status);

/* shim_reap() that leaves the process a zombie (WNOWAIT): its pid, and its
 * process group's id, stay taken until shim_reap(). Same errors. */
int shim_peek (int pidfd, int *status);

#endif /* CAIRN_EXEC_SPAWN_H */
