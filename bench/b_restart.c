/* b_restart.c - how long a SIGKILLed cairnd takes to come back.
 *
 * K live jobs of N ranks run `sleep 1000`; cairnd is SIGKILLed and started
 * again, and the time from its spawn to its first answer (it replays and
 * reconciles everything before it listens) is the restart time. While it
 * is down the raw cost of the same work is measured: open the journal,
 * read every active job's events, find the processes, pidfd_open each and
 * check its start time in /proc. K grows in steps (10, 100, 1000) on the
 * same daemon so the growth shows. Then a journal holding many finished
 * jobs (written directly, from a real job's events) is restarted with no
 * live job: finished jobs must cost a restart nothing.
 *
 * The benchmark makes itself a child subreaper, so the shims of a killed
 * cairnd become its children: at the end it can find every leftover shim
 * and command and kill their process groups.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "supervise/procfs.h"
#include "journal/journal.h"

/* ---- the raw cost of a restart ---- */

struct rawproc {
    char execid[40];
    pid_t pid;
    unsigned long long start;
};

struct rawscan {
    struct rawproc *v;
    size_t n, cap;
    size_t job_first; /* first entry of the job being read */
    struct journal *j;
    struct cairn_error *err;
};

static int
scan_event (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct rawscan *s = arg;
    json_t *e = json_loadb (line, len, 0, NULL);
    const char *name = json_string_value (json_object_get (e, "name"));
    json_t *ctx = json_object_get (e, "context");
    const char *execid = json_string_value (json_object_get (ctx, "execid"));

    if (name && execid && !strcmp (name, "proc-spawn")) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 1024;
            struct rawproc *v = realloc (s->v, cap * sizeof (*v));
            if (!v) {
                json_decref (e);
                return -1;
            }
            s->v = v;
            s->cap = cap;
        }
        struct rawproc *p = &s->v[s->n++];
        snprintf (p->execid, sizeof (p->execid), "%s", execid);
        p->pid = (pid_t)json_integer_value (json_object_get (ctx, "pid"));
        p->start = (unsigned long long)json_integer_value (
            json_object_get (ctx, "starttime"));
    } else if (name && execid && !strcmp (name, "proc-exit")) {
        for (size_t i = s->job_first; i < s->n; i++) {
            if (!strcmp (s->v[i].execid, execid)) {
                s->v[i] = s->v[--s->n];
                break;
            }
        }
    }
    json_decref (e);
    return 0;
}

static int scan_job (const struct journal_jobinfo *info, void *arg)
{
    struct rawscan *s = arg;
    s->job_first = s->n;
    return journal_read_job (s->j, info->id, 0, scan_event, s, s->err);
}

int restart_floor (struct bd *d,
                   int n,
                   struct report *r,
                   struct cairn_error *err)
{
    double t[BENCH_MAX_REPS];

    if (!d || bd_start (d, NULL, err) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (bd_stop (d, SIGKILL) < 0 || bd_start (d, &t[i], err) < 0)
            return -1;
    }
    report_add (r, "restart, empty journal", "s", t, n);
    return 0;
}

int restart_raw (const char *statedir,
                 double *seconds,
                 size_t *nlive,
                 struct cairn_error *err)
{
    struct rawscan s = {.err = err};
    struct journal_opts jo = {.readonly = true};
    int *fds = NULL, rc = -1;
    size_t live = 0;

    double t0 = bench_now ();
    if (!(s.j = journal_open (statedir, &jo, err)) ||
        journal_foreach_job (s.j, true, scan_job, &s, err) < 0)
        goto out;
    if (!(fds = malloc ((s.n + 1) * sizeof (*fds)))) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s.n; i++) {
        if (procfs_pidfd_verify (NULL, s.v[i].pid, s.v[i].start, &fds[live]) ==
            0)
            live++;
    }
    *seconds = bench_now () - t0;
    *nlive = live;
    rc = 0;
out:
    for (size_t i = 0; i < live; i++)
        close (fds[i]);
    free (fds);
    free (s.v);
    journal_close (s.j);
    return rc;
}

/* ---- cleanup ---- */

/* The most children of one process restart_cleanup() sees at a time. */
#define CLEANUP_MAX 32768

static size_t read_pids (pid_t parent, pid_t *v, size_t max)
{
    char path[64];
    size_t n = 0;
    snprintf (path, sizeof (path), "/proc/%d/task/%d/children", (int)parent,
              (int)parent);
    FILE *f = fopen (path, "re");
    if (!f)
        return 0;
    int pid;
    while (n < max && fscanf (f, "%d", &pid) == 1)
        v[n++] = pid;
    fclose (f);
    return n;
}

/* Kill every process we adopted and reap them all: supervisors of
 * stopped or killed cairnds, their commands (which outlive them), and the
 * commands we inherited as a subreaper from a supervisor already dead.
 * The commands go first, each with its process group, so that none is
 * left running to come to us and keep a blocking wait from returning.
 * Call with no cairnd of ours running. */
