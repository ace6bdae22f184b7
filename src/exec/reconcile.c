/* reconcile.c - a restarted cairnd takes over where the last one stopped.
 *
 * First a pure replay: every active job's events are folded back into its
 * state. Then, and only then, the live system is consulted, once per
 * process the journal believes is not done (doc/design.md "Reconciliation at
 * restart"; the judgement is procs_look's, procs.h). A process
 * that runs on another node (multinode) is asked about instead
 * (remote.h).
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

#include "core/job.h"
#include "exec/jobctx.h"
#include "exec/jobread.h"
#include "exec/jobtable.h"
#include "exec/reconcile.h"
#include "exec/runner.h"
#include "journal/crashpoint.h"
#include "journal/journal.h"
#include "node/node.h"
#include "procs/procs.h"
#include "supervise/procfs.h"
#include "util/log.h"

struct replay {
    struct journal *journal;
    struct jobtable *jobs;
    struct cairn_error *err;
};

static int replay_job (const struct journal_jobinfo *info, void *arg)
{
    struct replay *r = arg;
    struct job *job = jobread (r->journal, info->id, r->err);
    if (!job)
        return -1;
    if (!jobtable_add (r->jobs, job)) {
        job_destroy (job);
        return -1;
    }
    return 0;
}

/* Remove exit records that no live process of an active job owns: those of
 * processes whose end was committed before a crash took the removal. */
void reconcile_sweep_exits (struct procs *procs,
                            struct node *node,
                            struct jobtable *jobs)
{
    int xfd = procs_exitdir (procs);
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
        if (!uuid_is_canonical (execid) || procs_watched (procs, execid) ||
            node_has (node, execid))
            continue;
        bool live = false;
        size_t pos = 0;
        struct jobentry *je;
        while (!live && (je = jobtable_next (jobs, &pos))) {
            const struct job_proc *p = job_proc_find (je->job, execid);
            live = p && p->state != PROC_DONE;
        }
        if (!live)
            (void)unlinkat (xfd, ent->d_name, 0);
    }
    closedir (dir);
}

int reconcile (struct journal *journal,
               struct jobtable *jobs,
               struct jobctx *jctx,
               const struct runners *runners,
               struct cairn_error *err)
{
    struct replay r = {.journal = journal, .jobs = jobs, .err = err};
    struct jobentry *je;
    size_t pos;

    CRASHPOINT ("reconcile.begin");
    if (journal_foreach_job (journal, true, replay_job, &r, err) < 0)
        return errprefix (err, "replaying the journal");
    pos = 0;
    while ((je = jobtable_next (jobs, &pos))) {
        /* only what the journal holds: decisions taken below add intents
         * that must be committed before they are acted on */
        size_t n = job_nprocs (je->job);
        for (size_t i = 0; i < n; i++) {
            const struct job_proc *p = job_proc_at (je->job, i);
            /* the state as the journal has it: reconciling an intent
             * makes it running, and it must not be reconciled twice */
            enum proc_state state = p->state;
            if (state == PROC_DONE)
                continue;
            const struct runner *rn = runner_of (runners, je, p);
            if (rn->ops->reconcile (rn->self, je, p, err) < 0)
                return -1;
        }
    }
    pos = 0;
    while ((je = jobtable_next (jobs, &pos))) {
        struct job_ctx ctx;
        jobctx_fill (jctx, &ctx);
        if (job_advance (je->job, &ctx, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: advance: %s", je->name,
                     strerror (errno));
        jobtable_dirty (je);
        jobtable_rearm (je);
    }
    if (jobtable_count (jobs) > 0)
        log_msg (LOG_INFO, "replayed %zu active jobs", jobtable_count (jobs));
    return 0;
}
