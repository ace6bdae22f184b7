/* resync.c - see resync.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/streamtype.h"
#include "flux/adopt.h"
#include "flux/fctx.h"
#include "flux/fjob.h"
#include "flux/fjobs.h"
#include "flux/fshell.h"
#include "flux/guest.h"
#include "flux/jmevent.h"
#include "flux/resync.h"

/* RFC 21 states, as job-manager.list reports them */
#define STATE_RUN 16
#define STATE_CLEANUP 32

struct resync {
    struct fctx *ctx;
    flux_jobid_t id;
    uint32_t userid;
    enum job_event want; /* prolog-finish, epilog-finish or release */
    int64_t matchtag;    /* cairnd stream, 0 until sent */
    json_t *counts;      /* what the job's eventlog already holds */
    json_t *seen;        /* events of cairnd's stream so far, by name */
    json_t *queue;       /* [{what (enum post), ...}] to do, in order */
    flux_future_t *step; /* queue[0] being done */
    bool posted_want;    /* the awaited *-finish is queued */
    struct resync *next;
};

/* What a queued item does with the job-manager. */
enum post {
    POST_PERILOG,   /* a prolog-/epilog- event, with perilog.so's context */
    POST_EXCEPTION, /* job-manager.raise */
    POST_AS_IS,     /* an event as it is (the final release) */
    POST_DRAIN,     /* resource.drain */
};
static const char *const post_names[] = {
    [POST_PERILOG] = "event",
    [POST_EXCEPTION] = "exception",
    [POST_AS_IS] = "post",
    [POST_DRAIN] = "drain",
};

static void resync_destroy (struct resync *r)
{
    if (!r)
        return;
    /* nothing more on its stream is anybody's */
    if (r->matchtag)
        cconn_rpc_cancel (r->ctx->cc, r->matchtag);
    flux_future_destroy (r->step);
    json_decref (r->counts);
    json_decref (r->seen);
    json_decref (r->queue);
    free (r);
}

static void resync_remove (struct resync *r)
{
    struct resync **pp = &r->ctx->resyncs;
    while (*pp && *pp != r)
        pp = &(*pp)->next;
    if (*pp)
        *pp = r->next;
    resync_destroy (r);
}

static bool resync_has (struct fctx *ctx, flux_jobid_t id)
{
    for (struct resync *r = ctx->resyncs; r; r = r->next)
        if (r->id == id)
            return true;
    return false;
}

/* ---- posting, one at a time, in order ---- */

static void pump (struct resync *r);

static void step_cb (flux_future_t *f, void *arg)
{
    struct resync *r = arg;
    if (flux_future_get (f, NULL) < 0)
        flux_log (r->ctx->h, LOG_ERR, "resync %ju: %s", (uintmax_t)r->id,
                  future_strerror (f, errno));
    flux_future_destroy (f);
    r->step = NULL;
    json_array_remove (r->queue, 0);
    pump (r);
}

static void pump (struct resync *r)
{
    flux_t *h = r->ctx->h;

    while (!r->step && json_array_size (r->queue) > 0) {
        json_t *it = json_array_get (r->queue, 0);
        enum post what = json_integer_value (json_object_get (it, "what"));
        const char *name = json_string_value (json_object_get (it, "name"));
        json_t *data = json_object_get (it, "data");
        flux_future_t *f = NULL;

        switch (what) {
        case POST_PERILOG:
            f = jmevent_post_perilog (h, r->id, name, data);
            break;
        case POST_EXCEPTION: {
            const char *note =
                json_string_value (json_object_get (data, "note"));
            f = flux_rpc_pack (
                h, "job-manager.raise", 0, 0, "{s:I s:O s:O s:s}", "id",
                (json_int_t)r->id, "severity",
                json_object_get (data, "severity"), "type",
                json_object_get (data, "type"), "note", note ? note : "");
            break;
        }
        case POST_AS_IS:
            f = jmevent_post (h, r->id, name, data);
            break;
        case POST_DRAIN:
            f = flux_rpc_pack (h, "resource.drain", 0, 0, "{s:O s:O s:s}",
                               "targets", json_object_get (data, "ranks"),
                               "reason", json_object_get (data, "reason"),
                               "mode", "update");
            break;
        }
        if (!f || flux_future_then (f, -1, step_cb, r) < 0) {
            flux_log_error (h, "resync %ju: %s", (uintmax_t)r->id,
                            post_names[what]);
            flux_future_destroy (f);
            json_array_remove (r->queue, 0);
            continue;
        }
        r->step = f;
    }
    if (!r->step && r->posted_want) {
        flux_log (h, LOG_INFO, "resync %ju: %s posted from cairnd's journal",
                  (uintmax_t)r->id, job_event_name (r->want));
        char key[24];
        snprintf (key, sizeof (key), "%ju", (uintmax_t)r->id);
        (void)json_object_set (r->ctx->resynced, key, r->seen);
        resync_remove (r); /* what follows is the job-manager's to ask */
    }
}

