/* t_turn.c - the commit turn (turn.h) alone: a real journal in a
 * throwaway directory, the real outbox, job table and quotas, and this
 * file's procs_* and conn_respond in place of the supervisor's and the
 * server's (the linker takes neither library's), so that every send and
 * reply is recorded. Its ops record when a job's
 * effects run and what the journal then holds.
 *
 * What it checks is the write-ahead rule (outbox.h, O1-O5): a job's
 * effects run only once its events are committed, and a reply held for
 * a batch goes after the batch's effects; the test switch that breaks the
 * rule is caught by the same check. Before the turn was a room (issue 52)
 * only a whole cairnd (t_daemon) could show it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "unit/fakebackend.h"
#include "unit/jtmp.h"

#include "core/config.h"
#include "exec/jobtable.h"
#include "exec/quota.h"
#include "exec/turn.h"
#include "journal/outbox.h"
#include "procs/procs.h"
#include "server/server.h"

#define JOBID 4242

static char trace[1024]; /* "effects:N," "reply:TAG," "staging," in order */
static struct journal *journal;

static void note (const char *fmt, long v)
{
    size_t n = strlen (trace);
    snprintf (trace + n, sizeof (trace) - n, fmt, v);
}

/* The four procs.h calls the turn makes: no process is started. */
struct procs {
    int sends, kicks;
};
void procs_send (struct procs *p)
{
    p->sends++;
}
void procs_forget_kick (struct procs *p)
{
    p->kicks++;
}
size_t procs_count (const struct procs *p)
{
    (void)p;
    return 0;
}
size_t procs_asked (const struct procs *p)
{
    (void)p;
    return 0;
}
static struct procs procs;

/* The server's, recorded instead of sent. */
static char conns_[2];
#define CONN(i) ((struct conn *)&conns_[i])
int conn_respond (struct conn *c, int64_t matchtag, const json_t *payload)
{
    (void)c, (void)payload;
    note ("reply:%ld,", (long)matchtag);
    return 0;
}

/* Effects of a job: how many of its events the journal holds committed
 * right now (0: none, the rule broken). */
static void effects (void *arg, struct jobentry *je, json_t *events)
{
    struct journal_jobinfo info = {0};
    (void)arg;
    if (journal_job_info (journal, job_id (je->job), &info) < 0)
        info.nevents = 0;
    note ("effects:%ld,", (long)info.nevents);
}

static int staged; /* staging calls */
static void staging (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
    staged++;
}

static const struct turn_ops turn_ops = {.staging = staging,
                                         .effects = effects};

static void no_due (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
}
static void no_forget (void *arg, struct jobentry *je)
{
    (void)arg, (void)je;
}
static const struct jobtable_ops table_ops = {.due = no_due,
                                              .forget = no_forget};

struct world {
    char *dir;
    struct ev_loop *loop;
    struct cairn_config cfg;
    struct outbox *outbox;
    struct jobtable *jobs;
    struct quota *quota;
    struct procs *procs;
    struct turn *turn;
};

static void world_init (struct world *w)
{
    memset (w, 0, sizeof (*w));
    memset (&procs, 0, sizeof (procs));
    w->procs = &procs;
    w->dir = tmpdir_create_as ("t_turn");
    journal = xopen (w->dir, &(struct journal_opts){.nosync = true});
    config_init (&w->cfg);
    if (!(w->loop = ev_loop_new (EVFLAG_AUTO)) ||
        !(w->outbox = outbox_create ()) ||
        !(w->jobs = jobtable_create (w->loop, &table_ops, NULL)) ||
        !(w->quota = quota_create (journal, &w->cfg)) ||
        !(w->turn = turn_create (w->loop, journal, w->outbox, w->jobs,
                                 w->quota, w->procs, 0, &turn_ops, NULL)))
        BAIL_OUT ("world_init: out of memory");
    trace[0] = '\0';
    staged = 0;
}

static void world_fini (struct world *w)
{
    turn_destroy (w->turn);
    jobtable_destroy (w->jobs);
    quota_destroy (w->quota);
    outbox_destroy (w->outbox);
    journal_close (journal);
    ev_loop_destroy (w->loop);
    config_free (&w->cfg);
    tmpdir_destroy (w->dir);
}

/* A job accepted this turn: its first events pending, the job dirty. */
static struct jobentry *accepted (struct world *w)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;

    job_config_init (&jc);
    if (fake_accept (&fb, JOBID, 1000.0, getuid (), &jc, 1, 0, 0, getuid (),
                     NULL, &err) < 0)
        BAIL_OUT ("fake_accept: %s", err.text);
    struct jobentry *je = jobtable_add (w->jobs, fb.job);
    if (!je)
        BAIL_OUT ("jobtable_add");
    fb.job = NULL;
    json_decref (je->pending);
    je->pending = json_copy (fb.out); /* every event it made: unstaged */
    fake_fini (&fb);
    jobtable_dirty (je);
    return je;
}

static void test_write_ahead (void)
{
    struct world w;
    world_init (&w);
    struct jobentry *je = accepted (&w);
    long n = (long)json_array_size (je->pending);

    turn_ack (w.turn, CONN (0), 7, json_object ());
    turn_flush_all (w.turn);
    char want[128];
    snprintf (want, sizeof (want), "effects:%ld,reply:7,", n);
    is_str (trace, want,
            "the job's effects run with its %ld events committed, then the "
            "reply held for them",
            n);
    is_int (staged, 1, "the dirty job was staged once, told first");
    is_int ((int)je->unacted, 0, "every staged event acted on");
    is_int ((int)json_array_size (je->pending), 0, "nothing left pending");
    is_int ((int)turn_ncommits (w.turn), 1, "one commit");
    ok (jobtable_dirty_first (w.jobs) == NULL, "no job left dirty");
    ok (procs.sends > 0 && procs.kicks > 0,
        "the starts the effects queued were sent, the ends' files kicked");
    world_fini (&w);
}

/* The test switch acts first: the same check sees nothing committed. */
static void test_unsafe_caught (void)
{
    struct world w;
    world_init (&w);
    (void)accepted (&w);
    turn_unsafe_effects_first (w.turn, true);
    turn_flush_all (w.turn);
    is_str (trace, "effects:0,",
            "unsafe: the effects ran before anything was committed");
    world_fini (&w);
}

/* A reply whose client went away is not sent; the others are, in order. */
static void test_conn_gone (void)
{
    struct world w;
    world_init (&w);
    turn_ack (w.turn, CONN (0), 1, json_object ());
    turn_ack (w.turn, CONN (1), 2, json_object ());
    turn_ack (w.turn, CONN (0), 3, json_object ());
    turn_conn_gone (w.turn, CONN (0));
    turn_flush_all (w.turn);
    is_str (trace, "reply:2,", "gone: only the other client's reply sent");
    is_int ((int)turn_ncommits (w.turn), 0,
            "gone: replies with nothing to commit cost no commit");
    world_fini (&w);
}

int main (void)
{
    test_write_ahead ();
    test_unsafe_caught ();
    test_conn_gone ();
    return done_testing ();
}
