/* jobtimes.h - what a job's events say of its course, for the views of
 * `cairn jobs` and `cairn show` (cli/cmd_jobs_view.c) and cairnd's "jobs"
 * topic (exec/service_views.c): both fold the events themselves, not the
 * job, so that a job whose events do not fold still shows its times.
 */
#ifndef CAIRN_CORE_JOBTIMES_H
#define CAIRN_CORE_JOBTIMES_H

#include <jansson.h>
#include <stdbool.h>

struct jobtimes {
    double t_accept, t_start, t_finish, t_clean; /* 0: not (yet) */
    bool accepted;        /* t_accept is the first accept's */
    bool finished;        /* a finish event: status is its wait status */
    int status;
    bool fatal;           /* a severity-0 exception: fatal_type is the
                             first one's type */
    char fatal_type[32];
    bool have_expiration; /* an expiration event: it overrides R's */
    double expiration;
};

/* Fold the event (time t, name, context ctx) into jt, which starts zeroed.
 * Events other than accept, start, finish, clean, exception and
 * expiration change nothing; a malformed context is read as far as it
 * goes, never an error. */
void jobtimes_event (struct jobtimes *jt,
                     double t,
                     const char *name,
                     const json_t *ctx);

/* "completed", "failed", "canceled" or "timeout" once the job is clean,
 * "" before (cairn(1), RESULT). */
const char *jobtimes_result (const struct jobtimes *jt);

#endif /* CAIRN_CORE_JOBTIMES_H */
