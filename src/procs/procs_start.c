/* procs_start.c - starting a command through the supervisor: its
 * environment and user, the start time kept for a restart, the requests
 * in flight and their answers, and those a dead supervisor left
 * unanswered.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procs/procs_private.h"
#include "journal/crashpoint.h"
#include "supervise/procfs.h"
#include "supervise/spawn.h"
#include "supervise/spawner.h"
#include "util/log.h"

extern char **environ;

/* Variables of the daemon's own that must not leak into jobs. */
static bool env_private (const char *entry)
{
    return strncmp (entry, "CAIRN_CRASH_", 12) == 0 ||
           strncmp (entry, "CAIRN_FAULT=", 12) == 0 ||
           strncmp (entry, "CAIRN_BENCH_", 12) == 0;
}

/* cairnd's environment as a prolog or epilog inherits it, taken once
 * (nothing in cairnd changes its environment): environ without cairnd's
 * private variables. NULL if out of memory. */
static const struct procs_env *env_inherited (struct procs *p)
{
    struct procs_env *e = &p->inherit;
    size_t n = 0, k = 0;

    if (e->v)
        return e;
    while (environ[n])
        n++;
    if (!(e->v = calloc (n + 1, sizeof (*e->v))) ||
        !(e->namelen = calloc (n + 1, sizeof (*e->namelen))))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr (environ[i], '=');
        if (!eq || env_private (environ[i]))
            continue;
        if (!(e->v[k] = strdup (environ[i])))
            goto nomem;
        e->namelen[k++] = (size_t)(eq - environ[i]);
    }
    e->n = k;
    return e;
nomem:
    procs_env_clear (e);
    return NULL;
}

void procs_env_clear (struct procs_env *e)
{
    for (size_t i = 0; e->v && e->v[i]; i++)
        free (e->v[i]);
    free (e->v);
    free (e->namelen);
    *e = (struct procs_env){0};
}

/* A command's environment. A shell's (inherit false) is `add` alone: the
 * jobspec's variables and cairn's own, never cairnd's (which would hand
 * root's, or the service's, settings and PATH to every user's job). A
 * prolog's or epilog's (inherit true), the site's scripts run as cairnd's
 * own user, is environ minus the names in `add`, plus `add`. One
 * allocation, freed with free(): `add`'s entries are written after the
 * array, the inherited ones point into p's copy of environ. */
static char **build_env (struct procs *p, json_t *add, bool inherit)
{
    const struct procs_env *e = NULL;
    size_t n = 0, k = 0, bytes = 0, nadd = json_object_size (add);
    const char *name;
    json_t *val;

    if (inherit) {
        if (!(e = env_inherited (p)))
            return NULL;
        n = e->n;
    }
    json_object_foreach (add, name, val)
    {
        if (json_is_string (val)) /* all are: job_proc_command's */
            bytes += strlen (name) + strlen (json_string_value (val)) + 2;
    }
    char **envp = malloc ((n + nadd + 1) * sizeof (*envp) + bytes);
    if (!envp)
        return NULL;
    char *s = (char *)(envp + n + nadd + 1);
    for (size_t i = 0; i < n; i++)
        if (!json_object_getn (add, e->v[i], e->namelen[i]))
            envp[k++] = e->v[i];
    json_object_foreach (add, name, val)
    {
        if (!json_is_string (val))
            continue;
        size_t nl = strlen (name), vl = strlen (json_string_value (val));
        envp[k++] = s;
        memcpy (s, name, nl);
        s[nl] = '=';
        memcpy (s + nl + 1, json_string_value (val), vl + 1);
        s += nl + vl + 2;
    }
    envp[k] = NULL;
    return envp;
}

/* The user's entry through NSS (what the static shim cannot use): its
 * groups, the primary one first, into *groups (malloc'd), HOME, USER,
 * LOGNAME and SHELL into env unless it has them, and, where home is not
 * NULL, its home directory into *home (malloc'd, NULL if it has none).
 * -1 with err: no such user here, or out of memory. */
