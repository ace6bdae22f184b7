/* drainsync.h - under Flux, Flux's drain list is the one (issue 37).
 *
 * cairnd drains a rank when its epilog fails, a process of it is lost or
 * cannot be killed (cairn-journal(5)); the module drains it in Flux too
 * (resource.drain), and that is the list the scheduler obeys. An
 * operator who undrains the rank in Flux (`flux resource undrain`) undrains
 * it in cairnd as well: the rank-0 module follows the resource module's
 * journal (a streaming resource.journal, as `flux resource eventlog -f`
 * does) and, for each `undrain` posted after it started, sends cairnd
 * `undrain` {"ranks", "only-drained": true} (cairn-protocol(7)): the
 * ranks cairnd has drained are undrained, the others ignored. Undrains
 * that come while cairnd is away are sent when it is back. The other way,
 * cairnd refuses `cairn undrain` while a Flux instance is bound to it,
 * naming `flux resource undrain` (bind.h).
 */
#ifndef CAIRN_FLUX_DRAINSYNC_H
#define CAIRN_FLUX_DRAINSYNC_H

#include <stdbool.h>
#include <jansson.h>

struct fctx;
struct drainsync;

/* Start following: ctx->h and ctx->cc must outlive it. NULL with errno on
 * failure. */
struct drainsync *drainsync_create (struct fctx *ctx);
void drainsync_destroy (struct drainsync *ds);

/* cairnd came up (or went): send what waited. NULL ds is fine. */
void drainsync_cairnd_state (struct drainsync *ds, bool up);

#endif /* CAIRN_FLUX_DRAINSYNC_H */
