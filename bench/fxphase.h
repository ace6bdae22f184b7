/* fxphase.h - a Flux job's latency by phase, stock against cairn (issue
 * 35): from each job's eventlog and exec eventlog, the median over the
 * jobs of one run of the time from a job's submit to its alloc (the
 * queue), and from its alloc to each later event (what the exec system
 * adds); then, over the runs, a report row per side, size and event.
 *
 *   flux python -c fxphase_py JOBID...   prints "FROM TO MS" lines, one
 *                                        per event every job has (exec
 *                                        eventlog events as "exec.NAME"):
 *                                        "submit alloc MS", then "alloc
 *                                        NAME MS" ascending, MS the median
 *                                        in ms
 */
#ifndef CAIRN_BENCH_FXPHASE_H
#define CAIRN_BENCH_FXPHASE_H

#include <jansson.h>

#include "bench.h"

extern const char fxphase_py[];

/* The script's output as an array of ["FROM -> TO", MS], or NULL with err
 * (EINVAL: no line could be read). */
json_t *fxphase_parse (const char *text, struct cairn_error *err);

struct fxphase;
struct fxphase *fxphase_create (void);
void fxphase_destroy (struct fxphase *p);

/* One run's medians (fxphase_parse's) for label (e.g. "stock -N4"). 0, or
 * -1 ENOMEM. */
int fxphase_add (struct fxphase *p, const char *label, const json_t *medians);

/* A row "LABEL: FROM -> TO" (ms) for each label and each event every
 * one of its n runs had, in the order of the label's first run. */
void fxphase_report (const struct fxphase *p, struct report *r, int n);

#endif /* CAIRN_BENCH_FXPHASE_H */
