/* t_jobtimes - the fold of a job's course that `cairn jobs` and cairnd's
 * "jobs" topic share. */
#include <jansson.h>

#include "tap.h"
#include "core/jobtimes.h"

static void ev (struct jobtimes *jt, double t, const char *name,
                const char *ctx)
{
    json_t *c = json_loads (ctx, 0, NULL);
    if (!c)
        BAIL_OUT ("bad test context %s", ctx);
    jobtimes_event (jt, t, name, c);
    json_decref (c);
}

int main (void)
{
    struct jobtimes jt = {0};

    plan (NO_PLAN);
    ev (&jt, 1, "accept", "{}");
    ev (&jt, 2, "accept", "{}");
    ok (jt.accepted && jt.t_accept == 1, "the first accept's time");
    ev (&jt, 3, "start", "{}");
    ev (&jt, 4, "proc-exit", "{\"status\":256}");
    ok (!jt.finished, "a process's exit is not the job's finish");
    is_str (jobtimes_result (&jt), "", "no result before clean");
    ev (&jt, 5, "finish", "{\"status\":0}");
    ev (&jt, 6, "clean", "{}");
    ok (jt.finished && jt.status == 0 && jt.t_finish == 5 && jt.t_clean == 6,
        "finish and clean");
    is_str (jobtimes_result (&jt), "completed", "status 0: completed");

    /* Results: each course ends with clean. */
    static const struct {
        const char *events[4][2]; /* name, context */
        const char *result, *what;
    } results[] = {
        {{{"finish", "{\"status\":256}"}}, "failed", "status 256: failed"},
        {{{"exception", "{\"type\":\"node-failure\",\"severity\":2}"},
          {"exception", "{\"type\":\"cancel\",\"severity\":0}"},
          {"exception", "{\"type\":\"timeout\",\"severity\":0}"}},
         "canceled",
         "the first severity-0 exception decides: canceled"},
        {{{"exception", "{\"type\":\"timeout\",\"severity\":0}"}},
         "timeout",
         "timeout"},
    };
    for (size_t i = 0; i < sizeof (results) / sizeof (results[0]); i++) {
        struct jobtimes r = {0};
        int k = 0;
        for (; k < 4 && results[i].events[k][0]; k++)
            ev (&r, k + 1, results[i].events[k][0], results[i].events[k][1]);
        ev (&r, k + 1, "clean", "{}");
        is_str (jobtimes_result (&r), results[i].result, "%s",
                results[i].what);
    }

    struct jobtimes e = {0};
    ev (&e, 1, "expiration", "{\"expiration\":\"soon\"}");
    ok (!e.have_expiration, "a malformed expiration is ignored");
    ev (&e, 2, "expiration", "{\"expiration\":100.5}");
    ok (e.have_expiration && e.expiration == 100.5, "an expiration event");
    ev (&e, 3, "finish", "{}");
    ok (e.finished && e.status == -1, "a finish without status: -1");
    return done_testing ();
}
