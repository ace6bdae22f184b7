/* crashtest_selftest.c - a check that cannot fail proves nothing.
 *
 * `cairn-crashtest --selftest` builds one good run by hand - a 2-rank job
 * whose journal comes from the real state machine (core/job.h), with the
 * matching client transcript and run log - checks that it passes, then
 * breaks it in one way at a time and checks that the right violation is
 * reported. Output is TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/job.h"
#include "core/jobspec.h"
#include "core/rv1.h"
#include "crashtest/crashtest.h"

static int ntests, nfailed;

static void new_execid (char buf[EXECID_LEN + 1], void *arg)
{
    int *n = arg;
    snprintf (buf, EXECID_LEN + 1, "00000000-0000-4000-8000-%012d", ++*n);
}

struct fixture {
    struct ct_scenario sc;
    struct ct_job job;
    json_t *events;     /* {"1": [...]} */
    json_t *transcript; /* {"1": [...]} */
    struct ct_runlog rl;
    json_t *ref; /* {"jobs": {"1": summary}} */
};

static json_t *events_of (struct fixture *f)
{
    return json_object_get (f->events, "1");
}

/* The good run: accept, two shells (exit 0 and 3), finish, release. */
static int fixture_init (struct fixture *f)
{
    int serial = 0;
    struct job_ctx ctx = {.now = 1700000000.0,
                          .owner_uid = getuid (),
                          .new_execid = new_execid,
                          .arg = &serial};
    struct job_config jc;
    struct cairn_error err = {{0}};
    char *argv[] = {"true", NULL};
    json_t *out = json_array ();
    struct job *job = job_create (1);

    memset (f, 0, sizeof (*f));
    f->job.id = 1;
    f->job.nranks = 2;
    f->sc.name = "selftest";
    f->sc.jobs = &f->job;
    f->sc.njobs = 1;
    job_config_init (&jc);
    json_t *R = rv1_create (2, 1, "node", 0);
    json_t *js = jobspec_create (argv, 2, "/", NULL, 0, 0);
    if (!job || !R || !js ||
        job_accept (job, &ctx, (uint32_t)getuid (), R, js, &jc, out, &err) < 0)
        return -1;
    json_decref (R);
    json_decref (js);
    for (size_t i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        char line[160];
        ctx.now += 0.01;
        if (job_proc_spawned (job, &ctx, p->execid, 1000 + (int)i, 42, "boot",
                              out) < 0)
            return -1;
        snprintf (line, sizeof (line), "shell 1 %zu %s %d start", i, p->execid,
                  1000 + (int)i);
        ct_runlog_add_line (&f->rl, line);
        snprintf (line, sizeof (line), "shell 1 %zu %s %d end %d", i, p->execid,
                  1000 + (int)i, i == 1 ? 3 : 0);
        ct_runlog_add_line (&f->rl, line);
    }
    for (size_t i = 0; i < 2; i++) {
        ctx.now += 0.01;
        struct job_proc_end end = {.status = i == 1 ? 3 << 8 : 0};
        if (job_proc_exited (job, &ctx, job_proc_at (job, i)->execid, &end,
                             out) < 0)
            return -1;
    }
    f->transcript = json_pack ("{s:[]}", "1");
    size_t i;
    json_t *e;
    json_array_foreach (out, i, e)
    {
        json_t *resp = job_response (job, e);
        if (!resp)
            continue;
        json_array_append_new (
            json_object_get (f->transcript, "1"),
            json_pack ("{s:i s:b s:O s:O}", "stream", 1, "reattach", 0, "type",
                       json_object_get (resp, "type"), "data",
                       json_object_get (resp, "data")));
        json_decref (resp);
    }
    f->events = json_pack ("{s:o}", "1", out);
    f->ref = json_pack ("{s:{s:o}}", "jobs", "1", ct_summary (1, out, &f->rl));
    job_destroy (job);
    job_config_free (&jc);
    return 0;
}

static void fixture_free (struct fixture *f)
{
    json_decref (f->job.expect);
    json_decref (f->events);
    json_decref (f->transcript);
    json_decref (f->ref);
    ct_runlog_free (&f->rl);
}