static void enqueue (struct resync *r, enum post what, const char *name,
                     json_t *data)
{
    json_t *it = json_pack ("{s:i s:O}", "what", (int)what, "data",
                            data ? data : json_null ());
    if (it && name)
        json_object_set_new (it, "name", json_string (name));
    if (it)
        json_array_append_new (r->queue, it);
}

/* ---- cairnd's stream ---- */

/* One response of the job's stream: type, decoded as resp. */
static void on_event (struct resync *r,
                      const char *type,
                      struct stream_resp resp,
                      json_t *data)
{
    if (r->posted_want)
        return;
    json_int_t k = json_integer_value (json_object_get (r->seen, type));
    json_object_set_new (r->seen, type, json_integer (k + 1));
    if (resp.type != STREAM_EVENT)
        return;
    switch (resp.event) {
    case JOB_EV_PROLOG_START:
    case JOB_EV_PROLOG_FINISH:
    case JOB_EV_EPILOG_START:
    case JOB_EV_EPILOG_FINISH:
        if (jmevent_skip (r->counts, type))
            return;
        enqueue (r, POST_PERILOG, type, data);
        if (resp.event == r->want)
            r->posted_want = true;
        break;
    case JOB_EV_EXCEPTION:
        if (!jmevent_skip (r->counts, "exception"))
            enqueue (r, POST_EXCEPTION, NULL, data);
        break;
    case JOB_EV_DRAIN:
        /* a drain goes before its *-finish: if that is in the eventlog,
         * so was the drain in Flux */
        if (!json_integer_value (
                json_object_get (r->counts, job_event_name (r->want))))
            enqueue (r, POST_DRAIN, NULL, data);
        break;
    case JOB_EV_RELEASE:
        if (r->want == JOB_EV_RELEASE) {
            int final = 0;
            (void)json_unpack (data, "{s?b}", "final", &final);
            if (final) {
                enqueue (r, POST_AS_IS, type, data);
                r->posted_want = true;
            }
        }
        break;
    default:
        break;
    }
}

/* cairnd does not know the job: end what Flux waits for, as a failure.
 * For a release, the exception is enough: nothing of the job runs under
 * cairn, and the job-manager frees the job on its next event, having
 * stopped waiting on the start stream when the module left. */
static void unknown_job (struct resync *r, const char *errstr)
{
    char note[256];
    const char *want = job_event_name (r->want);
    snprintf (note, sizeof (note), "%s: cairnd: %s", want,
              errstr ? errstr : "no such job");
    json_t *ex = json_pack ("{s:i s:s s:s}", "severity", 0, "type", "exec",
                            "note", note);
    json_t *fin = json_pack ("{s:i}", "status", 1);
    enqueue (r, POST_EXCEPTION, NULL, ex);
    if (r->want != JOB_EV_RELEASE)
        enqueue (r, POST_PERILOG, want, fin);
    json_object_set_new (r->seen, want, json_integer (
        json_integer_value (json_object_get (r->counts, want)) + 1));
    r->posted_want = true;
    json_decref (ex);
    json_decref (fin);
}

