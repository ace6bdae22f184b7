/* jobtimes.c - see jobtimes.h. */
#include <stdio.h>
#include <string.h>

#include "core/jobtimes.h"

void jobtimes_event (struct jobtimes *jt,
                     double t,
                     const char *name,
                     const json_t *ctx)
{
    if (!strcmp (name, "accept") && !jt->accepted) {
        jt->accepted = true;
        jt->t_accept = t;
    } else if (!strcmp (name, "start"))
        jt->t_start = t;
    else if (!strcmp (name, "finish")) {
        json_int_t st = -1;
        (void)json_unpack ((json_t *)ctx, "{s:I}", "status", &st);
        jt->finished = true;
        jt->status = (int)st;
        jt->t_finish = t;
    } else if (!strcmp (name, "clean"))
        jt->t_clean = t;
    else if (!strcmp (name, "exception") && !jt->fatal) {
        const char *type = "";
        int sev = -1;
        (void)json_unpack ((json_t *)ctx, "{s?s s?i}", "type", &type,
                           "severity", &sev);
        if (sev == 0) {
            jt->fatal = true;
            snprintf (jt->fatal_type, sizeof (jt->fatal_type), "%s", type);
        }
    } else if (!strcmp (name, "expiration")) {
        double e = 0;
        if (json_unpack ((json_t *)ctx, "{s:F}", "expiration", &e) == 0) {
            jt->have_expiration = true;
            jt->expiration = e;
        }
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
