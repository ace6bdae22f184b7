/* nodeagent.h - the cairn-exec module on a broker rank > 0 (DESIGN-
 * MULTINODE.md, "Protocol (rank 0 <-> node)"): the relay between rank 0's
 * module (noderelay.h) and this node's cairnd (role "node"). No job-exec
 * here: the module serves nothing else on these ranks.
 *
 * - Service `cairn` (cairnsvc.h, owner only): `cairn.node-exec`,
 *   `cairn.node-signal` and `cairn.node-ack` are forwarded unchanged to
 *   the node's cairnd as `node-exec` / `node-signal` / `node-ack`, and
 *   answered with its answer; ENOTCONN ("no cairnd connected on rank R
 *   (DIR)") while none is connected, or when it goes away first.
 * - Each time the connection to cairnd comes up, the module opens its
 *   `node-watch` stream (the REPORT of every ended process rank 0 has not
 *   acknowledged, then of each one as it ends) and says
 *   `cairn.node-hello` {"rank", "host"} to rank 0, again every second
 *   until rank 0 answers or the connection drops.
 * - Each REPORT goes to rank 0 as `cairn.node-report` {"rank", "report"},
 *   resent until rank 0 has it (reportq.h). The reports that wait are
 *   forgotten when the connection comes up again: node-watch gives every
 *   unacknowledged one anew.
 */
#ifndef CAIRN_FLUX_NODEAGENT_H
#define CAIRN_FLUX_NODEAGENT_H

#include <stdint.h>
#include <flux/core.h>

#define NODEAGENT_RETRY 1.0 /* seconds between hellos */

struct nodeagent;

/* The module of broker rank `rank` (> 0), relaying to the cairnd whose
 * socket is sockpath, in state directory statedir (for messages). Starts
 * connecting from the reactor; registers the `cairn` service and its
 * handlers (waits for the broker: call it before the reactor runs).
 * Returns NULL with errno (EEXIST: the service is another module's,
 * ENAMETOOLONG: sockpath, ENOMEM). */
struct nodeagent *nodeagent_create (flux_t *h,
                                    uint32_t rank,
                                    const char *sockpath,
                                    const char *statedir);

/* Stop everything, answer the requests still waiting (ENOSYS), drop the
 * reports kept, close the connection and free. NULL is fine. */
void nodeagent_destroy (struct nodeagent *na);

#endif /* CAIRN_FLUX_NODEAGENT_H */
