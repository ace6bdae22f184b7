/* idset.c - see idset.h
 *
 * Invariant of struct idset, relied on everywhere below: r[0..n-1] is sorted
 * by lo, every run has lo <= hi <= IDSET_MAX_ID, and two neighbouring runs
 * are separated by at least one absent id (r[i].hi + 1 < r[i+1].lo). This
 * makes the representation canonical, so equality is a plain comparison of
 * runs, and keeps "hi + 1" free of overflow since hi < UINT32_MAX.
 *
 * Ids are mostly added in ascending order (ranks, decoding), so setting past
 * the last run is a fast path; lookups elsewhere use binary search. The set
 * operations (add, subtract, intersect) are linear merges into a new array,
 * swapped in only on success so that dst is unchanged on ENOMEM.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"

struct range {
    uint32_t lo;
    uint32_t hi;
};

struct idset {
    struct range *r;
    size_t n;
    size_t alloc;
};

struct idset *idset_create (void)
{
    struct idset *s = calloc (1, sizeof (*s));
    if (!s)
        errno = ENOMEM;
    return s;
}

void idset_destroy (struct idset *s)
{
    if (s) {
        int saved = errno;
        free (s->r);
        free (s);
        errno = saved;
    }
}

/* Make room for at least `need` runs. */
static int reserve (struct idset *s, size_t need)
{
    if (need <= s->alloc)
        return 0;
    size_t alloc = s->alloc ? s->alloc * 2 : 8;
    if (alloc < need)
        alloc = need;
    if (alloc > SIZE_MAX / sizeof (struct range)) {
        errno = ENOMEM;
        return -1;
    }
    struct range *r = realloc (s->r, alloc * sizeof (*r));
    if (!r) {
        errno = ENOMEM;
        return -1;
    }
    s->r = r;
    s->alloc = alloc;
    return 0;
}

/* Index of the first run with hi >= id, or n if there is none. */
static size_t lower_bound (const struct idset *s, uint32_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->r[mid].hi < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Replace the runs of s with the n runs in r (takes ownership of r). */
static void
replace_runs (struct idset *s, struct range *r, size_t n, size_t alloc)
{
    free (s->r);
    s->r = r;
    s->n = n;
    s->alloc = alloc;
}

/* Append [lo,hi] to r[0..*n-1], where lo >= the last run's lo, merging with
 * the last run when they touch. Used by the merges, which emit runs in
 * ascending order of lo. */
static void push_run (struct range *r, size_t *n, uint32_t lo, uint32_t hi)
{
    if (*n > 0 && lo <= r[*n - 1].hi + 1) {
        if (hi > r[*n - 1].hi)
            r[*n - 1].hi = hi;
        return;
    }
    r[*n].lo = lo;
    r[*n].hi = hi;
    (*n)++;
}

struct idset *idset_copy (const struct idset *s)
{
    struct idset *cpy;

    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = idset_create ()))
        return NULL;
    if (reserve (cpy, s->n) < 0)
        goto error;
    if (s->n > 0)
        memcpy (cpy->r, s->r, s->n * sizeof (s->r[0]));
    cpy->n = s->n;
    return cpy;
error:
    idset_destroy (cpy);
    return NULL;
}

