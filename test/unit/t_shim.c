/* t_shim - a command's supervision: the real cairn-shim as the node's
 * supervisor (spawner.h), which starts each command itself, caps its
 * output, writes its exit record and says ENDED; and, run by hand, as a
 * lone shim of one command.
 *
 * The test makes itself a child subreaper so that processes orphaned by a
 * dying supervisor or command are reparented here and can be reaped:
 * otherwise they would linger as zombies of an init that may not reap,
 * and "is it dead" could not be told from "is it a zombie".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "tap.h"

#include "supervise/exitfile.h"
#include "supervise/procfs.h"
#include "supervise/shim_proto.h"
#include "supervise/spawn.h"
#include "supervise/spawner.h"
#include "journal/crashpoint.h"
#include "shim/userdb.h"

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2)
#endif

static char shim_path[PATH_MAX];
static char tmpdir[] = "/tmp/t_shim.XXXXXX";
static char exitdir[PATH_MAX];
static int dirfd_exits = -1;
static struct keeper *keeper; /* the parent of sp */
static struct spawner *sp;

/* A supervisor of its own, through a keeper of its own (*k): both take
 * our environment and signal mask as they are now. */
static struct spawner *supervisor_own (struct keeper **k)
{
    struct cairn_error err = {{0}};
    struct spawner *s = NULL;

    if (!(*k = keeper_create (shim_path, &err)) ||
        keeper_exitdir (*k, dirfd_exits, &err) < 0 ||
        !(s = spawner_create (*k, &err)))
        BAIL_OUT ("supervisor: %s", err.text);
    return s;
}

struct run {
    char execid[SHIM_EXECID_LEN + 1];
    char envvar[64];
    struct spawner *sp;           /* the supervisor that runs it */
    pid_t pid;                    /* the command's, 0 if no process was made */
    int pidfd;                    /* on the command, or -1 */
    unsigned long long starttime; /* the supervisor's, 0 if it could not tell */
};

static void new_execid (char *buf)
{
    uuid_t u;
    uuid_generate (u);
    uuid_unparse_lower (u, buf);
}

/* How to run a command, beyond its argv and cwd. */
struct run_opts {
    size_t max_output;
    bool as_user;
    uid_t uid;
    const gid_t *groups; /* --groups, as cairnd passes them */
    size_t ngroups;
    char *env;           /* one more environment entry, or NULL; a
                            "PATH=..." one replaces the default PATH */
    bool no_path;        /* no PATH at all in the environment */
    struct spawner *via; /* the supervisor to ask, or NULL: sp */
    const char *execid;  /* an execid used before, or NULL: a new one */
};

/* Ask the supervisor to run argv; spawner_spawn's result. */
static int spawn_try (struct run *r,
                      char *const argv[],
                      const char *cwd,
                      const struct run_opts *o,
                      struct cairn_error *err)
{
    bool path = o->env && strncmp (o->env, "PATH=", 5) == 0;
    char *envp[] = {r->envvar, path ? o->env : "PATH=/usr/bin:/bin",
                    path ? NULL : o->env, NULL};
    if (o->no_path) {
        envp[1] = o->env;
        envp[2] = NULL;
    }

    if (o->execid)
        snprintf (r->execid, sizeof (r->execid), "%s", o->execid);
    else
        new_execid (r->execid);
    snprintf (r->envvar, sizeof (r->envvar), SHIM_ENV_EXECID "=%s", r->execid);
    r->sp = o->via ? o->via : sp;
    r->pid = 0;
    r->pidfd = -1;
    r->starttime = 0;
    struct shim_spec spec = {
        .shim = shim_path,
        .exitdir = exitdir,
        .execid = r->execid,
        .argv = argv,
        .envp = envp,
        .cwd = cwd,
        .max_output = o->max_output,
        .as_user = o->as_user,
        .groups = o->groups,
        .ngroups = o->ngroups,
        .uid = o->uid,
    };
    return spawner_spawn (r->sp, &spec, &r->pid, &r->pidfd, &r->starttime, err);
}

/* Run argv under the supervisor. BAIL_OUT if that fails: nothing else
 * could then be tested. */
static void run_opts (struct run *r,
                      char *const argv[],
                      const char *cwd,
                      const struct run_opts *o)
{
    struct cairn_error err = {{0}};

    if (spawn_try (r, argv, cwd, o, &err) < 0)
        BAIL_OUT ("spawner_spawn: %s", err.text);
}

static void run_capped (struct run *r,
                        char *const argv[],
                        const char *cwd,
                        size_t max_output)
{
    run_opts (r, argv, cwd, &(struct run_opts){.max_output = max_output});
}

static void run_argv (struct run *r, char *const argv[], const char *cwd)
{
    run_capped (r, argv, cwd, 0);
}

static void run_sh (struct run *r, const char *script)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    run_argv (r, argv, tmpdir);
}

/* Send sig to the process group r's command leads, as cairnd does:
 * through its pidfd (Linux 6.9), else kill (-pid). Returns 0, or -1 with
 * errno. */
static int signal_group (const struct run *r, int sig)
{
    if (pidfd_send_signal (r->pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP) ==
        0)
        return 0;
    if (errno != EINVAL)
        return -1;
    return kill (-r->pid, sig);
}

static long long mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ENDED messages of other commands, read while waiting for one (they come
 * in any order): a later wait finds its own here. */
static struct spawner_msg stash[16];
static size_t nstash;

/* Take the ENDED of execid out of the stash into *m; false if not there. */
static bool stash_take (const char *execid, struct spawner_msg *m)
{
    for (size_t i = 0; i < nstash; i++) {
        if (!strcmp (stash[i].execid, execid)) {
            *m = stash[i];
            stash[i] = stash[--nstash];
            return true;
        }
    }
    return false;
}

/* Keep the ENDED of another command for its own wait. */
static void stash_put (const struct spawner_msg *m)
{
    if (nstash == sizeof (stash) / sizeof (stash[0])) {
        diag ("stash full: the ENDED of %s is dropped", m->execid);
        return;
    }
    stash[nstash++] = *m;
}

/* Wait up to ms for the supervisor's ENDED of r's command; return its code
 * << 8, so that 0 means "seen through, the exit record written" (3 << 8: it
 * could not be written). -1 when no ENDED came: on timeout the command's
 * group is killed so the test goes on. */
static int wait_ended (struct run *r, int ms)
{
    long long end = mono_ms () + ms;
    struct spawner_msg m;

    if (r->pid <= 0) { /* no process: no ENDED will ever come */
        diag ("%s: nothing was started, nothing to wait for", r->execid);
        return -1;
    }
    while (!stash_take (r->execid, &m)) {
        if (spawner_ended (r->sp, &m) == 0) {
            if (!strcmp (m.execid, r->execid))
                break;
            stash_put (&m);
            continue;
        }
        if (errno != EAGAIN) {
            diag ("spawner_ended: %s", strerror (errno));
            return -1;
        }
        struct pollfd p = {.fd = spawner_sock (r->sp), .events = POLLIN};
        long long left = end - mono_ms ();
        if (left <= 0 || poll (&p, 1, (int)left) == 0) {
            diag ("no ENDED of pid %d within %d ms: killing its group",
                  (int)r->pid, ms);
            (void)signal_group (r, SIGKILL);
            return -1;
        }
    }
    return m.code << 8;
}

static void run_close (struct run *r)
{
    if (r->pidfd >= 0)
        close (r->pidfd);
    exitfile_remove (dirfd_exits, r->execid);
}

/* The command's wait status from the exit record, or -1. */
static int exit_status (struct run *r, char **error)
{
    int status;
    char *e = NULL;

    if (exitfile_read (dirfd_exits, r->execid, &status, &e) < 0) {
        diag ("exitfile_read: %s", strerror (errno));
        return -1;
    }
    if (error)
        *error = e;
    else
        free (e);
    return status;
}

static void sleep_ms (int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep (&ts, NULL);
}

/* True if r's command is still running ms from now (its pidfd, readable
 * once it has exited, stays quiet). */
static bool still_running (const struct run *r, int ms)
{
    struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
    return poll (&p, 1, ms) == 0;
}

