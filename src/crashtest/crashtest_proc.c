/* crashtest_proc.c - the processes a case deals with: cairnd, and what the
 * scenario left running.
 *
 * A case runs in a process that made itself a child subreaper: when cairnd
 * is killed, its shims are re-parented to us, as they would be to init,
 * and we reap them so that they do not linger as zombies. Reaping with
 * waitpid (-1) means cairnd's own status may come back from any reap
 * call, so all reaping goes through ct_daemon_reap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crashtest/crashtest.h"

extern char **environ;

double ct_mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double ct_wall (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void ct_sleep (double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)s,
                          .tv_nsec = (long)((s - (time_t)s) * 1e9)};
    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

void ct_addf (json_t *array, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    json_array_append_new (array, json_string (buf));
}

/* Our variables that must not reach a cairnd unless the case asks. */
static bool env_ours (const char *e)
{
    return strncmp (e, "CAIRN_CRASH_AT=", 15) == 0 ||
           strncmp (e, "CAIRN_CRASH_COUNT=", 18) == 0 ||
           strncmp (e, "CAIRN_FAULT=", 12) == 0 ||
           strncmp (e, "CRASHTEST_CASE=", 15) == 0;
}

int ct_daemon_start (struct ct_daemon *dm,
                     const char *cairnd,
                     const char *dir,
                     char *const extra_env[],
                     struct cairn_error *err)
{
    char logpath[512], config[512], statedir[512];
    size_t n = 0, k = 0;

    snprintf (logpath, sizeof (logpath), "%s/cairnd.log", dir);
    snprintf (config, sizeof (config), "%s/config.json", dir);
    snprintf (statedir, sizeof (statedir), "%s/s", dir);
    while (environ[n])
        n++;
    for (size_t i = 0; extra_env && extra_env[i]; i++)
        n++;
    char **envp = calloc (n + 1, sizeof (*envp));
    if (!envp)
        return errset (err, ENOMEM, "out of memory");
    for (size_t i = 0; environ[i]; i++)
        if (!env_ours (environ[i]))
            envp[k++] = environ[i];
    for (size_t i = 0; extra_env && extra_env[i]; i++)
        envp[k++] = extra_env[i];
    envp[k] = NULL;

    int logfd = open (logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0) {
        free (envp);
        return errprintf (err, "%s: %s", logpath, strerror (errno));
    }
    pid_t pid = fork ();
    if (pid < 0) {
        close (logfd);
        free (envp);
        return errprintf (err, "fork: %s", strerror (errno));
    }
    if (pid == 0) {
        /* if the case process dies, its cairnd must not outlive it */
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open ("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2 (devnull, 0);
        dup2 (logfd, 1);
        dup2 (logfd, 2);
        signal (SIGPIPE, SIG_DFL);
        execle (cairnd, cairnd, "-c", config, "--statedir", statedir,
                (char *)NULL, envp);
        dprintf (2, "crashtest: exec %s: %s\n", cairnd, strerror (errno));
        _exit (127);
    }
    close (logfd);
    free (envp);
    dm->pid = pid;
    dm->exited = false;
    dm->status = 0;
    return 0;
}

bool ct_daemon_reap (struct ct_daemon *dm, double timeout)
{
    double until = ct_mono () + timeout;
    for (;;) {
        int status;
        pid_t pid;
        while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
            if (dm && pid == dm->pid && !dm->exited) {
                dm->exited = true;
                dm->status = status;
            }
        }
        if (!dm || dm->exited || dm->pid <= 0 || ct_mono () >= until)
            return dm && dm->exited;
        ct_sleep (0.002);
    }
}

void ct_status_str (int status, char *buf, size_t len)
{
    if (WIFEXITED (status))
        snprintf (buf, len, "exit %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status)) {
        const char *abbr = sigabbrev_np (WTERMSIG (status));
        snprintf (buf, len, "killed by SIG%s", abbr ? abbr : "?");
    } else
        snprintf (buf, len, "wait status %d", status);
}

/* Read /proc/PID/FILE (NUL-separated for environ) into buf. Returns the
 * length, or -1. */
static ssize_t proc_read (pid_t pid, const char *file, char *buf, size_t len)
{
    char path[64];
    snprintf (path, sizeof (path), "/proc/%d/%s", (int)pid, file);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t off = 0;
    ssize_t n;
    while (off < len - 1 && (n = read (fd, buf + off, len - 1 - off)) > 0)
        off += (size_t)n;
    close (fd);
    buf[off] = '\0';
    return (ssize_t)off;
}

/* Is NAME=VALUE one of the entries of the environ block? */
static bool environ_has (const char *block, size_t len, const char *entry)
{
    size_t elen = strlen (entry);
    for (size_t off = 0; off < len;) {
        const char *e = block + off;
        size_t l = strnlen (e, len - off);
        if (l == elen && memcmp (e, entry, elen) == 0)
            return true;
        off += l + 1;
    }
    return false;
}

static bool proc_is_zombie (pid_t pid)
{
    char buf[512];
    if (proc_read (pid, "stat", buf, sizeof (buf)) < 0)
        return true;
    const char *rp = strrchr (buf, ')');
    return !rp || rp[1] == '\0' || rp[2] == 'Z' || rp[2] == 'X';
}

static bool proc_env_has (pid_t pid, const char *entry)
{
    static char block[65536];
    ssize_t n = proc_read (pid, "environ", block, sizeof (block));
    return n > 0 && environ_has (block, (size_t)n, entry) &&
           !proc_is_zombie (pid);
}

json_t *ct_proc_scan (const char *tag)
{
    json_t *pids = json_array ();
    char entry[512];
    DIR *dir = opendir ("/proc");
    struct dirent *ent;

    snprintf (entry, sizeof (entry), "CRASHTEST_CASE=%s", tag);
    if (!dir || !pids) {
        if (dir)
            closedir (dir);
        return pids;
    }
    while ((ent = readdir (dir))) {
        char *end;
        long pid = strtol (ent->d_name, &end, 10);
        if (*end || pid <= 1 || pid == getpid ())
            continue;
        if (proc_env_has ((pid_t)pid, entry))
            json_array_append_new (pids, json_integer (pid));
    }
    closedir (dir);
    return pids;
}

bool ct_proc_getenv (pid_t pid, const char *name, char *buf, size_t len)
{
    static char block[65536];
    ssize_t n = proc_read (pid, "environ", block, sizeof (block));
    size_t nlen = strlen (name);
    for (size_t off = 0; n > 0 && off < (size_t)n;) {
        const char *e = block + off;
        size_t l = strnlen (e, (size_t)n - off);
        if (l > nlen && memcmp (e, name, nlen) == 0 && e[nlen] == '=') {
            snprintf (buf, len, "%s", e + nlen + 1);
            return true;
        }
        off += l + 1;
    }
    return false;
}

bool ct_proc_has_execid (pid_t pid, const char *execid)
{
    char entry[128];
    snprintf (entry, sizeof (entry), "CAIRN_EXECID=%s", execid);
    return pid > 1 && proc_env_has (pid, entry);
}

pid_t ct_proc_ppid (pid_t pid)
{
    char buf[512];
    int ppid;
    if (proc_read (pid, "stat", buf, sizeof (buf)) < 0)
        return -1;
    const char *rp = strrchr (buf, ')');
    if (!rp || sscanf (rp + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}
