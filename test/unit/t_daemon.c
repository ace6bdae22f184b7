/* t_daemon - cairnd itself on a fake supervisor (fakeprocs.h): the real
 * daemon, journal, socket and job path, with every process's fate decided
 * by the test, so that what only a dying supervisor or a lost shim makes
 * happen can be made to happen in order, here.
 *
 * The test runs cairnd's loop a turn at a time (EVRUN_NOWAIT) and talks
 * to it through the client library on its socket. At every start the
 * daemon asks of the supervisor, the fake checks the journal: the
 * process's intent must be committed by then (the write-ahead rule,
 * doc/design.md W2); with CAIRN_TEST_UNSAFE_EFFECTS_FIRST it is not, and
 * the last test shows the check failing then.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#include "fakedaemon.h"

#include "core/jobspec.h"
#include "core/rv1.h"
#include "exec/turn.h"
#include "journal/journal.h"
#include "supervise/procfs.h"

static struct fake_daemon fd;
static struct cairnd *d;
static struct client *cl;
static uint64_t cur_id; /* the job fake_on_start checks */
static int wal_ok, wal_bad;

/* One turn of cairnd's loop, then whatever it answered, dropped. */
static void turn (void)
{
    struct cairn_error err;
    json_t *r;
    ev_run (cairnd_loop (d), EVRUN_NOWAIT);
    while ((r = client_recv (cl, 0, &err)))
        json_decref (r);
}

struct find {
    const char *name;
    const char *execid;
    bool found;
};

static int
find_event (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct find *f = arg;
    (void)id, (void)seq;
    json_t *o = json_loadb (line, len, 0, NULL);
    const char *name = NULL, *execid = NULL;
    if (o &&
        json_unpack (o, "{s:s s:{s?s}}", "name", &name, "context", "execid",
                     &execid) == 0 &&
        !strcmp (name, f->name) && execid && !strcmp (execid, f->execid))
        f->found = true;
    json_decref (o);
    return 0;
}

/* Is event name of execid (of job cur_id) committed? */
static bool committed (const char *name, const char *execid)
{
    struct find f = {.name = name, .execid = execid};
    struct cairn_error err;
    return journal_read_job (cairnd_journal (d), cur_id, 0, find_event, &f,
                             &err) == 0 &&
           f.found;
}

/* Inside procs_kill_leftovers: is the loss committed? */
static int kills_ok, kills_bad;
static void check_loss (const char *execid)
{
    if (committed ("proc-lost", execid))
        kills_ok++;
    else
        kills_bad++;
}

/* Inside procs_start: is the intent of execid committed? */
static void check_intent (const char *execid, void *arg)
{
    (void)arg;
    if (committed ("proc-intent", execid))
        wal_ok++;
    else {
        wal_bad++;
        diag ("%s started before its intent was committed", execid);
    }
}

static int collect_name (
    uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    json_t *names = arg, *o = json_loadb (line, len, 0, NULL);
    (void)id, (void)seq;
    json_array_append (names, json_object_get (o, "name"));
    json_decref (o);
    return 0;
}

/* The names of job id's committed events, as one space-separated string
 * (static). */
static const char *names_of (uint64_t id)
{
    static char buf[8192];
    struct cairn_error err;
    json_t *names = json_array (), *v;
    size_t i, off = 0;

    buf[0] = '\0';
    if (journal_read_job (cairnd_journal (d), id, 0, collect_name, names,
                          &err) == 0)
        json_array_foreach (names, i, v) off +=
            (size_t)snprintf (buf + off, sizeof (buf) - off, "%s%s",
                              i ? " " : "", json_string_value (v));
    json_decref (names);
    return buf;
}

static bool has_event (uint64_t id, const char *name)
{
    char pat[64];
    snprintf (pat, sizeof (pat), " %s ", name);
    char all[8200];
    snprintf (all, sizeof (all), " %s ", names_of (id));
    return strstr (all, pat) != NULL;
}

/* The context of job id's first event name, as JSON text (static). */
static int
first_ctx (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    char **want = arg;
    json_t *o = json_loadb (line, len, 0, NULL);
    (void)id, (void)seq;
    if (o &&
        !strcmp (json_string_value (json_object_get (o, "name")), want[0])) {
        char *s = json_dumps (json_object_get (o, "context"), JSON_SORT_KEYS);
        snprintf (want[1], 1024, "%s", s ? s : "");
        free (s);
        json_decref (o);
        return 1;
    }
    json_decref (o);
    return 0;
}

static const char *ctx_of (uint64_t id, const char *name)
{
    static char buf[1024];
    char *want[2] = {(char *)name, buf};
    struct cairn_error err;
    buf[0] = '\0';
    (void)journal_read_job (cairnd_journal (d), id, 0, first_ctx, want, &err);
    return buf;
}