/* Wait for a file in tmpdir to hold a complete line; return it as a pid. */
static pid_t wait_pidfile (const char *name, int ms)
{
    char path[PATH_MAX], buf[32];

    snprintf (path, sizeof (path), "%s/%s", tmpdir, name);
    for (int t = 0; t < ms; t += 10) {
        FILE *f = fopen (path, "r");
        if (f) {
            char *s = fgets (buf, sizeof (buf), f);
            fclose (f);
            if (s && strchr (buf, '\n'))
                return (pid_t)atoi (buf);
        }
        sleep_ms (10);
    }
    return -1;
}

/* True once pid is gone (reaping it if it was reparented to us). */
static bool wait_gone (pid_t pid, int ms, int *status)
{
    for (int t = 0; t < ms; t += 10) {
        if (waitpid (pid, status, WNOHANG) == pid)
            return true;
        if (kill (pid, 0) < 0 && errno == ESRCH)
            return true;
        sleep_ms (10);
    }
    return false;
}

/* The parent recorded in /proc/PID/status, or -1. */
static pid_t ppid_of (pid_t pid)
{
    char path[64], line[256];
    pid_t ppid = -1;
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    while (fgets (line, sizeof (line), f))
        if (sscanf (line, "PPid: %d", &ppid) == 1)
            break;
    fclose (f);
    return ppid;
}

static int count_entries (const char *path)
{
    DIR *d = opendir (path);
    struct dirent *de;
    int n = 0;

    if (!d)
        return -1;
    while ((de = readdir (d)))
        n += de->d_name[0] != '.';
    closedir (d);
    return n;
}

static unsigned long long boot_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_BOOTTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull +
           (unsigned long long)ts.tv_nsec;
}

static void test_exit_codes (void)
{
    struct run r;
    char *error = (char *)"unset";
    unsigned long long before = boot_ns (), at = 0;
    pid_t pid = 0;

    run_sh (&r, "exit 0");
    is_int (wait_ended (&r, 10000), 0,
            "exit 0: seen through (exit record written)");
    is_int (exit_status (&r, &error), 0, "exit 0: status 0");
    ok (error == NULL, "exit 0: no error in the exit record");
    ok (exitfile_started (dirfd_exits, r.execid), "exit 0: marker present");
    is_int (exitfile_marker (dirfd_exits, r.execid, &pid, &at), 1,
            "exit 0: the marker names a process");
    is_int (pid, r.pid, "... the command's");
    ok (at >= before && at <= boot_ns (),
        "... and a boot clock read between the request and ENDED");
    /* ENDED comes after the supervisor reaped it: its pidfd names nobody. */
    is_errno (pidfd_send_signal (r.pidfd, 0, NULL, 0), ESRCH,
              "after ENDED the command is reaped: its pidfd says ESRCH");
    run_close (&r);

    run_sh (&r, "exit 3");
    is_int (wait_ended (&r, 10000), 0,
            "exit 3: seen through (exit record written)");
    is_int (exit_status (&r, NULL), 768, "exit 3: status 768");
    run_close (&r);

    /* Two at once, waited for in the reverse order of their ends: each
     * ENDED names its own command. */
    struct run early, late;
    run_sh (&early, "sleep 0.1");
    run_sh (&late, "sleep 0.4; exit 5");
    is_int (wait_ended (&late, 10000), 0, "the later end first: seen through");
    is_int (exit_status (&late, NULL), 5 << 8, "... its status 1280");
    is_int (wait_ended (&early, 10000), 0, "then the earlier: seen through");
    is_int (exit_status (&early, NULL), 0, "... its status 0");
    run_close (&early);
    run_close (&late);
}

static void test_output (void)
{
    struct run r;
    size_t len;
    bool trunc;
    char *s;

    run_sh (&r, "echo hello; echo oops >&2; readlink /proc/$$/fd/0");
    is_int (wait_ended (&r, 10000), 0,
            "output: seen through (exit record written)");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 4096, &len, &trunc);
    is_str (s, "hello\n/dev/null\n", "stdout captured, stdin is /dev/null");
    free (s);
    s = exitfile_read_output (dirfd_exits, r.execid, "err", 4096, &len, &trunc);
    is_str (s, "oops\n", "stderr captured");
    free (s);
    long long osz, esz;
    int status;
    ok (exitfile_read_sized (dirfd_exits, r.execid, &status, NULL, &osz,
                             &esz) == 0 &&
            osz == -1 && esz == -1,
        "no --max-output: the exit record gives no sizes");
    run_close (&r);

    /* With --max-output (as cairnd always runs it): the sizes, so that
     * cairnd opens no empty file. */
    char *argv[] = {"/bin/sh", "-c", "echo hello >&2", NULL};
    run_capped (&r, argv, tmpdir, 1000);
    is_int (wait_ended (&r, 10000), 0,
            "capped: seen through (exit record written)");
    ok (exitfile_read_sized (dirfd_exits, r.execid, &status, NULL, &osz,
                             &esz) == 0 &&
            osz == 0 && esz == 6,
        "capped: the exit record gives stdout 0 and stderr 6 bytes");
    run_close (&r);
}

static off_t file_size (const struct run *r, const char *suffix, off_t *disk)
{
    char name[SHIM_NAME_MAX];
    struct stat st;

    snprintf (name, sizeof (name), "%s%s", r->execid, suffix);
    if (fstatat (dirfd_exits, name, &st, 0) < 0)
        return -1;
    if (disk)
        *disk = (off_t)st.st_blocks * 512;
    return st.st_size;
}

/* The smallest and largest sizes seen of r's output file between from_ms
 * and to_ms (a file that nobody cuts only grows: its smallest is its size
 * at from_ms). */
static void watch_size (const struct run *r,
                        const char *suffix,
                        int from_ms,
                        int to_ms,
                        off_t *min,
                        off_t *max)
{
    *min = -1;
    *max = -1;
    for (int t = 0; t < to_ms; t += 20) {
        sleep_ms (20);
        off_t size = file_size (r, suffix, NULL);
        if (t < from_ms)
            continue;
        if (*min < 0 || size < *min)
            *min = size;
        if (size > *max)
            *max = size;
    }
}

/* A command that writes without end fills little disk: the supervisor
 * cuts its files back to the cap + 1 while it runs, and the head is kept. */
static void test_output_cap (void)
{
    /* 100 KB every 50 ms: 3 MB in 1.5 s when nothing cuts */
    char *paced[] = {"/bin/sh", "-c",
                     "printf head; while :; do head -c 100000 /dev/zero;"
                     " sleep 0.05; done",
                     NULL};
    char *runaway[] = {"/bin/sh", "-c",
                       "printf head; yes >&2 & "
                       "exec yes 0123456789abcdefghijklmnopqrstuvwxyz",
                       NULL};
    struct run r;
    size_t len;
    bool trunc = false;
    off_t min, max;
    char *s;

    run_capped (&r, paced, NULL, 1000);
    watch_size (&r, SHIM_SUFFIX_OUT, 500, 1500, &min, &max);
    diag ("paced: sizes seen %lld to %lld bytes", (long long)min,
          (long long)max);
    ok (min > 0 && min <= 1001 + 100000,
        "a paced writer's file is cut back to the cap while it runs");
    ok (signal_group (&r, SIGTERM) == 0, "paced: TERM to its group");
    is_int (wait_ended (&r, 10000), 0,
            "paced: seen through (exit record written)");
    is_int (file_size (&r, SHIM_SUFFIX_OUT, NULL), 1001,
            "after the end: the file is cap + 1 bytes");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 1000, &len, &trunc);
    ok (s && len == 1000 && trunc && !strncmp (s, "head\0\0", 6),
        "reading 1000 bytes: the head, truncated");
    free (s);
    run_close (&r);

    run_capped (&r, runaway, NULL, 1000);
    watch_size (&r, SHIM_SUFFIX_ERR, 0, 1000, &min, &max);
    diag ("yes: stderr sizes seen %lld to %lld bytes", (long long)min,
          (long long)max);
    ok (signal_group (&r, SIGKILL) == 0, "runaway: KILL to its group");
    is_int (wait_ended (&r, 10000), 0,
            "runaway: seen through (exit record written)");
    is_int (file_size (&r, SHIM_SUFFIX_OUT, NULL), 1001,
            "runaway: stdout ends at cap + 1 bytes");
    is_int (file_size (&r, SHIM_SUFFIX_ERR, NULL), 1001,
            "runaway: stderr (a background writer's) too");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 1000, &len, &trunc);
    ok (s && len == 1000 && trunc && !strncmp (s, "head0123456789abc", 17),
        "runaway: the head is kept");
    free (s);
    run_close (&r);

    /* Under the cap nothing is touched; a bad cap is a usage error, of the
     * supervisor (EPROTO) as of a lone shim (exit 2). */
    char *quiet[] = {"/bin/sh", "-c", "printf 12345; sleep 0.3", NULL};
    run_capped (&r, quiet, NULL, 5);
    is_int (wait_ended (&r, 10000), 0,
            "at the cap: seen through (exit record written)");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 5, &len, &trunc);
    ok (s && !strcmp (s, "12345") && !trunc, "exactly the cap: not truncated");
    free (s);
    run_close (&r);

    char *bad[] = {shim_path, "--exitdir", exitdir, "--max-output",
                   "-1",      "--",        "true",  NULL};
    char envvar[64], id[SHIM_EXECID_LEN + 1];
    char *envp[] = {envvar, NULL};
    pid_t pid;
    int status = -1, before = count_entries (exitdir);
    new_execid (id);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    for (int i = 0; i < 3; i++) {
        bad[4] = (char *[]){"-1", "0", "12x"}[i];
        if (posix_spawn (&pid, shim_path, NULL, NULL, bad, envp) != 0)
            BAIL_OUT ("posix_spawn %s", shim_path);
        waitpid (pid, &status, 0);
        ok (WIFEXITED (status) && WEXITSTATUS (status) == 2,
            "--max-output %s: usage error, exit 2", bad[4]);
    }
    struct cairn_error err = {{0}};
    is_errno (spawn_try (&r, quiet, NULL,
                         &(struct run_opts){.max_output = 1ULL << 62}, &err),
              EPROTO, "--max-output 2^62 through the supervisor: EPROTO");
    like (err.text, "Protocol error", "... and says so");
    is_int (count_entries (exitdir), before, "... and nothing written");
}

