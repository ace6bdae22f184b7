/* localproc.c - a job's processes here (localproc.h): started and
 * watched through procs.h, their ends read into the job.
 *
 * Each is its job's: the jobentry is the owner procs.h answers, and what
 * it answers becomes the job's events (pending, committed at the turn's
 * flush, doc/design.md "The write-ahead rule"). procs.h names only the
 * owner, so the job carries this room's address (je->local), stored where
 * it becomes an owner: no lookup per answer.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/job.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/localproc.h"
#include "exec/output.h"
#include "journal/crashpoint.h"
#include "procs/procs.h"
#include "supervise/exitfile.h"
#include "util/log.h"

struct localproc {
    struct procs *procs;
    struct jobctx *jctx;
    struct output *output;
    const char *bootid; /* this boot's: a spawn record's */
};

static void job_ended (void *owner,
                       const char *execid,
                       int shim_status,
                       const struct procs_exit *rec);
static void job_answered (void *owner,
                          const char *execid,
                          enum procs_answer answer,
                          struct procs_started *st,
                          const struct cairn_error *err);

static const struct procs_owner_ops job_ops = {
    .ended = job_ended,
    .answered = job_answered,
};

struct localproc *localproc_create (struct procs *procs,
                                    struct jobctx *jctx,
                                    struct output *output,
                                    const char *bootid)
{
    struct localproc *lp = calloc (1, sizeof (*lp));
    if (!lp)
        return NULL;
    lp->procs = procs;
    lp->jctx = jctx;
    lp->output = output;
    lp->bootid = bootid;
    return lp;
}

void localproc_destroy (struct localproc *lp)
{
    int saved = errno;
    free (lp);
    errno = saved;
}

/* Watch a job's process (pid, pidfd: taken); je->local is lp already. */
static int watch (struct localproc *lp,
                  struct jobentry *je,
                  const char *execid,
                  pid_t pid,
                  int pidfd)
{
    return procs_watch (lp->procs, execid, pid, pidfd, je, &job_ops);
}

/* A process ended: read what its shim left and tell the job. A missing
 * exit record means the outcome is lost (shim_status: the shim's own wait
 * status, or -1 when it is not our child), unless the command never
 * started. */
