/* t_jobstate.c - job.h's transition table, enforced by job_apply().
 *
 * Two decided jobs give a journal prefix for each state: one with a
 * per-rank prolog and epilog that runs to its end (new, prolog, starting,
 * run, cleanup, done), one whose tolerated prolog failure holds it (held).
 * Then, for every event of the table and every state, the event is
 * folded into a job replayed to that state: a state outside the event's
 * "from" column is refused with EINVAL and "event NAME in state STATE"
 * (one test per such pair), a state inside it never with that message.
 * Last, the checks the fold adds to the table (a process's phase, a final
 * release) and the "to" column of each state-changing event.
 */
#include <stdarg.h>

#include "tap.h"
#include "fakebackend.h"
#include "core/eventlog.h"
#include "core/jobspec.h"
#include "core/rv1.h"

#define T0 1700000000.0
#define OWNER 1000
#define JOBID 42
#define NSTATES (JOB_DONE + 1)

static const char *const ev_names[JOB_EV_COUNT] = {
#define NAME_OF(ev, name, from, to, effect, response, progress) [ev] = name,
    JOB_TRANSITIONS (NAME_OF)
#undef NAME_OF
};
static const unsigned ev_from[JOB_EV_COUNT] = {
#define FROM_OF(ev, name, from, to, effect, response, progress) [ev] = from,
    JOB_TRANSITIONS (FROM_OF)
#undef FROM_OF
};
static const int ev_to[JOB_EV_COUNT] = {
#define TO_OF(ev, name, from, to, effect, response, progress) [ev] = to,
    JOB_TRANSITIONS (TO_OF)
#undef TO_OF
};

/* A decided job of two ranks: jc (freed here), hold-on-shrink if hold. */
static void decided (struct fake *fb, struct job_config *jc, bool hold)
{
    struct cairn_error err;
    if (fake_accept (fb, JOBID, T0, OWNER, jc, 2, 0, 1, OWNER,
                     hold ? json_pack ("{s:b}", "hold-on-shrink", 1) : NULL,
                     &err) < 0)
        BAIL_OUT ("cannot set up the job: %s",
                  err.text[0] ? err.text : strerror (errno));
}

static char **argv1 (const char *s)
{
    char **argv = calloc (2, sizeof (*argv));
    if (!argv || !(argv[0] = strdup (s)))
        BAIL_OUT ("out of memory");
    return argv;
}

static void perilog (struct job_config *jc)
{
    job_config_init (jc);
    jc->prolog.command = argv1 ("/etc/prolog");
    jc->prolog.per_rank = true;
    jc->epilog.command = argv1 ("/etc/epilog");
    jc->epilog.per_rank = true;
}

/* Histories: the whole job, and the held one. */
static struct fake whole, held;

static void histories (void)
{
    struct job_config jc;
    struct cairn_error err;

    perilog (&jc);
    decided (&whole, &jc, false);
    fake_spawn_all (&whole);
    fake_exit_phase (&whole, PHASE_PROLOG, 0);
    fake_spawn_all (&whole);
    fake_exit_phase (&whole, PHASE_SHELL, 0);
    fake_spawn_all (&whole);
    fake_exit_phase (&whole, PHASE_EPILOG, 0);
    if (job_state (whole.job) != JOB_DONE)
        BAIL_OUT ("the whole job did not end: %s",
                  job_state_name (job_state (whole.job)));

    perilog (&jc);
    jc.prolog.tolerable_exit_codes = malloc (sizeof (int));
    if (!jc.prolog.tolerable_exit_codes)
        BAIL_OUT ("out of memory");
    jc.prolog.tolerable_exit_codes[0] = 7;
    jc.prolog.ntolerable = 1;
    decided (&held, &jc, true);
    fake_spawn_all (&held);
    fake_exit (&held, PHASE_PROLOG, 0, 0);
    fake_exit (&held, PHASE_PROLOG, 1, 7 << 8);
    if (job_state (held.job) != JOB_HELD)
        BAIL_OUT ("the held job is %s", job_state_name (job_state (held.job)));
    (void)err;
}

/* A job replayed from fb's events up to the first that puts it in state
 * (after every event when state is done), or NULL if none does. */
