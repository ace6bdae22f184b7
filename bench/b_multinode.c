/* b_multinode.c - what one job costs the rank-0 cairnd as the job grows
 * (DESIGN-MULTINODE.md, "Cost at rank 0 of a 4096-node job").
 *
 * A real cairnd with multinode on (local-ranks "0", per-rank prolog and
 * epilog, release-after 0) runs jobs of N ranks, one at a time. Its nodes
 * are played by this process: it holds the node-relay stream, as the
 * cairn-exec module does, and answers every node-exec at once, as a node
 * whose command ends at once would, with a `running` REPORT then an
 * `ended` one (status 0, empty output), each a node-report request on the
 * relay's own connection (as the module sends them). Rank 0's processes
 * (prolog, shell, epilog) are spawned by cairnd itself. Nothing of the
 * fake nodes' work is counted as rank 0's: what is measured is cairnd's
 * (its main thread's CPU, its commits, its journal) and what crosses the
 * relay connection, the traffic rank 0's module would carry over Flux.
 *
 * Per job: commits and journal growth (cairnd's stats before and after),
 * the job's events and their bytes (read back from the journal once
 * cairnd is stopped), messages and bytes both ways on the relay, wall
 * time, cairnd's CPU. Each is reported per rank, so a per-rank cost that
 * stays flat as N grows shows rank 0 does O(N) work per job, and against
 * the same N on one host (multinode off: cairnd spawns all 3N processes
 * itself) in the same repetition, up to --single-max ranks (1024 by
 * default: a one-host job is 3N real processes, and at 4096 ranks that is
 * some 20 s a job on a 2-core machine).
 *
 * Each job is over when its final release has come and every remote
 * process was acknowledged (node-ack) and every report answered, so that
 * a job's messages are all counted in its own figures.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "core/jobspec.h"
#include "journal/journal.h"

#define MN_MAX_SIZES 16
#define MN_STALL 120.0 /* seconds without a message before giving up */

#define MN_CONFIG_PERILOG                                                      \
    "\"release-after\": 0,"                                                    \
    " \"prolog\": {\"command\": [\"/bin/true\"], \"per-rank\": true},"         \
    " \"epilog\": {\"command\": [\"/bin/true\"], \"per-rank\": true}"

static const char *const config_multinode =
    "{" MN_CONFIG_PERILOG ", \"multinode\": {\"local-ranks\": \"0\"}}";
static const char *const config_one_host = "{" MN_CONFIG_PERILOG "}";

/* ---- one daemon, K jobs of N ranks ---- */

/* What one job cost rank 0 (per job; averaged over a run's jobs). */
struct mn_job {
    double wall;     /* start sent .. final release, s */
    double cpu;      /* cairnd's main thread, s */
    double self_cpu; /* this process (the fake nodes), s */
    double commits;
    double data_bytes;  /* journal data-used growth */
    double events;      /* the job's events */
    double event_bytes; /* their text */
    double to_relay;    /* lines rank 0 sent on the relay connection */
    double from_relay;  /* lines it got there (node-reports) */
    double bytes_to;    /* bytes of the lines rank 0 sent on the relay */
    double bytes_from;  /* bytes of those it got there */
    double exec, ack, reask, signal;
    double spawned; /* processes cairnd spawned itself */
};
/* (summed and copied as an array of doubles) */
_Static_assert(sizeof (struct mn_job) % sizeof (double) == 0,
               "struct mn_job holds doubles only");

