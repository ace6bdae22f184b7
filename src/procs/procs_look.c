/* procs_look.c - what became of a process while no cairnd watched it: the
 * one judgement a restarted cairnd makes for each process its journal
 * believes is not done, for a job's (reconcile.c) or a node's (node.c).
 *
 *   spawned (pid known):
 *     boot id changed          -> lost: the machine rebooted
 *     exit record present        -> it ended while we were down: its status
 *     pidfd_open + start time  -> still ours: watch it again
 *     no start marker          -> in a dir sealed under this boot
 *                                 (exitdir.h): it never ran (a spawn cut short
 * by cairnd's death): start it again otherwise                -> lost: gone
 * with no exit status intent only (crash between intent commit and pid commit):
 *     exit record present        -> its status
 *     the process its marker names, still there (a zombie too) -> record
 *                                 its pid, watch it
 *     (no pid in the marker) a live process with CAIRN_EXECID -> the same
 *     exit record (again: it may have ended during the scan) -> its status
 *     start marker             -> it ran and its outcome is lost: never
 *                                 run it again
 *     nothing at all           -> it never started: start it now, if
 *                                 the dir was sealed under this boot;
 *                                 else lost
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procs/procs_private.h"
#include "supervise/exitfile.h"
#include "supervise/procfs.h"

/* A missing marker proves nothing in a dir not sealed under this boot
 * (exitdir.h): the machine rebooted, or the dir is new. */
#define UNTRUSTED_WHY                                                          \
    "its start marker cannot be told: the exit dir was not written under "     \
    "this boot (a reboot, or a new run-dir); not running it again"

static bool has_exit (struct procs *p, const char *execid)
{
    int status;
    char *error = NULL;
    int rc = exitfile_read (p->xd.fd, execid, &status, &error);
    free (error);
    return rc == 0;
}

/* Only "no such process" means gone. Anything else (out of file
 * descriptors, no pidfd support) means we could not look, and a process
 * we could not look at is never declared lost: the restart fails instead,
 * loudly, and the journal is left as it was. */
static int cannot_look (const char *execid, pid_t pid, struct cairn_error *err)
{
    if (errno == ESRCH || errno == ENOENT)
        return 0;
    return errprintf (err,
                      "cannot check process %s (pid %d): %s; not declaring "
                      "it lost%s",
                      execid, (int)pid, strerror (errno),
                      errno == EMFILE || errno == ENFILE
                          ? " (raise the open files limit, e.g. "
                            "LimitNOFILE in the systemd unit)"
                          : "");
}

/* The process a marker names (exitfile_marker): pid, which wrote the
 * marker at boot_ns. Sets *out->pidfd and returns 1 if that process is
 * still there, zombie or not: it started no later than the marker (a
 * reused pid starts after our process was reaped, which is after its exit
 * file was written: has_exit answers for it). 0 if it is gone, -1 (err)
 * if we could not look. */
static int look_marked (struct procs *p,
                        const char *execid,
                        pid_t pid,
                        unsigned long long boot_ns,
                        struct proc_look *out,
                        struct cairn_error *err)
{
    long hz = sysconf (_SC_CLK_TCK);
    unsigned long long start;

    if (procfs_starttime (p->procroot, pid, &start) < 0)
        return cannot_look (execid, pid, err) < 0 ? -1 : 0;
    if (hz <= 0 || start > boot_ns / (1000000000ull / (unsigned long)hz))
        return 0; /* not ours: a later process under the same pid */
    if (procfs_pidfd_verify (p->procroot, pid, start, &out->pidfd) < 0)
        return cannot_look (execid, pid, err) < 0 ? -1 : 0;
    out->pid = pid;
    out->starttime = start;
    return 1;
}

static int look_intent (struct procs *p,
                        const char *execid,
                        struct proc_look *out,
                        struct cairn_error *err)
{
    unsigned long long start, boot_ns;
    pid_t pid;

