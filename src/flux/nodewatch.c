/* nodewatch.c - see nodewatch.h */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"
#include "flux/cconn.h"
#include "flux/fctx.h"
#include "flux/nodewatch.h"

struct nodewatch {
    struct fctx *ctx;
    flux_future_t *f;     /* groups.get broker.online, streaming */
    struct idset *online; /* as last answered, or NULL before the first */
    json_t *sent;         /* matchtags of node-states in flight */
};

/* The ranks of set above 0, or NULL when there are none. */
static char *others (const struct idset *set)
{
    struct idset *o = idset_create ();
    char *s = NULL;
    for (uint32_t r = idset_first (set); o && r != IDSET_INVALID_ID;
         r = idset_next (set, r))
        if (r > 0 && idset_set (o, r) < 0)
            goto done;
    if (o && idset_count (o) > 0)
        s = idset_encode (o);
done:
    idset_destroy (o);
    return s;
}

/* cairnd's answer to a node-state. (nodewatch is destroyed after the
 * connection, at the module's end: no answer can come to a freed one.) */
static void state_cb (const json_t *msg, void *arg)
{
    struct nodewatch *nw = arg;
    struct cconn_msg m;
    char key[32];

    cconn_msg_split (msg, &m);
    snprintf (key, sizeof (key), "%" PRId64, (int64_t)m.matchtag);
    if (m.errnum != 0)
        flux_log (nw->ctx->h, LOG_DEBUG, "node-state: cairnd: %s",
                  m.errstr ? m.errstr : strerror ((int)m.errnum));
    (void)json_object_del (nw->sent, key);
}

static void
send_state (struct nodewatch *nw, const struct idset *set, bool online)
{
    struct cconn *cc = nw->ctx->cc;
    char *ranks = others (set), key[32];
    json_t *p = NULL;

    if (!ranks || !cconn_up (cc))
        goto done;
    int64_t mt;
    p = online ? json_pack ("{s:s s:b}", "ranks", ranks, "online", 1)
               : json_pack ("{s:s s:b s:s}", "ranks", ranks, "online", 0, "why",
                            "its broker left Flux's overlay "
                            "(broker.online)");
    if (!p || (mt = cconn_rpc (cc, "node-state", p, 0, state_cb, nw)) < 0) {
        flux_log_error (nw->ctx->h, "node-state %s", ranks);
        goto done;
    }
    snprintf (key, sizeof (key), "%" PRId64, mt);
    (void)json_object_set_new (nw->sent, key, json_true ());
    if (!online)
        flux_log (nw->ctx->h, LOG_WARNING,
                  "broker rank(s) %s left Flux's "
                  "overlay: told cairnd their processes are lost",
                  ranks);
done:
    json_decref (p);
    free (ranks);
}

/* Ranks in a and not in b (new), or NULL. */
static struct idset *minus (const struct idset *a, const struct idset *b)
{
    struct idset *d = idset_create ();
    for (uint32_t r = idset_first (a); d && r != IDSET_INVALID_ID;
         r = idset_next (a, r))
        if (!idset_test (b, r) && idset_set (d, r) < 0) {
            idset_destroy (d);
            return NULL;
        }
    return d;
}

static void online_cb (flux_future_t *f, void *arg)
{
    struct nodewatch *nw = arg;
    const char *members;
    struct idset *now;
    struct cairn_error err = {{0}};

    if (flux_rpc_get_unpack (f, "{s:s}", "members", &members) < 0) {
        if (errno != ENODATA)
            flux_log_error (nw->ctx->h, "groups.get broker.online: lost nodes "
                                        "are found by multinode.timeout only");
        return;
    }
    if (!(now = idset_decode (members, &err))) {
        flux_log (nw->ctx->h, LOG_ERR, "groups.get broker.online: %s",
                  err.text);
        flux_future_reset (f);
        return;
    }
    if (nw->online) {
        struct idset *left = minus (nw->online, now);
        struct idset *joined = minus (now, nw->online);
        if (left)
            send_state (nw, left, false);
        if (joined)
            send_state (nw, joined, true);
        idset_destroy (left);
        idset_destroy (joined);
    } else
        send_state (nw, now, true); /* the baseline, if cairnd is up */
    idset_destroy (nw->online);
    nw->online = now;
    flux_future_reset (f);
}

struct nodewatch *nodewatch_create (struct fctx *ctx)
{
    struct nodewatch *nw = calloc (1, sizeof (*nw));

    if (!nw)
        return NULL;
    nw->ctx = ctx;
    if (!(nw->sent = json_object ()) ||
        !(nw->f = flux_rpc_pack (ctx->h, "groups.get", FLUX_NODEID_ANY,
                                 FLUX_RPC_STREAMING, "{s:s}", "name",
                                 "broker.online")) ||
        flux_future_then (nw->f, -1, online_cb, nw) < 0) {
        nodewatch_destroy (nw);
        return NULL;
    }
    return nw;
}

void nodewatch_destroy (struct nodewatch *nw)
{
    if (!nw)
        return;
    int saved = errno;
    flux_future_destroy (nw->f);
    idset_destroy (nw->online);
    json_decref (nw->sent);
    free (nw);
    errno = saved;
}

void nodewatch_cairnd_state (struct nodewatch *nw, bool up)
{
    if (!nw)
        return;
    json_object_clear (nw->sent);
    if (up && nw->online)
        send_state (nw, nw->online, true);
}

