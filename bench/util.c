/* util.c - timing, statistics and scratch files for cairn-bench. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

char *bench_true_argv[] = {"/bin/true", NULL};
char *bench_sleep_argv[] = {"/bin/sleep", "1000", NULL};

double bench_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

double bench_median (const double *v, size_t n)
{
    double tmp[BENCH_MAX_REPS];
    if (n == 0 || n > BENCH_MAX_REPS)
        return NAN;
    memcpy (tmp, v, n * sizeof (*v));
    qsort (tmp, n, sizeof (*tmp), cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

char *bench_mkdtemp (const struct bench_opts *o,
                     const char *tag,
                     struct cairn_error *err)
{
    char *path;
    if (asprintf (&path, "%s/cairn-bench-%s.XXXXXX", o->dir, tag) < 0) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (!mkdtemp (path)) { /* mkdtemp makes it 0700 */
        int e = errno;
        errset (err, e, "mkdtemp %s: %s", path, strerror (e));
        free (path);
        errno = e;
        return NULL;
    }
    return path;
}

static int
rm_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)remove (path);
    return 0;
}

void bench_rmrf (const char *path)
{
    int saved = errno;
    if (path)
        (void)nftw (path, rm_one, 64, FTW_DEPTH | FTW_PHYS);
    errno = saved;
}

int bench_write_file (const char *path, const char *text)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t len = strlen (text);
    ssize_t n = write (fd, text, len);
    int e = errno;
    close (fd);
    if (n != (ssize_t)len) {
        errno = n < 0 ? e : EIO;
        return -1;
    }
    return 0;
}

