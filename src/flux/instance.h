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

/* The KVS key of the UUID. */
#define INSTANCE_KVS_KEY "cairn.instance"

/* Look the UUID up, or make and commit it. Synchronous (module load).
 * Returns 0 with *uuid and *name malloc'd, or -1 with errno and a line
 * in the broker's log. */
int instance_identity (flux_t *h, char **uuid, char **name);

#endif /* CAIRN_FLUX_INSTANCE_H */