static struct job *replay_to (struct fake *fb, enum job_state state)
{
    struct cairn_error err;
    struct job *job = job_create (JOBID);
    size_t i;
    json_t *entry;

    json_array_foreach (fb->out, i, entry)
    {
        if (job_apply (job, entry, &err) < 0)
            BAIL_OUT ("replay: %s", err.text);
        /* accept leaves the job new: stop there for new */
        if (job_state (job) == state)
            return job;
    }
    job_destroy (job);
    return NULL;
}

static struct job *job_in (enum job_state state)
{
    struct job *job = replay_to (state == JOB_HELD ? &held : &whole, state);
    if (!job)
        BAIL_OUT ("no history reaches state %s", job_state_name (state));
    return job;
}

/* An entry of event ev with a context that the fold would take, as far as
 * one can be made without knowing the job: the state check comes first. */
static json_t *entry_of (enum job_event ev)
{
    json_t *ctx =
        json_pack ("{s:s s:s s:s s:i s:b s:b s:s s:i s:F}", "execid",
                   "00000000-0000-4000-8000-000000000001", "phase", "epilog",
                   "ranks", "0", "status", 0, "final", 0, "epilog", 0, "type",
                   "test", "severity", 1, "expiration", 0.0);
    json_t *e = eventlog_entry_create (T0 + 1000, ev_names[ev], ctx);
    if (!e)
        BAIL_OUT ("cannot make an event");
    return e;
}

static void test_illegal (void)
{
    for (int s = 0; s < NSTATES; s++) {
        for (int ev = 0; ev < JOB_EV_COUNT; ev++) {
            if (ev_from[ev] & JOB_IN (s))
                continue;
            struct cairn_error err = {{0}};
            struct job *job = job_in ((enum job_state)s);
            json_t *e = entry_of ((enum job_event)ev);
            char want[128];
            if (s == JOB_DONE)
                snprintf (want, sizeof (want), "event %s after clean",
                          ev_names[ev]);
            else
                snprintf (want, sizeof (want), "event %s in state %s",
                          ev_names[ev], job_state_name ((enum job_state)s));
            uint32_t n = job_nevents (job);
            is_errno (job_apply (job, e, &err), EINVAL, "%s in %s: refused",
                      ev_names[ev], job_state_name ((enum job_state)s));
            if (strcmp (err.text, want) != 0)
                diag ("  expected \"%s\", got \"%s\"", want, err.text);
            ok (strcmp (err.text, want) == 0 && job_nevents (job) == n &&
                    job_state (job) == (enum job_state)s,
                "%s in %s: says so, changes nothing", ev_names[ev],
                job_state_name ((enum job_state)s));
            json_decref (e);
            job_destroy (job);
        }
    }
}

static void test_legal_states (void)
{
    int bad = 0;
    for (int s = 0; s < NSTATES; s++) {
        for (int ev = 0; ev < JOB_EV_COUNT; ev++) {
            if (!(ev_from[ev] & JOB_IN (s)) || ev == JOB_EV_ACCEPT)
                continue;
            struct cairn_error err = {{0}};
            struct job *job = job_in ((enum job_state)s);
            json_t *e = entry_of ((enum job_event)ev);
            if (job_apply (job, e, &err) < 0 &&
                (strstr (err.text, " in state ") ||
                 strstr (err.text, " after clean"))) {
                diag ("  %s in %s: %s", ev_names[ev],
                      job_state_name ((enum job_state)s), err.text);
                bad++;
            }
            json_decref (e);
            job_destroy (job);
        }
    }
    is_int (bad, 0,
            "no event is refused for its state where the table "
            "allows it");
}

/* The "to" column: each state-changing event of the histories leaves the
 * job in its row's state (cleanup: once every rank is in cleanup). */
