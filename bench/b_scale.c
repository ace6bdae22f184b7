/* b_scale.c - how cairn's cost grows with the work it is given.
 *
 * Five curves, each point a ratio to a raw figure measured in the same
 * run (see scale.h): throughput against jobs in flight and against ranks
 * per job (here), restart time against live processes and memory against
 * active ranks (scale_live.c), journal growth and `cairn purge` against
 * finished jobs (scale_purge.c). --scale-curves picks some; the lists
 * size them down for a quick run. --plot draws them with gnuplot.
 *
 * The throughput points run about the same number of processes each
 * (M x N x 3, the `throughput` run's), but at least two jobs per slot in
 * flight, so that every point reaches a steady state: the ramp up and
 * down, when fewer jobs are in flight, is then at most half of a run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "bench.h"
#include "scale.h"

static const char *const curve_names[] = {"inflight", "ranks", "restart",
                                          "memory", "purge"};
#define NCURVES (sizeof (curve_names) / sizeof (curve_names[0]))

int scale_plot_target (struct plot *p, double x0, double x1, double y)
{
    double x[2] = {x0, x1}, v[2] = {y, y};
    return p ? plot_curve (p, "target", x, v, 2, true) : 0;
}

/* ---- throughput curves ---- */

struct tpoint {
    int inflight, ranks, jobs;
    double raw[BENCH_MAX_REPS];   /* raw /bin/true procs/s */
    double cairn[BENCH_MAX_REPS]; /* cairn perilog procs/s */
    double dcpu[BENCH_MAX_REPS];  /* cairnd CPU ms per process */
    double q[BENCH_MAX_REPS];     /* cairn / raw, procs/s */
    double cq[BENCH_MAX_REPS];    /* raw CPU / cairn CPU per process */
};

/* The point (inflight, ranks) in v[0..*n-1], added if new. */
static struct tpoint *
tp_point (struct tpoint *v, int *n, int inflight, int ranks, long budget)
{
    for (int i = 0; i < *n; i++)
        if (v[i].inflight == inflight && v[i].ranks == ranks)
            return &v[i];
    struct tpoint *t = &v[(*n)++];
    long jobs = (budget + 3L * ranks - 1) / (3L * ranks);
    t->inflight = inflight;
    t->ranks = ranks;
    t->jobs = (int)(jobs > 2L * inflight ? jobs : 2L * inflight);
    return t;
}

static int tp_measure (const struct bench_opts *o,
                       struct tpoint *t,
                       int rep,
                       struct cairn_error *err)
{
    struct bench_opts po = *o;
    struct raw_result raw;
    struct tp_result a;

    po.jobs = t->jobs;
    po.ranks = t->ranks;
    po.inflight = t->inflight;
    if (raw_spawn_rate (bench_true_argv, t->jobs * t->ranks * 3,
                        t->inflight * t->ranks, &raw, err) < 0 ||
        tp_run_cairn (&po, true, false, &a, err) < 0)
        return errprefix (err, "%d in flight x %d ranks", t->inflight,
                          t->ranks);
    t->raw[rep] = raw.rate;
    t->cairn[rep] = a.procs_per_s;
    t->dcpu[rep] = a.daemon_per_proc * 1e3;
    t->q[rep] = a.procs_per_s / raw.rate;
    t->cq[rep] = raw.cpu / a.cpu_per_proc;
    fprintf (stderr,
             "cairn-bench: scale: %d in flight x %d ranks: raw %.0f,"
             " cairn %.0f procs/s\n",
             t->inflight, t->ranks, raw.rate, a.procs_per_s);
    return 0;
}

static void tp_report (struct report *r, const struct tpoint *t, int n)
{
    char name[128];
    snprintf (name, sizeof (name), "%d in flight x %d ranks: raw /bin/true",
              t->inflight, t->ranks);
    report_add (r, name, "procs/s", t->raw, n);
    snprintf (name, sizeof (name), "%d in flight x %d ranks: cairn perilog",
              t->inflight, t->ranks);
    report_add (r, name, "procs/s", t->cairn, n);
    snprintf (name, sizeof (name), "%d in flight x %d ranks: cairnd CPU/proc",
              t->inflight, t->ranks);
    report_add (r, name, "ms", t->dcpu, n);
}

