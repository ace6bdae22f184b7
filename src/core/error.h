/* error.h - human context for failures.
 *
 * Functions that can fail return -1 (or NULL) with errno set; when they take
 * a `struct cairn_error *err` as their last argument they also put a
 * one-line, human-readable reason in it. `err` may be NULL.
 */
#ifndef CAIRN_ERROR_H
#define CAIRN_ERROR_H

struct cairn_error {
    char text[256];
};

/* Format a message into err (if non-NULL). errno is preserved.
 * Always returns -1, so it can end an error path:
 *     return errprintf (err, "rank %d: bad state", rank);
 */
int errprintf (struct cairn_error *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Like errprintf() but also sets errno to errnum. Returns -1. */
int errset (struct cairn_error *err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Prefix an existing message: "prefix: old text". Returns -1. */
int errprefix (struct cairn_error *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif /* CAIRN_ERROR_H */
