/* t_jobtable.c - the daemon's job table (jobtable.h) alone, on a loop of
 * its own, with a fake `due`: entries by id, the dirty list (once per
 * turn, newest first, taken in that order), the count of events acted on,
 * and each job's deadline timer. Before it was a room (issue 52) it was
 * part of daemon.c and only a whole cairnd could exercise it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "unit/fakebackend.h"

#include "core/eventlog.h"
#include "exec/jobtable.h"

struct fake_due {
    int calls;
    struct jobentry *last;
    int forgot; /* entries the table asked to forget */
    uint64_t forgot_id;
};

static void fake_due (void *arg, struct jobentry *je)
{
    struct fake_due *f = arg;
    f->calls++;
    f->last = je;
}

/* The daemon drops a job's streams here: the entry is still whole. */
static void fake_forget (void *arg, struct jobentry *je)
{
    struct fake_due *f = arg;
    f->forgot++;
    f->forgot_id = job_id (je->job);
}

static const struct jobtable_ops ops = {.due = fake_due, .forget = fake_forget};

static double now_real (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One event into je's pending, as a decision of the turn would. */
static void emit (struct jobentry *je)
{
    json_t *e =
        eventlog_entry_pack (1.0, "expiration", "{s:f}", "expiration", 2.0);
    if (!e || json_array_append_new (je->pending, e) < 0)
        BAIL_OUT ("out of memory");
}

static void test_entries (struct ev_loop *loop)
{
    struct fake_due f = {0};
    struct jobtable *t = jobtable_create (loop, &ops, &f);
    struct job *a = job_create (42), *b = job_create (7);

    ok (t && a && b, "entries: table and jobs made");
    struct jobentry *ja = jobtable_add (t, a);
    struct jobentry *jb = jobtable_add (t, b);
    ok (ja && jb, "entries: two added");
    ok (ja && ja->table == t && ja->job == a,
        "entries: the entry holds its job and its table");
    is_str (ja ? ja->key : "", "42", "entries: keyed by decimal id");
    like (ja ? ja->name : "", "42 (", "entries: named by id and F58 id");
    ok (jobtable_get (t, 42) == ja && jobtable_get (t, 7) == jb,
        "entries: found by id");
    ok (jobtable_get (t, 8) == NULL, "entries: an unknown id is NULL");
    is_int ((int)jobtable_count (t), 2, "entries: two counted");
    size_t pos = 0, n = 0;
    while (jobtable_next (t, &pos))
        n++;
    is_int ((int)n, 2, "entries: two walked");
    ok (jobtable_dirty_first (t) == NULL && jobtable_dirty_take (t) == NULL,
        "entries: none dirty");
    jobtable_remove (jb);
    ok (f.forgot == 1 && f.forgot_id == 7,
        "entries: the daemon was asked to forget it, while it was whole");
    ok (jobtable_get (t, 7) == NULL, "entries: removed, not found");
    is_int ((int)jobtable_count (t), 1, "entries: one left");
    jobtable_destroy (t); /* frees the one left: ASan sees no leak */
    ok (f.forgot == 2 && f.forgot_id == 42,
        "entries: destroying the table forgets the one left");
}

static void test_dirty (struct ev_loop *loop)
{
    struct fake_due f = {0};
    struct jobtable *t = jobtable_create (loop, &ops, &f);
    struct jobentry *a = jobtable_add (t, job_create (1));
    struct jobentry *b = jobtable_add (t, job_create (2));

    jobtable_dirty (a);
    ok (!a->dirty && jobtable_dirty_first (t) == NULL,
        "dirty: nothing pending, not dirty");
    emit (a);
    jobtable_dirty (a);
    emit (b);
    jobtable_dirty (b);
    emit (a);
    jobtable_dirty (a); /* a second decision of a's this turn */
    ok (a->dirty && b->dirty, "dirty: both dirty");
    ok (jobtable_dirty_first (t) == b && b->dirty_next == a &&
            a->dirty_next == NULL,
        "dirty: each once, newest first");
    ok (jobtable_dirty_take (t) == b && !b->dirty, "dirty: b taken, clean");
    ok (jobtable_dirty_first (t) == a, "dirty: a is first then");
    ok (jobtable_dirty_take (t) == a && !a->dirty, "dirty: a taken");
    ok (jobtable_dirty_take (t) == NULL, "dirty: none left");
    jobtable_dirty (a);
    ok (jobtable_dirty_first (t) == a, "dirty: a pending again is dirty again");
    (void)jobtable_dirty_take (t);
    jobtable_destroy (t);
}

/* acted = the job's events - pending (not staged) - unacted (staged, their
 * effects not run): how far a reattach's backlog may read. */
static void test_acted (struct ev_loop *loop)
{
    struct fake_due f = {0};
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    double now = now_real ();
    struct jobtable *t = jobtable_create (loop, &ops, &f);

    job_config_init (&jc);
    if (fake_accept (&fb, 5, now, getuid (), &jc, 1, now + 3600, 0, getuid (),
                     NULL, &err) < 0)
        BAIL_OUT ("fake_accept: %s", err.text);
    uint32_t nev = job_nevents (fb.job);
    struct jobentry *je = jobtable_add (t, fb.job);
    fb.job = NULL; /* the table's */
    ok (nev > 2, "acted: the job has %u events", (unsigned)nev);
    is_int ((int)jobtable_acted (je), (int)nev, "acted: all, none pending");
    /* the last two as if still pending, one of the others staged only */
    json_array_append (je->pending, json_array_get (fb.out, 0));
    json_array_append (je->pending, json_array_get (fb.out, 1));
    je->unacted = 1;
    is_int ((int)jobtable_acted (je), (int)nev - 3,
            "acted: pending and unacted events are not");

    /* its deadline: the timer armed a hair after it, and stopped */
    double deadline = job_next_deadline (je->job);
    ok (deadline > now, "timer: the job has a deadline");
    jobtable_rearm (je);
    ok (ev_is_active (&je->timer), "timer: armed");
    double left = ev_timer_remaining (loop, &je->timer);
    ok (fabs (left - (deadline - now_real ())) < 1.0,
        "timer: due at the job's deadline (%.3f s left, deadline in %.3f s)",
        left, deadline - now_real ());
    ev_feed_event (loop, &je->timer, EV_TIMER);
    ev_run (loop, EVRUN_NOWAIT);
    ok (f.calls == 1 && f.last == je, "timer: due tells its job");
    jobtable_remove (je); /* stops its timer */
    is_int (ev_run (loop, EVRUN_NOWAIT), 0,
            "timer: a removed job leaves no watcher on the loop");
    fake_fini (&fb);
    jobtable_destroy (t);
}

static void test_no_deadline (struct ev_loop *loop)
{
    struct fake_due f = {0};
    struct jobtable *t = jobtable_create (loop, &ops, &f);
    struct jobentry *je = jobtable_add (t, job_create (9));

    jobtable_rearm (je);
    ok (!ev_is_active (&je->timer), "timer: no deadline, not armed");
    jobtable_destroy (t);
}

int main (void)
{
    struct ev_loop *loop = ev_loop_new (EVFLAG_AUTO);
    if (!loop)
        BAIL_OUT ("ev_loop_new");
    test_entries (loop);
    test_dirty (loop);
    test_acted (loop);
    test_no_deadline (loop);
    ev_loop_destroy (loop);
    return done_testing ();
}
