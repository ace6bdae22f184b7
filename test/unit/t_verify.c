/* t_verify.c - the journal invariants of core/verify.h.
 *
 * Two sources of event lists: whole jobs produced by the real decisions of
 * core/job.h (driven here without processes), which must verify clean, and
 * small lists written by hand, each breaking one invariant once, whose
 * problem text is asserted.
 */
#include <signal.h>
#include <stdarg.h>

#include "tap.h"
#include "core/config.h"
#include "core/eventlog.h"
#include "core/job.h"
#include "core/jobspec.h"
#include "core/rv1.h"
#include "core/verify.h"

#define JOBID 42
#define T0 1700000000.0

/* ---- jobs made by the decisions ---- */

static int nexec;

static void new_execid (char buf[EXECID_LEN + 1], void *arg)
{
    snprintf (buf, EXECID_LEN + 1, "aaaaaaaa-0000-4000-8000-%012d", ++nexec);
}

static char **argv1 (const char *s)
{
    char **argv = calloc (2, sizeof (*argv));
    if (!argv || !(argv[0] = strdup (s)))
        BAIL_OUT ("out of memory");
    return argv;
}

static json_t *accept_parts (int nranks, json_t **R, json_t **js)
{
    char *argv[] = {"true", NULL};
    if (!(*R = rv1_create (nranks, 1, "node0", 0)) ||
        !(*js = jobspec_create (argv, nranks, NULL, NULL, 0, 0)))
        BAIL_OUT ("cannot build R/jobspec");
    return *R;
}

/* Run a whole job through the decisions: every intent is spawned, every
 * process exits 0, unless `hang_shells`: then the job is canceled and its
 * shells never exit, so they are given up on (proc-lost). */
static json_t *decided_job (bool perilog, bool hang_shells)
{
    struct job_config jc;
    struct job_ctx ctx = {.now = T0, .new_execid = new_execid};
    struct cairn_error err = {{0}};
    json_t *out = json_array ();
    struct job *job = job_create (JOBID);
    json_t *R, *js;

    job_config_init (&jc);
    if (perilog) {
        jc.prolog.command = argv1 ("/etc/prolog");
        jc.prolog.per_rank = true;
        jc.epilog.command = argv1 ("/etc/epilog");
        jc.epilog.per_rank = true;
        jc.release_after = 0;
    }
    jc.exec.max_kill_count = 1;
    accept_parts (2, &R, &js);
    if (!out || !job || job_accept (job, &ctx, 0, R, js, &jc, out, &err) < 0)
        BAIL_OUT ("job_accept: %s", err.text);
    for (int round = 0; round < 50 && job_state (job) != JOB_DONE; round++) {
        ctx.now += 1;
        for (size_t i = 0; i < job_nprocs (job); i++) {
            const struct job_proc *p = job_proc_at (job, i);
            char execid[EXECID_LEN + 1];
            snprintf (execid, sizeof (execid), "%s", p->execid);
            if (p->state == PROC_INTENT)
                job_proc_spawned (job, &ctx, execid, 1000 + (pid_t)i, 5, "b",
                                  out);
            else if (p->state == PROC_RUNNING &&
                     (!hang_shells || p->phase != PHASE_SHELL))
                job_proc_exited (job, &ctx, execid,
                                 &(struct job_proc_end){.outdata = "hi\n"},
                                 out);
        }
        if (hang_shells && job_state (job) == JOB_RUN && round == 3)
            job_raise (job, &ctx, "cancel", 0, "test", -1, out, &err);
        job_advance (job, &ctx, out);
    }
    if (job_state (job) != JOB_DONE)
        BAIL_OUT ("the decided job did not end");
    job_destroy (job);
    job_config_free (&jc);
    json_decref (R);
    json_decref (js);
    return out;
}

/* ---- hand-made lists ---- */

static double tnow;

static void add (json_t *list, const char *name, const char *fmt, ...)
{
    json_t *ctx = NULL;
    if (fmt) {
        va_list ap;
        va_start (ap, fmt);
        ctx = json_vpack_ex (NULL, 0, fmt, ap);
        va_end (ap);
        if (!ctx)
            BAIL_OUT ("bad pack format for %s", name);
    }
    json_t *e = eventlog_entry_create (tnow += 0.5, name, ctx);
    if (!e || json_array_append_new (list, e) < 0)
        BAIL_OUT ("cannot build event %s", name);
}

