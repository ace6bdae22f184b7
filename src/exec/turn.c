/* turn.c - cairnd's commit turn (turn.h): stage, commit, land, act.
 *
 * The invariant this file keeps: no effect (spawn, signal, response,
 * exit-file removal) happens before the journal commit that records its
 * cause has returned. Everything that reaches a client or the system goes
 * through flush(), which commits first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/eventlog.h"
#include "core/hostlist.h"
#include "core/idset.h"
#include "core/job.h"
#include "core/testenv.h"
#include "exec/jobtable.h"
#include "exec/quota.h"
#include "exec/turn.h"
#include "journal/crashpoint.h"
#include "journal/journal.h"
#include "journal/outbox.h"
#include "procs/procs.h"
#include "server/server.h"
#include "util/log.h"

/* A reply held back until the events that justify it are committed. */
struct ack {
    struct ack *next;
    struct conn *conn; /* NULL once the client went away */
    int64_t matchtag;
    json_t *payload;
};

struct turn {
    struct ev_loop *loop;
    struct journal *journal;
    struct outbox *outbox; /* effects waiting for the commit */
    struct jobtable *jobs;
    struct quota *quota;
    struct procs *procs;
    double commit_interval; /* journal.commit-interval */
    struct turn_ops ops;
    void *arg;
    struct ack *acks; /* this turn's, in order */
    struct ack **acks_tail;
    ev_prepare prepare;
    ev_timer lazy_timer; /* a commit that waits (prepare_cb) */
    double last_commit;  /* ev_now of the last one */
    /* the batch the journal's committer thread is writing (flush(), O3):
     * its effects and the replies held for it, run once it is on disk */
    ev_async landed; /* the committer's wake-up */
    struct outbox_batch *flight;
    struct ack *flight_acks;
    bool unsafe_effects_first; /* test switch: break the write-ahead rule */
    int land_delay_ms;         /* test switch: TESTENV_LAND_DELAY */
    uint64_t ncommits;
};

void turn_journal_failed (const char *why)
{
    log_msg (LOG_ERR,
             "journal commit failed: %s; nothing of this batch was acted on; "
             "exiting with status %d so that a restart replays the journal",
             why, TURN_EXIT_JOURNAL);
    /* Do not run effects, do not respond: exit now. The processes keep
     * running under their shims; the next cairnd reconciles them. */
    _exit (TURN_EXIT_JOURNAL);
}

void turn_ack (struct turn *t,
               struct conn *c,
               int64_t matchtag,
               json_t *payload_new)
{
    struct ack *a = calloc (1, sizeof (*a));
    if (!a) {
        json_decref (payload_new);
        return;
    }
    a->conn = c;
    a->matchtag = matchtag;
    a->payload = payload_new;
    *t->acks_tail = a;
    t->acks_tail = &a->next;
}

void turn_conn_gone (struct turn *t, struct conn *c)
{
    for (struct ack *a = t->acks; a; a = a->next)
        if (a->conn == c)
            a->conn = NULL;
    for (struct ack *a = t->flight_acks; a; a = a->next)
        if (a->conn == c)
            a->conn = NULL;
}

uint64_t turn_ncommits (const struct turn *t)
{
    return t->ncommits;
}

void turn_unsafe_effects_first (struct turn *t, bool on)
{
    t->unsafe_effects_first = on;
}

/* The outbox's run of a job's committed events (OUTBOX_JOBS). */
static void job_effects (void *arg, const char *key, int op, json_t *events)
{
    struct jobentry *je = arg;
    struct turn *t = je->turn;
    je->unacted -= json_array_size (events);
    t->ops.effects (t->arg, je, events); /* may forget je */
}

static void prepare_cb (struct ev_loop *loop, ev_prepare *w, int revents);
static void lazy_cb (struct ev_loop *loop, ev_timer *w, int revents);
static void landed_cb (struct ev_loop *loop, ev_async *w, int revents);

/* A drain event: each of its ranks in the journal's drains table (cairn
 * drain lists it, cairn undrain clears it), in the same commit. */
