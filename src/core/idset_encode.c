/* idset_encode.c - RFC 22 text from an idset, see idset.h
 *
 * The set is already stored as maximal runs, so the compressed form falls
 * out directly: one element per run, and the output size is known up front
 * (at most 10 digits + '-' + 10 digits + ',' per run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/idset.h"

#define RUN_MAX_CHARS (10 + 1 + 10 + 1)

char *idset_encode (const struct idset *s)
{
    size_t n = idset_range_count (s);
    char *buf;
    size_t len = 0;

    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    if (n > (SIZE_MAX - 1) / RUN_MAX_CHARS ||
        !(buf = malloc (n * RUN_MAX_CHARS + 1))) {
        errno = ENOMEM;
        return NULL;
    }
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        uint32_t lo, hi;
        size_t room = n * RUN_MAX_CHARS + 1 - len;

        (void)idset_range_get (s, i, &lo, &hi); // i < n: cannot fail
        if (lo == hi)
            len += (size_t)snprintf (buf + len, room, "%s%" PRIu32,
                                     i ? "," : "", lo);
        else
            len += (size_t)snprintf (buf + len, room, "%s%" PRIu32 "-%" PRIu32,
                                     i ? "," : "", lo, hi);
    }
    return buf;
}
