/* t_journal.c - the LMDB journal: batching, reads, crashes, full maps. */
#include <errno.h>
#include <ftw.h>
#include <lmdb.h>
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
    return tmpdir_create_as ("t_journal");
}

/* The event line for (id, seq) of batch b. */
static int make_line (char *buf, size_t size, uint64_t id, uint32_t seq, int b)
{
    return snprintf (buf, size,
                     "{\"timestamp\":1.5,\"name\":\"ev\",\"context\":"
                     "{\"id\":%ju,\"seq\":%u,\"batch\":%d}}",
                     (uintmax_t)id, seq, b);
}

/* Lines of big batches: make_line() padded with 'x' to BIG_LINE bytes. */
#define BIG_LINE 1024

static void make_big_line (char *buf, uint64_t id, uint32_t seq)
{
    int n = make_line (buf, BIG_LINE, id, seq, 0);
    memset (buf + n, 'x', BIG_LINE - n);
}

static int append (struct journal *j, uint64_t id, uint32_t seq, int b)
{
    char line[160];
    int n = make_line (line, sizeof (line), id, seq, b);
    return journal_append (j, id, seq, line, n);
}

/* Checks the events walked: seqs consecutive from `next`, each line as
 * make_line() (batch = seq / per_batch when per_batch > 0, else 0), or
 * make_big_line() with big. */
struct walk {
    uint32_t next;
    int count;
    int bad;
    int per_batch;
    int stop_after; /* return 1 after this many; 0 = never */
    int fail_errno; /* return -1 with this errno at the first event */
    bool big;       /* lines are make_big_line()'s */
};

static int
walk_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct walk *w = arg;
    char want[BIG_LINE];
    int b = w->per_batch > 0 ? (int)(seq / w->per_batch) : 0;
    int n = BIG_LINE;

    if (w->big)
        make_big_line (want, id, seq);
    else
        n = make_line (want, sizeof (want), id, seq, b);

    if (w->fail_errno) {
        errno = w->fail_errno;
        return -1;
    }
    if (seq != w->next || len != (size_t)n || memcmp (line, want, len) != 0) {
        if (w->bad++ == 0)
            diag ("job %ju: want seq %u \"%.*s\", got seq %u \"%.*s\"",
                  (uintmax_t)id, w->next, n, want, seq, (int)len, line);
    }
    w->next = seq + 1;
    w->count++;
    return w->stop_after && w->count >= w->stop_after ? 1 : 0;
}

static int
count_events (struct journal *j, uint64_t id, int per_batch, int *bad)
{
    struct walk w = {.per_batch = per_batch, .big = per_batch < 0};
    struct cairn_error err;
    if (journal_read_job (j, id, 0, walk_cb, &w, &err) < 0)
        return -1;
    *bad = w.bad;
    return w.count;
}

/* Collects job ids; with read_events, reads each job's events from inside
 * the callback (a nested read). */
struct ids {
    uint64_t id[16];
    int n;
    int events;
    struct journal *j;
};

static int ids_cb (const struct journal_jobinfo *info, void *arg)
{
    struct ids *s = arg;
    if (s->n < 16)
        s->id[s->n] = info->id;
    s->n++;
    if (s->j) {
        struct walk w = {0};
        if (journal_read_job (s->j, info->id, 0, walk_cb, &w, NULL) < 0)
            return -1;
        s->events += w.count;
    }
    return 0;
}