void restart_cleanup (void)
{
    static pid_t kids[CLEANUP_MAX], cmds[CLEANUP_MAX];
    size_t n;

    while ((n = read_pids (getpid (), kids, CLEANUP_MAX)) > 0) {
        for (size_t i = 0; i < n; i++) {
            size_t m = read_pids (kids[i], cmds, CLEANUP_MAX);
            for (size_t k = 0; k < m; k++) {
                (void)kill (-cmds[k], SIGKILL); /* the command's group */
                (void)kill (cmds[k], SIGKILL);
            }
            (void)kill (-kids[i], SIGKILL); /* a command we adopted */
            (void)kill (kids[i], SIGKILL);
        }
        while (waitpid (-1, NULL, WNOHANG) > 0 || errno == EINTR)
            ;
        (void)nanosleep (&(struct timespec){0, 1000000}, NULL); /* dying */
    }
}

/* ---- the benchmark ---- */

/* CPU per process while cairnd runs 100 short jobs (shell only,
 * /bin/true) next to whatever is live: cairnd's own (main thread), and in
 * all (cairnd, the shims it reaped and their commands). If anything on the
 * per-event path were O(jobs), the first would grow with the live jobs;
 * the second shows what the spawned processes pay. */
struct probe_result {
    double daemon_ms;
    double all_ms;
};

static int probe (struct bd *d,
                  const struct bench_opts *o,
                  uint64_t id0,
                  struct probe_result *pr,
                  struct cairn_error *err)
{
    int njobs = 100;
    struct submit_result sr;
    struct submit s = {.njobs = njobs,
                       .nranks = o->ranks,
                       .inflight = o->inflight,
                       .argv = bench_true_argv,
                       .id0 = id0};
    struct client *c = client_connect (d->sock, err);
    double self0 = 0, kids0 = 0, self1 = 0, kids1 = 0;
    double procs = (double)njobs * o->ranks;
    if (!c)
        return -1;
    (void)bench_cpu (d->pid, &self0, &kids0);
    double t0 = bench_sched_cpu (d->pid);
    int rc = bench_submit (c, &s, &sr, err);
    double t1 = bench_sched_cpu (d->pid);
    (void)bench_cpu (d->pid, &self1, &kids1);
    client_close (c);
    if (rc < 0)
        return -1;
    pr->daemon_ms = (t1 - t0) * 1e3 / procs;
    pr->all_ms = (self1 - self0 + kids1 - kids0) * 1e3 / procs;
    return 0;
}

static int restart_live (const struct bench_opts *o,
                         struct report *r,
                         struct cairn_error *err)
{
    long k[8];
    int nk = bench_parse_list (o->klist, 1, k, 8), n = o->reps;
    struct bd *d = bd_create (o, "restart", "{}", false, err);
    struct client *c = NULL;
    double t[BENCH_MAX_REPS], raw[BENCH_MAX_REPS], q[BENCH_MAX_REPS];
    double pd0[BENCH_MAX_REPS], pa0[BENCH_MAX_REPS], pd1[BENCH_MAX_REPS];
    double pa1[BENCH_MAX_REPS], q1[BENCH_MAX_REPS], q2[BENCH_MAX_REPS];
    struct probe_result pr;
    char name[128];
    long live = 0;
    int rc = -1;

