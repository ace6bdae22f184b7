/* scale.h - the curves of `cairn-bench scale` (bench_scale in b_scale.c
 * runs the ones --scale-curves selects).
 *
 * Every curve adds to the report r its rows (the figures at each point),
 * its ratios (each point against a raw figure of the same run) and its
 * notes, and when p is not NULL its panel(s) to the plot. Each returns
 * 0, or -1 with errno and err; the report then holds what was measured
 * up to the failure but the caller discards it.
 */
#ifndef CAIRN_BENCH_SCALE_H
#define CAIRN_BENCH_SCALE_H

#include "bench.h"

/* The most points of one curve. */
#define SCALE_MAX_POINTS 12

/* b_scale.c: processes/s against raw /bin/true spawns with the same
 * concurrency, at each number of jobs in flight (o->ranks ranks each) and
 * at each number of ranks per job (o->inflight jobs in flight). A fresh
 * cairnd per point, perilog jobs, as `throughput`. */
int scale_throughput (const struct bench_opts *o,
                      const long *inflight,
                      int ninflight,
                      const long *ranks,
                      int nranks,
                      struct report *r,
                      struct plot *p,
                      struct cairn_error *err);

/* scale_live.c: restart time with live[0..n-1] live processes (jobs of
 * o->ranks ranks running sleep, one cairnd grown point by point) against
 * restart_raw(). Points the machine cannot hold (bench_capacity) are
 * skipped with a note. */
int scale_restart (const struct bench_opts *o,
                   const long *live,
                   int n,
                   struct report *r,
                   struct plot *p,
                   struct cairn_error *err);

/* scale_live.c: cairnd's resident memory per active rank with
 * ranks[0..n-1] active ranks (jobs of o->ranks ranks), one cairnd grown
 * point by point, against its own idle size. */
int scale_memory (const struct bench_opts *o,
                  const long *ranks,
                  int n,
                  struct report *r,
                  struct plot *p,
                  struct cairn_error *err);

/* scale_purge.c: journal size as `finished` finished jobs are written
 * (a real o->ranks-rank perilog job's events each), then `cairn purge
 * --older-than 0` of them all against the same deletions made directly
 * with LMDB on a copy of the journal. */
int scale_purge (const struct bench_opts *o,
                 long finished,
                 struct report *r,
                 struct plot *p,
                 struct cairn_error *err);

/* A target line from x0 to x1 at y in the current panel of p (NULL: no
 * plot). 0, or -1 with errno. */
int scale_plot_target (struct plot *p, double x0, double x1, double y);

#endif /* CAIRN_BENCH_SCALE_H */
