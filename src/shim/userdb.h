/* userdb.h - look a user up in passwd and group files, without NSS.
 *
 * For cairn-shim's --user. The shim is a static program: getpwuid_r() and
 * getgrouplist() would dlopen() the modules of nsswitch.conf (systemd, sss,
 * ldap...) into it, which a static binary cannot host (measured: a lookup
 * that reaches libnss_systemd crashes it). So the shim reads /etc/passwd
 * and /etc/group itself, and users known only to NSS modules are not
 * found. Header-only and libc-only, like shim_proto.h: the shim is one
 * file, and the unit tests include this too.
 */
#ifndef CAIRN_SHIM_USERDB_H
#define CAIRN_SHIM_USERDB_H

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* The first entry of the passwd file at path with uid uid, into *pw, its
 * strings in buf. "+" and "-" lines (NIS compat markers) are no users.
 * Returns 0, or an errno value: ENOENT no such uid, ERANGE an entry longer
 * than size, or the error of fopen/read. */
static inline int userdb_passwd (
    const char *path, uid_t uid, struct passwd *pw, char *buf, size_t size)
{
    struct passwd *found = NULL;
    FILE *f = fopen (path, "re");
    int e;

    if (!f)
        return errno;
    while ((e = fgetpwent_r (f, pw, buf, size, &found)) == 0) {
        if (found->pw_uid == uid && found->pw_name[0] != '+' &&
            found->pw_name[0] != '-')
            break;
    }
    fclose (f);
    return e;
}

/* The groups of pw as getgrouplist() gives them: pw's primary group first,
 * then each group of the group file at path that lists pw's name as a
 * member, without repeats. At most max groups go to groups; *n is set to
 * their number. A line that does not fit the buffer (16 KiB at first)
 * makes it start over with one four times larger, up to 64 MiB. Returns 0,
 * or an errno value: E2BIG more than max groups, ERANGE a line over
 * 64 MiB, ENOMEM, or the error of fopen/read. */
static inline int userdb_groups (
    const char *path, const struct passwd *pw, gid_t *groups, int max, int *n)
{
    size_t size = 16384;
    char *buf = NULL;
    FILE *f;
    int e;

    if (max < 1)
        return E2BIG;
    if (!(f = fopen (path, "re")))
        return errno;
    for (;;) { /* once per buffer size */
        *n = 0;
        groups[(*n)++] = pw->pw_gid;
        free (buf);
        if (!(buf = malloc (size))) {
            e = ENOMEM;
            break;
        }
        rewind (f);
        for (;;) {
            struct group gr, *found = NULL;
            bool member = false, dup = false;

            if ((e = fgetgrent_r (f, &gr, buf, size, &found)) != 0)
                break;
            for (char **m = found->gr_mem; m && *m && !member; m++)
                member = !strcmp (*m, pw->pw_name);
            for (int i = 0; member && i < *n && !dup; i++)
                dup = groups[i] == found->gr_gid;
            if (!member || dup)
                continue;
            if (*n == max) {
                e = E2BIG;
                break;
            }
            groups[(*n)++] = found->gr_gid;
        }
        if (e != ERANGE || size >= (64u << 20))
            break;
        size *= 4;
    }
    fclose (f);
    free (buf);
    return e == ENOENT ? 0 : e; /* ENOENT: the end of the file */
}

#endif /* CAIRN_SHIM_USERDB_H */
