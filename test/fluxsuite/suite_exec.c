/* suite_exec.c - the job-exec.so of the fluxsuite run (test/fluxsuite/run):
 * a cairnd of its own for every Flux instance flux-core's tests start, then
 * cairn-exec.so itself.
 *
 * flux-core's tests start many instances, with rc1 scripts of their own,
 * and instances inside jobs (`flux batch`, `flux alloc`); cairnd serves
 * one instance at a time. So this module, loaded as job-exec (the runner
 * puts it first in FLUX_MODULE_PATH_PREPEND), makes sure a cairnd runs for
 * its instance and hands over to cairn-exec.so's mod_main with
 * statedir=DIR added. Test code only: not built into cairn-exec.so.
 *
 * DIR is the broker's rundir/cairn, or, for an instance with a statedir
 * (one that is restarted and must find its jobs again), a directory named
 * by it under $CAIRN_FLUXSUITE_DIR (short: it holds the socket). A cairnd
 * already answering there for this broker is used (a module reload); one
 * of a broker that is gone (a restart) is waited out, as its watcher ends
 * it once the broker's process is gone, and a new one started.
 *
 * Environment: CAIRN_FLUXSUITE_MODULE (cairn-exec.so), CAIRN_FLUXSUITE_CAIRND
 * (cairnd), CAIRN_FLUXSUITE_DIR.
 */

#include <dlfcn.h>
#include <errno.h>
#include <flux/core.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int answers (const char *sock)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, rc;

    if (strlen (sock) >= sizeof (sa.sun_path))
        return 0;
    strcpy (sa.sun_path, sock);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return 0;
    rc = connect (fd, (struct sockaddr *)&sa, sizeof (sa)) == 0;
    close (fd);
    return rc;
}

/* The djb2 hash of s, for a short directory name. */
static unsigned long hash (const char *s)
{
    unsigned long h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static int where (flux_t *h, char *dir, size_t len)
{
    const char *kept = flux_attr_get (h, "statedir");
    const char *run = flux_attr_get (h, "rundir");
    const char *base = getenv ("CAIRN_FLUXSUITE_DIR");

    int n;
    if (kept && base)
        n = snprintf (dir, len, "%s/%lx", base, hash (kept));
    else if (run)
        n = snprintf (dir, len, "%s/cairn", run);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int path_in (char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf (buf, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int start_cairnd (flux_t *h, const char *dir)
{
    const char *cairnd = getenv ("CAIRN_FLUXSUITE_CAIRND");
    char conf[4200], sock[4200], owner_path[4200], pid[32];
    const char *watch =
        "\"$0\" -c \"$1\" --statedir \"$2\" 2>>\"$2/cairnd.log\" & c=$!; "
        "while kill -0 \"$3\" 2>/dev/null && kill -0 $c 2>/dev/null; "
        "do sleep 0.5; done; kill $c 2>/dev/null; wait $c";

    if (path_in (sock, sizeof (sock), dir, "cairn.sock") < 0 ||
        path_in (owner_path, sizeof (owner_path), dir, "broker") < 0 ||
        path_in (conf, sizeof (conf), dir, "cairn.conf") < 0)
        return -1;
    /* the broker that started the cairnd there (a module reload: ours) */
    FILE *f = fopen (owner_path, "r");
    int owner = 0;
    if (f) {
        if (fscanf (f, "%d", &owner) != 1)
            owner = 0;
        fclose (f);
    }
    if (owner == getpid () && answers (sock))
        return 0;
    for (int i = 0; i < 200 && answers (sock); i++) /* its watcher ends it */
        nanosleep (&(struct timespec){.tv_nsec = 50000000}, NULL);
    if (!cairnd || (mkdir (dir, 0700) < 0 && errno != EEXIST))
        return -1;
    snprintf (pid, sizeof (pid), "%d", (int)getpid ());
    if (!(f = fopen (owner_path, "w")))
        return -1;
    fprintf (f, "%s\n", pid);
    fclose (f);
    if (!(f = fopen (conf, "w")))
        return -1;
    fputs ("{}\n", f);
    fclose (f);
    char *argv[] = {"bash", "-c",        (char *)watch, (char *)cairnd,
                    conf,   (char *)dir, pid,           NULL};
    posix_spawnattr_t attr;
    pid_t child;
    posix_spawnattr_init (&attr);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID);
    int e = posix_spawnp (&child, "bash", NULL, &attr, argv, environ);
    posix_spawnattr_destroy (&attr);
    if (e != 0) {
        errno = e;
        return -1;
    }
    for (int i = 0; i < 600; i++) {
        if (answers (sock))
            return 0;
        nanosleep (&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
    flux_log (h, LOG_ERR, "fluxsuite: cairnd did not start in %s", dir);
    errno = ETIMEDOUT;
    return -1;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    const char *so = getenv ("CAIRN_FLUXSUITE_MODULE");
    char dir[4096], arg[4200];
    uint32_t rank = 0;

    if (!so) {
        flux_log (h, LOG_ERR, "fluxsuite: CAIRN_FLUXSUITE_MODULE is not set");
        errno = EINVAL;
        return -1;
    }
    (void)flux_get_rank (h, &rank);
    char *args[argc + 2];
    int n = 0;
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    if (rank == 0) {
        if (where (h, dir, sizeof (dir)) < 0 || start_cairnd (h, dir) < 0) {
            flux_log_error (h, "fluxsuite: cairnd");
            return -1;
        }
        snprintf (arg, sizeof (arg), "statedir=%s", dir);
        args[n++] = arg;
    }
    args[n] = NULL;
    void *dso = dlopen (so, RTLD_NOW | RTLD_LOCAL);
    int (*main_fn) (flux_t *, int, char **) =
        dso ? (int (*) (flux_t *, int, char **))dlsym (dso, "mod_main") : NULL;
    if (!main_fn) {
        flux_log (h, LOG_ERR, "fluxsuite: %s: %s", so, dlerror ());
        if (dso)
            dlclose (dso);
        errno = EINVAL;
        return -1;
    }
    int rc = main_fn (h, n, args);
    int saved = errno;
    dlclose (dso);
    errno = saved;
    return rc;
}
