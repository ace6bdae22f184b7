/* b_soak.c - does cairnd keep its rate as its history grows?
 *
 * One state dir and one cairnd for the whole benchmark: run after run,
 * the node keeps its journal, its exit dir and whatever it holds in
 * memory, as a node does in production between restarts. Each run is a
 * `throughput` run with a per-rank prolog and epilog (tp_run_on), just
 * after a raw /bin/true run of the same processes and concurrency, so
 * that the machine's own drift over the benchmark (other users, the page
 * cache, the disk) is measured next to cairn's. The first and the last
 * run are compared for both.
 *
 * What the node accumulates is reported after each run too: cairnd's
 * resident memory, the jobs it still holds, the journal's size and the
 * files in the state dir. A leak shows there before it shows in a rate.
 */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static long nfiles;

static int
count_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_F || flag == FTW_SL)
        nfiles++;
    return 0;
}

/* Files (not directories) under path, or -1 if it cannot be walked. */
static long count_files (const char *path)
{
    nfiles = 0;
    if (nftw (path, count_one, 32, FTW_PHYS) < 0)
        return -1;
    return nfiles;
}

/* last / first, and the median of the last 3 over that of the first 3. */
static void drift (const double *v, int n, double *last_first, double *ends)
{
    *last_first = v[n - 1] / v[0];
    *ends = n >= 6 ? bench_median (v + n - 3, 3) / bench_median (v, 3) : NAN;
}

struct report *bench_soak (const struct bench_opts *o, struct cairn_error *err)
{
    int n = o->soak_runs, total = o->jobs * o->ranks * 3;
    int conc = o->inflight * o->ranks;
    double rt[BENCH_MAX_REPS], pp[BENCH_MAX_REPS], eff[BENCH_MAX_REPS];
    double ct[BENCH_MAX_REPS], pu[BENCH_MAX_REPS], pd[BENCH_MAX_REPS];
    double rss[BENCH_MAX_REPS], anon[BENCH_MAX_REPS], held[BENCH_MAX_REPS];
    double jmib[BENCH_MAX_REPS], files[BENCH_MAX_REPS], pw[BENCH_MAX_REPS];
    double q[6], e[6];
    struct report *r = report_create ("soak", o);
    struct bd *d = NULL;
    json_t *st = NULL;

    if (!r) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (n < 2 || n > BENCH_MAX_REPS) {
        errset (err, EINVAL, "soak: --soak-runs must be 2..%d", BENCH_MAX_REPS);
        goto error;
    }
    /* the table's header counts the runs: its medians are over them */
    report_param (r, "reps", json_integer (n));
    report_param (r, "runs", json_integer (n));
    report_param (r, "jobs", json_integer (o->jobs));
    report_param (r, "ranks", json_integer (o->ranks));
    report_param (r, "inflight", json_integer (o->inflight));
    if (!(d = bd_create (o, "soak", BENCH_PERILOG_CONFIG, false, err)) ||
        bd_start (d, NULL, err) < 0)
        goto error;
    for (int i = 0; i < n; i++) {
        struct raw_result t;
        struct tp_result a;
        long v, an;
        if (raw_spawn_rate (bench_true_argv, total, conc, &t, err) < 0 ||
            tp_run_on (d, o, true, 1 + (uint64_t)i * o->jobs, &a, err) < 0)
            goto error;
        if (bench_rss (d->pid, &v, &an) < 0) {
            errset (err, errno, "/proc/%d/status: %s", (int)d->pid,
                    strerror (errno));
            goto error;
        }
        json_decref (st);
        if (!(st = bd_stats (d, err)))
            goto error;
        rt[i] = t.rate;
        pp[i] = a.procs_per_s;
        eff[i] = pp[i] / rt[i];
        ct[i] = t.cpu * 1e3;
        pu[i] = a.cpu_per_proc * 1e3;
        pd[i] = a.daemon_per_proc * 1e3;
        pw[i] = a.daemon_all_per_proc * 1e3;
        rss[i] = (double)v;
        anon[i] = (double)an;
        held[i] = (double)bd_stat_int (st, "jobs");
        jmib[i] = bd_stat_int (st, "journal.map-used") / 1048576.0;
        files[i] = (double)count_files (d->root);
        fprintf (stderr,
                 "cairn-bench: soak: run %d/%d: raw %.0f, cairn %.0f procs/s\n",
                 i + 1, n, rt[i], pp[i]);
    }
    report_add (r, "raw: spawn+reap /bin/true", "procs/s", rt, n);
    report_add (r, "cairn: prolog+shell+epilog, processes", "procs/s", pp, n);
    report_add (r, "CPU per process: raw /bin/true", "ms", ct, n);
    report_add (r, "CPU per process: cairn perilog, all", "ms", pu, n);
    report_add (r, "CPU per process: cairnd loop thread", "ms", pd, n);
    report_add (r, "CPU per process: cairnd all threads", "ms", pw, n);
    report_add (r, "cairnd VmRSS after the run", "KiB", rss, n);
    report_add (r, "cairnd RssAnon after the run", "KiB", anon, n);
    report_add (r, "jobs cairnd holds after the run", "jobs", held, n);
    report_add (r, "journal map used after the run", "MiB", jmib, n);
    report_add (r, "files under the state dir after the run", "files", files,
                n);
    report_ratio (r, "efficiency per run (cairn / raw true)", eff, n, NULL, 0);
    drift (pp, n, &q[0], &e[0]);
    drift (rt, n, &q[1], &e[1]);
    drift (eff, n, &q[2], &e[2]);
    drift (pd, n, &q[3], &e[3]);
    drift (pu, n, &q[4], &e[4]);
    report_ratio (r, "cairn procs/s, last / first run", &q[0], 1, ">=", 0.9);
    report_ratio (r, "raw procs/s, last / first run (machine drift)", &q[1], 1,
                  NULL, 0);
    report_ratio (r, "efficiency, last / first run", &q[2], 1, NULL, 0);
    report_ratio (r, "cairnd CPU per process, last / first run", &q[3], 1, NULL,
                  0);
    report_ratio (r, "all CPU per process, last / first run", &q[4], 1, NULL,
                  0);
    if (n >= 6) {
        report_ratio (r, "cairn procs/s, last 3 / first 3 (medians)", &e[0], 1,
                      NULL, 0);
        report_ratio (r, "raw procs/s, last 3 / first 3 (medians)", &e[1], 1,
                      NULL, 0);
    }
    report_note (r,
                 "one cairnd and one state dir for all %d runs; each run:"
                 " %d jobs x %d ranks with per-rank prolog and epilog"
                 " (%d processes, %d jobs in flight), after a raw run of as"
                 " many /bin/true, %d at a time",
                 n, o->jobs, o->ranks, total, o->inflight, conc);
    report_note (r,
                 "the runs column lists run 1 to run %d in order; the"
                 " median is over the runs",
                 n);
    report_note (r,
                 "ids keep growing: %d finished jobs in the journal at"
                 " the end",
                 n * o->jobs);
    bd_destroy (d);
    json_decref (st);
    return r;
error:
    bd_destroy (d);
    json_decref (st);
    report_destroy (r);
    return NULL;
}
