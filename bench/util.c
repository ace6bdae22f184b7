/* util.c - timing, statistics and scratch files for cairn-bench. */
#include <errno.h>
#include <fcntl.h>
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

double bench_children_cpu (void)
{
    struct rusage ru;
    if (getrusage (RUSAGE_CHILDREN, &ru) < 0)
        return 0;
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
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
