/* t_shim - the real cairn-shim, spawned through the spawner.
 *
 * The test makes itself a child subreaper so that processes orphaned by a
 * dying shim or command are reparented here and can be reaped: otherwise
 * they would linger as zombies of an init that may not reap, and
 * "is it dead" could not be told from "is it a zombie".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "tap.h"

#include "exec/exitfile.h"
#include "exec/shim_proto.h"
#include "exec/spawn.h"
#include "exec/spawner.h"
#include "journal/crashpoint.h"

static char shim_path[PATH_MAX];
static char tmpdir[] = "/tmp/t_shim.XXXXXX";
static char exitdir[PATH_MAX];
static int dirfd_exits = -1;
static struct spawner *sp;

struct run {
    char execid[SHIM_EXECID_LEN + 1];
    char envvar[64];
    pid_t pid;
    int pidfd;
};

static void new_execid (char *buf)
{
    uuid_t u;
    uuid_generate (u);
    uuid_unparse_lower (u, buf);
}

/* Spawn argv under the shim. BAIL_OUT if that fails: nothing else could
 * then be tested. */
static void run_capped (struct run *r,
                        char *const argv[],
                        const char *cwd,
                        size_t max_output)
{
    struct cairn_error err = {{0}};
    char *envp[] = {r->envvar, "PATH=/usr/bin:/bin", NULL};

    new_execid (r->execid);
    snprintf (r->envvar, sizeof (r->envvar), SHIM_ENV_EXECID "=%s", r->execid);
    struct shim_spec spec = {
        .shim = shim_path,
        .exitdir = exitdir,
        .execid = r->execid,
        .argv = argv,
        .envp = envp,
        .cwd = cwd,
        .max_output = max_output,
    };
    if (spawner_spawn (sp, &spec, &r->pid, &r->pidfd, &err) < 0)
        BAIL_OUT ("spawner_spawn: %s", err.text);
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

/* Wait up to ms for the shim to exit; return its own wait status, or -1 on
 * timeout (the shim is then killed so the test goes on). */
static int wait_shim (struct run *r, int ms)
{
    struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
    int status = -1;

    if (poll (&p, 1, ms) != 1) {
        diag ("shim %d did not exit within %d ms", (int)r->pid, ms);
        kill (r->pid, SIGKILL);
        waitpid (r->pid, NULL, 0);
        return -1;
    }
    if (shim_reap (r->pidfd, &status) < 0) {
        diag ("shim_reap: %s", strerror (errno));
        return -1;
    }
    return status;
}

static void run_close (struct run *r)
{
    close (r->pidfd);
    exitfile_remove (dirfd_exits, r->execid);
}

/* The command's wait status from the exit file, or -1. */
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

static void test_exit_codes (void)
{
    struct run r;
    char *error = (char *)"unset";

    run_sh (&r, "exit 0");
    is_int (wait_shim (&r, 10000), 0, "exit 0: shim exits 0");
    is_int (exit_status (&r, &error), 0, "exit 0: status 0");
    ok (error == NULL, "exit 0: no error in the exit file");
    ok (exitfile_started (dirfd_exits, r.execid), "exit 0: marker present");
    /* The shim was reaped above: the pidfd now names nobody. */
    is_errno (shim_reap (r.pidfd, &(int){0}), ECHILD,
              "shim_reap after reaping: ECHILD");
    is_errno (shim_signal (r.pidfd, SIGTERM), ESRCH,
              "shim_signal to a reaped shim: ESRCH");
    run_close (&r);

    run_sh (&r, "exit 3");
    is_int (wait_shim (&r, 10000), 0, "exit 3: shim exits 0");
    is_int (exit_status (&r, NULL), 768, "exit 3: status 768");
    run_close (&r);
}

static void test_output (void)
{
    struct run r;
    size_t len;
    bool trunc;
    char *s;

    run_sh (&r, "echo hello; echo oops >&2; readlink /proc/$$/fd/0");
    is_int (wait_shim (&r, 10000), 0, "output: shim exits 0");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 4096, &len, &trunc);
    is_str (s, "hello\n/dev/null\n", "stdout captured, stdin is /dev/null");
    free (s);
    s = exitfile_read_output (dirfd_exits, r.execid, "err", 4096, &len, &trunc);
    is_str (s, "oops\n", "stderr captured");
    free (s);
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

/* A command that writes without end fills little disk: the shim cuts its
 * files back to the cap + 1 while it runs, and the head is kept. */
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
    shim_signal (r.pidfd, SIGTERM);
    is_int (wait_shim (&r, 10000), 0, "paced: shim exits 0 after SIGTERM");
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
    shim_signal (r.pidfd, SIGKILL);
    is_int (wait_shim (&r, 10000), 0, "runaway: shim exits 0 after SIGKILL");
    is_int (file_size (&r, SHIM_SUFFIX_OUT, NULL), 1001,
            "runaway: stdout ends at cap + 1 bytes");
    is_int (file_size (&r, SHIM_SUFFIX_ERR, NULL), 1001,
            "runaway: stderr (a background writer's) too");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 1000, &len, &trunc);
    ok (s && len == 1000 && trunc && !strncmp (s, "head0123456789abc", 17),
        "runaway: the head is kept");
    free (s);
    run_close (&r);

    /* Under the cap nothing is touched; a bad cap is a usage error. */
    char *quiet[] = {"/bin/sh", "-c", "printf 12345; sleep 0.3", NULL};
    run_capped (&r, quiet, NULL, 5);
    is_int (wait_shim (&r, 10000), 0, "at the cap: shim exits 0");
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
    is_int (count_entries (exitdir), before, "... and nothing written");
}

