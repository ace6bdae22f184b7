/* b_flux.c - Flux jobs through stock job-exec + perilog.so against
 * cairn-exec.so relaying to cairnd (issue 14).
 *
 * Each run starts a fresh `flux start --test-size=N` instance:
 *
 *   stock  Flux's own job-exec, perilog.so loaded as a jobtap plugin with
 *          [job-manager.prolog] and [job-manager.epilog] command
 *          ["/bin/true"], per-rank = true;
 *   cairn  cairn-exec.so loaded as job-exec, relaying to a private cairnd
 *          (scratch state dir) whose cairn.conf has a per-rank prolog and
 *          epilog /bin/true.
 *
 * Both run the same flux-shell on every rank of every job. The instance's
 * initial program runs one warm-up job (so that module connections, the
 * page cache and the scheduler are past their first use), checks that it
 * had an epilog, publishes its FLUX_URI and waits on its stdin. The bench
 * then submits M jobs of `true` at once (`flux submit --cc=1-M -N n`) and
 * waits for the queue to drain (every job inactive: epilog done, resources
 * freed, `clean` posted). The rate is M over first submit .. last inactive,
 * from Flux's own timestamps (`flux jobs`), so that the start-up of the
 * Python commands is not counted; instance start-up is not either.
 *
 * CPU: user + sys of every process of the instance (the brokers with all
 * their modules, the scheduler, the shells, perilog's commands) and of
 * cairnd (with its shims, shells and prolog/epilog), over the job phase,
 * from /proc: each process's own time plus that of the children it reaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "fxphase.h"

#ifndef CAIRN_BENCH_FLUX
#define CAIRN_BENCH_FLUX "/opt/flux-core/bin/flux"
#endif

#define FX_DEFAULT_JOBS 100
#define FX_JOBNAME "cairn-bench"
#define FX_START_TIMEOUT 180 /* s: instance start-up and warm-up job */
#define FX_CMD_TIMEOUT 900   /* s: one flux command */
#define FX_STOP_TIMEOUT 120  /* s: instance shutdown */

extern char **environ;

/* One Flux instance (and for cairn, its cairnd) under our control. */
struct fx {
    const struct bench_opts *o;
    bool cairn;
    char *root;    /* scratch dir: conf/, flux.log, uri */
    char *log;     /* <root>/flux.log: the instance's and commands' stderr */
    struct bd *d;  /* cairn: the private cairnd; else NULL */
    pid_t pid;     /* `flux start`, leader of its own process group */
    int in;        /* write end of the initial program's stdin, or -1 */
    char **env;    /* environ with FLUX_URI set to the instance's */
    char *uri_env; /* "FLUX_URI=..." (in env) */
    bool keep;     /* keep root (a run failed: its logs are there) */
};

/* CPU seconds over a process tree, split by who spent them. */
struct fx_cpu {
    double brokers; /* flux-broker-* processes, own time (all threads) */
    double cairnd;  /* cairnd, own time */
    double rest;    /* everything else, reaped children included */
    double execmods; /* of brokers: the threads of FX_EXEC_MODULES */
};

/* The broker modules (threads named after them) that make up an exec
 * system besides the processes it runs: stock's job-exec, perilog.so
 * inside the job-manager, and rexec (the subprocess server that forks
 * every shell, prolog and epilog); cairn's job-exec is cairn-exec.so.
 * The whole job-manager counts, although most of its work is the job's
 * own state machine. The brokers' main and overlay threads, which route
 * rexec's messages between ranks among everything else, do not. */
static const char *const fx_exec_modules[] = {"rexec", "job-exec",
                                              "job-manager"};

struct fx_result {
    double jobs_per_s;     /* M / (first t_submit .. last t_inactive) */
    struct fx_cpu cpu;     /* per job, s */
    double client_per_job; /* flux submit + flux queue drain, s per job */
    json_t *phases;        /* fxphase_parse's medians */
};

/* The flux command: $FLUX (as in test/flux/lib.bash), else the one cmake
 * found. Set by bench_flux. */
static const char *fx_flux = CAIRN_BENCH_FLUX;

static int fx_jobs (const struct bench_opts *o)
{
    return o->jobs_given ? o->jobs : FX_DEFAULT_JOBS;
}

/* ---- CPU of process trees, from /proc ---- */

struct pstat {
    pid_t pid, ppid;
    char comm[17];     /* the kernel keeps 15 characters and a NUL */
    double self, kids; /* utime + stime, cutime + cstime */
};

