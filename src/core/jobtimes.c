/* jobtimes.c - see jobtimes.h. */
#include <stdio.h>
#include <string.h>

#include "core/job.h"
#include "core/jobtimes.h"

void jobtimes_event (struct jobtimes *jt,
                     double t,
                     const char *name,
                     const json_t *ctx)
{
    switch (job_event_of (name)) {
    case JOB_EV_ACCEPT:
        if (!jt->accepted) {
            jt->accepted = true;
            jt->t_accept = t;
        }
        break;
    case JOB_EV_START:
        jt->t_start = t;
        break;
    case JOB_EV_FINISH: {
        json_int_t st = -1;
        (void)json_unpack ((json_t *)ctx, "{s:I}", "status", &st);
        jt->finished = true;
        jt->status = (int)st;
        jt->t_finish = t;
        break;
    }
    case JOB_EV_CLEAN:
        jt->t_clean = t;
        break;
    case JOB_EV_EXCEPTION: {
        const char *type = "";
        int sev = -1;
        if (jt->fatal)
            break;
        (void)json_unpack ((json_t *)ctx, "{s?s s?i}", "type", &type,
                           "severity", &sev);
        if (sev == 0) {
            jt->fatal = true;
            snprintf (jt->fatal_type, sizeof (jt->fatal_type), "%s", type);
        }
        break;
    }
    case JOB_EV_EXPIRATION: {
        double e = 0;
        if (json_unpack ((json_t *)ctx, "{s:F}", "expiration", &e) == 0) {
            jt->have_expiration = true;
            jt->expiration = e;
        }
        break;
    }
    default:
        break;
    }
}

const char *jobtimes_result (const struct jobtimes *jt)
{
    if (jt->t_clean == 0)
        return "";
    if (jt->fatal) {
        if (!strcmp (jt->fatal_type, "cancel"))
            return "canceled";
        if (!strcmp (jt->fatal_type, "timeout"))
            return "timeout";
        return "failed";
    }
    return jt->finished && jt->status == 0 ? "completed" : "failed";
}
