/* daemon_proc.c - starting, watching and signalling processes.
 *
 * Processes run under the node's supervisor (cairn-shim; doc/design.md
 * "The life of a process"). We hold a pidfd per command: it cannot be
 * fooled by pid reuse, it tells us the command ended (readable), and it
 * signals exactly that process.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "exec/daemon_private.h"
#include "supervise/exitfile.h"
#include "supervise/janitor.h"
#include "util/log.h"
#include "supervise/procfs.h"
#include "supervise/spawn.h"
#include "supervise/spawner.h"
#include "journal/crashpoint.h"

extern char **environ;

/* Variables of the daemon's own that must not leak into jobs. */
static bool env_private (const char *entry)
{
    return strncmp (entry, "CAIRN_CRASH_", 12) == 0 ||
           strncmp (entry, "CAIRN_FAULT=", 12) == 0 ||
           strncmp (entry, "CAIRN_BENCH_", 12) == 0;
}

/* What a command run as another user must not inherit from cairnd: the
 * shim sets them from the user's entry unless `add` has them. */
static bool env_login (const char *entry)
{
    static const char *const names[] = {
        "HOME=", "USER=", "LOGNAME=", "SHELL=", "MAIL=", "XDG_RUNTIME_DIR="};
    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
        if (strncmp (entry, names[i], strlen (names[i])) == 0)
            return true;
    return false;
}

/* A command's environment. A shell's (inherit false) is `add` alone: the
 * jobspec's variables and cairn's own, never cairnd's (which would hand
 * root's, or the service's, settings and PATH to every user's job). A
 * prolog's or epilog's (inherit true), the site's scripts run as cairnd's
 * user, is environ minus the names in `add` (and cairnd's login variables
 * for a command run as another user), plus `add`. */
static char **build_env (json_t *add, bool as_user, bool inherit)
{
    size_t n = 0, k = 0;
    while (inherit && environ[n])
        n++;
    char **envp = calloc (n + json_object_size (add) + 1, sizeof (*envp));
    if (!envp)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr (environ[i], '=');
        if (!eq || env_private (environ[i]) ||
            (as_user && env_login (environ[i])))
            continue;
        char name[256];
        size_t len = (size_t)(eq - environ[i]);
        if (len >= sizeof (name))
            continue;
        memcpy (name, environ[i], len);
        name[len] = '\0';
        if (json_object_get (add, name))
            continue;
        if (!(envp[k++] = strdup (environ[i])))
            goto nomem;
    }
    const char *name;
    json_t *val;
    json_object_foreach (add, name, val)
    {
        if (asprintf (&envp[k++], "%s=%s", name, json_string_value (val)) < 0) {
            envp[--k] = NULL;
            goto nomem;
        }
    }
    return envp;
nomem:
    job_argv_free (envp);
    return NULL;
}

static void watch_cb (struct ev_loop *loop, ev_io *w, int revents);
static void settle_cb (struct ev_loop *loop, ev_timer *t, int revents);
#define SETTLE_INTERVAL 0.005

int watch_add (struct cairnd *d,
               struct jobentry *je,
               struct nproc *np,
               const char *execid,
               pid_t pid,
               int pidfd)
{
    if (hashmap_get (d->watches, execid)) {
        /* one watcher per process: a second would be orphaned by the map
         * and outlive its job */
        log_msg (LOG_ERR, "%s is already watched", execid);
        errno = EEXIST;
        return -1;
    }
    struct watch *w = calloc (1, sizeof (*w));
    if (!w)
        return -1;
    w->d = d;
    w->je = je;
    w->np = np;
    w->pid = pid;
    w->pidfd = pidfd;
    snprintf (w->execid, sizeof (w->execid), "%s", execid);
    if (hashmap_put (d->watches, w->execid, w) < 0) {
        free (w);
        return -1;
    }
    ev_timer_init (&w->settle, settle_cb, SETTLE_INTERVAL, SETTLE_INTERVAL);
    w->settle.data = w;
    ev_io_init (&w->io, watch_cb, pidfd, EV_READ);
    w->io.data = w;
    ev_io_start (d->loop, &w->io);
    return 0;
}