    if (nk <= 0) {
        errset (err, EINVAL, "--live: '%s': want increasing numbers", o->klist);
        goto out;
    }
    if (restart_floor (d, n, r, err) < 0)
        goto out;
    for (int i = 0; i < n; i++) {
        if (probe (d, o, 1000000000 + 1000 * (uint64_t)i, &pr, err) < 0)
            goto out;
        pd0[i] = pr.daemon_ms;
        pa0[i] = pr.all_ms;
    }
    for (int ki = 0; ki < nk; ki++) {
        struct submit_result sr;
        struct submit s = {.njobs = (int)(k[ki] - live),
                           .nranks = o->ranks,
                           .inflight = 64,
                           .argv = bench_sleep_argv,
                           .id0 = (uint64_t)live + 1,
                           .until_start = true};
        int64_t want = (int64_t)k[ki] * o->ranks;
        /* every command started, not only its shim: a shim that has not
         * yet started its command dies with a SIGKILLed cairnd */
        if (!(c = client_connect (d->sock, err)) ||
            bench_submit (c, &s, &sr, err) < 0 ||
            bd_wait_procs (d, want, err) < 0 ||
            bench_wait_commands ("sleep", want, 300, err) < 0)
            goto out;
        client_close (c);
        c = NULL;
        live = k[ki];
        for (int i = 0; i < n; i++) {
            size_t nlive = 0;
            if (bd_stop (d, SIGKILL) < 0 ||
                restart_raw (d->statedir, &raw[i], &nlive, err) < 0)
                goto out;
            if ((int64_t)nlive != want) {
                errset (err, EIO, "raw: %zu of %lld processes alive", nlive,
                        (long long)want);
                goto out;
            }
            if (bd_start (d, &t[i], err) < 0 ||
                bd_wait_procs (d, want, err) < 0)
                goto out;
            q[i] = t[i] / raw[i];
            if (ki == nk - 1) {
                if (probe (d, o, 2000000000 + 1000 * (uint64_t)i, &pr, err) < 0)
                    goto out;
                pd1[i] = pr.daemon_ms;
                pa1[i] = pr.all_ms;
                q1[i] = pd1[i] / pd0[i];
                q2[i] = pa1[i] / pa0[i];
            }
        }
        snprintf (name, sizeof (name), "restart, %ld live jobs x %d ranks",
                  live, o->ranks);
        report_add (r, name, "s", t, n);
        snprintf (name, sizeof (name), "raw: journal + pidfd/stat, %ld x %d",
                  live, o->ranks);
        report_add (r, name, "s", raw, n);
        snprintf (name, sizeof (name), "restart / raw, %ld x %d", live,
                  o->ranks);
        report_ratio (r, name, q, n, live >= 1000 ? "<=" : NULL, 3);
        if (live >= 1000) {
            snprintf (name, sizeof (name), "restart %ld x %d (seconds)", live,
                      o->ranks);
            report_ratio (r, name, t, n, "<=", 1);
        }
        if (ki == nk - 1) {
            report_add (r, "cairnd CPU per process, no live job", "ms", pd0, n);
            snprintf (name, sizeof (name),
                      "cairnd CPU per process, %ld live jobs", live);
            report_add (r, name, "ms", pd1, n);
            report_add (r, "all CPU per process, no live job", "ms", pa0, n);
            snprintf (name, sizeof (name), "all CPU per process, %ld live jobs",
                      live);
            report_add (r, name, "ms", pa1, n);
            snprintf (name, sizeof (name), "cairnd CPU, %ld live / none", live);
            report_ratio (r, name, q1, n, NULL, 0);
            snprintf (name, sizeof (name), "all CPU, %ld live / none", live);
            report_ratio (r, name, q2, n, NULL, 0);
        }
    }
    rc = 0;
out:
    client_close (c);
    if (d)
        (void)bd_stop (d, SIGTERM);
    restart_cleanup ();
    bd_destroy (d);
    return rc;
}

static int restart_finished (const struct bench_opts *o,
                             struct report *r,
                             struct cairn_error *err)
{
    int n = o->reps;
    char **lines = NULL;
    size_t nlines;
    double t[BENCH_MAX_REPS], g, gen[1];
    char name[128];
    json_t *st = NULL;
    struct bd *d =
        bd_create (o, "restart-finished",
                   "{\"journal\": {\"max-size\": \"64G\"}}", false, err);
    int rc = -1;

    if (!d || sample_job (o, o->ranks, &lines, &nlines, err) < 0)
        goto out;
    double t0 = bench_now ();
    if (sample_fill_journal (d->statedir, lines, nlines, 1, o->finished, err) <
        0)
        goto out;
    g = bench_now () - t0;
    gen[0] = o->finished / g;
    for (int i = 0; i < n; i++) {
        if (bd_start (d, &t[i], err) < 0)
            goto out;
        if (i == 0 && !(st = bd_stats (d, err)))
            goto out;
        if (bd_stop (d, SIGKILL) < 0) {
            errset (err, errno, "kill cairnd: %s", strerror (errno));
            goto out;
        }
    }
    snprintf (name, sizeof (name), "restart, %ld finished jobs, none live",
              o->finished);
    report_add (r, name, "s", t, n);
    snprintf (name, sizeof (name), "restart %ld finished (seconds)",
              o->finished);
    report_ratio (r, name, t, n, "<=", 0.5);
    report_note (r,
                 "finished jobs: %zu events each (a real %d-rank job with"
                 " prolog and epilog), journal %.0f MiB, written at %.0f"
                 " jobs/s without sync",
                 nlines, o->ranks,
                 bd_stat_int (st, "journal.map-used") / 1048576.0, gen[0]);
    rc = 0;
out:
    json_decref (st);
    sample_free (lines);
    bd_destroy (d);
    return rc;
}

struct report *bench_restart (const struct bench_opts *o,
                              struct cairn_error *err)
{
    struct report *r = report_create ("restart", o);
    if (!r) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    report_param (r, "live", json_string (o->klist));
    report_param (r, "ranks", json_integer (o->ranks));
    report_param (r, "finished", json_integer (o->finished));
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0) {
        errset (err, errno, "PR_SET_CHILD_SUBREAPER: %s", strerror (errno));
        goto error;
    }
    if (restart_live (o, r, err) < 0)
        goto error;
    if (o->finished > 0 && restart_finished (o, r, err) < 0)
        goto error;
    return r;
error:
    report_destroy (r);
    return NULL;
}
