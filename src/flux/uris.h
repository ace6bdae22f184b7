/* uris.h - the local URI of each broker rank of the instance, asked of
 * each broker once (attr.get local-uri) and kept in ctx->uris: a new
 * job's shells each talk to their own broker (fjob.c's jobspec). */
#ifndef CAIRN_FLUX_URIS_H
#define CAIRN_FLUX_URIS_H

#include <stddef.h>
#include <stdint.h>

struct fctx;

/* Ensure ctx->uris[r] for the n broker ranks in ranks[], asking the
 * brokers that were not asked before. Then call cb (ctx, 0, arg), or
 * cb (ctx, -1, arg) with errno (EHOSTUNREACH, EINVAL for a rank outside
 * the instance...) if one could not be asked: at once when every URI is
 * known, else from the reactor. */
typedef void (*uris_f) (struct fctx *ctx, int rc, void *arg);
void uris_ensure (
    struct fctx *ctx, const uint32_t *ranks, size_t n, uris_f cb, void *arg);

/* Drop the uris_ensure calls still waiting for arg (its owner goes
 * away); their callbacks are not called. */
void uris_cancel (struct fctx *ctx, void *arg);

/* Drop every uris_ensure still waiting; their callbacks are not called. */
void uris_cancel_all (struct fctx *ctx);

#endif /* CAIRN_FLUX_URIS_H */
