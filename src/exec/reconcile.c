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
    if (!jobtable_add (r->d->jobs, job)) {
        job_destroy (job);
        return -1;
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
        jobctx_fill (d->jctx, &ctx);
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