static bool job_done (uint64_t id)
{
    struct journal_jobinfo info;
    return journal_job_info (cairnd_journal (d), id, &info) == 0 &&
           !info.active;
}

static void start_job (uint64_t id, uint32_t nranks)
{
    char *argv[] = {"/bin/true", NULL};
    char host[256];
    gethostname (host, sizeof (host));
    json_t *js = jobspec_create (argv, nranks, "/", NULL, 0, 0);
    json_t *R = rv1_create (nranks, 1, host, 0);
    json_t *p =
        json_pack ("{s:I s:I s:O s:O s:b}", "id", (json_int_t)id, "userid",
                   (json_int_t)getuid (), "jobspec", js, "R", R, "events", 1);
    cur_id = id;
    if (!js || !R || !p || client_send (cl, "start", (int64_t)id, p) < 0)
        BAIL_OUT ("start: %s", strerror (errno));
    json_decref (js);
    json_decref (R);
    json_decref (p);
}

/* Turn the loop until n starts are asked and unanswered (at most 2 s). */
static bool wait_asked (size_t n)
{
    for (int i = 0; i < 200; i++) {
        if (procs_asked (fake_procs) >= n)
            return true;
        turn ();
        usleep (10000);
    }
    return false;
}

/* Answer every start asked as started, and end every watched process
 * with status 0, until job id is done (at most 5 s). */
static bool drive_to_clean (uint64_t id)
{
    for (int i = 0; i < 500 && !job_done (id); i++) {
        struct fake_start *s;
        turn ();
        while ((s = fake_next_asked ()))
            fake_answer (s, PROCS_STARTED, NULL);
        for (size_t k = 0; k < FAKE_MAXSTARTS; k++)
            if (fake_procs->watches[k].used)
                (void)fake_end (fake_procs->watches[k].execid, 0);
        turn ();
        usleep (2000);
    }
    return job_done (id);
}

static void test_normal (void)
{
    size_t before = fake_procs->nstarts;
    wal_ok = wal_bad = 0;
    start_job (101, 2);
    ok (wait_asked (2), "normal: the two prologs are asked for");
    ok (drive_to_clean (101), "normal: the job completes");
    is_int ((int)(fake_procs->nstarts - before), 6,
            "normal: 6 starts (prolog, shell, epilog on 2 ranks)");
    is_int (wal_bad, 0, "normal: every start after its intent's commit");
    is_int (wal_ok, 6, "normal: all 6 checked");
    ok (has_event (101, "clean") && !has_event (101, "proc-lost") &&
            !has_event (101, "drain"),
        "normal: clean, nothing lost or drained (%s)", names_of (101));
    like (ctx_of (101, "finish"), "\"status\": 0", "normal: finish status 0");
}

static void test_unstarted (void)
{
    wal_ok = wal_bad = 0;
    start_job (102, 2);
    ok (wait_asked (2), "unstarted: the two prologs are asked for");
    struct fake_start *s = fake_next_asked ();
    char execid[EXECID_LEN + 1];
    snprintf (execid, sizeof (execid), "%s", s->execid);
    fake_answer (s, PROCS_UNSTARTED, NULL);
    ok (wait_asked (2), "unstarted: asked for again");
    is_int (fake_nstarts_of (execid), 2,
            "unstarted: the prolog its dead supervisor never started is "
            "asked for once more");
    ok (drive_to_clean (102), "unstarted: the job completes");
    is_int (fake_nstarts_of (execid), 2, "unstarted: and never a third time");
    is_int (wal_bad, 0, "unstarted: every start after its intent's commit");
    ok (!has_event (102, "proc-lost") && !has_event (102, "drain") &&
            !has_event (102, "exception"),
        "unstarted: nothing lost, drained or excepted (%s)", names_of (102));
}

static void test_lost (void)
{
    size_t leftovers = fake_procs->nleftovers;
    wal_ok = wal_bad = 0;
    start_job (103, 2);
    ok (wait_asked (2), "lost: the two prologs are asked for");
    struct fake_start *s = fake_next_asked ();
    fake_answer (s, PROCS_LOST, "its supervisor died: gone without a record");
    ok (drive_to_clean (103), "lost: the job still ends");
    like (ctx_of (103, "proc-lost"),
          "its supervisor died: gone without a record",
          "lost: proc-lost says why");
    ok (has_event (103, "drain") && has_event (103, "exception"),
        "lost: its rank drained, the job excepted (%s)", names_of (103));
    ok (fake_procs->nleftovers > leftovers && kills_ok > 0 && kills_bad == 0,
        "lost: what it may have left is killed, once its loss is committed");
    is_int (wal_bad, 0, "lost: every start after its intent's commit");
}