static void test_to (void)
{
    struct fake *hs[] = {&whole, &held};
    int checked = 0, bad = 0;
    for (size_t h = 0; h < 2; h++) {
        struct cairn_error err;
        struct job *job = job_create (JOBID);
        size_t i;
        json_t *entry;
        json_array_foreach (hs[h]->out, i, entry)
        {
            enum job_event ev = job_event_of (fake_event_name (entry));
            enum job_state before = job_state (job);
            if (job_apply (job, entry, &err) < 0)
                BAIL_OUT ("replay: %s", err.text);
            if (ev == JOB_EV_OTHER)
                continue;
            int want = ev_to[ev] == JOB_SAME ? (int)before : ev_to[ev];
            if (ev == JOB_EV_CLEANUP && job_state (job) != JOB_CLEANUP)
                want = (int)before; /* some ranks are not in cleanup yet */
            checked++;
            if ((int)job_state (job) != want) {
                diag ("  %s: %s, not %s", ev_names[ev],
                      job_state_name (job_state (job)),
                      job_state_name ((enum job_state)want));
                bad++;
            }
        }
        job_destroy (job);
    }
    ok (checked > 20 && bad == 0,
        "each of %d events leaves the job in its row's state", checked);
}

/* What the fold checks beyond the state: a process's phase, a final
 * release before cleanup. */
static void test_fold_checks (void)
{
    static const struct {
        enum job_state state;
        const char *phase;
    } wrong[] = {
        {JOB_RUN, "prolog"},    {JOB_CLEANUP, "prolog"}, {JOB_PROLOG, "shell"},
        {JOB_CLEANUP, "shell"}, {JOB_PROLOG, "epilog"},
    };
    for (size_t i = 0; i < sizeof (wrong) / sizeof (wrong[0]); i++) {
        struct cairn_error err = {{0}};
        struct job *job = job_in (wrong[i].state);
        json_t *e = eventlog_entry_create (
            T0 + 1000, "proc-intent",
            json_pack ("{s:s s:s s:s}", "execid",
                       "00000000-0000-4000-8000-000000000999", "phase",
                       wrong[i].phase, "ranks", "0"));
        char want[128];
        snprintf (want, sizeof (want), "proc-intent: a %s process in state %s",
                  wrong[i].phase, job_state_name (wrong[i].state));
        is_errno (job_apply (job, e, &err), EINVAL,
                  "a %s intent in %s: refused", wrong[i].phase,
                  job_state_name (wrong[i].state));
        is_str (err.text, want, "a %s intent in %s: says so", wrong[i].phase,
                job_state_name (wrong[i].state));
        json_decref (e);
        job_destroy (job);
    }
    enum job_state before_cleanup[] = {JOB_STARTING, JOB_HELD, JOB_RUN};
    for (size_t i = 0; i < 3; i++) {
        struct cairn_error err = {{0}};
        struct job *job = job_in (before_cleanup[i]);
        json_t *e = eventlog_entry_create (
            T0 + 1000, "release",
            json_pack ("{s:s s:b}", "ranks", "0", "final", 1));
        is_errno (job_apply (job, e, &err), EINVAL,
                  "a final release in %s: refused",
                  job_state_name (before_cleanup[i]));
        like (err.text, "release: a final release in state",
              "a final release in %s: says so",
              job_state_name (before_cleanup[i]));
        json_decref (e);
        job_destroy (job);
    }
}

static void test_names (void)
{
    static const char *const want[] = {"new", "prolog",  "starting", "held",
                                       "run", "cleanup", "done"};
    for (int s = 0; s < NSTATES; s++)
        is_str (job_state_name ((enum job_state)s), want[s], "state %d is %s",
                s, want[s]);
    int found = 0;
    for (int ev = 0; ev < JOB_EV_COUNT; ev++)
        found += job_event_of (ev_names[ev]) == (enum job_event)ev;
    is_int (found, JOB_EV_COUNT,
            "job_event_of finds each of the table's names");
    is_int (job_event_of ("zzz"), JOB_EV_OTHER, "a name after the last");
    is_int (job_event_of (""), JOB_EV_OTHER, "the empty name");
    is_int (job_event_of ("frobnicate"), JOB_EV_OTHER,
            "a name cairn does not use is another service's");
    is_int (job_event_effect (job_event_of ("proc-intent")), JOB_EFFECT_SPAWN,
            "proc-intent spawns");
    is_int (job_event_effect (job_event_of ("proc-lost")), JOB_EFFECT_LOST,
            "proc-lost kills what is left");
}

int main (void)
{
    plan (NO_PLAN);
    histories ();
    test_names ();
    test_illegal ();
    test_legal_states ();
    test_to ();
    test_fold_checks ();
    fake_fini (&whole);
    fake_fini (&held);
    done_testing ();
}