static void test_open (void)
{
    char *dir = tmpdir_create ();
    struct cairn_error err = {""};
    struct journal_opts ro = {.readonly = true};
    char missing[256], path[300], inst[40];
    struct journal *j;
    struct stat sb;

    snprintf (missing, sizeof (missing), "%s/nope", dir);
    is_errno_ptr (journal_open (missing, NULL, &err), ENOENT,
                  "open: missing statedir fails ENOENT");
    like (err.text, missing, "open: message names the statedir");

    is_errno_ptr (journal_open (dir, &ro, &err), ENOENT,
                  "open: readonly without a journal fails ENOENT");
    snprintf (path, sizeof (path), "no journal at %s/journal", dir);
    like (err.text, path, "open: message says there is no journal there");

    struct journal_opts bad = {.map_size = 4 * MiB, .max_map_size = 2 * MiB};
    is_errno_ptr (journal_open (dir, &bad, &err), EINVAL,
                  "open: map_size above max_map_size fails EINVAL");
    like (err.text, "above its maximum", "open: message says why");

    j = xopen (dir, NULL);
    snprintf (path, sizeof (path), "%s/journal", dir);
    ok (stat (path, &sb) == 0 && S_ISDIR (sb.st_mode) &&
            (sb.st_mode & 07777) == 0700,
        "open: created %s mode 0700", path);
    is_int (strlen (journal_instance (j)), 36, "open: instance is a UUID");
    snprintf (inst, sizeof (inst), "%s", journal_instance (j));

    is_errno_ptr (journal_open (dir, NULL, &err), EBUSY,
                  "open: a second open in one process fails EBUSY");
    like (err.text, "already open", "open: message says already open");
    journal_close (j);

    j = xopen (dir, NULL);
    is_str (journal_instance (j), inst, "open: instance is stable on reopen");
    journal_close (j);

    j = xopen (dir, &ro);
    is_str (journal_instance (j), inst, "open: readonly sees the instance");
    is_errno (append (j, 1, 0, 0), EROFS, "readonly: append fails EROFS");
    is_errno (journal_set_active (j, 1, true, 0), EROFS,
              "readonly: set_active fails EROFS");
    is_errno (journal_purge (j, 1), EROFS, "readonly: purge fails EROFS");
    is_int (journal_pending (j), 0, "readonly: nothing batched");
    ok (journal_commit (j, &err) == 0, "readonly: empty commit is a no-op");
    journal_close (j);

    errno = 42;
    journal_close (NULL);
    is_int (errno, 42, "journal_close (NULL) preserves errno");

    snprintf (path, sizeof (path), "%s/journal/data.mdb", dir);
    is_errno_ptr (journal_open (path, NULL, &err), ENOTDIR,
                  "open: statedir that is a file fails ENOTDIR");
    like (err.text, "not a directory", "open: message says not a directory");

    snprintf (path, sizeof (path), "%s/journal", dir);
    if (geteuid () == 0) {
        ok (1, "open: unreadable journal fails EACCES # SKIP running as root");
        ok (1, "open: message names the path # SKIP running as root");
    } else {
        chmod (path, 0);
        is_errno_ptr (journal_open (dir, NULL, &err), EACCES,
                      "open: unreadable journal fails EACCES");
        like (err.text, path, "open: message names the path");
        chmod (path, 0700);
    }
    tmpdir_destroy (dir);
}

