/* t_journal_async.c - the journal's asynchronous commit: the batch in
 * flight, the next one staged against it, its end told, its failures, a
 * crash on the committer thread, a close with a commit in flight. */
#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "journal/crashpoint.h"
#include "journal/journal.h"
#include "tap.h"
#include "jtmp.h"

#define MiB ((size_t)1 << 20)

static char *tmpdir_create (void)
{
    return tmpdir_create_as ("t_journal_async");
}

static int append (struct journal *j, uint64_t id, uint32_t seq)
{
    char line[128];
    int n = snprintf (line, sizeof (line), "{\"id\":%ju,\"seq\":%u}",
                      (uintmax_t)id, seq);
    return journal_append (j, id, seq, line, n);
}

/* A big line (1 KiB), to fill a small map. */
static int append_big (struct journal *j, uint64_t id, uint32_t seq)
{
    char line[1024];
    memset (line, 'x', sizeof (line));
    return journal_append (j, id, seq, line, sizeof (line));
}

/* done(): the committer writes a byte into a pipe, as cairnd's
 * ev_async_send wakes its loop. */
static int wake[2] = {-1, -1};

static void done_cb (void *arg)
{
    (void)!write (wake[1], "x", 1);
}

/* Was done() called within ms? Takes its byte. */
static bool woken (int ms)
{
    struct pollfd p = {.fd = wake[0], .events = POLLIN};
    char c;
    if (poll (&p, 1, ms) != 1)
        return false;
    return read (wake[0], &c, 1) == 1;
}

static uint32_t nevents (struct journal *j, uint64_t id)
{
    struct journal_jobinfo info;
    return journal_job_info (j, id, &info) == 0 ? info.nevents : 0;
}

static void test_flight (void)
{
    char *dir = tmpdir_create ();
    struct journal *j = xopen (dir, NULL);
    struct cairn_error err = {""};
    struct journal_jobinfo info;

    ok (journal_commit_start (j, done_cb, NULL, &err) == 0 &&
            !journal_committing (j) && !woken (50),
        "nothing pending: nothing in flight, done not called");
    ok (journal_commit_finish (j, &err) == 0, "nothing in flight: finish is 0");

    ok (append (j, 1, 0) == 0 && append (j, 1, 1) == 0 &&
            journal_set_active (j, 2, true, 0) == 0,
        "batch: job 1's two events, job 2 made active");
    ok (journal_commit_start (j, done_cb, NULL, &err) == 0 &&
            journal_committing (j),
        "start: the batch is in flight");
    is_int (journal_pending (j), 0, "start: an empty batch takes its place");

    /* the next batch starts from the one in flight, not from the disk */
    is_errno (append (j, 1, 0), EINVAL,
              "in flight: job 1's seq 0 again is refused");
    ok (append (j, 1, 2) == 0, "in flight: job 1 goes on at seq 2");
    ok (journal_job_batched (j, 2, &info) == 0 && info.active &&
            info.nevents == 0,
        "in flight: job 2 is known, active, no events");
    ok (journal_set_active (j, 2, false, 5.0) == 0,
        "in flight: job 2 can be marked done");

    is_errno (journal_commit_start (j, done_cb, NULL, &err), EBUSY,
              "in flight: a second start fails EBUSY");
    like (err.text, "in flight", "in flight: the message says why");
    is_errno (journal_commit (j, &err), EBUSY,
              "in flight: journal_commit fails EBUSY");

    ok (woken (5000), "done is called once the commit ended");
    ok (journal_commit_finish (j, &err) == 0 && !journal_committing (j),
        "finish: 0, nothing in flight");
    is_int (nevents (j, 1), 2, "finish: job 1's two events are on disk");
    is_int (journal_pending (j), 2,
            "finish: the next batch is untouched (two operations)");

    ok (journal_commit_start (j, done_cb, NULL, &err) == 0,
        "second batch: in flight");
    ok (journal_commit_finish (j, &err) == 0,
        "second batch: finish waits for it");
    ok (woken (5000), "second batch: done was called");
    is_int (nevents (j, 1), 3, "second batch: job 1 has 3 events");
    ok (journal_job_info (j, 2, &info) == 0 && !info.active &&
            info.t_end == 5.0,
        "second batch: job 2 done at t_end 5");

    /* a purge in flight: the next batch sees the job gone */
    ok (journal_purge (j, 2) == 0 &&
            journal_commit_start (j, done_cb, NULL, &err) == 0,
        "purge: in flight");
    is_errno (journal_set_active (j, 2, false, 6.0), ENOENT,
              "purge in flight: job 2 is gone for the next batch");
    ok (journal_commit_finish (j, &err) == 0 && woken (5000), "purge: finish");
    ok (journal_purged (j, 2) == 1, "purge: on disk");
    journal_close (j);
    tmpdir_destroy (dir);
}