static void test_exec_failures (void)
{
    char *argv[] = {"nosuchcmd-cairn", "x", NULL};
    char *argv_true[] = {"true", NULL};
    char *error = NULL;
    struct run r;

    run_argv (&r, argv, NULL);
    is_int (wait_ended (&r, 10000), 0,
            "exec failure: seen through (exit record written)");
    is_int (exit_status (&r, &error), 32512, "exec failure: status 127<<8");
    like (error, "execvp nosuchcmd-cairn: No such file or directory",
          "exec failure: error names the command");
    free (error);
    error = NULL;
    ok (exitfile_started (dirfd_exits, r.execid),
        "exec failure: marker present (exec was attempted)");
    run_close (&r);

    run_argv (&r, argv_true, "/nonexistent-cairn-dir");
    ok (r.pid > 0, "chdir failure: a process was made (it fails before its "
                   "exec)");
    is_int (wait_ended (&r, 10000), 0,
            "chdir failure: seen through (exit record written)");
    is_int (exit_status (&r, &error), 32512, "chdir failure: status 127<<8");
    like (error, "chdir /nonexistent-cairn-dir: No such file",
          "chdir failure: error names the directory");
    free (error);
    /* The marker comes before the chdir (which, with --user, must be made
     * with the user's permissions, after the root-only marker). */
    ok (exitfile_started (dirfd_exits, r.execid),
        "chdir failure: marker present (it is made before the chdir)");
    run_close (&r);
}

/* cairnd signals a command's process group itself (no relay): any signal,
 * right after the start; a signal to the supervisor reaches no command. */
static void test_relay (void)
{
    struct run r;

    run_sh (&r, "exec sleep 100");
    ok (signal_group (&r, SIGTERM) == 0, "TERM to the group right away");
    is_int (wait_ended (&r, 10000), 0,
            "TERM: seen through (exit record written)");
    is_int (exit_status (&r, NULL), SIGTERM, "TERM: status SIGTERM");
    run_close (&r);

    run_sh (&r, "exec sleep 100");
    ok (signal_group (&r, SIGKILL) == 0, "KILL to the group");
    is_int (wait_ended (&r, 10000), 0,
            "KILL: seen through (exit record written)");
    is_int (exit_status (&r, NULL), SIGKILL, "KILL: status 9");
    run_close (&r);

    run_sh (&r, "echo $$ > plainpid; exec sleep 100");
    is_int (wait_pidfile ("plainpid", 5000), r.pid,
            "plain: the pid spawner_spawn gave is the running command's");
    ok (kill (spawner_pid (sp), SIGTERM) == 0, "TERM to the supervisor");
    ok (still_running (&r, 300), "... does not reach the command");
    struct pollfd p = {.fd = spawner_pidfd (sp), .events = POLLIN};
    is_int (poll (&p, 1, 0), 0, "... nor end the supervisor (cairnd decides)");
    ok (signal_group (&r, SIGUSR1) == 0, "USR1 to the group");
    is_int (wait_ended (&r, 10000), 0,
            "USR1: seen through (exit record written)");
    is_int (exit_status (&r, NULL), SIGUSR1, "USR1 reached the command");
    run_close (&r);
}

static void test_trap_term (void)
{
    struct run r;

    run_sh (&r, "trap '' TERM; echo $$ > trappid; while :; do sleep 1; done");
    ok (wait_pidfile ("trappid", 5000) > 0, "trap: command ready");
    ok (signal_group (&r, SIGTERM) == 0, "trap: TERM to the group");
    ok (still_running (&r, 300), "trap: TERM ignored, the command runs on");
    ok (signal_group (&r, SIGKILL) == 0, "trap: KILL to the group");
    is_int (wait_ended (&r, 10000), 0,
            "trap: seen through (exit record written)");
    is_int (exit_status (&r, NULL), SIGKILL, "trap: died of the KILL");
    run_close (&r);
}

static void test_stragglers (void)
{
    struct run r;
    pid_t bg;

    run_sh (&r, "sleep 100 & echo $! > bgpid; exit 0");
    is_int (wait_ended (&r, 10000), 0,
            "straggler: seen through (exit record written)");
    is_int (exit_status (&r, NULL), 0, "straggler: leader's status 0");
    bg = wait_pidfile ("bgpid", 1000);
    ok (bg > 0 && wait_gone (bg, 2000, NULL),
        "straggler: background child in the group was killed");
    run_close (&r);
}

/* Poll execid's exit record for up to ms; its status, or -1. */
static int record_wait (const char *execid, int ms)
{
    int status;
    for (int i = 0; i < ms / 10; i++) {
        if (exitfile_read (dirfd_exits, execid, &status, NULL) == 0)
            return status;
        usleep (10000);
    }
    return -1;
}

/* A supervisor that dies (here one the test starts for this) leaves its
 * commands running: each is orphaned to the nearest subreaper, the keeper,
 * which writes its exit record at its end as the supervisor would have,
 * whether its end is its own or a signal's. */
static void test_supervisor_killed (void)
{
    char *argv[] = {"/bin/sh", "-c", "echo $$ > cmdpid; exec sleep 100", NULL};
    char *exit7[] = {"/bin/sh", "-c", "sleep 0.5; exit 7", NULL};
    struct keeper *k;
    struct spawner *own = supervisor_own (&k);
    struct spawner_msg m;
    struct run r, r7;
    int status = -1;

    run_opts (&r, argv, tmpdir, &(struct run_opts){.via = own});
    run_opts (&r7, exit7, NULL, &(struct run_opts){.via = own});
    is_int (wait_pidfile ("cmdpid", 5000), r.pid,
            "supervisor killed: command running");
    is_int (ppid_of (spawner_pid (own)), (int)keeper_pid (k),
            "the supervisor's parent is the keeper");
    kill (spawner_pid (own), SIGKILL);
    struct pollfd p = {.fd = spawner_pidfd (own), .events = POLLIN};
    ok (poll (&p, 1, 10000) == 1, "supervisor killed: its pidfd says so");
    ok (still_running (&r, 300), "supervisor killed: the command lives on");
    is_int (ppid_of (r.pid), (int)keeper_pid (k),
            "... its parent now the keeper, not the caller");
    is_errno (spawner_ended (own, &m), EPIPE,
              "spawner_ended of a dead supervisor: EPIPE");
    {
        char *tv[] = {"/bin/true", NULL}, xid[SHIM_EXECID_LEN + 1], env[64];
        new_execid (xid);
        snprintf (env, sizeof (env), SHIM_ENV_EXECID "=%s", xid);
        char *ev[] = {env, NULL};
        struct shim_spec q = {.shim = shim_path,
                              .exitdir = exitdir,
                              .execid = xid,
                              .argv = tv,
                              .envp = ev};
        struct cairn_error qe = {{0}};
        ok (spawner_request (own, &q, &qe) == 0,
            "a request to a dead supervisor is queued: %s",
            qe.text[0] ? qe.text : "ok");
        is_errno (spawner_send (own, &qe), EPIPE,
                  "spawner_send to a dead supervisor: EPIPE");
        like (qe.text, "is gone", "... said plainly");
        ok (!spawner_queued (own), "... and the queue is empty after it");
    }
    is_int (record_wait (r7.execid, 10000), 7 << 8,
            "a command that ends on its own: the keeper writes its status");
    ok (signal_group (&r, SIGKILL) == 0, "KILL to the other's group");
    is_int (record_wait (r.execid, 10000), SIGKILL,
            "... the keeper writes its status 9");
    ok (!still_running (&r, 2000), "... and reaps it");
    is_errno (shim_reap (r.pidfd, &status), ECHILD,
              "... which was never the caller's child");
    ok (exitfile_started (dirfd_exits, r.execid),
        "supervisor killed: marker says it started");
    run_close (&r);
    run_close (&r7);
    spawner_destroy (own);
    keeper_destroy (k);
}