static void tp_ratios (struct report *r, const struct tpoint *t, int n)
{
    char name[128];
    snprintf (name, sizeof (name), "%d in flight x %d ranks: cairn / raw",
              t->inflight, t->ranks);
    report_ratio (r, name, t->q, n, NULL, 0);
    snprintf (name, sizeof (name), "%d in flight x %d ranks: CPU raw / cairn",
              t->inflight, t->ranks);
    report_ratio (r, name, t->cq, n, NULL, 0);
}

/* One panel: the medians of the curve's points against x. */
static int tp_panel (struct plot *p,
                     const char *title,
                     const char *xlabel,
                     struct tpoint **pts,
                     int npts,
                     bool by_inflight,
                     int n)
{
    double x[SCALE_MAX_POINTS], q[SCALE_MAX_POINTS], cq[SCALE_MAX_POINTS];
    for (int i = 0; i < npts; i++) {
        x[i] = by_inflight ? pts[i]->inflight : pts[i]->ranks;
        q[i] = bench_median (pts[i]->q, n);
        cq[i] = bench_median (pts[i]->cq, n);
    }
    if (!p)
        return 0;
    return plot_panel (p, title, xlabel, "ratio to raw /bin/true", true,
                       false) < 0 ||
                   plot_curve (p, "cairn / raw, processes/s", x, q, npts,
                               false) < 0 ||
                   plot_curve (p, "raw / cairn, CPU per process", x, cq, npts,
                               false) < 0
               ? -1
               : 0;
}

int scale_throughput (const struct bench_opts *o,
                      const long *inflight,
                      int ninflight,
                      const long *ranks,
                      int nranks,
                      struct report *r,
                      struct plot *p,
                      struct cairn_error *err)
{
    int n = o->reps, npts = 0, rc = -1;
    long budget = (long)o->jobs * o->ranks * 3;
    struct tpoint *v = calloc (2 * SCALE_MAX_POINTS, sizeof (*v));
    struct tpoint *byc[SCALE_MAX_POINTS], *byr[SCALE_MAX_POINTS];
    char title[128];

    if (!v)
        return errset (err, ENOMEM, "out of memory");
    for (int i = 0; i < ninflight; i++)
        byc[i] = tp_point (v, &npts, (int)inflight[i], o->ranks, budget);
    for (int i = 0; i < nranks; i++)
        byr[i] = tp_point (v, &npts, o->inflight, (int)ranks[i], budget);
    /* every point inside each repetition, so that all see the same noise */
    for (int rep = 0; rep < n; rep++)
        for (int k = 0; k < npts; k++)
            if (tp_measure (o, &v[k], rep, err) < 0)
                goto out;
    for (int k = 0; k < npts; k++)
        tp_report (r, &v[k], n);
    for (int k = 0; k < npts; k++)
        tp_ratios (r, &v[k], n);
    report_note (r,
                 "throughput: perilog jobs (prolog, shell, epilog /bin/true"
                 " per rank), a fresh cairnd per point; each point runs"
                 " max(2 x in flight, %ld / (3 x ranks)) jobs, and its raw"
                 " run as many /bin/true, in flight x ranks at a time",
                 budget);
    snprintf (title, sizeof (title), "throughput vs jobs in flight (%d ranks)",
              o->ranks);
    if (ninflight > 0 &&
        tp_panel (p, title, "jobs in flight", byc, ninflight, true, n) < 0)
        goto nomem;
    snprintf (title, sizeof (title),
              "throughput vs ranks per job (%d in flight)", o->inflight);
    if (nranks > 0 &&
        tp_panel (p, title, "ranks per job", byr, nranks, false, n) < 0)
        goto nomem;
    rc = 0;
    goto out;
nomem:
    errset (err, ENOMEM, "out of memory");
out:
    free (v);
    return rc;
}

/* ---- the benchmark ---- */

/* Which curves "a,b,c" names, as bits of curve_names. -1 if unknown. */
static int parse_curves (const char *s, struct cairn_error *err)
{
    int mask = 0;
    while (*s) {
        size_t len = strcspn (s, ",");
        size_t k = 0;
        while (k < NCURVES && (strlen (curve_names[k]) != len ||
                               strncmp (s, curve_names[k], len)))
            k++;
        if (k == NCURVES)
            return errset (err, EINVAL,
                           "--scale-curves: unknown curve '%.*s' (want"
                           " inflight, ranks, restart, memory, purge)",
                           (int)len, s);
        mask |= 1 << k;
        s += len + (s[len] == ',');
    }
    return mask;
}

