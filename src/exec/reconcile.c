/* reconcile.c - a restarted cairnd takes over where the last one stopped.
 *
 * First a pure replay: every active job's events are folded back into its
 * state. Then, and only then, the live system is consulted, once per
 * process the journal believes is not done (doc/design.md "Reconciliation at
 * restart"; the judgement is procs_look's, procs.h). A process
 * that runs on another node (multinode) is asked about instead
 * (remote.c).
 *
 * Finally job_advance() handles every deadline that passed while we were
 * down. Stale exit records of finished processes are removed by
 * reconcile_sweep_exits(), but only once all of this is committed: the
 * exit of a process collected here is not on disk before that, and its
 * exit record is then the only record of its status.
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
#include "exec/runner.h"
#include "util/log.h"
#include "supervise/procfs.h"
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

struct job *
cairnd_job_read (struct cairnd *d, uint64_t id, struct cairn_error *err)
{
    struct replay r = {.d = d, .job = job_create (id), .err = err};
    if (!r.job) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (journal_read_job (d->journal, id, 0, replay_event, &r, err) < 0) {
        int e = errno;
        job_destroy (r.job);
        errno = e;
        return NULL;
    }
    return r.job;
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
                  const struct proc_look *look)
{
    struct job_ctx ctx;
    log_msg (LOG_DEBUG, "job %s: %s (pid %d) still running: watching it again",
             je->name, p->execid, (int)look->pid);
    if (proc_watch (je, p->execid, look->pid, look->pidfd) < 0) {
        close (look->pidfd);
        return -1;
    }
    if (p->state == PROC_INTENT) {
        cairnd_ctx (je->d, &ctx);
        if (job_proc_spawned (je->job, &ctx, p->execid, look->pid,
                              look->starttime, je->d->bootid, je->pending) < 0)
            return -1;
        jobtable_dirty (je);
    }
    return 0;
}

int reconcile_local (struct jobentry *je,
                     const struct job_proc *p,
                     struct cairn_error *err)
{
    struct cairnd *d = je->d;
    char execid[EXECID_LEN + 1];
    struct proc_look look;
    struct job_ctx ctx;
    bool spawned = p->state == PROC_RUNNING;
    int signum = spawned && p->terminating ? p->term_signum : 0;
    int nkills = p->nkills;

    /* p may move when decisions below add processes: copy what we need */
    snprintf (execid, sizeof (execid), "%s", p->execid);
    if (procs_look (d->procs, execid, spawned, p->pid, p->starttime, p->bootid,
                    &look, err) < 0)
        return errprefix (err, "job %s", je->name);
    cairnd_ctx (d, &ctx);
    switch (look.verdict) {
    case LOOK_EXITED:
        proc_collect (je, execid, -1, NULL);
        break;
    case LOOK_ALIVE:
        if (adopt (je, p, &look) < 0)
            return errprintf (err, "job %s: cannot watch %s again: %s",
                              je->name, execid, strerror (errno));
        /* The last termination signal was journaled, but a crash may
         * have come before it was sent: send it again. Harmless if it
         * did arrive; the escalation clock is unchanged. */
        if (signum > 0)
            procs_signal (d->procs, execid, signum, nkills > 0);
        break;
    case LOOK_UNSTARTED:
        log_msg (LOG_INFO, "job %s: %s: %s: starting it %s", je->name, execid,
                 look.why, spawned ? "again" : "now");
        if (!spawned) {
            CRASHPOINT ("reconcile.respawn");
            (void)proc_spawn (je, execid);
        } else if (job_proc_unstarted (je->job, &ctx, execid, look.why,
                                       je->pending) == 0)
            jobtable_dirty (je);
        break;
    case LOOK_LOST:
        log_msg (LOG_WARNING, "job %s: %s: %s", je->name, execid, look.why);
        (void)job_proc_lost (je->job, &ctx, execid, look.why, je->pending);
        jobtable_dirty (je);
        break;
    }
    return 0;
}

/* Remove exit records that no live process of an active job owns: those of
 * processes whose end was committed before a crash took the removal. */
void reconcile_sweep_exits (struct cairnd *d)
{
    int xfd = procs_exitdir (d->procs);
    int fd = dup (xfd);
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
        if (!uuid_is_canonical (execid) || procs_watched (d->procs, execid) ||
            node_has (d->node, execid))
            continue;
        bool live = false;
        size_t pos = 0;
        struct jobentry *je;
        while (!live && (je = jobtable_next (d->jobs, &pos))) {
            const struct job_proc *p = job_proc_find (je->job, execid);
            live = p && p->state != PROC_DONE;
        }
        if (!live)
            (void)unlinkat (xfd, ent->d_name, 0);
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
    while ((je = jobtable_next (d->jobs, &pos))) {
        /* only what the journal holds: decisions taken below add intents
         * that must be committed before they are acted on */
        size_t n = job_nprocs (je->job);
        for (size_t i = 0; i < n; i++) {
            const struct job_proc *p = job_proc_at (je->job, i);
            /* the state as the journal has it: reconciling an intent
             * makes it running, and it must not be reconciled twice */
            enum proc_state state = p->state;
            if (state != PROC_DONE &&
                runner_of (je, p)->reconcile (je, p, err) < 0)
                return -1;
        }
    }
    pos = 0;
    while ((je = jobtable_next (d->jobs, &pos))) {
        struct job_ctx ctx;
        cairnd_ctx (d, &ctx);
        if (job_advance (je->job, &ctx, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: advance: %s", je->name,
                     strerror (errno));
        jobtable_dirty (je);
        jobtable_rearm (je);
    }
    if (jobtable_count (d->jobs) > 0)
        log_msg (LOG_INFO, "replayed %zu active jobs",
                 jobtable_count (d->jobs));
    return 0;
}
