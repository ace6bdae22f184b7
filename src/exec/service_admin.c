/* service_admin.c - the service's requests about cairnd rather than a
 * job (service.h): undrain (journaled, answered after the commit), and
 * list, bind and stats (answered at once).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "core/signame.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/killwait.h"
#include "exec/service_private.h"
#include "exec/service_views.h"
#include "exec/turn.h"
#include "journal/journal.h"
#include "journal/outbox.h"
#include "procs/procs.h"
#include "server/server.h"
#include "util/log.h"

static json_t *ranks_json (const struct idset *s)
{
    char *str = idset_encode (s);
    json_t *o = json_string (str ? str : "");
    free (str);
    return o;
}

/* ---- undrain ---- */

static int drained_cb (uint32_t rank, const char *rec, size_t len, void *arg)
{
    return idset_set (arg, rank) < 0 ? -1 : 0;
}

struct undrain {
    struct service *svc;
    const struct idset *ranks;
    size_t staged; /* ranks whose removal is in the batch */
};

static int stage_undrain (void *arg)
{
    struct undrain *u = arg;
    for (uint32_t r = idset_first (u->ranks); r != IDSET_INVALID_ID;
         r = idset_next (u->ranks, r), u->staged++)
        if (journal_drain (u->svc->journal, r, NULL) < 0)
            return -1;
    return 0;
}

/* undrain {ranks, only-drained?}: return drained ranks to service (cairn
 * undrain). Every rank must be drained, unless only-drained: then those
 * that are not are left out (the module mirroring Flux's undrains). Under
 * a bound Flux instance only its connection may (bind.h). The reply,
 * {"ranks": those undrained}, waits for the commit (outbox.h, O5). A
 * staging failure after some ranks were staged cannot be taken back out
 * of the batch: cairnd exits then, as for a failed commit, and the
 * restart finds every rank still drained. */
void service_req_undrain (struct service *svc,
                          struct conn *c,
                          int64_t matchtag,
                          json_t *payload)
{
    struct idset *ranks = service_get_ranks (c, matchtag, payload);
    struct idset *drained = idset_create (), *missing = NULL;
    struct cairn_error err = {{0}};
    json_t *only = json_object_get (payload, "only-drained");

    if (!ranks)
        goto done;
    if (only && !json_is_boolean (only)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "undrain: only-drained: must be true or false");
        goto done;
    }
    if (bind_check_undrain (svc->bindings, c, &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        goto done;
    }
    if (!drained || !(missing = idset_copy (ranks))) {
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        goto done;
    }
    if (journal_foreach_drain (svc->journal, drained_cb, drained, &err) < 0) {
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        goto done;
    }
    idset_subtract (missing, drained);
    if (json_is_true (only) && !idset_empty (ranks)) {
        idset_subtract (ranks, missing); /* those not drained: left out */
        idset_destroy (missing);
        if (!(missing = idset_create ())) {
            conn_respond_error (c, matchtag, ENOMEM, "out of memory");
            goto done;
        }
        if (idset_empty (ranks)) {
            turn_ack (svc->turn, c, matchtag, json_pack ("{s:s}", "ranks", ""));
            goto done;
        }
    }
    if (idset_empty (ranks) || !idset_empty (missing)) {
        char *s = idset_encode (missing);
        conn_respond_error (c, matchtag, EINVAL,
                            idset_empty (ranks) ? "ranks: empty"
                            : idset_count (missing) == 1
                                ? "rank %s is not drained"
                                : "ranks %s are not drained",
                            s ? s : "?");
        free (s);
        goto done;
    }
    struct undrain u = {.svc = svc, .ranks = ranks};
    if (outbox_put (svc->outbox, OUTBOX_JOBS, stage_undrain, &u, NULL) < 0) {
        char why[128];
        snprintf (why, sizeof (why), "undrain: %s", strerror (errno));
        if (u.staged > 0) /* in the batch, and no way to take them out */
            turn_journal_failed (why);
        conn_respond_error (c, matchtag, errno, "%s", why);
        goto done;
    }
    turn_ack (svc->turn, c, matchtag,
              json_pack ("{s:o}", "ranks", ranks_json (ranks)));
done:
    idset_destroy (ranks);
    idset_destroy (drained);
    idset_destroy (missing);
}

/* ---- read-only requests ---- */