    if (has_exit (p, execid))
        return out->verdict = LOOK_EXITED, 0;
    /* A command started by the supervisor names itself in its marker: the
     * one way to find it once it is a zombie, whose environment /proc no
     * longer shows. */
    if (exitfile_marker (p->xd.fd, execid, &pid, &boot_ns) == 1) {
        int rc = look_marked (p, execid, pid, boot_ns, out, err);
        if (rc < 0)
            return -1;
        if (rc > 0 && !has_exit (p, execid))
            return out->verdict = LOOK_ALIVE, 0;
        if (out->pidfd >= 0)
            close (out->pidfd);
        *out = (struct proc_look){.pidfd = -1};
        goto gone;
    }
    pid = procfs_find_execid (p->procroot, execid);
    if (pid < 0 && cannot_look (execid, 0, err) < 0)
        return -1;
    if (pid > 0) {
        if (procfs_starttime (p->procroot, pid, &start) == 0 &&
            procfs_pidfd_verify (p->procroot, pid, start, &out->pidfd) == 0) {
            out->pid = pid;
            out->starttime = start;
            return out->verdict = LOOK_ALIVE, 0;
        }
        if (cannot_look (execid, pid, err) < 0)
            return -1;
    }
gone:
    if (has_exit (p, execid))
        return out->verdict = LOOK_EXITED, 0;
    if (exitfile_started (p->xd.fd, execid)) {
        snprintf (out->why, sizeof (out->why),
                  "started while cairnd was going down, and it is gone "
                  "without an exit status; not running it again");
        return out->verdict = LOOK_LOST, 0;
    }
    if (!p->xd.trusted) {
        snprintf (out->why, sizeof (out->why), UNTRUSTED_WHY);
        return out->verdict = LOOK_LOST, 0;
    }
    snprintf (out->why, sizeof (out->why), "never started");
    return out->verdict = LOOK_UNSTARTED, 0;
}

static int look_running (struct procs *p,
                         const char *execid,
                         pid_t pid,
                         unsigned long long starttime,
                         const char *bootid,
                         struct proc_look *out,
                         struct cairn_error *err)
{
    if (strcmp (bootid, p->bootid) != 0) {
        snprintf (out->why, sizeof (out->why),
                  "the machine rebooted while cairnd was down");
        return out->verdict = LOOK_LOST, 0;
    }
    if (has_exit (p, execid))
        return out->verdict = LOOK_EXITED, 0;
    int rc = procfs_pidfd_verify (p->procroot, pid, starttime, &out->pidfd);
    if (rc < 0 && cannot_look (execid, pid, err) < 0)
        return -1;
    if (rc == 0) {
        out->pid = pid;
        out->starttime = starttime;
        return out->verdict = LOOK_ALIVE, 0;
    }
    if (has_exit (p, execid)) /* ended between the two looks */
        return out->verdict = LOOK_EXITED, 0;
    if (!exitfile_started (p->xd.fd, execid) && !p->xd.trusted) {
        snprintf (out->why, sizeof (out->why), UNTRUSTED_WHY);
        return out->verdict = LOOK_LOST, 0;
    }
    if (!exitfile_started (p->xd.fd, execid)) {
        /* Gone before its shim marked the start: a spawn cut short by the
         * last cairnd's death (its child dies with it, spawner.h). The
         * command never ran, so it runs now, once. */
        snprintf (out->why, sizeof (out->why),
                  "the process (pid %d) ended before starting the command",
                  (int)pid);
        return out->verdict = LOOK_UNSTARTED, 0;
    }
    snprintf (out->why, sizeof (out->why),
              "lost while cairnd was down: the process (pid %d) is gone and "
              "left no exit status",
              (int)pid);
    return out->verdict = LOOK_LOST, 0;
}

int procs_look (struct procs *p,
                const char *execid,
                bool spawned,
                pid_t pid,
                unsigned long long starttime,
                const char *bootid,
                struct proc_look *out,
                struct cairn_error *err)
{
    *out = (struct proc_look){.pidfd = -1};
    if (!spawned)
        return look_intent (p, execid, out, err);
    return look_running (p, execid, pid, starttime, bootid, out, err);
}