/* The command must get a clean process: no fd but 0-2 (none of ours, none
 * of the supervisor's), nothing blocked, nothing ignored. */
static void test_clean_process (void)
{
    char *argv[] = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
    sigset_t set, old;
    struct run r;
    char *s;
    int fd;

    fd = open ("/dev/null", O_RDONLY); /* deliberately not close-on-exec */
    run_sh (&r, "ls /proc/$$/fd");
    is_int (wait_ended (&r, 10000), 0, "fds: seen through (record written)");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    is_str (s, "0\n1\n2\n",
            "the command has 0-2 only: no non-cloexec fd of the daemon's, "
            "no fd of the supervisor's");
    free (s);
    run_close (&r);
    close (fd);

    /* A supervisor started by a daemon that ignores and blocks signals:
     * the supervisor resets them once, for all its commands. */
    struct spawner *dirty;
    struct keeper *dk;
    signal (SIGUSR1, SIG_IGN);
    sigemptyset (&set);
    sigaddset (&set, SIGUSR2);
    sigprocmask (SIG_BLOCK, &set, &old);
    dirty = supervisor_own (&dk);
    sigprocmask (SIG_SETMASK, &old, NULL);
    signal (SIGUSR1, SIG_DFL);
    for (int i = 0; i < 2; i++) { /* the first command and a later one */
        run_opts (&r, argv, NULL, &(struct run_opts){.via = dirty});
        is_int (wait_ended (&r, 10000), 0,
                "signals: seen through (exit record written)");
        s = exitfile_read_output (dirfd_exits, r.execid, "out", 256, NULL,
                                  NULL);
        like (s, "SigBlk:\t0000000000000000", "command starts with no mask");
        like (s, "SigIgn:\t0000000000000000", "command ignores no signal");
        free (s);
        run_close (&r);
    }
    spawner_destroy (dirty);
    keeper_destroy (dk);
}

static void test_refusals (void)
{
    struct cairn_error err = {{0}};
    char *argv[] = {"true", NULL};
    char *badenv[] = {SHIM_ENV_EXECID "=NOT-A-UUID", NULL};
    char envvar[64], id[SHIM_EXECID_LEN + 1], other[SHIM_EXECID_LEN + 1];
    char *envp[] = {envvar, NULL};
    struct shim_spec spec = {
        .shim = shim_path, .exitdir = exitdir, .argv = argv, .envp = envp};
    char *shim_argv[] = {shim_path, "--exitdir", exitdir, "--", "true", NULL};
    pid_t pid;
    int pidfd, status = -1, before;

    new_execid (id);
    new_execid (other);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", other);
    spec.execid = "NOT-A-UUID";
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, NULL, &err), EINVAL,
              "spawner_spawn: non-canonical execid -> EINVAL");
    like (err.text, "not a canonical uuid", "... and says why");
    spec.execid = id;
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, NULL, &err), EINVAL,
              "spawner_spawn: envp with another execid -> EINVAL");
    like (err.text, "environment lacks CAIRN_EXECID=", "... and says why");

    struct keeper *bad = keeper_create ("/nonexistent/cairn-shim", &err);
    ok (bad == NULL && errno == ENOENT,
        "keeper_create: missing shim -> ENOENT");
    like (err.text, "keeper: cannot run /nonexistent/cairn-shim: No such file",
          "... and names the shim path");

    /* A lone shim's own check, bypassing spawner_spawn's. */
    before = count_entries (exitdir);
    if (posix_spawn (&pid, shim_path, NULL, NULL, shim_argv, badenv) != 0)
        BAIL_OUT ("posix_spawn %s", shim_path);
    waitpid (pid, &status, 0);
    ok (WIFEXITED (status) && WEXITSTATUS (status) == 2,
        "a lone shim with a bad CAIRN_EXECID exits 2");
    is_int (count_entries (exitdir), before, "... and writes nothing");

    /* Starting an execid a second time touches nothing. */
    struct run r, again;
    run_sh (&r, "echo first; exit 5");
    is_int (wait_ended (&r, 10000), 0,
            "first run of an execid: seen through (exit record written)");
    is_errno (spawn_try (&again, argv, NULL,
                         &(struct run_opts){.execid = r.execid}, &err),
              EEXIST, "second run: EEXIST");
    like (err.text, "its execid was used already; not running it",
          "... and says why");
    is_int (exit_status (&r, NULL), 5 << 8, "second run: first status kept");
    char *s =
        exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    is_str (s, "first\n", "second run: first output kept");
    free (s);
    run_close (&r);
}

static void test_fault (void)
{
    struct cairn_error err = {{0}};
    char *argv[] = {"true", NULL};
    char *exit7[] = {"/bin/sh", "-c", "echo out; exit 7", NULL};
    struct spawner *faulty;
    struct keeper *fk;
    struct run r;
    int status;

    setenv ("CAIRN_FAULT", "exec.spawn:1:11", 1);
    crashpoint_init ();
    is_errno (spawn_try (&r, argv, NULL, &(struct run_opts){0}, &err), EAGAIN,
              "fault exec.spawn:1:11 -> EAGAIN");
    like (err.text, "Resource temporarily unavailable",
          "... with the errno's text");
    like (err.text, shim_path, "... naming the shim");
    ok (!exitfile_started (dirfd_exits, r.execid), "... and nothing started");
    unsetenv ("CAIRN_FAULT");
    crashpoint_init ();

    /* A supervisor whose first exit-file write fails: its ENDED says so
     * (code 3) and no exit record stands; the next one is written. */
    setenv ("CAIRN_FAULT", "shim.exitfile.write:1", 1);
    faulty = supervisor_own (&fk);
    unsetenv ("CAIRN_FAULT");
    run_opts (&r, exit7, NULL, &(struct run_opts){.via = faulty});
    is_int (wait_ended (&r, 10000), 3 << 8,
            "fault shim.exitfile.write:1: ENDED code 3");
    is_errno (exitfile_read (dirfd_exits, r.execid, &status, NULL), ENOENT,
              "... and no exit record");
    ok (exitfile_started (dirfd_exits, r.execid),
        "... though the marker says it started");
    run_close (&r);
    run_opts (&r, exit7, NULL, &(struct run_opts){.via = faulty});
    is_int (wait_ended (&r, 10000), 0,
            "the next command: seen through (exit record written)");
    is_int (exit_status (&r, NULL), 7 << 8, "... its status 1792");
    run_close (&r);
    spawner_destroy (faulty);
    keeper_destroy (fk);
}

/* Write text to tmpdir/name; its path goes to path (PATH_MAX bytes). */
static void write_file (const char *name, const char *text, char *path)
{
    FILE *f;

    snprintf (path, PATH_MAX, "%s/%s", tmpdir, name);
    if (!(f = fopen (path, "w")) || fputs (text, f) < 0 || fclose (f) != 0)
        BAIL_OUT ("%s: %s", path, strerror (errno));
}

/* The command is looked up in the PATH of its own environment, never in
 * the supervisor's (cairnd's), as execvp does it: EACCES wins over a
 * later ENOENT, a file without #! runs under /bin/sh, no PATH means
 * /usr/bin:/bin. */
