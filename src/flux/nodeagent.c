/* nodeagent.c - see nodeagent.h */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flux/cairnsvc.h"
#include "flux/cconn.h"
#include "flux/instance.h"
#include "flux/nodeagent.h"
#include "flux/reportq.h"

struct nodeagent {
    flux_t *h;
    uint32_t rank;
    char *host;
    char *statedir;
    struct cconn *cc;
    struct cairnsvc *svc;
    flux_msg_handler_t **handlers;
    int64_t watch_mt;         /* node-watch on this connection, or 0 */
    flux_future_t *instance;  /* the lookup of the instance's UUID */
    flux_future_t *hello;     /* cairn.node-hello in flight */
    flux_watcher_t *hello_timer;
    int hello_fails;          /* on this connection */
    struct reportq *reports;  /* from node-watch, to rank 0 */
};

/* ---- hello ---- */

static void hello_send (struct nodeagent *na);

static void hello_retry (struct nodeagent *na)
{
    if (!cconn_up (na->cc))
        return;
    flux_timer_watcher_reset (na->hello_timer, NODEAGENT_RETRY, 0);
    flux_watcher_start (na->hello_timer);
}

static void hello_cb (flux_future_t *f, void *arg)
{
    struct nodeagent *na = arg;

    if (flux_rpc_get (f, NULL) < 0) {
        const char *why = flux_future_error_string (f);
        /* once, then once a minute */
        if (na->hello_fails++ % 60 == 0)
            flux_log (na->h, na->hello_fails > 1 ? LOG_DEBUG : LOG_INFO,
                      "cairn.node-hello to rank 0: %s; trying again every "
                      "%gs", why ? why : strerror (errno), NODEAGENT_RETRY);
        hello_retry (na);
    } else
        flux_log (na->h, na->hello_fails ? LOG_INFO : LOG_DEBUG,
                  "rank 0 knows this node's cairnd");
    flux_future_destroy (f);
    na->hello = NULL;
}

static void hello_send (struct nodeagent *na)
{
    if (na->hello || !cconn_up (na->cc))
        return;
    if (!(na->hello = flux_rpc_pack (na->h, CAIRNSVC_NAME ".node-hello", 0, 0,
                                     "{s:I s:s}", "rank", (json_int_t)na->rank,
                                     "host", na->host)) ||
        flux_future_then (na->hello, -1, hello_cb, na) < 0) {
        flux_log_error (na->h, "cairn.node-hello");
        flux_future_destroy (na->hello);
        na->hello = NULL;
        hello_retry (na);
    }
}

static void hello_timer_cb (flux_reactor_t *r,
                            flux_watcher_t *w,
                            int revents,
                            void *arg)
{
    hello_send (arg);
}

/* ---- cairnd ---- */

/* The node-watch stream: the node's reports, to rank 0. */
static void watch_cb (const json_t *msg, void *arg)
{
    struct nodeagent *na = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (m.errnum != 0)
        flux_log (na->h, LOG_ERR, "cairnd at %s refused node-watch (is "
                  "it role \"node\"?): %s", na->statedir,
                  m.errstr ? m.errstr : strerror ((int)m.errnum));
    else if (json_is_object (m.payload))
        reportq_add (na->reports, m.payload);
    else
        flux_log (na->h, LOG_ERR, "node-watch: cairnd sent a report "
                                  "that is not an object; dropped");
}

/* Every request's answer goes to its own callback (cconn_rpc): what
 * comes here is nobody's. */
static void cairnd_message (struct cconn *cc, const json_t *msg, void *arg)
{
    struct nodeagent *na = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    flux_log (na->h, LOG_DEBUG, "cairnd: message for unknown matchtag "
              "%jd dropped", (intmax_t)m.matchtag);
}