static void collect (struct localproc *lp,
                     struct jobentry *je,
                     const char *execid,
                     int shim_status,
                     const struct procs_exit *rec)
{
    int xfd = procs_exitdir (lp->procs);
    struct job_ctx ctx;
    int status;
    char *error = NULL;

    const struct job_proc *p = job_proc_find (je->job, execid);
    if (!p || p->state == PROC_DONE) { /* given up on long ago */
        (void)exitfile_remove (xfd, execid);
        return;
    }
    jobctx_fill (lp->jctx, &ctx);
    output_flush (lp->output, je, p);
    CRASHPOINT ("exec.exitfile.read");
    long long osz, esz;
    int left = 0;
    if (rec) { /* what the record says, as the supervisor told it */
        status = rec->status;
        osz = rec->out_size;
        esz = rec->err_size;
        left = rec->leftover;
    }
    if (rec || exitfile_read_left (xfd, execid, &status, &error, &osz, &esz,
                                   &left) == 0) {
        size_t room = job_output_room (je->job, p->phase), olen = 0, elen = 0;
        bool otrunc = false, etrunc = false;
        /* a file the shim saw empty is not opened (most are) */
        char *out = osz == 0 ? NULL
                             : exitfile_read_output (xfd, execid, "out", room,
                                                     &olen, &otrunc);
        char *err = esz == 0
                        ? NULL
                        : exitfile_read_output (xfd, execid, "err",
                                                room > olen ? room - olen : 0,
                                                &elen, &etrunc);
        struct job_proc_end end = {.status = status,
                                   .error = error,
                                   .leftover = left,
                                   .outdata = out,
                                   .out_trunc = otrunc,
                                   .errdata = err,
                                   .err_trunc = etrunc};
        if (job_proc_exited (je->job, &ctx, execid, &end, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: exit of %s: %s", je->name, execid,
                     strerror (errno));
        free (out);
        free (err);
        free (error);
    } else if (shim_status < 0 && !exitfile_started (xfd, execid)) {
        /* Not our child: a shim adopted from the last cairnd, which died
         * before marking the start. Only that cairnd's death kills a shim
         * there (its pdeathsig, spawner.h; the pidfd may have been taken
         * while it was still a zombie), so the command never ran: it
         * runs now, once, as reconcile does for a shim already gone. */
        char note[160];
        snprintf (note, sizeof (note),
                  "the process (pid %d) ended before starting the command",
                  (int)p->pid);
        log_msg (LOG_INFO, "job %s: %s: %s: starting it again", je->name,
                 execid, note);
        if (job_proc_unstarted (je->job, &ctx, execid, note, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: restart of %s: %s", je->name, execid,
                     strerror (errno));
    } else {
        char note[160];
        procs_gone_note (note, sizeof (note), shim_status, p->pid);
        if (job_proc_lost (je->job, &ctx, execid, note, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: loss of %s: %s", je->name, execid,
                     strerror (errno));
    }
    jobtable_dirty (je);
}

static void job_ended (void *owner,
                       const char *execid,
                       int shim_status,
                       const struct procs_exit *rec)
{
    struct jobentry *je = owner;
    collect (je->local, je, execid, shim_status, rec);
}

/* What the supervisor's answer to a start means for the job: rc, st and
 * err as procs_start's. */
static void spawn_done (struct localproc *lp,
                        struct jobentry *je,
                        const char *execid,
                        int rc,
                        struct procs_started *st,
                        const struct cairn_error *err)
{
    struct job_ctx ctx;

    if (rc < 0) {
        log_msg (LOG_WARNING, "job %s: %s: %s", je->name, execid, err->text);
        jobctx_fill (lp->jctx, &ctx);
        (void)job_proc_failed (je->job, &ctx, execid, err->text, je->pending);
        jobtable_dirty (je);
        return;
    }
    if (st->pid == 0) { /* its exit record says why it could not start */
        collect (lp, je, execid, 0, NULL);
        return;
    }
    if (watch (lp, je, execid, st->pid, st->pidfd) < 0) {
        close (st->pidfd);
        log_msg (LOG_ERR, "%s: cannot watch pid %d", execid, (int)st->pid);
    } else
        procs_watch_started (lp->procs, execid, st);
    jobctx_fill (lp->jctx, &ctx);
    if (job_proc_spawned (je->job, &ctx, execid, st->pid, st->starttime,
                          lp->bootid, je->pending) < 0)
        log_msg (LOG_ERR, "job %s: spawn record: %s", je->name,
                 strerror (errno));
    jobtable_dirty (je);
}

static void job_answered (void *owner,
                          const char *execid,
                          enum procs_answer answer,
                          struct procs_started *st,
                          const struct cairn_error *err)
{
    struct jobentry *je = owner;
    struct localproc *lp = je->local;
    struct job_ctx ctx;

    switch (answer) {
    case PROCS_STARTED:
        spawn_done (lp, je, execid, 0, st, err);
        break;
    case PROCS_FAILED:
        spawn_done (lp, je, execid, -1, st, err);
        break;
    case PROCS_UNSTARTED:
        (void)localproc_spawn (lp, je, execid);
        break;
    case PROCS_LOST:
        jobctx_fill (lp->jctx, &ctx);
        (void)job_proc_lost (je->job, &ctx, execid, err->text, je->pending);
        jobtable_dirty (je);
        break;
    }
}

int localproc_spawn (struct localproc *lp,
                     struct jobentry *je,
                     const char *execid)
{
    const struct job_proc *p = job_proc_find (je->job, execid);
    char **argv = NULL;
    const char *cwd;
    json_t *env = NULL;
    struct cairn_error err = {{0}};
    struct procs_started st = {.pidfd = -1};
    int rc;

    if (!p || p->state != PROC_INTENT)
        return 0;
    je->local = lp; /* procs.h's answers name je */
    if ((rc = job_proc_command (je->job, p, &argv, &cwd, &env)) < 0)
        errprintf (&err, "cannot build the command: %s", strerror (errno));
    else
        /* no more output than could still be journaled; a shell runs as
         * its job's user, a prolog or epilog as cairnd's (the site's
         * scripts). Not waiting for the answer: the supervisor's start
         * and ours overlap (job_answered). */
        rc = procs_start (
            lp->procs, execid, argv, env, cwd,
            job_output_room (je->job, p->phase),
            p->phase == PHASE_SHELL ? (int64_t)job_shell_uid (je->job) : -1,
            true, je, &job_ops, &st, &err);
    if (rc < 0 || !st.pending)
        spawn_done (lp, je, execid, rc, &st, &err);
    job_argv_free (argv);
    json_decref (env);
    return rc;
}

/* The end of a process is committed: its files can go. A process we gave
 * up on (unkillable) may still be running: keep watching it so that its
 * files are removed when it finally ends. A process whose shim was lost
 * may have left descendants the shim can no longer stop (PDEATHSIG reaches
 * only the command itself): end whatever still carries its execid, so no
 * user work runs on unseen. */
void localproc_finished (struct localproc *lp,
                         struct jobentry *je,
                         const char *execid,
                         bool lost)
{
    struct procs *procs = lp->procs;

    if (!execid || procs_watched (procs, execid))
        return;
    if (lost) {
        int n = procs_kill_leftovers (procs, execid);
        if (n > 0)
            log_msg (LOG_WARNING, "job %s: %s: killed %d leftover process(es)",
                     je->name, execid, n);
    }
    procs_forget (procs, execid); /* janitor.h: off the loop */
}

void localproc_signal (struct localproc *lp,
                       struct jobentry *je,
                       const char *execid,
                       int signum)
{
    /* the kill escalation (nkills counts it, folded before this effect)
     * goes to the command's whole session */
    const struct job_proc *p = job_proc_find (je->job, execid);
    procs_signal (lp->procs, execid, signum, p && p->nkills > 0);
}

/* ---- after a restart: runner_local's reconcile ---- */

/* Record and watch a shim found alive. */
static int adopt (struct localproc *lp,
                  struct jobentry *je,
                  const struct job_proc *p,
                  const struct proc_look *look)
{
    struct job_ctx ctx;
    log_msg (LOG_DEBUG, "job %s: %s (pid %d) still running: watching it again",
             je->name, p->execid, (int)look->pid);
    if (watch (lp, je, p->execid, look->pid, look->pidfd) < 0) {
        close (look->pidfd);
        return -1;
    }
    if (p->state == PROC_INTENT) {
        jobctx_fill (lp->jctx, &ctx);
        if (job_proc_spawned (je->job, &ctx, p->execid, look->pid,
                              look->starttime, lp->bootid, je->pending) < 0)
            return -1;
        jobtable_dirty (je);
    }
    return 0;
}

int localproc_reconcile (struct localproc *lp,
                         struct jobentry *je,
                         const struct job_proc *p,
                         struct cairn_error *err)
{
    char execid[EXECID_LEN + 1];
    struct proc_look look;
    struct job_ctx ctx;
    bool spawned = p->state == PROC_RUNNING;
    int signum = spawned && p->terminating ? p->term_signum : 0;
    int nkills = p->nkills;

    /* p may move when decisions below add processes: copy what we need */
    snprintf (execid, sizeof (execid), "%s", p->execid);
    je->local = lp; /* procs.h's answers name je */
    if (procs_look (lp->procs, execid, spawned, p->pid, p->starttime, p->bootid,
                    &look, err) < 0)
        return errprefix (err, "job %s", je->name);
    jobctx_fill (lp->jctx, &ctx);
    switch (look.verdict) {
    case LOOK_EXITED:
        collect (lp, je, execid, -1, NULL);
        break;
    case LOOK_ALIVE:
        if (adopt (lp, je, p, &look) < 0)
            return errprintf (err, "job %s: cannot watch %s again: %s",
                              je->name, execid, strerror (errno));
        /* The last termination signal was journaled, but a crash may
         * have come before it was sent: send it again. Harmless if it
         * did arrive; the escalation clock is unchanged. */
        if (signum > 0)
            procs_signal (lp->procs, execid, signum, nkills > 0);
        break;
    case LOOK_UNSTARTED:
        log_msg (LOG_INFO, "job %s: %s: %s: starting it %s", je->name, execid,
                 look.why, spawned ? "again" : "now");
        if (!spawned) {
            CRASHPOINT ("reconcile.respawn");
            (void)localproc_spawn (lp, je, execid);
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
