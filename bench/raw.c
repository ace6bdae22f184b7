/* raw.c - what this machine can do without cairn, measured in the same run.
 *
 * Spawning: posix_spawn (vfork-like in glibc) plus a pidfd per child,
 * reaped with waitid (P_PIDFD) when poll says it ended: the cheapest way a
 * supervisor can run and watch processes, and the way cairnd watches its
 * shims. The concurrency is the same as cairnd's (jobs in flight x ranks).
 *
 * Syncing: write 4 KiB + fdatasync, the primitive an LMDB commit is built
 * on (it syncs twice per commit: the data pages, then the meta page).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "bench.h"
#include "supervise/exitfile.h"
#include "supervise/shim_proto.h"
#include "supervise/spawn.h"
#include "supervise/spawner.h"

extern char **environ;

struct pacer {
    /* start one process: its pidfd, or -1 with err set */
    int (*start) (void *arg, int slot, struct cairn_error *err);
    /* once its pidfd is readable: reap it, or see it reaped (NULL: it is
     * our child, waitid reaps it); -1 with err set */
    int (*reap) (void *arg, int slot, int pidfd, struct cairn_error *err);
    /* after it was reaped (may be NULL) */
    void (*done) (void *arg, int slot);
    void *arg;
};

/* Keep conc processes running until total were started and reaped. */
static int run_pacer (const struct pacer *sp,
                      int total,
                      int conc,
                      struct raw_result *res,
                      struct cairn_error *err)
{
    struct pollfd *pfd = calloc (conc, sizeof (*pfd));
    int started = 0, reaped = 0, running = 0, rc = -1;

    if (!pfd)
        return errset (err, ENOMEM, "out of memory");
    for (int i = 0; i < conc; i++)
        pfd[i].fd = -1;
    double t0 = bench_now (), cpu0 = bench_children_cpu ();
    double self0 = bench_self_cpu ();
    while (reaped < total) {
        for (int i = 0; i < conc && started < total; i++) {
            if (pfd[i].fd >= 0)
                continue;
            if ((pfd[i].fd = sp->start (sp->arg, i, err)) < 0)
                goto out;
            pfd[i].events = POLLIN;
            started++;
            running++;
        }
        if (poll (pfd, conc, 60000) <= 0) {
            errset (err, errno ? errno : ETIMEDOUT, "poll: %s",
                    strerror (errno ? errno : ETIMEDOUT));
            goto out;
        }
        for (int i = 0; i < conc; i++) {
            siginfo_t si;
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP)))
                continue;
            if (sp->reap
                    ? sp->reap (sp->arg, i, pfd[i].fd, err) < 0
                    : waitid (P_PIDFD, (id_t)pfd[i].fd, &si, WEXITED) < 0) {
                if (!sp->reap)
                    errset (err, errno, "waitid: %s", strerror (errno));
                goto out;
            }
            close (pfd[i].fd);
            pfd[i].fd = -1;
            if (sp->done)
                sp->done (sp->arg, i);
            reaped++;
            running--;
        }
    }
    res->rate = total / (bench_now () - t0);
    res->self = (bench_self_cpu () - self0) / total;
    /* all of it: the spawning is ours (posix_spawn's clone runs in the
     * parent, as do pidfd_open, poll and waitid), as a shim's vfork and
     * cairnd's collecting are counted on cairn's side */
    res->cpu = (bench_children_cpu () - cpu0) / total + res->self;
    rc = 0;
out:
    for (int i = 0; i < conc; i++) {
        if (pfd[i].fd >= 0) {
            siginfo_t si;
            if (!sp->reap)
                (void)waitid (P_PIDFD, (id_t)pfd[i].fd, &si, WEXITED);
            close (pfd[i].fd);
        }
    }
    free (pfd);
    return rc;
}

static int start_plain (void *arg, int slot, struct cairn_error *err)
{
    char *const *argv = arg;
    pid_t pid;
    int rc = posix_spawn (&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0)
        return errset (err, rc, "spawn %s: %s", argv[0], strerror (rc));
    int fd = pidfd_open (pid, 0);
    if (fd < 0) {
        int e = errno;
        (void)waitpid (pid, NULL, 0);
        return errset (err, e, "pidfd_open: %s", strerror (e));
    }
    return fd;
}