/* A list starting with accept of a job on ranks 0-1, with a prolog
 * configured if `prolog`. */
static json_t *list_new (bool prolog)
{
    struct job_config jc;
    json_t *R, *js, *cfg;
    json_t *list = json_array ();

    tnow = T0;
    job_config_init (&jc);
    if (prolog)
        jc.prolog.command = argv1 ("/etc/prolog");
    if (!list || !(cfg = job_config_encode (&jc)))
        BAIL_OUT ("cannot encode config");
    accept_parts (2, &R, &js);
    add (list, "accept", "{s:i s:o s:o s:o}", "userid", 0, "R", R, "jobspec",
         js, "config", cfg);
    job_config_free (&jc);
    return list;
}

#define X1 "aaaaaaaa-0000-4000-8000-000000000001"
#define X2 "aaaaaaaa-0000-4000-8000-000000000002"

static void intent (json_t *l, const char *x, const char *phase, const char *r)
{
    add (l, "proc-intent", "{s:s s:s s:s}", "execid", x, "phase", phase,
         "ranks", r);
}

static void spawn (json_t *l, const char *x)
{
    add (l, "proc-spawn", "{s:s s:i s:i s:s}", "execid", x, "pid", 100,
         "starttime", 5, "bootid", "b");
}

static void pexit (json_t *l, const char *x, int status)
{
    add (l, "proc-exit", "{s:s s:i}", "execid", x, "status", status);
}

static void release (json_t *l, const char *ranks, bool final)
{
    add (l, "release", "{s:s s:b}", "ranks", ranks, "final", final);
}

/* A complete, consistent job without prolog: start, one shell on 0-1,
 * finish, release, clean. */
static json_t *list_whole (void)
{
    json_t *l = list_new (false);
    add (l, "start", "{}");
    intent (l, X1, "shell", "0-1");
    spawn (l, X1);
    pexit (l, X1, 0);
    add (l, "finish", "{s:i}", "status", 0);
    add (l, "cleanup", "{s:s s:b}", "ranks", "0-1", "epilog", 0);
    release (l, "0-1", true);
    add (l, "clean", "{}");
    return l;
}

/* Wrap list as `cairn dump` lines: {"id", "seq", "event"}. */
static json_t *wrap (json_t *list)
{
    json_t *w = json_array ();
    size_t i;
    json_t *e;
    json_array_foreach (list, i, e) json_array_append_new (
        w, json_pack ("{s:i s:i s:O}", "id", JOBID, "seq", (int)i, "event", e));
    json_decref (list);
    return w;
}

/* ---- running the checks ---- */

static json_t *problems;

/* Verify list (stolen) and return the number of problems; their texts
 * stay in `problems`. */
static int run (json_t *list)
{
    json_decref (problems);
    if (!(problems = json_array ()))
        BAIL_OUT ("out of memory");
    int n = verify_job (JOBID, list, problems);
    json_decref (list);
    return n;
}

/* The text of problem i, "" if none. */
static const char *ptext (size_t i)
{
    const char *s = json_string_value (
        json_object_get (json_array_get (problems, i), "problem"));
    return s ? s : "";
}

static int pseq (size_t i)
{
    return (int)json_integer_value (
        json_object_get (json_array_get (problems, i), "seq"));
}

static void dump_problems (void)
{
    for (size_t i = 0; i < json_array_size (problems); i++)
        diag ("  seq %d: %s", pseq (i), ptext (i));
}

/* Exactly one problem, at seq, containing text. */
static void one_problem (int n, int seq, const char *text, const char *what)
{
    is_int (n, 1, "%s: one problem", what);
    if (n != 1)
        dump_problems ();
    is_int (pseq (0), seq, "%s: at seq %d", what, seq);
    like (ptext (0), text, "%s: says so", what);
}

static json_t *remove_at (json_t *l, size_t i)
{
    json_array_remove (l, i);
    return l;
}

/* Index of the nth event named name in l. */
static size_t find (json_t *l, const char *name, int nth)
{
    size_t i;
    json_t *e;
    json_array_foreach (l, i, e)
    {
        const char *n;
        if (eventlog_entry_parse (e, NULL, &n, NULL) == 0 &&
            strcmp (n, name) == 0 && nth-- == 0)
            return i;
    }
    BAIL_OUT ("no %s in the list", name);
}

