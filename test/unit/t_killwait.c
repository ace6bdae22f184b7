/* t_killwait.c - kills held until their job's shells start (killwait.h),
 * alone: the jobs and connections are addresses the room never reads, and
 * carrying a kill out is a fake that records each call. Before the room
 * was lent its kill (issue 52) it called the service's, and could only be
 * tested through a whole cairnd. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

#include "exec/killwait.h"

/* Distinct addresses stand for jobs and connections. */
static char jobs_[3], conns_[3];
#define JOB(i) ((struct jobentry *)&jobs_[i])
#define CONN(i) ((struct conn *)&conns_[i])

/* What the fake kill was asked, in order: "job:conn:matchtag:signum,". */
struct fake {
    char calls[1024];
    struct killwait *kw; /* to hold another kill from within a kill */
    int add_on_kill;     /* matchtag to hold for the same job, or 0 */
};

static void fake_kill (void *arg,
                       struct jobentry *je,
                       struct conn *c,
                       int64_t matchtag,
                       int signum)
{
    struct fake *f = arg;
    size_t n = strlen (f->calls);
    snprintf (f->calls + n, sizeof (f->calls) - n, "%d:%d:%lld:%d,",
              (int)((char *)je - jobs_), (int)((char *)c - conns_),
              (long long)matchtag, signum);
    if (f->add_on_kill) {
        int tag = f->add_on_kill;
        f->add_on_kill = 0;
        (void)killwait_add (f->kw, je, c, tag, 9);
    }
}

static const struct killwait_ops ops = {.kill = fake_kill};

static void test_empty (void)
{
    struct fake f = {.add_on_kill = 0};
    struct killwait *kw = killwait_create (&ops, &f);

    ok (kw != NULL, "empty: created");
    ok (!killwait_holds (kw, JOB (0)), "empty: no job holds a kill");
    killwait_run (kw, JOB (0));
    killwait_drop (kw, JOB (0));
    killwait_conn_gone (kw, CONN (0));
    is_str (f.calls, "", "empty: running a job's kills carries out none");
    is_int ((int)killwait_count (kw), 0, "empty: none counted");
    killwait_destroy (kw);
}

/* Each job's kills are carried out in the order they came, and only its. */
static void test_order (void)
{
    struct fake f = {.add_on_kill = 0};
    struct killwait *kw = killwait_create (&ops, &f);

    is_int (killwait_add (kw, JOB (0), CONN (0), 1, 15), 0, "order: A 1 held");
    is_int (killwait_add (kw, JOB (1), CONN (1), 2, 2), 0, "order: B 2 held");
    is_int (killwait_add (kw, JOB (0), CONN (2), 3, 9), 0, "order: A 3 held");
    is_int ((int)killwait_count (kw), 3, "order: three wait");
    ok (killwait_holds (kw, JOB (0)) && killwait_holds (kw, JOB (1)) &&
            !killwait_holds (kw, JOB (2)),
        "order: A and B hold kills, C none");
    killwait_run (kw, JOB (0));
    is_str (f.calls, "0:0:1:15,0:2:3:9,",
            "order: A's two kills carried out, oldest first, B's not");
    ok (!killwait_holds (kw, JOB (0)), "order: A holds none after its run");
    is_int ((int)killwait_count (kw), 1, "order: B's one still waits");
    /* A's were taken from the middle and the end: a kill held now goes
     * after B's, which a stale tail would lose */
    is_int (killwait_add (kw, JOB (1), CONN (1), 4, 1), 0, "order: B 4 held");
    f.calls[0] = '\0';
    killwait_run (kw, JOB (1));
    is_str (f.calls, "1:1:2:2,1:1:4:1,",
            "order: B's kills, the one held after A's run last");
    is_int ((int)killwait_count (kw), 0, "order: none left");
    killwait_destroy (kw);
}

/* A client that went away is never answered: its kills are not carried
 * out, nor counted as waiting. */
static void test_conn_gone (void)
{
    struct fake f = {.add_on_kill = 0};
    struct killwait *kw = killwait_create (&ops, &f);

    killwait_add (kw, JOB (0), CONN (0), 1, 15);
    killwait_add (kw, JOB (0), CONN (1), 2, 15);
    killwait_conn_gone (kw, CONN (0));
    is_int ((int)killwait_count (kw), 1, "conn gone: only the other counts");
    killwait_run (kw, JOB (0));
    is_str (f.calls, "0:1:2:15,", "conn gone: only the other is carried out");
    ok (!killwait_holds (kw, JOB (0)), "conn gone: the job holds none after");
    killwait_destroy (kw);
}

/* KILLWAIT_MAX per job, not in all; a dropped job's kills go unanswered. */
static void test_limit_drop (void)
{
    struct fake f = {.add_on_kill = 0};
    struct killwait *kw = killwait_create (&ops, &f);
    int rc = 0;

    for (int i = 0; i < KILLWAIT_MAX && rc == 0; i++)
        rc = killwait_add (kw, JOB (0), CONN (0), i + 1, 15);
    is_int (rc, 0, "limit: %d kills held", KILLWAIT_MAX);
    is_errno (killwait_add (kw, JOB (0), CONN (0), 99, 15), EAGAIN,
              "limit: one more of the same job refused");
    is_int (killwait_add (kw, JOB (1), CONN (0), 100, 15), 0,
            "limit: another job's is held");
    killwait_drop (kw, JOB (0));
    ok (!killwait_holds (kw, JOB (0)), "drop: the job holds none");
    is_int ((int)killwait_count (kw), 1, "drop: the other job's still waits");
    killwait_run (kw, JOB (0));
    is_str (f.calls, "", "drop: none of the dropped job's carried out");
    is_int (killwait_add (kw, JOB (0), CONN (0), 101, 15), 0,
            "drop: the job may hold kills again");
    killwait_destroy (kw); /* with kills held: ASan sees no leak */
}

/* A kill carried out may lead to another being held (its job's shells
 * start again): it waits for the next run, not this one. */
static void test_reentry (void)
{
    struct fake f = {.add_on_kill = 0};
    struct killwait *kw = killwait_create (&ops, &f);

    f.kw = kw;
    f.add_on_kill = 7;
    killwait_add (kw, JOB (0), CONN (0), 1, 15);
    killwait_run (kw, JOB (0));
    is_str (f.calls, "0:0:1:15,", "reentry: the held kill carried out");
    ok (killwait_holds (kw, JOB (0)), "reentry: the one held meanwhile waits");
    f.calls[0] = '\0';
    killwait_run (kw, JOB (0));
    is_str (f.calls, "0:0:7:9,", "reentry: and goes at the next run");
    killwait_destroy (kw);
}

int main (void)
{
    test_empty ();
    test_order ();
    test_conn_gone ();
    test_limit_drop ();
    test_reentry ();
    return done_testing ();
}