/* Our supervisor's: its end comes as an ENDED (proc_ended), not through
 * its pidfd, which is readable before the exit record is written. */
static void watch_supervised (struct cairnd *d, struct watch *w)
{
    ev_io_stop (d->loop, &w->io);
    w->supervised = true;
}

/* Its supervisor died: the keeper sees it through, and we watch it as
 * an earlier supervisor's (its pidfd, then its exit record). */
static void watch_orphan (struct cairnd *d, struct watch *w)
{
    w->supervised = false;
    w->orphaned = true;
    ev_io_start (d->loop, &w->io);
}

void watch_started (struct cairnd *d,
                    const char *execid,
                    const struct shim_started *st)
{
    struct watch *w = hashmap_get (d->watches, execid);
    if (w && st->orphaned)
        watch_orphan (d, w);
    else if (w)
        watch_supervised (d, w);
}

size_t watch_orphan_all (struct cairnd *d)
{
    size_t pos = 0, n = 0;
    struct watch *w;

    while ((w = hashmap_next (d->watches, &pos, NULL))) {
        if (!w->supervised)
            continue;
        watch_orphan (d, w);
        n++;
    }
    return n;
}

void proc_ended (struct cairnd *d, const char *execid, int code)
{
    struct watch *w = execid ? hashmap_get (d->watches, execid) : NULL;
    char id[EXECID_LEN + 1];

    if (!w)
        return; /* not watched (could not be): its files go with the job */
    struct jobentry *je = w->je;
    struct nproc *np = w->np;
    snprintf (id, sizeof (id), "%s", execid);
    proc_unwatch (d, id);
    if (np)
        node_collect (d, np, code << 8);
    else
        proc_collect (je, id, code << 8);
}

int proc_watch (struct jobentry *je, const char *execid, pid_t pid, int pidfd)
{
    return watch_add (je->d, je, NULL, execid, pid, pidfd);
}

void proc_unwatch (struct cairnd *d, const char *execid)
{
    struct watch *w = execid ? hashmap_get (d->watches, execid) : NULL;
    if (!w)
        return;
    ev_io_stop (d->loop, &w->io);
    ev_timer_stop (d->loop, &w->settle);
    close (w->pidfd);
    hashmap_del (d->watches, execid);
    free (w);
}

void shim_gone_note (char *buf, size_t len, int shim_status, pid_t pid)
{
    if (shim_status >= 0)
        snprintf (buf, len,
                  "its supervisor could not record its exit status (code "
                  "%d)",
                  shim_status >> 8);
    else
        snprintf (buf, len,
                  "the process (pid %d) ended and left no exit status: its "
                  "supervisor died",
                  (int)pid);
}

/* A process ended: read what its shim left and tell the job. A missing
 * exit record means the outcome is lost (shim_status: the shim's own wait
 * status, or -1 when it is not our child), unless the command never
 * started. */