static void test_exec_path (void)
{
    char path[PATH_MAX], env[PATH_MAX + 8], *error = NULL;
    char *tool[] = {"cairn-path-tool", NULL},
         *noshebang[] = {"cairn-nosb", NULL};
    char *closed[] = {"cairn-closed", NULL}, *true_[] = {"true", NULL};
    struct run r;

    if (mkdir (strcat (strcpy (path, tmpdir), "/bin"), 0755) < 0)
        BAIL_OUT ("mkdir %s: %s", path, strerror (errno));
    write_file ("bin/cairn-path-tool", "#!/bin/sh\nexit 7\n", path);
    chmod (path, 0755);
    write_file ("bin/cairn-nosb", "exit 5\n", path);
    chmod (path, 0755);
    write_file ("bin/cairn-closed", "#!/bin/sh\nexit 0\n", path);
    chmod (path, 0644);
    snprintf (env, sizeof (env), "PATH=/nonexistent-cairn:%s/bin", tmpdir);

    run_opts (&r, tool, NULL, &(struct run_opts){.env = env});
    is_int (wait_ended (&r, 10000), 0, "PATH: seen through");
    is_int (exit_status (&r, NULL), 7 << 8,
            "a command in the command's own PATH is found (exit 7)");
    run_close (&r);

    run_opts (&r, noshebang, NULL, &(struct run_opts){.env = env});
    is_int (wait_ended (&r, 10000), 0, "no #!: seen through");
    is_int (exit_status (&r, NULL), 5 << 8, "... run by /bin/sh (exit 5)");
    run_close (&r);

    run_opts (&r, closed, NULL, &(struct run_opts){.env = env});
    is_int (wait_ended (&r, 10000), 0, "not executable: seen through");
    is_int (exit_status (&r, &error), 32512, "... status 127<<8");
    like (error, "execvp cairn-closed: Permission denied",
          "... EACCES, not ENOENT, though no later entry has it");
    free (error);
    error = NULL;
    run_close (&r);

    run_opts (&r, true_, NULL,
              &(struct run_opts){.env = "PATH=/nonexistent-cairn"});
    is_int (wait_ended (&r, 10000), 0, "a PATH without it: seen through");
    is_int (exit_status (&r, &error), 32512, "... status 127<<8");
    like (error, "execvp true: No such file or directory",
          "... not found: the supervisor's own PATH is not looked in");
    free (error);
    error = NULL;
    run_close (&r);

    run_opts (&r, true_, NULL, &(struct run_opts){.no_path = true});
    is_int (wait_ended (&r, 10000), 0, "no PATH: seen through");
    is_int (exit_status (&r, NULL), 0, "... true found in /usr/bin:/bin");
    run_close (&r);
}

/* The groups userdb_groups() finds, as "a b c", or "error: <errno>". */
static void groups_str (
    const char *path, const struct passwd *pw, int max, char *out, size_t size)
{
    gid_t groups[16];
    int n = -1, e, len = 0;

    out[0] = '\0';
    if ((e = userdb_groups (path, pw, groups, max, &n))) {
        snprintf (out, size, "error: %s", strerror (e));
        return;
    }
    for (int i = 0; i < n; i++)
        len += snprintf (out + len, size - (size_t)len, "%s%u", i ? " " : "",
                         (unsigned)groups[i]);
}

/* The shim's user lookup (userdb.h) on files of our own. */
static void test_userdb (void)
{
    char ppath[PATH_MAX], gpath[PATH_MAX], buf[4096], out[256];
    struct passwd pw;
    size_t biglen = 100000;
    char *group = malloc (biglen + 1024);
    int e;

    write_file ("passwd",
                "root:x:0:0:root:/root:/bin/bash\n"
                "+nis:x:1600:1600::/:\n"
                "alice:x:1500:1500:Alice:/home/alice:\n"
                "bob:x:1501:100::/home/bob:/bin/zsh\n",
                ppath);
    e = userdb_passwd (ppath, 1500, &pw, buf, sizeof (buf));
    is_int (e, 0, "userdb: alice found by uid");
    is_str (e ? NULL : pw.pw_name, "alice", "userdb: ... name alice");
    is_str (e ? NULL : pw.pw_dir, "/home/alice", "userdb: ... her home");
    is_int (e ? 0 : pw.pw_gid, 1500, "userdb: ... her primary gid");
    is_int (userdb_passwd (ppath, 1600, &pw, buf, sizeof (buf)), ENOENT,
            "userdb: a +compat line is no user: ENOENT");
    is_int (userdb_passwd (ppath, 4000123, &pw, buf, sizeof (buf)), ENOENT,
            "userdb: an unknown uid: ENOENT");
    is_int (userdb_passwd (ppath, 1501, &pw, buf, 8), ERANGE,
            "userdb: an entry larger than the buffer: ERANGE");

    /* A member list longer than the first buffer (16 KiB) before alice's
     * groups: the lookup starts over with a larger one. */
    strcpy (group, "alice:x:1500:\nstaff:x:50:alice,bob\nbig:x:60:");
    for (size_t n = strlen (group); n < biglen; n += 8)
        memcpy (group + n, "someone,", 9);
    strcat (group, "alice\nsame:x:50:alice\nwheel:x:10:bob\n"
                   "other:x:70:alicia,xalice\n");
    write_file ("group", group, gpath);
    free (group);
    if (userdb_passwd (ppath, 1500, &pw, buf, sizeof (buf)) != 0)
        BAIL_OUT ("userdb_passwd alice");
    groups_str (gpath, &pw, 16, out, sizeof (out));
    is_str (out, "1500 50 60",
            "userdb: alice's groups: primary, then memberships, no repeat, "
            "past a 100 KB line");
    groups_str (gpath, &pw, 2, out, sizeof (out));
    is_str (out, "error: Argument list too long",
            "userdb: more groups than max: E2BIG");
    if (userdb_passwd (ppath, 1501, &pw, buf, sizeof (buf)) != 0)
        BAIL_OUT ("userdb_passwd bob");
    groups_str (gpath, &pw, 16, out, sizeof (out));
    is_str (out, "100 50 10", "userdb: bob's groups (primary not in the file)");
    snprintf (gpath, sizeof (gpath), "%s/nosuchfile", tmpdir);
    groups_str (gpath, &pw, 16, out, sizeof (out));
    is_str (out, "error: No such file or directory",
            "userdb: no group file: the error of fopen");
    unlink (ppath);
    snprintf (gpath, sizeof (gpath), "%s/group", tmpdir);
    unlink (gpath);
}

/* Run the shim by hand under setpriv(1) with its options opts, with
 * --user user, in exit dir dir; wait for it. Returns the shim's wait
 * status, or -2 when there is no setpriv. The execid goes to id. */
