/* localproc.h - a job's processes here (runner_local, runner.h): started
 * and watched through procs.h, their ends read into the job.
 *
 * Each process is its job's: the jobentry is the owner procs.h answers,
 * and what it answers becomes the job's events (je->pending, put on the
 * dirty list: committed at the turn's flush, doc/design.md "The
 * write-ahead rule"). Every call here is the effect of a committed event,
 * or the reconcile after the replay.
 *
 * The room is lent the processes (procs.h), the jobs' context (jobctx.h),
 * live output (output.h: a shell's output is sent before it is read for
 * the journal) and this boot's id; it tells no one above it anything: its
 * answers are the job's events. It marks each job whose processes it
 * started (je->local), so that procs.h's answers, which name only the job,
 * find it.
 */
#ifndef CAIRN_LOCALPROC_H
#define CAIRN_LOCALPROC_H

#include <stdbool.h>

#include "core/error.h"

struct procs;    /* procs/procs.h */
struct jobctx;   /* exec/jobctx.h */
struct output;   /* exec/output.h */
struct jobentry; /* exec/jobtable.h */
struct job_proc; /* core/job.h */
struct localproc;

/* The room, lent procs, jctx, output and bootid (kept: they must outlive
 * it). NULL with errno ENOMEM. */
struct localproc *localproc_create (struct procs *procs,
                                    struct jobctx *jctx,
                                    struct output *output,
                                    const char *bootid);

/* NULL is fine; errno is kept. Processes still watched stay procs.h's. */
void localproc_destroy (struct localproc *lp);

/* A committed proc-intent (or proc-unstarted): start it, asking the
 * supervisor; answered later (its proc-spawn, proc-fail or proc-exit).
 * Nothing when it is no longer an intent. 0, or -1 when it could not be
 * asked (its proc-fail is pending then). */
int localproc_spawn (struct localproc *lp,
                     struct jobentry *je,
                     const char *execid);

/* A committed proc-signal: signum to it (its whole session once the kill
 * escalates: nkills > 0). */
void localproc_signal (struct localproc *lp,
                       struct jobentry *je,
                       const char *execid,
                       int signum);

/* The end of a job's process is committed (lost: outcome unknown): its
 * files go; a lost one's leftover processes are killed. One still watched
 * (given up on, unkillable) keeps its files until it ends. */
void localproc_finished (struct localproc *lp,
                         struct jobentry *je,
                         const char *execid,
                         bool lost);

/* Look at p, a job's process here, after the replay (runner_local's
 * reconcile): collect its exit, watch it again, start it (again) or call
 * it lost, as procs_look judges it. 0, or -1 with err. */
int localproc_reconcile (struct localproc *lp,
                         struct jobentry *je,
                         const struct job_proc *p,
                         struct cairn_error *err);

#endif /* CAIRN_LOCALPROC_H */
