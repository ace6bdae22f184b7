/* t_fjobstate.c - the Flux module's job lifecycle (src/flux/fjobstate.h).
 *
 * The legal moves are written out here a second time, by hand, as the
 * module's paths take them: every state x event pair is then tried, a
 * listed one must move where the list says, any other must be refused
 * with EINVAL and leave the state alone. A row added to or widened in the
 * table without this list fails here, and so does one narrowed.
 */
#include "tap.h"
#include "flux/fjobstate.h"

struct move {
    enum fjob_state from;
    enum fjob_event ev;
    enum fjob_state to;
};

static const struct move legal[] = {
    /* fjob_begin */
    {FJOB_NEW, FJOB_EV_BEGIN, FJOB_PREPARING},
    /* URIs known, or the namespace of a job handed over again made */
    {FJOB_PREPARING, FJOB_EV_READY, FJOB_ASKING},
    /* a fresh start refused with ENOENT asks for the URIs again */
    {FJOB_ASKING, FJOB_EV_READY, FJOB_ASKING},
    /* accepted or reattached */
    {FJOB_ASKING, FJOB_EV_ATTACH, FJOB_RUNNING},
    /* the module gives up before or after cairnd took the job */
    {FJOB_PREPARING, FJOB_EV_FAIL, FJOB_FAILED},
    {FJOB_ASKING, FJOB_EV_FAIL, FJOB_FAILED},
    {FJOB_RUNNING, FJOB_EV_FAIL, FJOB_FAILED},
    /* the final release, cairnd's or the module's */
    {FJOB_RUNNING, FJOB_EV_FINAL, FJOB_RELEASING},
    {FJOB_FAILED, FJOB_EV_FINAL, FJOB_RELEASING},
    {FJOB_RELEASING, FJOB_EV_RELEASED, FJOB_DONE},
};
#define NLEGAL (sizeof (legal) / sizeof (legal[0]))

static const struct move *find (enum fjob_state s, enum fjob_event ev)
{
    for (size_t i = 0; i < NLEGAL; i++)
        if (legal[i].from == s && legal[i].ev == ev)
            return &legal[i];
    return NULL;
}

/* Walk a path of events from new; every step must be legal. Returns the
 * state reached, or -1 at the first refusal. */
static int walk (const enum fjob_event *evs, size_t n)
{
    enum fjob_state s = FJOB_NEW;
    for (size_t i = 0; i < n; i++)
        if (fjob_state_next (s, evs[i], &s) < 0)
            return -1;
    return (int)s;
}

int main (void)
{
    plan (NO_PLAN);

    /* every pair */
    for (int s = 0; s < FJOB_STATE_COUNT; s++) {
        for (int ev = 0; ev < FJOB_EV_COUNT; ev++) {
            const struct move *m = find (s, ev);
            enum fjob_state to = FJOB_STATE_COUNT;
            errno = 0;
            int rc = fjob_state_next (s, ev, &to);
            if (m) {
                ok (rc == 0 && to == m->to, "%s in %s moves to %s (got %s)",
                    fjob_event_name (ev), fjob_state_name (s),
                    fjob_state_name (m->to),
                    rc == 0 ? fjob_state_name (to) : "a refusal");
            } else {
                ok (rc == -1 && errno == EINVAL && to == FJOB_STATE_COUNT,
                    "%s in %s is refused with EINVAL (rc %d, errno %d)",
                    fjob_event_name (ev), fjob_state_name (s), rc, errno);
            }
        }
    }

    /* out of range, either way */
    enum fjob_state to = FJOB_NEW;
    is_errno (fjob_state_next (FJOB_STATE_COUNT, FJOB_EV_BEGIN, &to), EINVAL,
              "a state out of range is refused");
    is_errno (fjob_state_next (FJOB_NEW, FJOB_EV_COUNT, &to), EINVAL,
              "an event out of range is refused");
    is_str (fjob_state_name (FJOB_STATE_COUNT), "?", "no name out of range");
    is_str (fjob_event_name (FJOB_EV_COUNT), "?", "no event name out of range");

    /* names: one each, none shared */
    int shared = 0;
    for (int a = 0; a < FJOB_STATE_COUNT; a++)
        for (int b = a + 1; b < FJOB_STATE_COUNT; b++)
            shared += !strcmp (fjob_state_name (a), fjob_state_name (b));
    is_int (shared, 0, "no two states share a name");
    is_str (fjob_state_name (FJOB_RUNNING), "running", "running is named");
    is_str (fjob_event_name (FJOB_EV_ATTACH), "attach", "attach is named");

    /* the module's paths, end to end */
    const enum fjob_event normal[] = {FJOB_EV_BEGIN, FJOB_EV_READY,
                                      FJOB_EV_ATTACH, FJOB_EV_FINAL,
                                      FJOB_EV_RELEASED};
    is_int (walk (normal, 5), FJOB_DONE,
            "begin, ready, attach, final, released: done");
    const enum fjob_event enoent[] = {FJOB_EV_BEGIN, FJOB_EV_READY,
                                      FJOB_EV_READY, FJOB_EV_ATTACH};
    is_int (walk (enoent, 4), FJOB_RUNNING,
            "a reattach refused as unknown, then a fresh start: running");
    const enum fjob_event early[] = {FJOB_EV_BEGIN, FJOB_EV_FAIL, FJOB_EV_FINAL,
                                     FJOB_EV_RELEASED};
    is_int (walk (early, 4), FJOB_DONE, "failed before cairnd: released");
    const enum fjob_event twice[] = {FJOB_EV_BEGIN, FJOB_EV_FAIL, FJOB_EV_FAIL};
    is_int (walk (twice, 3), -1, "a second failure is refused");
    const enum fjob_event late[] = {FJOB_EV_BEGIN, FJOB_EV_FAIL, FJOB_EV_READY};
    is_int (walk (late, 3), -1, "a failed job is never ready (not asked)");
    const enum fjob_event after[] = {FJOB_EV_BEGIN, FJOB_EV_READY,
                                     FJOB_EV_ATTACH, FJOB_EV_FINAL,
                                     FJOB_EV_FAIL};
    is_int (walk (after, 5), -1, "nothing fails once releasing");
    return done_testing ();
}