static void test_exec_failures (void)
{
    char *argv[] = {"nosuchcmd-cairn", "x", NULL};
    char *argv_true[] = {"true", NULL};
    char *error = NULL;
    struct run r;

    run_argv (&r, argv, NULL);
    is_int (wait_shim (&r, 10000), 0, "exec failure: shim exits 0");
    is_int (exit_status (&r, &error), 32512, "exec failure: status 127<<8");
    like (error, "execvp nosuchcmd-cairn: No such file or directory",
          "exec failure: error names the command");
    free (error);
    error = NULL;
    ok (exitfile_started (dirfd_exits, r.execid),
        "exec failure: marker present (exec was attempted)");
    run_close (&r);

    run_argv (&r, argv_true, "/nonexistent-cairn-dir");
    is_int (wait_shim (&r, 10000), 0, "chdir failure: shim exits 0");
    is_int (exit_status (&r, &error), 32512, "chdir failure: status 127<<8");
    like (error, "chdir /nonexistent-cairn-dir: No such file",
          "chdir failure: error names the directory");
    free (error);
    ok (!exitfile_started (dirfd_exits, r.execid),
        "chdir failure: no marker (the command never started)");
    run_close (&r);
}

static void test_relay (void)
{
    struct run r;

    run_sh (&r, "exec sleep 100");
    ok (shim_signal (r.pidfd, SIGTERM) == 0, "relay SIGTERM right away");
    is_int (wait_shim (&r, 10000), 0, "relay TERM: shim exits 0");
    is_int (exit_status (&r, NULL), SIGTERM, "relay TERM: status SIGTERM");
    run_close (&r);

    run_sh (&r, "exec sleep 100");
    ok (shim_signal (r.pidfd, SIGKILL) == 0, "relay SIGKILL");
    is_int (wait_shim (&r, 10000), 0, "relay KILL: shim survives, exits 0");
    is_int (exit_status (&r, NULL), SIGKILL, "relay KILL: status 9");
    run_close (&r);

    is_errno (shim_signal (-1, SIGTERM), EBADF, "shim_signal bad fd: EBADF");
    is_errno (shim_signal (0, 0), EINVAL, "shim_signal signal 0: EINVAL");
    is_errno (shim_signal (0, NSIG), EINVAL, "shim_signal NSIG: EINVAL");

    /* A plain signal sent to the shim itself is relayed as itself. */
    run_sh (&r, "echo $$ > plainpid; exec sleep 100");
    ok (wait_pidfile ("plainpid", 5000) > 0, "plain: command is running");
    ok (getsid (r.pid) == r.pid, "the shim leads its own session");
    kill (r.pid, SIGUSR1);
    is_int (wait_shim (&r, 10000), 0, "plain USR1 to the shim: exits 0");
    is_int (exit_status (&r, NULL), SIGUSR1, "plain USR1 reached the command");
    run_close (&r);
}

