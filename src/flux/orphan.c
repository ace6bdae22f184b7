/* orphan.c - see orphan.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"
#include "core/streamtype.h"
#include "flux/fctx.h"
#include "flux/fjob.h"
#include "flux/fjobs.h"
#include "flux/orphan.h"

struct orphan {
    struct fctx *ctx;
    flux_jobid_t id;
    char f58[32];
    bool housekeeping;   /* partial mode, past the shells, not in Flux's
                          * housekeeping list: lost with a broker restart */
    struct idset *held;  /* ranks drained here, to undrain on release */
    int64_t matchtag;    /* cairnd stream once watching, else 0 */
    flux_future_t *step; /* the lookup in progress */
    struct orphan *next;
};

static void orphan_destroy (struct orphan *o)
{
    if (!o)
        return;
    if (o->matchtag) /* its stream's replies are nobody's now */
        cconn_rpc_cancel (o->ctx->cc, o->matchtag);
    flux_future_destroy (o->step);
    idset_destroy (o->held);
    free (o);
}

static void orphan_remove (struct orphan *o)
{
    struct orphan **pp = &o->ctx->orphans;
    while (*pp && *pp != o)
        pp = &(*pp)->next;
    if (*pp)
        *pp = o->next;
    orphan_destroy (o);
}

/* Fire and forget: resource.drain / resource.undrain of ranks. */
static void resource_rpc (struct orphan *o,
                          const char *topic,
                          const struct idset *ranks)
{
    char *s = idset_encode (ranks);
    char reason[160];
    flux_future_t *f = NULL;

    snprintf (reason, sizeof (reason),
              "cairn: job %s still running (%s lost in a broker restart)",
              o->f58, o->housekeeping ? "housekeeping" : "the job");
    if (s && !strcmp (topic, "resource.drain"))
        f = flux_rpc_pack (o->ctx->h, topic, 0, 0, "{s:s s:s s:s}", "targets",
                           s, "reason", reason, "mode", "update");
    else if (s)
        f = flux_rpc_pack (o->ctx->h, topic, 0, 0, "{s:s}", "targets", s);
    if (!f)
        flux_log_error (o->ctx->h, "job %s: %s", o->f58, topic);
    else
        flux_log (o->ctx->h, LOG_INFO, "job %s: %s %s", o->f58, topic, s);
    flux_future_destroy (f); /* the request is out; its answer is not ours */
    free (s);
}

/* ---- cairnd's stream for a watched job ---- */

/* A response on the stream of a watched job (arg: the orphan). */
static void stream_cb (const json_t *msg, void *arg)
{
    struct orphan *o = arg;
    json_t *payload = NULL, *data = NULL;
    const char *type = NULL, *ranks = NULL;
    int final = 0;

    (void)json_unpack ((json_t *)msg, "{s?o}", "payload", &payload);
    if (!payload) { /* gone from cairnd meanwhile: nothing runs */
        resource_rpc (o, "resource.undrain", o->held);
        orphan_remove (o);
        return;
    }
    if (json_unpack (payload, "{s:s s?o}", "type", &type, "data", &data) < 0)
        return;
    struct stream_resp r = stream_resp_of (type);
    bool release = r.type == STREAM_EVENT && r.event == JOB_EV_RELEASE;
    bool drain = r.type == STREAM_EVENT && r.event == JOB_EV_DRAIN;
    if ((!release && !drain) ||
        json_unpack (data, "{s:s s?b}", "ranks", &ranks, "final", &final) < 0)
        return;
    struct idset *ids = idset_decode (ranks, NULL);
    struct idset *mine = ids ? idset_intersect (o->held, ids) : NULL;
    if (mine && !idset_empty (mine)) {
        (void)idset_subtract (o->held, mine);
        /* a rank cairnd drained stays drained, with cairnd's reason */
        if (release)
            resource_rpc (o, "resource.undrain", mine);
    }
    idset_destroy (ids);
    idset_destroy (mine);
    if ((release && final) || idset_empty (o->held))
        orphan_remove (o);
}

static void watch (struct orphan *o)
{
    struct fctx *ctx = o->ctx;
    json_t *p = json_pack ("{s:I s:b s:i s:b}", "id", (json_int_t)o->id,
                           "reattach", 1, "since", 0, "events", 1);
    resource_rpc (o, "resource.drain", o->held);
    int64_t mt =
        p ? cconn_rpc (ctx->cc, "start", p, CREPLY_STREAMING, stream_cb, o)
          : -1;
    o->matchtag = mt > 0 ? mt : 0;
    if (mt < 0) {
        flux_log_error (ctx->h, "job %s: reattach", o->f58);
        orphan_remove (o);
    }
    json_decref (p);
}

/* ---- finding them ---- */

/* Flux no longer has the job at all: have cairnd end it (its epilog still
 * runs; its shells are killed), and keep its ranks drained till then. */
static void lost (struct orphan *o)
{
    struct fctx *ctx = o->ctx;
    json_t *p = json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)o->id,
                           "type", "exec", "severity", 0, "note",
                           "Flux has no record of this job (lost in a "
                           "broker restart)");
    flux_log (ctx->h, LOG_ERR, "job %s: unknown to Flux; ending it in cairnd",
              o->f58);
    if (!p || cconn_rpc (ctx->cc, "exception", p, 0, NULL, NULL) < 0)
        flux_log_error (ctx->h, "job %s: exception to cairnd", o->f58);
    json_decref (p);
    if (idset_empty (o->held))
        orphan_remove (o);
    else
        watch (o);
}

