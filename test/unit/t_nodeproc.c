/* t_nodeproc.c - the node's process record: nodeproc.h's table, tried in
 * every state with every event.
 *
 * The expected moves are written out below by hand, as DESIGN-MULTINODE.md
 * and node.c need them, not derived from NODEPROC_TRANSITIONS: a row
 * widened or narrowed there fails here. Each refused pair must give
 * EINVAL and "event EV in state S" and leave the target alone; each
 * allowed one the state written here. Then the names: every state's name
 * decodes to it and back, and anything else is refused with EINVAL.
 */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "node/nodeproc.h"

#define NO (-2) /* refused */
#define SAME (-1)

enum {
    I = NODEPROC_INTENT,
    R = NODEPROC_RUNNING,
    E = NODEPROC_ENDED,
    F = NODEPROC_FAILED,
    L = NODEPROC_LOST,
    U = NODEPROC_UNKNOWN
};

/* want[state][event]: the state after, SAME, or NO. */
/* clang-format off */
static const int want[NODEPROC_NSTATES][NODEPROC_EV_COUNT] = {
    /*     spawned exited failed lost unstarted acked */
    [I] = {R,      E,     F,     L,   I,        NO},
    [R] = {NO,     E,     NO,    L,   I,        NO},
    [E] = {NO,     NO,    NO,    NO,  NO,       SAME},
    [F] = {NO,     NO,    NO,    NO,  NO,       SAME},
    [L] = {NO,     NO,    NO,    NO,  NO,       SAME},
    [U] = {NO,     NO,    NO,    NO,  NO,       NO},
};
/* clang-format on */

static const char *const names[NODEPROC_NSTATES] = {
    [I] = "intent", [R] = "running", [E] = "ended",
    [F] = "failed", [L] = "lost",    [U] = "unknown",
};

static const char *const ev_names[NODEPROC_EV_COUNT] = {
    [NODEPROC_EV_SPAWNED] = "spawned",     [NODEPROC_EV_EXITED] = "exited",
    [NODEPROC_EV_FAILED] = "failed",       [NODEPROC_EV_LOST] = "lost",
    [NODEPROC_EV_UNSTARTED] = "unstarted", [NODEPROC_EV_ACKED] = "acked",
};

static void test_every_pair (void)
{
    for (int s = 0; s < NODEPROC_NSTATES; s++) {
        for (int ev = 0; ev < NODEPROC_EV_COUNT; ev++) {
            struct cairn_error err = {{0}};
            enum nodeproc_state to = (enum nodeproc_state)99;
            int rc;

            errno = 0;
            rc = nodeproc_next ((enum nodeproc_state)s, (enum nodeproc_event)ev,
                                &to, &err);
            if (want[s][ev] == NO) {
                char msg[128];
                snprintf (msg, sizeof (msg), "event %s in state %s",
                          ev_names[ev], names[s]);
                is_errno (rc, EINVAL, "%s in %s: refused", ev_names[ev],
                          names[s]);
                is_str (err.text, msg, "%s in %s: says so", ev_names[ev],
                        names[s]);
                ok ((int)to == 99 && !nodeproc_allows ((enum nodeproc_state)s,
                                                       (enum nodeproc_event)ev),
                    "%s in %s: target untouched, not allowed", ev_names[ev],
                    names[s]);
            } else {
                int after = want[s][ev] == SAME ? s : want[s][ev];
                is_int (rc, 0, "%s in %s: allowed", ev_names[ev], names[s]);
                is_str (nodeproc_state_name (to), names[after],
                        "%s in %s: to %s", ev_names[ev], names[s],
                        names[after]);
                ok (nodeproc_allows ((enum nodeproc_state)s,
                                     (enum nodeproc_event)ev),
                    "%s in %s: nodeproc_allows agrees", ev_names[ev], names[s]);
            }
        }
    }
}

/* Nothing runs twice: no event takes a record back to running but
 * spawned, which only an intent takes; no end is ever left. */