int idset_range_set (struct idset *s, uint32_t lo, uint32_t hi)
{
    if (!s || lo > hi || hi > IDSET_MAX_ID) {
        errno = EINVAL;
        return -1;
    }
    /* Fast path: at or past the end of the last run. */
    if (s->n == 0 || lo > s->r[s->n - 1].hi) {
        if (s->n > 0 && lo == s->r[s->n - 1].hi + 1) {
            s->r[s->n - 1].hi = hi;
            return 0;
        }
        if (reserve (s, s->n + 1) < 0)
            return -1;
        s->r[s->n].lo = lo;
        s->r[s->n].hi = hi;
        s->n++;
        return 0;
    }
    /* Runs i..j-1 overlap or touch [lo,hi] and collapse into one. */
    size_t i = lower_bound (s, lo == 0 ? 0 : lo - 1);
    size_t j = i;
    while (j < s->n && s->r[j].lo <= hi + 1)
        j++;
    if (i == j) {
        if (reserve (s, s->n + 1) < 0)
            return -1;
        memmove (&s->r[i + 1], &s->r[i], (s->n - i) * sizeof (s->r[0]));
        s->r[i].lo = lo;
        s->r[i].hi = hi;
        s->n++;
        return 0;
    }
    if (s->r[i].lo < lo)
        lo = s->r[i].lo;
    if (s->r[j - 1].hi > hi)
        hi = s->r[j - 1].hi;
    s->r[i].lo = lo;
    s->r[i].hi = hi;
    memmove (&s->r[i + 1], &s->r[j], (s->n - j) * sizeof (s->r[0]));
    s->n -= j - i - 1;
    return 0;
}

int idset_set (struct idset *s, uint32_t id)
{
    return idset_range_set (s, id, id);
}

int idset_clear (struct idset *s, uint32_t id)
{
    if (!s || id > IDSET_MAX_ID) {
        errno = EINVAL;
        return -1;
    }
    size_t i = lower_bound (s, id);
    if (i == s->n || s->r[i].lo > id)
        return 0;
    struct range *r = &s->r[i];
    if (r->lo == r->hi) {
        memmove (r, r + 1, (s->n - i - 1) * sizeof (*r));
        s->n--;
    } else if (id == r->lo)
        r->lo++;
    else if (id == r->hi)
        r->hi--;
    else {
        /* Split [lo,hi] into [lo,id-1] and [id+1,hi]. */
        if (reserve (s, s->n + 1) < 0)
            return -1;
        r = &s->r[i]; // reserve may have moved the array
        memmove (r + 1, r, (s->n - i) * sizeof (*r));
        r[0].hi = id - 1;
        r[1].lo = id + 1;
        s->n++;
    }
    return 0;
}

bool idset_test (const struct idset *s, uint32_t id)
{
    if (!s)
        return false;
    size_t i = lower_bound (s, id);
    return i < s->n && s->r[i].lo <= id;
}

size_t idset_count (const struct idset *s)
{
    size_t count = 0;
    if (s) {
        for (size_t i = 0; i < s->n; i++)
            count += (size_t)(s->r[i].hi - s->r[i].lo) + 1;
    }
    return count;
}

bool idset_empty (const struct idset *s)
{
    return !s || s->n == 0;
}

uint32_t idset_first (const struct idset *s)
{
    return idset_empty (s) ? IDSET_INVALID_ID : s->r[0].lo;
}

uint32_t idset_last (const struct idset *s)
{
    return idset_empty (s) ? IDSET_INVALID_ID : s->r[s->n - 1].hi;
}

uint32_t idset_next (const struct idset *s, uint32_t prev)
{
    if (!s || prev >= IDSET_MAX_ID)
        return IDSET_INVALID_ID;
    uint32_t id = prev + 1;
    size_t i = lower_bound (s, id);
    if (i == s->n)
        return IDSET_INVALID_ID;
    return s->r[i].lo > id ? s->r[i].lo : id;
}

uint32_t idset_nth (const struct idset *s, size_t n)
{
    if (!s)
        return IDSET_INVALID_ID;
    for (size_t i = 0; i < s->n; i++) {
        size_t len = (size_t)(s->r[i].hi - s->r[i].lo) + 1;
        if (n < len)
            return s->r[i].lo + (uint32_t)n;
        n -= len;
    }
    return IDSET_INVALID_ID;
}

size_t idset_range_count (const struct idset *s)
{
    return s ? s->n : 0;
}

int idset_range_get (const struct idset *s,
                     size_t i,
                     uint32_t *lo,
                     uint32_t *hi)
{
    if (!s || i >= s->n || !lo || !hi) {
        errno = EINVAL;
        return -1;
    }
    *lo = s->r[i].lo;
    *hi = s->r[i].hi;
    return 0;
}