/* Run every check on f; return the violations (new ref). */
static json_t *
check (struct fixture *f, json_t *killed, json_t *refused, json_t **diverged)
{
    json_t *v = json_array (), *d = json_array (), *jobs = json_object ();
    json_t *empty = json_object (), *none = json_object ();
    struct ct_check_input in = {.sc = &f->sc,
                                .kind = CT_CRASH,
                                .ref = f->ref,
                                .events = f->events,
                                .transcripts = f->transcript,
                                .refused = refused ? refused : none,
                                .rl = &f->rl,
                                .killed_execids = killed ? killed : empty};
    ct_check (&in, v, d, jobs);
    json_decref (jobs);
    json_decref (empty);
    json_decref (none);
    if (diverged)
        *diverged = d;
    else
        json_decref (d);
    return v;
}

static bool has (const json_t *arr, const char *needle)
{
    size_t i;
    json_t *x;
    json_array_foreach ((json_t *)arr, i, x)
    {
        if (strstr (json_string_value (x), needle))
            return true;
    }
    return false;
}

static void result (bool pass, const char *what, const json_t *v)
{
    ntests++;
    if (!pass)
        nfailed++;
    printf ("%s %d - %s\n", pass ? "ok" : "not ok", ntests, what);
    if (!pass) {
        size_t i;
        json_t *x;
        json_array_foreach ((json_t *)v, i, x)
        {
            printf ("#   %s\n", json_string_value (x));
        }
    }
}

/* The index of the nth (from 0) event ev of events, or -1. */
static ssize_t find (json_t *events, enum job_event ev, int nth)
{
    size_t i;
    json_t *e;
    json_array_foreach (events, i, e)
    {
        const char *n = json_string_value (json_object_get (e, "name"));
        if (n && job_event_of (n) == ev && nth-- == 0)
            return (ssize_t)i;
    }
    return -1;
}

static json_t *ev (const char *name, const char *ctxfmt, const char *a)
{
    char buf[400];
    snprintf (buf, sizeof (buf), ctxfmt, a);
    return json_pack ("{s:f s:s s:o}", "timestamp", 1700000001.0, "name", name,
                      "context", json_loads (buf, 0, NULL));
}

typedef void (*mutate_f) (struct fixture *f);

static void m_noclean (struct fixture *f)
{
    json_t *e = events_of (f);
    json_array_remove (e, (size_t)find (e, JOB_EV_CLEAN, 0));
}

static void m_release_twice (struct fixture *f)
{
    json_t *e = events_of (f);
    json_array_insert_new (
        e, (size_t)find (e, JOB_EV_RELEASE, 0),
        ev ("release", "{\"ranks\":\"%s\",\"final\":false}", "1"));
}

static void m_final_first (struct fixture *f)
{
    json_t *e = events_of (f);
    ssize_t fi = find (e, JOB_EV_FINISH, 0);
    json_t *fin = json_incref (json_array_get (e, (size_t)fi));
    json_array_remove (e, (size_t)fi);
    json_array_insert_new (e, (size_t)find (e, JOB_EV_CLEAN, 0), fin);
}

static void m_dup_response (struct fixture *f)
{
    json_t *t = json_object_get (f->transcript, "1");
    json_array_insert (t, 2, json_array_get (t, 1));
}

static void m_no_final (struct fixture *f)
{
    json_t *t = json_object_get (f->transcript, "1");
    json_array_remove (t, json_array_size (t) - 1);
}

static void m_start_on_reattach (struct fixture *f)
{
    json_t *t = json_object_get (f->transcript, "1");
    json_array_insert_new (t, 0,
                           json_pack ("{s:i s:b s:s s:{}}", "stream", 1,
                                      "reattach", 1, "type", "reattached",
                                      "data"));
    for (size_t i = 0; i < json_array_size (t); i++)
        json_object_set_new (json_array_get (t, i), "reattach", json_true ());
}

static void m_ran_twice (struct fixture *f)
{
    ct_runlog_add_line (&f->rl, "shell 1 0 00000000-0000-4000-8000-000000000099"
                                " 2000 start");
}

