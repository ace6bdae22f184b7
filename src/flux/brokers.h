/* brokers.h - wait until the brokers of some ranks answer.
 *
 * After a rank-0 broker restart, the module is back before the other
 * brokers are: they leave when the new rank 0 disconnects them and are
 * started again. A job shell started on a rank whose broker is not back
 * fails at once ("No route to host") and its job with it. A held job's
 * shells are resumed only once every one of their brokers answers.
 */
#ifndef CAIRN_FLUX_BROKERS_H
#define CAIRN_FLUX_BROKERS_H

#include <flux/core.h>

#include "core/idset.h"

struct brokers_wait;

typedef void (*brokers_up_f) (void *arg);

/* Ask the broker of each rank in ranks (copied) for its rank attribute
 * until each has answered, asking one that did not again every 0.5 s;
 * then call cb (arg) once, from the reactor. Returns the wait (cancel or
 * free it with brokers_wait_destroy, also after cb), or NULL with errno. */
struct brokers_wait *
brokers_wait (flux_t *h, const struct idset *ranks, brokers_up_f cb, void *arg);

/* Stop waiting (cb is not called) and free. NULL is fine. */
void brokers_wait_destroy (struct brokers_wait *w);

#endif /* CAIRN_FLUX_BROKERS_H */
