/* daemonctl.c - one cairnd under the benchmark's control.
 *
 * cairnd runs in the foreground as our child, with its stderr in a log
 * file (its per-process log lines must not be written to a terminal while
 * it is being timed). Readiness is "answers a stats request": cairnd
 * replays the journal and reconciles every process before it listens, so
 * the first answer marks the end of a restart.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "supervise/exitdir.h"

extern char **environ;

struct bd *bd_create (const struct bench_opts *o,
                      const char *tag,
                      const char *config,
                      bool nosync,
                      struct cairn_error *err)
{
    struct bd *d = calloc (1, sizeof (*d));
    if (!d) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    d->o = o;
    d->nosync = nosync;
    if (!(d->root = bench_mkdtemp (o, tag, err)))
        goto error;
    if (asprintf (&d->statedir, "%s/state", d->root) < 0 ||
        asprintf (&d->sock, "%s/cairn.sock", d->statedir) < 0 ||
        asprintf (&d->conf, "%s/cairn.conf", d->root) < 0 ||
        asprintf (&d->log, "%s/cairnd.log", d->root) < 0) {
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    if (mkdir (d->statedir, 0700) < 0) {
        errset (err, errno, "mkdir %s: %s", d->statedir, strerror (errno));
        goto error;
    }
    if (bench_write_file (d->conf, config ? config : "{}") < 0) {
        errset (err, errno, "%s: %s", d->conf, strerror (errno));
        goto error;
    }
    return d;
error:
    bd_destroy (d);
    return NULL;
}

void bd_destroy (struct bd *d)
{
    if (!d)
        return;
    int saved = errno;
    if (d->pid > 0)
        (void)bd_stop (d, SIGTERM);
    if (d->statedir)
        exitdir_discard (d->statedir);
    bench_rmrf (d->root);
    free (d->root);
    free (d->statedir);
    free (d->sock);
    free (d->conf);
    free (d->log);
    free (d);
    errno = saved;
}

/* environ plus CAIRN_BENCH_NOSYNC=1 (the pointers are environ's). */
static char **nosync_env (void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc (n + 2, sizeof (*env));
    if (!env)
        return NULL;
    memcpy (env, environ, n * sizeof (*env));
    env[n] = "CAIRN_BENCH_NOSYNC=1";
    return env;
}

static int spawn_cairnd (struct bd *d, struct cairn_error *err)
{
    char path[4096];
    posix_spawn_file_actions_t fa;
    char **env = d->nosync ? nosync_env () : environ;
    char *argv[] = {path, "-c", d->conf, "--statedir", d->statedir, NULL};
    int rc;

    snprintf (path, sizeof (path), "%s/cairnd", d->o->bindir);
    if (!env)
        return errset (err, ENOMEM, "out of memory");
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen (&fa, 2, d->log,
                                      O_WRONLY | O_CREAT | O_APPEND, 0600);
    rc = posix_spawn (&d->pid, path, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy (&fa);
    if (env != environ)
        free (env);
    if (rc != 0) {
        d->pid = 0;
        return errset (err, rc, "spawn %s: %s", path, strerror (rc));
    }
    return 0;
}

/* The last line of cairnd's log, in buf ("" if none): the log goes with
 * the scratch dir, so an error must carry cairnd's last word itself. */
static const char *last_log_line (const struct bd *d, char *buf, size_t len)
{
    char line[512];
    FILE *f = fopen (d->log, "re");
    buf[0] = '\0';
    if (!f)
        return buf;
    while (fgets (line, sizeof (line), f))
        if (line[0] && line[0] != '\n')
            snprintf (buf, len, "%.*s", (int)strcspn (line, "\n"), line);
    fclose (f);
    return buf;
}

int bd_start (struct bd *d, double *seconds, struct cairn_error *err)
{
    double t0 = bench_now ();
    struct timespec nap = {0, 250 * 1000}; /* 0.25 ms between attempts */

    if (spawn_cairnd (d, err) < 0)
        return -1;
    while (bench_now () - t0 < 120) {
        struct client *c = client_connect (d->sock, NULL);
        if (c) {
            json_t *st = client_rpc (c, "stats", NULL, 60, err);
            double t1 = bench_now ();
            client_close (c);
            if (st) {
                json_decref (st);
                if (seconds)
                    *seconds = t1 - t0;
                return 0;
            }
        }
        int status;
        if (waitpid (d->pid, &status, WNOHANG) == d->pid) {
            char last[200];
            d->pid = 0;
            return errset (err, ECHILD,
                           "cairnd exited (wait status %d) before answering:"
                           " %s",
                           status, last_log_line (d, last, sizeof (last)));
        }
        nanosleep (&nap, NULL);
    }
    (void)bd_stop (d, SIGKILL);
    return errset (err, ETIMEDOUT, "cairnd did not answer in 120 s; see %s",
                   d->log);
}

int bd_stop (struct bd *d, int sig)
{
    int status;
    if (d->pid <= 0)
        return 0;
    if (kill (d->pid, sig) < 0)
        return -1;
    while (waitpid (d->pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    d->pid = 0;
    return 0;
}

json_t *bd_stats (struct bd *d, struct cairn_error *err)
{
    struct client *c = client_connect (d->sock, err);
    if (!c)
        return NULL;
    json_t *st = client_rpc (c, "stats", NULL, 60, err);
    client_close (c);
    return st;
}

int64_t bd_stat_int (const json_t *stats, const char *path)
{
    char key[64];
    const char *dot = strchr (path, '.');
    if (dot) {
        snprintf (key, sizeof (key), "%.*s", (int)(dot - path), path);
        stats = json_object_get (stats, key);
        path = dot + 1;
    }
    json_t *v = json_object_get (stats, path);
    return json_is_integer (v) ? (int64_t)json_integer_value (v) : -1;
}

/* Wait until cairnd watches `want` processes (its shims are spawned). */
int bd_wait_procs (struct bd *d, int64_t want, struct cairn_error *err)
{
    double t0 = bench_now ();
    while (bench_now () - t0 < 300) {
        json_t *st = bd_stats (d, err);
        if (!st)
            return -1;
        int64_t have = bd_stat_int (st, "processes");
        json_decref (st);
        if (have == want)
            return 0;
        usleep (20000);
    }
    return errset (err, ETIMEDOUT, "cairnd never watched %lld processes",
                   (long long)want);
}
