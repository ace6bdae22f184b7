/* scale_live.c - the scale curves that need live processes: restart time
 * and resident memory, as cairnd holds more and more of them.
 *
 * Both grow one cairnd point by point (10, 100, 1000, 10000 processes by
 * default), as `restart` does: starting 10,000 live processes takes
 * minutes here, starting them again for every point would take far
 * more. A live process is a rank of a job running `sleep 1000`, shell
 * only: jobs of o->ranks ranks, and one smaller job for the remainder, so
 * that every point has exactly the processes it names.
 *
 * Each live process is two processes on the machine (its shim and its
 * command) and a pidfd in cairnd, and in this process during the raw
 * restart scan; bench_capacity() says beforehand whether the machine can
 * hold a point, and a point it cannot is skipped with the reason.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"
#include "scale.h"

/* cairnd's default limits.max-jobs (10,000) would stop 1-rank points */
#define LIVE_CONFIG "{\"limits\": {\"max-jobs\": 1000000}}"

/* Grow d's live processes from `from` to `to`, ids from *next_id on.
 * Sets *seconds to the time until cairnd watches all of them. Each
 * submission has a connection of its own: a start request's stream stays
 * open while its job lives, so its matchtag may not be used again on the
 * same connection. */
static int live_grow (struct bd *d,
                      int ranks,
                      long from,
                      long to,
                      uint64_t *next_id,
                      double *seconds,
                      struct cairn_error *err)
{
    long add = to - from;
    struct submit s[2] = {
        {.njobs = (int)(add / ranks), .nranks = ranks},
        {.njobs = add % ranks ? 1 : 0, .nranks = (int)(add % ranks)},
    };
    struct submit_result sr;
    double t0 = bench_now ();

    for (int i = 0; i < 2; i++) {
        if (s[i].njobs == 0)
            continue;
        s[i].inflight = 64;
        s[i].argv = bench_sleep_argv;
        s[i].id0 = *next_id;
        s[i].until_start = true;
        struct client *c = client_connect (d->sock, err);
        if (!c)
            return -1;
        int rc = bench_submit (c, &s[i], &sr, err);
        client_close (c);
        if (rc < 0)
            return -1;
        if (sr.failed > 0)
            return errset (err, EIO, "%d live jobs failed; see %s", sr.failed,
                           d->log);
        *next_id += (uint64_t)s[i].njobs;
    }
    /* all shims watched, and all their commands started: a SIGKILL now
     * leaves `to` processes to find, not shims that die with cairnd */
    if (bd_wait_procs (d, to, err) < 0 ||
        bench_wait_commands ("sleep", to, 300, err) < 0)
        return -1;
    *seconds = bench_now () - t0;
    return 0;
}

/* Can the machine hold `to` live processes, `from` of them running? If
 * not, note why in r. */
static bool live_fits (struct report *r, const char *curve, long from, long to)
{
    char why[256];
    if (bench_capacity (to, to - from, why, sizeof (why)))
        return true;
    report_note (r,
                 "%s: %ld live processes skipped, the machine cannot"
                 " hold them: %s",
                 curve, to, why);
    fprintf (stderr, "cairn-bench: scale: %s: %ld skipped: %s\n", curve, to,
             why);
    return false;
}

static void live_stop (struct bd *d)
{
    if (d)
        (void)bd_stop (d, SIGTERM);
    restart_cleanup ();
    bd_destroy (d);
}

/* ---- restart ---- */

int scale_restart (const struct bench_opts *o,
                   const long *live,
                   int np,
                   struct report *r,
                   struct plot *p,
                   struct cairn_error *err)
{
    int n = o->reps, done = 0;
    struct bd *d = bd_create (o, "scale-restart", LIVE_CONFIG, false, err);
    double t[BENCH_MAX_REPS], raw[BENCH_MAX_REPS], q[BENCH_MAX_REPS];
    double x[SCALE_MAX_POINTS], mq[SCALE_MAX_POINTS];
    double mt[SCALE_MAX_POINTS], mraw[SCALE_MAX_POINTS];
    double grow;
    char name[128];
    uint64_t next_id = 1;
    long now = 0;
    int rc = -1;

