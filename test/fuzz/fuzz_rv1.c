/* fuzz_rv1.c - rv1_decode (RFC 20 R version 1) from JSON text, the per-rank
 * queries, and rv1_fragment.
 *
 * For an R that decodes, the queries must agree for every rank (checked for
 * the first MAX_RANKS), and a fragment holding a subset of the ranks must
 * decode again with the same hosts, cores, gpus and times for those ranks.
 *
 * Inputs whose R_lite names more than MAX_TOTAL ranks are skipped: up to
 * RV1_MAX_RANKS is valid, and decoding a million hosts takes seconds under
 * ASan, which would turn the run into timeouts (unit tests cover it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/rv1.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_rv1: %s:%d: ", __FILE__, __LINE__);         \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

#define MAX_RANKS 64     /* ranks queried one by one */
#define MAX_TOTAL 100000 /* larger R are skipped, see above */

/* Sum of the R_lite entries' rank counts, as far as they decode. */
static size_t count_ranks (const json_t *R)
{
    json_t *R_lite =
        json_object_get (json_object_get (R, "execution"), "R_lite");
    size_t i, total = 0;
    json_t *e;

    json_array_foreach (R_lite, i, e)
    {
        const char *s = json_string_value (json_object_get (e, "rank"));
        struct idset *ids = s ? idset_decode (s, NULL) : NULL;
        total += idset_count (ids);
        idset_destroy (ids);
    }
    return total;
}

static void check_queries (const struct rv1 *r)
{
    const struct idset *ranks = rv1_ranks (r);
    uint32_t rank = idset_first (ranks);
    uint32_t last = idset_last (ranks);

    CHECK (rv1_nranks (r) == idset_count (ranks) && rv1_nranks (r) > 0,
           "nranks");
    CHECK (rv1_nranks (r) <= RV1_MAX_RANKS, "too many ranks");
    for (int i = 0; i < MAX_RANKS && rank != IDSET_INVALID_ID; i++) {
        CHECK (rv1_rank_index (r, rank) == i, "index of rank %u", rank);
        CHECK (rv1_hostname (r, rank) != NULL, "host of %u", rank);
        CHECK (rv1_cores (r, rank) != NULL, "cores of %u", rank);
        CHECK (rv1_gpus (r, rank) != NULL, "gpus of %u", rank);
        rank = idset_next (ranks, rank);
    }
    CHECK (rv1_hostname (r, last) != NULL, "host of last rank");
    CHECK (rv1_rank_index (r, last) == (int)rv1_nranks (r) - 1, "last index");
    /* ranks not in R */
    if (!idset_test (ranks, 0))
        CHECK (!rv1_hostname (r, 0) && errno == ENOENT, "rank 0 is not in R");
    if (last < IDSET_MAX_ID) {
        CHECK (rv1_rank_index (r, last + 1) < 0 && errno == ENOENT,
               "rank after the last");
        CHECK (!rv1_cores (r, last + 1) && !rv1_gpus (r, last + 1),
               "cores after the last");
    }
    CHECK (rv1_starttime (r) >= 0 && rv1_expiration (r) >= 0, "times");
}

/* Every other rank among the first MAX_RANKS (so at least the first). */
static struct idset *subset (const struct rv1 *r)
{
    const struct idset *ranks = rv1_ranks (r);
    struct idset *sub = idset_create ();
    uint32_t rank = idset_first (ranks);

    CHECK (sub != NULL, "create");
    for (int i = 0; i < MAX_RANKS && rank != IDSET_INVALID_ID; i++) {
        if (i % 2 == 0)
            CHECK (idset_set (sub, rank) == 0, "set");
        rank = idset_next (ranks, rank);
    }
    return sub;
}

static void check_fragment (const struct rv1 *r)
{
    struct cairn_error err = {{0}};
    struct idset *sub = subset (r);
    json_t *frag = rv1_fragment (r, sub, &err);
    struct rv1 *fr;

    CHECK (frag != NULL, "fragment failed: %s", err.text);
    fr = rv1_decode (frag, &err);
    CHECK (fr != NULL, "fragment does not decode: %s", err.text);
    CHECK (idset_equal (rv1_ranks (fr), sub), "fragment ranks");
    for (uint32_t rank = idset_first (sub); rank != IDSET_INVALID_ID;
         rank = idset_next (sub, rank)) {
        CHECK (!strcmp (rv1_hostname (r, rank), rv1_hostname (fr, rank)),
               "host of %u", rank);
        CHECK (idset_equal (rv1_cores (r, rank), rv1_cores (fr, rank)),
               "cores of %u", rank);
        CHECK (idset_equal (rv1_gpus (r, rank), rv1_gpus (fr, rank)),
               "gpus of %u", rank);
    }
    CHECK (rv1_starttime (fr) == rv1_starttime (r), "starttime");
    CHECK (rv1_expiration (fr) == rv1_expiration (r), "expiration");
    rv1_destroy (fr);
    json_decref (frag);

    /* the whole set is a valid fragment; the empty set and ranks outside R
     * are refused */
    CHECK ((frag = rv1_fragment (r, rv1_ranks (r), &err)), "whole: %s",
           err.text);
    json_decref (frag);
    idset_destroy (sub);
    CHECK ((sub = idset_create ()), "create");
    CHECK (!rv1_fragment (r, sub, &err) && errno == EINVAL, "empty fragment");
    if (idset_last (rv1_ranks (r)) < IDSET_MAX_ID) {
        CHECK (idset_set (sub, idset_last (rv1_ranks (r)) + 1) == 0, "set");
        CHECK (!rv1_fragment (r, sub, &err) && errno == EINVAL,
               "fragment outside R");
    }
    idset_destroy (sub);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    json_t *R = json_loadb ((const char *)data, size, JSON_DECODE_ANY, NULL);
    struct rv1 *r;

    if (!R)
        return 0;
    if (count_ranks (R) > MAX_TOTAL) {
        json_decref (R);
        return 0;
    }
    if (!(r = rv1_decode (R, &err))) {
        CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
    } else {
        CHECK (rv1_json (r) == R, "rv1_json");
        check_queries (r);
        check_fragment (r);
        rv1_destroy (r);
    }
    json_decref (R);
    return 0;
}
