/* t_exitdir.c - exitdir_discard(): a thrown-away state dir's run dir goes
 * with it, and nobody else's does. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "supervise/exitdir.h"

static char tmp[] = "/tmp/t_exitdir.XXXXXX";
static const char *bootid = "00000000-0000-4000-8000-000000000001";

/* Make <tmp>/<name> a state dir with its exit dir in <tmp>/run/<instance>;
 * put a process's file in it. Returns the instance dir's path (static). */
static const char *
make_state (const char *name, const char *instance, char *statedir)
{
    static char inst[PATH_MAX];
    char run[PATH_MAX], file[PATH_MAX + 64];
    struct cairn_error err = {{0}};
    struct exitdir xd = {.fd = -1};

    snprintf (statedir, PATH_MAX, "%s/%s", tmp, name);
    snprintf (run, sizeof (run), "%s/run", tmp);
    if ((mkdir (statedir, 0700) < 0 && errno != EEXIST) ||
        (mkdir (run, 0700) < 0 && errno != EEXIST))
        BAIL_OUT ("mkdir: %s", strerror (errno));
    if (exitdir_open (statedir, run, instance, bootid, getuid (), &xd, &err) <
        0)
        BAIL_OUT ("exitdir_open: %s", err.text);
    snprintf (inst, sizeof (inst), "%s", xd.path);
    exitdir_close (&xd);
    snprintf (file, sizeof (file), "%s/%s.started", inst,
              "11111111-2222-4333-8444-555555555555");
    FILE *f = fopen (file, "w");
    if (!f)
        BAIL_OUT ("%s: %s", file, strerror (errno));
    fclose (f);
    return inst;
}

int main (void)
{
    char a[PATH_MAX], b[PATH_MAX], plain[PATH_MAX], link[PATH_MAX + 8];
    char inst_a[PATH_MAX], inst_b[PATH_MAX];
    struct stat st;

    plan (NO_PLAN);
    if (!mkdtemp (tmp))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));

    snprintf (inst_a, sizeof (inst_a), "%s",
              make_state ("a", "aaaaaaaa-0000-4000-8000-000000000000", a));
    snprintf (inst_b, sizeof (inst_b), "%s",
              make_state ("b", "bbbbbbbb-0000-4000-8000-000000000000", b));

    /* exitdir_settle: a supervisor's start holds the dir's shared lock */
    {
        struct exitdir xd = {.fd = -1};
        struct cairn_error err = {{0}};
        char run[PATH_MAX];
        snprintf (run, sizeof (run), "%s/run", tmp);
        if (exitdir_open (a, run, "aaaaaaaa-0000-4000-8000-000000000000",
                          bootid, getuid (), &xd, &err) < 0)
            BAIL_OUT ("exitdir_open: %s", err.text);
        int start = open (xd.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (start < 0 || flock (start, LOCK_SH) < 0)
            BAIL_OUT ("flock: %s", strerror (errno));
        is_errno (exitdir_settle (&xd, false, &err), EWOULDBLOCK,
                  "settle during a start, not waiting: EWOULDBLOCK");
        close (start); /* the start is done */
        is_int (exitdir_settle (&xd, false, &err), 0,
                "settle with no start under way: 0");
        is_int (exitdir_settle (&xd, true, &err), 0, "settle, waiting: 0");
        exitdir_close (&xd);
    }

    /* a's link made to lead to b's run dir: b's is not a's to remove */
    snprintf (link, sizeof (link), "%s/exits", a);
    if (unlink (link) < 0 || symlink (inst_b, link) < 0)
        BAIL_OUT ("relink: %s", strerror (errno));
    errno = EDOM;
    exitdir_discard (a);
    is_int (errno, EDOM, "a link to another's run dir: errno kept");
    ok (stat (inst_b, &st) == 0, "... and the other's run dir is still there");
    if (unlink (link) < 0 || symlink (inst_a, link) < 0)
        BAIL_OUT ("relink: %s", strerror (errno));

    errno = EDOM;
    exitdir_discard (a);
    is_int (errno, EDOM, "its own run dir: errno kept");
    is_errno (stat (inst_a, &st), ENOENT,
              "... and the run dir is gone, files and all");
    ok (lstat (link, &st) == 0 && S_ISLNK (st.st_mode),
        "... the state dir is left as it was");
    errno = EDOM;
    exitdir_discard (a);
    is_int (errno, EDOM, "again, the link dangling: errno kept");

    snprintf (plain, sizeof (plain), "%s/plain", tmp);
    if (mkdir (plain, 0700) < 0)
        BAIL_OUT ("mkdir: %s", strerror (errno));
    snprintf (link, sizeof (link), "%s/exits", plain);
    if (mkdir (link, 0700) < 0)
        BAIL_OUT ("mkdir: %s", strerror (errno));
    errno = EDOM;
    exitdir_discard (plain);
    is_int (errno, EDOM, "exits a plain directory: errno kept");
    ok (stat (link, &st) == 0, "... and it is left alone");
    errno = EDOM;
    exitdir_discard ("/nonexistent-t_exitdir");
    is_int (errno, EDOM, "no state dir: errno kept");

    errno = EDOM;
    exitdir_discard (b);
    is_int (errno, EDOM, "b's own: errno kept");
    is_errno (stat (inst_b, &st), ENOENT, "... gone");

    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", tmp);
    (void)!system (cmd);
    return done_testing ();
}
