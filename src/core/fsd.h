/* fsd.h - Flux Standard Duration (FSD) strings.
 *
 * An FSD is a non-negative decimal number with an optional unit suffix:
 * "30" or "30s" (seconds), "2.5m" (minutes), "1h" (hours), "1d" (days).
 * The number may have a fraction and an exponent ("1.5e3s"). The special
 * values "inf" and "infinity" (any case) mean no limit.
 */
#ifndef CAIRN_FSD_H
#define CAIRN_FSD_H

#include <stddef.h>
#include <jansson.h>

#include "core/error.h"

/* Parse FSD string s into *seconds (INFINITY for "inf"/"infinity").
 * Rejected: NULL or "", a sign, whitespace anywhere, a unit without a
 * number, an unknown or repeated unit, "nan", hex numbers, any trailing
 * junk, and finite values too large to represent (they would become inf).
 * Returns 0, or -1 with errno = EINVAL and a message quoting s in err.
 * *seconds is only written on success.
 */
int fsd_parse (const char *s, double *seconds, struct cairn_error *err);

/* Write seconds as a short FSD into buf (len bytes, NUL included).
 * The unit is the largest one the value reaches (s, m, h, d) and the
 * number has at most 6 significant digits unless more are needed to stay
 * finite: 0 -> "0s", 0.25 -> "0.25s", 90 -> "1.5m", 3600 -> "1h",
 * INFINITY -> "inf". fsd_parse() of the result is within 0.001% of seconds.
 * Returns 0, or -1 with errno = EINVAL (seconds negative or NaN, buf NULL)
 * or EOVERFLOW (buf too small; buf then holds "" if len > 0).
 */
int fsd_format (char *buf, size_t len, double seconds);

/* Read a duration from JSON: a string is parsed as an FSD, a number is
 * taken as seconds and must be >= 0. Returns 0, or -1 with errno = EINVAL
 * and a message in err (wrong type, negative, bad FSD string).
 */
int fsd_parse_json (const json_t *o, double *seconds, struct cairn_error *err);

#endif /* CAIRN_FSD_H */