int raw_spawn_rate (char *const argv[],
                    int total,
                    int conc,
                    struct raw_result *res,
                    struct cairn_error *err)
{
    struct pacer sp = {.start = start_plain, .arg = (void *)argv};
    return run_pacer (&sp, total, conc, res, err);
}

struct shimrun {
    struct keeper *keeper;   /* the supervisor's parent, as cairnd's */
    struct spawner *spawner; /* cairnd's own supervisor */
    const char *shim;
    const char *exitdir;
    int exitfd;
    char *const *argv;
    char (*execid)[37]; /* one per slot */
    bool *ended;        /* per slot: its ENDED came before its pidfd said */
    size_t nslots;
};

static int start_shim (void *arg, int slot, struct cairn_error *err)
{
    struct shimrun *r = arg;
    char envid[64];
    uuid_t u;
    pid_t pid;
    int pidfd;

    uuid_generate (u);
    uuid_unparse_lower (u, r->execid[slot]);
    r->ended[slot] = false;
    snprintf (envid, sizeof (envid), "CAIRN_EXECID=%s", r->execid[slot]);
    char *envp[] = {envid, "PATH=/usr/bin:/bin", NULL};
    struct shim_spec spec = {.shim = r->shim,
                             .exitdir = r->exitdir,
                             .execid = r->execid[slot],
                             .argv = r->argv,
                             .envp = envp};
    if (spawner_spawn (r->spawner, &spec, &pid, &pidfd, NULL, err) < 0)
        return -1;
    if (pid == 0)
        return errset (err, EIO, "%s did not start", r->argv[0]);
    return pidfd;
}

/* The command of slot exited (its pidfd is readable): wait for the
 * supervisor's ENDED, which says its exit record is written and it is
 * reaped, keeping those of other slots that come first. */
static int reap_shim (void *arg, int slot, int pidfd, struct cairn_error *err)
{
    struct shimrun *r = arg;
    struct spawner_msg m;

    while (!r->ended[slot]) {
        if (spawner_ended (r->spawner, &m) < 0) {
            struct pollfd p = {.fd = spawner_sock (r->spawner),
                               .events = POLLIN};
            if (errno != EAGAIN || poll (&p, 1, 60000) != 1)
                return errset (err, errno ? errno : ETIMEDOUT,
                               "the supervisor: %s",
                               strerror (errno ? errno : ETIMEDOUT));
            continue;
        }
        for (size_t i = 0; i < r->nslots; i++)
            if (!strcmp (r->execid[i], m.execid))
                r->ended[i] = true;
    }
    return 0;
}

/* What cairnd does after a command ends: read its exit record, remove the
 * files its supervisor left. */
static void done_shim (void *arg, int slot)
{
    struct shimrun *r = arg;
    int status;

    if (exitfile_read (r->exitfd, r->execid[slot], &status, NULL) < 0)
        fprintf (stderr, "cairn-bench: %s: no exit record: %s\n",
                 r->execid[slot], strerror (errno));
    (void)exitfile_remove (r->exitfd, r->execid[slot]);
}

int raw_shim_rate (const char *shim,
                   const char *exitdir,
                   char *const argv[],
                   int total,
                   int conc,
                   struct raw_result *res,
                   struct cairn_error *err)
{
    struct shimrun r = {
        .shim = shim, .exitdir = exitdir, .argv = argv, .nslots = conc};
    int rc = -1;