static int stage_drain (struct journal *journal,
                        const struct job *job,
                        double t,
                        json_t *ctx)
{
    const char *ranks = NULL, *reason = "", *hosts = NULL;
    struct idset *set;
    struct hostlist *hl = NULL;
    size_t i = 0;
    int rc = 0;

    if (json_unpack (ctx, "{s:s s?s s?s}", "ranks", &ranks, "reason", &reason,
                     "hosts", &hosts) < 0 ||
        !(set = idset_decode (ranks, NULL)))
        return 0; /* the fold took it: cannot happen */
    if (hosts)    /* the event's: the i-th host is the i-th rank's */
        hl = hostlist_decode (hosts, NULL);
    for (uint32_t r = idset_first (set); r != IDSET_INVALID_ID && rc == 0;
         r = idset_next (set, r), i++) {
        const char *host = hl ? hostlist_nth (hl, i) : NULL;
        json_t *o =
            json_pack ("{s:s s:s s:f s:I}", "host", host ? host : "", "reason",
                       reason, "time", t, "job", (json_int_t)job_id (job));
        char *rec = o ? json_dumps (o, JSON_COMPACT) : NULL;
        rc = rec ? journal_drain (journal, r, rec) : -1;
        free (rec);
        json_decref (o);
    }
    hostlist_destroy (hl);
    idset_destroy (set);
    return rc;
}

/* Stage one job's pending events, and what they carry besides: the
 * drains table, the active index, the users' quotas. 0, or -1 with errno
 * (the batch is then abandoned: cairnd exits). */
static int stage_job (void *arg)
{
    struct jobentry *je = arg;
    struct turn *tn = je->turn;
    size_t n = json_array_size (je->pending);
    uint32_t seq = job_nevents (je->job) - (uint32_t)n;
    size_t i;
    json_t *entry;

    json_array_foreach (je->pending, i, entry)
    {
        char *line = eventlog_entry_encode (entry);
        const char *name = "";
        double t = 0;
        json_t *ctx = NULL;
        if (!line)
            return -1;
        if (journal_append (tn->journal, job_id (je->job), seq + (uint32_t)i,
                            line, strlen (line)) < 0) {
            free (line);
            return -1;
        }
        /* encode checked it */
        eventlog_entry_fields (entry, &t, &name, &ctx);
        if (!name)
            name = "";
        enum job_event ev = job_event_of (name);
        quota_staged (tn->quota, je->job, seq + (uint32_t)i, ev, strlen (line));
        free (line);
        if (ev == JOB_EV_DRAIN &&
            stage_drain (tn->journal, je->job, t, ctx) < 0)
            return -1;
        if ((ev == JOB_EV_ACCEPT &&
             journal_set_active (tn->journal, job_id (je->job), true, 0) < 0) ||
            (ev == JOB_EV_CLEAN &&
             journal_set_active (tn->journal, job_id (je->job), false, t) < 0))
            return -1;
    }
    return 0;
}

/* Every dirty job's pending events into the journal batch, each job's
 * effects into the outbox with them (O1). */
static void stage (struct turn *t)
{
    struct jobentry *je;
    while ((je = jobtable_dirty_first (t->jobs))) {
        /* while it is still dirty: what staging adds (held kills'
         * signals, after the starts they waited for) is in its pending */
        t->ops.staging (t->arg, je);
        json_t *fresh = json_array ();
        (void)jobtable_dirty_take (t->jobs);
        if (!fresh)
            turn_journal_failed ("out of memory");
        /* the effect takes the events staged from je->pending */
        size_t n = json_array_size (je->pending);
        struct outbox_effect e = {
            .fn = job_effects, .arg = je, .data = je->pending};
        je->turn = t; /* for stage_job and job_effects, which get je */
        if (outbox_put (t->outbox, OUTBOX_JOBS, stage_job, je, &e) < 0)
            turn_journal_failed (strerror (errno));
        je->unacted += n;
        je->pending = fresh;
    }
}

static void commit (struct turn *t)
{
    struct cairn_error err;
    if (journal_pending (t->journal) > 0) {
        if (journal_commit (t->journal, &err) < 0)
            turn_journal_failed (err.text);
        t->ncommits++;
        t->last_commit = ev_now (t->loop);
    }
}

