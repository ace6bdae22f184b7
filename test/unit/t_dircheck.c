/* t_dircheck.c - a directory, and every one above it, that no other user
 * can change (dircheck.h). Owners other than root need root to chown. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/dircheck.h"
#include "tap.h"

static char tmpdir[] = "/tmp/t_dircheck.XXXXXX";
static char real[PATH_MAX]; /* tmpdir's real path: what messages name */

static const char *sub (const char *name)
{
    static char buf[4][PATH_MAX + 64];
    static int i;
    char *b = buf[i++ % 4];
    if ((size_t)snprintf (b, sizeof (buf[0]), "%s/%s", real, name) >=
        sizeof (buf[0]))
        BAIL_OUT ("path too long");
    return b;
}

static void mkdir_mode (const char *name, mode_t mode)
{
    if (mkdir (sub (name), 0700) < 0 || chmod (sub (name), mode) < 0)
        BAIL_OUT ("mkdir %s: %s", sub (name), strerror (errno));
}

static void test_modes (void)
{
    struct cairn_error err = {{0}};
    char want[PATH_MAX + 256];
    uid_t me = geteuid ();

    ok (dir_check_trusted (real, me, &err) == 0, "a fresh 0700 dir: trusted");
    ok (dir_check_trusted ("/", me, &err) == 0, "/: trusted");

    mkdir_mode ("open", 0777);
    mkdir_mode ("open/in", 0700);
    is_errno (dir_check_trusted (sub ("open/in"), me, &err), EPERM,
              "under a 0777 dir: EPERM");
    snprintf (want, sizeof (want),
              "%s: mode 0777: writable by others without the sticky bit",
              sub ("open"));
    is_str (err.text, want, "... naming that dir and its mode");
    is_errno (dir_check_parent (sub ("open/sock"), me, &err), EPERM,
              "dir_check_parent of a file in it: EPERM");
    is_str (err.text, want, "... naming the dir");

    mkdir_mode ("group", 0775);
    is_errno (dir_check_trusted (sub ("group"), me, &err), EPERM,
              "group-writable: EPERM");
    like (err.text, "mode 0775: writable by others", "... says so");

    mkdir_mode ("sticky", 01777);
    mkdir_mode ("sticky/in", 0700);
    ok (dir_check_trusted (sub ("sticky/in"), me, &err) == 0,
        "under a sticky 1777 dir (as /tmp): trusted");
    ok (dir_check_parent (sub ("sticky/in/x.sock"), me, &err) == 0,
        "dir_check_parent of a file there: trusted");

    /* a symlink on the way is checked as what it leads to */
    if (symlink (sub ("open"), sub ("link")) < 0)
        BAIL_OUT ("symlink: %s", strerror (errno));
    is_errno (dir_check_trusted (sub ("link/in"), me, &err), EPERM,
              "through a symlink to the 0777 dir: EPERM");
    like (err.text, "/open: mode 0777", "... naming the real dir");

    is_errno (dir_check_trusted (sub ("none"), me, &err), ENOENT,
              "missing: ENOENT");
    snprintf (want, sizeof (want), "%s: No such file or directory",
              sub ("none"));
    is_str (err.text, want, "... naming it");
    FILE *f = fopen (sub ("file"), "w");
    if (!f || fclose (f) != 0)
        BAIL_OUT ("%s: %s", sub ("file"), strerror (errno));
    is_errno (dir_check_trusted (sub ("file"), me, &err), ENOTDIR,
              "a file: ENOTDIR");
    like (err.text, "/file: not a directory", "... says so");
}

static void test_owners (void)
{
    struct cairn_error err = {{0}};
    char want[PATH_MAX + 256];

    if (geteuid () != 0) {
        ok (1, "# SKIP another owner needs root to chown");
        return;
    }
    mkdir_mode ("theirs", 0755);
    mkdir_mode ("theirs/in", 0700);
    if (chown (sub ("theirs"), 4000123, 4000123) < 0)
        BAIL_OUT ("chown: %s", strerror (errno));
    is_errno (dir_check_trusted (sub ("theirs/in"), 0, &err), EPERM,
              "under another uid's dir, for root: EPERM");
    snprintf (want, sizeof (want), "%s: owned by uid 4000123, expected root",
              sub ("theirs"));
    is_str (err.text, want, "... naming the dir, its owner and root");
    is_errno (dir_check_trusted (sub ("theirs/in"), 4000124, &err), EPERM,
              "for uid 4000124: EPERM");
    snprintf (want, sizeof (want),
              "%s: owned by uid 4000123, expected root or uid 4000124",
              sub ("theirs"));
    is_str (err.text, want, "... naming the uid expected too");
    ok (dir_check_trusted (sub ("theirs/in"), 4000123, &err) == 0,
        "for its owner: trusted (root's dirs above, its own)");
}

int main (void)
{
    plan (NO_PLAN);
    if (!mkdtemp (tmpdir) || !realpath (tmpdir, real))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    test_modes ();
    test_owners ();
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", tmpdir);
    (void)!system (cmd);
    return done_testing ();
}