static int run_setpriv (char *const opts[],
                        const char *dir,
                        const char *user,
                        char *const cmd[],
                        char *id)
{
    char envvar[64];
    char *envp[] = {envvar, "PATH=/usr/bin:/bin", NULL};
    char *argv[32];
    int n = 0, status = -1;
    pid_t pid;

    argv[n++] = "setpriv";
    for (int i = 0; opts[i]; i++)
        argv[n++] = opts[i];
    argv[n++] = shim_path;
    argv[n++] = "--exitdir";
    argv[n++] = (char *)dir;
    argv[n++] = "--user";
    argv[n++] = (char *)user;
    argv[n++] = "--";
    for (int i = 0; cmd[i]; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    new_execid (id);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    if (posix_spawnp (&pid, "setpriv", NULL, NULL, argv, envp) != 0)
        return -2;
    waitpid (pid, &status, 0);
    return status;
}

/* A shim that is not root, run under setpriv as nobody, in an exit dir of
 * nobody's: it refuses --user of another uid and writes why; --user of its
 * own uid changes nothing. */
static void test_user_not_root (const struct passwd *pw)
{
    char dir[PATH_MAX], id[SHIM_EXECID_LEN + 1];
    char ruid[32], rgid[32], user[32];
    char *opts[] = {ruid, rgid, "--clear-groups", NULL};
    char *cmd[] = {"id", "-u", NULL};
    char *error = NULL;
    int dfd, st = -1;

    snprintf (dir, sizeof (dir), "%s/exits-nobody", tmpdir);
    snprintf (ruid, sizeof (ruid), "--reuid=%u", (unsigned)pw->pw_uid);
    snprintf (rgid, sizeof (rgid), "--regid=%u", (unsigned)pw->pw_gid);
    if (mkdir (dir, 0700) < 0 || chown (dir, pw->pw_uid, pw->pw_gid) < 0 ||
        (dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        BAIL_OUT ("%s: %s", dir, strerror (errno));
    /* tmpdir is root's and 0700: let nobody reach its exit dir. */
    chmod (tmpdir, 0711);

    for (int i = 0; i < 2; i++) {
        bool own = i == 1;
        snprintf (user, sizeof (user), "%u", own ? (unsigned)pw->pw_uid : 0);
        int status = run_setpriv (opts, dir, user, cmd, id);
        if (status == -2) {
            ok (1, "not root: refuses --user 0 # SKIP no setpriv");
            break;
        }
        is_int (status, 0, "not root, --user %s: shim exits 0", user);
        is_int (exitfile_read (dfd, id, &st, &error), 0,
                "not root, --user %s: exit record written", user);
        if (!own) {
            is_int (st, SHIM_STATUS_NOEXEC, "not root, --user 0: status 32512");
            is_str (error, "--user 0: the shim is not root",
                    "not root, --user 0: the error says why");
            ok (!exitfile_started (dfd, id),
                "not root, --user 0: no marker, nothing ran");
        } else {
            char *s = exitfile_read_output (dfd, id, "out", 64, NULL, NULL);
            char want[32];
            snprintf (want, sizeof (want), "%u\n", (unsigned)pw->pw_uid);
            is_int (st, 0, "not root, --user of its own uid: status 0");
            ok (error == NULL, "... no error");
            is_str (s, want, "... the command ran as that uid");
            free (s);
        }
        free (error);
        error = NULL;
        exitfile_remove (dfd, id);
    }
    chmod (tmpdir, 0700);
    close (dfd);
    rmdir (dir);
}

/* A root shim short of the privilege to drop to the user: the command's
 * process reports the step that failed, and nothing runs. A root shim
 * whose securebits keep capabilities across the uid change: the command
 * still runs with none. */
static void test_user_drop_fails (const struct passwd *pw)
{
    char *nosetuid[] = {"--bounding-set=-setuid", NULL};
    char *nosetgid[] = {"--bounding-set=-setgid", NULL};
    char *keepcaps[] = {"--securebits=+no_setuid_fixup",
                        "--inh-caps=+dac_override",
                        "--ambient-caps=+dac_override", NULL};
    char *caps[] = {"/bin/sh", "-c",
                    "id -u; grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status",
                    NULL};
    char *trace[] = {"/bin/sh", "-c", "echo ran", NULL};
    char user[32], want[256], id[SHIM_EXECID_LEN + 1];
    char *error = NULL, *s;
    int status;

    snprintf (user, sizeof (user), "%u", (unsigned)pw->pw_uid);
    struct {
        char **opts;
        const char *what, *error;
    } cases[] = {
        {nosetuid, "no CAP_SETUID", "setresuid %u: Operation not permitted"},
        {nosetgid, "no CAP_SETGID", "setgroups %s: Operation not permitted"},
    };
    for (int i = 0; i < 2; i++) {
        status = run_setpriv (cases[i].opts, exitdir, user, trace, id);
        if (status == -2) {
            ok (1, "%s # SKIP no setpriv", cases[i].what);
            return;
        }
        is_int (status, 0, "%s: shim exits 0", cases[i].what);
        is_int (exitfile_read (dirfd_exits, id, &status, &error), 0,
                "%s: exit record written", cases[i].what);
        is_int (status, SHIM_STATUS_NOEXEC, "%s: status 32512", cases[i].what);
        if (i == 0)
            snprintf (want, sizeof (want), cases[i].error,
                      (unsigned)pw->pw_uid);
        else
            snprintf (want, sizeof (want), cases[i].error, pw->pw_name);
        is_str (error, want, "%s: the step and errno are reported",
                cases[i].what);
        free (error);
        error = NULL;
        s = exitfile_read_output (dirfd_exits, id, "out", 64, NULL, NULL);
        is_str (s, "", "%s: nothing ran", cases[i].what);
        free (s);
        ok (exitfile_started (dirfd_exits, id),
            "%s: marker (the drop comes after it)", cases[i].what);
        exitfile_remove (dirfd_exits, id);
    }

    status = run_setpriv (keepcaps, exitdir, user, caps, id);
    is_int (status, 0, "securebits keep caps: shim exits 0");
    is_int (exitfile_read (dirfd_exits, id, &status, &error), 0,
            "securebits keep caps: exit record written");
    is_int (status, 0, "securebits keep caps: status 0");
    ok (error == NULL, "securebits keep caps: no error");
    free (error);
    s = exitfile_read_output (dirfd_exits, id, "out", 256, NULL, NULL);
    snprintf (want, sizeof (want),
              "%u\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
              "CapEff:\t0000000000000000\nCapAmb:\t0000000000000000\n",
              (unsigned)pw->pw_uid);
    is_str (s, want, "securebits keep caps: the command has none left");
    free (s);
    exitfile_remove (dirfd_exits, id);
}

/* A user's groups as `id -G` prints them, from getgrouplist(). */
static void groups_of (const struct passwd *pw, char *buf, size_t size)
{
    gid_t groups[256];
    int n = 256, len = 0;

    buf[0] = '\0';
    if (getgrouplist (pw->pw_name, pw->pw_gid, groups, &n) < 0)
        BAIL_OUT ("getgrouplist %s: too many groups", pw->pw_name);
    for (int i = 0; i < n; i++)
        len += snprintf (buf + len, size - (size_t)len, "%s%u", i ? " " : "",
                         (unsigned)groups[i]);
}

/* Supplementary groups come from /etc/group: take a user that a group of
 * it lists as a member. */
static void test_user_groups (void)
{
    char *argv[] = {"id", "-G", NULL};
    char want[1100];
    struct passwd *pw = NULL;
    struct group *gr;
    struct run r;
    char *s;

    setgrent ();
    while (!pw && (gr = getgrent ())) {
        for (char **m = gr->gr_mem; !pw && *m; m++) {
            pw = getpwnam (*m);
            if (pw && (pw->pw_uid == 0 || pw->pw_gid == gr->gr_gid))
                pw = NULL;
        }
    }
    endgrent ();
    if (!pw) {
        ok (1, "supplementary groups # SKIP no user is a group's member");
        return;
    }
    groups_of (pw, want, sizeof (want) - 1);
    strcat (want, "\n");
    run_opts (&r, argv, "/",
              &(struct run_opts){.as_user = true, .uid = pw->pw_uid});
    is_int (wait_ended (&r, 10000), 0,
            "groups of %s: seen through (exit record written)", pw->pw_name);
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 1024, NULL, NULL);
    is_str (s, want, "groups of %s: primary and supplementary", pw->pw_name);
    free (s);
    run_close (&r);
}

/* --groups: the groups cairnd resolved (through NSS) are the ones the
 * command gets, the first its gid; the shim looks nothing up. Even a uid
 * the files do not know runs, as cairnd vouched for it. */
static void test_user_given_groups (void)
{
    char *argv[] = {"sh", "-c",
                    "id -u; id -g; sed -n 's/^Groups:[[:space:]]*//p' "
                    "/proc/self/status",
                    NULL};
    const gid_t groups[] = {4242, 65534, 17};
    struct run r;
    char *s;

    if (geteuid () != 0) {
        ok (1, "--groups # SKIP not root");
        return;
    }
    run_opts (&r, argv, "/",
              &(struct run_opts){.as_user = true,
                                 .uid = 4000123,
                                 .groups = groups,
                                 .ngroups = 3});
    is_int (wait_ended (&r, 10000), 0,
            "--groups: seen through (exit record written)");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 1024, NULL, NULL);
    is_str (s, "4000123\n4242\n17 4242 65534 \n",
            "--groups: uid, the first as gid, all as groups");
    free (s);
    run_close (&r);
}

/* --user as root: the command gets the user's ids, groups and environment,
 * and nothing runs for a uid nobody has. */
static void test_user (void)
{
    char *script[] = {"/bin/sh", "-c",
                      "id -u; id -g; id -G; echo $HOME; pwd;"
                      " echo $USER $LOGNAME $SHELL;"
                      " grep -E '^Cap(Prm|Eff)' /proc/self/status",
                      NULL};
    char *home[] = {"/bin/sh", "-c", "echo $HOME", NULL};
    char *env[] = {"/bin/sh", "-c", "id -u; echo ${HOME-unset}", NULL};
    char *trace[] = {"/bin/sh", "-c", "echo ran", NULL};
    char userdir[] = "/tmp/t_shim_user.XXXXXX";
    char want[1024], groups_s[512] = "", *error = NULL, *s;
    struct passwd *pw;
    struct run r;

    if (geteuid () != 0) {
        ok (1, "--user as root # SKIP not running as root");
        /* Not root ourselves: our supervisor refuses root's uid. */
        run_opts (&r, trace, NULL,
                  &(struct run_opts){.as_user = true, .uid = 0});
        is_int (r.pid, 0,
                "not root, --user 0: no process made (the exit record says "
                "why)");
        is_int (exit_status (&r, &error), SHIM_STATUS_NOEXEC,
                "not root, --user 0: status 32512");
        is_str (error, "--user 0: the shim is not root",
                "not root, --user 0: the error says why");
        free (error);
        ok (!exitfile_started (dirfd_exits, r.execid),
            "not root, --user 0: no marker, nothing ran");
        run_close (&r);
        return;
    }
    if (!(pw = getpwuid (65534))) {
        ok (1, "--user as root # SKIP no user with uid 65534");
        return;
    }
    groups_of (pw, groups_s, sizeof (groups_s));
    if (!mkdtemp (userdir) || chmod (userdir, 0755) < 0)
        BAIL_OUT ("%s: %s", userdir, strerror (errno));

    run_opts (&r, script, userdir,
              &(struct run_opts){.as_user = true, .uid = pw->pw_uid});
    is_int (wait_ended (&r, 10000), 0,
            "--user 65534: seen through (exit record written)");
    is_int (exit_status (&r, &error), 0, "--user 65534: status 0");
    ok (error == NULL, "--user 65534: no error");
    free (error);
    error = NULL;
    ok (exitfile_started (dirfd_exits, r.execid), "--user 65534: marker");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 4096, NULL, NULL);
    snprintf (want, sizeof (want),
              "%u\n%u\n%s\n%s\n%s\n%s %s %s\n"
              "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n",
              (unsigned)pw->pw_uid, (unsigned)pw->pw_gid, groups_s, pw->pw_dir,
              userdir, pw->pw_name, pw->pw_name,
              pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
    is_str (s, want,
            "--user 65534: the user's ids, groups, HOME, USER, LOGNAME, "
            "SHELL; no capability left; in the cwd");
    free (s);
    run_close (&r);

    run_opts (&r, home, NULL,
              &(struct run_opts){
                  .as_user = true, .uid = pw->pw_uid, .env = "HOME=/kept"});
    is_int (wait_ended (&r, 10000), 0,
            "HOME given: seen through (exit record written)");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    is_str (s, "/kept\n", "HOME given: kept, not the passwd entry's");
    free (s);
    run_close (&r);

    /* A cwd the user cannot enter: tmpdir is root's, mode 0700. */
    run_opts (&r, trace, tmpdir,
              &(struct run_opts){.as_user = true, .uid = pw->pw_uid});
    is_int (wait_ended (&r, 10000), 0,
            "cwd not the user's: seen through (exit record written)");
    is_int (exit_status (&r, &error), SHIM_STATUS_NOEXEC,
            "cwd not the user's: status 32512");
    snprintf (want, sizeof (want), "chdir %s: Permission denied", tmpdir);
    is_str (error, want, "cwd not the user's: chdir as the user, EACCES");
    free (error);
    error = NULL;
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    is_str (s, "", "cwd not the user's: nothing ran");
    free (s);
    run_close (&r);

    run_opts (&r, trace, NULL,
              &(struct run_opts){.as_user = true, .uid = 4000123});
    is_int (r.pid, 0, "no such user: no process made (the exit file says)");
    is_int (exit_status (&r, &error), SHIM_STATUS_NOEXEC,
            "no such user: status 32512");
    is_str (error, "no user with uid 4000123 in /etc/passwd",
            "no such user: error says so");
    free (error);
    error = NULL;
    ok (!exitfile_started (dirfd_exits, r.execid), "no such user: no marker");
    errno = 0;
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    ok (!s && errno == ENOENT, "no such user: nothing ran, no output file");
    free (s);
    run_close (&r);

    /* The shim's own uid: nothing to drop, nothing set. */
    run_opts (&r, env, NULL, &(struct run_opts){.as_user = true, .uid = 0});
    is_int (wait_ended (&r, 10000), 0,
            "--user 0 as root: seen through (exit record written)");
    is_int (exit_status (&r, NULL), 0, "--user 0 as root: status 0");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    is_str (s, "0\nunset\n", "--user 0 as root: a no-op");
    free (s);
    run_close (&r);

    rmdir (userdir);
    test_user_groups ();
    test_user_given_groups ();
    test_user_drop_fails (pw);
    test_user_not_root (pw);
}

/* Bad --user values are usage errors, nothing written: a lone shim exits
 * 2, the supervisor answers EPROTO. */
static void test_user_usage (void)
{
    char *argv[] = {shim_path, "--exitdir", exitdir, "--user",
                    "x",       "--",        "true",  NULL};
    char envvar[64], id[SHIM_EXECID_LEN + 1];
    char *envp[] = {envvar, NULL};
    char *cmd[] = {"true", NULL};
    int before = count_entries (exitdir), status = -1;
    struct cairn_error err = {{0}};
    struct run r;
    pid_t pid;

    new_execid (id);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    for (int i = 0; i < 5; i++) {
        argv[4] = (char *[]){"-1", "", "12x", "4294967295", "+5"}[i];
        if (posix_spawn (&pid, shim_path, NULL, NULL, argv, envp) != 0)
            BAIL_OUT ("posix_spawn %s", shim_path);
        waitpid (pid, &status, 0);
        ok (WIFEXITED (status) && WEXITSTATUS (status) == 2,
            "--user '%s': usage error, exit 2", argv[4]);
    }
    is_errno (spawn_try (&r, cmd, NULL,
                         &(struct run_opts){.as_user = true, .uid = (uid_t)-1},
                         &err),
              EPROTO, "--user 4294967295 through the supervisor: EPROTO");
    like (err.text, "Protocol error", "... and says so");
    is_int (count_entries (exitdir), before, "... and nothing written");
}

/* Bad --rlimit values are usage errors, nothing run or written: a lone
 * shim exits 2. */
static void test_rlimit_usage (void)
{
    char *argv[] = {shim_path, "--exitdir", exitdir, "--rlimit",
                    "x",       "--",        "true",  NULL};
    char envvar[64], id[SHIM_EXECID_LEN + 1];
    char *envp[] = {envvar, NULL};
    const char *bad[] = {"nofile=1",   "nofile=9:8",  "core=1:1",    "nproc=:5",
                         "nproc=-1:5", "nofile=1:2x", "nofile=1:-1", ""};
    int before = count_entries (exitdir), status = -1;
    pid_t pid;

    new_execid (id);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        argv[4] = (char *)bad[i];
        if (posix_spawn (&pid, shim_path, NULL, NULL, argv, envp) != 0)
            BAIL_OUT ("posix_spawn %s", shim_path);
        waitpid (pid, &status, 0);
        ok (WIFEXITED (status) && WEXITSTATUS (status) == 2,
            "--rlimit '%s': usage error, exit 2", argv[4]);
    }
    is_int (count_entries (exitdir), before, "... and nothing written");
}

