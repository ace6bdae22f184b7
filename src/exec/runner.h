/* runner.h - where a job's process runs, chosen once per process.
 *
 * A job's process runs either here, under this node's supervisor
 * (runner_local: localproc.h through procs.h), or on its rank's node
 * through that node's cairnd (runner_remote: remote.h,
 * DESIGN-MULTINODE.md). job_proc_node() decides, from the job's config
 * snapshot alone, so a process has the same runner after any restart;
 * runner_of() makes that choice, and every caller goes through the
 * runner it returns (the model is flux-core job-exec's
 * struct exec_implementation, with its room as the implementation's
 * data).
 *
 * Each operation is an effect of a committed event (doc/design.md, "The
 * write-ahead rule"), except reconcile, which runs at startup after the
 * replay and may emit events (into the job's pending events).
 */
#ifndef CAIRN_RUNNER_H
#define CAIRN_RUNNER_H

#include <stdbool.h>

#include "core/error.h"
#include "core/job.h"

struct jobentry;  /* exec/jobtable.h */
struct localproc; /* exec/localproc.h */
struct remote;    /* exec/remote.h */

/* What a runner does; self is its room (struct runner). */
struct runner_ops {
    const char *name; /* "local", "remote" */
    /* A committed proc-intent or proc-unstarted: start the process. */
    void (*start) (void *self, struct jobentry *je, const char *execid);
    /* A committed proc-signal. */
    void (*signal) (void *self,
                    struct jobentry *je,
                    const char *execid,
                    int signum);
    /* Its end is committed (lost: outcome unknown): forget it, remove
     * what it left (exit records; a lost one's leftover processes). */
    void (*finished) (void *self,
                      struct jobentry *je,
                      const char *execid,
                      bool lost);
    /* After a replay, p (not done) is looked at again: -1 with err when
     * it could not be (cairnd does not start then). */
    int (*reconcile) (void *self,
                      struct jobentry *je,
                      const struct job_proc *p,
                      struct cairn_error *err);
};

/* A runner: its operations and the room that carries them out. */
struct runner {
    const struct runner_ops *ops;
    void *self;
};

/* The two runners of a cairnd, lent their rooms (either may be NULL: a
 * node-role cairnd has no remote room, and no job to run). */
struct runners {
    struct runner local;  /* self: struct localproc */
    struct runner remote; /* self: struct remote */
};

/* Fill rs with the runners of lp and r. Nothing allocated. */
void runners_init (struct runners *rs, struct localproc *lp, struct remote *r);

/* p's runner: the remote one when job_proc_node() names a node. */
const struct runner *runner_of (const struct runners *rs,
                                const struct jobentry *je,
                                const struct job_proc *p);

#endif /* CAIRN_RUNNER_H */
