/* drainsync.c - see drainsync.h */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"
#include "flux/cconn.h"
#include "flux/drainsync.h"
#include "flux/fctx.h"

struct drainsync {
    struct fctx *ctx;
    flux_future_t *f;       /* resource.journal, streaming */
    bool live;              /* past the backlog's sentinel: news */
    struct idset *pending;  /* undrained in Flux, not yet sent to cairnd */
    struct idset *inflight; /* sent, not yet answered (NULL = none) */
    int64_t sent_mt;        /* its matchtag */
};

/* cairnd's answer to the undrain in flight; then what came meanwhile.
 * (The table is destroyed after the connection, at the module's end:
 * no answer can come to a freed one.) */
static void send_pending (struct drainsync *ds);

static void undrain_cb (const json_t *msg, void *arg)
{
    struct drainsync *ds = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (m.errnum != 0)
        flux_log (ds->ctx->h, LOG_ERR, "undrain in cairnd: %s",
                  m.errstr ? m.errstr : strerror ((int)m.errnum));
    idset_destroy (ds->inflight);
    ds->inflight = NULL;
    ds->sent_mt = 0;
    send_pending (ds);
}

static void send_pending (struct drainsync *ds)
{
    struct cconn *cc = ds->ctx->cc;
    char *ranks;
    json_t *p;

    if (ds->inflight || idset_count (ds->pending) == 0 || !cconn_up (cc))
        return;
    if (!(ranks = idset_encode (ds->pending)))
        return;
    int64_t mt = -1;
    if (!(p = json_pack ("{s:s s:b}", "ranks", ranks, "only-drained", 1)) ||
        (mt = cconn_rpc (cc, "undrain", p, 0, undrain_cb, ds)) < 0)
        flux_log_error (ds->ctx->h, "undrain %s to cairnd", ranks);
    else {
        struct idset *fresh = idset_create ();
        if (fresh) { /* else it is sent again with what comes next */
            ds->sent_mt = mt;
            ds->inflight = ds->pending;
            ds->pending = fresh;
        }
    }
    json_decref (p);
    free (ranks);
}

static void add_undrain (struct drainsync *ds, const json_t *entry)
{
    const char *name = NULL, *ranks = NULL;
    struct cairn_error err = {{0}};
    struct idset *set;

    if (json_unpack ((json_t *)entry, "{s:s s:{s:s}}", "name", &name, "context",
                     "idset", &ranks) < 0 ||
        strcmp (name, "undrain") != 0)
        return;
    if (!(set = idset_decode (ranks, &err))) {
        flux_log (ds->ctx->h, LOG_ERR, "resource.journal undrain: %s",
                  err.text);
        return;
    }
    idset_add (ds->pending, set);
    idset_destroy (set);
}

static void journal_cb (flux_future_t *f, void *arg)
{
    struct drainsync *ds = arg;
    json_t *events, *e;
    size_t i;

    if (flux_rpc_get_unpack (f, "{s:o}", "events", &events) < 0) {
        if (errno != ENODATA)
            flux_log_error (ds->ctx->h, "resource.journal: cairn's drain "
                                        "list no longer follows Flux's "
                                        "undrains");
        return;
    }
    if (!ds->live) {
        /* the backlog: what was before us is not news; an empty batch
         * ends it */
        ds->live = json_array_size (events) == 0;
        flux_future_reset (f);
        return;
    }
    json_array_foreach (events, i, e)
    {
        add_undrain (ds, e);
    }
    send_pending (ds);
    flux_future_reset (f);
}

struct drainsync *drainsync_create (struct fctx *ctx)
{
    struct drainsync *ds = calloc (1, sizeof (*ds));

    if (!ds)
        return NULL;
    ds->ctx = ctx;
    if (!(ds->pending = idset_create ()) ||
        !(ds->f = flux_rpc (ctx->h, "resource.journal", NULL, 0,
                            FLUX_RPC_STREAMING)) ||
        flux_future_then (ds->f, -1, journal_cb, ds) < 0) {
        drainsync_destroy (ds);
        return NULL;
    }
    return ds;
}

void drainsync_destroy (struct drainsync *ds)
{
    if (!ds)
        return;
    int saved = errno;
    flux_future_destroy (ds->f);
    idset_destroy (ds->pending);
    idset_destroy (ds->inflight);
    free (ds);
    errno = saved;
}

void drainsync_cairnd_state (struct drainsync *ds, bool up)
{
    if (!ds)
        return;
    if (ds->inflight) { /* its answer went with the connection: again */
        idset_add (ds->pending, ds->inflight);
        idset_destroy (ds->inflight);
        ds->inflight = NULL;
        ds->sent_mt = 0;
    }
    if (up)
        send_pending (ds);
}