    r.execid = calloc (conc, sizeof (*r.execid));
    r.ended = calloc (conc, sizeof (*r.ended));
    if (!r.execid || !r.ended) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    if ((r.exitfd = open (exitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        errset (err, errno, "%s: %s", exitdir, strerror (errno));
        goto out;
    }
    if (!(r.keeper = keeper_create (shim, err)) ||
        !(r.spawner = spawner_create (r.keeper, err))) {
        keeper_destroy (r.keeper);
        close (r.exitfd);
        goto out;
    }
    struct pacer sp = {
        .start = start_shim, .reap = reap_shim, .done = done_shim, .arg = &r};
    double sp0 = 0, sp1 = 0, spk0 = 0, spk1 = 0;
    (void)bench_cpu (spawner_pid (r.spawner), &sp0, &spk0);
    rc = run_pacer (&sp, total, conc, res, err);
    /* the supervisor's work and its commands' (its children, reaped) */
    if (rc == 0 && bench_cpu (spawner_pid (r.spawner), &sp1, &spk1) == 0)
        res->cpu += (sp1 - sp0 + spk1 - spk0) / total;
    spawner_destroy (r.spawner);
    keeper_destroy (r.keeper);
    close (r.exitfd);
out:
    free (r.execid);
    free (r.ended);
    return rc;
}

/* The supervisor floor: the files a supervisor makes around each spawn. */
struct suprun {
    int dirfd;
    char *const *argv;
    char (*execid)[37]; /* one per slot */
};

static int sup_open (struct suprun *r, int slot, const char *suffix, int excl)
{
    char name[64];
    snprintf (name, sizeof (name), "%s%s", r->execid[slot], suffix);
    return openat (r->dirfd, name,
                   O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC),
                   0600);
}

static int start_sup (void *arg, int slot, struct cairn_error *err)
{
    struct suprun *r = arg;
    posix_spawn_file_actions_t fa;
    int out = -1, er = -1, mk = -1, fd = -1, rc;
    uuid_t u;
    pid_t pid;

    uuid_generate (u);
    uuid_unparse_lower (u, r->execid[slot]);
    if ((out = sup_open (r, slot, ".out", 0)) < 0 ||
        (er = sup_open (r, slot, ".err", 0)) < 0 ||
        (mk = sup_open (r, slot, ".started", 1)) < 0) {
        errset (err, errno, "supervisor floor: %s", strerror (errno));
        goto out;
    }
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_adddup2 (&fa, out, 1);
    posix_spawn_file_actions_adddup2 (&fa, er, 2);
    rc = posix_spawn (&pid, r->argv[0], &fa, NULL, r->argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    if (rc != 0) {
        errset (err, rc, "spawn %s: %s", r->argv[0], strerror (rc));
        goto out;
    }
    if ((fd = pidfd_open (pid, 0)) < 0) {
        errset (err, errno, "pidfd_open: %s", strerror (errno));
        (void)waitpid (pid, NULL, 0);
    }
out:
    for (int i = 0; i < 3; i++) {
        int c = i == 0 ? out : i == 1 ? er : mk;
        if (c >= 0)
            close (c);
    }
    return fd;
}

/* Reaped: the exit record as the supervisor writes it (appended to the
 * marker, shim_proto.h), then cairnd's part. */
static void done_sup (void *arg, int slot)
{
    struct suprun *r = arg;
    char name[64];
    int status;

    snprintf (name, sizeof (name), "%s.started", r->execid[slot]);
    (void)shim_record_append (r->dirfd, name, "{\"status\":0}\n", 13);
    (void)exitfile_read (r->dirfd, r->execid[slot], &status, NULL);
    (void)exitfile_remove (r->dirfd, r->execid[slot]);
}

int raw_supervisor_rate (const char *exitdir,
                         char *const argv[],
                         int total,
                         int conc,
                         struct raw_result *res,
                         struct cairn_error *err)
{
    struct suprun r = {.argv = argv};
    int rc = -1;

    if (!(r.execid = calloc (conc, sizeof (*r.execid))))
        return errset (err, ENOMEM, "out of memory");
    if ((r.dirfd = open (exitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        errset (err, errno, "%s: %s", exitdir, strerror (errno));
        goto out;
    }
    struct pacer sp = {.start = start_sup, .done = done_sup, .arg = &r};
    rc = run_pacer (&sp, total, conc, res, err);
    close (r.dirfd);
out:
    free (r.execid);
    return rc;
}

int raw_fsync_rate (const char *dir,
                    double seconds,
                    double *rate,
                    struct cairn_error *err)
{
    char path[4096], block[4096];
    int n = 0, rc = -1;

    snprintf (path, sizeof (path), "%s/fsync-test", dir);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return errset (err, errno, "%s: %s", path, strerror (errno));
    memset (block, 'x', sizeof (block));
    double t0 = bench_now (), t;
    do {
        /* append, as an LMDB commit writes new pages at the file's end */
        if (write (fd, block, sizeof (block)) != sizeof (block) ||
            fdatasync (fd) < 0) {
            errset (err, errno, "%s: %s", path, strerror (errno));
            goto out;
        }
        n++;
    } while ((t = bench_now () - t0) < seconds);
    *rate = n / t;
    rc = 0;
out:
    close (fd);
    unlink (path);
    return rc;
}