/* Allocate room for n runs (at least one, so that an empty result is not
 * mistaken for an allocation failure). */
static struct range *runs_alloc (size_t n)
{
    struct range *r = NULL;
    if (n < SIZE_MAX / sizeof (*r))
        r = malloc ((n ? n : 1) * sizeof (*r));
    if (!r)
        errno = ENOMEM;
    return r;
}

int idset_add (struct idset *dst, const struct idset *src)
{
    struct range *r;
    size_t n = 0, i = 0, j = 0;

    if (!dst || !src) {
        errno = EINVAL;
        return -1;
    }
    if (dst == src || src->n == 0)
        return 0;
    if (!(r = runs_alloc (dst->n + src->n)))
        return -1;
    while (i < dst->n || j < src->n) {
        const struct range *next;
        if (j == src->n || (i < dst->n && dst->r[i].lo <= src->r[j].lo))
            next = &dst->r[i++];
        else
            next = &src->r[j++];
        push_run (r, &n, next->lo, next->hi);
    }
    replace_runs (dst, r, n, dst->n + src->n);
    return 0;
}

int idset_subtract (struct idset *dst, const struct idset *src)
{
    struct range *r;
    size_t n = 0, j = 0;

    if (!dst || !src) {
        errno = EINVAL;
        return -1;
    }
    if (dst == src) {
        dst->n = 0;
        return 0;
    }
    if (src->n == 0 || dst->n == 0)
        return 0;
    /* Each src run can split at most one dst run in two. */
    if (!(r = runs_alloc (dst->n + src->n)))
        return -1;
    for (size_t i = 0; i < dst->n; i++) {
        uint32_t cur = dst->r[i].lo;
        uint32_t end = dst->r[i].hi;
        bool done = false;

        /* src runs wholly below this one can't touch later ones either. */
        while (j < src->n && src->r[j].hi < cur)
            j++;
        for (size_t k = j; k < src->n && src->r[k].lo <= end; k++) {
            if (src->r[k].lo > cur)
                push_run (r, &n, cur, src->r[k].lo - 1);
            if (src->r[k].hi >= end) {
                done = true;
                break;
            }
            cur = src->r[k].hi + 1;
        }
        if (!done)
            push_run (r, &n, cur, end);
    }
    replace_runs (dst, r, n, dst->n + src->n);
    return 0;
}

struct idset *idset_intersect (const struct idset *a, const struct idset *b)
{
    struct idset *s;
    size_t i = 0, j = 0;

    if (!a || !b) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = idset_create ()))
        return NULL;
    /* Intersections of canonical sets never touch: no extra merging. */
    if (reserve (s, a->n + b->n) < 0)
        goto error;
    while (i < a->n && j < b->n) {
        uint32_t lo = a->r[i].lo > b->r[j].lo ? a->r[i].lo : b->r[j].lo;
        uint32_t hi = a->r[i].hi < b->r[j].hi ? a->r[i].hi : b->r[j].hi;
        if (lo <= hi) {
            s->r[s->n].lo = lo;
            s->r[s->n].hi = hi;
            s->n++;
        }
        if (a->r[i].hi < b->r[j].hi)
            i++;
        else
            j++;
    }
    return s;
error:
    idset_destroy (s);
    return NULL;
}

bool idset_equal (const struct idset *a, const struct idset *b)
{
    size_t na = idset_range_count (a);

    if (na != idset_range_count (b))
        return false;
    for (size_t i = 0; i < na; i++) {
        if (a->r[i].lo != b->r[i].lo || a->r[i].hi != b->r[i].hi)
            return false;
    }
    return true;
}

bool idset_is_subset (const struct idset *a, const struct idset *b)
{
    size_t j = 0;
    size_t na = idset_range_count (a);
    size_t nb = idset_range_count (b);

    for (size_t i = 0; i < na; i++) {
        while (j < nb && b->r[j].hi < a->r[i].lo)
            j++;
        if (j == nb || b->r[j].lo > a->r[i].lo || b->r[j].hi < a->r[i].hi)
            return false;
    }
    return true;
}
