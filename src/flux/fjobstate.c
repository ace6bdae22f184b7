/* fjobstate.c - see fjobstate.h. */
#include <errno.h>

#include "flux/fjobstate.h"

static const struct {
    const char *name;
    unsigned from;
    enum fjob_state to;
} table[FJOB_EV_COUNT] = {
#define FJOB_ROW(ev, n, f, t) [ev] = {.name = n, .from = f, .to = t},
    FJOB_TRANSITIONS (FJOB_ROW)
#undef FJOB_ROW
};

static const char *const state_names[FJOB_STATE_COUNT] = {
    [FJOB_NEW] = "new",       [FJOB_PREPARING] = "preparing",
    [FJOB_ASKING] = "asking", [FJOB_RUNNING] = "running",
    [FJOB_FAILED] = "failed", [FJOB_RELEASING] = "releasing",
    [FJOB_DONE] = "done",
};

int fjob_state_next (enum fjob_state s, enum fjob_event ev, enum fjob_state *to)
{
    if ((unsigned)s >= FJOB_STATE_COUNT || (unsigned)ev >= FJOB_EV_COUNT ||
        !(table[ev].from & FJOB_IN (s))) {
        errno = EINVAL;
        return -1;
    }
    *to = table[ev].to;
    return 0;
}

const char *fjob_state_name (enum fjob_state s)
{
    return (unsigned)s < FJOB_STATE_COUNT ? state_names[s] : "?";
}

const char *fjob_event_name (enum fjob_event ev)
{
    return (unsigned)ev < FJOB_EV_COUNT ? table[ev].name : "?";
}
