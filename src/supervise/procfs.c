/* procfs.c - see procfs.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/procfs.h"
#include "supervise/shim_proto.h"

#define PROCROOT_DEFAULT "/proc"
#define BOOTID_DEFAULT "/proc/sys/kernel/random/boot_id"

struct pstat {
    pid_t pid;
    pid_t ppid;
    pid_t sid; /* its session */
    unsigned long long start;
    bool is_shim; /* comm is "cairn-shim" */
    char state;   /* R, S, Z... */
};

bool uuid_is_canonical (const char *s)
{
    return shim_execid_valid (s);
}

/* Read up to size-1 bytes of a small file and NUL-terminate. Returns the
 * length or -1. A line (one_line): done once a read ends in '\n', without
 * the read that would only say EOF (a stat file comes whole in one read). */
static ssize_t read_upto (int dirfd,
                          const char *path,
                          char *buf,
                          size_t size,
                          bool one_line)
{
    ssize_t n, total = 0;
    int fd, saved;

    if ((fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    while ((size_t)total < size - 1) {
        n = read (fd, buf + total, size - 1 - (size_t)total);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            saved = errno;
            close (fd);
            errno = saved;
            return -1;
        }
        if (n == 0)
            break;
        total += n;
        if (one_line && buf[total - 1] == '\n')
            break;
    }
    close (fd);
    buf[total] = '\0';
    return total;
}

static ssize_t read_small (int dirfd, const char *path, char *buf, size_t size)
{
    return read_upto (dirfd, path, buf, size, false);
}

static int parse_ull (const char *s, size_t len, unsigned long long *val)
{
    unsigned long long v = 0;

    if (len == 0 || len > 20)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *val = v;
    return 0;
}

/* Parse a stat line: "pid (comm) state ppid ... starttime ...". The comm
 * may hold anything, including ") (", so fields are counted from the last
 * ')'. */
static int pstat_parse (const char *line, struct pstat *ps)
{
    const char *lp = strchr (line, '(');
    const char *rp = strrchr (line, ')');
    const char *p;
    unsigned long long v;

    if (!lp || !rp || rp < lp)
        goto inval;
    ps->is_shim = (size_t)(rp - lp - 1) == strlen ("cairn-shim") &&
                  !strncmp (lp + 1, "cairn-shim", (size_t)(rp - lp - 1));
    p = rp + 1;
    for (int field = 3; field <= 22; field++) {
        if (*p++ != ' ')
            goto inval;
        size_t len = strcspn (p, " \n");
        if (field == 3)
            ps->state = len == 1 ? *p : '?';
        if (field == 4) {
            if (parse_ull (p, len, &v) < 0 || v > INT_MAX)
                goto inval;
            ps->ppid = (pid_t)v;
        } else if (field == 6) {
            if (parse_ull (p, len, &v) < 0 || v > INT_MAX)
                goto inval;
            ps->sid = (pid_t)v;
        } else if (field == 22) {
            if (parse_ull (p, len, &ps->start) < 0)
                goto inval;
            return 0;
        } else if (len == 0)
            goto inval;
        p += len;
    }
inval:
    errno = EINVAL;
    return -1;
}

/* Read and parse the stat file at path (relative to dirfd) of pid. */
static int
pstat_read_at (int dirfd, const char *path, pid_t pid, struct pstat *ps)
{
    char buf[4096];
    ssize_t n;

    if ((n = read_upto (dirfd, path, buf, sizeof (buf), true)) < 0)
        return -1;
    if (n == 0) { /* the process went away between open and read */
        errno = ESRCH;
        return -1;
    }
    ps->pid = pid;
    return pstat_parse (buf, ps);
}

static int pstat_read (int dirfd, pid_t pid, struct pstat *ps)
{
    char path[32];
    snprintf (path, sizeof (path), "%d/stat", (int)pid);
    return pstat_read_at (dirfd, path, pid, ps);
}

int procfs_starttime (const char *procroot,
                      pid_t pid,
                      unsigned long long *start)
{
    struct pstat ps;
    char path[PATH_MAX];

    if (pid <= 0 || !start) {
        errno = EINVAL;
        return -1;
    }
    /* One open of "<procroot>/<pid>/stat", not one of procroot as well:
     * cairnd asks once per process it starts. */
    if (snprintf (path, sizeof (path), "%s/%d/stat",
                  procroot ? procroot : PROCROOT_DEFAULT,
                  (int)pid) >= (int)sizeof (path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (pstat_read_at (AT_FDCWD, path, pid, &ps) < 0)
        return -1;
    *start = ps.start;
    return 0;
}

int procfs_zombie_unsupervised (const char *procroot, pid_t pid)
{
    struct pstat ps, parent;
    int dirfd, rc = 0;

    if ((dirfd = open (procroot ? procroot : PROCROOT_DEFAULT,
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
    if (pstat_read (dirfd, pid, &ps) < 0)
        rc = -1;
    else if (ps.state == 'Z' || ps.state == 'X')
        /* a parent gone meanwhile: the zombie is someone else's now */
        rc = pstat_read (dirfd, ps.ppid, &parent) < 0 || !parent.is_shim;
    int e = errno;
    close (dirfd);
    errno = e;
    return rc;
}

int procfs_bootid (const char *path, char *buf, size_t len)
{
    char tmp[256];
    ssize_t n;

    if (!buf || len == 0) {
        errno = EINVAL;
        return -1;
    }
    n = read_small (AT_FDCWD, path ? path : BOOTID_DEFAULT, tmp, sizeof (tmp));
    if (n < 0)
        return -1;
    while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == ' '))
        tmp[--n] = '\0';
    if (n == 0) {
        errno = EINVAL;
        return -1;
    }
    if ((size_t)n >= len) {
        errno = ERANGE;
        return -1;
    }
    memcpy (buf, tmp, (size_t)n + 1);
    return 0;
}

/* Does the NUL-separated environ file hold exactly the entry `want`?
 * Streamed: environ can be large, and an entry may straddle two reads. */
static bool environ_has (int dirfd, const char *name, const char *want)
{
    size_t wlen = strlen (want), m = 0;
    const size_t mismatch = (size_t)-1;
    char path[32], buf[8192];
    bool found = false;
    ssize_t n;
    int fd;

    snprintf (path, sizeof (path), "%s/environ", name);
    if ((fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    while (!found && (n = read (fd, buf, sizeof (buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            m = mismatch;
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\0') {
                if (m == wlen) {
                    found = true;
                    break;
                }
                m = 0;
            } else if (m != mismatch)
                m = (m < wlen && buf[i] == want[m]) ? m + 1 : mismatch;
        }
    }
    if (m == wlen) /* last entry without a terminating NUL */
        found = true;
    close (fd);
    return found;
}

/* Is a a better guess than b for "the shim"? */
static bool pstat_better (const struct pstat *a,
                          bool a_root,
                          const struct pstat *b,
                          bool b_root)
{
    if (a_root != b_root)
        return a_root;
    if (a->start != b->start)
        return a->start < b->start;
    if (a->is_shim != b->is_shim)
        return a->is_shim;
    return a->pid < b->pid;
}

static bool is_match_pid (const struct pstat *v, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].pid == pid)
            return true;
    }
    return false;
}

/* Call visit (dir, name, pid, arg) for every process of ours (any_uid:
 * of any uid) whose environment holds CAIRN_EXECID=<execid>; visit
 * returns -1 to stop with an error (errno). Returns 0, or -1 with errno. */
typedef int (*execid_visit_f) (
    DIR *dir, const char *name, pid_t pid, const char *want, void *arg);

static int scan_execid (const char *procroot,
                        const char *execid,
                        bool any_uid,
                        execid_visit_f visit,
                        void *arg)
{
    char want[sizeof (SHIM_ENV_EXECID) + SHIM_EXECID_LEN + 1];
    uid_t uid = geteuid ();
    struct dirent *de;
    int rc = 0;
    DIR *dir;

    if (!uuid_is_canonical (execid)) {
        errno = EINVAL;
        return -1;
    }
    snprintf (want, sizeof (want), SHIM_ENV_EXECID "=%s", execid);
    if (!(dir = opendir (procroot ? procroot : PROCROOT_DEFAULT)))
        return -1;
    while (rc == 0 && (de = readdir (dir))) {
        unsigned long long pid;
        struct stat st;

        if (parse_ull (de->d_name, strlen (de->d_name), &pid) < 0 || pid == 0 ||
            pid > INT_MAX)
            continue;
        if (fstatat (dirfd (dir), de->d_name, &st, 0) < 0 ||
            (!any_uid && st.st_uid != uid) ||
            !environ_has (dirfd (dir), de->d_name, want))
            continue; /* not ours, not it, or gone meanwhile */
        rc = visit (dir, de->d_name, (pid_t)pid, want, arg);
    }
    int saved = errno;
    closedir (dir);
    errno = saved;
    return rc;
}

struct found {
    struct pstat *v;
    size_t n, cap;
};

static int
collect (DIR *dir, const char *name, pid_t pid, const char *want, void *arg)
{
    struct found *f = arg;
    struct pstat ps;
    if (pstat_read (dirfd (dir), pid, &ps) < 0)
        return 0; /* gone meanwhile */
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        struct pstat *tmp = realloc (f->v, cap * sizeof (*tmp));
        if (!tmp) {
            errno = ENOMEM;
            return -1;
        }
        f->v = tmp;
        f->cap = cap;
    }
    f->v[f->n++] = ps;
    return 0;
}

pid_t procfs_find_execid (const char *procroot, const char *execid)
{
    struct found f = {0};
    size_t best = 0;
    pid_t result = -1;
    int saved;

    if (scan_execid (procroot, execid, false, collect, &f) < 0)
        goto done;
    if (f.n == 0) {
        errno = ENOENT;
        goto done;
    }
    for (size_t i = 1; i < f.n; i++) {
        if (pstat_better (&f.v[i], !is_match_pid (f.v, f.n, f.v[i].ppid),
                          &f.v[best], !is_match_pid (f.v, f.n, f.v[best].ppid)))
            best = i;
    }
    result = f.v[best].pid;
done:
    saved = errno;
    free (f.v);
    errno = saved;
    return result;
}

struct killing {
    int signum;
    int count;
};

static int
kill_one (DIR *dir, const char *name, pid_t pid, const char *want, void *arg)
{
    struct killing *k = arg;
    int pidfd;
    if (pid == getpid ())
        return 0;
    /* Pin the process, then look again: if the pid was recycled between
     * the two looks, the new owner lacks our execid. */
    if ((pidfd = pidfd_open (pid, 0)) < 0)
        return 0;
    if (environ_has (dirfd (dir), name, want) &&
        pidfd_send_signal (pidfd, k->signum, NULL, 0) == 0)
        k->count++;
    close (pidfd);
    return 0;
}

int procfs_reap_strays (const char *procroot,
                        bool (*keep) (pid_t pid, void *arg),
                        void *arg)
{
    char path[64], buf[65536], *p, *end;
    int dirfd, n = 0;
    pid_t self = getpid ();

    if ((dirfd = open (procroot ? procroot : PROCROOT_DEFAULT,
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
    snprintf (path, sizeof (path), "%d/task/%d/children", (int)self, (int)self);
    if (read_small (dirfd, path, buf, sizeof (buf)) < 0) {
        int e = errno;
        close (dirfd);
        errno = e;
        return -1;
    }
    for (p = buf; *p; p = end) {
        long v = strtol (p, &end, 10);
        struct pstat ps;
        if (end == p)
            break;
        if (v <= 0)
            continue;
        /* a shim is reaped through its pidfd, with its status read */
        if (pstat_read (dirfd, (pid_t)v, &ps) < 0 || ps.state != 'Z' ||
            ps.is_shim || (keep && keep ((pid_t)v, arg)))
            continue;
        if (waitpid ((pid_t)v, NULL, WNOHANG) == (pid_t)v)
            n++;
    }
    close (dirfd);
    return n;
}

int procfs_kill_execid (const char *procroot, const char *execid, int signum)
{
    struct killing k = {.signum = signum};
    /* A root cairnd ran commands as their users: what they left runs
     * under those uids, not ours. Only the lost command's execid is hit,
     * which its process handed down: a user who put another's execid in
     * their own process's environment has only their own killed. */
    if (scan_execid (procroot, execid, geteuid () == 0, kill_one, &k) < 0)
        return -1;
    return k.count;
}

int procfs_pidfd_verify (const char *procroot,
                         pid_t pid,
                         unsigned long long start,
                         int *pidfd)
{
    unsigned long long now;
    int fd, e;

    if (pid <= 0 || !pidfd) {
        errno = EINVAL;
        return -1;
    }
    if ((fd = pidfd_open (pid, 0)) < 0)
        return -1; /* ESRCH: gone */
    if (procfs_starttime (procroot, pid, &now) < 0) {
        e = errno;
        close (fd);
        errno = (e == ENOENT || e == ESRCH) ? ESRCH : e;
        return -1;
    }
    if (now != start) {
        close (fd);
        errno = ESRCH; /* the pid was reused */
        return -1;
    }
    *pidfd = fd;
    return 0;
}

/* Has the process of pidfd not exited yet? */
static bool leader_there (int pidfd)
{
    struct pollfd pf = {.fd = pidfd, .events = POLLIN};
    return poll (&pf, 1, 0) == 0;
}

int procfs_signal_session (const char *procroot,
                           pid_t sid,
                           int leader_pidfd,
                           int signum)
{
    DIR *dir;
    struct dirent *e;
    int count = 0;

    if (sid <= 0 || leader_pidfd < 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(dir = opendir (procroot ? procroot : PROCROOT_DEFAULT)))
        return -1;
    while ((e = readdir (dir))) {
        struct pstat ps;
        char *end;
        long v = strtol (e->d_name, &end, 10);
        if (*end != '\0' || v <= 0 || v > INT_MAX || (pid_t)v == sid)
            continue;
        if (pstat_read (dirfd (dir), (pid_t)v, &ps) < 0 || ps.sid != sid ||
            ps.state == 'Z')
            continue;
        /* Pinned, then looked at again: the process the pidfd holds is in
         * the session, and the session is the leader's while the leader
         * has not exited (its pid, the session's id, is not free). */
        int pidfd = pidfd_open ((pid_t)v, 0);
        if (pidfd < 0)
            continue;
        if (pstat_read (dirfd (dir), (pid_t)v, &ps) == 0 && ps.sid == sid &&
            leader_there (leader_pidfd) &&
            pidfd_send_signal (pidfd, signum, NULL, 0) == 0)
            count++;
        close (pidfd);
    }
    closedir (dir);
    return count;
}