static void m_status_invented (struct fixture *f)
{
    json_t *e = events_of (f);
    json_t *x = json_array_get (e, (size_t)find (e, JOB_EV_PROC_EXIT, 1));
    json_object_set_new (json_object_get (x, "context"), "status",
                         json_integer (5 << 8));
}

static void m_needless_loss (struct fixture *f)
{
    json_t *e = events_of (f);
    json_t *x = json_array_get (e, (size_t)find (e, JOB_EV_PROC_EXIT, 0));
    json_object_set_new (x, "name", json_string ("proc-lost"));
    json_object_set_new (json_object_get (x, "context"), "note",
                         json_string ("lost while cairnd was down"));
}

static void m_drain_unexplained (struct fixture *f)
{
    json_t *e = events_of (f);
    json_array_insert_new (
        e, (size_t)find (e, JOB_EV_CLEAN, 0),
        ev ("drain", "{\"ranks\":\"%s\",\"reason\":\"x\"}", "1"));
}

/* The first process made a prolog that ended (status `status`, SIGKILL
 * with timeout) and drained its rank; with timeout, cairn signalled it for
 * its timeout first. */
static void prolog_drain (struct fixture *f, bool timeout, int status)
{
    json_t *e = events_of (f);
    json_t *x = json_array_get (e, (size_t)find (e, JOB_EV_PROC_EXIT, 0));
    const char *execid = json_string_value (
        json_object_get (json_object_get (x, "context"), "execid"));
    json_t *in = json_array_get (e, (size_t)find (e, JOB_EV_PROC_INTENT, 0));
    json_object_set_new (json_object_get (in, "context"), "phase",
                         json_string ("prolog"));
    json_object_set_new (json_object_get (x, "context"), "status",
                         json_integer (timeout ? SIGKILL : status));
    size_t at = (size_t)find (e, JOB_EV_PROC_EXIT, 0);
    json_array_insert_new (
        e, at + 1, ev ("drain", "{\"ranks\":\"%s\",\"reason\":\"x\"}", "0"));
    if (timeout)
        json_array_insert_new (
            e, at,
            ev ("proc-signal",
                "{\"execid\":\"%s\",\"signum\":15,\"reason\":\"timeout\"}",
                execid));
}

/* The first process's shim ended before starting it, cairnd started it
 * again (the same execid), and signalled it once it ran; with again
 * false, no new spawn came before the signal. */
static void respawned_signal (struct fixture *f, bool again)
{
    json_t *e = events_of (f);
    size_t at = (size_t)find (e, JOB_EV_PROC_SPAWN, 0);
    json_t *sp = json_array_get (e, at);
    const char *execid = json_string_value (
        json_object_get (json_object_get (sp, "context"), "execid"));
    json_t *resp = json_deep_copy (sp);
    json_array_insert_new (
        e, at + 1, ev ("proc-unstarted", "{\"execid\":\"%s\"}", execid));
    if (again)
        json_array_insert_new (e, at + 2, resp);
    else
        json_decref (resp);
    json_array_insert_new (
        e, (size_t)find (e, JOB_EV_PROC_EXIT, 0),
        ev ("proc-signal", "{\"execid\":\"%s\",\"signum\":15}", execid));
}

static void m_signal_after_end (struct fixture *f)
{
    json_t *e = events_of (f);
    const char *execid = json_string_value (json_object_get (
        json_object_get (
            json_array_get (e, (size_t)find (e, JOB_EV_PROC_EXIT, 0)),
            "context"),
        "execid"));
    json_array_insert_new (
        e, (size_t)find (e, JOB_EV_CLEAN, 0),
        ev ("proc-signal", "{\"execid\":\"%s\",\"signum\":15}", execid));
}

static void m_other_outcome (struct fixture *f)
{
    json_object_set_new (
        json_object_get (json_object_get (f->ref, "jobs"), "1"), "finish",
        json_integer (0));
}

static void m_unknown_job (struct fixture *f)
{
    json_object_set (f->events, "7", events_of (f));
}