static void test_decided (void)
{
    int n = run (decided_job (true, false));
    is_int (n, 0,
            "a job decided with prolog, epilog and partial release "
            "verifies");
    if (n)
        dump_problems ();
    n = run (decided_job (false, true));
    is_int (n, 0, "a canceled job whose shells were given up on verifies");
    if (n)
        dump_problems ();
    is_int (run (wrap (decided_job (true, false))), 0,
            "the same as dump lines verifies");
    is_int (run (list_whole ()), 0, "the hand-made whole job verifies");
}

static void test_seqs (void)
{
    json_t *l = wrap (decided_job (true, false));
    one_problem (run (remove_at (l, 5)), 6,
                 "gap: seq 6 follows seq 4 (1 event(s) missing)",
                 "an event removed");

    l = wrap (decided_job (true, false));
    json_array_insert (l, 6, json_array_get (l, 5));
    one_problem (run (l), 5, "seq 5 repeats or goes back (it follows seq 5)",
                 "a seq repeated");

    l = wrap (list_whole ());
    json_object_set_new (json_array_get (l, 3), "seq", json_string ("x"));
    one_problem (run (l), 3, "element 3 of the list has no valid seq",
                 "a wrapper without seq");

    l = wrap (list_whole ());
    json_object_set_new (json_array_get (l, 0), "id", json_integer (7));
    one_problem (run (l), 0, "event of another job in the list of job 42",
                 "an event of another job");

    l = wrap (list_whole ());
    json_array_remove (l, 0);
    is_int (run (l), 2, "accept removed: two problems");
    like (ptext (0), "gap: the first event has seq 1 (1 event(s) missing",
          "accept removed: the gap");
    like (ptext (1), "first event is start, not accept",
          "accept removed: nothing to fold");
}

static void test_release (void)
{
    json_t *l = decided_job (true, false);
    size_t r = find (l, "release", 0);
    json_array_insert (l, r + 1, json_array_get (l, r));
    one_problem (run (l), (int)r + 1, "rank(s) 0 released twice",
                 "a release duplicated");

    l = list_whole ();
    json_array_insert_new (l, find (l, "clean", 0),
                           eventlog_entry_pack (T0 + 99, "release", "{s:s s:b}",
                                                "ranks", "", "final", 0));
    one_problem (run (l), 8, "release after the final release (seq 7)",
                 "a release after the final one");

    l = list_whole ();
    json_array_set_new (l, 7,
                        eventlog_entry_pack (T0 + 9, "release", "{s:s s:b}",
                                             "ranks", "0-1,5", "final", 1));
    one_problem (run (l), 7, "released rank(s) 5 not in R (ranks 0-1)",
                 "a rank outside R released");

    l = list_new (false);
    add (l, "start", "{}");
    intent (l, X1, "shell", "0");
    intent (l, X2, "shell", "1");
    spawn (l, X1);
    spawn (l, X2);
    pexit (l, X1, 0);
    release (l, "0-1", false);
    one_problem (run (l), 7,
                 "rank(s) 1 released while process " X2
                 " (shell, intent at seq 3) has not ended",
                 "a rank released under a live process");

    l = list_whole ();
    json_array_set_new (l, 7,
                        eventlog_entry_pack (T0 + 9, "release", "{s:s s:b}",
                                             "ranks", "1", "final", 1));
    one_problem (run (l), 8, "clean, but rank(s) 0 were never released",
                 "clean with a rank never released");

    l = list_whole ();
    json_array_set_new (l, 7,
                        eventlog_entry_pack (T0 + 9, "release", "{s:s s:b}",
                                             "ranks", "0-1", "final", 0));
    one_problem (run (l), 8, "clean without a final release",
                 "clean without a final release");

    l = list_whole ();
    json_array_insert_new (l, 2,
                           eventlog_entry_pack (T0 + 1, "drain", "{s:s s:s}",
                                                "ranks", "3", "reason", "x"));
    one_problem (run (l), 2, "drained rank(s) 3 not in R (ranks 0-1)",
                 "a rank outside R drained");
}