    if (restart_floor (d, n, r, err) < 0)
        goto out;
    for (int k = 0; k < np; k++) {
        if (!live_fits (r, "restart", now, live[k]))
            break;
        if (live_grow (d, o->ranks, now, live[k], &next_id, &grow, err) < 0)
            goto out;
        now = live[k];
        fprintf (stderr,
                 "cairn-bench: scale: %ld live processes started in"
                 " %.2f s\n",
                 now, grow);
        for (int i = 0; i < n; i++) {
            size_t nlive = 0;
            if (bd_stop (d, SIGKILL) < 0) {
                errset (err, errno, "kill cairnd: %s", strerror (errno));
                goto out;
            }
            /* a shim that ended is a zombie of ours (we adopt them), and
             * a zombie looks alive to pidfd_open and /proc: reap them as
             * init would. No cairnd of ours runs to be reaped here. */
            while (waitpid (-1, NULL, WNOHANG) > 0)
                ;
            if (restart_raw (d->statedir, &raw[i], &nlive, err) < 0)
                goto out;
            if ((long)nlive != now) {
                errset (err, EIO, "raw: %zu of %ld processes alive", nlive,
                        now);
                goto out;
            }
            if (bd_start (d, &t[i], err) < 0 || bd_wait_procs (d, now, err) < 0)
                goto out;
            q[i] = t[i] / raw[i];
        }
        snprintf (name, sizeof (name), "restart, %ld live processes", now);
        mt[done] = report_add (r, name, "s", t, n);
        snprintf (name, sizeof (name), "raw: journal + pidfd/stat, %ld", now);
        mraw[done] = report_add (r, name, "s", raw, n);
        snprintf (name, sizeof (name), "restart / raw, %ld live processes",
                  now);
        mq[done] = report_ratio (r, name, q, n, now >= 10000 ? "<=" : NULL, 2);
        x[done++] = (double)now;
        report_note (r,
                     "restart: %ld live processes (jobs of %d ranks running"
                     " sleep) took %.2f s to start",
                     now, o->ranks, grow);
    }
    report_note (r,
                 "restart: time from cairnd's spawn to its first answer after"
                 " a SIGKILL, against the raw scan while it is down (open the"
                 " journal, read and parse the active jobs' events,"
                 " pidfd_open + /proc/PID/stat per process)");
    if (p && done > 0 &&
        (plot_panel (p, "restart vs live processes", "live processes",
                     "restart / raw", true, true) < 0 ||
         plot_curve (p, "restart / raw scan", x, mq, done, false) < 0 ||
         scale_plot_target (p, x[0], x[done - 1], 2) < 0 ||
         plot_panel (p, "restart time vs live processes", "live processes",
                     "seconds", true, true) < 0 ||
         plot_curve (p, "cairnd restart", x, mt, done, false) < 0 ||
         plot_curve (p, "raw: journal + pidfd/stat", x, mraw, done, false) <
             0)) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    rc = 0;
out:
    live_stop (d);
    return rc;
}

/* ---- memory ---- */

static int rss (struct bd *d, long *kib, long *anon, struct cairn_error *err)
{
    if (bench_rss (d->pid, kib, anon) < 0)
        return errset (err, errno, "/proc/%d/status: %s", (int)d->pid,
                       strerror (errno));
    return 0;
}

int scale_memory (const struct bench_opts *o,
                  const long *ranks,
                  int np,
                  struct report *r,
                  struct plot *p,
                  struct cairn_error *err)
{
    struct bd *d = bd_create (o, "scale-memory", LIVE_CONFIG, false, err);
    double x[SCALE_MAX_POINTS], pr[SCALE_MAX_POINTS], pa[SCALE_MAX_POINTS];
    double mr[SCALE_MAX_POINTS], ma[SCALE_MAX_POINTS];
    double v, grow;
    long idle, idle_anon, kib, anon, now = 0, prev_kib, prev_anon;
    uint64_t next_id = 1;
    char name[128];
    int done = 0, rc = -1;