static double self_cpu (void)
{
    struct rusage ru;
    if (getrusage (RUSAGE_SELF, &ru) < 0)
        return 0;
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static json_t *job_R (int nranks)
{
    char ranks[32], hosts[48];
    snprintf (ranks, sizeof (ranks), "0-%d", nranks - 1);
    snprintf (hosts, sizeof (hosts), "node[0-%d]", nranks - 1);
    return json_pack ("{s:i s:{s:[{s:s s:{s:s}}] s:[s] s:f s:f}}", "version", 1,
                      "execution", "R_lite", "rank", ranks, "children", "core",
                      "0", "nodelist", hosts, "starttime", 0.0, "expiration",
                      0.0);
}

/* The same small environment as the other benchmarks' jobs (submit.c),
 * padded to about pad bytes (--env-bytes) with one more variable: Flux
 * jobs carry their submitter's whole environment, often several KB, and
 * every node-exec carries it. */
static json_t *job_environment (int pad)
{
    json_t *env = json_pack ("{s:s s:s s:s s:s s:s s:s}", "PATH",
                             "/usr/local/bin:/usr/bin:/bin", "HOME",
                             "/home/user", "USER", "user", "SHELL", "/bin/bash",
                             "LANG", "C.UTF-8", "TERM", "xterm-256color");
    char *s = env ? json_dumps (env, JSON_COMPACT) : NULL;
    int have = s ? (int)strlen (s) : 0;
    free (s);
    if (env && pad > have + 16) {
        char *v = malloc ((size_t)(pad - have));
        if (!v) {
            json_decref (env);
            return NULL;
        }
        memset (v, 'x', (size_t)(pad - have - 16));
        v[pad - have - 16] = '\0';
        json_object_set_new (env, "BENCH_PADDING", json_string (v));
        free (v);
    }
    return env;
}

/* Wait until cairnd has forgotten `want` jobs in all (the job's `clean`
 * is committed): the stats after a job then hold all of its commits. */
static json_t *
stats_when_done (struct bd *d, int64_t want, struct cairn_error *err)
{
    double t0 = bench_now ();
    while (bench_now () - t0 < MN_STALL) {
        json_t *st = bd_stats (d, err);
        if (!st || bd_stat_int (st, "jobs-done") >= want)
            return st;
        json_decref (st);
        usleep (1000);
    }
    errset (err, ETIMEDOUT, "cairnd did not finish the job; see %s", d->log);
    return NULL;
}

/* One job on the cairnd d, through m; its figures into *j. ndone: jobs
 * this cairnd finished before. */
static int one_job (struct bd *d,
                    struct mnodes *m,
                    uint64_t id,
                    int64_t ndone,
                    json_t *start,
                    struct mn_job *j,
                    struct cairn_error *err)
{
    json_t *st0 = NULL, *st1 = NULL;
    struct mnodes_counts c0, c1;
    bool failed = false;
    int rc = -1;

    if (!(st0 = bd_stats (d, err)))
        return -1;
    mnodes_counts (m, &c0);
    double cpu0 = bench_sched_cpu (d->pid), self0 = self_cpu ();
    json_object_set_new (start, "id", json_integer ((json_int_t)id));
    if (mnodes_job (m, start, (int64_t)id, MN_STALL, &j->wall, &failed, err) <
            0 ||
        !(st1 = stats_when_done (d, ndone + 1, err))) {
        errprefix (err, "job %llu (see %s)", (unsigned long long)id, d->log);
        goto out;
    }
    if (failed) {
        errset (err, EIO, "job %llu failed; see %s", (unsigned long long)id,
                d->log);
        goto out;
    }
    j->cpu = bench_sched_cpu (d->pid) - cpu0;
    j->self_cpu = self_cpu () - self0;
    mnodes_counts (m, &c1);
    j->commits =
        (double)(bd_stat_int (st1, "commits") - bd_stat_int (st0, "commits"));
    j->data_bytes = (double)(bd_stat_int (st1, "journal.data-used") -
                             bd_stat_int (st0, "journal.data-used"));
    j->spawned =
        (double)(bd_stat_int (st1, "spawned") - bd_stat_int (st0, "spawned"));
    /* rank 0 sends what the nodes read, and reads what they send */
    j->to_relay = (double)(c1.lines_in - c0.lines_in);
    j->from_relay = (double)(c1.lines_out - c0.lines_out);
    j->bytes_to = (double)(c1.bytes_in - c0.bytes_in);
    j->bytes_from = (double)(c1.bytes_out - c0.bytes_out);
    j->exec = (double)(c1.exec - c0.exec);
    j->ack = (double)(c1.ack - c0.ack);
    j->reask = (double)(c1.reask - c0.reask);
    j->signal = (double)(c1.signal - c0.signal);
    rc = 0;
out:
    json_decref (st0);
    json_decref (st1);
    return rc;
}

/* The events of jobs id0..id0+njobs-1, from the journal of a stopped
 * cairnd: count and bytes into j[], and the first job's counts by name. */
struct evcount {
    double n, bytes;
    json_t *names; /* or NULL */
};

static int
count_event (uint64_t id, uint32_t seq, const char *line, size_t len, void *a)
{
    struct evcount *c = a;
    c->n++;
    c->bytes += (double)len;
    if (c->names) { /* name -> [count, bytes] */
        json_t *e = json_loadb (line, len, 0, NULL);
        const char *name = json_string_value (json_object_get (e, "name"));
        json_t *v = name ? json_object_get (c->names, name) : NULL;
        if (name && !v)
            json_object_set_new (c->names, name, v = json_pack ("[i i]", 0, 0));
        if (v) {
            json_int_t n = json_integer_value (json_array_get (v, 0));
            json_int_t b = json_integer_value (json_array_get (v, 1));
            json_array_set_new (v, 0, json_integer (n + 1));
            json_array_set_new (v, 1, json_integer (b + (json_int_t)len));
        }
        json_decref (e);
    }
    return 0;
}

static int read_events (const char *statedir,
                        uint64_t id0,
                        int njobs,
                        struct mn_job *j,
                        json_t *names,
                        struct cairn_error *err)
{
    struct journal_opts jo = {.readonly = true};
    struct journal *jn = journal_open (statedir, &jo, err);
    int rc = -1;

    if (!jn)
        return -1;
    for (int k = 0; k < njobs; k++) {
        struct evcount c = {.names = k == 0 ? names : NULL};
        if (journal_read_job (jn, id0 + (uint64_t)k, 0, count_event, &c, err) <
            0)
            goto out;
        j[k].events = c.n;
        j[k].event_bytes = c.bytes;
    }
    rc = 0;
out:
    journal_close (jn);
    return rc;
}

/* A fresh cairnd (multinode on or off), njobs jobs of nranks ranks, one
 * at a time; *avg gets the per-job averages. names (may be NULL) gets the
 * first job's events counted by name. */
static int mn_run (const struct bench_opts *o,
                   int nranks,
                   bool multinode,
                   int njobs,
                   struct mn_job *avg,
                   json_t *names,
                   struct cairn_error *err)
{
    struct bd *d = NULL;
    struct mnodes *m = NULL;
    struct mn_job *j = calloc ((size_t)njobs, sizeof (*j));
    json_t *env = job_environment (o->env_bytes);
    json_t *js =
        jobspec_create (bench_true_argv, (uint32_t)nranks, "/", env, 0, 0);
    json_t *R = job_R (nranks), *start = NULL;
    int rc = -1;

    memset (avg, 0, sizeof (*avg));
    if (!j || !env || !js || !R ||
        !(start = json_pack ("{s:I s:I s:O s:O}", "id", (json_int_t)1, "userid",
                             (json_int_t)getuid (), "jobspec", js, "R", R))) {
        errset (err, ENOMEM, "cannot build the jobs");
        goto out;
    }
    d = bd_create (o, multinode ? "multinode" : "multinode-1host",
                   multinode ? config_multinode : config_one_host, false, err);
    if (!d || bd_start (d, NULL, err) < 0 ||
        !(m = mnodes_create (d->sock, multinode, err)))
        goto out;
    for (int k = 0; k < njobs; k++) {
        if (one_job (d, m, 1 + (uint64_t)k, k, start, &j[k], err) < 0)
            goto out;
        double want = multinode ? 3 : 3.0 * nranks;
        if (j[k].spawned != want) {
            errset (err, EIO,
                    "job %d spawned %.0f processes here, not %.0f; see %s",
                    k + 1, j[k].spawned, want, d->log);
            goto out;
        }
    }
    mnodes_destroy (m);
    m = NULL;
    if (bd_stop (d, SIGTERM) < 0) {
        errset (err, errno, "stopping cairnd: %s", strerror (errno));
        goto out;
    }
    if (read_events (d->statedir, 1, njobs, j, names, err) < 0)
        goto out;
    for (int k = 0; k < njobs; k++) {
        double *s = (double *)avg, *v = (double *)&j[k];
        for (size_t f = 0; f < sizeof (*avg) / sizeof (double); f++)
            s[f] += v[f] / njobs;
    }
    rc = 0;
out:
    mnodes_destroy (m);
    bd_destroy (d);
    json_decref (start);
    json_decref (env);
    json_decref (js);
    json_decref (R);
    free (j);
    return rc;
}

/* ---- the benchmark ---- */

static int parse_sizes (const char *s, long *v, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        long x = strtol (s, &end, 10);
        if (end == s || x < 2 || x > 1000000 || (n > 0 && x <= v[n - 1]))
            return -1;
        v[n++] = x;
        if (*end && *end != ',')
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : n;
}

/* Samples of one figure, one per repetition. */
typedef double samples_t[BENCH_MAX_REPS];

struct size_figs {
    samples_t mn[sizeof (struct mn_job) / sizeof (double)];
    samples_t one[sizeof (struct mn_job) / sizeof (double)];
};

#define FIELD(name) (offsetof (struct mn_job, name) / sizeof (double))

static void row (struct report *r,
                 long n,
                 const char *what,
                 const char *unit,
                 const double *v,
                 int reps)
{
    char name[128];
    snprintf (name, sizeof (name), "N=%ld %s", n, what);
    report_add (r, name, unit, v, (size_t)reps);
}

/* samples[i] = s[i] * scale / n */
static const double *
per (const samples_t s, double scale, double n, int reps, samples_t out)
{
    for (int i = 0; i < reps; i++)
        out[i] = s[i] * scale / n;
    return out;
}

/* The first job's events by name: those written for every rank as a
 * count per rank, the others per job; with their mean size. */
static void names_note (struct report *r, long n, json_t *names)
{
    char buf[2][512];
    size_t off[2] = {0, 0};
    const char *k;
    json_t *v;
    json_object_foreach (names, k, v)
    {
        double c = (double)json_integer_value (json_array_get (v, 0));
        double b = (double)json_integer_value (json_array_get (v, 1));
        int pr = c >= (double)n / 2; /* per rank */
        int w = snprintf (buf[pr] + off[pr], sizeof (buf[pr]) - off[pr],
                          "%s%s %.3g x %.0f B", off[pr] ? ", " : "", k,
                          pr ? c / (double)n : c, b / c);
        if (w > 0 && (size_t)w < sizeof (buf[pr]) - off[pr])
            off[pr] += (size_t)w;
    }
    report_note (r, "N=%ld multinode, events per rank: %s; per job: %s", n,
                 off[1] ? buf[1] : "-", off[0] ? buf[0] : "-");
}

static void report_size (
    struct report *r, long n, const struct size_figs *f, bool one, int reps)
{
    samples_t t;
    const double N = (double)n;
    const samples_t *mn = f->mn, *oh = f->one;

    row (r, n, "multinode: wall time per job", "s", mn[FIELD (wall)], reps);
    row (r, n, "multinode: wall time per rank", "ms",
         per (mn[FIELD (wall)], 1e3, N, reps, t), reps);
    row (r, n, "multinode: cairnd CPU per rank", "ms",
         per (mn[FIELD (cpu)], 1e3, N, reps, t), reps);
    row (r, n, "multinode: commits per rank", "commits",
         per (mn[FIELD (commits)], 1, N, reps, t), reps);
    row (r, n, "multinode: journal events per rank", "events",
         per (mn[FIELD (events)], 1, N, reps, t), reps);
    row (r, n, "multinode: event bytes per rank", "bytes",
         per (mn[FIELD (event_bytes)], 1, N, reps, t), reps);
    row (r, n, "multinode: journal data-used per rank", "bytes",
         per (mn[FIELD (data_bytes)], 1, N, reps, t), reps);
    row (r, n, "multinode: msgs rank 0 -> relay per rank", "msgs",
         per (mn[FIELD (to_relay)], 1, N, reps, t), reps);
    row (r, n, "multinode: msgs relay -> rank 0 per rank", "msgs",
         per (mn[FIELD (from_relay)], 1, N, reps, t), reps);
    row (r, n, "multinode: bytes rank 0 -> relay per rank", "bytes",
         per (mn[FIELD (bytes_to)], 1, N, reps, t), reps);
    row (r, n, "multinode: bytes relay -> rank 0 per rank", "bytes",
         per (mn[FIELD (bytes_from)], 1, N, reps, t), reps);
    row (r, n, "multinode: fake nodes' CPU per rank", "ms",
         per (mn[FIELD (self_cpu)], 1e3, N, reps, t), reps);
    if (!one)
        return;
    row (r, n, "one host: wall time per job", "s", oh[FIELD (wall)], reps);
    row (r, n, "one host: cairnd CPU per rank", "ms",
         per (oh[FIELD (cpu)], 1e3, N, reps, t), reps);
    row (r, n, "one host: commits per rank", "commits",
         per (oh[FIELD (commits)], 1, N, reps, t), reps);
    row (r, n, "one host: journal events per rank", "events",
         per (oh[FIELD (events)], 1, N, reps, t), reps);
    row (r, n, "one host: event bytes per rank", "bytes",
         per (oh[FIELD (event_bytes)], 1, N, reps, t), reps);
}

static void ratio (struct report *r,
                   const char *name,
                   const double *a,
                   const double *b,
                   int reps)
{
    samples_t q;
    for (int i = 0; i < reps; i++)
        q[i] = a[i] / b[i];
    report_ratio (r, name, q, (size_t)reps, NULL, 0);
}

/* What each N costs per rank against the same N on one host, and how the
 * per-rank cost of the largest N compares with the smallest's. */
static void report_ratios (struct report *r,
                           const long *sizes,
                           int ns,
                           const struct size_figs *f,
                           int single_max,
                           int reps)
{
    static const struct {
        size_t field;
        const char *what;
    } q[] = {
        {FIELD (wall), "wall time"},
        {FIELD (cpu), "cairnd CPU"},
        {FIELD (commits), "commits"},
        {FIELD (events), "journal events"},
        {FIELD (event_bytes), "event bytes"},
    };
    static const struct {
        size_t field;
        const char *what;
    } g[] = {
        {FIELD (wall), "wall time"},
        {FIELD (cpu), "cairnd CPU"},
        {FIELD (commits), "commits"},
        {FIELD (event_bytes), "event bytes"},
        {FIELD (to_relay), "msgs to relay"},
    };
    char name[128];

    for (int s = 0; s < ns; s++) {
        if (sizes[s] > single_max)
            continue;
        for (size_t k = 0; k < sizeof (q) / sizeof (q[0]); k++) {
            snprintf (name, sizeof (name), "N=%ld %s: multinode / one host",
                      sizes[s], q[k].what);
            ratio (r, name, f[s].mn[q[k].field], f[s].one[q[k].field], reps);
        }
    }
    if (ns < 2)
        return;
    long lo = sizes[0], hi = sizes[ns - 1];
    for (size_t k = 0; k < sizeof (g) / sizeof (g[0]); k++) {
        samples_t a, b;
        per (f[ns - 1].mn[g[k].field], 1, (double)hi, reps, a);
        per (f[0].mn[g[k].field], 1, (double)lo, reps, b);
        snprintf (name, sizeof (name), "%s per rank, N=%ld / N=%ld", g[k].what,
                  hi, lo);
        ratio (r, name, a, b, reps);
    }
}

static void report_notes (struct report *r,
                          const long *sizes,
                          int ns,
                          const struct size_figs *f,
                          json_t **names,
                          int njobs,
                          int single_max,
                          int reps)
{
    for (int s = 0; s < ns; s++)
        names_note (r, sizes[s], names[s]);
    for (int s = 0; s < ns; s++) {
        const samples_t *mn = f[s].mn;
        double reask = bench_median (mn[FIELD (reask)], (size_t)reps);
        double sig = bench_median (mn[FIELD (signal)], (size_t)reps);
        double ex = bench_median (mn[FIELD (exec)], (size_t)reps);
        double ack = bench_median (mn[FIELD (ack)], (size_t)reps);
        double to = bench_median (mn[FIELD (to_relay)], (size_t)reps);
        double from = bench_median (mn[FIELD (from_relay)], (size_t)reps);
        report_note (r,
                     "N=%ld: per job, rank 0 -> relay: %.0f node-exec"
                     " (%.0f of them asked again: the heartbeat), %.0f"
                     " node-ack, %.0f node-signal, %.0f answers to"
                     " node-reports; relay -> rank 0: %.0f node-reports",
                     sizes[s], ex, reask, ack, sig, to - ex - ack - sig, from);
    }
    report_note (r,
                 "%d job(s) of N ranks one after another per run, each run"
                 " on a fresh cairnd; per-rank figures are per job / N",
                 njobs);
    report_note (r, "multinode: rank 0 runs its own prolog, shell and epilog"
                    " (3 spawns a job); every other rank's 3 processes go to"
                    " the fake nodes, answered at once (running, then ended"
                    " with status 0); messages count both the node-relay stream"
                    " and the answers to node-reports");
    if (single_max < sizes[0])
        report_note (r, "one host: not run (--single-max %d)", single_max);
    else
        report_note (r,
                     "one host: the same jobs with multinode off, cairnd"
                     " spawning all 3N processes itself; run for N <= %d"
                     " only (--single-max)%s",
                     single_max,
                     sizes[ns - 1] > single_max
                         ? ": a larger one-host job is more processes than"
                           " this benchmark's time allows"
                         : "");
}

struct report *bench_multinode (const struct bench_opts *o,
                                struct cairn_error *err)
{
    long sizes[MN_MAX_SIZES];
    int ns = parse_sizes (o->sizes, sizes, MN_MAX_SIZES), reps = o->reps;
    int njobs = o->jobs_given ? o->jobs : 2;
    struct size_figs *f = NULL;
    json_t **names = NULL;
    struct report *r = report_create ("multinode", o);

    if (!r) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (ns <= 0) {
        errset (err, EINVAL, "--sizes: '%s': want increasing numbers >= 2",
                o->sizes);
        goto error;
    }
    if (!(f = calloc ((size_t)ns, sizeof (*f))) ||
        !(names = calloc ((size_t)ns, sizeof (*names)))) {
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    report_param (r, "sizes", json_string (o->sizes));
    report_param (r, "jobs", json_integer (njobs));
    report_param (r, "single_max", json_integer (o->single_max));
    report_param (r, "env_bytes", json_integer (o->env_bytes));
    for (int s = 0; s < ns; s++)
        if (!(names[s] = json_object ())) {
            errset (err, ENOMEM, "out of memory");
            goto error;
        }
    /* sizes inside each repetition, both sides next to each other, so
     * that a noisy minute moves one repetition, not one size */
    for (int i = 0; i < reps; i++) {
        for (int s = 0; s < ns; s++) {
            struct mn_job a, b = {0};
            bool one = sizes[s] <= o->single_max;
            if (mn_run (o, (int)sizes[s], true, njobs, &a,
                        i == 0 ? names[s] : NULL, err) < 0 ||
                (one &&
                 mn_run (o, (int)sizes[s], false, njobs, &b, NULL, err) < 0))
                goto error;
            for (size_t k = 0; k < sizeof (a) / sizeof (double); k++) {
                f[s].mn[k][i] = ((double *)&a)[k];
                f[s].one[k][i] = ((double *)&b)[k];
            }
        }
    }
    for (int s = 0; s < ns; s++)
        report_size (r, sizes[s], &f[s], sizes[s] <= o->single_max, reps);
    report_ratios (r, sizes, ns, f, o->single_max, reps);
    report_notes (r, sizes, ns, f, names, njobs, o->single_max, reps);
    for (int s = 0; s < ns; s++)
        json_decref (names[s]);
    free (names);
    free (f);
    return r;
error:
    for (int s = 0; names && s < ns; s++)
        json_decref (names[s]);
    free (names);
    free (f);
    report_destroy (r);
    return NULL;
}