/* True if pid's descriptors 0-2 are all on /dev/null. */
static bool stdio_null (pid_t pid)
{
    for (int fd = 0; fd < 3; fd++) {
        char path[64], target[64];
        snprintf (path, sizeof (path), "/proc/%d/fd/%d", (int)pid, fd);
        ssize_t n = readlink (path, target, sizeof (target) - 1);
        if (n < 0)
            return false;
        target[n] = '\0';
        if (strcmp (target, "/dev/null") != 0)
            return false;
    }
    return true;
}

/* Pipelined requests (as cairnd sends a job's): the supervisor's workers
 * start them at once, yet the STARTED answers come in the order of the
 * requests, and no command's ENDED comes before its STARTED. A mix that
 * finishes at different speeds: refused at once (EEXIST, a used execid),
 * failing its exec, and running /bin/true. */
static void test_pipelined (void)
{
    enum { N = 96 };
    static char ids[N][SHIM_EXECID_LEN + 1], envs[N][64];
    char *truecmd[] = {"/bin/true", NULL}, *nocmd[] = {"/nonexistent/x", NULL};
    struct cairn_error err = {{0}};
    bool answered[N] = {false};
    int in_order = 0, started = 0, nended = 0, ended_early = 0, refused = 0;
    struct spawner *own = spawner_create (keeper, &err);

    if (!own)
        BAIL_OUT ("spawner_create: %s", err.text);
    for (int i = 0; i < N; i++) {
        new_execid (ids[i]);
        snprintf (envs[i], sizeof (envs[i]), SHIM_ENV_EXECID "=%s", ids[i]);
        if (i % 3 == 1) { /* used already: its marker is there */
            char name[SHIM_NAME_MAX];
            snprintf (name, sizeof (name), "%s" SHIM_SUFFIX_STARTED, ids[i]);
            int fd = openat (dirfd_exits, name, O_WRONLY | O_CREAT, 0600);
            if (fd < 0)
                BAIL_OUT ("marker: %s", strerror (errno));
            close (fd);
        }
        char *envp[] = {envs[i], "PATH=/usr/bin:/bin", NULL};
        struct shim_spec spec = {.shim = shim_path,
                                 .exitdir = exitdir,
                                 .execid = ids[i],
                                 .argv = i % 5 == 2 ? nocmd : truecmd,
                                 .envp = envp};
        if (spawner_request (own, &spec, &err) < 0)
            BAIL_OUT ("spawner_request: %s", err.text);
    }
    /* queued, not sent (issue 35: one send for a loop turn's starts) */
    struct pollfd pq = {.fd = spawner_sock (own), .events = POLLIN};
    is_int (poll (&pq, 1, 300), 0,
            "spawner_request queues: no answer before spawner_send");
    ok (spawner_queued (own), "... spawner_queued says so");
    ok (spawner_send (own, &err) == 0 && !spawner_queued (own),
        "spawner_send sends the %d requests at once: %s", N,
        err.text[0] ? err.text : "ok");
    long long end = mono_ms () + 30000;
    int next = 0;
    while ((next < N || nended < started) && mono_ms () < end) {
        struct spawner_msg m;
        int fd = -1;
        if (spawner_next (own, &m, &fd) < 0) {
            struct pollfd p = {.fd = spawner_sock (own), .events = POLLIN};
            if (errno != EAGAIN)
                break;
            (void)poll (&p, 1, 1000);
            continue;
        }
        if (fd >= 0)
            close (fd);
        if (m.type == SPAWNER_MSG_STARTED) {
            if (next < N && !strcmp (m.execid, ids[next]))
                in_order++;
            if (next < N) {
                answered[next] = true;
                if (m.errnum == EEXIST)
                    refused++;
            }
            next++;
            if (m.pid > 0)
                started++;
            continue;
        }
        for (int i = 0; i < N; i++) {
            if (strcmp (m.execid, ids[i]) != 0)
                continue;
            if (!answered[i])
                ended_early++;
            nended++;
        }
    }
    is_int (in_order, N, "%d pipelined requests: each STARTED in place", N);
    is_int (refused, N / 3, "... the used execids refused (EEXIST)");
    is_int (ended_early, 0, "... and no ENDED before its STARTED");
    is_int (nended, started, "... every command started was seen through");
    for (int i = 0; i < N; i++)
        exitfile_remove (dirfd_exits, ids[i]);
    spawner_destroy (own);
}