    if (!d || bd_start (d, NULL, err) < 0 ||
        rss (d, &idle, &idle_anon, err) < 0)
        goto out;
    prev_kib = idle;
    prev_anon = idle_anon;
    v = (double)idle;
    report_add (r, "cairnd idle VmRSS", "KiB", &v, 1);
    v = (double)idle_anon;
    report_add (r, "cairnd idle RssAnon", "KiB", &v, 1);
    for (int k = 0; k < np; k++) {
        if (!live_fits (r, "memory", now, ranks[k]))
            break;
        if (live_grow (d, o->ranks, now, ranks[k], &next_id, &grow, err) < 0 ||
            rss (d, &kib, &anon, err) < 0)
            goto out;
        now = ranks[k];
        x[done] = (double)now;
        pr[done] = (double)(kib - idle) / now;
        pa[done] = (double)(anon - idle_anon) / now;
        v = (double)kib;
        snprintf (name, sizeof (name), "%ld active ranks: VmRSS", now);
        report_add (r, name, "KiB", &v, 1);
        v = (double)anon;
        snprintf (name, sizeof (name), "%ld active ranks: RssAnon", now);
        report_add (r, name, "KiB", &v, 1);
        snprintf (name, sizeof (name), "VmRSS growth per rank, %ld ranks (KiB)",
                  now);
        report_ratio (r, name, &pr[done], 1, now >= 1000 ? "<=" : NULL, 2);
        snprintf (name, sizeof (name),
                  "RssAnon growth per rank, %ld ranks (KiB)", now);
        report_ratio (r, name, &pa[done], 1, NULL, 0);
        /* the slope from the previous point: what one more rank costs at
         * this scale, without the start-up part */
        long added = now - (done ? (long)x[done - 1] : 0);
        mr[done] = (double)(kib - prev_kib) / added;
        ma[done] = (double)(anon - prev_anon) / added;
        snprintf (name, sizeof (name), "VmRSS per added rank, %ld..%ld (KiB)",
                  done ? (long)x[done - 1] : 0, now);
        report_ratio (r, name, &mr[done], 1, NULL, 0);
        snprintf (name, sizeof (name), "RssAnon per added rank, %ld..%ld (KiB)",
                  done ? (long)x[done - 1] : 0, now);
        report_ratio (r, name, &ma[done], 1, NULL, 0);
        prev_kib = kib;
        prev_anon = anon;
        done++;
    }
    report_note (r,
                 "memory: one cairnd grown from idle to each count of active"
                 " ranks (jobs of %d ranks running sleep, shell only),"
                 " measured once per point: growth per rank = (RSS - idle"
                 " RSS) / ranks, the jobs' fixed part shared by their ranks"
                 " (the target applies from 1000 ranks on, where start-up"
                 " effects are amortized); per added rank = the slope from"
                 " the previous point; VmRSS includes the journal pages"
                 " cairnd touched, RssAnon is its heap",
                 o->ranks);
    if (p && done > 0 &&
        (plot_panel (p, "memory per active rank", "active ranks",
                     "KiB per rank", true, true) < 0 ||
         plot_curve (p, "VmRSS", x, pr, done, false) < 0 ||
         plot_curve (p, "RssAnon", x, pa, done, false) < 0 ||
         plot_curve (p, "VmRSS per added rank", x, mr, done, false) < 0 ||
         plot_curve (p, "RssAnon per added rank", x, ma, done, false) < 0 ||
         scale_plot_target (p, x[0], x[done - 1], 2) < 0)) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    rc = 0;
out:
    live_stop (d);
    return rc;
}
