/* nodeproc.h - the state machine of a node's process record: pure, no I/O.
 *
 * A node journals one record per process rank 0 asks it to run (the
 * nodeprocs table, node.h); its "state" says how far the process got, and
 * the same string is the "state" of the REPORT a node sends rank 0
 * (DESIGN-MULTINODE.md). The strings stay on the wire and in the journal;
 * nodeproc_state_of() is the only place they are compared, where a record
 * or a report is read, and the enum travels after that.
 *
 * "Nothing runs twice" rests on this machine: a record leaves intent for
 * running only once, and an end is final. nodeproc_next() refuses every
 * move the table below does not list; node.c moves a record through it
 * alone.
 */
#ifndef CAIRN_NODEPROC_H
#define CAIRN_NODEPROC_H

#include <stdbool.h>

#include "core/error.h"

/* The states (nodeproc_state_name() gives the name in parentheses):
 *
 *   NODEPROC_INTENT   (intent)   journaled, not started yet (or started
 *                                again after a start that never ran)
 *   NODEPROC_RUNNING  (running)  started: its pid, starttime, bootid are
 *                                in the record
 *   NODEPROC_ENDED    (ended)    it exited: status and output recorded
 *   NODEPROC_FAILED   (failed)   it could not be started at all
 *   NODEPROC_LOST     (lost)     gone with no exit record
 *   NODEPROC_UNKNOWN  (unknown)  never a record's: a node's answer to a
 *                                query about an execid it has no record of
 */
#define NODEPROC_STATES(X)                                                     \
    X (NODEPROC_INTENT, "intent")                                              \
    X (NODEPROC_RUNNING, "running")                                            \
    X (NODEPROC_ENDED, "ended")                                                \
    X (NODEPROC_FAILED, "failed")                                              \
    X (NODEPROC_LOST, "lost")                                                  \
    X (NODEPROC_UNKNOWN, "unknown")

/* clang-format off */
enum nodeproc_state {
#define NODEPROC_STATE_ENUM(st, name) st,
    NODEPROC_STATES (NODEPROC_STATE_ENUM)
#undef NODEPROC_STATE_ENUM
    NODEPROC_NSTATES,
};
/* clang-format on */

/* Sets of states, for the table's "from" column. */
#define NODEPROC_IN(s) (1u << (s))
#define NODEPROC_LIVE                                                          \
    (NODEPROC_IN (NODEPROC_INTENT) | NODEPROC_IN (NODEPROC_RUNNING))
#define NODEPROC_ENDS                                                          \
    (NODEPROC_IN (NODEPROC_ENDED) | NODEPROC_IN (NODEPROC_FAILED) |            \
     NODEPROC_IN (NODEPROC_LOST))
#define NODEPROC_SAME (-1) /* the "to" column: the state does not change */

/* The transition table: an event moves a record only from a state of its
 * "from" column, to its "to" column. No row leaves an end or enters
 * unknown. Columns: event, its name (for messages only: events are not
 * journaled, the state they lead to is), from, to. Where node.c makes
 * each one is in the comment above its row.
 */
#define NODEPROC_TRANSITIONS(X)                                                \
    /* spawn() started it; reconcile_one() found an intent's process alive     \
     * (the last cairnd died between the start and its record) */              \
    X (NODEPROC_EV_SPAWNED, "spawned", NODEPROC_IN (NODEPROC_INTENT),          \
       NODEPROC_RUNNING)                                                       \
    /* node_collect() read its exit record; from intent when the start         \
     * itself wrote it (the shim could not exec), or on a restart */           \
    X (NODEPROC_EV_EXITED, "exited", NODEPROC_LIVE, NODEPROC_ENDED)            \
    /* spawn(): procs_start() or memory failed; nothing was started */         \
    X (NODEPROC_EV_FAILED, "failed", NODEPROC_IN (NODEPROC_INTENT),            \
       NODEPROC_FAILED)                                                        \
    /* node_collect() found no exit record; reconcile_one()'s LOOK_LOST */     \
    X (NODEPROC_EV_LOST, "lost", NODEPROC_LIVE, NODEPROC_LOST)                 \
    /* the command never ran (no start mark): journaled as an intent again,    \
     * then started (node_collect() on a restart, reconcile_one()'s            \
     * LOOK_UNSTARTED) */                                                      \
    X (NODEPROC_EV_UNSTARTED, "unstarted", NODEPROC_LIVE, NODEPROC_INTENT)     \
    /* node_req_ack(): rank 0 journaled its end; only an end is forgotten      \
     * (the record's "acked" flag, not a state) */                             \
    X (NODEPROC_EV_ACKED, "acked", NODEPROC_ENDS, NODEPROC_SAME)

/* clang-format off */
enum nodeproc_event {
#define NODEPROC_EV_ENUM(ev, name, from, to) ev,
    NODEPROC_TRANSITIONS (NODEPROC_EV_ENUM)
#undef NODEPROC_EV_ENUM
    NODEPROC_EV_COUNT,
};
/* clang-format on */

/* The state a wire or journal name is: 0, or -1 with errno EINVAL when
 * name is NULL or no state's name (compared exactly). */
int nodeproc_state_of (const char *name, enum nodeproc_state *state);
/* Its name, as journaled and sent; NULL for a value out of the enum. */
const char *nodeproc_state_name (enum nodeproc_state state);
/* An event's name (for messages); NULL out of the enum. */
const char *nodeproc_event_name (enum nodeproc_event ev);

/* Is state one a record may be in (every state but unknown)? */
bool nodeproc_is_record (enum nodeproc_state state);
/* Is it an end (ended, failed, lost): final, reported until acked? */
bool nodeproc_is_end (enum nodeproc_state state);
/* Does the table let ev happen to a record in state? */
bool nodeproc_allows (enum nodeproc_state state, enum nodeproc_event ev);

/* The state ev moves a record in from to, into *to: 0; or -1 with errno
 * EINVAL and err "event EV in state S" when the table does not allow it
 * (or either is out of its enum), *to untouched. */
int nodeproc_next (enum nodeproc_state from,
                   enum nodeproc_event ev,
                   enum nodeproc_state *to,
                   struct cairn_error *err);

#endif /* CAIRN_NODEPROC_H */