static void m_unknown_command (struct fixture *f)
{
    ct_runlog_add_line (&f->rl, "epilog 1 1 00000000-0000-4000-8000-00000000"
                                "0077 3000 start");
}

/* Give the fixture's job the expectation s (a JSON text); false if it
 * does not parse. */
static bool expect (struct fixture *f, const char *s)
{
    struct cairn_error err = {{0}};
    json_t *o = json_loads (s, 0, NULL);
    int rc = ct_expect_parse (o, &f->job.expect, "expect", &err);
    json_decref (o);
    return rc == 0;
}

/* A scenario's expected outcome (crashtest_expect.c): read as the
 * summary writes it, held against every run, excused only as a
 * difference from the clean run is. */
static void test_expect (void)
{
    static const char *const bad[] = {
        "{}",
        "{\"finish\": \"0\"}",
        "{\"finish\": -1}",
        "{\"state\": \"done\"}",
        "{\"ran\": \"shell.0\"}",
        "{\"exceptions\": [1]}",
        "{\"released\": \"x\"}",
        "{\"lost\": 0}",
    };
    struct fixture f;
    json_t *v, *d;
    int refused = 0;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        fixture_init (&f);
        if (!expect (&f, bad[i]) && errno == EINVAL)
            refused++;
        else
            printf ("#   not refused: %s\n", bad[i]);
        fixture_free (&f);
    }
    result (refused == (int)(sizeof (bad) / sizeof (bad[0])),
            "an expectation with a bad key or value is refused (EINVAL)", NULL);

    /* the good run's outcome, written in another order and notation */
    fixture_init (&f);
    bool parsed =
        expect (&f, "{\"state\": \"clean\", \"finish\": 768, "
                    "\"exceptions\": [], \"released\": \"0,1\", "
                    "\"drained\": \"\", "
                    "\"ran\": [\"shell.1\", \"shell.0\", \"shell.1\"]}");
    v = check (&f, NULL, NULL, &d);
    result (parsed && json_array_size (v) == 0 && json_array_size (d) == 0,
            "the good run meets the outcome it states", v);
    json_decref (v);
    json_decref (d);
    fixture_free (&f);

    fixture_init (&f);
    parsed = expect (&f, "{\"finish\": 0, \"ran\": [\"shell.0\"]}");
    v = check (&f, NULL, NULL, NULL);
    result (parsed && has (v, "unlike the scenario's expected outcome: "
                              "finish: expected 0, this run 768; ran: "),
            "caught: an outcome unlike the one the scenario states", v);
    json_decref (v);
    fixture_free (&f);

    /* the clean run itself (no reference) is held to it too */
    fixture_init (&f);
    parsed = expect (&f, "{\"finish\": 0}");
    json_decref (f.ref);
    f.ref = NULL;
    v = check (&f, NULL, NULL, NULL);
    result (parsed && has (v, "finish: expected 0"),
            "caught: a clean run unlike the outcome stated", v);
    json_decref (v);
    fixture_free (&f);

    /* a loss explains a difference, as it does one from the clean run */
    fixture_init (&f);
    parsed = expect (&f, "{\"finish\": 0}");
    m_needless_loss (&f);
    v = check (&f, NULL, NULL, &d);
    result (parsed && !has (v, "expected outcome") &&
                has (d, "expected outcome, explained by lost"),
            "a loss explains an outcome unlike the one stated", v);
    json_decref (v);
    json_decref (d);
    fixture_free (&f);
}

