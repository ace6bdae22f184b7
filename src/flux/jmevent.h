/* jmevent.h - a Flux job's eventlog as the job-manager keeps it: what it
 * already holds, and the perilog events cairn-exec posts to it.
 *
 * Shared by fjob.c (a job with a start stream) and resync.c (a job the
 * job-manager will not send a start for, after a broker restart or a
 * module reload).
 */
#ifndef CAIRN_FLUX_JMEVENT_H
#define CAIRN_FLUX_JMEVENT_H

#include <stdbool.h>
#include <flux/core.h>
#include <jansson.h>

/* Count the events of an RFC 18 eventlog (text, one JSON object a line)
 * that cairn-exec might send again on a replay (start, exception, finish,
 * release and the prolog-/epilog- events), and free (the job-manager no
 * longer waits on the exec service). Returns {name: count} (new
 * reference; names never seen are absent), or NULL (ENOMEM). Lines that
 * are not events are ignored. */
json_t *jmevent_count (const char *eventlog);

/* If counts[name] > 0, take one off it and return true (the event is
 * already in the eventlog: do not send it again). */
bool jmevent_skip (json_t *counts, const char *name);

/* Post event name with context ctx (as it is) to job id's eventlog
 * through job-manager.post-event.post. Returns the RPC's future, or NULL
 * with errno. */
flux_future_t *jmevent_post (flux_t *h,
                             flux_jobid_t id,
                             const char *name,
                             const json_t *ctx);

/* Post a prolog-* or epilog-* event to job id's eventlog through
 * job-manager.post-event.post, with perilog.so's context: description
 * "job-manager.prolog" or "job-manager.epilog", and ctx's "status" if it
 * has one. Returns the RPC's future, or NULL with errno. */
flux_future_t *jmevent_post_perilog (flux_t *h,
                                     flux_jobid_t id,
                                     const char *name,
                                     const json_t *ctx);

#endif /* CAIRN_FLUX_JMEVENT_H */
