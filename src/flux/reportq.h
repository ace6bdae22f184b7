/* reportq.h - the REPORTs of a node's cairnd on their way to rank 0
 * (nodeagent.h), kept until rank 0 has them.
 *
 * Each REPORT goes to rank 0 as `cairn.node-report` {"rank", "report"}.
 * One that fails (rank 0 unreachable, its module or its cairnd not there)
 * is kept and sent again: once every REPORTQ_RETRY seconds the oldest
 * kept one is tried (then put last, so that no one report holds the
 * others), and when one goes through, the others follow at once. At most
 * REPORTQ_MAX are kept, the oldest dropped past that (logged). Rank 0
 * refusing one for good (EPROTO, EINVAL, ENOENT, EPERM, EEXIST) drops it
 * (logged). Dropping loses nothing: the node's cairnd keeps each report
 * until rank 0 acknowledges it (`node-ack`) and gives it again on the
 * next `node-watch`. Failures are logged at LOG_INFO when rank 0 stops
 * taking reports, then at most once a minute at LOG_DEBUG.
 */
#ifndef CAIRN_FLUX_REPORTQ_H
#define CAIRN_FLUX_REPORTQ_H

#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#define REPORTQ_MAX 10000
#define REPORTQ_RETRY 1.0 /* seconds */

struct reportq;

/* The queue of broker rank `rank`. Returns NULL with errno ENOMEM. */
struct reportq *reportq_create (flux_t *h, uint32_t rank);

/* Drop every report (those in flight too) and free. NULL is fine. */
void reportq_destroy (struct reportq *q);

/* Send report (an object; a reference is taken) to rank 0, or keep it for
 * the next try while rank 0 does not take reports. */
void reportq_add (struct reportq *q, json_t *report);

/* node-watch is opened again, and gives every unacknowledged report anew:
 * forget those that wait (not those in flight), and send what comes next
 * at once. */
void reportq_restart (struct reportq *q);

#endif /* CAIRN_FLUX_REPORTQ_H */
