/* t_janitor.c - the janitor removes a finished command's files in the exit
 * dir, on its own thread, and nothing pushed is left behind at its end. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "journal/crashpoint.h"
#include "supervise/janitor.h"

/* a tmpfs, as the exit dir is by default, else /tmp */
static char tmp[] = "/dev/shm/t_janitor.XXXXXX";
static char tmp2[] = "/tmp/t_janitor.XXXXXX";
static char *dir = tmp;
static int dirfd_ = -1;

static void execid_of (int i, char *id)
{
    snprintf (id, 37, "11111111-2222-4333-8444-%012d", i);
}

/* The files a command leaves: marker (with its record), output, error. */
static void make_files (int i)
{
    static const char *const sfx[] = {".started", ".out", ".err"};
    char id[37], name[64];
    execid_of (i, id);
    for (size_t k = 0; k < 3; k++) {
        snprintf (name, sizeof (name), "%s%s", id, sfx[k]);
        int fd = openat (dirfd_, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
            BAIL_OUT ("create %s: %s", name, strerror (errno));
        close (fd);
    }
}

/* How many of command i's files are still there. */
static int files_of (int i)
{
    static const char *const sfx[] = {".started", ".out", ".err"};
    char id[37], name[64];
    int n = 0;
    execid_of (i, id);
    for (size_t k = 0; k < 3; k++) {
        snprintf (name, sizeof (name), "%s%s", id, sfx[k]);
        n += faccessat (dirfd_, name, F_OK, 0) == 0;
    }
    return n;
}

static int files_left (int from, int to)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += files_of (i);
    return n;
}

int main (void)
{
    struct cairn_error err = {{0}};

    if (!mkdtemp (tmp))
        dir = mkdtemp (tmp2);
    if (!dir || (dirfd_ = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC)) < 0)
        BAIL_OUT ("setup: %s", strerror (errno));

    struct janitor *j = janitor_create (dirfd_, &err);
    ok (j != NULL, "janitor_create: %s", j ? "ok" : err.text);
    if (!j)
        BAIL_OUT ("no janitor");

    for (int i = 0; i < 100; i++)
        make_files (i);
    for (int i = 0; i < 50; i++)
        janitor_push (j, 0 == i % 7 ? "not-an-execid" : "");
    for (int i = 0; i < 100; i++) {
        char id[37];
        execid_of (i, id);
        janitor_push (j, id);
    }
    ok (files_left (0, 100) == 300, "nothing is removed before the kick");

    janitor_kick (j);
    /* the janitor's thread removes them, not janitor_kick's caller */
    struct timespec ts = {0, 2000000};
    int left = -1;
    for (int t = 0; t < 2500 && (left = files_left (0, 100)) > 0; t++)
        nanosleep (&ts, NULL);
    is_int (left, 0, "after a kick the janitor's thread removes them all");

    /* pushed but never kicked, and kicked just before the end: destroy
     * removes them before it returns (cairnd's shutdown) */
    for (int i = 100; i < 1500; i++)
        make_files (i);
    for (int i = 100; i < 1000; i++) {
        char id[37];
        execid_of (i, id);
        janitor_push (j, id);
    }
    janitor_kick (j);
    for (int i = 1000; i < 1500; i++) {
        char id[37];
        execid_of (i, id);
        janitor_push (j, id);
    }
    errno = EDOM;
    janitor_destroy (j);
    is_int (errno, EDOM, "janitor_destroy preserves errno");
    is_int (files_left (100, 1500), 0,
            "janitor_destroy removes what was kicked and what was only pushed");
    janitor_destroy (NULL);
    ok (1, "janitor_destroy (NULL) is a no-op");

    /* a file that is no command's stays */
    int fd = openat (dirfd_, "boot", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    close (fd);
    j = janitor_create (dirfd_, &err);
    janitor_push (j, "boot");
    janitor_kick (j);
    janitor_destroy (j);
    ok (faccessat (dirfd_, "boot", F_OK, 0) == 0,
        "a name that is not an execid is never removed");
    unlinkat (dirfd_, "boot", 0);

    /* no thread to be had (a task limit): removed by the kick itself */
    setenv ("CAIRN_FAULT", "janitor.thread:1:11", 1);
    crashpoint_init ();
    j = janitor_create (dirfd_, &err);
    ok (j != NULL, "a janitor without a thread is still made");
    make_files (5000);
    char id[37];
    execid_of (5000, id);
    janitor_push (j, id);
    is_int (files_of (5000), 3, "... nothing removed at the push");
    janitor_kick (j);
    is_int (files_of (5000), 0,
            "... the kick removes them on its caller's thread");
    janitor_destroy (j);
    unsetenv ("CAIRN_FAULT");
    crashpoint_init ();

    close (dirfd_);
    rmdir (dir);
    return done_testing ();
}
