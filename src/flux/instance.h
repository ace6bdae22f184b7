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

/* Look the UUID up, or make and commit it (rank 0). Synchronous (module
 * load). Returns 0 with *uuid malloc'd, or -1 with errno and a line in
 * the broker's log. */
int instance_identity (flux_t *h, char **uuid);

/* On a rank above 0: the lookup of the UUID, answered once rank 0's
 * module has made it (it waits for the key to be created). */
flux_future_t *instance_wait (flux_t *h);

/* The `bind` payload {"instance": uuid, "name": this broker's
 * description}: a new reference, or NULL with errno (EPROTO: no uuid,
 * ENOMEM). */
json_t *instance_bind_payload (flux_t *h, const char *uuid);

#endif /* CAIRN_FLUX_INSTANCE_H */