static void test_readwrite (void)
{
    char *dir = tmpdir_create ();
    struct cairn_error err = {""};
    struct journal_jobinfo info;
    struct journal_stats st;
    struct journal *j = xopen (dir, NULL);
    uint64_t jobs[] = {3, 1, 2};
    int bad = 0, fails = 0;

    for (uint32_t seq = 0; seq < 10; seq++)
        for (int i = 0; i < 3; i++)
            fails += append (j, jobs[i], seq, 0) < 0;
    is_int (fails, 0, "append: 30 events to 3 interleaved jobs");
    is_int (journal_pending (j), 30, "pending counts 30 operations");
    is_errno (count_events (j, 1, 0, &bad), ENOENT,
              "reads do not see the batch");
    ok (journal_commit (j, &err) == 0, "commit");
    is_int (journal_pending (j), 0, "commit empties the batch");
    for (int i = 0; i < 3; i++) {
        is_int (count_events (j, jobs[i], 0, &bad), 10,
                "job %ju: 10 events read back", (uintmax_t)jobs[i]);
        is_int (bad, 0, "job %ju: in order, lines intact", (uintmax_t)jobs[i]);
    }

    is_errno (append (j, 1, 11, 0), EINVAL, "append: a seq gap fails EINVAL");
    is_errno (append (j, 1, 9, 0), EINVAL, "append: a stored seq fails EINVAL");
    is_errno (append (j, 4, 1, 0), EINVAL, "append: new job must start at 0");
    is_errno (journal_append (j, 1, 10, NULL, 5), EINVAL,
              "append: NULL line fails EINVAL");
    ok (append (j, 1, 10, 0) == 0 && append (j, 4, 0, 0) == 0 &&
            append (j, 1, 11, 0) == 0,
        "append: next seqs, batched on top of the batch");
    is_int (journal_pending (j), 3, "failed appends were not batched");
    ok (journal_commit (j, &err) == 0, "commit");

    struct walk w = {.next = 5};
    ok (journal_read_job (j, 1, 5, walk_cb, &w, &err) == 0 && w.count == 7 &&
            w.bad == 0,
        "read from_seq 5 gives seqs 5..11");
    w = (struct walk){.next = 100};
    ok (journal_read_job (j, 1, 100, walk_cb, &w, &err) == 0 && w.count == 0,
        "read from_seq past the end gives nothing");
    w = (struct walk){.stop_after = 3};
    ok (journal_read_job (j, 1, 0, walk_cb, &w, &err) == 0 && w.count == 3,
        "callback returning 1 stops the walk");
    w = (struct walk){.fail_errno = ECANCELED};
    is_errno (journal_read_job (j, 1, 0, walk_cb, &w, &err), ECANCELED,
              "callback error fails with its errno");
    like (err.text, "reading job 1, event 0", "message names job and event");
    is_errno (journal_read_job (j, 99, 0, walk_cb, &w, &err), ENOENT,
              "read of an unknown job fails ENOENT");
    like (err.text, "job 99 is not in the journal", "message names the job");

    ok (journal_job_info (j, 1, &info) == 0 && info.id == 1 && info.active &&
            info.nevents == 12 && info.t_end == 0,
        "info: job 1 is active with 12 events (active from its first event)");
    is_errno (journal_job_info (j, 99, &info), ENOENT,
              "info: unknown job fails ENOENT");

    is_errno (journal_set_active (j, 99, false, 1), ENOENT,
              "set_active false of an unknown job fails ENOENT");
    ok (journal_set_active (j, 2, false, 1234.5) == 0 &&
            journal_set_active (j, 7, true, 0) == 0 &&
            journal_commit (j, &err) == 0,
        "job 2 done, job 7 created active without events");
    ok (journal_job_info (j, 2, &info) == 0 && !info.active &&
            info.nevents == 10 && info.t_end == 1234.5,
        "info: job 2 done, t_end stored, nevents kept");
    is_int (count_events (j, 2, 0, &bad), 10, "done job keeps its events");
    ok (journal_job_info (j, 7, &info) == 0 && info.active && info.nevents == 0,
        "info: job 7 active, 0 events");

    /* the batch's view: committed plus what is batched */
    ok (journal_job_batched (j, 2, &info) == 0 && !info.active &&
            info.nevents == 10,
        "batched: job 2 done, next seq 10");
    ok (append (j, 2, 10, 0) == 0 && journal_job_batched (j, 2, &info) == 0 &&
            info.nevents == 11 && !info.active,
        "batched: an event appended to a done job: next seq 11, still done");
    is_errno (journal_job_batched (j, 99, &info), ENOENT,
              "batched: unknown job fails ENOENT");
    ok (journal_commit (j, &err) == 0 && journal_job_info (j, 2, &info) == 0 &&
            !info.active && info.nevents == 11,
        "batched: committed, job 2 is done with 11 events");

    struct ids all = {.n = 0}, act = {.j = j};
    ok (journal_foreach_job (j, false, ids_cb, &all, &err) == 0 && all.n == 5 &&
            all.id[0] == 1 && all.id[1] == 2 && all.id[2] == 3 &&
            all.id[3] == 4 && all.id[4] == 7,
        "foreach all: jobs 1 2 3 4 7 in id order");
    ok (journal_foreach_job (j, true, ids_cb, &act, &err) == 0 && act.n == 4 &&
            act.id[0] == 1 && act.id[1] == 3 && act.id[2] == 4 &&
            act.id[3] == 7,
        "foreach active: jobs 1 3 4 7");
    is_int (act.events, 12 + 10 + 1, "nested reads inside foreach work");
    struct ids rev = {.n = 0};
    ok (journal_foreach_job_newest (j, ids_cb, &rev, &err) == 0 &&
            rev.n == 5 && rev.id[0] == 7 && rev.id[1] == 4 &&
            rev.id[2] == 3 && rev.id[3] == 2 && rev.id[4] == 1,
        "foreach newest: jobs 7 4 3 2 1");
    is_errno (journal_foreach_job_newest (NULL, ids_cb, &rev, &err), EINVAL,
              "foreach newest of no journal: EINVAL");
    like (err.text, "foreach: invalid argument", "... and says so");

    is_errno (journal_purge (j, 1), EBUSY, "purge of an active job: EBUSY");
    is_errno (journal_purge (j, 99), ENOENT, "purge of an unknown job: ENOENT");
    ok (journal_purge (j, 2) == 0 && journal_commit (j, &err) == 0,
        "purge of a done job");
    is_errno (count_events (j, 2, 0, &bad), ENOENT, "purged job has no events");
    is_errno (journal_job_info (j, 2, &info), ENOENT, "purged job: no record");
    is_int (journal_purged (j, 2), 1, "purged job: its id is remembered");
    is_int (journal_purged (j, 1), 0, "an active job was not purged");
    is_int (journal_purged (j, 99), 0, "an unknown job was not purged");
    ok (count_events (j, 1, 0, &bad) == 12 &&
            count_events (j, 3, 0, &bad) == 10 && bad == 0,
        "neighbour jobs 1 and 3 intact");
    ok (journal_stats (j, &st) == 0 && st.njobs == 4 && st.nactive == 4 &&
            st.nevents == 12 + 10 + 1,
        "stats: 4 jobs, 4 active, 23 events");

    /* Order within one batch matters: done, purged, then reborn. */
    ok (journal_set_active (j, 3, false, 2) == 0 && journal_purge (j, 3) == 0 &&
            append (j, 3, 0, 0) == 0 && journal_commit (j, &err) == 0,
        "one batch: set done, purge, append seq 0 again");
    ok (journal_job_info (j, 3, &info) == 0 && info.active &&
            info.nevents == 1 && count_events (j, 3, 0, &bad) == 1,
        "job 3 reborn active with 1 event");
    journal_close (j);

    j = xopen (dir, NULL);
    ok (journal_stats (j, &st) == 0 && st.njobs == 4 && st.nevents == 14,
        "reopen: 4 jobs, 14 events");
    ok (count_events (j, 1, 0, &bad) == 12 && bad == 0,
        "reopen: job 1 reads back intact");
    is_int (journal_purged (j, 2), 1, "reopen: purged id 2 still remembered");

    /* A forked child may not use its parent's journal (LMDB's caveat):
     * its commit is refused, its reads too, and nothing is written. */
    ok (append (j, 8, 0, 0) == 0, "batch job 8 seq 0");
    pid_t child = fork ();
    if (child == 0) {
        struct cairn_error cerr = {{0}};
        struct journal_jobinfo cinfo;
        int rc = journal_commit (j, &cerr) == -1 && errno == EINVAL &&
                         strstr (cerr.text, "was opened by another process") &&
                         journal_job_info (j, 1, &cinfo) == -1 &&
                         errno == EINVAL
                     ? 0
                     : 1;
        _exit (rc);
    }
    int cstatus;
    ok (waitpid (child, &cstatus, 0) == child && WIFEXITED (cstatus) &&
            WEXITSTATUS (cstatus) == 0,
        "a forked child's commit and read of its parent's journal: EINVAL, "
        "\"was opened by another process\"");
    ok (journal_commit (j, &err) == 0 && journal_job_info (j, 8, &info) == 0 &&
            info.nevents == 1,
        "the parent commits the batch itself: job 8 has its one event");

    /* A seq stored behind the batch's back (another process) must be
     * refused at commit, never overwritten. */
    ok (append (j, 9, 0, 0) == 0 && append (j, 9, 1, 0) == 0,
        "batch job 9 seqs 0-1");
    pid_t pid = fork ();
    if (pid == 0) {
        struct journal *c = journal_open (dir, NULL, NULL);
        _exit (c && append (c, 9, 0, 1) == 0 && journal_commit (c, NULL) == 0
                   ? 0
                   : 1);
    }
    int status;
    ok (waitpid (pid, &status, 0) == pid && WIFEXITED (status) &&
            WEXITSTATUS (status) == 0,
        "another process stored job 9 seq 0");
    is_errno (journal_commit (j, &err), EEXIST,
              "commit of an already stored seq fails EEXIST");
    like (err.text, "job 9 event 0", "message names job and event");
    is_int (journal_pending (j), 2, "the batch is kept");
    ok (journal_job_info (j, 9, &info) == 0 && info.nevents == 1,
        "nothing of the failed batch is visible");
    journal_discard (j);
    is_int (journal_pending (j), 0, "discard empties the batch");
    journal_close (j);
    tmpdir_destroy (dir);
}

