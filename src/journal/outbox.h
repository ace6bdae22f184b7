/* outbox.h - journal, then act: cairnd's write-ahead rule in one place.
 *
 * Whatever cairnd does because of a record — start a process, signal it,
 * tell a client or a node, forget a process's exit records — enters the
 * outbox in the same call that stages the record in the journal's open
 * batch. The loop (turn.c, flush()) commits the batch, and only then
 * takes the effects out and runs them. The rules, cited as O1..O5 in the
 * code (doc/design.md, "The write-ahead rule"):
 *
 *  O1  outbox_put() stages first and queues the effect only if staging
 *      succeeded; room for the effect is made before staging, so the two
 *      happen together or not at all. A failed put returns -1 with errno:
 *      nothing is queued, and the caller must not act by other means
 *      (fail closed).
 *  O2  An effect whose cause was staged earlier in the same turn (a
 *      node-ack that repeats an end the batch holds, a start of a process
 *      whose intent is on disk already) is queued with outbox_after(): it
 *      runs after the same commit.
 *  O3  outbox_take() hands over everything queued so far; the caller runs
 *      it with outbox_run() only once journal_commit() of the batch has
 *      returned 0. A failed commit runs none of it: cairnd exits, and the
 *      restart replays the journal (daemon.c, journal_failed()).
 *  O4  Effects run lane by lane (jobs, node, remote), each lane in the
 *      order it was queued.
 *  O5  Replies held for a commit (turn_ack) run after every lane.
 *
 * The outbox is bookkeeping only: it neither commits nor knows the
 * journal; staging is the caller's function, called by outbox_put().
 */
#ifndef CAIRN_OUTBOX_H
#define CAIRN_OUTBOX_H

#include <stdbool.h>
#include <jansson.h>

enum outbox_lane {
    OUTBOX_JOBS = 0, /* a job's committed events (daemon.c, effects()) */
    OUTBOX_NODE,     /* the node role's process records (node.c) */
    OUTBOX_REMOTE,   /* rank 0's acks to nodes (remote.c) */
    OUTBOX_NLANES,
};

/* An effect: fn (arg, key, op, data). key is copied (at most 63 bytes);
 * data, a new reference or NULL, is the effect's and dropped after fn (or
 * when the outbox is destroyed with it unrun). */
typedef void (*outbox_fn) (void *arg, const char *key, int op, json_t *data);

struct outbox_effect {
    outbox_fn fn; /* NULL: a record with no effect (outbox_put only) */
    void *arg;
    const char *key;
    int op;
    json_t *data;
};

/* Stages a record into the journal's open batch: 0, or -1 with errno. */
typedef int (*outbox_stage_fn) (void *arg);

struct outbox;
struct outbox_batch;

struct outbox *outbox_create (void);
/* Drops what was never run. */
void outbox_destroy (struct outbox *ob);

/* O1: stage (stage (stage_arg)), then queue e in lane. -1 with errno and
 * nothing queued when room cannot be made (ENOMEM), the staging fails
 * (its errno), or CAIRN_FAULT injects an error at "outbox.stage"
 * (fault_only: not a crash point). e's
 * data is the outbox's in every case. */
int outbox_put (struct outbox *ob,
                enum outbox_lane lane,
                outbox_stage_fn stage,
                void *stage_arg,
                const struct outbox_effect *e);

/* O2: queue e, caused by records staged before. -1 ENOMEM (e's data is
 * dropped). */
int outbox_after (struct outbox *ob,
                  enum outbox_lane lane,
                  const struct outbox_effect *e);

/* Is anything queued? */
bool outbox_busy (const struct outbox *ob);

/* O3: everything queued so far (NULL if nothing); the outbox starts
 * empty again. */
struct outbox_batch *outbox_take (struct outbox *ob);

/* O3, O4: run a taken batch, lane by lane, and free it. Effects queued
 * while it runs go to the outbox, for the next commit. */
void outbox_run (struct outbox_batch *b);

/* Free a taken batch without running it: for a daemon torn down while
 * the commit of its batch was in flight, whose effects must not run. */
void outbox_drop (struct outbox_batch *b);

#endif /* CAIRN_OUTBOX_H */
