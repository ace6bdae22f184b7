/* fjobs.c - see fjobs.h. An unordered array to go through them all, and a
 * map by id: every job-manager request finds its job at once, however
 * many run (a 1000-job burst no longer walks the array per request). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "flux/fjob.h"
#include "flux/fjobs.h"
#include "util/hashmap.h"

struct fjobs {
    struct fjob **v; /* in no order: for fjobs_nth and the end */
    size_t n, cap;
    struct hashmap *byid; /* decimal id -> job: a lookup per request */
};

static void id_key (flux_jobid_t id, char key[24])
{
    snprintf (key, 24, "%" PRIu64, (uint64_t)id);
}

struct fjobs *fjobs_create (void)
{
    struct fjobs *js = calloc (1, sizeof (*js));
    if (!js || !(js->byid = hashmap_create ())) {
        free (js);
        errno = ENOMEM;
        return NULL;
    }
    return js;
}

void fjobs_destroy (struct fjobs *js)
{
    if (!js)
        return;
    int saved = errno;
    for (size_t i = 0; i < js->n; i++)
        fjob_destroy (js->v[i]);
    free (js->v);
    hashmap_destroy (js->byid);
    free (js);
    errno = saved;
}

int fjobs_add (struct fjobs *js, struct fjob *job)
{
    if (js->n == js->cap) {
        size_t cap = js->cap ? js->cap * 2 : 64;
        struct fjob **v = realloc (js->v, cap * sizeof (*v));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        js->v = v;
        js->cap = cap;
    }
    char key[24];
    id_key (fjob_id (job), key);
    if (hashmap_put (js->byid, key, job) < 0) {
        errno = ENOMEM;
        return -1;
    }
    js->v[js->n++] = job;
    return 0;
}

struct fjob *fjobs_find (const struct fjobs *js, flux_jobid_t id)
{
    char key[24];
    id_key (id, key);
    return hashmap_get (js->byid, key);
}

void fjobs_remove (struct fjobs *js, struct fjob *job)
{
    char key[24];
    id_key (fjob_id (job), key);
    if (hashmap_get (js->byid, key) == job)
        hashmap_del (js->byid, key);
    for (size_t i = 0; i < js->n; i++) {
        if (js->v[i] == job) {
            js->v[i] = js->v[--js->n];
            break;
        }
    }
    fjob_destroy (job);
}

size_t fjobs_count (const struct fjobs *js)
{
    return js->n;
}

struct fjob *fjobs_nth (const struct fjobs *js, size_t i)
{
    return i < js->n ? js->v[i] : NULL;
}
