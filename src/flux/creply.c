/* creply.c - see creply.h. */
#include <errno.h>
#include <stdlib.h>

#include "flux/creply.h"

struct entry {
    int64_t matchtag;
    int flags;
    creply_f cb;
    void *arg;
};

struct creply {
    struct entry *v; /* ascending matchtags */
    size_t n, cap;
    int64_t last; /* the highest matchtag ever added: they only grow */
};

struct creply *creply_create (void)
{
    struct creply *t = calloc (1, sizeof (*t));
    if (!t)
        errno = ENOMEM;
    return t;
}

void creply_destroy (struct creply *t)
{
    if (!t)
        return;
    int saved = errno;
    free (t->v);
    free (t);
    errno = saved;
}

int creply_add (
    struct creply *t, int64_t matchtag, int flags, creply_f cb, void *arg)
{
    /* ascending, so that the array stays sorted without a sort */
    if (matchtag <= 0 || matchtag <= t->last) {
        errno = EINVAL;
        return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct entry *v = realloc (t->v, cap * sizeof (*v));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (struct entry){matchtag, flags, cb, arg};
    t->last = matchtag;
    return 0;
}

/* The index of matchtag's entry, or -1. */
static long find (const struct creply *t, int64_t matchtag)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].matchtag < matchtag)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->v[lo].matchtag == matchtag ? (long)lo : -1;
}

static void remove_at (struct creply *t, size_t i)
{
    for (; i + 1 < t->n; i++)
        t->v[i] = t->v[i + 1];
    t->n--;
}

void creply_remove (struct creply *t, int64_t matchtag)
{
    long i = find (t, matchtag);
    if (i >= 0)
        remove_at (t, (size_t)i);
}

void creply_clear (struct creply *t)
{
    t->n = 0;
}

bool creply_dispatch (struct creply *t, int64_t matchtag, const json_t *msg)
{
    long i = find (t, matchtag);

    if (i < 0)
        return false;
    /* copied out first: the callback may change the table */
    struct entry e = t->v[i];
    if (!(e.flags & CREPLY_STREAMING))
        remove_at (t, (size_t)i);
    if (e.cb)
        e.cb (msg, e.arg);
    return true;
}

size_t creply_count (const struct creply *t)
{
    return t->n;
}