/* A response on a resync's stream (reattach). */
static void stream_cb (const json_t *msg, void *arg)
{
    struct resync *r = arg;
    struct cconn_msg m;
    const char *type = NULL;
    json_t *data = NULL;

    cconn_msg_split (msg, &m);
    if (m.errnum) {
        if (!r->posted_want)
            unknown_job (r, m.errstr);
    } else if (json_unpack (m.payload, "{s:s s?o}", "type", &type, "data",
                            &data) == 0) {
        struct stream_resp resp = stream_resp_of (type);
        char f58[32] = "", note[256];
        (void)flux_job_id_encode (r->id, "f58", f58, sizeof (f58));
        if (resp.type == STREAM_REATTACHED &&
            adopt_check (data, r->userid, f58, note, sizeof (note)) < 0) {
            /* another's job under this id (adopt.h): ends what Flux
             * waits for, and nothing of that job is followed */
            flux_log (r->ctx->h, LOG_ERR, "resync %ju: %s", (uintmax_t)r->id,
                      note);
            if (!r->posted_want)
                unknown_job (r, note);
        } else
            on_event (r, type, resp, data);
    }
    pump (r); /* may free r */
}

/* ---- finding the jobs ---- */

static void ns_cb (flux_future_t *f, void *arg);
static void reattach (struct resync *r);

static void eventlog_cb (flux_future_t *f, void *arg)
{
    struct resync *r = arg;
    struct fctx *ctx = r->ctx;
    const char *s = NULL;
    int state = (int)(intptr_t)flux_future_aux_get (f, "state");

    r->step = NULL;
    if (flux_kvs_lookup_get (f, &s) < 0 || !(r->counts = jmevent_count (s))) {
        flux_log_error (ctx->h, "resync %ju: eventlog", (uintmax_t)r->id);
        flux_future_destroy (f);
        resync_remove (r);
        return;
    }
    flux_future_destroy (f);
    json_int_t ps = json_integer_value (json_object_get (r->counts,
                                                          "prolog-start"));
    json_int_t pf = json_integer_value (json_object_get (r->counts,
                                                          "prolog-finish"));
    json_int_t es = json_integer_value (json_object_get (r->counts,
                                                          "epilog-start"));
    json_int_t ef = json_integer_value (json_object_get (r->counts,
                                                          "epilog-finish"));
    if (ps > pf)
        r->want = JOB_EV_PROLOG_FINISH;
    else if (state == STATE_CLEANUP && es > ef)
        r->want = JOB_EV_EPILOG_FINISH;
    else if (state == STATE_CLEANUP &&
             !json_integer_value (json_object_get (r->counts, "free")))
        /* The job-manager waits for the final release, and the module
         * that was to send it is gone (a reload between finish and
         * release): the job-manager sends no start for a job past RUN,
         * so nothing would ever come. cairnd's is posted, once it has
         * sent it; the event lets the job-manager free the job (it
         * stopped waiting on the start stream when the module left). */
        r->want = JOB_EV_RELEASE;
    else {
        resync_remove (r); /* nothing of ours is pending */
        return;
    }
    /* cairnd starts the shells as soon as its prolog ends, and they need
     * the job's guest namespace, which did not survive the broker: create
     * it first (fjob adopts it when the job-manager's start comes) */
    if (r->want == JOB_EV_PROLOG_FINISH) {
        flux_future_t *ns = guest_create (ctx->h, r->id, r->userid, false);
        if (ns && flux_future_then (ns, -1, ns_cb, r) == 0) {
            r->step = ns;
            return;
        }
        flux_log_error (ctx->h, "resync %ju: guest namespace",
                        (uintmax_t)r->id);
        flux_future_destroy (ns);
    }
    reattach (r);
}

static void ns_cb (flux_future_t *f, void *arg)
{
    struct resync *r = arg;
    if (flux_future_get (f, NULL) < 0)
        flux_log_error (r->ctx->h, "resync %ju: guest namespace",
                        (uintmax_t)r->id);
    flux_future_destroy (f);
    r->step = NULL;
    reattach (r);
}

static void reattach (struct resync *r)
{
    struct fctx *ctx = r->ctx;
    json_t *p = json_pack ("{s:I s:b s:i s:b}", "id", (json_int_t)r->id,
                           "reattach", 1, "since", 0, "events", 1);
    int64_t mt = p ? cconn_rpc (ctx->cc, "start", p, CREPLY_STREAMING,
                                stream_cb, r)
                   : -1;
    if (mt < 0) {
        flux_log_error (ctx->h, "resync %ju: reattach", (uintmax_t)r->id);
        resync_remove (r);
    } else {
        r->matchtag = mt;
        flux_log (ctx->h, LOG_INFO, "resync %ju: waiting for %s in cairnd",
                  (uintmax_t)r->id, job_event_name (r->want));
    }
    json_decref (p);
}

