/* runner.c - the two runners, and the one place that chooses (runner.h).
 * The adapters only turn a runner's self back into its room. */
#include "exec/runner.h"
#include "exec/jobtable.h"
#include "exec/localproc.h"
#include "exec/remote.h"

static void local_start (void *self, struct jobentry *je, const char *execid)
{
    (void)localproc_spawn (self, je, execid);
}

static void
local_signal (void *self, struct jobentry *je, const char *execid, int signum)
{
    localproc_signal (self, je, execid, signum);
}

static void
local_end (void *self, struct jobentry *je, const char *execid, bool lost)
{
    localproc_finished (self, je, execid, lost);
}

static int local_reconcile (void *self,
                            struct jobentry *je,
                            const struct job_proc *p,
                            struct cairn_error *err)
{
    return localproc_reconcile (self, je, p, err);
}

static void remote_start (void *self, struct jobentry *je, const char *execid)
{
    remote_exec (self, je, execid);
}

static void
remote_sig (void *self, struct jobentry *je, const char *execid, int signum)
{
    remote_signal (self, je, execid, signum);
}

static void
remote_end (void *self, struct jobentry *je, const char *execid, bool lost)
{
    remote_finished (self, je, execid); /* a node kills a lost one's
                                           leftovers */
}

static int remote_reconcile (void *self,
                             struct jobentry *je,
                             const struct job_proc *p,
                             struct cairn_error *err)
{
    if (remote_track (self, je, p->execid) < 0)
        return errprintf (err, "job %s: %s: cannot track it on its node",
                          je->name, p->execid);
    return 0;
}

static const struct runner_ops local_ops = {
    .name = "local",
    .start = local_start,
    .signal = local_signal,
    .finished = local_end,
    .reconcile = local_reconcile,
};

static const struct runner_ops remote_ops = {
    .name = "remote",
    .start = remote_start,
    .signal = remote_sig,
    .finished = remote_end,
    .reconcile = remote_reconcile,
};

void runners_init (struct runners *rs, struct localproc *lp, struct remote *r)
{
    rs->local = (struct runner){.ops = &local_ops, .self = lp};
    rs->remote = (struct runner){.ops = &remote_ops, .self = r};
}

const struct runner *runner_of (const struct runners *rs,
                                const struct jobentry *je,
                                const struct job_proc *p)
{
    return job_proc_node (je->job, p) >= 0 ? &rs->remote : &rs->local;
}
