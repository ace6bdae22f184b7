/* nodeproc.c - a node's process record, moved by its table (nodeproc.h). */
#include <errno.h>
#include <string.h>

#include "node/nodeproc.h"

static const char *const state_names[NODEPROC_NSTATES] = {
#define NODEPROC_STATE_NAME(st, name) [st] = name,
    NODEPROC_STATES (NODEPROC_STATE_NAME)
#undef NODEPROC_STATE_NAME
};

static const struct {
    const char *name;
    unsigned from;
    int to;
} rows[NODEPROC_EV_COUNT] = {
#define NODEPROC_ROW(ev, name, from, to) [ev] = {name, from, to},
    NODEPROC_TRANSITIONS (NODEPROC_ROW)
#undef NODEPROC_ROW
};

int nodeproc_state_of (const char *name, enum nodeproc_state *state)
{
    for (int s = 0; name && s < NODEPROC_NSTATES; s++) {
        if (strcmp (name, state_names[s]) == 0) {
            *state = (enum nodeproc_state)s;
            return 0;
        }
    }
    errno = EINVAL;
    return -1;
}

const char *nodeproc_state_name (enum nodeproc_state state)
{
    return (unsigned)state < NODEPROC_NSTATES ? state_names[state] : NULL;
}

const char *nodeproc_event_name (enum nodeproc_event ev)
{
    return (unsigned)ev < NODEPROC_EV_COUNT ? rows[ev].name : NULL;
}

bool nodeproc_is_record (enum nodeproc_state state)
{
    return (unsigned)state < NODEPROC_NSTATES && state != NODEPROC_UNKNOWN;
}

bool nodeproc_is_end (enum nodeproc_state state)
{
    return (unsigned)state < NODEPROC_NSTATES &&
           (NODEPROC_IN (state) & NODEPROC_ENDS) != 0;
}

bool nodeproc_allows (enum nodeproc_state state, enum nodeproc_event ev)
{
    return (unsigned)state < NODEPROC_NSTATES &&
           (unsigned)ev < NODEPROC_EV_COUNT &&
           (rows[ev].from & NODEPROC_IN (state)) != 0;
}

int nodeproc_next (enum nodeproc_state from,
                   enum nodeproc_event ev,
                   enum nodeproc_state *to,
                   struct cairn_error *err)
{
    if (!nodeproc_allows (from, ev)) {
        const char *e = nodeproc_event_name (ev);
        const char *s = nodeproc_state_name (from);
        return errset (err, EINVAL, "event %s in state %s", e ? e : "?",
                       s ? s : "?");
    }
    *to =
        rows[ev].to == NODEPROC_SAME ? from : (enum nodeproc_state)rows[ev].to;
    return 0;
}
