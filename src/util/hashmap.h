/* hashmap.h - string keys to pointers; open addressing, grows by doubling.
 *
 * cairnd keeps its jobs (by decimal id) and its watched processes (by
 * execid) here, so every per-event lookup is O(1) whatever the number of
 * jobs. Keys are copied; values are borrowed.
 */
#ifndef CAIRN_HASHMAP_H
#define CAIRN_HASHMAP_H

#include <stddef.h>

struct hashmap;

struct hashmap *hashmap_create (void);
void hashmap_destroy (struct hashmap *h); /* values are not freed */

/* Insert or replace. -1 ENOMEM. */
int hashmap_put (struct hashmap *h, const char *key, void *value);
/* NULL (errno ENOENT) if absent. */
void *hashmap_get (const struct hashmap *h, const char *key);
/* Remove; absent keys are fine. */
void hashmap_del (struct hashmap *h, const char *key);
size_t hashmap_count (const struct hashmap *h);

/* Iterate: start with *pos = 0; returns the next value (key in *key) or
 * NULL at the end. The map must not change during iteration, except
 * hashmap_del of the entry just returned. */
void *hashmap_next (const struct hashmap *h, size_t *pos, const char **key);

#endif /* CAIRN_HASHMAP_H */