void service_req_list (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload)
{
    json_t *jobs = json_array ();
    size_t pos = 0;
    struct jobentry *je;
    while ((je = jobtable_next (svc->jobs, &pos))) {
        const struct job *job = je->job;
        json_t *o = json_pack (
            "{s:I s:s s:o s:o s:o s:f s:i s:I}", "id", (json_int_t)job_id (job),
            "state", job_state_name (job_state (job)), "ranks",
            ranks_json (job_ranks (job)), "released",
            ranks_json (job_released (job)), "drained",
            ranks_json (job_drained (job)), "t_accept", job_t_accept (job),
            "userid", (int)job_userid (job), "nprocs",
            (json_int_t)job_nprocs (job));
        if (o && job_client (job))
            json_object_set_new (o, "client", json_string (job_client (job)));
        if (o && !job_privileged (job)) /* a user's, not a resource
                                           manager's (cairn-protocol(7)) */
            json_object_set_new (o, "privileged", json_false ());
        json_array_append_new (jobs, o);
    }
    json_t *r = json_pack ("{s:o}", "jobs", jobs);
    conn_respond (c, matchtag, r);
    json_decref (r);
}

/* The Flux instance of this connection (bind.h). */
void service_req_bind (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload)
{
    const char *uuid = NULL, *name = NULL;
    struct cairn_error err = {{0}};

    (void)json_unpack (payload, "{s?s s?s}", "instance", &uuid, "name", &name);
    if (bind_conn (svc->bindings, c, uuid, name, &err) < 0) {
        /* its module tries again every 10 s: said once */
        if (errno == EBUSY && strcmp (svc->bind_refused, uuid) != 0) {
            log_msg (LOG_WARNING, "%s", err.text);
            snprintf (svc->bind_refused, sizeof (svc->bind_refused), "%s",
                      uuid);
        }
        conn_respond_error (c, matchtag, errno, "%s", err.text);
        return;
    }
    svc->bind_refused[0] = '\0';
    log_msg (LOG_INFO, "client %ju: bound to Flux instance %s (%s)",
             (uintmax_t)conn_id (c), uuid, name);
    json_t *r = json_pack ("{s:s}", "instance", uuid);
    conn_respond (c, matchtag, r);
    json_decref (r);
}

void service_req_stats (struct service *svc,
                        struct conn *c,
                        int64_t matchtag,
                        json_t *payload)
{
    struct journal_stats st = {0};
    (void)journal_stats (svc->journal, &st);
    json_t *r = json_pack (
        "{s:s s:f s:I s:I s:I s:I s:I s:i s:{s:I s:I s:I s:I s:I s:I}}",
        "instance", journal_instance (svc->journal), "uptime",
        jobctx_now () - svc->t_start, "jobs",
        (json_int_t)jobtable_count (svc->jobs), "processes",
        (json_int_t)procs_count (svc->procs), "spawned",
        (json_int_t)procs_nspawned (svc->procs), "commits",
        (json_int_t)turn_ncommits (svc->turn), "jobs-done",
        (json_int_t)svc->ops.jobs_done (svc->arg), "connections",
        svc->ops.nconns (svc->arg), "journal", "map-size",
        (json_int_t)st.map_size, "map-used", (json_int_t)st.map_used,
        "max-map-size", (json_int_t)st.max_map_size, "data-used",
        (json_int_t)st.data_used, "jobs", (json_int_t)st.njobs, "events",
        (json_int_t)st.nevents);
    /* the kill settings, as Flux's job-exec reports its own */
    const struct exec_config *x = &svc->cfg->job.exec;
    json_t *e = json_pack (
        "{s:f s:f s:s s:s s:i}", "kill-timeout", x->kill_timeout,
        "max-kill-timeout", x->max_kill_timeout, "term-signal",
        signame_str (x->term_signal), "kill-signal",
        signame_str (x->kill_signal), "max-kill-count", x->max_kill_count);
    if (r && e)
        json_object_set_new (r, "exec", e);
    else
        json_decref (e);
    /* the Flux instance served (bind.h), while its module is connected */
    json_t *fi = bind_describe (svc->bindings);
    if (r && fi)
        json_object_set_new (r, "flux-instance", fi);
    else
        json_decref (fi);
    /* how a process's leftovers are found and killed (procs_cgroup.c) */
    if (r)
        json_object_set_new (r, "confinement",
                             json_string (procs_cgroup (svc->procs)
                                              ? "cgroup"
                                              : "process-group"));
    /* kills waiting for a job's shells to start (killwait.c) */
    if (r)
        json_object_set_new (
            r, "kills-waiting",
            json_integer ((json_int_t)killwait_count (svc->kills)));
    /* jobs requests whose summaries are being made (service_views.c) */
    if (r)
        json_object_set_new (
            r, "views-waiting",
            json_integer ((json_int_t)views_pending (svc->views)));
    conn_respond (c, matchtag, r);
    json_decref (r);
}