#define KILL_BATCH 100 /* events per batch: 50 to job 1, 50 to job 2 */

/* Child: commit batches forever (or until a crash point kills it),
 * reporting each committed batch number on fd. */
static void writer_child (const char *dir, uint64_t base, int fd)
{
    struct journal *j = journal_open (dir, NULL, NULL);
    if (!j)
        _exit (2);
    for (int b = 0; b < 1000000; b++) {
        for (int i = 0; i < KILL_BATCH / 2; i++) {
            uint32_t seq = b * (KILL_BATCH / 2) + i;
            if (append (j, base + 1, seq, b) < 0 ||
                append (j, base + 2, seq, b) < 0)
                _exit (3);
        }
        if (journal_commit (j, NULL) < 0)
            _exit (4);
        if (fd >= 0 && write (fd, &b, sizeof (b)) != sizeof (b))
            _exit (5);
    }
    _exit (0);
}

/* After the writer died: both jobs hold the same whole batches, events in
 * order, each from its batch. Returns the number of batches, or -1. */
static int check_batches (const char *dir, uint64_t base, const char *what)
{
    struct journal *j = xopen (dir, NULL);
    struct journal_jobinfo info;
    struct cairn_error err;
    int bad1 = 0, bad2 = 0;
    int n1 = count_events (j, base + 1, KILL_BATCH / 2, &bad1);
    int n2 = count_events (j, base + 2, KILL_BATCH / 2, &bad2);
    int rc = -1;

    if (n1 < 0)
        n1 = n2 = 0; /* killed before the first commit */
    if (n1 != n2 || n1 % (KILL_BATCH / 2) || bad1 || bad2)
        diag ("%s: job events %d and %d, %d and %d bad", what, n1, n2, bad1,
              bad2);
    else if (n1 > 0 && (journal_job_info (j, base + 1, &info) < 0 ||
                        info.nevents != (uint32_t)n1))
        diag ("%s: job record out of sync with events", what);
    else if (append (j, base + 1, n1, 0) < 0 || journal_commit (j, &err) < 0)
        diag ("%s: cannot commit after the crash: %s", what, err.text);
    else
        rc = n1 / (KILL_BATCH / 2);
    journal_close (j);
    return rc;
}