static void test_promises (void)
{
    int bad = 0;
    for (int s = 0; s < NODEPROC_NSTATES; s++) {
        for (int ev = 0; ev < NODEPROC_EV_COUNT; ev++) {
            enum nodeproc_state to;
            if (nodeproc_next ((enum nodeproc_state)s, (enum nodeproc_event)ev,
                               &to, NULL) < 0)
                continue;
            const char *why = NULL;
            if (to == NODEPROC_RUNNING && s != I)
                why = "runs it";
            else if (nodeproc_is_end ((enum nodeproc_state)s) && (int)to != s)
                why = "leaves an end";
            else if (to == NODEPROC_UNKNOWN)
                why = "goes to unknown";
            if (why) {
                diag ("  %s in %s %s", ev_names[ev], names[s], why);
                bad++;
            }
        }
    }
    is_int (bad, 0, "only an intent starts; an end is final; none to unknown");
}

static void test_out_of_range (void)
{
    struct cairn_error err = {{0}};
    enum nodeproc_state to = NODEPROC_INTENT;

    is_errno (nodeproc_next ((enum nodeproc_state)NODEPROC_NSTATES,
                             NODEPROC_EV_SPAWNED, &to, &err),
              EINVAL, "a state past the enum: refused");
    is_errno (nodeproc_next (NODEPROC_INTENT,
                             (enum nodeproc_event)NODEPROC_EV_COUNT, &to, &err),
              EINVAL, "an event past the enum: refused");
    is_str (err.text, "event ? in state intent", "and says so");
    ok (to == NODEPROC_INTENT, "target untouched");
    ok (nodeproc_state_name ((enum nodeproc_state)NODEPROC_NSTATES) == NULL &&
            nodeproc_state_name ((enum nodeproc_state) - 1) == NULL,
        "no name past the enum");
    ok (nodeproc_event_name ((enum nodeproc_event)NODEPROC_EV_COUNT) == NULL,
        "no event name past the enum");
}

static void test_names (void)
{
    for (int s = 0; s < NODEPROC_NSTATES; s++) {
        enum nodeproc_state got = (enum nodeproc_state)99;
        is_str (nodeproc_state_name ((enum nodeproc_state)s), names[s],
                "state %d is named %s", s, names[s]);
        is_int (nodeproc_state_of (names[s], &got), 0, "%s decodes", names[s]);
        is_int ((int)got, s, "%s decodes to its state", names[s]);
    }
    for (int ev = 0; ev < NODEPROC_EV_COUNT; ev++)
        is_str (nodeproc_event_name ((enum nodeproc_event)ev), ev_names[ev],
                "event %d is named %s", ev, ev_names[ev]);

    static const char *const bad[] = {"",       "Intent", "intent ",
                                      " ended", "end",    "acked",
                                      "done",   "runnin", "lostx"};
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        enum nodeproc_state got = (enum nodeproc_state)99;
        is_errno (nodeproc_state_of (bad[i], &got), EINVAL,
                  "\"%s\": not a state", bad[i]);
        ok ((int)got == 99, "\"%s\": state untouched", bad[i]);
    }
    enum nodeproc_state got = (enum nodeproc_state)99;
    is_errno (nodeproc_state_of (NULL, &got), EINVAL, "NULL: not a state");
}

static void test_sets (void)
{
    static const bool end[NODEPROC_NSTATES] = {[E] = 1, [F] = 1, [L] = 1};
    for (int s = 0; s < NODEPROC_NSTATES; s++) {
        is_int (nodeproc_is_end ((enum nodeproc_state)s), end[s],
                "%s is%s an end", names[s], end[s] ? "" : " not");
        is_int (nodeproc_is_record ((enum nodeproc_state)s), s != U,
                "%s is%s a record's state", names[s], s != U ? "" : " not");
    }
    ok (!nodeproc_is_end ((enum nodeproc_state)NODEPROC_NSTATES) &&
            !nodeproc_is_record ((enum nodeproc_state)NODEPROC_NSTATES),
        "past the enum: neither");
}

int main (void)
{
    plan (NO_PLAN);
    test_every_pair ();
    test_promises ();
    test_out_of_range ();
    test_names ();
    test_sets ();
    return done_testing ();
}
