/* noderelay.c - see noderelay.h */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flux/cairnsvc.h"
#include "flux/fctx.h"
#include "flux/noderelay.h"

/* A cairn.* RPC to a node, until its answer. */
struct relayed {
    struct noderelay *nr;
    flux_future_t *f;
    uint32_t rank;
    char topic[16];
    struct relayed *prev, *next;
};

struct noderelay {
    struct fctx *ctx;
    struct cairnsvc *svc;
    flux_msg_handler_t **handlers;
    int64_t relay_mt;          /* node-relay stream on this connection, or 0 */
    bool relay_off;            /* refused or ended: until the next connection */
    struct relayed *inflight;  /* newest first */
    int *rank_errno;           /* per rank: 0, or the last error it gave */
};

/* The topics cairnd may ask a node for. */
static const char *const node_topics[] = {"node-exec", "node-signal",
                                          "node-ack"};

/* ---- RPCs to the nodes ---- */

static void relayed_remove (struct relayed *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        r->nr->inflight = r->next;
    if (r->next)
        r->next->prev = r->prev;
    flux_future_destroy (r->f);
    free (r);
}

/* cairnd's answer to a node-report: only an error is worth a line. */
static void report_cb (const json_t *msg, void *arg)
{
    struct noderelay *nr = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (m.errnum != 0)
        flux_log (nr->ctx->h, LOG_DEBUG, "node-report: cairnd: %s",
                  m.errstr ? m.errstr : strerror ((int)m.errnum));
}

/* A node answered a node-exec: hand the REPORT to cairnd. Its answer is
 * not waited for: a report that does not make it is asked for again. */
static void report_send (struct noderelay *nr, uint32_t rank, json_t *answer)
{
    flux_t *h = nr->ctx->h;
    struct cconn *cc = nr->ctx->cc;
    json_t *p;
    int64_t mt;

    if (!cconn_up (cc)) {
        flux_log (h, LOG_DEBUG, "rank %u: node-exec answer dropped: cairnd "
                                "is not connected", (unsigned)rank);
        return;
    }
    if (!(p = json_pack ("{s:I s:O}", "rank", (json_int_t)rank, "report",
                         answer)) ||
        (mt = cconn_rpc (cc, "node-report", p, 0, report_cb, nr)) < 0)
        flux_log_error (h, "rank %u: node-report to cairnd", (unsigned)rank);
    json_decref (p);
}

static void relayed_cb (flux_future_t *f, void *arg)
{
    struct relayed *r = arg;
    struct noderelay *nr = r->nr;
    flux_t *h = nr->ctx->h;
    int *last = &nr->rank_errno[r->rank];
    json_t *answer = NULL;

    if (flux_rpc_get_unpack (f, "o", &answer) < 0 && errno != ENOENT) {
        /* unreachable, module not loaded (ENOSYS), no cairnd there
         * (ENOTCONN)...: cairnd asks again on its own */
        int e = errno;
        const char *why = flux_future_error_string (f);
        flux_log (h, *last == e ? LOG_DEBUG : LOG_INFO, "rank %u: cairn.%s: "
                  "%s", (unsigned)r->rank, r->topic, why ? why : strerror (e));
        *last = e;
    } else {
        if (*last != 0)
            flux_log (h, LOG_INFO, "rank %u: answers cairn.%s again",
                      (unsigned)r->rank, r->topic);
        *last = 0;
        if (answer && !strcmp (r->topic, "node-exec"))
            report_send (nr, r->rank, answer);
    }
    relayed_remove (r);
}

/* One message of cairnd's node-relay stream. */
static void relay_message (struct noderelay *nr, const json_t *payload)
{
    flux_t *h = nr->ctx->h;
    json_int_t rank = -1;
    const char *topic = NULL;
    json_t *p = NULL;
    struct relayed *r = NULL;
    char t[32];
    size_t i, n = sizeof (node_topics) / sizeof (node_topics[0]);

    if (json_unpack ((json_t *)payload, "{s:I s:s s:o}", "rank", &rank,
                     "topic", &topic, "payload", &p) < 0 ||
        !json_is_object (p) || rank < 0 || rank >= nr->ctx->size) {
        flux_log (h, LOG_ERR, "node-relay: malformed message from cairnd "
                              "(rank %jd); dropped", (intmax_t)rank);
        return;
    }
    for (i = 0; i < n && strcmp (topic, node_topics[i]) != 0; i++)
        ;
    if (i == n) {
        flux_log (h, LOG_ERR, "node-relay: unknown topic '%s' for rank %jd; "
                              "dropped", topic, (intmax_t)rank);
        return;
    }
    snprintf (t, sizeof (t), CAIRNSVC_NAME ".%s", topic);
    if (!(r = calloc (1, sizeof (*r))) ||
        !(r->f = flux_rpc_pack (h, t, (uint32_t)rank, 0, "O", p)) ||
        flux_future_then (r->f, -1, relayed_cb, r) < 0) {
        flux_log_error (h, "rank %jd: %s", (intmax_t)rank, t);
        if (r)
            flux_future_destroy (r->f);
        free (r);
        return;
    }
    r->nr = nr;
    r->rank = (uint32_t)rank;
    snprintf (r->topic, sizeof (r->topic), "%s", topic);
    r->next = nr->inflight;
    if (r->next)
        r->next->prev = r;
    nr->inflight = r;
}