static void test_order (void)
{
    json_t *l = list_new (false);
    add (l, "finish", "{s:i}", "status", 0);
    one_problem (run (l), 1, "finish before start", "finish before start");

    l = list_new (false);
    add (l, "start", "{}");
    intent (l, X1, "shell", "0-1");
    spawn (l, X1);
    pexit (l, X1, 0);
    release (l, "0-1", true);
    add (l, "finish", "{s:i}", "status", 0);
    /* the fold refuses a final release before finish (job.h's table) */
    int n = run (l);
    is_int (n, 2, "finish after the final release: two problems");
    if (n != 2)
        dump_problems ();
    is_int (pseq (0), 5, "the final release in run: at seq 5");
    like (ptext (0),
          "job_apply refuses release: release: a final release "
          "in state run",
          "the final release in run: says so");
    is_int (pseq (1), 6, "finish after the final release: at seq 6");
    like (ptext (1), "finish after the final release (seq 5)",
          "finish after the final release: says so");

    l = list_whole ();
    json_array_insert (l, 5, json_array_get (l, 5));
    one_problem (run (l), 6, "second finish (the first is at seq 5)",
                 "finish twice");

    l = list_whole ();
    json_array_insert (l, 1, json_array_get (l, 1));
    one_problem (run (l), 2, "second start (the first is at seq 1)",
                 "start twice");

    l = list_new (true);
    add (l, "prolog-start", "{s:s}", "description", "cairn.prolog");
    add (l, "start", "{}");
    one_problem (run (l), 2,
                 "start before prolog-finish (prolog-start is at seq 1)",
                 "start during the prolog");

    l = list_whole ();
    add (l, "log", "{s:s s:i s:s s:s}", "stream", "stdout", "rank", 0, "phase",
         "shell", "data", "late");
    one_problem (run (l), 9, "log after clean (seq 8): clean must be last",
                 "an event after clean");

    l = list_whole ();
    add (l, "proc-late", "{s:s s:s s:i}", "execid", X1, "state", "ended",
         "status", 9);
    is_int (run (l), 0, "a late report after clean: no problem");

    l = list_whole ();
    add (l, "proc-late", "{s:s s:s s:i}", "execid",
         "00000000-0000-4000-8000-00000000dead", "state", "ended", "status", 9);
    one_problem (run (l), 9, "job_apply refuses proc-late",
                 "a late report after clean of no process of the job");

    l = list_whole ();
    json_array_remove (l, find (l, "finish", 0));
    n = run (l);
    is_int (n, 4, "clean without finish: four problems");
    if (n != 4)
        dump_problems ();
    is_int (pseq (0), 5, "clean without finish: cleanup in run at seq 5");
    like (ptext (0), "job_apply refuses cleanup: event cleanup in state run",
          "clean without finish: the fold says so");
    like (ptext (3), "clean, but the job started (seq 1) and never finished",
          "clean without finish: says so");

    l = list_new (false);
    add (l, "start", "{}");
    intent (l, X1, "shell", "0-1");
    add (l, "finish", "{s:i}", "status", 0);
    release (l, "0-1", true);
    add (l, "clean", "{}");
    is_int (run (l), 2, "clean with a process never ended: two problems");
    like (ptext (0), "rank(s) 0-1 released while process " X1,
          "the release under it is reported");
    like (ptext (1),
          "clean, but process " X1 " (shell, intent at seq 2) never ended",
          "the process left behind is reported at clean");
    is_int (pseq (1), 5, "at the clean event");
}

static void test_prolog_failure (void)
{
    json_t *l = list_new (true);
    add (l, "prolog-start", "{s:s}", "description", "cairn.prolog");
    intent (l, X1, "prolog", "0-1");
    spawn (l, X1);
    pexit (l, X1, 256);
    add (l, "prolog-finish", "{s:s s:i}", "description", "cairn.prolog",
         "status", 256);
    one_problem (run (l), 5,
                 "prolog-finish reports a failed prolog (status 256) but no "
                 "fatal exception came before it",
                 "failed prolog without exception");

    l = list_new (true);
    add (l, "prolog-start", "{s:s}", "description", "cairn.prolog");
    intent (l, X1, "prolog", "0-1");
    spawn (l, X1);
    pexit (l, X1, 256);
    add (l, "exception", "{s:s s:i s:s}", "type", "prolog", "severity", 0,
         "note", "prolog failed");
    add (l, "prolog-finish", "{s:s s:i}", "description", "cairn.prolog",
         "status", 256);
    is_int (run (l), 0, "failed prolog after its exception: fine");

    l = list_new (false);
    add (l, "prolog-finish", "{s:s s:i}", "description", "cairn.prolog",
         "status", 0);
    one_problem (run (l), 1, "prolog-finish without prolog-start",
                 "prolog-finish alone");
}