static void test_spawner (void)
{
    char *sleeper[] = {"sleep", "100", NULL};
    struct cairn_error err = {{0}};
    pid_t super = spawner_pid (sp);
    struct run r;
    int status = -1;

    /* The supervisor starts the command itself and is its parent, not the
     * caller; the command leads its own group and its own session, away
     * from the caller's and the supervisor's (so that it cannot signal
     * them, nor another command, through either). */
    run_argv (&r, sleeper, NULL);
    is_int (ppid_of (r.pid), (int)super,
            "a command's parent is the supervisor");
    is_int (ppid_of (super), (int)keeper_pid (keeper),
            "the supervisor's, the keeper: we fork nothing but the keeper");
    is_errno (shim_reap (r.pidfd, &status), ECHILD,
              "... not the caller: shim_reap on its pidfd says ECHILD");
    is_int (getpgid (r.pid), (int)r.pid, "it leads its own process group");
    ok (getsid (r.pid) != getsid (0), "... outside the caller's session");
    is_int (getsid (r.pid), (int)r.pid,
            "... and its own session, not the supervisor's");
    is_int (getsid (super), (int)super, "the supervisor leads its own session");
    ok (stdio_null (super), "... with 0-2 on /dev/null");
    ok (signal_group (&r, SIGKILL) == 0, "KILL to the group");
    is_int (wait_ended (&r, 10000), 0, "... seen through (record written)");
    run_close (&r);

    /* The start time read off the supervisor's clock is /proc's, or 0 when
     * a tick boundary fell inside the vfork (which takes well under a
     * tick, so most are timed; on a loaded machine a preempted supervisor
     * misses more, hence up to 500 tries for 20). Read while the command
     * runs: once it ends the supervisor reaps it. */
    int timed = 0, agree = 0, tries = 0;
    while (timed < 20 && tries++ < 500) {
        unsigned long long proc = 0;
        run_argv (&r, sleeper, NULL);
        if (r.starttime != 0) {
            timed++;
            if (procfs_starttime (NULL, r.pid, &proc) == 0 &&
                proc == r.starttime)
                agree++;
            else
                diag ("pid %d: clock %llu, /proc %llu", (int)r.pid, r.starttime,
                      proc);
        }
        (void)signal_group (&r, SIGKILL);
        (void)wait_ended (&r, 10000);
        run_close (&r);
    }
    ok (timed >= 20, "the supervisor timed %d of %d starts", timed, tries);
    is_int (agree, timed, "... each at /proc's start time");

    /* A dead supervisor: EPIPE, said plainly, and nothing started. */
    kill (super, SIGKILL);
    struct pollfd p = {.fd = spawner_pidfd (sp), .events = POLLIN};
    ok (poll (&p, 1, 10000) == 1, "the supervisor's pidfd says it died");
    is_errno (spawn_try (&r, sleeper, NULL, &(struct run_opts){0}, &err), EPIPE,
              "spawn through a dead supervisor: EPIPE");
    like (err.text, ") is gone: Broken pipe",
          "... and says the supervisor is gone");
    ok (!exitfile_started (dirfd_exits, r.execid), "... and nothing started");
    spawner_destroy (sp);
    sp = NULL;
}

int main (void)
{
    const char *bd = getenv ("CAIRN_BUILD_DIR");
    struct cairn_error err = {{0}};

    plan (NO_PLAN);
    snprintf (shim_path, sizeof (shim_path), "%s/cairn-shim", bd ? bd : ".");
    if (access (shim_path, X_OK) < 0)
        BAIL_OUT ("%s: %s (set CAIRN_BUILD_DIR)", shim_path, strerror (errno));
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
        BAIL_OUT ("PR_SET_CHILD_SUBREAPER: %s", strerror (errno));
    if (!mkdtemp (tmpdir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    if ((dirfd_exits = exitfile_open_dir (tmpdir, &err)) < 0)
        BAIL_OUT ("%s", err.text);
    snprintf (exitdir, sizeof (exitdir), "%s/exits", tmpdir);
    sp = supervisor_own (&keeper);

    test_exit_codes ();
    test_output ();
    test_output_cap ();
    test_exec_failures ();
    test_exec_path ();
    test_relay ();
    test_trap_term ();
    test_stragglers ();
    test_supervisor_killed ();
    test_clean_process ();
    test_refusals ();
    test_userdb ();
    test_user ();
    test_user_usage ();
    test_rlimit_usage ();
    test_fault ();
    test_pipelined ();
    test_spawner ();

    is_int (count_entries (exitdir), 0, "every run's files were removed");
    spawner_destroy (sp);
    keeper_destroy (keeper);
    close (dirfd_exits);
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", tmpdir);
    if (system (cmd) != 0)
        diag ("could not remove %s", tmpdir);
    return done_testing ();
}
