/* fjobstate.h - the lifecycle of a Flux job in the module (fjob.h), as a
 * table: which event may move a job in which state, and where to.
 *
 *   new
 *    | begin
 *    v
 *   preparing --ready--> asking --attach--> running --final--> releasing
 *    |                    |  ^ ready          |                  ^   |
 *    |                    +--+                |                  |   | released
 *    |                    |                   |                  |   v
 *    +-------fail---------+-------fail--------+--> failed -final-+  done
 *
 * preparing  begun: a new job's broker URIs are asked for, or a job Flux
 *            hands over again waits for its guest namespace; cairnd is not
 *            asked yet
 * asking     cairnd may be asked (a `start`, fresh or reattach, sent or
 *            waiting for the connection); its stream has not opened. A
 *            reattach cairnd answers ENOENT (it never had the job) goes
 *            for the URIs and is ready again, for a fresh start
 *            (asking -ready-> asking).
 * running    cairnd's stream opened (`accepted` or `reattached`): its
 *            responses are relayed. A lost connection leaves the job here;
 *            the reattach that follows asks for what came after `since`.
 * failed     given up (the module's own fatal error): an exception and the
 *            final release are queued, cairnd is not asked again
 * releasing  the final release is on its way (the guest namespace being
 *            removed, a test's hold): nothing more is handled or asked
 * done       the final release went to the job-manager: the job is freed
 *
 * The guest namespace, outstanding `resume`s, the shells' barrier and the
 * skip counts are facts beside the state, kept in struct fjob.
 *
 * Pure code: no Flux, no I/O (test/unit/t_fjobstate.c tries every pair).
 */
#ifndef CAIRN_FLUX_FJOBSTATE_H
#define CAIRN_FLUX_FJOBSTATE_H

enum fjob_state {
    FJOB_NEW = 0,
    FJOB_PREPARING,
    FJOB_ASKING,
    FJOB_RUNNING,
    FJOB_FAILED,
    FJOB_RELEASING,
    FJOB_DONE,
    FJOB_STATE_COUNT,
};

/* Sets of states, for the table's "from" column. */
#define FJOB_IN(s) (1u << (s))

/* The transition table: X (event, name, from, to). fjob_state_next()
 * moves a job only from a state of an event's "from" column. */
#define FJOB_TRANSITIONS(X)                                                    \
    /* fjob_begin: the start request is taken in */                            \
    X (FJOB_EV_BEGIN, "begin", FJOB_IN (FJOB_NEW), FJOB_PREPARING)             \
    /* the URIs are known (a new job), or the namespace made (handed over      \
     * again); again after a fresh start's ENOENT */                           \
    X (FJOB_EV_READY, "ready",                                                 \
       FJOB_IN (FJOB_PREPARING) | FJOB_IN (FJOB_ASKING), FJOB_ASKING)          \
    /* cairnd's stream opens: `accepted` or `reattached` */                    \
    X (FJOB_EV_ATTACH, "attach", FJOB_IN (FJOB_ASKING), FJOB_RUNNING)          \
    /* the module gives up: a refusal, a timeout, no namespace, a conflict */  \
    X (FJOB_EV_FAIL, "fail",                                                   \
       FJOB_IN (FJOB_PREPARING) | FJOB_IN (FJOB_ASKING) |                      \
           FJOB_IN (FJOB_RUNNING),                                             \
       FJOB_FAILED)                                                            \
    /* the final release is handled: from cairnd's stream, or fail()'s */      \
    X (FJOB_EV_FINAL, "final", FJOB_IN (FJOB_RUNNING) | FJOB_IN (FJOB_FAILED), \
       FJOB_RELEASING)                                                         \
    /* it went to the job-manager */                                           \
    X (FJOB_EV_RELEASED, "released", FJOB_IN (FJOB_RELEASING), FJOB_DONE)

enum fjob_event {
#define FJOB_EV_ENUM(ev, name, from, to) ev,
    FJOB_TRANSITIONS (FJOB_EV_ENUM)
#undef FJOB_EV_ENUM
        FJOB_EV_COUNT,
};

/* The state event ev moves a job in state s to. Returns 0 with *to set,
 * or -1 with errno EINVAL when the table has no such move (or s or ev is
 * out of range); *to is left alone then. */
int fjob_state_next (enum fjob_state s,
                     enum fjob_event ev,
                     enum fjob_state *to);

/* Names, for logs and stats: "running", "attach"; "?" when out of range. */
const char *fjob_state_name (enum fjob_state s);
const char *fjob_event_name (enum fjob_event ev);

#endif /* CAIRN_FLUX_FJOBSTATE_H */
