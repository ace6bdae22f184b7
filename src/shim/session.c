/* session.c - what is left of a command's session once its process has
 * ended (session.h: shim_session_maybe, shim_session_left,
 * shim_session_drain, shim_session_linger).
 *
 * Each command leads a session of its own (cmd.c). A job shell puts each
 * task in a process group of its own inside that session (flux-shell
 * does), so killing the command's process group at its end leaves the
 * tasks running; the session is the unit that holds them all, short of a
 * cgroup (--cgroup). Without a cgroup, a process that calls setsid()
 * leaves the session and escapes (SECURITY.md).
 *
 * Pid reuse: the session's id is the command's pid. The caller holds that
 * pid unreaped (a zombie of ours) while it looks, so no other process can
 * have that pid, and no other session that id: every process found is
 * the command's. Once it is reaped (shim_session_linger), the live
 * processes of the session hold the id: a process whose pid it is means
 * they are all gone. Each process is signalled through a pidfd after its
 * session is seen again, so a pid freed and given again meanwhile is not
 * hit.
 *
 * libc only, like the rest of cairn-shim.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "journal/crashpoint.h"
#include "shim/session.h"

/* The state and session of pid from /proc/PID/stat, or -1 (gone). The
 * fields after the last ')' (the name may hold anything): state, ppid,
 * pgrp, session. */
static int stat_session (const char *pid, char *state, long *sid)
{
    char path[64], buf[1024];
    ssize_t n;
    int fd;

    snprintf (path, sizeof (path), "/proc/%s/stat", pid);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr (buf, ')');
    long ppid, pgrp;
    if (!p || sscanf (p + 1, " %c %ld %ld %ld", state, &ppid, &pgrp, sid) != 4)
        return -1;
    return 0;
}

/* Send sig to pid, pinned by a pidfd and seen in session sid again: the
 * pid may have been freed and given again since it was looked at, but
 * not to a process of sid while sid is held (see above). */
static void signal_pinned (const char *name, pid_t pid, pid_t sid, int sig)
{
    char state;
    long s;
    int fd = (int)syscall (SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return;
    if (stat_session (name, &state, &s) == 0 && s == (long)sid)
        (void)syscall (SYS_pidfd_send_signal, fd, sig, NULL, 0);
    close (fd);
}

bool shim_session_leader (pid_t pid)
{
    char name[24], state;
    long sid;
    snprintf (name, sizeof (name), "%d", (int)pid);
    return stat_session (name, &state, &sid) == 0 && sid == (long)pid;
}

int shim_session_left (pid_t sid, int sig)
{
    DIR *dir = opendir ("/proc");
    struct dirent *e;
    int n = 0;

    if (!dir)
        return -1;
    while ((e = readdir (dir))) {
        char state;
        long s;
        if (!isdigit ((unsigned char)e->d_name[0]))
            continue;
        long pid = strtol (e->d_name, NULL, 10);
        if (pid == (long)sid || stat_session (e->d_name, &state, &s) < 0 ||
            s != (long)sid)
            continue;
        if (state == 'Z' || state == 'X') /* dead already: its parent reaps */
            continue;
        n++;
        /* CAIRN_FAULT=shim.session.kill:*: as if none could be killed
         * (in uninterruptible sleep), for the tests of what follows */
        if (sig && !fault_only ("shim.session.kill"))
            signal_pinned (e->d_name, (pid_t)pid, sid, sig);
    }
    closedir (dir);
    return n;
}

/* Cheap before the scan of all of /proc (some 10 us a process, milliseconds
 * on a busy node, at every command's end): when the command's process
 * ended, its live children went to the nearest subreaper, our parent the
 * keeper (keep.c), before its zombie could be seen. Every live process of
 * the session descends from one of those, or from one that went there
 * earlier, unless its parent left the session (setsid) while it stayed:
 * that one is missed, as a process that leaves the session itself is
 * (SECURITY.md). So look at the keeper's children first. */
bool shim_session_maybe (pid_t sid)
{
    char path[64], buf[8192], name[24];
    pid_t keeper = getppid ();
    ssize_t n;
    int fd;

    if (keeper <= 1) /* no keeper: look everywhere */
        return true;
    snprintf (path, sizeof (path), "/proc/%d/task/%d/children", (int)keeper,
              (int)keeper);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return true;
    n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n < 0 || (size_t)n == sizeof (buf) - 1) /* cannot tell, or more */
        return true;
    buf[n] = '\0';
    for (char *p = buf, *end;; p = end) {
        long v = strtol (p, &end, 10);
        char state;
        long s;
        if (end == p)
            break;
        snprintf (name, sizeof (name), "%ld", v);
        if (v > 0 && stat_session (name, &state, &s) == 0 && s == (long)sid)
            return true;
    }
    return false;
}

int shim_session_drain (pid_t sid, int tries)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    int n = 0;

    for (int i = 0; i < tries; i++) {
        (void)kill (-sid, SIGKILL);
        if ((n = shim_session_left (sid, SIGKILL)) <= 0)
            return n;
        nanosleep (&ts, NULL);
    }
    return n;
}

int shim_session_linger (pid_t sid)
{
    char path[32];
    snprintf (path, sizeof (path), "/proc/%d", (int)sid);
    /* While a process of the session lives, its id cannot be any process's
     * pid: a process with that pid means the session emptied and the pid
     * was given again. */
    if (access (path, F_OK) == 0)
        return 0;
    (void)kill (-sid, SIGKILL);
    return shim_session_left (sid, SIGKILL);
}
