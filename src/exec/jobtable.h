/* jobtable.h - the daemon's active jobs in memory: each job's entry, its
 * events of this turn not yet staged (pending), the dirty list of jobs
 * that have some, and each job's deadline timer.
 *
 * One owner per state: this room alone adds, finds, forgets and marks
 * entries, and arms their timers; what a due deadline means is its ops'
 * due. It knows nothing of streams, processes or the journal: forgetting
 * a job's other belongings is the caller's, before jobtable_remove().
 */
#ifndef CAIRN_JOBTABLE_H
#define CAIRN_JOBTABLE_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;       /* core/job.h */
struct sub;       /* its streams (streams.h) */
struct turn;      /* exec/turn.h */
struct localproc; /* exec/localproc.h */
struct jobtable;

/* A job in memory (active jobs only). */
struct jobentry {
    struct jobtable *table;
    struct job *job;         /* owned: destroyed with the entry */
    char key[24];            /* decimal id, the table's key */
    char name[64];           /* "DECIMAL (ƒF58)", for the log */
    json_t *pending;         /* events emitted this turn, not yet staged */
    size_t unacted;          /* events staged whose effects have not run yet (in
                              * the batch in flight, or in one about to be) */
    struct turn *turn;       /* the turn that staged it (turn.c's, set there) */
    struct localproc *local; /* the room that runs its processes here
                              * (localproc.c's, set there): procs.h's
                              * answers name only the job */
    bool dirty;              /* on the table's dirty list */
    struct jobentry *dirty_next;
    ev_timer timer;   /* the job's next deadline (jobtable_rearm) */
    struct sub *subs; /* its streams (streams.h): that room's lists */
};

struct jobtable_ops {
    /* je's deadline (job_next_deadline) has come: advance it. */
    void (*due) (void *arg, struct jobentry *je);
    /* je is about to be freed (jobtable_remove): drop what refers to it
     * (its streams, held kills, watched processes). */
    void (*forget) (void *arg, struct jobentry *je);
};

/* An empty table whose timers run on loop. NULL with errno ENOMEM. */
struct jobtable *jobtable_create (struct ev_loop *loop,
                                  const struct jobtable_ops *ops,
                                  void *arg);

/* Forgets every entry left (jobtable_remove) and frees the table. NULL is
 * fine; errno is kept. */
void jobtable_destroy (struct jobtable *t);

/* Job id's entry, or NULL. */
struct jobentry *jobtable_get (struct jobtable *t, uint64_t id);

/* A new entry for job (taken on success), not dirty, no timer armed.
 * NULL with errno ENOMEM (job is then the caller's still). */
struct jobentry *jobtable_add (struct jobtable *t, struct job *job);

/* Forget je: ops.forget, then its timer stops and its job and pending
 * events are freed. It must not be on the dirty list (its events would be
 * lost). */
void jobtable_remove (struct jobentry *je);

size_t jobtable_count (const struct jobtable *t);

/* Walk the entries: *pos starts at 0; NULL at the end. An entry may be
 * removed while walking, but only the one just returned. */
struct jobentry *jobtable_next (struct jobtable *t, size_t *pos);

/* je emitted events (je->pending): put it on the dirty list, once, so
 * that this turn stages them. Nothing pending: nothing. */
void jobtable_dirty (struct jobentry *je);

/* The dirty list, newest first (walk by dirty_next), or NULL. */
struct jobentry *jobtable_dirty_first (const struct jobtable *t);

/* Take the first dirty job off the list (it is no longer dirty), or NULL
 * when none is. */
struct jobentry *jobtable_dirty_take (struct jobtable *t);

/* Arm je's timer for its job's next deadline (a hair late), or stop it
 * when there is none. */
void jobtable_rearm (struct jobentry *je);

/* How many of je's events have been acted on: those committed whose
 * effects ran. A batch may be on disk before its effects run (it lands a
 * turn later), so a reader of the journal that also takes the later
 * effects (a reattach's backlog) reads no further than this. */
uint32_t jobtable_acted (const struct jobentry *je);

#endif /* CAIRN_JOBTABLE_H */