static void eventlog_cb (flux_future_t *f, void *arg)
{
    struct orphan *o = arg;
    const char *s = NULL;
    int rc = flux_kvs_lookup_get (f, &s);
    int errnum = errno;

    /* `free`: the job-manager handed the ranks to housekeeping, which the
     * restart lost */
    bool freed = rc == 0 && s && strstr (s, "\"name\":\"free\"");

    o->step = NULL;
    flux_future_destroy (f); /* s is gone with it */
    if (rc < 0 && errnum == ENOENT)
        lost (o);
    else if (freed && o->housekeeping && !idset_empty (o->held))
        watch (o);
    else
        orphan_remove (o);
}

static void consider (struct fctx *ctx, json_t *job, json_t *running)
{
    json_int_t id = 0;
    const char *state = NULL, *ranks = NULL, *released = "", *drained = "";
    const char *client = NULL;
    int privileged = 1;
    struct orphan *o = NULL;
    char key[128];

    if (json_unpack (job, "{s:I s:s s:s s?s s?s s?s s?b}", "id", &id, "state",
                     &state, "ranks", &ranks, "released", &released, "drained",
                     &drained, "client", &client, "privileged",
                     &privileged) < 0 ||
        !client || strcmp (client, FJOB_CLIENT) != 0 || /* not ours */
        !privileged || /* a user's, whatever its jobspec says (adopt.h) */
        fjobs_find (ctx->jobs, (flux_jobid_t)id))
        return;
    for (o = ctx->orphans; o; o = o->next)
        if (o->id == (flux_jobid_t)id)
            return;
    if (!(o = calloc (1, sizeof (*o))))
        return;
    o->ctx = ctx;
    o->id = (flux_jobid_t)id;
    o->next = ctx->orphans;
    ctx->orphans = o;
    struct idset *rel = *released ? idset_decode (released, NULL)
                                  : idset_create ();
    struct idset *dr = *drained ? idset_decode (drained, NULL)
                                : idset_create ();
    if (flux_job_id_encode (o->id, "f58", o->f58, sizeof (o->f58)) < 0 ||
        !(o->held = idset_decode (ranks, NULL)) || !rel || !dr ||
        idset_subtract (o->held, rel) < 0 ||
        idset_subtract (o->held, dr) < 0 ||
        flux_job_kvs_key (key, sizeof (key), o->id, "eventlog") < 0 ||
        !(o->step = flux_kvs_lookup (ctx->h, NULL, 0, key)) ||
        flux_future_then (o->step, -1, eventlog_cb, o) < 0)
        orphan_remove (o);
    else
        o->housekeeping = ctx->partial && !strcmp (state, "cleanup") &&
                          !json_object_get (running, o->f58);
    idset_destroy (rel);
    idset_destroy (dr);
}

/* First Flux's housekeeping list, then cairnd's jobs. */
struct lookup {
    json_t *running; /* housekeeping's jobs, by f58 */
    int64_t matchtag; /* cairnd's `list`, once sent */
};

static void lookup_destroy (struct fctx *ctx)
{
    if (ctx->orphan_lookup) {
        if (ctx->orphan_lookup->matchtag)
            cconn_rpc_cancel (ctx->cc, ctx->orphan_lookup->matchtag);
        json_decref (ctx->orphan_lookup->running);
        free (ctx->orphan_lookup);
        ctx->orphan_lookup = NULL;
    }
}

static void list_answer (const json_t *msg, void *arg);

static void stats_cb (flux_future_t *f, void *arg)
{
    struct fctx *ctx = arg;
    struct lookup *l = ctx->orphan_lookup;
    json_t *running = NULL;

    if (flux_rpc_get_unpack (f, "{s:{s:o}}", "housekeeping", "running",
                             &running) < 0) {
        flux_log_error (ctx->h, "orphan: job-manager.stats-get");
        lookup_destroy (ctx);
    } else if (l) {
        l->running = json_incref (running);
        json_t *none = json_object ();
        int64_t mt =
            none ? cconn_rpc (ctx->cc, "list", none, 0, list_answer, ctx) : -1;
        l->matchtag = mt > 0 ? mt : 0;
        if (mt < 0) {
            if (errno != ENOTCONN) /* else the next run starts over */
                flux_log_error (ctx->h, "orphan: list to cairnd");
            lookup_destroy (ctx);
        }
        json_decref (none);
    }
    flux_future_destroy (f);
}

void orphan_run (struct fctx *ctx)
{
    flux_future_t *f;

    if (ctx->orphan_lookup ||
        !(ctx->orphan_lookup = calloc (1, sizeof (struct lookup))))
        return;
    if (!(f = flux_rpc (ctx->h, "job-manager.stats-get", NULL, 0, 0)) ||
        flux_future_then (f, -1, stats_cb, ctx) < 0) {
        flux_log_error (ctx->h, "orphan: job-manager.stats-get");
        flux_future_destroy (f);
        lookup_destroy (ctx);
    }
}

/* The answer to the lookup's `list` (arg: the module's context). */
static void list_answer (const json_t *msg, void *arg)
{
    struct fctx *ctx = arg;
    json_t *jobs = NULL, *j;
    size_t i;

    if (!ctx->orphan_lookup)
        return;
    ctx->orphan_lookup->matchtag = 0; /* answered: nothing to cancel */
    (void)json_unpack ((json_t *)msg, "{s?{s:o}}", "payload", "jobs", &jobs);
    json_array_foreach (jobs, i, j)
        consider (ctx, j, ctx->orphan_lookup->running);
    lookup_destroy (ctx);
}

void orphan_cancel_all (struct fctx *ctx)
{
    lookup_destroy (ctx);
    while (ctx->orphans) {
        struct orphan *o = ctx->orphans;
        ctx->orphans = o->next;
        orphan_destroy (o);
    }
}