/* The committer never changes the map: a batch that does not fit is
 * written by finish, on the caller's thread, which grows it. */
static void test_map_full (void)
{
    char *dir = tmpdir_create ();
    struct journal_opts o = {.map_size = MiB, .max_map_size = 8 * MiB};
    struct journal *j = xopen (dir, &o);
    struct cairn_error err = {""};
    struct journal_stats st;
    bool ok_all = true;

    for (uint32_t s = 0; s < 2000 && ok_all; s++)
        ok_all = append_big (j, 1, s) == 0;
    ok (ok_all, "map full: 2 MiB batched into a 1 MiB map");
    ok (journal_commit_start (j, done_cb, NULL, &err) == 0 && woken (5000) &&
            journal_commit_finish (j, &err) == 0,
        "map full: the batch is written (%s)", err.text);
    if (journal_stats (j, &st) < 0)
        BAIL_OUT ("journal_stats: %s", strerror (errno));
    ok (st.map_size > MiB, "map full: the map grew (%zu)", st.map_size);
    is_int (nevents (j, 1), 2000, "map full: every event on disk");
    journal_close (j);
    tmpdir_destroy (dir);
}

static void test_fault (void)
{
    char *dir = tmpdir_create ();
    struct journal *j = xopen (dir, NULL);
    struct cairn_error err = {""};

    setenv ("CAIRN_FAULT", "journal.commit:1:28", 1);
    crashpoint_init ();
    ok (append (j, 1, 0) == 0 &&
            journal_commit_start (j, done_cb, NULL, &err) == 0,
        "fault: in flight");
    ok (woken (5000), "fault: done is called on a failure too");
    is_errno (journal_commit_finish (j, &err), ENOSPC,
              "fault: finish fails with the injected ENOSPC");
    like (err.text, "injected", "fault: the message says injected");
    ok (!journal_committing (j) && nevents (j, 1) == 0,
        "fault: nothing in flight, nothing on disk");
    unsetenv ("CAIRN_FAULT");
    crashpoint_init ();
    ok (append (j, 1, 0) == 0 && journal_commit (j, &err) == 0 &&
            nevents (j, 1) == 1,
        "fault: cleared, a synchronous commit works again");
    journal_close (j);
    tmpdir_destroy (dir);
}

/* Crash points pass on the committer thread and kill the process: before
 * the commit nothing of the batch survives, after it all of it. */
static void test_crash (void)
{
    const char *points[] = {"journal.commit.before", "journal.commit.after"};

    for (int p = 0; p < 2; p++) {
        char *dir = tmpdir_create ();
        int status;
        pid_t pid = fork ();
        if (pid == 0) {
            struct cairn_error err;
            struct journal *j = journal_open (dir, NULL, &err);
            if (!j || append (j, 1, 0) < 0 || journal_commit (j, &err) < 0)
                _exit (2);
            char spec[64];
            snprintf (spec, sizeof (spec), "%s:1", points[p]);
            setenv ("CAIRN_CRASH_AT", spec, 1);
            crashpoint_init ();
            if (append (j, 1, 1) < 0 ||
                journal_commit_start (j, NULL, NULL, &err) < 0)
                _exit (3);
            (void)journal_commit_finish (j, &err);
            _exit (4); /* not reached: the committer's crash point kills us */
        }
        ok (waitpid (pid, &status, 0) == pid && WIFSIGNALED (status) &&
                WTERMSIG (status) == SIGKILL,
            "crash at %s on the committer thread: killed", points[p]);
        struct journal *j = xopen (dir, NULL);
        is_int (nevents (j, 1), p == 0 ? 1 : 2, "crash at %s: %d events",
                points[p], p == 0 ? 1 : 2);
        journal_close (j);
        tmpdir_destroy (dir);
    }
}

/* journal_close with a commit in flight waits for it. */
static void test_close (void)
{
    char *dir = tmpdir_create ();
    struct journal *j = xopen (dir, NULL);
    struct cairn_error err = {""};

    ok (append (j, 7, 0) == 0 &&
            journal_commit_start (j, done_cb, NULL, &err) == 0,
        "close: a commit in flight");
    journal_close (j);
    j = xopen (dir, NULL);
    is_int (nevents (j, 7), 1, "close: it was written before the close");
    journal_close (j);
    /* drain what the closed handle's committer may have said */
    while (woken (0))
        ;
    tmpdir_destroy (dir);
}

int main (void)
{
    plan (NO_PLAN);
    if (pipe (wake) < 0)
        BAIL_OUT ("pipe: %s", strerror (errno));
    test_flight ();
    test_map_full ();
    test_fault ();
    test_crash ();
    test_close ();
    return done_testing ();
}