static int user_lookup (uid_t uid,
                        json_t *env,
                        gid_t **groups,
                        size_t *ngroups,
                        char **home,
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
    if (home && pw.pw_dir && *pw.pw_dir && !(*home = strdup (pw.pw_dir))) {
        free (g);
        return errprintf (err, "out of memory");
    }
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

/* The home directory of uid in the user database (NSS), allocated, or
 * NULL: no such user, or out of memory. */
static char *home_lookup (uid_t uid)
{
    struct passwd pw, *res = NULL;
    char buf[16384];

    if (getpwuid_r (uid, &pw, buf, sizeof (buf), &res) != 0 || !res ||
        !pw.pw_dir || !*pw.pw_dir)
        return NULL;
    return strdup (pw.pw_dir);
}

/* The default RLIMIT_NOFILE of a user's command: systemd's default for
 * every service and login session (since v240: select() needs the soft
 * 1024, programs that want more raise it up to the hard). */
#define RLIMIT_NOFILE_SOFT 1024
#define RLIMIT_NOFILE_HARD 524288
/* The kernel's RLIMIT_NPROC for every process, when threads-max cannot be
 * read (it is threads-max / 2, fork.c). */
#define RLIMIT_NPROC_FALLBACK 4096

void procs_rlimit_setup (struct procs *p, const struct cairn_config *cfg)
{
    p->nofile.rlim_cur = RLIMIT_NOFILE_SOFT;
    p->nofile.rlim_max = RLIMIT_NOFILE_HARD;
    if (cfg->rlimit_nofile > 0)
        p->nofile.rlim_cur = p->nofile.rlim_max = (rlim_t)cfg->rlimit_nofile;
    long long threads = 0;
    FILE *f = fopen ("/proc/sys/kernel/threads-max", "re");
    if (f && fscanf (f, "%lld", &threads) != 1)
        threads = 0;
    if (f)
        fclose (f);
    rlim_t nproc = threads >= 2 ? (rlim_t)(threads / 2) : RLIMIT_NPROC_FALLBACK;
    if (cfg->rlimit_nproc > 0)
        nproc = (rlim_t)cfg->rlimit_nproc;
    else if (threads < 2)
        log_msg (LOG_WARNING,
                 "cannot read /proc/sys/kernel/threads-max: a user's "
                 "command gets RLIMIT_NPROC %d (rlimit-nproc)",
                 RLIMIT_NPROC_FALLBACK);
    p->nproc.rlim_cur = p->nproc.rlim_max = nproc;
}

/* The start time the journal keeps for a shim (what a restart checks its
 * pid against) comes from the spawner's clock (spawner.h), which spares a
 * /proc read per process; /proc/PID/stat is the authority. The first
 * START_CHECKS spawns and every START_CHECK_EVERY-th one are read there
 * too, and one disagreement sends every spawn after it to /proc. */
#define START_CHECKS 16
#define START_CHECK_EVERY 4096

static void start_time_check (struct procs *p,
                              const char *execid,
                              struct procs_started *out)
{
    unsigned long long ticks = p->clock_starts_bad ? 0 : out->starttime;
    if (ticks != 0 && p->test_clock_skew)
        ticks++;
    bool check =
        p->nspawned <= START_CHECKS || p->nspawned % START_CHECK_EVERY == 0;

    if (ticks != 0 && !check)
        return;
    if (procfs_starttime (p->procroot, out->pid, &out->starttime) < 0) {
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
        p->clock_starts_bad = true;
    }
}

/* After the start: count it, and check its start time. */
static void
started_check (struct procs *p, const char *execid, struct procs_started *out)
{
    CRASHPOINT ("exec.spawn.after");
    if (out->pid == 0) /* nothing started: the exit record says why */
        return;
    p->nspawned++;
    start_time_check (p, execid, out);
}

/* The supervisor died in the spawn of execid (EPIPE). Once its last start
 * is settled, the command's marker and exit record tell what became of it
 * (procs_look): it ran and ended (pid 0: its exit record, or none, is
 * collected), it runs on as the keeper's child (orphaned), or it never
 * started (spawned again, through the new supervisor). A failure of that
 * last spawn is a spawn failure like any other. */
static int spawn_cut_short (struct procs *p,
                            const char *execid,
                            const struct shim_spec *spec,
                            struct procs_started *out,
                            struct cairn_error *err)
{
    struct proc_look look;

    log_msg (LOG_ERR, "%s: the supervisor died during its spawn", execid);
    if (procs_recover (p, err) < 0 ||
        procs_look (p, execid, false, 0, 0, NULL, &look, err) < 0)
        procs_lost (p); /* a restart looks again */
    out->pid = 0;
    out->pidfd = -1;
    switch (look.verdict) {
    case LOOK_UNSTARTED:
        return spawner_spawn (p->spawner, spec, &out->pid, &out->pidfd,
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

/* Remember a request sent and not yet answered: the answers come in
 * order. Returns 0, or -1 (ENOMEM). */
static int pending_push (struct procs *p,
                         const char *execid,
                         void *owner,
                         const struct procs_owner_ops *ops)
{
    if (p->pend_head > 0 && p->pend_head == p->npend) /* drained */
        p->pend_head = p->npend = 0;
    if (p->npend == p->pend_room) {
        if (p->pend_head > 0) { /* reuse the answered front */
            memmove (p->pend, p->pend + p->pend_head,
                     (p->npend - p->pend_head) * sizeof (*p->pend));
            p->npend -= p->pend_head;
            p->pend_head = 0;
        } else {
            size_t room = p->pend_room ? p->pend_room * 2 : 64;
            struct pending *n = realloc (p->pend, room * sizeof (*n));
            if (!n)
                return -1;
            p->pend = n;
            p->pend_room = room;
        }
    }
    struct pending *q = &p->pend[p->npend++];
    q->owner = owner;
    q->ops = ops;
    snprintf (q->execid, sizeof (q->execid), "%s", execid);
    return 0;
}

int procs_start (struct procs *p,
                 const char *execid,
                 char **argv,
                 json_t *env,
                 const char *cwd,
                 size_t max_output,
                 int64_t user,
                 bool async,
                 void *owner,
                 const struct procs_owner_ops *ops,
                 struct procs_started *out,
                 struct cairn_error *err)
{
    bool as_user = user >= 0 && (uid_t)user != p->uid;
    gid_t *groups = NULL;
    size_t ngroups = 0;
    char cg[4096];
    int rc;

    /* No cwd: never cairnd's own. A job's command starts in its user's
     * home, as a login and Slurm's default do (the shim falls back to /
     * if the user cannot enter it); a prolog or epilog, the site's
     * scripts, in /. One lookup of the user: its groups and its home. */
    char *home = NULL;
    *out = (struct procs_started){.pidfd = -1};
    if (as_user && user_lookup ((uid_t)user, env, &groups, &ngroups,
                                cwd ? NULL : &home, err) < 0)
        return -1;
    if (!as_user && !cwd && user >= 0)
        home = home_lookup ((uid_t)user);
    if (!cwd && !home)
        cwd = "/";
    /* user < 0: a prolog or epilog, run as cairnd's own user */
    char **envp = build_env (p, env, user < 0);
    if (!envp) {
        free (groups);
        free (home);
        return errprintf (err, "cannot build the command: %s",
                          strerror (errno));
    }
    struct shim_spec spec = {
        .shim = p->shim,
        .exitdir = p->xd.path,
        .execid = execid,
        .argv = argv,
        .envp = envp,
        .cwd = cwd,
        .home = home,
        .max_output = max_output > 0 ? max_output : 1,
        .as_user = as_user,
        .uid = as_user ? (uid_t)user : 0,
        .groups = groups,
        .ngroups = ngroups,
        .cgroup = procs_cgroup_path (p, execid, cg, sizeof (cg)),
        /* a job's shells only: the prolog and epilog are the site's own */
        /* a user's command: the site's limits, never cairnd's */
        .rlimits = as_user,
        .nofile = p->nofile,
        .nproc = p->nproc,
        .pids_max = user >= 0 ? p->pids_max : 0,
        .memory_max = user >= 0 ? p->memory_max : 0};
    CRASHPOINT ("exec.spawn.before");
    if (async) {
        rc = spawner_request (p->spawner, &spec, err);
        out->pending = rc == 0;
    } else
        rc = spawner_spawn (p->spawner, &spec, &out->pid, &out->pidfd,
                            &out->starttime, err);
    if (rc < 0 && errno == EPIPE) /* it may have started: find out */
        rc = spawn_cut_short (p, execid, &spec, out, err);
    free (envp);
    free (groups);
    free (home);
    if (rc < 0)
        return -1;
    procs_poke (p);
    if (out->pending && pending_push (p, execid, owner, ops) < 0)
        procs_lost (p); /* an answer we could not match */
    if (!out->pending)
        started_check (p, execid, out);
    return 0;
}

void procs_answered (struct procs *p, const struct spawner_msg *m, int fd)
{
    struct procs_started st = {.pidfd = -1};
    struct cairn_error err = {{0}};

    if (p->pend_head == p->npend) { /* cannot happen: spawner_next checks */
        if (fd >= 0)
            close (fd);
        return;
    }
    struct pending q = p->pend[p->pend_head++];
    if (strcmp (q.execid, m->execid) != 0)
        log_msg (LOG_ERR, "the supervisor answered %s for %s", m->execid,
                 q.execid);
    int rc = spawner_started (m, fd, p->shim, &st.pid, &st.pidfd, &st.starttime,
                              &err);
    if (rc == 0)
        started_check (p, q.execid, &st);
    q.ops->answered (q.owner, q.execid, rc < 0 ? PROCS_FAILED : PROCS_STARTED,
                     &st, &err);
}

void procs_pending_orphan (struct procs *p)
{
    for (size_t i = p->pend_head; i < p->npend; i++) {
        if (p->nlost == p->lost_room) {
            size_t room = p->lost_room ? p->lost_room * 2 : 64;
            struct pending *n = realloc (p->lost, room * sizeof (*n));
            if (!n)
                procs_lost (p); /* a restart judges them */
            p->lost = n;
            p->lost_room = room;
        }
        p->lost[p->nlost++] = p->pend[i];
    }
    p->pend_head = p->npend = 0;
}

void procs_orphans_settle (struct procs *p)
{
    /* Taken out first: an answer may start a process again, and a
     * supervisor that dies in that start leaves its own unanswered
     * requests in p->lost, which must not overwrite these. */
    struct pending *lost = p->lost;
    size_t n = p->nlost;

    p->lost = NULL;
    p->nlost = p->lost_room = 0;
    for (size_t i = 0; i < n; i++) {
        struct pending *q = &lost[i];
        struct procs_started st = {.pidfd = -1};
        struct cairn_error err = {{0}};
        struct proc_look look;

        if (procs_look (p, q->execid, false, 0, 0, NULL, &look, &err) < 0) {
            log_msg (LOG_ERR, "%s", err.text);
            procs_lost (p); /* a restart looks again */
        }
        log_msg (LOG_INFO, "%s: its supervisor died before answering: %s",
                 q->execid,
                 look.verdict == LOOK_UNSTARTED ? "never started; starting it"
                 : look.verdict == LOOK_ALIVE   ? "running; the keeper's now"
                 : look.verdict == LOOK_EXITED  ? "it ended"
                                                : look.why);
        if (look.verdict == LOOK_UNSTARTED) {
            q->ops->answered (q->owner, q->execid, PROCS_UNSTARTED, &st, &err);
            continue;
        }
        if (look.verdict == LOOK_LOST) {
            errprintf (&err, "%s", look.why);
            q->ops->answered (q->owner, q->execid, PROCS_LOST, &st, &err);
            continue;
        }
        if (look.verdict == LOOK_ALIVE) {
            st.pid = look.pid;
            st.pidfd = look.pidfd;
            st.starttime = look.starttime;
            st.orphaned = true;
        }
        started_check (p, q->execid, &st);
        q->ops->answered (q->owner, q->execid, PROCS_STARTED, &st, &err);
    }
    free (lost);
}