/* Start job id's single prolog and return its execid (static). */
static const char *prolog_watched (uint64_t id)
{
    static char execid[EXECID_LEN + 1];
    execid[0] = '\0';
    start_job (id, 1);
    if (!wait_asked (1))
        return execid;
    fake_answer (fake_next_asked (), PROCS_STARTED, NULL);
    turn ();
    for (size_t k = 0; k < FAKE_MAXSTARTS && !execid[0]; k++)
        if (fake_procs->watches[k].used)
            snprintf (execid, sizeof (execid), "%s",
                      fake_procs->watches[k].execid);
    return execid;
}

static void test_vanished (void)
{
    wal_ok = wal_bad = 0;
    const char *execid = prolog_watched (104);
    ok (execid[0], "vanished: the prolog is watched");
    /* a shim not our supervisor's child, gone with no record and no start
     * marker: the last cairnd died before the command could start */
    is_int (fake_vanish (execid, -1), 0,
            "vanished: it ends with no exit record and no start marker");
    ok (wait_asked (1), "vanished: it is asked for again");
    is_int (fake_nstarts_of (execid), 2, "vanished: once more");
    ok (drive_to_clean (104), "vanished: the job completes");
    ok (has_event (104, "proc-unstarted") && !has_event (104, "proc-lost"),
        "vanished: recorded as never started, not lost (%s)", names_of (104));
    is_int (wal_bad, 0, "vanished: every start after its intent's commit");

    wal_ok = wal_bad = 0;
    execid = prolog_watched (106);
    ok (execid[0], "no record: the prolog is watched");
    /* its supervisor saw it end but could not write its record */
    is_int (fake_vanish (execid, 1 << 8), 0,
            "no record: its supervisor says it could not write one");
    ok (drive_to_clean (106), "no record: the job still ends");
    like (ctx_of (106, "proc-lost"), "left no exit status",
          "no record: lost, and says so");
    ok (has_event (106, "drain"), "no record: its rank drained");
    is_int (fake_nstarts_of (execid), 1, "no record: never started again");
}

static void test_unsafe (void)
{
    /* the check above can fail: acting before committing is caught */
    turn_unsafe_effects_first (cairnd_turn (d), true);
    wal_ok = wal_bad = 0;
    start_job (105, 1);
    (void)drive_to_clean (105);
    ok (wal_bad > 0,
        "unsafe: with effects first, a start before its intent's commit is "
        "caught (%d)",
        wal_bad);
    turn_unsafe_effects_first (cairnd_turn (d), false);
}

/* Is s a canonical RFC 4122 version 4 UUID? */
static bool uuid_v4 (const char *s)
{
    return uuid_is_canonical (s) && s[14] == '4' && strchr ("89ab", s[19]);
}

/* Execids come 64 to a getrandom() call: a job of 72 processes takes
 * more than one pool, and no id comes twice. */
static void test_execids (void)
{
    size_t before = fake_procs->nstarts;
    int bad = 0, dup = 0;

    start_job (107, 24);
    ok (drive_to_clean (107), "execids: a 24-rank job completes");
    is_int ((int)(fake_procs->nstarts - before), 72,
            "execids: 72 starts (prolog, shell, epilog on 24 ranks)");
    /* (the tests before start some ids twice on purpose: unstarted) */
    for (size_t i = before; i < fake_procs->nstarts; i++) {
        const char *x = fake_procs->starts[i].execid;
        bad += !uuid_v4 (x);
        for (size_t k = 0; k < i; k++)
            dup += !strcmp (x, fake_procs->starts[k].execid);
    }
    is_int (bad, 0, "execids: each a version 4 UUID");
    is_int (dup, 0,
            "execids: none twice, in this job or against the ones "
            "before");
}

int main (void)
{
    plan (NO_PLAN);
    fake_daemon_start (&fd, json_pack ("{s:{s:[s] s:b} s:{s:[s] s:b}}",
                                       "prolog", "command", "/bin/true",
                                       "per-rank", 1, "epilog", "command",
                                       "/bin/true", "per-rank", 1));
    d = fd.d;
    cl = fd.cl;
    ok (fake_procs != NULL, "cairnd runs on the fake supervisor");
    fake_on_start = check_intent;
    fake_on_leftovers = check_loss;

    test_normal ();
    test_unstarted ();
    test_lost ();
    test_vanished ();
    test_unsafe ();
    test_execids ();

    fake_daemon_stop (&fd);
    return done_testing ();
}