static void test_procs (void)
{
    json_t *l = list_new (false);
    add (l, "start", "{}");
    pexit (l, X1, 0);
    one_problem (run (l), 2, "proc-exit for execid " X1 " with no proc-intent",
                 "an exit without intent");

    l = list_new (false);
    add (l, "start", "{}");
    add (l, "proc-signal", "{s:s s:i s:s}", "execid", X2, "signum", 15,
         "reason", "terminate");
    one_problem (run (l), 2,
                 "proc-signal for execid " X2 " with no proc-intent",
                 "a signal without intent");

    l = list_whole ();
    json_array_insert (l, 5, json_array_get (l, 4));
    one_problem (run (l), 5, "process " X1 " ended twice (first at seq 4)",
                 "an exit duplicated");

    l = list_whole ();
    json_array_insert (l, 4, json_array_get (l, 3));
    one_problem (run (l), 4, "process " X1 " spawned twice (first at seq 3)",
                 "a spawn duplicated");

    l = list_whole ();
    json_array_insert_new (l, 5,
                           eventlog_entry_pack (T0 + 3, "proc-signal",
                                                "{s:s s:i s:s}", "execid", X1,
                                                "signum", 9, "reason", "kill"));
    one_problem (run (l), 5,
                 "proc-signal for process " X1 " after it ended (seq 4)",
                 "a signal after the end");

    l = list_whole ();
    json_array_insert (l, 3, json_array_get (l, 2));
    one_problem (run (l), 3,
                 "proc-intent for execid " X1 ", which seq 2 introduced "
                 "already",
                 "an intent duplicated");

    l = list_whole ();
    json_array_insert_new (l, 5,
                           eventlog_entry_pack (T0 + 3, "proc-lost",
                                                "{s:s s:s}", "execid", X1,
                                                "note", "x"));
    one_problem (run (l), 5, "process " X1 " ended twice (first at seq 4)",
                 "lost after exit");
}

static void test_fold (void)
{
    json_t *l = list_whole ();
    json_array_set_new (
        l, 7, eventlog_entry_pack (T0 + 9, "release", "{s:s}", "ranks", "0-1"));
    is_int (run (l), 2,
            "a release without final: refused, then its "
            "consequence");
    like (ptext (0), "job_apply refuses release: release: missing final",
          "the fold's refusal is reported with its reason");
    like (ptext (1), "clean without a final release",
          "and the missing final release at clean");

    l = list_whole ();
    json_array_set_new (l, 3, json_string ("junk"));
    is_int (run (l), 1, "a malformed element: one problem");
    like (ptext (0), "malformed event (not an RFC 18 entry)",
          "malformed element reported");

    l = json_array ();
    tnow = T0;
    add (l, "accept", "{s:i}", "userid", 0);
    add (l, "start", "{}");
    is_int (run (l), 1, "an accept the fold refuses: one problem");
    like (ptext (0), "job_apply refuses accept: accept: missing",
          "the refused accept is reported");

    json_t *p = json_array ();
    json_t *o = json_object ();
    errno = 0;
    is_errno (verify_job (1, o, p), EINVAL, "events not an array: EINVAL");
    json_decref (o);
    is_errno (verify_job (1, p, NULL), EINVAL, "problems NULL: EINVAL");
    json_decref (p);
}

static void test_record (void)
{
    json_t *l = list_whole ();
    json_t *p = json_array ();

    is_int (verify_record (9, false, l, p), 0, "record matches a clean job");
    is_int (verify_record (8, false, l, p), 1, "nevents mismatch found");
    like (
        json_string_value (json_object_get (json_array_get (p, 0), "problem")),
        "the job record counts 8 events, but 9 were read",
        "nevents mismatch says so");
    is_int (verify_record (9, true, l, p), 1, "active but clean found");
    like (
        json_string_value (json_object_get (json_array_get (p, 1), "problem")),
        "the job record marks the job active, but it has a clean event",
        "active but clean says so");
    json_array_remove (l, 8);
    is_int (verify_record (8, false, l, p), 1, "done without clean found");
    like (
        json_string_value (json_object_get (json_array_get (p, 2), "problem")),
        "the job record marks the job done, but it has no clean event",
        "done without clean says so");
    is_int (verify_record (8, true, l, p), 0, "record matches an active job");
    json_decref (l);
    json_decref (p);
}

int main (void)
{
    plan (NO_PLAN);
    test_decided ();
    test_seqs ();
    test_release ();
    test_order ();
    test_prolog_failure ();
    test_procs ();
    test_fold ();
    test_record ();
    json_decref (problems);
    return done_testing ();
}
