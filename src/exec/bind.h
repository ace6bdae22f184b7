/* bind.h - one Flux instance per cairnd (issue 32).
 *
 * cairn-exec.so names its Flux instance: a UUID it makes once and keeps in
 * that instance's KVS (cairn.instance), so that a restarted broker of the
 * same instance names it again, with a description for people (host and
 * local URI). It sends `bind` as the first request on each connection
 * (cairn-protocol(7)) and stamps each job it starts with the UUID
 * (attributes.system.cairn.instance). The module on a rank above 0 binds
 * its node cairnd with the same UUID, once rank 0's module has made it.
 *
 * cairnd serves one instance at a time: the one bound on an open
 * connection, or whose jobs are still active here. Another instance's
 * bind is refused with EBUSY and a message naming both, so that its module
 * never reattaches to, ends or drains the first one's jobs; it retries,
 * and is served once the first has neither a connection nor an active job
 * here. Nothing is journaled for it but the jobs: after a restart of
 * cairnd, the binding is again what the active jobs say.
 *
 * A job stamped with an instance may be started only on a connection
 * bound to that instance; following one (reattach) needs no binding
 * (cairn-flux-housekeeping does it). Jobs without one (cairn run, other
 * clients) are not concerned.
 */
#ifndef CAIRN_EXEC_BIND_H
#define CAIRN_EXEC_BIND_H

#include <stdbool.h>
#include <jansson.h>

#include "core/error.h"

struct jobtable; /* exec/jobtable.h */
struct bindings;
struct conn;

/* The longest instance UUID and description accepted. */
#define BIND_UUID_MAX 64
#define BIND_NAME_MAX 256

/* Bind connection c to the instance uuid described by name. Returns 0, or
 * -1 with err: EINVAL (uuid or name missing, empty or too long), EBUSY
 * (cairnd serves another instance: the message names both), ENOMEM. A
 * connection bound already is bound again (the same checks). */
int bind_conn (struct bindings *bs,
               struct conn *c,
               const char *uuid,
               const char *name,
               struct cairn_error *err);

/* May c start a job stamped with instance (NULL: not stamped)? 0, or -1
 * with err EBUSY naming the connection's binding (or its lack). */
int bind_check_start (struct bindings *bs,
                      struct conn *c,
                      const char *instance,
                      struct cairn_error *err);

/* May c undrain ranks? Under a Flux instance bound on an open connection
 * Flux's drain list is the one, and its module mirrors Flux's undrains
 * (flux/drainsync.h): only a connection bound to it may. 0, or -1 with err
 * EBUSY naming the instance and `flux resource undrain`. */
int bind_check_undrain (struct bindings *bs,
                        struct conn *c,
                        struct cairn_error *err);

/* c is closed: its binding goes. */
void bind_conn_gone (struct bindings *bs, struct conn *c);

/* {"uuid", "name"} of the instance bound on an open connection (new
 * reference), or NULL when none is. */
json_t *bind_describe (struct bindings *bs);

/* No connection bound yet; an active job of jobs counts as its
 * instance's. NULL with errno ENOMEM. */
struct bindings *bind_create (struct jobtable *jobs);

/* Free every binding (cairnd_destroy). NULL is fine; errno is kept. */
void bind_destroy (struct bindings *bs);

#endif /* CAIRN_EXEC_BIND_H */