/* Run a committed batch's effects, then the replies held for it (O3-O5). */
static void act (struct outbox_batch *batch, struct ack *acks)
{
    outbox_run (batch);
    while (acks) {
        struct ack *a = acks;
        acks = a->next;
        if (a->conn) {
            CRASHPOINT ("exec.respond.before");
            (void)conn_respond (a->conn, a->matchtag, a->payload);
            CRASHPOINT ("exec.respond.after");
        }
        json_decref (a->payload);
        free (a);
    }
}

/* Free replies never sent. */
static void acks_drop (struct ack *acks)
{
    while (acks) {
        struct ack *a = acks;
        acks = a->next;
        json_decref (a->payload);
        free (a);
    }
}

static struct ack *take_acks (struct turn *t)
{
    struct ack *acks = t->acks;
    t->acks = NULL;
    t->acks_tail = &t->acks;
    return acks;
}

/* The committer thread's done (journal_commit_start): wake the loop. */
static void commit_done (void *arg)
{
    struct turn *t = arg;
    if (t->land_delay_ms > 0) /* the test switch: on disk, not landed */
        usleep ((useconds_t)t->land_delay_ms * 1000);
    ev_async_send (t->loop, &t->landed);
}

/* The batch in flight, once on disk: its effects and replies run (O3),
 * and the starts they queued go out. Waits if it is not on disk yet. */
void turn_land (struct turn *t)
{
    struct cairn_error err;
    if (!journal_committing (t->journal))
        return;
    if (journal_commit_finish (t->journal, &err) < 0)
        turn_journal_failed (err.text);
    t->ncommits++;
    t->last_commit = ev_now (t->loop);
    struct outbox_batch *batch = t->flight;
    struct ack *acks = t->flight_acks;
    t->flight = NULL;
    t->flight_acks = NULL;
    act (batch, acks);
    procs_send (t->procs);
    procs_forget_kick (t->procs);
}

static void landed_cb (struct ev_loop *loop, ev_async *w, int revents)
{
    turn_land (w->data);
}

/* Commit the turn's events, then act on them; repeat while acting produced
 * more events (outbox.h, O1-O5). The commit is the committer thread's:
 * the loop goes on taking requests and ends while it is written, and
 * acts on the batch when it lands (turn_land()); meanwhile new events wait in
 * their jobs (dirty) for the next batch, which is staged only after it. */
static void flush (struct turn *t)
{
    ev_timer_stop (t->loop, &t->lazy_timer);
    if (journal_committing (t->journal))
        return; /* the next flush comes after the landing */
    while (jobtable_dirty_first (t->jobs) || t->acks ||
           outbox_busy (t->outbox)) {
        stage (t);
        struct outbox_batch *batch = outbox_take (t->outbox);
        struct ack *acks = take_acks (t);
        if (t->unsafe_effects_first) {
            act (batch, acks);
            /* the test switch's breach must reach the supervisor before
             * the commit, or the harness would have nothing to catch */
            procs_send (t->procs);
            commit (t);
            continue;
        }
        if (journal_pending (t->journal) > 0) {
            struct cairn_error err;
            if (journal_commit_start (t->journal, commit_done, t, &err) < 0)
                turn_journal_failed (err.text);
            t->flight = batch;
            t->flight_acks = acks;
            break;
        }
        act (batch, acks); /* their causes are on disk already (O2) */
    }
    /* nothing is left to stage: what the users' requests were let in for
     * is counted as staged now (quota.h) */
    quota_settle (t->quota);
    /* the turn's starts in one send, and the files of the ends just
     * acted on with one wake-up */
    procs_send (t->procs);
    procs_forget_kick (t->procs);
}

/* flush() until everything staged is on disk and acted on: before we
 * listen, and at the end. */
void turn_flush_all (struct turn *t)
{
    do {
        turn_land (t);
        flush (t);
    } while (journal_committing (t->journal));
}

/* May this turn's commit wait for company? Every pending event is a
 * process's pid record: nothing acts on it, nobody is told of it, and a
 * restart that finds no pid for an intent finds the process by its start
 * marker (procs_look.c), as it does for a start cut short. Waiting lets the
 * records ride with the next commit that must be made (an exit, an intent)
 * instead of costing one of their own per answer of the supervisor. */
