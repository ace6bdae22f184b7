/* rawpar.c - the machine's parallel spawn limit, and running the whole
 * benchmark on fewer CPUs.
 *
 * One spawn loop (raw.c) is one thread's limit: on a node with many cores
 * the machine spawns and reaps several times as many processes a second.
 * The honest ceiling for cairn is that parallel figure: one loop per CPU
 * the benchmark may use, each with its share of the processes and of the
 * concurrency, all released at once, timed from the release to the last
 * loop's end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

int bench_ncpus (void)
{
    cpu_set_t set;

    if (sched_getaffinity (0, sizeof (set), &set) < 0)
        return 1;
    int n = CPU_COUNT (&set);
    return n > 0 ? n : 1;
}

int bench_limit_cpus (int n, struct cairn_error *err)
{
    cpu_set_t set, keep;
    int have = 0;

    if (sched_getaffinity (0, sizeof (set), &set) < 0)
        return errset (err, errno, "sched_getaffinity: %s", strerror (errno));
    if (n > CPU_COUNT (&set))
        return errset (err, EINVAL, "--cpus %d: only %d CPUs are allowed here",
                       n, CPU_COUNT (&set));
    CPU_ZERO (&keep);
    for (int c = 0; c < CPU_SETSIZE && have < n; c++) {
        if (CPU_ISSET (c, &set)) {
            CPU_SET (c, &keep);
            have++;
        }
    }
    if (sched_setaffinity (0, sizeof (keep), &keep) < 0)
        return errset (err, errno, "sched_setaffinity: %s", strerror (errno));
    return 0;
}

/* One loop's share of n things split over k loops. */
static int share (int n, int k, int i)
{
    return n / k + (i < n % k ? 1 : 0);
}

int raw_spawn_parallel (char *const argv[],
                        int total,
                        int conc,
                        int nloops,
                        struct raw_result *res,
                        struct cairn_error *err)
{
    int go[2] = {-1, -1}, ready[2] = {-1, -1}, rc = -1, started = 0;
    pid_t *pids = calloc (nloops, sizeof (*pids));
    double cpu0 = bench_children_cpu ();

    if (!pids)
        return errset (err, ENOMEM, "out of memory");
    if (nloops > conc)
        nloops = conc; /* each loop keeps at least one process running */
    if (pipe2 (go, O_CLOEXEC) < 0 || pipe2 (ready, O_CLOEXEC) < 0) {
        errset (err, errno, "pipe: %s", strerror (errno));
        goto out;
    }
    for (int i = 0; i < nloops; i++) {
        pid_t pid = fork ();
        if (pid < 0) {
            errset (err, errno, "fork: %s", strerror (errno));
            goto out;
        }
        if (pid == 0) {
            struct raw_result r;
            struct cairn_error e;
            char c;
            close (go[1]);
            close (ready[0]);
            (void)!write (ready[1], "r", 1);
            if (read (go[0], &c, 1) != 0)
                _exit (3);
            _exit (raw_spawn_rate (argv, share (total, nloops, i),
                                   share (conc, nloops, i), &r, &e) < 0
                       ? 1
                       : 0);
        }
        pids[started++] = pid;
    }
    close (ready[1]);
    ready[1] = -1;
    for (int i = 0; i < started; i++) {
        char c;
        if (read (ready[0], &c, 1) != 1) {
            errset (err, EIO, "a spawn loop died before the start");
            goto out;
        }
    }
    double t0 = bench_now ();
    close (go[1]); /* EOF: every loop starts at once */
    go[1] = -1;
    int failed = 0;
    for (int i = 0; i < started; i++) {
        int st;
        if (waitpid (pids[i], &st, 0) < 0 || !WIFEXITED (st) ||
            WEXITSTATUS (st) != 0)
            failed++;
        pids[i] = 0;
    }
    double t = bench_now () - t0;
    if (failed) {
        errset (err, EIO, "%d of %d spawn loops failed", failed, started);
        goto out;
    }
    res->rate = total / t;
    res->cpu = (bench_children_cpu () - cpu0) / total;
    res->self = 0;
    rc = 0;
out:
    if (go[1] >= 0)
        close (go[1]);
    for (int i = 0; i < started; i++) {
        if (pids[i] > 0) {
            kill (pids[i], SIGKILL);
            (void)waitpid (pids[i], NULL, 0);
        }
    }
    if (go[0] >= 0)
        close (go[0]);
    for (int i = 0; i < 2; i++)
        if (ready[i] >= 0)
            close (ready[i]);
    free (pids);
    return rc;
}
