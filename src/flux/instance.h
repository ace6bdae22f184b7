/* instance.h - this Flux instance's name for cairnd (exec/bind.h).
 *
 * A UUID made once per instance and kept in its KVS (key cairn.instance),
 * committed with a checkpoint where the content store persists, so that a
 * restarted broker of the same instance finds it again; an instance whose
 * KVS does not persist is a new one after each start. With it, a
 * description for the people who read cairnd's refusals: the rank-0 host,
 * the broker's local URI and, for a sub-instance, its job id.
 */
#ifndef CAIRN_FLUX_INSTANCE_H
#define CAIRN_FLUX_INSTANCE_H

#include <flux/core.h>
#include <jansson.h>

/* The KVS key of the UUID. */
#define INSTANCE_KVS_KEY "cairn.instance"

/* Look the UUID up, or make and commit it. Synchronous (module load).
 * Returns 0 with *uuid and *name malloc'd, or -1 with errno and a line
 * in the broker's log. */
int instance_identity (flux_t *h, char **uuid, char **name);

/* On a rank above 0: the `bind` payload {"instance", "name"} once rank 0's
 * module has made the UUID. instance_wait starts the lookup (it waits for
 * the key to be created); instance_bind_payload takes its answer (a new
 * reference, or NULL with errno). */
flux_future_t *instance_wait (flux_t *h);
json_t *instance_bind_payload (flux_t *h, flux_future_t *f);

#endif /* CAIRN_FLUX_INSTANCE_H */
