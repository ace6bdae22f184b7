/* nodewatch.h - rank 0 tells cairnd what Flux knows of its nodes
 * (issue 33, DESIGN-MULTINODE.md).
 *
 * Flux's overlay notices a broker that is gone within about a second (a
 * dead broker) or tbon.tcp_user_timeout (a partition); the broker group
 * broker.online then loses it. The module watches that group (a streaming
 * groups.get, as the resource module does) and sends cairnd `node-state`
 * (cairn-protocol(7)): {"ranks", "online": false, "why"} for ranks that
 * left it, so that their processes are lost at once rather than after
 * multinode.timeout, and "online": true for ranks that joined it, and for
 * every rank online each time the connection to cairnd comes up (a node
 * marked lost under an earlier instance, or an earlier connection, is
 * asked about again). Only what changes during the module's life is
 * news: its first answer is the baseline. Rank 0 is never sent.
 */
#ifndef CAIRN_FLUX_NODEWATCH_H
#define CAIRN_FLUX_NODEWATCH_H

#include <stdbool.h>
#include <jansson.h>

struct fctx;
struct nodewatch;

/* Start watching: ctx->h and ctx->cc must outlive it. NULL with errno on
 * failure. */
struct nodewatch *nodewatch_create (struct fctx *ctx);
void nodewatch_destroy (struct nodewatch *nw);

/* cairnd came up: send the ranks online now. NULL nw is fine. */
void nodewatch_cairnd_state (struct nodewatch *nw, bool up);

#endif /* CAIRN_FLUX_NODEWATCH_H */