int ct_selftest (void)
{
    static const struct {
        mutate_f fn;
        const char *expect;
        const char *what;
    } cases[] = {
        {m_noclean, "never reached clean", "a job without clean"},
        {m_release_twice, "released twice", "a rank released twice"},
        {m_final_first, "before finish", "the final release before finish"},
        {m_dup_response, "duplicate, reordered", "a response sent twice"},
        {m_no_final, "final releases", "no final release to the client"},
        {m_start_on_reattach, "'start' sent on reattach",
         "start on a reattach stream"},
        {m_ran_twice, "at-most-once", "a command run twice"},
        {m_status_invented, "exited with wait status",
         "a status the command did not return"},
        {m_needless_loss, "needless loss", "a status lost though recoverable"},
        {m_drain_unexplained, "drain of", "a drain nothing explains"},
        {m_signal_after_end, "had ended", "a signal to an ended process"},
        {m_other_outcome, "ended unlike the clean run",
         "an outcome unlike the clean run"},
        {m_unknown_job, "never submitted", "a job nobody submitted"},
        {m_unknown_command, "without a journaled intent",
         "a command with no intent"},
    };
    struct fixture f;
    json_t *v, *d;

    /* the cases, and 14 tests below them (5 of them test_expect's) */
    printf ("1..%zu\n", sizeof (cases) / sizeof (cases[0]) + 14);
    if (fixture_init (&f) < 0) {
        printf ("Bail out! cannot build the fixture\n");
        return 1;
    }
    v = check (&f, NULL, NULL, NULL);
    result (json_array_size (v) == 0, "the good run passes every check", v);
    json_decref (v);
    fixture_free (&f);

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        char what[160];
        fixture_init (&f);
        cases[i].fn (&f);
        v = check (&f, NULL, NULL, NULL);
        snprintf (what, sizeof (what), "caught: %s", cases[i].what);
        result (has (v, cases[i].expect), what, v);
        json_decref (v);
        fixture_free (&f);
    }

    /* a loss from a shim we killed is expected, and explains the outcome */
    fixture_init (&f);
    m_needless_loss (&f);
    json_t *e = events_of (&f);
    const char *execid = json_string_value (json_object_get (
        json_object_get (
            json_array_get (e, (size_t)find (e, JOB_EV_PROC_LOST, 0)),
            "context"),
        "execid"));
    json_t *killed = json_pack ("{s:b}", execid, 1);
    v = check (&f, killed, NULL, &d);
    result (!has (v, "needless loss"), "a killed shim's loss is not needless",
            v);
    result (has (v, "without a later exception and drain"),
            "but it still needs an exception and a drain", v);
    json_decref (v);
    json_decref (d);
    json_decref (killed);
    fixture_free (&f);

    /* a prolog that hung or failed drains its node (job_decide.c); one
     * that succeeded does not */
    fixture_init (&f);
    prolog_drain (&f, true, 0);
    v = check (&f, NULL, NULL, NULL);
    result (!has (v, "drain of"), "a timed-out prolog explains its drain", v);
    json_decref (v);
    fixture_free (&f);
    /* a per-rank prolog that failed is its node's failed health check */
    fixture_init (&f);
    prolog_drain (&f, false, 1 << 8);
    v = check (&f, NULL, NULL, NULL);
    result (!has (v, "drain of"), "a failed prolog explains its drain", v);
    json_decref (v);
    fixture_free (&f);
    fixture_init (&f);
    prolog_drain (&f, false, 0);
    v = check (&f, NULL, NULL, NULL);
    result (has (v, "drain of"), "caught: a drain after a prolog that exited",
            v);
    json_decref (v);
    fixture_free (&f);

    /* a process started anew after proc-unstarted may be signalled */
    fixture_init (&f);
    respawned_signal (&f, true);
    v = check (&f, NULL, NULL, NULL);
    result (!has (v, "signal (event"), "a respawned process may be signalled",
            v);
    json_decref (v);
    fixture_free (&f);
    fixture_init (&f);
    respawned_signal (&f, false);
    v = check (&f, NULL, NULL, NULL);
    result (has (v, "was never spawned"),
            "caught: a signal after proc-unstarted, before a new spawn", v);
    json_decref (v);
    fixture_free (&f);

    /* a refused job must not be in the journal */
    fixture_init (&f);
    json_t *refused = json_pack ("{s:s}", "1", "journal is full");
    v = check (&f, NULL, refused, NULL);
    result (has (v, "refused"), "caught: a refused job that ran", v);
    json_decref (v);
    json_decref (refused);
    fixture_free (&f);

    test_expect ();

    printf ("# %d of %d failed\n", nfailed, ntests);
    return nfailed ? 1 : 0;
}
