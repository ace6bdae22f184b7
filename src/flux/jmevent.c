/* jmevent.c - see jmevent.h */
#include <errno.h>
#include <string.h>

#include "core/job.h"
#include "flux/jmevent.h"

json_t *jmevent_count (const char *eventlog)
{
    static const char *const names[] = {
        "start", "exception", "finish", "release", "free", "prolog-start",
        "prolog-finish", "epilog-start", "epilog-finish"};
    json_t *counts = json_object ();
    const char *p = eventlog;

    while (counts && p && *p) {
        const char *nl = strchr (p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen (p);
        json_t *e = json_loadb (p, n, 0, NULL);
        const char *name = NULL;
        if (e && json_unpack (e, "{s:s}", "name", &name) == 0) {
            for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
                if (strcmp (name, names[i]) == 0) {
                    json_int_t k =
                        json_integer_value (json_object_get (counts, name));
                    json_object_set_new (counts, name, json_integer (k + 1));
                }
        }
        json_decref (e);
        p = nl ? nl + 1 : NULL;
    }
    if (!counts)
        errno = ENOMEM;
    return counts;
}

bool jmevent_skip (json_t *counts, const char *name)
{
    json_int_t k = json_integer_value (json_object_get (counts, name));
    if (k <= 0)
        return false;
    json_object_set_new (counts, name, json_integer (k - 1));
    return true;
}

flux_future_t *jmevent_post_perilog (flux_t *h,
                                     flux_jobid_t id,
                                     const char *name,
                                     const json_t *ctx)
{
    json_t *c = json_object ();
    json_t *status = json_object_get (ctx, "status");
    flux_future_t *f = NULL;

    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    enum job_event ev = job_event_of (name);
    bool prolog = ev == JOB_EV_PROLOG_START || ev == JOB_EV_PROLOG_FINISH;
    json_object_set_new (c, "description",
                         json_string (prolog ? "job-manager.prolog"
                                             : "job-manager.epilog"));
    if (status)
        json_object_set (c, "status", status);
    f = jmevent_post (h, id, name, c);
    json_decref (c);
    return f;
}

flux_future_t *jmevent_post (flux_t *h,
                             flux_jobid_t id,
                             const char *name,
                             const json_t *ctx)
{
    return flux_rpc_pack (h, "job-manager.post-event.post", 0, 0,
                          "{s:I s:s s:O}", "id", (json_int_t)id, "name", name,
                          "context", ctx);
}