static void cairnd_state (struct cconn *cc, bool up, void *arg)
{
    struct nodeagent *na = arg;
    json_t *none;

    if (!up) {
        flux_log (na->h, LOG_WARNING, "lost cairnd at %s; reconnecting",
                  cconn_path (cc));
        na->watch_mt = 0;
        flux_watcher_stop (na->hello_timer);
        flux_future_destroy (na->hello);
        na->hello = NULL;
        cairnsvc_fail_all (na->svc);
        return;
    }
    reportq_restart (na->reports);
    na->watch_mt = 0;
    if (!(none = json_object ()) ||
        (na->watch_mt = cconn_rpc (cc, "node-watch", none, CREPLY_STREAMING,
                                   watch_cb, na)) < 0) {
        flux_log_error (na->h, "node-watch");
        na->watch_mt = 0;
    }
    json_decref (none);
    na->hello_fails = 0;
    hello_send (na);
}

/* ---- service ---- */

static void request_cb (flux_t *h,
                        flux_msg_handler_t *mh,
                        const flux_msg_t *msg,
                        void *arg)
{
    struct nodeagent *na = arg;
    const char *name;
    json_t *payload;

    if (cairnsvc_request (msg, &name, &payload) < 0) {
        if (flux_respond_error (h, msg, EPROTO, "malformed cairn request") <
            0)
            flux_log_error (h, "cairn: respond");
        return;
    }
    cairnsvc_forward (na->svc, msg, name, payload);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, CAIRNSVC_NAME ".node-exec", request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, CAIRNSVC_NAME ".node-signal", request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, CAIRNSVC_NAME ".node-ack", request_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* ---- setup ---- */

static char *hostname (flux_t *h)
{
    const char *attr = flux_attr_get (h, "hostname");
    char buf[HOST_NAME_MAX + 1] = "";

    if (attr)
        return strdup (attr);
    if (gethostname (buf, sizeof (buf)) < 0)
        return strdup ("unknown");
    buf[sizeof (buf) - 1] = '\0';
    return strdup (buf);
}

static void instance_cb (flux_future_t *f, void *arg)
{
    struct nodeagent *na = arg;
    const char *uuid = NULL;
    json_t *bind = flux_kvs_lookup_get (f, &uuid) == 0
                       ? instance_bind_payload (na->h, uuid)
                       : NULL;

    if (!bind || cconn_set_hello (na->cc, "bind", bind) < 0)
        flux_log_error (na->h,
                        "cairn-exec: this instance's UUID (%s): "
                        "connecting to cairnd unbound",
                        INSTANCE_KVS_KEY);
    json_decref (bind);
    cconn_release (na->cc);
}

struct nodeagent *nodeagent_create (flux_t *h,
                                    uint32_t rank,
                                    const char *sockpath,
                                    const char *statedir)
{
    struct nodeagent *na = calloc (1, sizeof (*na));
    flux_reactor_t *r = flux_get_reactor (h);
    struct cconn_ops ops = {.message = cairnd_message, .state = cairnd_state};

    if (!na)
        return NULL;
    na->h = h;
    na->rank = rank;
    if (!(na->host = hostname (h)) || !(na->statedir = strdup (statedir)) ||
        !(na->hello_timer = flux_timer_watcher_create (r, 0, 0, hello_timer_cb,
                                                       na)) ||
        !(na->reports = reportq_create (h, rank))) {
        errno = ENOMEM;
        goto error;
    }
    if (!(na->cc = cconn_create (h, sockpath, &ops, na)))
        goto error;
    /* one instance per cairnd (exec/bind.h): bind with rank 0's UUID,
     * once rank 0's module has made it */
    cconn_hold (na->cc);
    if (!(na->instance = instance_wait (h)) ||
        flux_future_then (na->instance, -1, instance_cb, na) < 0)
        goto error;
    if (!(na->svc = cairnsvc_create (h, na->cc, rank, statedir)) ||
        cairnsvc_register (h) < 0 ||
        flux_msg_handler_addvec (h, htab, na, &na->handlers) < 0)
        goto error;
    return na;
error:
    nodeagent_destroy (na);
    return NULL;
}

void nodeagent_destroy (struct nodeagent *na)
{
    if (!na)
        return;
    int saved = errno;
    flux_msg_handler_delvec (na->handlers);
    cairnsvc_destroy (na->svc);
    cconn_destroy (na->cc);
    flux_future_destroy (na->instance);
    flux_future_destroy (na->hello);
    flux_watcher_destroy (na->hello_timer);
    reportq_destroy (na->reports);
    free (na->host);
    free (na->statedir);
    free (na);
    errno = saved;
}