void proc_collect (struct jobentry *je, const char *execid, int shim_status)
{
    struct cairnd *d = je->d;
    struct job_ctx ctx;
    int status;
    char *error = NULL;

    const struct job_proc *p = job_proc_find (je->job, execid);
    if (!p || p->state == PROC_DONE) { /* given up on long ago */
        (void)exitfile_remove (d->exitdir, execid);
        return;
    }
    cairnd_ctx (d, &ctx);
    output_flush (je, p);
    CRASHPOINT ("exec.exitfile.read");
    long long osz, esz;
    int left = 0;
    if (exitfile_read_left (d->exitdir, execid, &status, &error, &osz, &esz,
                            &left) == 0) {
        size_t room = job_output_room (je->job, p->phase), olen = 0, elen = 0;
        bool otrunc = false, etrunc = false;
        /* a file the shim saw empty is not opened (most are) */
        char *out = osz == 0 ? NULL
                             : exitfile_read_output (d->exitdir, execid, "out",
                                                     room, &olen, &otrunc);
        char *err = esz == 0
                        ? NULL
                        : exitfile_read_output (d->exitdir, execid, "err",
                                                room > olen ? room - olen : 0,
                                                &elen, &etrunc);
        if (job_proc_exited_left (je->job, &ctx, execid, status, error, left,
                                  out, otrunc, err, etrunc, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: exit of %s: %s", je->name, execid,
                     strerror (errno));
        free (out);
        free (err);
        free (error);
    } else if (shim_status < 0 && !exitfile_started (d->exitdir, execid)) {
        /* Not our child: a shim adopted from the last cairnd, which died
         * before marking the start. Only that cairnd's death kills a shim
         * there (its pdeathsig, spawner.h; the pidfd may have been taken
         * while it was still a zombie), so the command never ran: it
         * runs now, once, as reconcile does for a shim already gone. */
        char note[160];
        snprintf (note, sizeof (note),
                  "the process (pid %d) ended before starting the command",
                  (int)p->pid);
        log_msg (LOG_INFO, "job %s: %s: %s: starting it again", je->name,
                 execid, note);
        if (job_proc_unstarted (je->job, &ctx, execid, note, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: restart of %s: %s", je->name, execid,
                     strerror (errno));
    } else {
        char note[160];
        shim_gone_note (note, sizeof (note), shim_status, p->pid);
        if (job_proc_lost (je->job, &ctx, execid, note, je->pending) < 0)
            log_msg (LOG_ERR, "job %s: loss of %s: %s", je->name, execid,
                     strerror (errno));
    }
    cairnd_dirty (je);
}

/* The end of a watched process that is not our child: its supervisor
 * (an earlier cairnd's) writes the exit record while the process is a
 * zombie and reaps it after. Collect once the file is there, or once the
 * process is reaped without one, or is a zombie no supervisor holds (its
 * supervisor died: whoever reaps it writes nothing). */
static bool settled (struct watch *w)
{
    int status;
    char *error = NULL;
    if (exitfile_read (w->d->exitdir, w->execid, &status, &error) == 0) {
        free (error);
        return true;
    }
    if (pidfd_send_signal (w->pidfd, 0, NULL, 0) < 0 && errno == ESRCH)
        return true;
    return procfs_zombie_unsupervised (w->d->procroot, w->pid) == 1;
}

static void watch_end (struct watch *w, int shim_status)
{
    struct jobentry *je = w->je;
    struct nproc *np = w->np;
    struct cairnd *d = w->d;
    char execid[EXECID_LEN + 1];

    snprintf (execid, sizeof (execid), "%s", w->execid);
    /* No supervisor killed the rest of its cgroup: the keeper knows
     * only its process group. */
    if (w->orphaned)
        cgroup_reap (d, execid);
    proc_unwatch (d, execid);
    if (np)
        node_collect (d, np, shim_status);
    else
        proc_collect (je, execid, shim_status);
}

static void settle_cb (struct ev_loop *loop, ev_timer *t, int revents)
{
    struct watch *w = t->data;
    if (settled (w))
        watch_end (w, -1);
}

static void watch_cb (struct ev_loop *loop, ev_io *io, int revents)
{
    struct watch *w = io->data;
    int shim_status = -1;

    if (shim_reap (w->pidfd, &shim_status) < 0 && errno == EAGAIN)
        return; /* spurious wake-up */
    if (shim_status < 0 && !settled (w)) {
        ev_io_stop (loop, &w->io);
        ev_timer_start (loop, &w->settle);
        return;
    }
    watch_end (w, shim_status);
}

/* The user's entry through NSS (what the static shim cannot use): its
 * groups, the primary one first, into *groups (malloc'd), and HOME, USER,
 * LOGNAME and SHELL into env unless it has them. -1 with err: no such user
 * here, or out of memory. */
static int user_lookup (uid_t uid,
                        json_t *env,
                        gid_t **groups,
                        size_t *ngroups,
                        struct cairn_error *err)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    int n = 64;
    gid_t *g = NULL;

    if (getpwuid_r (uid, &pw, buf, sizeof (buf), &res) != 0 || !res)
        return errprintf (err, "no user with uid %u on this host",
                          (unsigned)uid);
    for (;;) {
        gid_t *ng = realloc (g, (size_t)(n + 1) * sizeof (*g));
        if (!ng) {
            free (g);
            return errprintf (err, "out of memory");
        }
        g = ng;
        int want = n;
        if (getgrouplist (pw.pw_name, pw.pw_gid, g + 1, &want) >= 0) {
            n = want;
            break;
        }
        n = want > n ? want : n * 2;
    }
    /* the primary group first, once */
    size_t k = 1;
    g[0] = pw.pw_gid;
    for (int i = 0; i < n; i++)
        if (g[1 + i] != pw.pw_gid)
            g[k++] = g[1 + i];
    *groups = g;
    *ngroups = k;
    const char *vars[][2] = {
        {"HOME", pw.pw_dir},
        {"USER", pw.pw_name},
        {"LOGNAME", pw.pw_name},
        {"SHELL", pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh"},
    };
    for (size_t i = 0; env && i < sizeof (vars) / sizeof (vars[0]); i++)
        if (!json_object_get (env, vars[i][0]))
            json_object_set_new (env, vars[i][0], json_string (vars[i][1]));
    return 0;
}

/* The start time the journal keeps for a shim (what a restart checks its
 * pid against) comes from the spawner's clock (spawner.h), which spares a
 * /proc read per process; /proc/PID/stat is the authority. The first
 * START_CHECKS spawns and every START_CHECK_EVERY-th one are read there
 * too, and one disagreement sends every spawn after it to /proc. */
#define START_CHECKS 16
#define START_CHECK_EVERY 4096

static void start_time_check (struct cairnd *d,
                              const char *execid,
                              struct shim_started *out)
{
    unsigned long long ticks = d->clock_starts_bad ? 0 : out->starttime;
    if (ticks != 0 && d->test_clock_skew)
        ticks++;
    bool check =
        d->nspawned <= START_CHECKS || d->nspawned % START_CHECK_EVERY == 0;

    if (ticks != 0 && !check)
        return;
    if (procfs_starttime (d->procroot, out->pid, &out->starttime) < 0) {
        /* Gone already: its supervisor wrote its exit record, then reaped
         * it, and its ENDED is on its way. Else a broken /proc: watch it
         * anyway. */
        if (errno != ENOENT && errno != ESRCH)
            log_msg (LOG_WARNING, "%s: no start time for pid %d: %s", execid,
                     (int)out->pid, strerror (errno));
        out->starttime = ticks; /* 0 if the clock could not tell either */
        return;
    }
    if (ticks != 0 && ticks != out->starttime) {
        log_msg (LOG_WARNING,
                 "%s: the spawner's clock gave pid %d the start time %llu "
                 "where /proc gives %llu; reading /proc for every process "
                 "from now on",
                 execid, (int)out->pid, ticks, out->starttime);
        d->clock_starts_bad = true;
    }
}

/* After the start: count it, and check its start time. */
static void shim_started_check (struct cairnd *d,
                                const char *execid,
                                struct shim_started *out)
{
    CRASHPOINT ("exec.spawn.after");
    if (out->pid == 0) /* nothing started: the exit record says why */
        return;
    d->nspawned++;
    start_time_check (d, execid, out);
}

/* The supervisor died in the spawn of execid (EPIPE). Once its last start
 * is settled, the command's marker and exit record tell what became of it
 * (proc_look): it ran and ended (pid 0: its exit record, or none, is
 * collected), it runs on as the keeper's child (orphaned), or it never started
 * (spawned again, through the new supervisor). A failure of that last
 * spawn is a spawn failure like any other. */
static int spawn_cut_short (struct cairnd *d,
                            const char *execid,
                            const struct shim_spec *spec,
                            struct shim_started *out,
                            struct cairn_error *err)
{
    struct proc_look look;

    log_msg (LOG_ERR, "%s: the supervisor died during its spawn", execid);
    if (cairnd_spawner_recover (d, err) < 0 ||
        proc_look (d, execid, false, 0, 0, NULL, &look, err) < 0)
        cairnd_spawner_lost (d); /* a restart looks again */
    out->pid = 0;
    out->pidfd = -1;
    switch (look.verdict) {
    case LOOK_UNSTARTED:
        return spawner_spawn (d->spawner, spec, &out->pid, &out->pidfd,
                              &out->starttime, err);
    case LOOK_ALIVE:
        out->pid = look.pid;
        out->pidfd = look.pidfd;
        out->starttime = look.starttime;
        out->orphaned = true;
        return 0;
    default: /* exited: its exit record; lost: collected as lost */
        return 0;
    }
}

int shim_start (struct cairnd *d,
                const char *execid,
                char **argv,
                json_t *env,
                const char *cwd,
                size_t max_output,
                int64_t user,
                bool async,
                struct shim_started *out,
                struct cairn_error *err)
{
    bool as_user = user >= 0 && (uid_t)user != d->uid;
    gid_t *groups = NULL;
    size_t ngroups = 0;
    char cg[4096];
    int rc;

    if (as_user && user_lookup ((uid_t)user, env, &groups, &ngroups, err) < 0)
        return -1;
    char **envp = build_env (env, as_user, user < 0);
    if (!envp) {
        free (groups);
        return errprintf (err, "cannot build the command: %s",
                          strerror (errno));
    }
    struct shim_spec spec = {.shim = d->shim,
                             .exitdir = d->xd.path,
                             .execid = execid,
                             .argv = argv,
                             .envp = envp,
                             .cwd = cwd,
                             .max_output = max_output > 0 ? max_output : 1,
                             .as_user = as_user,
                             .uid = as_user ? (uid_t)user : 0,
                             .groups = groups,
                             .ngroups = ngroups,
                             .cgroup = cgroup_path (d, execid, cg, sizeof (cg)),
                             /* a job's shells only: the prolog and epilog
                              * are the site's own */
                             .pids_max = user >= 0 ? d->cfg.cgroup_pids_max : 0,
                             .memory_max =
                                 user >= 0 ? d->cfg.cgroup_memory_max : 0};
    CRASHPOINT ("exec.spawn.before");
    *out = (struct shim_started){.pidfd = -1};
    if (async) {
        rc = spawner_request (d->spawner, &spec, err);
        out->pending = rc == 0;
    } else
        rc = spawner_spawn (d->spawner, &spec, &out->pid, &out->pidfd,
                            &out->starttime, err);
    if (rc < 0 && errno == EPIPE) /* it may have started: find out */
        rc = spawn_cut_short (d, execid, &spec, out, err);
    job_argv_free (envp);
    free (groups);
    if (rc < 0)
        return -1;
    cairnd_spawner_poke (d);
    if (!out->pending)
        shim_started_check (d, execid, out);
    return 0;
}

/* What proc_spawn does once the supervisor has answered: rc, st and err
 * as shim_start's. */
static void spawn_done (struct jobentry *je,
                        const char *execid,
                        int rc,
                        struct shim_started *st,
                        const struct cairn_error *err)
{
    struct cairnd *d = je->d;
    struct job_ctx ctx;

    if (rc < 0) {
        log_msg (LOG_WARNING, "job %s: %s: %s", je->name, execid, err->text);
        cairnd_ctx (d, &ctx);
        (void)job_proc_failed (je->job, &ctx, execid, err->text, je->pending);
        cairnd_dirty (je);
        return;
    }
    if (st->pid == 0) { /* its exit record says why it could not start */
        proc_collect (je, execid, 0);
        return;
    }
    if (proc_watch (je, execid, st->pid, st->pidfd) < 0) {
        close (st->pidfd);
        log_msg (LOG_ERR, "%s: cannot watch pid %d", execid, (int)st->pid);
    } else
        watch_started (d, execid, st);
    cairnd_ctx (d, &ctx);
    if (job_proc_spawned (je->job, &ctx, execid, st->pid, st->starttime,
                          d->bootid, je->pending) < 0)
        log_msg (LOG_ERR, "job %s: spawn record: %s", je->name,
                 strerror (errno));
    cairnd_dirty (je);
}

/* Remember a request sent and not yet answered: the answers come in
 * order. Returns 0, or -1 (ENOMEM). */
static int pending_push (struct cairnd *d,
                         struct jobentry *je,
                         const char *execid)
{
    if (d->pend_head > 0 && d->pend_head == d->npend) /* drained */
        d->pend_head = d->npend = 0;
    if (d->npend == d->pend_room) {
        if (d->pend_head > 0) { /* reuse the answered front */
            memmove (d->pend, d->pend + d->pend_head,
                     (d->npend - d->pend_head) * sizeof (*d->pend));
            d->npend -= d->pend_head;
            d->pend_head = 0;
        } else {
            size_t room = d->pend_room ? d->pend_room * 2 : 64;
            struct spawn_pending *n = realloc (d->pend, room * sizeof (*n));
            if (!n)
                return -1;
            d->pend = n;
            d->pend_room = room;
        }
    }
    struct spawn_pending *p = &d->pend[d->npend++];
    p->je = je;
    snprintf (p->execid, sizeof (p->execid), "%s", execid);
    return 0;
}

void spawn_answered (struct cairnd *d, const struct spawner_msg *m, int fd)
{
    struct shim_started st = {.pidfd = -1};
    struct cairn_error err = {{0}};

    if (d->pend_head == d->npend) { /* cannot happen: spawner_next checks */
        if (fd >= 0)
            close (fd);
        return;
    }
    struct spawn_pending p = d->pend[d->pend_head++];
    if (strcmp (p.execid, m->execid) != 0)
        log_msg (LOG_ERR, "the supervisor answered %s for %s", m->execid,
                 p.execid);
    int rc = spawner_started (m, fd, d->shim, &st.pid, &st.pidfd,
                              &st.starttime, &err);
    if (rc == 0)
        shim_started_check (d, p.execid, &st);
    spawn_done (p.je, p.execid, rc, &st, &err);
}

void spawn_pending_orphan (struct cairnd *d)
{
    for (size_t i = d->pend_head; i < d->npend; i++) {
        if (d->nlost == d->lost_room) {
            size_t room = d->lost_room ? d->lost_room * 2 : 64;
            struct spawn_pending *n = realloc (d->lost, room * sizeof (*n));
            if (!n)
                cairnd_spawner_lost (d); /* a restart judges them */
            d->lost = n;
            d->lost_room = room;
        }
        d->lost[d->nlost++] = d->pend[i];
    }
    d->pend_head = d->npend = 0;
}

void spawn_orphans_settle (struct cairnd *d)
{
    size_t n = d->nlost;

    d->nlost = 0;
    for (size_t i = 0; i < n; i++) {
        struct spawn_pending *p = &d->lost[i];
        struct shim_started st = {.pidfd = -1};
        struct cairn_error err = {{0}};
        struct proc_look look;

        if (proc_look (d, p->execid, false, 0, 0, NULL, &look, &err) < 0) {
            log_msg (LOG_ERR, "%s", err.text);
            cairnd_spawner_lost (d); /* a restart looks again */
        }
        log_msg (LOG_INFO, "%s: its supervisor died before answering: %s",
                 p->execid,
                 look.verdict == LOOK_UNSTARTED ? "never started; starting it"
                 : look.verdict == LOOK_ALIVE   ? "running; the keeper's now"
                 : look.verdict == LOOK_EXITED  ? "it ended"
                                                : look.why);
        if (look.verdict == LOOK_UNSTARTED) {
            (void)proc_spawn (p->je, p->execid);
            continue;
        }
        if (look.verdict == LOOK_LOST) {
            struct job_ctx ctx;
            cairnd_ctx (d, &ctx);
            (void)job_proc_lost (p->je->job, &ctx, p->execid, look.why,
                                 p->je->pending);
            cairnd_dirty (p->je);
            continue;
        }
        if (look.verdict == LOOK_ALIVE) {
            st.pid = look.pid;
            st.pidfd = look.pidfd;
            st.starttime = look.starttime;
            st.orphaned = true;
        }
        shim_started_check (d, p->execid, &st);
        spawn_done (p->je, p->execid, 0, &st, &err);
    }
}

int proc_spawn (struct jobentry *je, const char *execid)
{
    struct cairnd *d = je->d;
    const struct job_proc *p = job_proc_find (je->job, execid);
    char **argv = NULL;
    const char *cwd;
    json_t *env = NULL;
    struct cairn_error err = {{0}};
    struct shim_started st = {.pidfd = -1};
    int rc;

    if (!p || p->state != PROC_INTENT)
        return 0;
    if ((rc = job_proc_command (je->job, p, &argv, &cwd, &env)) < 0)
        errprintf (&err, "cannot build the command: %s", strerror (errno));
    else
        /* no more output than could still be journaled; a shell runs as
         * its job's user, a prolog or epilog as cairnd's (the site's
         * scripts). Not waiting for the answer: the supervisor's start
         * and ours overlap (spawn_answered). */
        rc = shim_start (
            d, execid, argv, env, cwd, job_output_room (je->job, p->phase),
            p->phase == PHASE_SHELL ? (int64_t)job_shell_uid (je->job) : -1,
            true, &st, &err);
    if (rc == 0 && st.pending) {
        if (pending_push (d, je, execid) < 0)
            cairnd_spawner_lost (d); /* an answer we could not match */
    } else
        spawn_done (je, execid, rc, &st, &err);
    job_argv_free (argv);
    json_decref (env);
    return rc;
}

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2)
#endif

/* Send signum to the process group the process of pidfd leads (every
 * command leads its own). Through the pidfd (Linux 6.9) the group cannot
 * be a stranger's; before 6.9, kill(-pid) while the pidfd says the leader
 * has not exited: its pid, the group's id, cannot be reused before its
 * supervisor reaps it, which is after its exit. */
static int cmd_signal (int pidfd, pid_t pid, int signum)
{
    if (pidfd_send_signal (pidfd, signum, NULL, PIDFD_SIGNAL_PROCESS_GROUP) ==
        0)
        return 0;
    if (errno != EINVAL)
        return -1;
    struct pollfd pf = {.fd = pidfd, .events = POLLIN};
    if (poll (&pf, 1, 0) != 0) {
        errno = ESRCH;
        return -1;
    }
    return kill (-pid, signum);
}

void proc_signal (struct cairnd *d, const char *execid, int signum)
{
    proc_signal_to (d, execid, signum, false);
}

void proc_signal_to (struct cairnd *d,
                     const char *execid,
                     int signum,
                     bool session)
{
    struct watch *w = execid ? hashmap_get (d->watches, execid) : NULL;
    if (!w)
        return; /* ended meanwhile: its exit is on its way */
    CRASHPOINT ("exec.signal.before");
    if (cmd_signal (w->pidfd, w->pid, signum) < 0 && errno != ESRCH)
        log_msg (LOG_WARNING, "%s: signal %d: %s", execid, signum,
                 strerror (errno));
    /* The kill escalation reaches the whole session: a job shell's tasks
     * sit in groups of their own, and stock Flux has the shell kill them
     * all (flux_job_kill). Once the leader has exited its supervisor kills
     * what is left of the session (shim/cmd.h). */
    if (session) {
        int n = procfs_signal_session (d->procroot, w->pid, w->pidfd, signum);
        if (n > 0)
            log_msg (LOG_INFO,
                     "%s: signal %d to %d other process(es) of its "
                     "session",
                     execid, signum, n);
    }
    CRASHPOINT ("exec.signal.after");
}

/* The end of a process is committed: its files can go. A process we gave
 * up on (unkillable) may still be running: keep watching it so that its
 * files are removed when it finally ends. A process whose shim was lost
 * may have left descendants the shim can no longer stop (PDEATHSIG reaches
 * only the command itself): end whatever still carries its execid, so no
 * user work runs on unseen. */
void proc_finished (struct jobentry *je, const char *execid, bool lost)
{
    if (!execid || hashmap_get (je->d->watches, execid))
        return;
    if (lost) {
        CRASHPOINT ("exec.orphans.kill.before");
        cgroup_reap (je->d, execid);
        int n = procfs_kill_execid (je->d->procroot, execid, SIGKILL);
        if (n > 0)
            log_msg (LOG_WARNING, "job %s: %s: killed %d leftover process(es)",
                     je->name, execid, n);
    }
    janitor_push (je->d->janitor, execid); /* janitor.h: off the loop */
}
