/* idset.h - sets of non-negative integer ids (RFC 22), e.g. job ranks.
 *
 * A set is stored as a sorted array of disjoint, non-adjacent [lo,hi] runs,
 * so memory grows with the number of runs, not with the largest id:
 * "0-4000000000" costs one run. Valid ids are 0 .. IDSET_MAX_ID.
 *
 * Text form (RFC 22): ascending decimal ids without leading zeros, comma
 * separated, runs written "a-b" with a < b, optionally wrapped in one pair
 * of brackets: "1-3,5-6,42", "[0-3]". The empty set is "".
 *
 * Unless stated otherwise, a NULL set argument fails with EINVAL (int and
 * pointer functions) or reads as the empty set (bool/count/query functions).
 */
#ifndef CAIRN_IDSET_H
#define CAIRN_IDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Not an id. Also what idset_first/next/last/nth return when there is no
 * (further) id. */
#define IDSET_INVALID_ID UINT32_MAX
#define IDSET_MAX_ID (UINT32_MAX - 1)

struct idset;

/* Create an empty set. Returns NULL with errno ENOMEM on failure.
 * The caller frees it with idset_destroy(). */
struct idset *idset_create (void);

/* Free s. NULL is fine. errno is preserved. */
void idset_destroy (struct idset *s);

/* Return a new set equal to s (caller destroys it), or NULL with errno
 * EINVAL (s is NULL) or ENOMEM. */
struct idset *idset_copy (const struct idset *s);

/* Parse the RFC 22 text s, strictly: see the top of this file. "" and "[]"
 * give the empty set. Returns a new set (caller destroys it), or NULL with
 * errno EINVAL and a reason in err naming the offending token or position,
 * e.g. `idset "1-": range at "1-" has no upper bound`; ENOMEM if out of
 * memory. s == NULL fails with EINVAL. */
struct idset *idset_decode (const char *s, struct cairn_error *err);

/* Format s as RFC 22 text with runs compressed: "0-3,5,7-9"; "" when empty.
 * No brackets. Returns a malloc'd string the caller frees, or NULL with
 * errno EINVAL (s is NULL) or ENOMEM. */
char *idset_encode (const struct idset *s);

/* Add id to s. Adding an id already present is fine.
 * Returns 0, or -1 with errno EINVAL (id > IDSET_MAX_ID) or ENOMEM. */
int idset_set (struct idset *s, uint32_t id);

/* Add every id in lo..hi (inclusive) to s.
 * Returns 0, or -1 with errno EINVAL (lo > hi or hi > IDSET_MAX_ID) or
 * ENOMEM. */
int idset_range_set (struct idset *s, uint32_t lo, uint32_t hi);

/* Remove id from s. Removing an absent id is fine.
 * Returns 0, or -1 with errno EINVAL (id > IDSET_MAX_ID) or ENOMEM (removing
 * an id from the middle of a run splits it in two). */
int idset_clear (struct idset *s, uint32_t id);

/* True if id is in s. */
bool idset_test (const struct idset *s, uint32_t id);

/* Number of ids in s. */
size_t idset_count (const struct idset *s);

/* True if s holds no id. */
bool idset_empty (const struct idset *s);

/* Smallest id in s, or IDSET_INVALID_ID if s is empty. */
uint32_t idset_first (const struct idset *s);

/* Smallest id in s greater than prev, or IDSET_INVALID_ID if there is none.
 * Iterate with:
 *     for (id = idset_first (s); id != IDSET_INVALID_ID;
 *          id = idset_next (s, id))
 */
uint32_t idset_next (const struct idset *s, uint32_t prev);

/* Largest id in s, or IDSET_INVALID_ID if s is empty. */
uint32_t idset_last (const struct idset *s);

/* The n-th smallest id in s (n = 0 is the first), or IDSET_INVALID_ID if s
 * holds n ids or fewer. */
uint32_t idset_nth (const struct idset *s, size_t n);

/* Number of runs (maximal ranges of consecutive ids) in s. */
size_t idset_range_count (const struct idset *s);

/* Store the i-th run of s (0-based, ascending) in *lo and *hi.
 * Returns 0, or -1 with errno EINVAL (NULL argument or i out of range). */
int idset_range_get (const struct idset *s,
                     size_t i,
                     uint32_t *lo,
                     uint32_t *hi);

/* dst |= src. dst and src may be the same set. dst is unchanged on error.
 * Returns 0, or -1 with errno EINVAL or ENOMEM. */
int idset_add (struct idset *dst, const struct idset *src);

/* dst &= ~src (remove from dst every id of src). dst and src may be the
 * same set. dst is unchanged on error.
 * Returns 0, or -1 with errno EINVAL or ENOMEM. */
int idset_subtract (struct idset *dst, const struct idset *src);

/* Return a new set holding the ids in both a and b (caller destroys it), or
 * NULL with errno EINVAL or ENOMEM. */
struct idset *idset_intersect (const struct idset *a, const struct idset *b);

/* True if a and b hold the same ids. */
bool idset_equal (const struct idset *a, const struct idset *b);

/* True if every id of a is in b (the empty set is a subset of any set). */
bool idset_is_subset (const struct idset *a, const struct idset *b);

#endif /* CAIRN_IDSET_H */
