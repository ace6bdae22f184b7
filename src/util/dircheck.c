/* dircheck.c - see dircheck.h
 *
 * The real path, not the one given: a symlink on the way is as good as
 * the directory it leads to, and that directory is what another user
 * would have to be able to change.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/dircheck.h"

static int check_one (const char *dir, uid_t uid, struct cairn_error *err)
{
    struct stat st;

    if (stat (dir, &st) < 0)
        return errprintf (err, "%s: %s", dir, strerror (errno));
    if (!S_ISDIR (st.st_mode))
        return errset (err, ENOTDIR, "%s: not a directory", dir);
    if (st.st_uid != 0 && st.st_uid != uid) {
        if (uid == 0)
            return errset (err, EPERM, "%s: owned by uid %u, expected root",
                           dir, (unsigned)st.st_uid);
        return errset (err, EPERM,
                       "%s: owned by uid %u, expected root or uid %u", dir,
                       (unsigned)st.st_uid, (unsigned)uid);
    }
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
        return errset (err, EPERM,
                       "%s: mode %04o: writable by others without the sticky "
                       "bit",
                       dir, (unsigned)(st.st_mode & 07777));
    return 0;
}

int dir_check_trusted (const char *path, uid_t uid, struct cairn_error *err)
{
    char *real;
    int rc = 0;

    if (!(real = realpath (path, NULL)))
        return errprintf (err, "%s: %s", path, strerror (errno));
    /* From "/" down: each prefix ending before a '/', then the whole. */
    for (char *p = real;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        if (p == real) { /* the root */
            rc = check_one ("/", uid, err);
        } else {
            *p = '\0';
            rc = check_one (real, uid, err);
            *p = c;
        }
        if (rc < 0 || c == '\0')
            break;
    }
    free (real);
    return rc;
}

int dir_check_parent (const char *file, uid_t uid, struct cairn_error *err)
{
    const char *slash = strrchr (file, '/');
    char dir[PATH_MAX];
    size_t n;

    if (!slash)
        return dir_check_trusted (".", uid, err);
    n = slash == file ? 1 : (size_t)(slash - file);
    if (n >= sizeof (dir))
        return errset (err, ENAMETOOLONG, "%s: %s", file,
                       strerror (ENAMETOOLONG));
    memcpy (dir, file, n);
    dir[n] = '\0';
    return dir_check_trusted (dir, uid, err);
}