static void test_trap_term (void)
{
    struct run r;
    int status;

    run_sh (&r, "trap '' TERM; echo $$ > trappid; while :; do sleep 1; done");
    ok (wait_pidfile ("trappid", 5000) > 0, "trap: command ready");
    ok (shim_signal (r.pidfd, SIGTERM) == 0, "trap: relay TERM");
    sleep_ms (300);
    is_errno (shim_reap (r.pidfd, &status), EAGAIN,
              "trap: TERM ignored, shim_reap says EAGAIN");
    ok (shim_signal (r.pidfd, SIGKILL) == 0, "trap: relay KILL");
    is_int (wait_shim (&r, 10000), 0, "trap: shim exits 0");
    is_int (exit_status (&r, NULL), SIGKILL, "trap: died of the relayed KILL");
    run_close (&r);
}

static void test_stragglers (void)
{
    struct run r;
    pid_t bg;

    run_sh (&r, "sleep 100 & echo $! > bgpid; exit 0");
    is_int (wait_shim (&r, 10000), 0, "straggler: shim exits 0");
    is_int (exit_status (&r, NULL), 0, "straggler: leader's status 0");
    bg = wait_pidfile ("bgpid", 1000);
    ok (bg > 0 && wait_gone (bg, 2000, NULL),
        "straggler: background child in the group was killed");
    run_close (&r);
}

static void test_shim_killed (void)
{
    struct run r;
    pid_t cmd;
    int status = -1;

    run_sh (&r, "echo $$ > cmdpid; exec sleep 100");
    cmd = wait_pidfile ("cmdpid", 5000);
    ok (cmd > 0, "shim killed: command running");
    kill (r.pid, SIGKILL);
    is_int (wait_shim (&r, 10000), SIGKILL, "shim killed: shim status 9");
    ok (cmd > 0 && wait_gone (cmd, 2000, &status),
        "shim killed: the command dies too");
    ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
        "shim killed: by PDEATHSIG SIGKILL");
    is_errno (exitfile_read (dirfd_exits, r.execid, &status, NULL), ENOENT,
              "shim killed: no exit file");
    ok (exitfile_started (dirfd_exits, r.execid),
        "shim killed: marker says it started");
    run_close (&r);
}

/* The command must get a clean process: no fd of ours, nothing blocked,
 * nothing ignored. */
static void test_clean_process (void)
{
    char *argv[] = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
    char script[128];
    sigset_t set, old;
    struct run r;
    char *s;
    int fd;

    fd = open ("/dev/null", O_RDONLY); /* deliberately not close-on-exec */
    snprintf (script, sizeof (script),
              "[ -e /proc/$$/fd/%d ] && echo leaked || echo clean", fd);
    run_sh (&r, script);
    is_int (wait_shim (&r, 10000), 0, "fds: shim exits 0");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 64, NULL, NULL);
    is_str (s, "clean\n", "a non-cloexec fd of the daemon does not leak");
    free (s);
    run_close (&r);
    close (fd);

    signal (SIGUSR1, SIG_IGN);
    sigemptyset (&set);
    sigaddset (&set, SIGUSR2);
    sigprocmask (SIG_BLOCK, &set, &old);
    run_argv (&r, argv, NULL);
    sigprocmask (SIG_SETMASK, &old, NULL);
    signal (SIGUSR1, SIG_DFL);
    is_int (wait_shim (&r, 10000), 0, "signals: shim exits 0");
    s = exitfile_read_output (dirfd_exits, r.execid, "out", 256, NULL, NULL);
    like (s, "SigBlk:\t0000000000000000", "command starts with no mask");
    like (s, "SigIgn:\t0000000000000000", "command ignores no signal");
    free (s);
    run_close (&r);
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
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, &err), EINVAL,
              "spawner_spawn: non-canonical execid -> EINVAL");
    like (err.text, "not a canonical uuid", "... and says why");
    spec.execid = id;
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, &err), EINVAL,
              "spawner_spawn: envp with another execid -> EINVAL");
    like (err.text, "environment lacks CAIRN_EXECID=", "... and says why");

    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    spec.shim = "/nonexistent/cairn-shim";
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, &err), ENOENT,
              "spawner_spawn: missing shim -> ENOENT");
    like (err.text, "spawn /nonexistent/cairn-shim: No such file",
          "... and names the shim path");
    spec.shim = shim_path;

    /* The shim's own check, bypassing shim_spawn's. */
    before = count_entries (exitdir);
    if (posix_spawn (&pid, shim_path, NULL, NULL, shim_argv, badenv) != 0)
        BAIL_OUT ("posix_spawn %s", shim_path);
    waitpid (pid, &status, 0);
    ok (WIFEXITED (status) && WEXITSTATUS (status) == 2,
        "shim with a bad CAIRN_EXECID exits 2");
    is_int (count_entries (exitdir), before, "... and writes nothing");

    /* Starting an execid a second time touches nothing. */
    struct run r;
    run_sh (&r, "echo first; exit 5");
    is_int (wait_shim (&r, 10000), 0, "first run of an execid");
    close (r.pidfd);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", r.execid);
    spec.execid = r.execid;
    if (spawner_spawn (sp, &spec, &pid, &pidfd, &err) < 0)
        BAIL_OUT ("spawner_spawn: %s", err.text);
    r.pidfd = pidfd;
    r.pid = pid;
    is_int (wait_shim (&r, 10000), 4 << 8, "second run: shim exits 4");
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
    char envvar[64], id[SHIM_EXECID_LEN + 1];
    char *envp[] = {envvar, NULL};
    struct shim_spec spec = {.shim = shim_path,
                             .exitdir = exitdir,
                             .execid = id,
                             .argv = argv,
                             .envp = envp};
    pid_t pid;
    int pidfd;

    new_execid (id);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    setenv ("CAIRN_FAULT", "exec.spawn:1:11", 1);
    crashpoint_init ();
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, &err), EAGAIN,
              "fault exec.spawn:1:11 -> EAGAIN");
    like (err.text, "Resource temporarily unavailable",
          "... with the errno's text");
    like (err.text, shim_path, "... naming the shim");
    ok (!exitfile_started (dirfd_exits, id), "... and nothing started");
    unsetenv ("CAIRN_FAULT");
    crashpoint_init ();
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