static int
list_opt (const char *name, const char *s, long *v, struct cairn_error *err)
{
    int n = bench_parse_list (s, 1, v, SCALE_MAX_POINTS);
    if (n < 0)
        return errset (err, EINVAL,
                       "%s: '%s': want up to %d increasing numbers >= 1", name,
                       s, SCALE_MAX_POINTS);
    return n;
}

struct report *bench_scale (const struct bench_opts *o, struct cairn_error *err)
{
    long inflight[SCALE_MAX_POINTS], ranks[SCALE_MAX_POINTS];
    long live[SCALE_MAX_POINTS], mem[SCALE_MAX_POINTS];
    int ni = 0, nr = 0, nl = 0, nm = 0;
    int mask = parse_curves (o->scale_curves, err);
    struct report *r = NULL;
    struct plot *p = NULL;
    char msg[512];

    if (mask < 0)
        return NULL;
    if (((mask & 1) && (ni = list_opt ("--scale-inflight", o->scale_inflight,
                                       inflight, err)) < 0) ||
        ((mask & 2) &&
         (nr = list_opt ("--scale-ranks", o->scale_ranks, ranks, err)) < 0) ||
        ((mask & 4) &&
         (nl = list_opt ("--scale-live", o->scale_live, live, err)) < 0) ||
        ((mask & 8) &&
         (nm = list_opt ("--scale-mem", o->scale_mem, mem, err)) < 0))
        return NULL;
    if (!(r = report_create ("scale", o)) ||
        (o->plot && !(p = plot_create (o->plot)))) {
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    report_param (r, "curves", json_string (o->scale_curves));
    report_param (r, "jobs", json_integer (o->jobs));
    report_param (r, "ranks", json_integer (o->ranks));
    report_param (r, "inflight", json_integer (o->inflight));
    if (mask & 1)
        report_param (r, "scale_inflight", json_string (o->scale_inflight));
    if (mask & 2)
        report_param (r, "scale_ranks", json_string (o->scale_ranks));
    if (mask & 4)
        report_param (r, "scale_live", json_string (o->scale_live));
    if (mask & 8)
        report_param (r, "scale_mem", json_string (o->scale_mem));
    if (mask & 16)
        report_param (r, "scale_finished", json_integer (o->scale_finished));
    if (o->plot)
        report_param (r, "plot", json_string (o->plot));
    /* the shims of a killed cairnd become ours, to be killed at the end */
    if ((mask & (4 | 8)) && prctl (PR_SET_CHILD_SUBREAPER, 1) < 0) {
        errset (err, errno, "PR_SET_CHILD_SUBREAPER: %s", strerror (errno));
        goto error;
    }
    /* a curve that fails does not lose the others (a full run is long):
     * it is reported as failed, and cairn-bench exits 1 */
    for (int k = 0; k < (int)NCURVES; k++) {
        struct cairn_error cerr = {{0}};
        int rc = 0;
        /* inflight and ranks are measured together, at k == 0 */
        int bits = k == 0 ? 3 : k == 1 ? 0 : 1 << k;
        if (!(mask & bits))
            continue;
        if (k == 0)
            rc = scale_throughput (o, inflight, ni, ranks, nr, r, p, &cerr);
        else if (k == 2)
            rc = scale_restart (o, live, nl, r, p, &cerr);
        else if (k == 3)
            rc = scale_memory (o, mem, nm, r, p, &cerr);
        else if (o->scale_finished > 0)
            rc = scale_purge (o, o->scale_finished, r, p, &cerr);
        if (rc < 0) {
            report_fail (r, "%s: %s", curve_names[k], cerr.text);
            fprintf (stderr, "cairn-bench: scale: %s: %s\n", curve_names[k],
                     cerr.text);
        }
    }
    if (p) {
        struct cairn_error perr = {{0}};
        /* a plot that cannot be drawn costs the run nothing: say why */
        if (plot_draw (p, msg, sizeof (msg), &perr) < 0) {
            report_note (r, "%s", perr.text);
            fprintf (stderr, "cairn-bench: scale: %s\n", perr.text);
        } else
            report_note (r, "%s", msg);
    }
    plot_destroy (p);
    return r;
error:
    plot_destroy (p);
    report_destroy (r);
    return NULL;
}
