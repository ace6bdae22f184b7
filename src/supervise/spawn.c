/* spawn.c - see spawn.h */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/shim_proto.h"
#include "supervise/spawn.h"

/* The first CAIRN_EXECID entry is the one getenv() will see in the shim. */
static bool env_has_execid (char *const *envp, const char *execid)
{
    size_t klen = strlen (SHIM_ENV_EXECID);

    for (char *const *e = envp; *e; e++) {
        if (!strncmp (*e, SHIM_ENV_EXECID, klen) && (*e)[klen] == '=')
            return !strcmp (*e + klen + 1, execid);
    }
    return false;
}

int shim_spec_check (const struct shim_spec *spec, struct cairn_error *err)
{
    if (!spec || !spec->shim || !spec->exitdir || !spec->argv ||
        !spec->argv[0] || !spec->envp)
        return errset (err, EINVAL, "shim spawn: incomplete spec");
    if (!shim_execid_valid (spec->execid))
        return errset (err, EINVAL,
                       "shim spawn: execid '%s' is not a "
                       "canonical uuid",
                       spec->execid ? spec->execid : "");
    if (!env_has_execid (spec->envp, spec->execid))
        return errset (err, EINVAL,
                       "shim spawn: environment lacks " SHIM_ENV_EXECID "=%s",
                       spec->execid);
    return 0;
}

/* Room for a uid in decimal, with its NUL; for "memory.max=N". */
#define UID_CHARS 24
#define LIMIT_CHARS 40

char **shim_argv (const struct shim_spec *spec, char *buf, size_t bufsize)
{
    size_t n = 0, i = 0, slots;
    char **av;

    while (spec->argv[n])
        n++;
    /* the pointers, then the uid's digits, then the groups' */
    size_t glen = spec->as_user ? spec->ngroups * 11 + 1 : 0;
    slots = n + 23;
    if (!(av = calloc (1, slots * sizeof (*av) + UID_CHARS + glen +
                              4 * LIMIT_CHARS)))
        return NULL;
    av[i++] = (char *)spec->shim;
    av[i++] = "--exitdir";
    av[i++] = (char *)spec->exitdir;
    if (spec->cwd) {
        av[i++] = "--cwd";
        av[i++] = (char *)spec->cwd;
    } else if (spec->home) {
        av[i++] = "--home";
        av[i++] = (char *)spec->home;
    }
    if (spec->max_output > 0) {
        snprintf (buf, bufsize, "%zu", spec->max_output);
        av[i++] = "--max-output";
        av[i++] = buf;
    }
    if (spec->as_user) {
        char *uid = (char *)(av + slots);
        snprintf (uid, UID_CHARS, "%ju", (uintmax_t)spec->uid);
        av[i++] = "--user";
        av[i++] = uid;
        if (spec->ngroups > 0) {
            char *g = uid + UID_CHARS;
            size_t off = 0;
            for (size_t k = 0; k < spec->ngroups; k++)
                off += (size_t)snprintf (g + off, glen - off, "%s%u",
                                         k ? "," : "",
                                         (unsigned)spec->groups[k]);
            av[i++] = "--groups";
            av[i++] = g;
        }
    }
    if (spec->rlimits) {
        char *rl = (char *)(av + slots) + UID_CHARS + glen + 2 * LIMIT_CHARS;
        snprintf (rl, LIMIT_CHARS, "nofile=%llu:%llu",
                  (unsigned long long)spec->nofile.rlim_cur,
                  (unsigned long long)spec->nofile.rlim_max);
        av[i++] = "--rlimit";
        av[i++] = rl;
        rl += LIMIT_CHARS;
        snprintf (rl, LIMIT_CHARS, "nproc=%llu:%llu",
                  (unsigned long long)spec->nproc.rlim_cur,
                  (unsigned long long)spec->nproc.rlim_max);
        av[i++] = "--rlimit";
        av[i++] = rl;
    }
    if (spec->cgroup) {
        char *lim = (char *)(av + slots) + UID_CHARS + glen;
        av[i++] = "--cgroup";
        av[i++] = (char *)spec->cgroup;
        if (spec->pids_max > 0) {
            snprintf (lim, LIMIT_CHARS, "pids.max=%d", spec->pids_max);
            av[i++] = "--cgroup-limit";
            av[i++] = lim;
        }
        if (spec->memory_max > 0) {
            lim += LIMIT_CHARS;
            snprintf (lim, LIMIT_CHARS, "memory.max=%zu", spec->memory_max);
            av[i++] = "--cgroup-limit";
            av[i++] = lim;
        }
    }
    av[i++] = "--";
    memcpy (&av[i], spec->argv, n * sizeof (*av));
    return av;
}

/* waitid on pidfd, without blocking, with the extra flags. */
static int pidfd_wait (int pidfd, int *status, int flags)
{
    siginfo_t si;

    memset (&si, 0, sizeof (si));
    if (waitid (P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG | flags) < 0)
        return -1;
    if (si.si_pid == 0) {
        errno = EAGAIN;
        return -1;
    }
    *status = shim_wait_status (&si);
    return 0;
}

int shim_reap (int pidfd, int *status)
{
    return pidfd_wait (pidfd, status, 0);
}

int shim_peek (int pidfd, int *status)
{
    return pidfd_wait (pidfd, status, WNOWAIT);
}
