/* exitdir.c - see exitdir.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/dircheck.h"
#include "supervise/exitdir.h"
#include "util/log.h"
#include "journal/crashpoint.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

#define BOOT_FILE "boot"
#define OWNER_FILE "statedir" /* in <run-dir>/<instance>: whose it is */

static bool is_tmpfs (const char *path)
{
    struct statfs sf;
    return path && statfs (path, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* Is path a directory that only root can change? */
static bool root_only (const char *path)
{
    struct stat st;
    return lstat (path, &st) == 0 && S_ISDIR (st.st_mode) && st.st_uid == 0 &&
           !(st.st_mode & 022);
}

/* Is there something at path that is not root's own closed directory? */
static bool taken (const char *path)
{
    struct stat st;
    return lstat (path, &st) == 0 && !root_only (path);
}

const char *exitdir_default_run_dir (uid_t uid, char *buf, size_t len)
{
    const char *xdg = getenv ("XDG_RUNTIME_DIR");
    char shm[64];

    snprintf (shm, sizeof (shm), "/dev/shm/cairn-%u", (unsigned)uid);
    if (uid == 0 && root_only ("/run") && is_tmpfs ("/run"))
        snprintf (buf, len, "/run/cairn");
    else if (xdg && xdg[0] == '/' && is_tmpfs (xdg) &&
             (size_t)snprintf (buf, len, "%s/cairn", xdg) < len)
        ;
    else if (is_tmpfs ("/dev/shm")) {
        /* Any user may make /dev/shm/cairn-0 before root's cairnd does
         * (after a reboot), which would keep it from starting: root then
         * takes /run/cairn, on a disk, slower but no one else's. */
        if (uid == 0 && taken (shm) && root_only ("/run"))
            snprintf (buf, len, "/run/cairn");
        else
            snprintf (buf, len, "%s", shm);
    } else
        snprintf (buf, len, "statedir");
    return buf;
}

/* path must be a real directory that only uid (or root, for a parent) can
 * change. */
static int check_dir (const char *path,
                      uid_t uid,
                      bool root_ok,
                      mode_t forbidden,
                      struct cairn_error *err)
{
    struct stat st;

    if (lstat (path, &st) < 0)
        return errprintf (err, "%s: %s", path, strerror (errno));
    if (!S_ISDIR (st.st_mode))
        return errset (err, ENOTDIR, "%s: not a directory", path);
    if (st.st_uid != uid && !(root_ok && st.st_uid == 0))
        return errset (err, EPERM, "%s: owned by uid %u, not %u", path,
                       (unsigned)st.st_uid, (unsigned)uid);
    if (st.st_mode & forbidden)
        return errset (err, EPERM, "%s: mode %04o: writable by others%s", path,
                       (unsigned)(st.st_mode & 07777),
                       forbidden & 0044 ? " or readable by others" : "");
    return 0;
}

static int make_dir (const char *path, struct cairn_error *err)
{
    if (mkdir (path, 0700) < 0 && errno != EEXIST)
        return errprintf (err, "mkdir %s: %s", path, strerror (errno));
    return 0;
}

/* Does the directory at path hold any process's file (a name that starts
 * with an execid)? Unreadable counts as yes: keep using it. */
static bool holds_files (const char *path)
{
    DIR *dir = opendir (path);
    struct dirent *ent;
    bool found = false;

    if (!dir)
        return errno != ENOENT;
    while (!found && (ent = readdir (dir)))
        found = ent->d_name[0] != '.' && strlen (ent->d_name) >= 36;
    closedir (dir);
    return found;
}

/* Empty a dir that holds no process's file (only "boot" and temporaries)
 * and remove it. */
static int remove_empty (const char *path, struct cairn_error *err)
{
    char f[PATH_MAX];
    DIR *dir = opendir (path);
    struct dirent *ent;

    if (dir) {
        while ((ent = readdir (dir))) {
            if (strcmp (ent->d_name, ".") && strcmp (ent->d_name, "..") &&
                snprintf (f, sizeof (f), "%s/%s", path, ent->d_name) <
                    (int)sizeof (f))
                (void)unlink (f);
        }
        closedir (dir);
    }
    if (rmdir (path) < 0 && errno != ENOENT)
        return errprintf (err, "rmdir %s: %s", path, strerror (errno));
    return 0;
}

/* Make link (<statedir>/exits) lead to target, or, target NULL, be a plain
 * directory; unless what is there now still holds a process's files. */
static int
place_link (const char *link, const char *target, struct cairn_error *err)
{
    char now[PATH_MAX];
    struct stat st;
    ssize_t n;

    if (lstat (link, &st) < 0) {
        if (errno != ENOENT)
            return errprintf (err, "%s: %s", link, strerror (errno));
    } else if (S_ISLNK (st.st_mode)) {
        if ((n = readlink (link, now, sizeof (now) - 1)) < 0)
            return errprintf (err, "readlink %s: %s", link, strerror (errno));
        now[n] = '\0';
        if (target && strcmp (now, target) == 0)
            return 0;
        if (holds_files (link)) {
            log_msg (LOG_WARNING, "%s: still holds the files of running "
                     "processes: kept until a start finds it empty", now);
            return 0;
        }
        if (unlink (link) < 0)
            return errprintf (err, "unlink %s: %s", link, strerror (errno));
    } else if (S_ISDIR (st.st_mode)) {
        if (!target)
            return 0;
        if (holds_files (link)) {
            log_msg (LOG_WARNING, "%s: still holds the files of running "
                     "processes: run-dir is used once a start finds it "
                     "empty", link);
            return 0;
        }
        if (remove_empty (link, err) < 0)
            return -1;
    } else {
        return errset (err, ENOTDIR, "%s: not a directory or symlink", link);
    }
    CRASHPOINT ("exitdir.link.before");
    if (!target)
        return make_dir (link, err);
    if (symlink (target, link) < 0)
        return errprintf (err, "symlink %s -> %s: %s", link, target,
                          strerror (errno));
    return 0;
}

/* Write path into dir/OWNER_FILE, for exitdir_gc. Best effort. */
static void write_owner (const char *dir, const char *statedir)
{
    char f[PATH_MAX];
    if (snprintf (f, sizeof (f), "%s/" OWNER_FILE, dir) >= (int)sizeof (f))
        return;
    int fd = open (f, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                   0600);
    if (fd >= 0) {
        (void)!write (fd, statedir, strlen (statedir));
        close (fd);
    }
}

/* Is <run_dir>/<name> abandoned: its state dir gone, or its exits a link
 * that leads elsewhere? */
static bool abandoned (const char *run_dir, const char *name)
{
    char f[PATH_MAX], owner[PATH_MAX], link[PATH_MAX + 8], now[PATH_MAX];
    ssize_t n;

    if (snprintf (f, sizeof (f), "%s/%s/" OWNER_FILE, run_dir, name) >=
        (int)sizeof (f))
        return false;
    int fd = open (f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    n = read (fd, owner, sizeof (owner) - 1);
    close (fd);
    if (n <= 0)
        return false;
    owner[n] = '\0';
    snprintf (link, sizeof (link), "%s/exits", owner);
    /* Not linked yet (a cairnd starting now) is not abandoned. */
    if ((n = readlink (link, now, sizeof (now) - 1)) < 0)
        return access (owner, F_OK) < 0;
    now[n] = '\0';
    snprintf (f, sizeof (f), "%s/%s", run_dir, name);
    return strcmp (now, f) != 0;
}

/* Remove the empty instance dirs of state dirs that are gone (a test's, a
 * benchmark's): a run dir is shared by every cairnd of a uid. */
static void gc_siblings (const char *run_dir, const char *instance)
{
    char f[PATH_MAX];
    DIR *dir = opendir (run_dir);
    struct dirent *ent;

    if (!dir)
        return;
    while ((ent = readdir (dir))) {
        if (strlen (ent->d_name) != 36 || !strcmp (ent->d_name, instance) ||
            !abandoned (run_dir, ent->d_name) ||
            snprintf (f, sizeof (f), "%s/%s", run_dir, ent->d_name) >=
                (int)sizeof (f) ||
            holds_files (f))
            continue;
        CRASHPOINT ("exitdir.gc.remove");
        (void)remove_empty (f, NULL);
    }
    closedir (dir);
}

static bool sealed_under (int fd, const char *bootid)
{
    char buf[64];
    int f = openat (fd, BOOT_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (f < 0)
        return false;
    ssize_t n = read (f, buf, sizeof (buf) - 1);
    close (f);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    buf[strcspn (buf, "\n")] = '\0';
    return strcmp (buf, bootid) == 0;
}

int exitdir_open (const char *statedir,
                  const char *run_dir,
                  const char *instance,
                  const char *bootid,
                  uid_t uid,
                  struct exitdir *xd,
                  struct cairn_error *err)
{
    char rd[PATH_MAX], link[PATH_MAX], target[PATH_MAX], *real;

    *xd = (struct exitdir){.fd = -1};
    if (!run_dir) {
        run_dir = exitdir_default_run_dir (uid, rd, sizeof (rd));
        struct stat st;
        if (uid == 0 && strcmp (run_dir, "/run/cairn") == 0 &&
            !is_tmpfs ("/run") && lstat ("/dev/shm/cairn-0", &st) == 0)
            log_msg (LOG_WARNING,
                     "/dev/shm/cairn-0 is not root's own (uid %u, mode "
                     "%04o): the run dir is /run/cairn instead, on a disk",
                     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    }
    bool on_disk = strcmp (run_dir, "statedir") == 0;
    if (snprintf (link, sizeof (link), "%s/exits", statedir) >=
            (int)sizeof (link) ||
        (!on_disk && snprintf (target, sizeof (target), "%s/%s", run_dir,
                               instance) >= (int)sizeof (target)))
        return errset (err, ENAMETOOLONG, "exit dir under %s: %s",
                       on_disk ? statedir : run_dir, strerror (ENAMETOOLONG));
    if (!on_disk) {
        if (dir_check_parent (run_dir, uid, err) < 0 ||
            make_dir (run_dir, err) < 0 ||
            check_dir (run_dir, uid, true, 0022, err) < 0 ||
            make_dir (target, err) < 0 ||
            check_dir (target, uid, false, 0077, err) < 0)
            return errprefix (err, "run-dir");
        write_owner (target, statedir);
        gc_siblings (run_dir, instance);
    }
    if (place_link (link, on_disk ? NULL : target, err) < 0)
        return -1;
    if (!(real = realpath (link, NULL)))
        return errprintf (err, "%s: %s", link, strerror (errno));
    xd->fd = open (real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (xd->fd < 0) {
        errprintf (err, "open %s: %s", real, strerror (errno));
        free (real);
        return -1;
    }
    xd->path = real;
    xd->trusted = sealed_under (xd->fd, bootid);
    xd->tmpfs = is_tmpfs (real);
    return 0;
}

int exitdir_seal (struct exitdir *xd,
                  const char *bootid,
                  struct cairn_error *err)
{
    char line[64];
    int n = snprintf (line, sizeof (line), "%s\n", bootid);

    if (xd->trusted)
        return 0;
    CRASHPOINT ("exitdir.seal.before");
    int f = openat (xd->fd, BOOT_FILE ".tmp",
                    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f < 0)
        return errprintf (err, "%s/" BOOT_FILE ".tmp: %s", xd->path,
                          strerror (errno));
    errno = 0;
    if (n < 0 || write (f, line, (size_t)n) != n) {
        int e = errno ? errno : EIO;
        close (f);
        return errset (err, e, "%s/" BOOT_FILE ".tmp: %s", xd->path,
                       strerror (e));
    }
    close (f);
    if (renameat (xd->fd, BOOT_FILE ".tmp", xd->fd, BOOT_FILE) < 0)
        return errprintf (err, "%s/" BOOT_FILE ": %s", xd->path,
                          strerror (errno));
    CRASHPOINT ("exitdir.seal.after");
    xd->trusted = true;
    return 0;
}

void exitdir_close (struct exitdir *xd)
{
    if (xd->fd >= 0)
        close (xd->fd);
    free (xd->path);
    *xd = (struct exitdir){.fd = -1};
}

static int discard_one (const char *path,
                        const struct stat *st,
                        int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    (void)(flag == FTW_DP ? rmdir (path) : unlink (path)); /* go on */
    return 0;
}

void exitdir_discard (const char *statedir)
{
    char link[PATH_MAX], target[PATH_MAX], f[PATH_MAX], owner[PATH_MAX];
    struct stat a, b;
    ssize_t n;
    int fd, saved = errno;

    if (snprintf (link, sizeof (link), "%s/exits", statedir) >=
        (int)sizeof (link))
        goto out;
    if ((n = readlink (link, target, sizeof (target) - 1)) < 0)
        goto out; /* missing, or a plain directory: the state dir's own */
    target[n] = '\0';
    if (snprintf (f, sizeof (f), "%s/" OWNER_FILE, target) >= (int)sizeof (f) ||
        (fd = open (f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        goto out;
    n = read (fd, owner, sizeof (owner) - 1);
    close (fd);
    if (n <= 0)
        goto out;
    owner[n] = '\0';
    /* another state dir's is not ours to remove */
    if (stat (owner, &a) == 0 && stat (statedir, &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        (void)nftw (target, discard_one, 16, FTW_DEPTH | FTW_PHYS);
out:
    errno = saved;
}

int exitdir_settle (struct exitdir *xd, bool wait, struct cairn_error *err)
{
    int rc;

    while ((rc = flock (xd->fd, LOCK_EX | (wait ? 0 : LOCK_NB))) < 0 &&
           errno == EINTR)
        ;
    if (rc < 0) {
        if (errno == EWOULDBLOCK && !wait)
            return -1;
        return errprintf (err, "%s: flock: %s", xd->path, strerror (errno));
    }
    (void)flock (xd->fd, LOCK_UN);
    return 0;
}