static void test_spawner (void)
{
    struct cairn_error err = {{0}};
    struct run r;
    int status = -1;

    /* CLONE_PARENT: the spawner clones, the caller is the parent. */
    run_sh (&r, "read x"); /* stdin is /dev/null: returns at once */
    is_int (ppid_of (r.pid), (int)getpid (),
            "a shim's parent is the spawner's caller, not the spawner");
    is_int (wait_shim (&r, 10000), 0, "... which reaps it through its pidfd");
    run_close (&r);

    /* A dead spawner: EPIPE, said plainly, and nothing started. */
    char *argv[] = {"true", NULL};
    char envvar[64], id[SHIM_EXECID_LEN + 1];
    char *envp[] = {envvar, NULL};
    struct shim_spec spec = {.shim = shim_path,
                             .exitdir = exitdir,
                             .execid = id,
                             .argv = argv,
                             .envp = envp};
    pid_t pid;
    int pidfd;
    new_execid (id);
    snprintf (envvar, sizeof (envvar), SHIM_ENV_EXECID "=%s", id);
    kill (spawner_pid (sp), SIGKILL);
    struct pollfd p = {.fd = spawner_pidfd (sp), .events = POLLIN};
    ok (poll (&p, 1, 10000) == 1, "the spawner's pidfd says it died");
    is_errno (spawner_spawn (sp, &spec, &pid, &pidfd, &err), EPIPE,
              "spawn through a dead spawner: EPIPE");
    like (err.text, ") is gone: Broken pipe",
          "... and says the spawner is gone");
    ok (!exitfile_started (dirfd_exits, id), "... and nothing started");
    spawner_destroy (sp);
    sp = NULL;
    (void)status;
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
    if (!(sp = spawner_create (&err)))
        BAIL_OUT ("spawner_create: %s", err.text);

    test_exit_codes ();
    test_output ();
    test_output_cap ();
    test_exec_failures ();
    test_relay ();
    test_trap_term ();
    test_stragglers ();
    test_shim_killed ();
    test_clean_process ();
    test_refusals ();
    test_fault ();
    test_spawner ();

    is_int (count_entries (exitdir), 0, "every run's files were removed");
    spawner_destroy (sp);
    close (dirfd_exits);
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", tmpdir);
    if (system (cmd) != 0)
        diag ("could not remove %s", tmpdir);
    return done_testing ();
}
