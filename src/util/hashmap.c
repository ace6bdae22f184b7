/* hashmap.c - see hashmap.h. Linear probing with tombstones; the table is
 * rebuilt (dropping tombstones) when live + dead entries pass 3/4. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

struct slot {
    char *key; /* NULL: empty; TOMBSTONE: deleted */
    void *value;
};

static char tombstone;
#define TOMBSTONE (&tombstone)

struct hashmap {
    struct slot *slots;
    size_t size; /* power of two */
    size_t count;
    size_t used; /* count + tombstones */
};

static uint64_t hash (const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 1099511628211ULL;
    }
    return h;
}

struct hashmap *hashmap_create (void)
{
    struct hashmap *h = calloc (1, sizeof (*h));
    if (!h || !(h->slots = calloc (16, sizeof (struct slot)))) {
        free (h);
        errno = ENOMEM;
        return NULL;
    }
    h->size = 16;
    return h;
}

void hashmap_destroy (struct hashmap *h)
{
    if (h) {
        int saved = errno;
        for (size_t i = 0; i < h->size; i++)
            if (h->slots[i].key && h->slots[i].key != TOMBSTONE)
                free (h->slots[i].key);
        free (h->slots);
        free (h);
        errno = saved;
    }
}

static struct slot *find (const struct hashmap *h, const char *key)
{
    size_t mask = h->size - 1;
    for (size_t i = hash (key) & mask;; i = (i + 1) & mask) {
        struct slot *s = &h->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != TOMBSTONE && strcmp (s->key, key) == 0)
            return s;
    }
}

static int rehash (struct hashmap *h, size_t size)
{
    struct slot *old = h->slots;
    size_t oldsize = h->size;
    if (!(h->slots = calloc (size, sizeof (struct slot)))) {
        h->slots = old;
        errno = ENOMEM;
        return -1;
    }
    h->size = size;
    h->used = h->count;
    for (size_t i = 0; i < oldsize; i++) {
        if (!old[i].key || old[i].key == TOMBSTONE)
            continue;
        size_t mask = size - 1;
        size_t j = hash (old[i].key) & mask;
        while (h->slots[j].key)
            j = (j + 1) & mask;
        h->slots[j] = old[i];
    }
    free (old);
    return 0;
}

int hashmap_put (struct hashmap *h, const char *key, void *value)
{
    struct slot *s = find (h, key);
    if (s) {
        s->value = value;
        return 0;
    }
    if ((h->used + 1) * 4 > h->size * 3) {
        size_t size = h->size;
        if ((h->count + 1) * 2 > size)
            size *= 2;
        if (rehash (h, size) < 0)
            return -1;
    }
    char *k = strdup (key);
    if (!k)
        return -1;
    size_t mask = h->size - 1;
    size_t i = hash (key) & mask;
    while (h->slots[i].key && h->slots[i].key != TOMBSTONE)
        i = (i + 1) & mask;
    if (!h->slots[i].key)
        h->used++;
    h->slots[i].key = k;
    h->slots[i].value = value;
    h->count++;
    return 0;
}

void *hashmap_get (const struct hashmap *h, const char *key)
{
    struct slot *s = find (h, key);
    if (!s) {
        errno = ENOENT;
        return NULL;
    }
    return s->value;
}

void hashmap_del (struct hashmap *h, const char *key)
{
    struct slot *s = find (h, key);
    if (s) {
        free (s->key);
        s->key = TOMBSTONE;
        s->value = NULL;
        h->count--;
    }
}

size_t hashmap_count (const struct hashmap *h)
{
    return h->count;
}

void *hashmap_next (const struct hashmap *h, size_t *pos, const char **key)
{
    while (*pos < h->size) {
        struct slot *s = &h->slots[(*pos)++];
        if (s->key && s->key != TOMBSTONE) {
            if (key)
                *key = s->key;
            return s->value;
        }
    }
    return NULL;
}