/* cairnd ended the relay stream, or refused it. */
static void relay_refused (struct noderelay *nr, int errnum, const char *errstr)
{
    const char *why = errstr ? errstr : strerror (errnum);

    if (errnum == ENOSYS || errnum == EINVAL || errnum == EPROTO)
        flux_log (nr->ctx->h, LOG_DEBUG, "cairnd relays nothing to other "
                  "nodes (%s): multinode is off", why);
    else
        flux_log (nr->ctx->h, LOG_WARNING, "cairnd ended the node relay "
                  "(%s); relaying nothing to other nodes until it "
                  "reconnects", why);
    nr->relay_off = true;
}

/* ---- cairnd ---- */

/* The node-relay stream: requests for the other nodes. */
static void relay_cb (const json_t *msg, void *arg)
{
    struct noderelay *nr = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (nr->relay_off)
        return;
    if (m.errnum != 0)
        relay_refused (nr, (int)m.errnum, m.errstr);
    else
        relay_message (nr, m.payload);
}

void noderelay_cairnd_state (struct noderelay *nr, bool up)
{
    if (!nr)
        return;
    struct cconn *cc = nr->ctx->cc;
    json_t *none;

    if (!up) {
        nr->relay_mt = 0; /* its wait ended with the connection */
        cairnsvc_fail_all (nr->svc);
        return;
    }
    nr->relay_off = false;
    nr->relay_mt = 0;
    if (!(none = json_object ()) ||
        (nr->relay_mt = cconn_rpc (cc, "node-relay", none, CREPLY_STREAMING,
                                   relay_cb, nr)) < 0) {
        flux_log_error (nr->ctx->h, "node-relay");
        nr->relay_off = true;
        nr->relay_mt = 0;
    }
    json_decref (none);
}

/* ---- service ---- */

/* cairn.node-report {"rank", "report"} and cairn.node-hello {"rank",
 * "host"} from a node: to cairnd, as they are; cairn.start {"id",
 * "reattach": true, ...}: the job's stream, for cairn-flux-housekeeping
 * on a host whose cairnd is a node. */
static void request_cb (flux_t *h,
                        flux_msg_handler_t *mh,
                        const flux_msg_t *msg,
                        void *arg)
{
    struct noderelay *nr = arg;
    const char *name, *host;
    json_t *payload, *report;
    json_int_t rank;

    if (cairnsvc_request (msg, &name, &payload) < 0)
        goto proto;
    if (!strcmp (name, "start")) {
        /* cairn-flux-housekeeping on another host follows a job here:
         * a reattach only, never a new job */
        int reattach = 0;
        json_int_t id;
        if (json_unpack (payload, "{s:I s:b}", "id", &id, "reattach",
                         &reattach) < 0 ||
            !reattach)
            goto proto;
        cairnsvc_forward_stream (nr->svc, msg, name, payload);
        return;
    }
    if (!strcmp (name, "node-hello")) {
        if (json_unpack (payload, "{s:I s:s}", "rank", &rank, "host",
                         &host) < 0)
            goto proto;
        if (cconn_up (nr->ctx->cc)) /* else refused: it says it again */
            flux_log (h, LOG_INFO, "rank %jd (%s): node module connected to "
                      "its cairnd", (intmax_t)rank, host);
    } else if (json_unpack (payload, "{s:I s:o}", "rank", &rank, "report",
                            &report) < 0 ||
               !json_is_object (report))
        goto proto;
    cairnsvc_forward (nr->svc, msg, name, payload);
    return;
proto:
    if (flux_respond_error (h, msg, EPROTO, "malformed cairn request") < 0)
        flux_log_error (h, "cairn: respond");
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, CAIRNSVC_NAME ".node-report", request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, CAIRNSVC_NAME ".node-hello", request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, CAIRNSVC_NAME ".start", request_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* ---- setup ---- */

struct noderelay *noderelay_create (struct fctx *ctx, const char *statedir)
{
    struct noderelay *nr = calloc (1, sizeof (*nr));

    if (!nr)
        return NULL;
    nr->ctx = ctx;
    if (!(nr->rank_errno = calloc (ctx->size ? ctx->size : 1, sizeof (int))) ||
        !(nr->svc = cairnsvc_create (ctx->h, ctx->cc, 0, statedir))) {
        errno = ENOMEM;
        goto error;
    }
    if (cairnsvc_register (ctx->h) < 0 ||
        flux_msg_handler_addvec (ctx->h, htab, nr, &nr->handlers) < 0)
        goto error;
    return nr;
error:
    noderelay_destroy (nr);
    return NULL;
}

void noderelay_destroy (struct noderelay *nr)
{
    if (!nr)
        return;
    int saved = errno;
    flux_msg_handler_delvec (nr->handlers);
    cairnsvc_destroy (nr->svc);
    while (nr->inflight)
        relayed_remove (nr->inflight);
    /* the node-reports' answers are not waited for after this either: the
     * connection is destroyed next, at the module's end */
    cconn_rpc_cancel (nr->ctx->cc, nr->relay_mt);
    free (nr->rank_errno);
    free (nr);
    errno = saved;
}
