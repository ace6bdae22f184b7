/* t_localproc.c - a job's processes here (localproc.h), alone: lent a
 * fake supervisor (fakeprocs.h), a job table holding one accepted job,
 * the jobs' context and live output, with no daemon, journal or socket.
 * Before the room was lent these (issue 52) it read them through the
 * daemon's struct (je->d), and could only be tested through a whole
 * cairnd. What each answer of the supervisor becomes is the job's pending
 * events, and the job is put on the dirty list for the turn. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#include "fakeprocs.h"
#include "jtmp.h"

#include "core/config.h"
#include "core/eventlog.h"
#include "core/jobspec.h"
#include "core/rv1.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/localproc.h"
#include "exec/output.h"
#include "exec/streams.h"

struct world {
    char *dir;
    struct ev_loop *loop;
    struct cairn_config cfg;
    struct procs *procs;
    struct jobctx *jctx;
    struct streams *streams;
    struct output *output;
    struct jobtable *jobs;
    struct localproc *lp;
    struct jobentry *je;
};

static bool away (void *arg, uint64_t id)
{
    (void)arg, (void)id;
    return false;
}
static const struct jobctx_ops jctx_ops = {.client_away = away};

static void due (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
}
static void forget (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
}
static const struct jobtable_ops jobs_ops = {.due = due, .forget = forget};

static void watch (void *arg, int delta)
{
    (void)arg, (void)delta;
}
static const struct streams_ops streams_ops = {.watch = watch};

/* A job of one rank, accepted (its shell an intent), in a table. */
static void world_open (struct world *w)
{
    struct cairn_error err = {{0}};
    struct job_config jc;
    struct job_ctx ctx;
    char *av[] = {"/bin/app", NULL};
    json_t *R = rv1_create (1, 1, "node0", 0);
    json_t *js = jobspec_create (av, 1, "/tmp", NULL, 0, 0);
    json_t *out = json_array ();
    struct job *job = job_create (7);

    memset (w, 0, sizeof (*w));
    w->dir = tmpdir_create_as ("t_localproc");
    config_init (&w->cfg);
    job_config_init (&jc);
    if (!(w->loop = ev_loop_new (0)) ||
        !(w->procs = procs_create ("cairn-shim", &err)) ||
        procs_open (w->procs, w->dir, NULL, "i", "boot", NULL, &err) < 0 ||
        !(w->jctx = jobctx_create (getuid (), &jctx_ops, NULL)) ||
        !(w->streams = streams_create (&streams_ops, NULL)) ||
        !(w->output = output_create (w->loop, w->streams, w->procs, &w->cfg)) ||
        !(w->jobs = jobtable_create (w->loop, &jobs_ops, NULL)) ||
        !(w->lp = localproc_create (w->procs, w->jctx, w->output, "boot")))
        BAIL_OUT ("cannot set up: %s", err.text);
    jobctx_fill (w->jctx, &ctx);
    if (!R || !js || !out || !job ||
        job_accept (job, &ctx, getuid (), R, js, &jc, out, &err) < 0 ||
        !(w->je = jobtable_add (w->jobs, job)))
        BAIL_OUT ("cannot accept the job: %s", err.text);
    job_config_free (&jc);
    json_decref (R);
    json_decref (js);
    json_decref (out);
}

static void world_close (struct world *w)
{
    json_array_clear (w->je->pending); /* never staged: nothing is lost */
    while (jobtable_dirty_take (w->jobs))
        ;
    localproc_destroy (w->lp);
    jobtable_destroy (w->jobs);
    output_destroy (w->output);
    streams_destroy (w->streams);
    jobctx_destroy (w->jctx);
    procs_destroy (w->procs);
    ev_loop_destroy (w->loop);
    config_free (&w->cfg);
    tmpdir_destroy (w->dir);
}

/* The job's first process still an intent, or NULL. */
static const struct job_proc *intent (struct world *w)
{
    for (size_t i = 0; i < job_nprocs (w->je->job); i++) {
        const struct job_proc *p = job_proc_at (w->je->job, i);
        if (p->state == PROC_INTENT)
            return p;
    }
    return NULL;
}

/* The names of the job's pending events, space-separated. */
static const char *pending (struct world *w)
{
    static char buf[512];
    size_t i;
    json_t *entry;
    const char *name;
    buf[0] = '\0';
    json_array_foreach (w->je->pending, i, entry)
    {
        eventlog_entry_fields (entry, NULL, &name, NULL);
        size_t n = strlen (buf);
        snprintf (buf + n, sizeof (buf) - n, "%s%s", n ? " " : "",
                  name ? name : "?");
    }
    return buf;
}

static void test_started_then_ended (void)
{
    struct world w;
    world_open (&w);
    const struct job_proc *p = intent (&w);
    char execid[EXECID_LEN + 1];

    if (!p)
        BAIL_OUT ("the accepted job has no intent");
    snprintf (execid, sizeof (execid), "%s", p->execid);
    is_int (localproc_spawn (w.lp, w.je, execid), 0,
            "spawn: asked of the supervisor");
    is_int (fake_nstarts_of (execid), 1, "spawn: one start asked");
    ok (w.je->local == w.lp, "spawn: the job knows the room that runs it");
    is_str (pending (&w), "", "spawn: nothing to journal before the answer");

    struct fake_start *s = fake_next_asked ();
    ok (s && s->owner == w.je, "spawn: the job is the owner procs answers");
    if (!s)
        BAIL_OUT ("no start asked");
    pid_t pid = fake_answer (s, PROCS_STARTED, NULL);
    ok (pid > 0, "started: a pid");
    is_str (pending (&w), "proc-spawn", "started: proc-spawn pending");
    ok (w.je->dirty, "started: the job is dirty");
    ok (procs_watched (w.procs, execid), "started: it is watched");

    localproc_signal (w.lp, w.je, execid, SIGTERM);
    is_int (fake_signal_of (execid), SIGTERM, "signal: sent to it");

    is_int (fake_end (execid, 0), 0, "ended: its record written");
    like (pending (&w), "proc-exit", "ended: proc-exit pending");
    world_close (&w);
}

static void test_failed (void)
{
    struct world w;
    world_open (&w);
    const struct job_proc *p = intent (&w);
    char execid[EXECID_LEN + 1];

    if (!p)
        BAIL_OUT ("the accepted job has no intent");
    snprintf (execid, sizeof (execid), "%s", p->execid);
    (void)localproc_spawn (w.lp, w.je, execid);
    struct fake_start *s = fake_next_asked ();
    if (!s)
        BAIL_OUT ("no start asked");
    fake_answer (s, PROCS_FAILED, "no such shim");
    /* the job decides at once what a failed shell means (its end) */
    ok (!strncmp (pending (&w), "proc-fail ", 10),
        "failed: proc-fail pending first (%s)", pending (&w));
    ok (w.je->dirty, "failed: the job is dirty");
    ok (!procs_watched (w.procs, execid), "failed: nothing watched");
    world_close (&w);
}

static void test_spawn_not_intent (void)
{
    struct world w;
    world_open (&w);
    is_int (
        localproc_spawn (w.lp, w.je, "00000000-0000-4000-8000-00000000dead"), 0,
        "an unknown execid: nothing to start");
    is_int ((int)fake_procs->nstarts, 0, "an unknown execid: nothing asked");
    world_close (&w);
}

int main (void)
{
    plan (NO_PLAN);
    test_started_then_ended ();
    test_failed ();
    test_spawn_not_intent ();
    return done_testing ();
}
