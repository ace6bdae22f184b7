/* uris.c - see uris.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <flux/core.h>

#include "flux/fctx.h"
#include "flux/uris.h"

/* One uris_ensure call: its RPCs, and how many are still out. */
struct uriwait {
    struct fctx *ctx;
    uris_f cb;
    void *arg;
    size_t pending;
    int errnum;
    flux_future_t **fs;
    size_t nfs;
    struct uriwait *next;
};

static void uriwait_destroy (struct uriwait *w)
{
    for (size_t i = 0; i < w->nfs; i++)
        flux_future_destroy (w->fs[i]);
    free (w->fs);
    free (w);
}

static void uriwait_unlink (struct fctx *ctx, struct uriwait *w)
{
    for (struct uriwait **p = &ctx->uriwaits; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            return;
        }
    }
}

static void uri_cb (flux_future_t *f, void *arg)
{
    struct uriwait *w = arg;
    struct fctx *ctx = w->ctx;
    uint32_t rank = (uint32_t)(uintptr_t)flux_future_aux_get (f, "rank");
    const char *uri;

    if (flux_rpc_get_unpack (f, "{s:s}", "value", &uri) < 0) {
        if (!w->errnum)
            w->errnum = errno;
        flux_log_error (ctx->h, "attr.get local-uri on rank %u",
                        (unsigned)rank);
    } else if (!ctx->uris[rank] && !(ctx->uris[rank] = strdup (uri)) &&
               !w->errnum)
        w->errnum = ENOMEM;
    if (--w->pending > 0)
        return;
    uriwait_unlink (ctx, w);
    errno = w->errnum;
    w->cb (ctx, w->errnum ? -1 : 0, w->arg);
    uriwait_destroy (w);
}

void uris_ensure (
    struct fctx *ctx, const uint32_t *ranks, size_t n, uris_f cb, void *arg)
{
    struct uriwait *w = calloc (1, sizeof (*w));

    if (!w || !(w->fs = calloc (n ? n : 1, sizeof (*w->fs)))) {
        free (w);
        errno = ENOMEM;
        cb (ctx, -1, arg);
        return;
    }
    w->ctx = ctx;
    w->cb = cb;
    w->arg = arg;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = ranks[i];
        if (r >= ctx->size) {
            uriwait_destroy (w);
            errno = EINVAL;
            cb (ctx, -1, arg);
            return;
        }
        if (ctx->uris[r])
            continue;
        flux_future_t *f = flux_rpc_pack (ctx->h, "attr.get", r, 0, "{s:s}",
                                          "name", "local-uri");
        if (!f ||
            flux_future_aux_set (f, "rank", (void *)(uintptr_t)r, NULL) < 0 ||
            flux_future_then (f, -1, uri_cb, w) < 0) {
            flux_future_destroy (f);
            uriwait_destroy (w);
            cb (ctx, -1, arg);
            return;
        }
        w->fs[w->nfs++] = f;
        w->pending++;
    }
    if (w->pending == 0) {
        uriwait_destroy (w);
        cb (ctx, 0, arg);
        return;
    }
    w->next = ctx->uriwaits;
    ctx->uriwaits = w;
}

void uris_cancel (struct fctx *ctx, void *arg)
{
    struct uriwait **pp = &ctx->uriwaits;

    while (*pp) {
        struct uriwait *w = *pp;
        if (w->arg == arg) {
            *pp = w->next;
            uriwait_destroy (w);
        } else
            pp = &w->next;
    }
}

void uris_cancel_all (struct fctx *ctx)
{
    while (ctx->uriwaits) {
        struct uriwait *w = ctx->uriwaits;
        ctx->uriwaits = w->next;
        uriwait_destroy (w);
    }
}
