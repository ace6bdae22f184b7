/* reconcile.c - a restarted cairnd takes over where the last one stopped.
 *
 * First a pure replay: every active job's events are folded back into its
 * state. Then, and only then, the live system is consulted, once per
 * process the journal believes is not done (DESIGN.md "Restart and
 * reconciliation"):
 *
 *   spawned (pid known):
 *     boot id changed          -> lost: the machine rebooted
 *     exit file present        -> it ended while we were down: its status
 *     pidfd_open + start time  -> still ours: watch it again
 *     no start marker          -> it never ran (a spawn cut short by
 *                                 cairnd's death): start it again
 *     otherwise                -> lost: gone with no exit status
 *   intent only (crash between intent commit and pid commit):
 *     exit file present        -> its status
 *     a live shim with CAIRN_EXECID -> record its pid, watch it
 *     exit file (again: it may have ended during the scan) -> its status
 *     start marker             -> it ran and its outcome is lost: never
 *                                 run it again
 *     nothing at all           -> it never started: start it now
 *
 * Finally job_advance() handles every deadline that passed while we were
 * down. Stale exit files of finished processes are removed by
 * reconcile_sweep_exits(), but only once all of this is committed: the
 * exit of a process collected here is not on disk before that, and its
 * exit file is then the only record of its status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/eventlog.h"
#include "exec/daemon_private.h"
#include "exec/exitfile.h"
#include "exec/log.h"
#include "exec/procfs.h"
#include "journal/crashpoint.h"

struct replay {
    struct cairnd *d;
    struct job *job;
    struct cairn_error *err;
};

static int replay_event (
    uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct replay *r = arg;
    json_t *entry = eventlog_entry_decode (line, len, r->err);
    if (!entry || job_apply (r->job, entry, r->err) < 0) {
        errprefix (r->err, "job %ju event %u", (uintmax_t)id, seq);
        json_decref (entry);
        errno = EINVAL;
        return -1;
    }
    json_decref (entry);
    return 0;
}

static int replay_job (const struct journal_jobinfo *info, void *arg)
{
    struct replay *r = arg;
    struct job *job = job_create (info->id);
    if (!job)
        return -1;
    r->job = job;
    if (journal_read_job (r->d->journal, info->id, 0, replay_event, r, r->err) <
        0) {
        job_destroy (job);
        return -1;
    }
    if (!cairnd_job_add (r->d, job)) {
        job_destroy (job);
        return -1;
    }
    return 0;
}

/* Record and watch a shim found alive. */
static int adopt (struct jobentry *je,
                  const struct job_proc *p,
                  pid_t pid,
                  unsigned long long start,
                  int pidfd)
{
    struct job_ctx ctx;
    log_msg (LOG_DEBUG, "job %s: %s (pid %d) still running: watching it again",
             je->key, p->execid, (int)pid);
    if (proc_watch (je, p->execid, pid, pidfd) < 0) {
        close (pidfd);
        return -1;
    }
    if (p->state == PROC_INTENT) {
        cairnd_ctx (je->d, &ctx);
        if (job_proc_spawned (je->job, &ctx, p->execid, pid, start,
                              je->d->bootid, je->pending) < 0)
            return -1;
        cairnd_dirty (je);
    }
    return 0;
}

static void
lost (struct jobentry *je, const struct job_proc *p, const char *why)
{
    struct job_ctx ctx;
    cairnd_ctx (je->d, &ctx);
    log_msg (LOG_WARNING, "job %s: %s: %s", je->key, p->execid, why);
    (void)job_proc_lost (je->job, &ctx, p->execid, why, je->pending);
    cairnd_dirty (je);
}

static bool has_exit (struct cairnd *d, const char *execid)
{
    int status;
    char *error = NULL;
    int rc = exitfile_read (d->exitdir, execid, &status, &error);
    free (error);
    return rc == 0;
}

/* Only "no such process" means gone. Anything else (out of file
 * descriptors, no pidfd support) means we could not look, and a process
 * we could not look at is never declared lost: the restart fails instead,
 * loudly, and the journal is left as it was. */
static int cannot_look (struct jobentry *je,
                        const char *execid,
                        pid_t pid,
                        struct cairn_error *err)
{
    if (errno == ESRCH || errno == ENOENT)
        return 0;
    return errprintf (err,
                      "job %s: cannot check process %s (pid %d): %s; not "
                      "declaring it lost%s",
                      je->key, execid, (int)pid, strerror (errno),
                      errno == EMFILE || errno == ENFILE
                          ? " (raise the open files limit, e.g. "
                            "LimitNOFILE in the systemd unit)"
                          : "");
}

static int reconcile_intent (struct jobentry *je,
                             const struct job_proc *p,
                             struct cairn_error *err)
{
    struct cairnd *d = je->d;
    char execid[EXECID_LEN + 1];
    snprintf (execid, sizeof (execid), "%s", p->execid);
    unsigned long long start;
    int pidfd;

    if (has_exit (d, p->execid)) {
        proc_collect (je, p->execid, -1);
        return 0;
    }
    pid_t pid = procfs_find_execid (d->procroot, p->execid);
    if (pid < 0 && cannot_look (je, execid, 0, err) < 0)
        return -1;
    if (pid > 0) {
        if (procfs_starttime (d->procroot, pid, &start) == 0
            && procfs_pidfd_verify (d->procroot, pid, start, &pidfd) == 0) {
            if (adopt (je, p, pid, start, pidfd) == 0)
                return 0;
        } else if (cannot_look (je, execid, pid, err) < 0)
            return -1;
    }
    if (has_exit (d, p->execid)) {
        proc_collect (je, p->execid, -1);
        return 0;
    }
    if (exitfile_started (d->exitdir, p->execid)) {
        lost (je, p,
              "started while cairnd was going down, and its shim is gone "
              "without an exit status; not running it again");
        return 0;
    }
    log_msg (LOG_INFO, "job %s: %s was never started: starting it now", je->key,
             execid);
    CRASHPOINT ("reconcile.respawn");
    (void)proc_spawn (je, execid);
    return 0;
}

