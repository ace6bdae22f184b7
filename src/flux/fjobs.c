/* fjobs.c - see fjobs.h. An unordered array: a lookup walks it, as jobs
 * in flight at once are few next to what each costs. */
#include <errno.h>
#include <stdlib.h>

#include "flux/fjob.h"
#include "flux/fjobs.h"

struct fjobs {
    struct fjob **v;
    size_t n, cap;
};

struct fjobs *fjobs_create (void)
{
    struct fjobs *js = calloc (1, sizeof (*js));
    if (!js)
        errno = ENOMEM;
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
    js->v[js->n++] = job;
    return 0;
}

struct fjob *fjobs_find (const struct fjobs *js, flux_jobid_t id)
{
    for (size_t i = 0; i < js->n; i++)
        if (fjob_id (js->v[i]) == id)
            return js->v[i];
    return NULL;
}

void fjobs_remove (struct fjobs *js, struct fjob *job)
{
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