static void test_kill (void)
{
    char *dir = tmpdir_create ();
    const useconds_t delays[] = {0, 500, 3000};

    for (int r = 0; r < 3; r++) {
        int fds[2], b = -1, status;
        uint64_t base = 10 * (r + 1);
        if (pipe (fds) < 0)
            BAIL_OUT ("pipe: %s", strerror (errno));
        pid_t pid = fork ();
        if (pid == 0) {
            close (fds[0]);
            writer_child (dir, base, fds[1]);
        }
        close (fds[1]);
        while (b < 3 && read (fds[0], &b, sizeof (b)) == sizeof (b))
            ;
        usleep (delays[r]);
        kill (pid, SIGKILL);
        close (fds[0]);
        ok (waitpid (pid, &status, 0) == pid && WIFSIGNALED (status) &&
                WTERMSIG (status) == SIGKILL && b >= 3,
            "kill round %d: writer killed mid-loop after batch %d", r, b);
        int n = check_batches (dir, base, "kill");
        ok (n >= b + 1,
            "kill round %d: %d whole batches, none partial "
            "(at least %d reported), appending works after",
            r, n, b + 1);
    }
    tmpdir_destroy (dir);
}

/* Crash at each commit crash point, 1st to 3rd pass: exactly the batches
 * committed before the crash survive. */
static void test_crashpoints (void)
{
    const char *points[] = {"journal.commit.before", "journal.commit.after"};
    int runs = 0;

    for (int p = 0; p < 2; p++) {
        for (int k = 1; k <= 3; k++) {
            char *dir = tmpdir_create ();
            char spec[64];
            int status;
            snprintf (spec, sizeof (spec), "%s:%d", points[p], k);
            pid_t pid = fork ();
            if (pid == 0) {
                setenv ("CAIRN_CRASH_AT", spec, 1);
                crashpoint_init ();
                writer_child (dir, 0, -1);
            }
            ok (waitpid (pid, &status, 0) == pid && WIFSIGNALED (status) &&
                    WTERMSIG (status) == SIGKILL,
                "crash at %s: writer killed", spec);
            int want = p == 0 ? k - 1 : k;
            is_int (check_batches (dir, 0, spec), want,
                    "crash at %s: exactly %d batches survive", spec, want);
            tmpdir_destroy (dir);
            runs++;
        }
    }
    diag ("%d crash points exercised", runs);
}

static int big_batch (struct journal *j, uint64_t id, int n)
{
    char line[BIG_LINE];
    for (int i = 0; i < n; i++) {
        make_big_line (line, id, i);
        if (journal_append (j, id, i, line, sizeof (line)) < 0)
            return -1;
    }
    return 0;
}

/* Growing the map needs no read txn active: a read callback that commits
 * into a full map gets EBUSY, and the same commit outside succeeds. */
struct grow {
    struct journal *j;
    int errnum;
    char text[256];
};

