/* spawn.c - see spawn.h */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/shim_proto.h"
#include "exec/spawn.h"
#include "journal/crashpoint.h"

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

static int spec_check (const struct shim_spec *spec, struct cairn_error *err)
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

/* shim --exitdir DIR [--cwd DIR] [--max-output N] -- argv... ; caller
 * frees the array only (the strings are borrowed, but for the number,
 * which lives in buf). */
static char **
shim_argv (const struct shim_spec *spec, char *buf, size_t bufsize)
{
    size_t n = 0, i = 0;
    char **av;

    while (spec->argv[n])
        n++;
    if (!(av = calloc (n + 9, sizeof (*av))))
        return NULL;
    av[i++] = (char *)spec->shim;
    av[i++] = "--exitdir";
    av[i++] = (char *)spec->exitdir;
    if (spec->cwd) {
        av[i++] = "--cwd";
        av[i++] = (char *)spec->cwd;
    }
    if (spec->max_output > 0) {
        snprintf (buf, bufsize, "%zu", spec->max_output);
        av[i++] = "--max-output";
        av[i++] = buf;
    }
    av[i++] = "--";
    memcpy (&av[i], spec->argv, n * sizeof (*av));
    return av;
}

/* The shim starts with its signals blocked (see shim_sigset), default
 * dispositions, its own session, /dev/null on 0-2 and no other fd: the
 * closefrom runs in the child because libraries (LMDB, libev) may hold fds
 * without O_CLOEXEC. These calls fail only on ENOMEM, but a dropped action
 * would leak fds, so each is checked. */
static int spawn_setup (posix_spawnattr_t *attr, posix_spawn_file_actions_t *fa)
{
    const short flags =
        POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID;
    sigset_t block, all;

    shim_sigset (&block);
    sigfillset (&all);
    if (posix_spawnattr_setsigmask (attr, &block) != 0)
        return -1;
    if (posix_spawnattr_setsigdefault (attr, &all) != 0)
        return -1;
    if (posix_spawnattr_setflags (attr, flags) != 0)
        return -1;
    if (posix_spawn_file_actions_addopen (fa, 0, "/dev/null", O_RDWR, 0) != 0)
        return -1;
    if (posix_spawn_file_actions_adddup2 (fa, 0, 1) != 0)
        return -1;
    if (posix_spawn_file_actions_adddup2 (fa, 0, 2) != 0)
        return -1;
    if (posix_spawn_file_actions_addclosefrom_np (fa, 3) != 0)
        return -1;
    return 0;
}

int shim_spawn (const struct shim_spec *spec,
                pid_t *pid,
                int *pidfd,
                struct cairn_error *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char **av = NULL;
    char maxbuf[24];
    pid_t child;
    int e, fd;

    if ((e = fault_inject ("exec.spawn")))
        return errset (err, e, "spawn %s: %s (injected)",
                       spec && spec->shim ? spec->shim : "shim", strerror (e));
    if (spec_check (spec, err) < 0)
        return -1;
    if (!(av = shim_argv (spec, maxbuf, sizeof (maxbuf))))
        return errset (err, ENOMEM, "spawn %s: out of memory", spec->shim);

    posix_spawnattr_init (&attr);
    posix_spawn_file_actions_init (&fa);
    if (spawn_setup (&attr, &fa) < 0)
        e = ENOMEM;
    else
        e = posix_spawn (&child, spec->shim, &fa, &attr, av, spec->envp);
    posix_spawn_file_actions_destroy (&fa);
    posix_spawnattr_destroy (&attr);
    free (av);
    if (e != 0)
        return errset (err, e, "spawn %s: %s", spec->shim, strerror (e));

    /* The child is ours and unreaped, so its pid cannot be reused here. */
    if ((fd = pidfd_open (child, 0)) < 0) {
        e = errno;
        kill (child, SIGKILL);
        while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
            ;
        return errset (err, e, "pidfd_open shim %d: %s (shim killed)",
                       (int)child, strerror (e));
    }
    *pid = child;
    *pidfd = fd;
    return 0;
}

int shim_signal (int pidfd, int signum)
{
    siginfo_t info;

    if (signum <= 0 || signum >= NSIG) {
        errno = EINVAL;
        return -1;
    }
    memset (&info, 0, sizeof (info));
    info.si_signo = SHIM_RELAY_SIGNAL; /* the kernel wants it to match */
    info.si_code = SI_QUEUE;
    info.si_pid = getpid ();
    info.si_uid = getuid ();
    info.si_value.sival_int = signum;
    return pidfd_send_signal (pidfd, SHIM_RELAY_SIGNAL, &info, 0);
}

int shim_reap (int pidfd, int *status)
{
    siginfo_t si;

    memset (&si, 0, sizeof (si));
    if (waitid (P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) < 0)
        return -1;
    if (si.si_pid == 0) {
        errno = EAGAIN;
        return -1;
    }
    /* Rebuild the wait(2) status from the siginfo. */
    switch (si.si_code) {
    case CLD_EXITED:
        *status = (si.si_status & 0xff) << 8;
        break;
    case CLD_DUMPED:
        *status = (si.si_status & 0x7f) | 0x80;
        break;
    default: /* CLD_KILLED */
        *status = si.si_status & 0x7f;
        break;
    }
    return 0;
}