static bool flush_can_wait (struct turn *t)
{
    struct jobentry *first = jobtable_dirty_first (t->jobs);
    if (!first || t->acks || outbox_busy (t->outbox))
        return false;
    for (struct jobentry *je = first; je; je = je->dirty_next) {
        size_t i;
        json_t *entry;
        json_array_foreach (je->pending, i, entry)
        {
            const char *name = NULL;
            eventlog_entry_fields (entry, NULL, &name, NULL); /* folded */
            if (!name || job_event_of (name) != JOB_EV_PROC_SPAWN)
                return false;
        }
    }
    return true;
}

/* Group commit (journal.commit-interval): while many processes are live,
 * a batch waits until the interval has passed since the last commit, so
 * that what comes meanwhile shares its fdatasync; a batch of pid records
 * alone waits a whole interval. With few processes live the loop is not
 * busy, and a wait would only add to each step of a job: commit at once. */
static void prepare_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct turn *t = w->data;
    double gap = t->commit_interval;
    double wait = 0;

    if (procs_count (t->procs) + procs_asked (t->procs) <
        TURN_GROUP_COMMIT_LIVE)
        gap = 0;

    if (gap > 0 && flush_can_wait (t))
        wait = gap;
    else if (gap > 0 && (jobtable_dirty_first (t->jobs) || t->acks))
        wait = t->last_commit + gap - ev_now (loop);
    if (wait <= 0) {
        flush (t);
        return;
    }
    if (!ev_is_active (&t->lazy_timer)) {
        ev_timer_set (&t->lazy_timer, wait, 0);
        ev_timer_start (loop, &t->lazy_timer);
    }
    /* starts queued outside a flush (a restart's, procs_orphans_settle's)
     * go before the loop sleeps */
    procs_send (t->procs);
}

static void lazy_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    flush (w->data);
}

struct turn *turn_create (struct ev_loop *loop,
                          struct journal *journal,
                          struct outbox *outbox,
                          struct jobtable *jobs,
                          struct quota *quota,
                          struct procs *procs,
                          double commit_interval,
                          const struct turn_ops *ops,
                          void *arg)
{
    struct turn *t = calloc (1, sizeof (*t));
    if (!t)
        return NULL;
    t->loop = loop;
    t->journal = journal;
    t->outbox = outbox;
    t->jobs = jobs;
    t->quota = quota;
    t->procs = procs;
    t->commit_interval = commit_interval;
    t->ops = *ops;
    t->arg = arg;
    t->acks_tail = &t->acks;
    ev_prepare_init (&t->prepare, prepare_cb);
    t->prepare.data = t;
    ev_prepare_start (loop, &t->prepare);
    ev_timer_init (&t->lazy_timer, lazy_cb, 0, 0);
    t->lazy_timer.data = t;
    ev_async_init (&t->landed, landed_cb);
    t->landed.data = t;
    ev_async_start (loop, &t->landed);
    t->unsafe_effects_first = getenv (TESTENV_UNSAFE_EFFECTS_FIRST) != NULL;
    const char *delay = getenv (TESTENV_LAND_DELAY);
    t->land_delay_ms = delay ? atoi (delay) : 0;
    if (t->unsafe_effects_first)
        log_msg (LOG_WARNING, "CAIRN_TEST_UNSAFE_EFFECTS_FIRST: acting before "
                              "committing; for testing the crash harness only");
    return t;
}

void turn_destroy (struct turn *t)
{
    if (!t)
        return;
    int saved = errno;
    /* torn down with a commit in flight (cairnd_create failing): it ends
     * first; nothing of it is acted on */
    if (journal_committing (t->journal)) {
        struct cairn_error err;
        (void)journal_commit_finish (t->journal, &err);
    }
    outbox_drop (t->flight);
    acks_drop (t->flight_acks);
    acks_drop (t->acks);
    ev_prepare_stop (t->loop, &t->prepare);
    ev_timer_stop (t->loop, &t->lazy_timer);
    ev_async_stop (t->loop, &t->landed);
    free (t);
    errno = saved;
}