static int grow_cb (const struct journal_jobinfo *info, void *arg)
{
    struct grow *g = arg;
    struct cairn_error err = {""};

    for (int i = 0; i < 40; i++) {
        if (big_batch (g->j, 100 + i, 100) < 0)
            return -1;
        if (journal_commit (g->j, &err) < 0) {
            g->errnum = errno;
            snprintf (g->text, sizeof (g->text), "%s", err.text);
            return 1;
        }
    }
    return 0;
}

static void test_grow_in_read (void)
{
    char *dir = tmpdir_create ();
    struct journal_opts o = {.map_size = MiB, .max_map_size = 8 * MiB};
    struct cairn_error err = {""};
    struct journal_stats st;
    struct journal *j = xopen (dir, &o);
    struct grow g = {.j = j};

    ok (append (j, 1, 0, 0) == 0 && journal_commit (j, &err) == 0,
        "grow: job 1 committed");
    ok (journal_foreach_job (j, false, grow_cb, &g, &err) == 0,
        "grow: foreach with a committing callback");
    is_int (g.errnum, EBUSY, "grow: commit needing growth in a read: EBUSY");
    like (g.text, "while a read is in progress", "grow: message says why");
    ok (journal_pending (j) == 100 && journal_commit (j, &err) == 0,
        "grow: the kept batch commits once the read is over");
    int rc = journal_stats (j, &st);
    ok (rc == 0 && st.map_size == 2 * MiB, "grow: map grew to 2 MiB (%zu)",
        st.map_size);
    journal_close (j);
    tmpdir_destroy (dir);
}

static void test_map_full (void)
{
    char *dir = tmpdir_create ();
    struct journal_opts o = {.map_size = MiB, .max_map_size = 2 * MiB};
    struct cairn_error err = {""};
    struct journal_stats st;
    struct journal *j = xopen (dir, &o);
    int committed = 0, grew = 0, rc = 0, bad;
    const int n = 100; /* ~100 KiB per batch */

    ok (journal_stats (j, &st) == 0 && st.map_size == MiB &&
            st.max_map_size == 2 * MiB,
        "map full: map starts at 1 MiB, max 2 MiB");
    for (int i = 0; i < 100 && rc == 0; i++) {
        size_t before = st.map_size;
        if (big_batch (j, i + 1, n) < 0)
            BAIL_OUT ("append: %s", strerror (errno));
        if ((rc = journal_commit (j, &err)) == 0) {
            committed++;
            journal_stats (j, &st);
            grew += before == MiB && st.map_size == 2 * MiB;
        }
    }
    is_errno (rc, ENOSPC, "map full: commit fails ENOSPC at the cap");
    like (err.text, "maximum size of 2097152", "map full: message says why");
    ok (grew == 1, "map full: a commit grew the map from 1 to 2 MiB first");
    rc = journal_stats (j, &st);
    ok (rc == 0 && st.map_size == 2 * MiB, "map full: map is 2 MiB (%zu)",
        st.map_size);
    is_int (journal_pending (j), n, "map full: the failed batch is kept");
    diag ("%d batches committed before the map filled", committed);
    ok (count_events (j, committed, -1, &bad) == n && bad == 0,
        "map full: last committed batch intact");
    journal_discard (j);
    ok (append (j, 1000, 0, 0) == 0 && journal_commit (j, &err) == 0,
        "map full: after discard a small commit works");
    journal_close (j);

    j = xopen (dir, &o);
    int whole = 0;
    for (int i = 1; i <= committed; i++)
        whole += count_events (j, i, -1, &bad) == n && bad == 0;
    is_int (whole, committed, "reopen: every committed batch intact");
    ok (count_events (j, 1000, 0, &bad) == 1 && bad == 0,
        "reopen: the small commit is there");
    ok (journal_stats (j, &st) == 0 && st.map_size == 2 * MiB,
        "reopen: the map keeps its grown size");
    journal_close (j);
    tmpdir_destroy (dir);
}

/* Put meta key=val with raw LMDB into the journal's env. */
static int
raw_put (const char *dir, const char *db, const char *key, const char *val)
{
    char path[300];
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {strlen (key), (void *)key}, v = {strlen (val), (void *)val};
    int rc;

    snprintf (path, sizeof (path), "%s/journal", dir);
    mkdir (path, 0700);
    if ((rc = mdb_env_create (&env)))
        return rc;
    if (!(rc = mdb_env_set_maxdbs (env, 8)) &&
        !(rc = mdb_env_open (env, path, 0, 0600)) &&
        !(rc = mdb_txn_begin (env, NULL, 0, &txn))) {
        if (!(rc = mdb_dbi_open (txn, db, db ? MDB_CREATE : 0, &dbi)) &&
            !(rc = mdb_put (txn, dbi, &k, &v, 0)))
            rc = mdb_txn_commit (txn);
        else
            mdb_txn_abort (txn);
    }
    mdb_env_close (env);
    return rc;
}

