/* fuzz_idset.c - idset_decode (RFC 22) and what is built on a decoded set.
 *
 * Input: one or two idset strings separated by the first '\n'. Each one that
 * decodes must encode to a string that decodes to the same set (with the
 * same count), and two sets must obey the algebra of union, difference and
 * intersection. A failed decode must say EINVAL and give a reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_idset: %s:%d: ", __FILE__, __LINE__);       \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

static struct idset *decode (const char *s)
{
    struct cairn_error err = {{0}};
    struct idset *set = idset_decode (s, &err);

    if (!set) {
        CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason for \"%s\"", s);
        return NULL;
    }
    return set;
}

/* Encode s and decode the text again: it must give back s. Also walk the
 * runs, ids and queries and check they agree with each other. */
static void check_set (const struct idset *s)
{
    char *text = idset_encode (s);
    struct idset *back;
    size_t nruns = idset_range_count (s);
    size_t count = 0;
    uint32_t lo, hi, prev_hi = 0;

    CHECK (text != NULL, "encode failed");
    back = decode (text);
    CHECK (back != NULL, "encoded \"%s\" does not decode", text);
    CHECK (idset_equal (s, back), "\"%s\" decodes to another set", text);
    CHECK (idset_count (back) == idset_count (s), "count differs");
    for (size_t i = 0; i < nruns; i++) {
        CHECK (idset_range_get (s, i, &lo, &hi) == 0, "range %zu", i);
        CHECK (lo <= hi, "run %zu: %u > %u", i, lo, hi);
        CHECK (i == 0 || lo > prev_hi + 1, "runs %zu not disjoint", i);
        CHECK (idset_test (s, lo) && idset_test (s, hi), "run ends");
        CHECK (idset_next (s, lo) ==
                   (lo == hi ? idset_nth (s, count + 1) : lo + 1),
               "next after %u", lo);
        CHECK (idset_nth (s, count) == lo, "nth %zu", count);
        count += (size_t)hi - lo + 1;
        prev_hi = hi;
    }
    CHECK (count == idset_count (s), "count %zu != %zu", count,
           idset_count (s));
    CHECK (idset_empty (s) == (count == 0), "empty");
    if (count > 0) {
        CHECK (idset_range_get (s, 0, &lo, &hi) == 0 && idset_first (s) == lo,
               "first");
        CHECK (idset_last (s) == prev_hi, "last");
        CHECK (idset_nth (s, count - 1) == prev_hi, "nth last");
    }
    CHECK (idset_nth (s, count) == IDSET_INVALID_ID, "nth past the end");
    idset_destroy (back);
    free (text);
}

/* Union, difference and intersection of a and b, against each other. */
static void check_algebra (const struct idset *a, const struct idset *b)
{
    struct idset *u = idset_copy (a);
    struct idset *d = idset_copy (a);
    struct idset *i = idset_intersect (a, b);

    CHECK (u && d && i, "copy/intersect failed");
    CHECK (idset_add (u, b) == 0, "add");
    CHECK (idset_subtract (d, b) == 0, "subtract");
    check_set (u);
    check_set (d);
    check_set (i);
    /* |a u b| = |a - b| + |b|, |a| = |a - b| + |a n b| */
    CHECK (idset_count (u) == idset_count (d) + idset_count (b), "|a u b|");
    CHECK (idset_count (a) == idset_count (d) + idset_count (i), "|a|");
    CHECK (idset_is_subset (a, u) && idset_is_subset (b, u), "subset of u");
    CHECK (idset_is_subset (i, a) && idset_is_subset (i, b), "i subset");
    CHECK (idset_is_subset (d, a), "d subset");
    CHECK (idset_equal (a, b) ==
               (idset_is_subset (a, b) && idset_is_subset (b, a)),
           "equal");
    /* (a - b) u (a n b) = a */
    CHECK (idset_add (d, i) == 0 && idset_equal (d, a), "(a-b) u (a n b)");
    /* removing b's ids one at a time from u leaves a - b */
    if (idset_range_count (b) <= 64 && idset_count (b) <= 256) {
        struct idset *e = idset_copy (u);
        CHECK (e != NULL, "copy");
        for (uint32_t id = idset_first (b); id != IDSET_INVALID_ID;
             id = idset_next (b, id))
            CHECK (idset_clear (e, id) == 0 && !idset_test (e, id), "clear");
        CHECK (idset_subtract (u, b) == 0, "subtract");
        CHECK (idset_equal (e, u), "clear one by one");
        idset_destroy (e);
    }
    idset_destroy (u);
    idset_destroy (d);
    idset_destroy (i);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *buf = malloc (size + 1);
    char *second;
    struct idset *a, *b = NULL;

    if (!buf)
        return 0;
    memcpy (buf, data, size);
    buf[size] = '\0';
    if ((second = memchr (buf, '\n', size)))
        *second++ = '\0';
    if ((a = decode (buf)))
        check_set (a);
    if (second && (b = decode (second))) {
        check_set (b);
        if (a)
            check_algebra (a, b);
    }
    idset_destroy (a);
    idset_destroy (b);
    free (buf);
    return 0;
}