int bench_rss (pid_t pid, long *vmrss_kib, long *anon_kib)
{
    char path[64], line[256];
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    FILE *f = fopen (path, "re");
    if (!f)
        return -1;
    int found = 0;
    while (fgets (line, sizeof (line), f)) {
        if (sscanf (line, "VmRSS: %ld", vmrss_kib) == 1)
            found |= 1;
        else if (sscanf (line, "RssAnon: %ld", anon_kib) == 1)
            found |= 2;
    }
    fclose (f);
    if (found != 3) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int bench_cpu (pid_t pid, double *self, double *children)
{
    char path[64], buf[1024];
    unsigned long long ut, st, cut, cst;
    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen (path, "re");
    if (!f)
        return -1;
    size_t n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    /* fields 14-17 come after the command name, which ends at the last ')' */
    char *p = strrchr (buf, ')');
    if (!p || sscanf (p + 2,
                      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu"
                      " %llu %llu",
                      &ut, &st, &cut, &cst) != 4) {
        errno = EINVAL;
        return -1;
    }
    double hz = (double)sysconf (_SC_CLK_TCK);
    *self = (ut + st) / hz;
    *children = (cut + cst) / hz;
    return 0;
}

static double rusage_cpu (int who)
{
    struct rusage ru;
    if (getrusage (who, &ru) < 0)
        return 0;
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

double bench_children_cpu (void)
{
    return rusage_cpu (RUSAGE_CHILDREN);
}

double bench_self_cpu (void)
{
    return rusage_cpu (RUSAGE_SELF);
}

/* The child of parent that is cairn-shim run with flag as its first
 * argument, or 0. */
static pid_t shim_child (pid_t parent, const char *flag)
{
    char path[96], buf[4096];
    FILE *f;
    size_t n;

    snprintf (path, sizeof (path), "/proc/%d/task/%d/children", (int)parent,
              (int)parent);
    if (!(f = fopen (path, "re")))
        return 0;
    n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    for (char *tok = strtok (buf, " \n"); tok; tok = strtok (NULL, " \n")) {
        char cmd[256];
        snprintf (path, sizeof (path), "/proc/%s/cmdline", tok);
        if (!(f = fopen (path, "re")))
            continue;
        n = fread (cmd, 1, sizeof (cmd) - 1, f);
        fclose (f);
        cmd[n] = '\0';
        /* argv is NUL-separated: "cairn-shim\0--spawner\03\0" */
        size_t a0 = strlen (cmd) + 1;
        if (n > a0 && !strcmp (cmd + a0, flag))
            return (pid_t)atoi (tok);
    }
    return 0;
}

pid_t bench_spawner_pid (pid_t cairnd)
{
    pid_t keeper = shim_child (cairnd, "--keeper");
    return keeper > 0 ? shim_child (keeper, "--spawner") : 0;
}

double bench_sched_cpu (pid_t pid)
{
    char path[64];
    unsigned long long ns;
    snprintf (path, sizeof (path), "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen (path, "re");
    if (!f)
        return -1;
    int n = fscanf (f, "%llu", &ns);
    fclose (f);
    return n == 1 ? ns * 1e-9 : -1;
}

double bench_sched_cpu_all (pid_t pid)
{
    char path[64];
    snprintf (path, sizeof (path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir (path);
    struct dirent *ent;
    double sum = 0;
    if (!dir)
        return -1;
    while ((ent = readdir (dir))) {
        if (ent->d_name[0] == '.')
            continue;
        char p2[64 + 256 + 16];
        unsigned long long ns;
        snprintf (p2, sizeof (p2), "%s/%s/schedstat", path, ent->d_name);
        FILE *f = fopen (p2, "re");
        if (!f)
            continue; /* ended meanwhile */
        if (fscanf (f, "%llu", &ns) == 1)
            sum += ns * 1e-9;
        fclose (f);
    }
    closedir (dir);
    return sum;
}

int bench_parse_list (const char *s, long min, long *v, int max)
{
    int n = 0;
    char *end;

    while (*s) {
        errno = 0;
        long x = strtol (s, &end, 10);
        if (n == max || errno || end == s || x < min ||
            (n > 0 && x <= v[n - 1]) || (*end && *end != ',')) {
            errno = EINVAL;
            return -1;
        }
        v[n++] = x;
        s = *end == ',' ? end + 1 : end;
    }
    if (n == 0)
        errno = EINVAL;
    return n > 0 ? n : -1;
}

static long read_long (const char *path)
{
    long v = -1;
    FILE *f = fopen (path, "re");
    if (f) {
        if (fscanf (f, "%ld", &v) != 1)
            v = -1;
        fclose (f);
    }
    return v;
}

/* Tasks (threads included) on the machine now: the denominator of the
 * 4th field of /proc/loadavg. */
static long tasks_now (void)
{
    long running = 0, total = -1;
    FILE *f = fopen ("/proc/loadavg", "re");
    if (f) {
        if (fscanf (f, "%*f %*f %*f %ld/%ld", &running, &total) != 2)
            total = -1;
        fclose (f);
    }
    return total;
}

int bench_capacity (long live, long more, char *why, size_t len)
{
    /* each live process is a shim and its command; the spare covers
     * cairnd, the benchmark, and the machine's other users meanwhile */
    long need = 2 * more + 1000;
    long pid_max = read_long ("/proc/sys/kernel/pid_max");
    long threads_max = read_long ("/proc/sys/kernel/threads-max");
    long tasks = tasks_now ();
    struct rlimit rl;

    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 &&
        (rl.rlim_cur == RLIM_INFINITY ? false
                                      : (long)rl.rlim_cur < live + 256)) {
        snprintf (why, len,
                  "RLIMIT_NOFILE %ld (hard %ld) < %ld: cairnd and the raw scan"
                  " hold a pidfd per live process",
                  (long)rl.rlim_cur,
                  rl.rlim_max == RLIM_INFINITY ? -1L : (long)rl.rlim_max,
                  live + 256);
        return 0;
    }
    if (pid_max > 0 && tasks >= 0 && pid_max - tasks < need) {
        snprintf (why, len,
                  "kernel.pid_max %ld with %ld tasks running leaves fewer"
                  " than the %ld pids needed",
                  pid_max, tasks, need);
        return 0;
    }
    if (threads_max > 0 && tasks >= 0 && threads_max - tasks < need) {
        snprintf (why, len,
                  "kernel.threads-max %ld with %ld tasks running leaves fewer"
                  " than the %ld needed",
                  threads_max, tasks, need);
        return 0;
    }
    /* RLIMIT_NPROC counts the user's processes; root is exempt */
    if (geteuid () != 0 && getrlimit (RLIMIT_NPROC, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur - tasks < need) {
        snprintf (why, len, "RLIMIT_NPROC (ulimit -u) %ld < %ld",
                  (long)rl.rlim_cur, need + tasks);
        return 0;
    }
    return 1;
}

/* ppid and whether comm matches, for every process in /proc, indexed by
 * pid (pids are below pid_max). */
static long
count_descendants (const char *comm, int *ppid, char *match, long pid_max)
{
    DIR *dir = opendir ("/proc");
    struct dirent *e;
    char path[64], buf[512];
    long n = 0;

    if (!dir)
        return -1;
    memset (ppid, 0, pid_max * sizeof (*ppid));
    memset (match, 0, pid_max);
    while ((e = readdir (dir))) {
        long pid = strtol (e->d_name, NULL, 10);
        if (pid <= 0 || pid >= pid_max)
            continue;
        snprintf (path, sizeof (path), "/proc/%ld/stat", pid);
        int fd = open (path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* gone meanwhile */
        ssize_t len = read (fd, buf, sizeof (buf) - 1);
        close (fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        /* "pid (comm) state ppid ...": comm ends at the last ')' */
        char *open_paren = strchr (buf, '('), *close_paren = strrchr (buf, ')');
        int pp;
        if (!open_paren || !close_paren ||
            sscanf (close_paren + 1, " %*c %d", &pp) != 1)
            continue;
        *close_paren = '\0';
        ppid[pid] = pp;
        match[pid] = !strcmp (open_paren + 1, comm);
    }
    closedir (dir);
    pid_t self = getpid ();
    for (long pid = 1; pid < pid_max; pid++) {
        if (!match[pid])
            continue;
        /* up the tree: a shim's command, its shim, cairnd or us */
        for (long p = ppid[pid], depth = 0; p > 1 && p < pid_max && depth < 64;
             p = ppid[p], depth++) {
            if (p == self) {
                n++;
                break;
            }
        }
    }
    return n;
}

int bench_wait_commands (const char *comm,
                         long want,
                         double timeout,
                         struct cairn_error *err)
{
    long pid_max = 0, have = -1;
    FILE *f = fopen ("/proc/sys/kernel/pid_max", "re");
    if (f) {
        if (fscanf (f, "%ld", &pid_max) != 1)
            pid_max = 0;
        fclose (f);
    }
    if (pid_max <= 0)
        pid_max = 4194304; /* the kernel's largest */
    int *ppid = malloc ((size_t)pid_max * sizeof (*ppid));
    char *match = malloc ((size_t)pid_max);
    double t0 = bench_now ();
    int rc = -1;

    if (!ppid || !match) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    while (bench_now () - t0 < timeout) {
        if ((have = count_descendants (comm, ppid, match, pid_max)) < 0) {
            errset (err, errno, "/proc: %s", strerror (errno));
            goto out;
        }
        if (have == want) {
            rc = 0;
            goto out;
        }
        usleep (20000);
    }
    errset (err, ETIMEDOUT, "%ld %s processes after %.0f s, not %ld", have,
            comm, timeout, want);
out:
    free (ppid);
    free (match);
    return rc;
}