static void test_format (void)
{
    char *dir = tmpdir_create ();
    struct cairn_error err = {""};
    struct journal_opts ro = {.readonly = true};

    journal_close (xopen (dir, NULL));
    ok (raw_put (dir, "meta", "format", "99") == 0, "format: set to 99");
    is_errno_ptr (journal_open (dir, NULL, &err), EPROTO,
                  "format: open of version 99 fails EPROTO");
    like (err.text, "has format version 99; this cairn reads version 1",
          "format: message gives both versions");
    is_errno_ptr (journal_open (dir, &ro, &err), EPROTO,
                  "format: readonly open fails EPROTO too");
    like (err.text, "format version 99", "format: same message");
    tmpdir_destroy (dir);

    dir = tmpdir_create ();
    ok (raw_put (dir, NULL, "foreign", "data") == 0,
        "foreign: an LMDB env with other data");
    is_errno_ptr (journal_open (dir, NULL, &err), EPROTO,
                  "foreign: open fails EPROTO");
    like (err.text, "has no format version", "foreign: message says why");
    tmpdir_destroy (dir);
}

static void test_fault (void)
{
    char *dir = tmpdir_create ();
    struct cairn_error err = {""};
    struct journal *j = xopen (dir, NULL);
    int bad;

    setenv ("CAIRN_FAULT", "journal.commit:1:5", 1);
    crashpoint_init ();
    ok (append (j, 1, 0, 0) == 0 && append (j, 1, 1, 0) == 0, "fault: batch");
    is_errno (journal_commit (j, &err), EIO, "fault: injected commit: EIO");
    like (err.text, "injected", "fault: message says injected");
    is_int (journal_pending (j), 2, "fault: batch kept");
    is_errno (count_events (j, 1, 0, &bad), ENOENT, "fault: nothing visible");
    ok (journal_commit (j, &err) == 0, "fault: next commit succeeds");
    ok (count_events (j, 1, 0, &bad) == 2 && bad == 0, "fault: events stored");

    setenv ("CAIRN_FAULT", "journal.commit:*:28", 1);
    crashpoint_init ();
    ok (append (j, 1, 2, 0) == 0, "fault: batch");
    is_errno (journal_commit (j, &err), ENOSPC, "fault: injected ENOSPC");
    is_errno (journal_commit (j, &err), ENOSPC, "fault: and again");
    unsetenv ("CAIRN_FAULT");
    crashpoint_init ();
    ok (journal_commit (j, &err) == 0 && count_events (j, 1, 0, &bad) == 3,
        "fault: cleared, the kept batch commits");
    journal_close (j);
    tmpdir_destroy (dir);
}

/* A read-only opener (the inspection CLI) adopts a map that a writer in
 * another process grew past its own. */
static void test_readonly_resized (void)
{
    char *dir = tmpdir_create ();
    struct journal_opts o = {.map_size = MiB, .max_map_size = 8 * MiB};
    struct journal_opts ro = {.readonly = true};
    struct journal_stats st;
    int status, bad;

    journal_close (xopen (dir, &o));
    struct journal *j = xopen (dir, &ro);
    ok (journal_stats (j, &st) == 0 && st.map_size == MiB,
        "readonly: map is 1 MiB");
    pid_t pid = fork ();
    if (pid == 0) {
        struct journal *w = journal_open (dir, &o, NULL);
        for (int i = 1; w && i <= 30; i++)
            if (big_batch (w, i, 100) < 0 || journal_commit (w, NULL) < 0)
                _exit (1);
        _exit (w ? 0 : 2);
    }
    ok (waitpid (pid, &status, 0) == pid && WIFEXITED (status) &&
            WEXITSTATUS (status) == 0,
        "readonly: a writer process grew the map past 2 MiB");
    ok (count_events (j, 30, -1, &bad) == 100 && bad == 0,
        "readonly: reads see the writer's last batch");
    int rc = journal_stats (j, &st);
    ok (rc == 0 && st.map_size > 2 * MiB,
        "readonly: and adopted its grown map (%zu)", st.map_size);
    journal_close (j);
    tmpdir_destroy (dir);
}

static int drains_cb (uint32_t rank, const char *rec, size_t len, void *arg)
{
    char *buf = arg;
    size_t n = strlen (buf);
    snprintf (buf + n, 512 - n, "%u=%.*s;", (unsigned)rank, (int)len, rec);
    return 0;
}