static void resync_job (struct fctx *ctx,
                        flux_jobid_t id,
                        uint32_t userid,
                        int state)
{
    char key[128];
    struct resync *r;
    flux_future_t *f = NULL;

    if (fjobs_find (ctx->jobs, id) || resync_has (ctx, id))
        return; /* a start stream, or already being looked at */
    if (!(r = calloc (1, sizeof (*r))) || !(r->queue = json_array ()) ||
        !(r->seen = json_object ())) {
        resync_destroy (r);
        return;
    }
    r->ctx = ctx;
    r->id = id;
    r->userid = userid;
    r->next = ctx->resyncs;
    ctx->resyncs = r;
    if (flux_job_kvs_key (key, sizeof (key), id, "eventlog") < 0 ||
        !(f = flux_kvs_lookup (ctx->h, NULL, 0, key)) ||
        flux_future_aux_set (f, "state", (void *)(intptr_t)state, NULL) < 0 ||
        flux_future_then (f, -1, eventlog_cb, r) < 0) {
        flux_future_destroy (f);
        resync_remove (r);
        return;
    }
    r->step = f;
}

static void list_cb (flux_future_t *f, void *arg)
{
    struct fctx *ctx = arg;
    json_t *jobs, *j;
    size_t i;

    if (flux_rpc_get_unpack (f, "{s:o}", "jobs", &jobs) < 0)
        flux_log_error (ctx->h, "resync: job-manager.list");
    else
        json_array_foreach (jobs, i, j) {
            json_int_t id = 0, userid = 0;
            int state = 0;
            if (json_unpack (j, "{s:I s:I s:i}", "id", &id, "userid", &userid,
                             "state", &state) == 0 &&
                (state == STATE_RUN || state == STATE_CLEANUP))
                resync_job (ctx, (flux_jobid_t)id, (uint32_t)userid, state);
        }
    flux_future_destroy (f);
}

void resync_run (struct fctx *ctx)
{
    flux_future_t *f = flux_rpc_pack (ctx->h, "job-manager.list", 0, 0,
                                      "{s:i}", "max_entries", 0);
    if (!f || flux_future_then (f, -1, list_cb, ctx) < 0) {
        flux_log_error (ctx->h, "resync: job-manager.list");
        flux_future_destroy (f);
    }
}

void resync_cancel_all (struct fctx *ctx)
{
    while (ctx->resyncs) {
        struct resync *r = ctx->resyncs;
        ctx->resyncs = r->next;
        resync_destroy (r);
    }
}

json_t *resync_take_seen (struct fctx *ctx, flux_jobid_t id)
{
    char key[24];
    snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
    json_t *seen = json_incref (json_object_get (ctx->resynced, key));
    (void)json_object_del (ctx->resynced, key);
    return seen;
}

bool resync_park_barrier (struct fctx *ctx,
                          flux_jobid_t id,
                          uint32_t rank,
                          const flux_msg_t *msg)
{
    char key[24];
    snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
    if (!resync_has (ctx, id) && !json_object_get (ctx->resynced, key))
        return false;
    struct early_barrier *e =
        realloc (ctx->early, (ctx->nearly + 1) * sizeof (*e));
    if (!e)
        return false;
    ctx->early = e;
    e[ctx->nearly++] = (struct early_barrier){id, rank, flux_msg_incref (msg)};
    return true;
}

void resync_hand_barriers (struct fctx *ctx, struct fjob *job)
{
    size_t i = 0;
    while (i < ctx->nearly) {
        struct early_barrier e = ctx->early[i];
        if (e.id != fjob_id (job)) {
            i++;
            continue;
        }
        ctx->early[i] = ctx->early[--ctx->nearly];
        if (flux_msg_authorize (e.msg, fjob_userid (job)) < 0)
            fshell_barrier_reply (ctx->h, e.msg, EPERM);
        else
            fjob_barrier (job, e.msg, e.rank);
        flux_msg_decref (e.msg);
    }
}

void resync_drop_barriers (struct fctx *ctx)
{
    for (size_t i = 0; i < ctx->nearly; i++) {
        fshell_barrier_reply (ctx->h, ctx->early[i].msg, EIO);
        flux_msg_decref (ctx->early[i].msg);
    }
    free (ctx->early);
    ctx->early = NULL;
    ctx->nearly = 0;
}
