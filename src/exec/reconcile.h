/* reconcile.h - a restarted cairnd takes over where the last one stopped
 * (doc/design.md "Reconciliation at restart"): a pure replay of the
 * journal into the job table, then one look at the live system per
 * process the journal believes is not done, through its runner
 * (runner.h), then every deadline that passed while cairnd was down.
 *
 * A pass at startup, not a room with state: each call is lent what it
 * reads. What it decides is the jobs' pending events (on the dirty list),
 * committed by the caller's turn before cairnd listens.
 */
#ifndef CAIRN_RECONCILE_H
#define CAIRN_RECONCILE_H

#include "core/error.h"

struct journal;  /* journal/journal.h */
struct jobtable; /* exec/jobtable.h: empty before reconcile() */
struct jobctx;   /* exec/jobctx.h */
struct runners;  /* exec/runner.h */
struct procs;    /* procs/procs.h */
struct node;     /* node/node.h */

/* Replay every active job of journal into jobs, reconcile each of its
 * processes not done through runners, advance each job and arm its
 * timer. 0, or -1 with err (a job the fold refuses, a process that
 * cannot be looked at: cairnd does not start then). */
int reconcile (struct journal *journal,
               struct jobtable *jobs,
               struct jobctx *jctx,
               const struct runners *runners,
               struct cairn_error *err);

/* Remove the exit records (procs_exitdir) that no live process of an
 * active job in jobs owns, nor a process watched by procs or held by the
 * node role (node, or NULL): those of processes whose end was committed
 * before a crash took the removal. Only once reconcile()'s decisions are
 * committed: until then a record collected there is the only record of
 * its status. */
void reconcile_sweep_exits (struct procs *procs,
                            struct node *node,
                            struct jobtable *jobs);

#endif /* CAIRN_RECONCILE_H */