/* The drains table: set, replaced, cleared, in rank order, committed
 * only, kept across a reopen. */
static void test_drains (void)
{
    char *dir = tmpdir_create ();
    struct journal *j = xopen (dir, NULL);
    struct cairn_error err;
    char buf[512] = "";

    ok (journal_drain (j, 7, "{\"reason\":\"a\"}") == 0 &&
            journal_drain (j, 2, "{\"reason\":\"b\"}") == 0,
        "drains: two batched");
    ok (journal_foreach_drain (j, drains_cb, buf, &err) == 0 && !*buf,
        "drains: not visible before the commit");
    ok (journal_commit (j, &err) == 0, "drains: commit");
    ok (journal_foreach_drain (j, drains_cb, buf, &err) == 0, "drains: read");
    is_str (buf, "2={\"reason\":\"b\"};7={\"reason\":\"a\"};",
            "drains: in rank order");
    ok (journal_drain (j, 7, "{\"reason\":\"c\"}") == 0 &&
            journal_drain (j, 2, NULL) == 0 && journal_drain (j, 9, NULL) == 0 &&
            journal_commit (j, &err) == 0,
        "drains: replace 7, undrain 2 and 9 (never drained)");
    journal_close (j);
    j = xopen (dir, NULL);
    buf[0] = '\0';
    ok (journal_foreach_drain (j, drains_cb, buf, &err) == 0, "drains: reopen");
    is_str (buf, "7={\"reason\":\"c\"};", "drains: what is left, kept");
    is_errno (journal_drain (j, 1, ""), EINVAL, "drains: an empty record");
    journal_close (j);
    tmpdir_destroy (dir);
}

static int nodeprocs_cb (const char *execid,
                         const char *rec,
                         size_t len,
                         void *arg)
{
    char *buf = arg;
    size_t n = strlen (buf);
    snprintf (buf + n, 512 - n, "%.8s=%.*s;", execid, (int)len, rec);
    return 0;
}

/* The nodeprocs table: put, replaced, deleted with other writes of the
 * same batch, in execid order, committed only, kept across a reopen. */
static void test_nodeprocs (void)
{
    const char *a = "aaaaaaaa-0000-4000-8000-000000000000";
    const char *b = "bbbbbbbb-0000-4000-8000-000000000000";
    char *dir = tmpdir_create ();
    struct journal *j = xopen (dir, NULL);
    struct cairn_error err;
    char buf[512] = "";

    ok (journal_nodeproc (j, b, "{\"s\":1}") == 0 &&
            journal_drain (j, 3, "{}") == 0 &&
            journal_nodeproc (j, a, "{\"s\":2}") == 0,
        "nodeprocs: two batched, a drain between them");
    ok (journal_foreach_nodeproc (j, nodeprocs_cb, buf, &err) == 0 && !*buf,
        "nodeprocs: not visible before the commit");
    ok (journal_commit (j, &err) == 0, "nodeprocs: commit");
    ok (journal_foreach_nodeproc (j, nodeprocs_cb, buf, &err) == 0,
        "nodeprocs: read");
    is_str (buf, "aaaaaaaa={\"s\":2};bbbbbbbb={\"s\":1};",
            "nodeprocs: in execid order");
    ok (journal_nodeproc (j, b, "{\"s\":3}") == 0 &&
            journal_nodeproc (j, a, NULL) == 0 &&
            journal_commit (j, &err) == 0,
        "nodeprocs: replace one, delete the other");
    journal_close (j);
    j = xopen (dir, NULL);
    buf[0] = '\0';
    ok (journal_foreach_nodeproc (j, nodeprocs_cb, buf, &err) == 0,
        "nodeprocs: reopen");
    is_str (buf, "bbbbbbbb={\"s\":3};", "nodeprocs: what is left, kept");
    is_errno (journal_nodeproc (j, "short", "{}"), EINVAL,
              "nodeprocs: a bad execid");
    is_errno (journal_nodeproc (j, a, ""), EINVAL, "nodeprocs: an empty record");
    journal_close (j);
    tmpdir_destroy (dir);
}

int main (void)
{
    plan (NO_PLAN);
    test_open ();
    test_readwrite ();
    test_kill ();
    test_crashpoints ();
    test_map_full ();
    test_grow_in_read ();
    test_format ();
    test_fault ();
    test_readonly_resized ();
    test_drains ();
    test_nodeprocs ();
    return done_testing ();
}
