/* cmd_jobs_view.c - what `cairn jobs` and `cairn show` say of a job, as
 * one JSON object (see cmd_journal.h, jcli_job_summary).
 *
 * Everything but the state and the rank sets comes from the events
 * themselves, not from the fold: a job whose events do not fold (state
 * "invalid") still shows its user, command and times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_journal.h"
#include "core/eventlog.h"
#include "core/jobtimes.h"
#include "core/jobid.h"

/* The order of the object's keys, which cairn(1) lists. */
const char *const jcli_summary_keys[] = {
    "id",         "f58",        "username", "userid",  "state",   "result",
    "returncode", "waitstatus", "active",   "nranks",  "ranks",   "released",
    "drained",    "nodelist",   "runtime",  "command", "cwd",     "expiration",
    "t_accept",   "t_start",    "t_finish", "t_clean", "nevents", "last_event",
    "t_last",     NULL,
};

/* What one pass over the events finds. */
struct scan {
    const json_t *accept; /* the first accept's context */
    struct jobtimes jt;
};

static void scan_events (const json_t *events, struct scan *sc)
{
    size_t i;
    json_t *w;

    memset (sc, 0, sizeof (*sc));
    json_array_foreach (events, i, w)
    {
        const char *name;
        double t;
        json_t *ctx;
        if (eventlog_entry_parse (json_object_get (w, "event"), &t, &name,
                                  &ctx) < 0)
            continue;
        if (job_event_of (name) == JOB_EV_ACCEPT && !sc->accept)
            sc->accept = ctx;
        jobtimes_event (&sc->jt, t, name, ctx);
    }
}

static double runtime_of (const struct jobtimes *jt, double now)
{
    if (jt->t_start == 0)
        return 0;
    double end = jt->t_finish > 0  ? jt->t_finish
                 : jt->t_clean > 0 ? jt->t_clean
                                   : now;
    return end > jt->t_start ? end - jt->t_start : 0;
}

static int set (json_t *o, const char *key, json_t *v)
{
    return json_object_set_new (o, key, v);
}

json_t *jcli_job_summary (uint64_t id,
                          const json_t *events,
                          const struct job *job,
                          bool active,
                          double now)
{
    char f58[JOBID_STRLEN], user[256];
    char *ranks = NULL, *rel = NULL, *drained = NULL, *nodes = NULL;
    char *command = NULL;
    struct rv1 *r = jcli_rv1 (events);
    struct idset *none = idset_create ();
    json_t *o = json_object ();
    struct scan sc;
    double t_last = 0;
    int rc = 0;

    scan_events (events, &sc);
    const char *lname = jcli_last_event (events, &t_last);
    const json_t *jobspec = json_object_get (sc.accept, "jobspec");
    const char *cwd = json_string_value (json_object_get (
        json_object_get (json_object_get (jobspec, "attributes"), "system"),
        "cwd"));
    json_t *uid = json_object_get (sc.accept, "userid");
    const struct idset *all = job ? job_ranks (job) : r ? rv1_ranks (r) : none;
    if (!o || !none || !(ranks = idset_encode (all)) ||
        !(rel = idset_encode (job ? job_released (job) : none)) ||
        !(drained = idset_encode (job ? job_drained (job) : none)) ||
        !(command = jcli_command (json_object_get (
              json_array_get (json_object_get (jobspec, "tasks"), 0),
              "command"))))
        goto nomem;
    /* the hosts of an R that does not decode are not known: "" */
    if (!(nodes = r ? jcli_hosts (r, rv1_ranks (r), true) : strdup ("")) &&
        !(nodes = strdup ("")))
        goto nomem;
    jcli_f58 (id, f58, sizeof (f58));
    if (json_is_integer (uid))
        jcli_username ((uint32_t)json_integer_value (uid), user, sizeof (user));
    int code = sc.jt.finished ? jcli_exit_code (sc.jt.status) : -1;
    double expiration = sc.jt.have_expiration ? sc.jt.expiration
                        : r                    ? rv1_expiration (r)
                                               : 0;

    rc |= set (o, "id", json_integer ((json_int_t)id));
    rc |= set (o, "f58", json_string (f58));
    rc |= set (o, "username",
               json_is_integer (uid) ? json_string (user) : json_null ());
    rc |= set (o, "userid",
               json_is_integer (uid) ? json_integer (json_integer_value (uid))
                                     : json_null ());
    rc |=
        set (o, "state",
             json_string (job ? job_state_name (job_state (job)) : "invalid"));
    rc |= set (o, "result", json_string (jobtimes_result (&sc.jt)));
    rc |= set (o, "returncode", code >= 0 ? json_integer (code) : json_null ());
    rc |= set (o, "waitstatus",
               sc.jt.finished ? json_integer (sc.jt.status) : json_null ());
    rc |= set (o, "active", json_boolean (active));
    rc |= set (o, "nranks", json_integer ((json_int_t)idset_count (all)));
    rc |= set (o, "ranks", json_string (ranks));
    rc |= set (o, "released", json_string (rel));
    rc |= set (o, "drained", json_string (drained));
    rc |= set (o, "nodelist", json_string (nodes));
    rc |= set (o, "runtime", json_real (runtime_of (&sc.jt, now)));
    rc |= set (o, "command", json_string (command));
    rc |= set (o, "cwd", json_string (cwd ? cwd : ""));
    rc |= set (o, "expiration", json_real (expiration));
    rc |= set (o, "t_accept", json_real (sc.jt.t_accept));
    rc |= set (o, "t_start", json_real (sc.jt.t_start));
    rc |= set (o, "t_finish", json_real (sc.jt.t_finish));
    rc |= set (o, "t_clean", json_real (sc.jt.t_clean));
    rc |=
        set (o, "nevents", json_integer ((json_int_t)json_array_size (events)));
    rc |= set (o, "last_event", json_string (lname));
    rc |= set (o, "t_last", json_real (t_last));
    if (rc != 0)
        goto nomem;
    goto done;
nomem:
    json_decref (o);
    o = NULL;
    errno = ENOMEM;
done:
    free (ranks);
    free (rel);
    free (drained);
    free (nodes);
    free (command);
    idset_destroy (none);
    rv1_destroy (r);
    return o;
}