/* One /proc/PID/stat or /proc/PID/task/TID/stat into *p (pid: pid). */
static int pstat_read (const char *path, pid_t pid, struct pstat *p)
{
    char buf[1024];
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read (fd, buf, sizeof (buf) - 1);
    close (fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* comm is in parentheses and may hold spaces: parse after the last ')' */
    char *open_paren = strchr (buf, '('), *close_paren = strrchr (buf, ')');
    if (!open_paren || !close_paren)
        return -1;
    unsigned long ut, st;
    long cut, cst;
    int ppid;
    if (sscanf (close_paren + 2,
                "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld",
                &ppid, &ut, &st, &cut, &cst) != 5)
        return -1;
    double tick = (double)sysconf (_SC_CLK_TCK);
    p->pid = pid;
    p->ppid = ppid;
    snprintf (p->comm, sizeof (p->comm), "%.*s",
              (int)(close_paren - open_paren - 1), open_paren + 1);
    p->self = (ut + st) / tick;
    p->kids = (cut + cst) / tick;
    return 0;
}

static int pstat_cmp (const void *a, const void *b)
{
    const struct pstat *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The CPU seconds of pid's threads named after an exec module. */
static double broker_exec_threads (pid_t pid)
{
    char path[64];
    double sum = 0;
    struct dirent *e;
    struct pstat t;
    DIR *dir;

    snprintf (path, sizeof (path), "/proc/%d/task", (int)pid);
    if (!(dir = opendir (path)))
        return 0;
    while ((e = readdir (dir))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf (path, sizeof (path), "/proc/%d/task/%.16s/stat", (int)pid,
                  e->d_name);
        if (pstat_read (path, pid, &t) < 0)
            continue;
        for (size_t i = 0; i < sizeof (fx_exec_modules) / sizeof (char *); i++)
            if (!strcmp (t.comm, fx_exec_modules[i]))
                sum += t.self;
    }
    closedir (dir);
    return sum;
}

/* Is p under (or one of) root1, root2? ps is sorted by pid. */
static bool pstat_under (const struct pstat *ps,
                         size_t n,
                         const struct pstat *p,
                         pid_t root1,
                         pid_t root2)
{
    for (int depth = 0; p && depth < 64; depth++) {
        if (p->pid == root1 || p->pid == root2)
            return true;
        struct pstat key = {.pid = p->ppid};
        p = bsearch (&key, ps, n, sizeof (*ps), pstat_cmp);
    }
    return false;
}

/* The CPU spent so far by the trees under root1 and root2 (0: none).
 * Children that a process of the tree reaped count in its `kids`; the
 * processes of a run are all reaped inside the trees (the instance is
 * idle at both ends of the interval), so differences are exact up to the
 * clock tick. */
static int fx_cpu_read (pid_t root1,
                        pid_t root2,
                        struct fx_cpu *c,
                        struct cairn_error *err)
{
    size_t n = 0, cap = 0;
    struct pstat *ps = NULL;
    struct dirent *e;
    DIR *dir = opendir ("/proc");

    if (!dir)
        return errset (err, errno, "/proc: %s", strerror (errno));
    while ((e = readdir (dir))) {
        char *end;
        long pid = strtol (e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (n == cap) {
            struct pstat *tmp;
            cap = cap ? 2 * cap : 1024;
            if (!(tmp = realloc (ps, cap * sizeof (*ps)))) {
                free (ps);
                closedir (dir);
                return errset (err, ENOMEM, "out of memory");
            }
            ps = tmp;
        }
        char path[64];
        snprintf (path, sizeof (path), "/proc/%ld/stat", pid);
        if (pstat_read (path, (pid_t)pid, &ps[n]) == 0)
            n++;
    }
    closedir (dir);
    qsort (ps, n, sizeof (*ps), pstat_cmp);
    memset (c, 0, sizeof (*c));
    for (size_t i = 0; i < n; i++) {
        if (!pstat_under (ps, n, &ps[i], root1, root2))
            continue;
        if (ps[i].pid == root2)
            c->cairnd += ps[i].self;
        else if (!strncmp (ps[i].comm, "flux-broker", 11)) {
            c->brokers += ps[i].self;
            c->execmods += broker_exec_threads (ps[i].pid);
        } else
            c->rest += ps[i].self;
        c->rest += ps[i].kids;
    }
    free (ps);
    return 0;
}

/* ---- the instance ---- */

static void fx_destroy (struct fx *f);

/* [job-manager] with perilog.so (stock) or [modules.job-exec] with
 * cairn-exec.so (cairn), into <root>/conf/bench.toml. */
static int
fx_write_config (struct fx *f, const char *module, struct cairn_error *err)
{
    char *dir = NULL, *path = NULL, *toml = NULL;
    int rc = -1;

    if (asprintf (&dir, "%s/conf", f->root) < 0 ||
        asprintf (&path, "%s/bench.toml", dir) < 0)
        goto nomem;
    if (f->cairn) {
        if (asprintf (&toml,
                      "[modules.job-exec]\n"
                      "module = \"%s\"\n"
                      "args = [\"statedir=%s\"]\n",
                      module, f->d->statedir) < 0)
            goto nomem;
    } else if (!(toml = strdup ("[job-manager]\n"
                                "plugins = [ { load = \"perilog.so\" } ]\n"
                                "\n"
                                "[job-manager.prolog]\n"
                                "command = [\"/bin/true\"]\n"
                                "per-rank = true\n"
                                "\n"
                                "[job-manager.epilog]\n"
                                "command = [\"/bin/true\"]\n"
                                "per-rank = true\n")))
        goto nomem;
    if (mkdir (dir, 0700) < 0 || bench_write_file (path, toml) < 0) {
        errset (err, errno, "%s: %s", path, strerror (errno));
        goto out;
    }
    rc = 0;
    goto out;
nomem:
    errset (err, ENOMEM, "out of memory");
out:
    free (dir);
    free (path);
    free (toml);
    return rc;
}

/* The initial program: a warm-up job on every rank, a check that it had an
 * epilog (perilog.so or cairnd ran it), then publish FLUX_URI in <root>/uri
 * (written under a temporary name, then renamed) and wait for our EOF. */
static const char fx_script[] =
    "flux run -N \"$2\" --job-name=warmup true || exit 1\n"
    "id=$(flux job last) || exit 1\n"
    "flux job wait-event -t 120 \"$id\" clean >/dev/null || exit 1\n"
    "if ! flux job eventlog \"$id\" | grep -q epilog-finish; then\n"
    "    echo \"cairn-bench: the warm-up job had no epilog\" >&2; exit 1\n"
    "fi\n"
    "echo \"$FLUX_URI\" >\"$1.tmp\" && mv \"$1.tmp\" \"$1\" || exit 1\n"
    "while read -r x; do :; done\n";

/* environ without FLUX_URI, plus FLUX_URI=uri (f->env, f->uri_env). */
static int fx_set_env (struct fx *f, const char *uri)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    if (asprintf (&f->uri_env, "FLUX_URI=%s", uri) < 0) {
        f->uri_env = NULL;
        return -1;
    }
    if (!(f->env = calloc (n + 2, sizeof (*f->env))))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strncmp (environ[i], "FLUX_URI=", 9))
            f->env[k++] = environ[i];
    f->env[k] = f->uri_env;
    return 0;
}

/* Wait up to `timeout` s for pid to exit (through a pidfd), then reap it.
 * *status gets its wait status, *ru (if not NULL) its rusage.
 * 0, or -1 with errno ETIMEDOUT (not reaped) or from the calls. */
static int fx_wait (pid_t pid, double timeout, int *status, struct rusage *ru)
{
    struct rusage dummy;
    int fd = pidfd_open (pid, 0);
    if (fd < 0)
        return -1;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n;
    while ((n = poll (&pfd, 1, (int)(timeout * 1000))) < 0 && errno == EINTR)
        ;
    close (fd);
    if (n == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    while (wait4 (pid, status, 0, ru ? ru : &dummy) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return 0;
}

static int fx_spawn_instance (struct fx *f, struct cairn_error *err)
{
    char size[16], nodes[16], *uri = NULL;
    int pfd[2];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char conf[4096];

    snprintf (size, sizeof (size), "%d", f->o->ranks);
    snprintf (nodes, sizeof (nodes), "%d", f->o->ranks);
    snprintf (conf, sizeof (conf), "--config-path=%s/conf", f->root);
    if (asprintf (&uri, "%s/uri", f->root) < 0)
        return errset (err, ENOMEM, "out of memory");
    char *argv[] = {(char *)fx_flux,
                    "start",
                    "--test-size",
                    size,
                    conf,
                    "sh",
                    "-c",
                    (char *)fx_script,
                    "cairn-bench",
                    uri,
                    nodes,
                    NULL};
    if (pipe2 (pfd, O_CLOEXEC) < 0) {
        free (uri);
        return errset (err, errno, "pipe: %s", strerror (errno));
    }
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_adddup2 (&fa, pfd[0], 0);
    posix_spawn_file_actions_addopen (&fa, 1, f->log,
                                      O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_addopen (&fa, 2, f->log,
                                      O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawnattr_init (&attr);
    /* its own process group, so that a hung instance can be killed whole */
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup (&attr, 0);
    int rc = posix_spawn (&f->pid, fx_flux, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    posix_spawnattr_destroy (&attr);
    free (uri);
    close (pfd[0]);
    if (rc != 0) {
        f->pid = 0;
        close (pfd[1]);
        return errset (err, rc, "spawn %s: %s", fx_flux, strerror (rc));
    }
    f->in = pfd[1];
    return 0;
}

/* Wait until the initial program published the URI (the warm-up job is
 * done), or flux start exited. */
static int fx_wait_ready (struct fx *f, struct cairn_error *err)
{
    char path[4096], uri[512];
    double t0 = bench_now ();
    snprintf (path, sizeof (path), "%s/uri", f->root);
    while (bench_now () - t0 < FX_START_TIMEOUT) {
        FILE *fp = fopen (path, "re");
        if (fp) {
            bool ok = fgets (uri, sizeof (uri), fp) != NULL;
            fclose (fp);
            uri[strcspn (uri, "\n")] = '\0';
            if (!ok || !uri[0] || fx_set_env (f, uri) < 0)
                return errset (err, EIO, "%s: no URI in it", path);
            return 0;
        }
        int status;
        if (waitpid (f->pid, &status, WNOHANG) == f->pid) {
            f->pid = 0;
            return errset (err, ECHILD,
                           "flux start exited (wait status %d) before its"
                           " instance was ready; see %s",
                           status, f->log);
        }
        usleep (20000);
    }
    return errset (err, ETIMEDOUT, "the instance was not ready in %d s; see %s",
                   FX_START_TIMEOUT, f->log);
}

static struct fx *fx_create (const struct bench_opts *o,
                             bool cairn,
                             const char *module,
                             struct cairn_error *err)
{
    struct fx *f = calloc (1, sizeof (*f));
    if (!f) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    f->o = o;
    f->cairn = cairn;
    f->in = -1;
    if (!(f->root =
              bench_mkdtemp (o, cairn ? "flux-cairn" : "flux-stock", err)))
        goto error;
    if (asprintf (&f->log, "%s/flux.log", f->root) < 0) {
        f->log = NULL;
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    if (cairn && (!(f->d = bd_create (o, "flux-cairnd", BENCH_PERILOG_CONFIG,
                                      false, err)) ||
                  bd_start (f->d, NULL, err) < 0))
        goto error;
    if (fx_write_config (f, module, err) < 0 ||
        fx_spawn_instance (f, err) < 0 || fx_wait_ready (f, err) < 0) {
        f->keep = true;
        goto error;
    }
    return f;
error:
    fx_destroy (f);
    return NULL;
}

/* End the initial program (EOF on its stdin), wait for the instance to
 * shut down. 0, or -1 with err (killed after FX_STOP_TIMEOUT, or flux
 * start failed). */
static int fx_stop (struct fx *f, struct cairn_error *err)
{
    int status = 0;
    if (f->in >= 0) {
        close (f->in);
        f->in = -1;
    }
    if (f->pid <= 0)
        return 0;
    if (fx_wait (f->pid, FX_STOP_TIMEOUT, &status, NULL) < 0) {
        int e = errno;
        (void)kill (-f->pid, SIGKILL);
        (void)waitpid (f->pid, &status, 0);
        f->pid = 0;
        f->keep = true;
        return errset (err, e, "flux start did not stop: %s (killed); see %s",
                       strerror (e), f->log);
    }
    f->pid = 0;
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        f->keep = true;
        return errset (err, EIO, "flux start ended with wait status %d; see %s",
                       status, f->log);
    }
    return 0;
}

/* Stop whatever runs, remove the scratch dirs (root is kept if a run
 * failed), free. NULL is fine; errno preserved. */
static void fx_destroy (struct fx *f)
{
    if (!f)
        return;
    int saved = errno;
    (void)fx_stop (f, NULL);
    bd_destroy (f->d);
    if (f->keep && f->root)
        fprintf (stderr, "cairn-bench: flux: kept %s\n", f->root);
    else
        bench_rmrf (f->root);
    free (f->root);
    free (f->log);
    free (f->env);
    free (f->uri_env);
    free (f);
    errno = saved;
}

/* Run a flux command against the instance, wait for it (FX_CMD_TIMEOUT),
 * fail unless it exits 0. Its stderr goes to the instance's log; its
 * stdout to *out (malloc'd, NUL-terminated) when out is not NULL, else to
 * the log as well. *cpu (if not NULL) gets its user + sys seconds. */
static int fx_cmd (struct fx *f,
                   char *const argv[],
                   char **out,
                   double *cpu,
                   struct cairn_error *err)
{
    posix_spawn_file_actions_t fa;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int pfd[2] = {-1, -1}, status, rc;
    pid_t pid;
    struct rusage ru;

    if (out && pipe2 (pfd, O_CLOEXEC) < 0)
        return errset (err, errno, "pipe: %s", strerror (errno));
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out)
        posix_spawn_file_actions_adddup2 (&fa, pfd[1], 1);
    else
        posix_spawn_file_actions_addopen (&fa, 1, f->log,
                                          O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_addopen (&fa, 2, f->log,
                                      O_WRONLY | O_CREAT | O_APPEND, 0600);
    rc = posix_spawn (&pid, fx_flux, &fa, NULL, argv, f->env);
    posix_spawn_file_actions_destroy (&fa);
    if (out)
        close (pfd[1]);
    if (rc != 0) {
        if (out)
            close (pfd[0]);
        return errset (err, rc, "spawn %s: %s", fx_flux, strerror (rc));
    }
    if (out) {
        double t0 = bench_now ();
        for (;;) {
            if (len + 4096 > cap) {
                char *tmp = realloc (buf, cap = cap ? 2 * cap : 65536);
                if (!tmp) {
                    errset (err, ENOMEM, "out of memory");
                    goto kill;
                }
                buf = tmp;
            }
            struct pollfd p = {.fd = pfd[0], .events = POLLIN};
            int left = (int)((FX_CMD_TIMEOUT - (bench_now () - t0)) * 1000);
            int ready = left > 0 ? poll (&p, 1, left) : 0;
            if (ready < 0 && errno == EINTR)
                continue;
            if (ready <= 0) {
                errset (err, ready ? errno : ETIMEDOUT,
                        "flux %s: no end in %d s", argv[1], FX_CMD_TIMEOUT);
                goto kill;
            }
            ssize_t n = read (pfd[0], buf + len, cap - len - 1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            len += (size_t)n;
        }
        close (pfd[0]);
        pfd[0] = -1;
        buf[len] = '\0';
    }
    if (fx_wait (pid, FX_CMD_TIMEOUT, &status, &ru) < 0) {
        errset (err, errno, "flux %s: %s", argv[1], strerror (errno));
        goto kill;
    }
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        free (buf);
        f->keep = true;
        return errset (err, EIO, "flux %s failed (wait status %d); see %s",
                       argv[1], status, f->log);
    }
    if (cpu)
        *cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
               ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    if (out)
        *out = buf;
    return 0;
kill:
    (void)kill (pid, SIGKILL);
    (void)waitpid (pid, NULL, 0);
    if (pfd[0] >= 0)
        close (pfd[0]);
    free (buf);
    f->keep = true;
    return -1;
}

/* Parse `flux jobs` lines "ID T_SUBMIT T_INACTIVE RESULT": the span from
 * the first submit to the last inactive job, and how many completed; the
 * ids (decimal) into ids[want]. */
static int fx_parse_jobs (const char *text,
                          int want,
                          double *span,
                          char **ids,
                          struct cairn_error *err)
{
    double first = INFINITY, last = -INFINITY;
    int count = 0, completed = 0;
    const char *line = text;

    while (line && *line) {
        double ts, ti;
        char result[32], id[32];
        if (sscanf (line, "%31s %lf %lf %31s", id, &ts, &ti, result) == 4) {
            if (count < want && !(ids[count] = strdup (id)))
                return errset (err, ENOMEM, "out of memory");
            count++;
            completed += !strcmp (result, "COMPLETED");
            first = ts < first ? ts : first;
            last = ti > last ? ti : last;
        }
        line = strchr (line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (count != want || completed != want || !(last > first))
        return errset (err, EIO,
                       "flux jobs: %d jobs, %d completed (expected %d)", count,
                       completed, want);
    *span = last - first;
    return 0;
}

/* One run: a fresh instance (stock or cairn), M jobs of `nodes` nodes. */
static int fx_run (const struct bench_opts *o,
                   bool cairn,
                   int nodes,
                   const char *module,
                   struct fx_result *res,
                   struct cairn_error *err)
{
    int m = fx_jobs (o);
    char cc[32], nn[16], *out = NULL;
    struct fx_cpu c0, c1;
    json_t *st0 = NULL, *st1 = NULL;
    double cpu_submit = 0, cpu_drain = 0, span = 0;
    int rc = -1;

    snprintf (cc, sizeof (cc), "--cc=1-%d", m);
    snprintf (nn, sizeof (nn), "%d", nodes);
    char *submit[] = {
        (char *)fx_flux,          "submit", cc,  "-N", nn, "--quiet",
        "--job-name=" FX_JOBNAME, "true",   NULL};
    char *drain[] = {(char *)fx_flux, "queue", "drain", NULL};
    char *jobs[] = {(char *)fx_flux,
                    "jobs",
                    "-a",
                    "--count=0",
                    "--name=" FX_JOBNAME,
                    "-no",
                    "{id.dec} {t_submit} {t_inactive} {result}",
                    NULL};
    char **phases = calloc ((size_t)m + 5, sizeof (char *));
    char *phase_out = NULL;
    if (!phases)
        return errset (err, ENOMEM, "out of memory");
    struct fx *f = fx_create (o, cairn, module, err);
    if (!f) {
        free (phases);
        return -1;
    }
    /* flux python -c SCRIPT ID...: the latency by phase (fxphase.h) */
    phases[0] = (char *)fx_flux;
    phases[1] = "python";
    phases[2] = "-c";
    phases[3] = (char *)fxphase_py;
    pid_t daemon = f->d ? f->d->pid : 0;
    if ((f->d && !(st0 = bd_stats (f->d, err))) ||
        fx_cpu_read (f->pid, daemon, &c0, err) < 0 ||
        fx_cmd (f, submit, NULL, &cpu_submit, err) < 0 ||
        fx_cmd (f, drain, NULL, &cpu_drain, err) < 0 ||
        fx_cpu_read (f->pid, daemon, &c1, err) < 0 ||
        (f->d && !(st1 = bd_stats (f->d, err))) ||
        fx_cmd (f, jobs, &out, NULL, err) < 0 ||
        fx_parse_jobs (out, m, &span, phases + 4, err) < 0 ||
        fx_cmd (f, phases, &phase_out, NULL, err) < 0 ||
        !(res->phases = fxphase_parse (phase_out, err)))
        goto out;
    if (f->d) {
        /* every job's prolog, shells and epilog went through cairnd */
        int64_t want = (int64_t)m * nodes * 3;
        int64_t got =
            bd_stat_int (st1, "spawned") - bd_stat_int (st0, "spawned");
        if (got != want) {
            errset (err, EIO,
                    "cairnd spawned %lld processes for %d jobs (expected %lld)",
                    (long long)got, m, (long long)want);
            goto out;
        }
    }
    res->jobs_per_s = m / span;
    res->cpu.brokers = (c1.brokers - c0.brokers) / m;
    res->cpu.cairnd = (c1.cairnd - c0.cairnd) / m;
    res->cpu.rest = (c1.rest - c0.rest) / m;
    res->cpu.execmods = (c1.execmods - c0.execmods) / m;
    res->client_per_job = (cpu_submit + cpu_drain) / m;
    rc = fx_stop (f, err);
out:
    if (rc < 0)
        f->keep = true;
    for (int i = 4; i < m + 4; i++)
        free (phases[i]);
    free (phases);
    free (phase_out);
    free (out);
    json_decref (st0);
    json_decref (st1);
    fx_destroy (f);
    return rc;
}

/* Both sides need flux; cairn needs the module next to cairnd. */
static int fx_check (const struct bench_opts *o,
                     char *module,
                     size_t len,
                     struct cairn_error *err)
{
    const char *env = getenv ("FLUX");
    fx_flux = env && env[0] ? env : CAIRN_BENCH_FLUX;
    snprintf (module, len, "%s/cairn-exec.so", o->bindir);
    if (access (fx_flux, X_OK) < 0)
        return errset (err, errno,
                       "%s: %s (flux-core is needed: scripts/install-flux)",
                       fx_flux, strerror (errno));
    if (access (module, R_OK) < 0)
        return errset (err, errno,
                       "%s: %s (the Flux module is built with cairn when"
                       " flux-core is installed; see --bindir)",
                       module, strerror (errno));
    return 0;
}

/* Indexes of a run's figures in the per-repetition arrays. */
enum {
    FX_STOCK_RATE,
    FX_CAIRN_RATE,
    FX_STOCK_BROKERS,
    FX_STOCK_REST,
    FX_STOCK_TOTAL,
    FX_CAIRN_BROKERS,
    FX_CAIRN_DAEMON,
    FX_CAIRN_REST,
    FX_CAIRN_TOTAL,
    FX_STOCK_CLIENT,
    FX_CAIRN_CLIENT,
    FX_STOCK_EXEC,
    FX_CAIRN_EXEC,
    FX_RATIO,
    FX_CPU_RATIO,
    FX_BOUND,
    FX_NFIG,
};

static const struct {
    const char *name; /* "%s" is the size, e.g. "-N4" */
    const char *unit;
} fx_rows[FX_RATIO] = {
    [FX_STOCK_RATE] = {"stock %s: jobs", "jobs/s"},
    [FX_CAIRN_RATE] = {"cairn %s: jobs", "jobs/s"},
    [FX_STOCK_BROKERS] = {"stock %s: CPU/job, brokers", "ms"},
    [FX_STOCK_REST] = {"stock %s: CPU/job, other processes", "ms"},
    [FX_STOCK_TOTAL] = {"stock %s: CPU/job, all", "ms"},
    [FX_CAIRN_BROKERS] = {"cairn %s: CPU/job, brokers", "ms"},
    [FX_CAIRN_DAEMON] = {"cairn %s: CPU/job, cairnd", "ms"},
    [FX_CAIRN_REST] = {"cairn %s: CPU/job, other processes", "ms"},
    [FX_CAIRN_TOTAL] = {"cairn %s: CPU/job, all", "ms"},
    [FX_STOCK_CLIENT] = {"stock %s: CPU/job, flux submit+drain", "ms"},
    [FX_CAIRN_CLIENT] = {"cairn %s: CPU/job, flux submit+drain", "ms"},
    [FX_STOCK_EXEC] = {"stock %s: CPU/job, exec modules", "ms"},
    [FX_CAIRN_EXEC] = {"cairn %s: CPU/job, exec modules + cairnd", "ms"},
};

struct report *bench_flux (const struct bench_opts *o, struct cairn_error *err)
{
    int n = o->reps, sizes[2] = {1, o->ranks};
    int nsizes = o->ranks > 1 ? 2 : 1;
    double v[2][FX_NFIG][BENCH_MAX_REPS];
    char module[4096], name[64];
    struct report *r;
    struct fxphase *ph;

    if (fx_check (o, module, sizeof (module), err) < 0)
        return NULL;
    if (!(ph = fxphase_create ()) || !(r = report_create ("flux", o))) {
        fxphase_destroy (ph);
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    report_param (r, "jobs", json_integer (fx_jobs (o)));
    report_param (r, "instance_size", json_integer (o->ranks));
    report_param (r, "flux", json_string (fx_flux));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nsizes; k++) {
            struct fx_result s = {0}, c = {0};
            /* alternate which side goes first, so drift hits both */
            for (int side = 0; side < 2; side++) {
                bool cairn = (side == 0) == (i % 2 == 1);
                struct fx_result *res = cairn ? &c : &s;
                int rc = fx_run (o, cairn, sizes[k], module, res, err);
                snprintf (name, sizeof (name), "%s -N%d",
                          cairn ? "cairn" : "stock", sizes[k]);
                if (rc == 0 && fxphase_add (ph, name, res->phases) < 0)
                    rc = errset (err, ENOMEM, "out of memory");
                json_decref (res->phases);
                if (rc < 0) {
                    errprefix (err, "%s", name);
                    goto error;
                }
            }
            double *x[FX_NFIG];
            for (int j = 0; j < FX_NFIG; j++)
                x[j] = &v[k][j][i];
            *x[FX_STOCK_RATE] = s.jobs_per_s;
            *x[FX_CAIRN_RATE] = c.jobs_per_s;
            *x[FX_STOCK_BROKERS] = s.cpu.brokers * 1e3;
            *x[FX_STOCK_REST] = s.cpu.rest * 1e3;
            *x[FX_STOCK_TOTAL] = (s.cpu.brokers + s.cpu.rest) * 1e3;
            *x[FX_CAIRN_BROKERS] = c.cpu.brokers * 1e3;
            *x[FX_CAIRN_DAEMON] = c.cpu.cairnd * 1e3;
            *x[FX_CAIRN_REST] = c.cpu.rest * 1e3;
            *x[FX_CAIRN_TOTAL] =
                (c.cpu.brokers + c.cpu.cairnd + c.cpu.rest) * 1e3;
            *x[FX_STOCK_CLIENT] = s.client_per_job * 1e3;
            *x[FX_CAIRN_CLIENT] = c.client_per_job * 1e3;
            *x[FX_STOCK_EXEC] = s.cpu.execmods * 1e3;
            *x[FX_CAIRN_EXEC] = (c.cpu.execmods + c.cpu.cairnd) * 1e3;
            *x[FX_RATIO] = c.jobs_per_s / s.jobs_per_s;
            *x[FX_CPU_RATIO] = *x[FX_STOCK_TOTAL] / *x[FX_CAIRN_TOTAL];
            /* the CPU per job left if stock's exec modules cost nothing */
            *x[FX_BOUND] =
                *x[FX_STOCK_TOTAL] / (*x[FX_STOCK_TOTAL] - *x[FX_STOCK_EXEC]);
        }
    }
    for (int k = 0; k < nsizes; k++) {
        char size[16];
        snprintf (size, sizeof (size), "-N%d", sizes[k]);
        for (int j = 0; j < FX_RATIO; j++) {
            snprintf (name, sizeof (name), fx_rows[j].name, size);
            report_add (r, name, fx_rows[j].unit, v[k][j], n);
        }
    }
    for (int k = 0; k < nsizes; k++) {
        snprintf (name, sizeof (name), "jobs/s cairn / stock, -N%d", sizes[k]);
        report_ratio (r, name, v[k][FX_RATIO], n, ">=", 1.2);
    }
    for (int k = 0; k < nsizes; k++) {
        snprintf (name, sizeof (name), "CPU/job stock / cairn, -N%d", sizes[k]);
        report_ratio (r, name, v[k][FX_CPU_RATIO], n, NULL, 0);
    }
    for (int k = 0; k < nsizes; k++) {
        snprintf (name, sizeof (name), "stock CPU/job / stock less exec, -N%d",
                  sizes[k]);
        report_ratio (r, name, v[k][FX_BOUND], n, NULL, 0);
    }
    fxphase_report (ph, r, n);
    fxphase_destroy (ph);
    report_note (r, "FROM -> EVENT: the median over a run's jobs of the"
                    " time from a job's FROM to its first EVENT, from its"
                    " eventlog (exec.EVENT: its exec eventlog): submit ->"
                    " alloc is the queue (every job of a run is submitted at"
                    " once), alloc -> EVENT what the exec system adds");
    report_note (r,
                 "each run: a fresh `flux start --test-size=%d`, one warm-up"
                 " job, then `flux submit --cc=1-%d -N n true` + `flux queue"
                 " drain`; jobs/s = %d / (first t_submit .. last t_inactive)",
                 o->ranks, fx_jobs (o), fx_jobs (o));
    report_note (r, "stock: job-exec + perilog.so, per-rank prolog/epilog"
                    " /bin/true; cairn: cairn-exec.so as job-exec + cairnd,"
                    " per-rank prolog/epilog /bin/true in cairn.conf");
    report_note (r,
                 "CPU/job: user+sys over the job phase, from /proc; brokers ="
                 " the %d flux-broker processes (all modules); other = shells,"
                 " tasks, prolog/epilog, shims, scheduler, validator (reaped"
                 " children included); client not in 'all'",
                 o->ranks);
    report_note (r, "exec modules: the brokers' rexec, job-exec and"
                    " job-manager threads (job-manager whole: perilog.so is"
                    " in it); stock less exec: stock's CPU/job less its exec"
                    " modules' (what an exec service costing nothing would"
                    " gain where the CPUs are full, but for the brokers'"
                    " routing of rexec's messages, not counted)");
    return r;
error:
    fxphase_destroy (ph);
    report_destroy (r);
    return NULL;
}