static int reconcile_running (struct jobentry *je,
                              const struct job_proc *p,
                              struct cairn_error *err)
{
    struct cairnd *d = je->d;
    int pidfd;
    char why[160];

    if (strcmp (p->bootid, d->bootid) != 0) {
        lost (je, p, "the machine rebooted while cairnd was down");
        return 0;
    }
    if (has_exit (d, p->execid)) {
        proc_collect (je, p->execid, -1);
        return 0;
    }
    int rc = procfs_pidfd_verify (d->procroot, p->pid, p->starttime, &pidfd);
    if (rc < 0 && cannot_look (je, p->execid, p->pid, err) < 0)
        return -1;
    if (rc == 0) {
        int signum = p->terminating ? p->term_signum : 0;
        char execid[EXECID_LEN + 1];
        snprintf (execid, sizeof (execid), "%s", p->execid);
        if (adopt (je, p, p->pid, p->starttime, pidfd) == 0) {
            /* The last termination signal was journaled, but a crash may
             * have come before it was sent: send it again. Harmless if it
             * did arrive; the escalation clock is unchanged. */
            if (signum > 0)
                proc_signal (d, execid, signum);
            return 0;
        }
    }
    if (has_exit (d, p->execid)) { /* ended between the two looks */
        proc_collect (je, p->execid, -1);
        return 0;
    }
    if (!exitfile_started (d->exitdir, p->execid)) {
        /* Gone before its shim marked the start: a spawn cut short by the
         * last cairnd's death (its child dies with it, spawner.h). The
         * command never ran, so it runs now, once. */
        struct job_ctx ctx;
        char execid[EXECID_LEN + 1];
        snprintf (execid, sizeof (execid), "%s", p->execid);
        snprintf (why, sizeof (why),
                  "cairn-shim (pid %d) ended before starting the command",
                  (int)p->pid);
        log_msg (LOG_INFO, "job %s: %s: %s: starting it again", je->key,
                 execid, why);
        cairnd_ctx (d, &ctx);
        if (job_proc_unstarted (je->job, &ctx, execid, why, je->pending) == 0) {
            cairnd_dirty (je);
            return 0;
        }
    }
    snprintf (why, sizeof (why),
              "lost while cairnd was down: cairn-shim (pid %d) is gone and "
              "left no exit status",
              (int)p->pid);
    lost (je, p, why);
    return 0;
}

/* Remove exit files that no live process of an active job owns: those of
 * processes whose end was committed before a crash took the removal. */
void reconcile_sweep_exits (struct cairnd *d)
{
    int fd = dup (d->exitdir);
    DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
    struct dirent *ent;
    if (!dir) {
        if (fd >= 0)
            close (fd);
        return;
    }
    rewinddir (dir);
    while ((ent = readdir (dir))) {
        char execid[EXECID_LEN + 1];
        if (ent->d_name[0] == '.' || strlen (ent->d_name) < EXECID_LEN)
            continue;
        memcpy (execid, ent->d_name, EXECID_LEN);
        execid[EXECID_LEN] = '\0';
        if (!uuid_is_canonical (execid) || hashmap_get (d->watches, execid))
            continue;
        bool live = false;
        size_t pos = 0;
        struct jobentry *je;
        while (!live && (je = hashmap_next (d->jobs, &pos, NULL))) {
            const struct job_proc *p = job_proc_find (je->job, execid);
            live = p && p->state != PROC_DONE;
        }
        if (!live)
            (void)unlinkat (d->exitdir, ent->d_name, 0);
    }
    closedir (dir);
}

int reconcile (struct cairnd *d, struct cairn_error *err)
{
    struct replay r = {.d = d, .err = err};
    struct jobentry *je;
    size_t pos;

    CRASHPOINT ("reconcile.begin");
    if (journal_foreach_job (d->journal, true, replay_job, &r, err) < 0)
        return errprefix (err, "replaying the journal");
    pos = 0;
    while ((je = hashmap_next (d->jobs, &pos, NULL))) {
        /* only what the journal holds: decisions taken below add intents
         * that must be committed before they are acted on */
        size_t n = job_nprocs (je->job);
        for (size_t i = 0; i < n; i++) {
            const struct job_proc *p = job_proc_at (je->job, i);
            /* the state as the journal has it: reconciling an intent
             * makes it running, and it must not be reconciled twice */
            enum proc_state state = p->state;
            int rc = state == PROC_INTENT    ? reconcile_intent (je, p, err)
                     : state == PROC_RUNNING ? reconcile_running (je, p, err)
                                             : 0;
            if (rc < 0)
                return -1;
        }
    }
    pos = 0;
    while ((je = hashmap_next (d->jobs, &pos, NULL))) {
        struct job_ctx ctx;
        cairnd_ctx (d, &ctx);
        if (job_advance (je->job, &ctx, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: advance: %s", je->key, strerror (errno));
        cairnd_dirty (je);
        cairnd_timer_rearm (je);
    }
    if (hashmap_count (d->jobs) > 0)
        log_msg (LOG_INFO, "replayed %zu active jobs", hashmap_count (d->jobs));
    return 0;
}
