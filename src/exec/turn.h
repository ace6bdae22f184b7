/* turn.h - cairnd's commit turn: the write-ahead rule kept in one room.
 *
 * What a turn of the loop decided (each dirty job's pending events,
 * jobtable.h) is staged into one journal batch with its effects (outbox.h,
 * O1) and the replies that wait for it (turn_ack); the journal's committer
 * thread writes it while the loop goes on; once it is on disk the batch
 * lands: its effects run, then its replies go (O3-O5). Acting may produce
 * events again: the next batch is staged only after the landing. Nothing
 * reaches a client or the system before the commit of its cause returned.
 *
 * Group commit (journal.commit-interval) is decided here, before the loop
 * sleeps: with TURN_GROUP_COMMIT_LIVE live processes or more, a batch waits
 * until the interval has passed since the last commit.
 *
 * The turn is lent the loop, the journal, the outbox, the jobs, the users'
 * quotas and the processes (whose queued starts it sends after acting);
 * what a job's committed events do is its ops' effects.
 */
#ifndef CAIRN_TURN_H
#define CAIRN_TURN_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct conn;     /* server/server.h */
struct journal;  /* journal/journal.h */
struct outbox;   /* journal/outbox.h */
struct jobtable; /* exec/jobtable.h */
struct jobentry;
struct quota; /* exec/quota.h */
struct procs; /* procs/procs.h */
struct turn;

/* How many live processes (running, or asked for) make the turn group its
 * commits (journal.commit-interval): fewer, and each commits at once. */
#define TURN_GROUP_COMMIT_LIVE 16

/* The exit status of turn_journal_failed: daemon.h's CAIRND_EXIT_JOURNAL
 * (EX_TEMPFAIL), said here so that the turn need not include the daemon
 * it serves; daemon.c checks they agree. */
#define TURN_EXIT_JOURNAL 75

struct turn_ops {
    /* je (dirty) is about to be staged: what it adds to je->pending now
     * joins this batch (the daemon's held kills, killwait.h). */
    void (*staging) (void *arg, struct jobentry *je);
    /* je's committed events, on disk: carry out their effects (job.h's
     * effect column) and tell its streams. May forget je. */
    void (*effects) (void *arg, struct jobentry *je, json_t *events);
};

/* A turn on loop: an ev_prepare that flushes before the loop sleeps (or
 * arms the group-commit wait), and the committer's wake-up. commit_interval:
 * journal.commit-interval in seconds. Reads the test switches
 * CAIRN_TEST_UNSAFE_EFFECTS_FIRST and CAIRN_TEST_LAND_DELAY (testenv.h).
 * NULL with errno ENOMEM. */
struct turn *turn_create (struct ev_loop *loop,
                          struct journal *journal,
                          struct outbox *outbox,
                          struct jobtable *jobs,
                          struct quota *quota,
                          struct procs *procs,
                          double commit_interval,
                          const struct turn_ops *ops,
                          void *arg);

/* Torn down: a commit in flight ends first, and nothing of its batch is
 * acted on; replies never sent are freed; the watchers stop. NULL is fine;
 * errno is kept. */
void turn_destroy (struct turn *t);

/* A reply to c's request matchtag (payload taken), sent once everything
 * staged before it is committed and acted on. */
void turn_ack (struct turn *t,
               struct conn *c,
               int64_t matchtag,
               json_t *payload_new);

/* c went away: its held replies are not sent. */
void turn_conn_gone (struct turn *t, struct conn *c);

/* Stage, commit and act until everything is on disk and acted on: before
 * cairnd listens, and at the end. */
void turn_flush_all (struct turn *t);

/* The batch in flight, if any, once on disk: its effects and replies run.
 * Waits for it. (Before a commit of another's, so that one is written at a
 * time: the retention's purge.) */
void turn_land (struct turn *t);

/* Batches committed (`stats`). */
uint64_t turn_ncommits (const struct turn *t);

/* The test switch that breaks the write-ahead rule: act, then commit
 * (t_daemon checks that the crash harness would catch it). */
void turn_unsafe_effects_first (struct turn *t, bool on);

/* The journal could not stage or commit this turn's batch: log why and
 * exit with CAIRND_EXIT_JOURNAL, acting on none of it (outbox.h, O3). */
void turn_journal_failed (const char *why) __attribute__ ((noreturn));

#endif /* CAIRN_TURN_H */
