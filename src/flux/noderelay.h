/* noderelay.h - rank 0's part of many nodes (DESIGN-MULTINODE.md,
 * "Protocol (rank 0 <-> node)"): the relay between the rank-0 cairnd and
 * the cairn-exec modules of the other broker ranks (nodeagent.h).
 *
 * - Each time the module's connection to cairnd (fctx.cc) comes up, it
 *   opens cairnd's `node-relay` stream. Each message of it,
 *   {"rank": R, "topic": T, "payload": P} with T one of node-exec,
 *   node-signal, node-ack, is sent as the Flux RPC `cairn.T` to broker
 *   rank R with payload P; the answer to a node-exec goes back to cairnd
 *   as a `node-report` {"rank": R, "report": ANSWER}. Nothing is retried
 *   here: cairnd asks again on its own (multinode.poll), and every request
 *   is idempotent by execid. An error answer from a rank is logged (at
 *   LOG_INFO when that rank's state changes, else LOG_DEBUG).
 * - If cairnd refuses `node-relay` (multinode not configured: ENOSYS,
 *   EINVAL...), the relay stays off until the next connection.
 * - Service `cairn` (cairnsvc.h, owner only): `cairn.node-report` and
 *   `cairn.node-hello` from the other ranks are forwarded to cairnd as
 *   `node-report` / `node-hello`, and answered with its answer;
 *   `cairn.start` with "reattach" (cairn-flux-housekeeping on a host
 *   whose cairnd is a node) gets the job's stream, as Flux responses up
 *   to its final release.
 *
 * cairn_exec.c calls noderelay_cairnd_state from its cconn callback; the
 * answers to the stream and the requests sent here come to their own
 * callbacks (cconn_rpc), so none of them reaches the job code.
 */
#ifndef CAIRN_FLUX_NODERELAY_H
#define CAIRN_FLUX_NODERELAY_H

#include <stdbool.h>
#include <jansson.h>

struct fctx;
struct noderelay;

/* The relay of the rank-0 module: ctx->h, ctx->cc and ctx->size must be
 * set, and outlive it. Registers the `cairn` service and its handlers
 * (waits for the broker: call it before the reactor runs). statedir only
 * makes the ENOTCONN text. Returns NULL with errno (EEXIST: the service
 * is another module's, ENOMEM). */
struct noderelay *noderelay_create (struct fctx *ctx, const char *statedir);

/* Stop the handlers, answer the Flux requests still waiting (ENOSYS),
 * drop the RPCs in flight to the other ranks, and free. NULL is fine. */
void noderelay_destroy (struct noderelay *nr);

/* cairnd came up (open the relay stream) or went away (answer waiting
 * requests ENOTCONN, forget the stream). NULL nr is fine (does nothing). */
void noderelay_cairnd_state (struct noderelay *nr, bool up);

#endif /* CAIRN_FLUX_NODERELAY_H */
