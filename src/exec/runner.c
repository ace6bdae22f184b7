/* runner.c - the two runners, and the one place that chooses (runner.h). */
#include "exec/daemon_private.h"
#include "exec/runner.h"

static void local_start (struct jobentry *je, const char *execid)
{
    (void)proc_spawn (je, execid);
}

static void local_signal (struct jobentry *je, const char *execid, int signum)
{
    /* the kill escalation (nkills counts it, folded before this effect)
     * goes to the command's whole session */
    const struct job_proc *p = job_proc_find (je->job, execid);
    procs_signal (je->d->procs, execid, signum, p && p->nkills > 0);
}

static void remote_start (struct jobentry *je, const char *execid)
{
    remote_exec (je, execid);
}

static void remote_end (struct jobentry *je, const char *execid, bool lost)
{
    remote_finished (je, execid); /* a node kills a lost one's leftovers */
}

static int remote_reconcile (struct jobentry *je,
                             const struct job_proc *p,
                             struct cairn_error *err)
{
    if (remote_track (je, p->execid) < 0)
        return errprintf (err, "job %s: %s: cannot track it on its node",
                          je->name, p->execid);
    return 0;
}

const struct runner runner_local = {
    .name = "local",
    .start = local_start,
    .signal = local_signal,
    .finished = proc_finished,
    .reconcile = proc_reconcile,
};

const struct runner runner_remote = {
    .name = "remote",
    .start = remote_start,
    .signal = remote_signal,
    .finished = remote_end,
    .reconcile = remote_reconcile,
};

const struct runner *runner_of (const struct jobentry *je,
                                const struct job_proc *p)
{
    return job_proc_node (je->job, p) >= 0 ? &runner_remote : &runner_local;
}
