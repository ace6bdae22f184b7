/* fsd.c - Flux Standard Duration parsing and formatting.
 *
 * The number is checked by hand before strtod() sees it: strtod() alone
 * would accept leading blanks, signs, hex floats, "nan" and "inf" inside
 * other text, none of which belong in a duration that a site wrote in a
 * config file. Once the syntax is known to be plain decimal, strtod() does
 * the conversion (with correct rounding, which is hard to get by hand).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fsd.h"

/* Longest part of a rejected string quoted in a message. */
#define QUOTE_MAX 64

static const struct fsd_unit {
    char suffix;
    double seconds;
} units[] = {
    {'s', 1.},
    {'m', 60.},
    {'h', 3600.},
    {'d', 86400.},
};

static int invalid (struct cairn_error *err, const char *s, const char *why)
{
    size_t n = strlen (s);
    return errset (err, EINVAL, "invalid duration \"%.*s%s\": %s", QUOTE_MAX, s,
                   n > QUOTE_MAX ? "..." : "", why);
}

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_digits (const char *p, size_t *count)
{
    while (is_digit (*p)) {
        p++;
        (*count)++;
    }
    return p;
}

int fsd_parse (const char *s, double *seconds, struct cairn_error *err)
{
    const char *p;
    size_t digits = 0;
    size_t expdigits = 0;
    double mult = 1.;
    double value;
    char *end;

    if (!s)
        return errset (err, EINVAL, "invalid duration: (null)");
    if (*s == '\0')
        return errset (err, EINVAL, "invalid duration \"\": empty");
    if (!strcasecmp (s, "inf") || !strcasecmp (s, "infinity")) {
        if (seconds)
            *seconds = INFINITY;
        return 0;
    }
    p = skip_digits (s, &digits);
    if (*p == '.')
        p = skip_digits (p + 1, &digits);
    if (digits == 0)
        return invalid (err, s, "expected a non-negative number");
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        p = skip_digits (p, &expdigits);
        if (expdigits == 0)
            return invalid (err, s, "bad exponent");
    }
    const char *numend = p;
    if (*p != '\0') {
        size_t i;
        for (i = 0; i < sizeof (units) / sizeof (units[0]); i++) {
            if (*p == units[i].suffix)
                break;
        }
        if (i == sizeof (units) / sizeof (units[0]))
            return invalid (err, s, "unknown unit (use s, m, h or d)");
        mult = units[i].seconds;
        p++;
    }
    if (*p != '\0')
        return invalid (err, s, "trailing characters after the unit");

    /* Underflow (ERANGE with a tiny result) is harmless for a duration:
     * the value is as good as 0. Overflow shows up as inf, checked below.
     */
    errno = 0;
    value = strtod (s, &end);
    if (end != numend) // e.g. a locale whose decimal point is not '.'
        return invalid (err, s, "not a number");
    value *= mult;
    if (!isfinite (value))
        return invalid (err, s, "too large (write \"inf\" for no limit)");
    if (seconds)
        *seconds = value;
    return 0;
}

int fsd_format (char *buf, size_t len, double seconds)
{
    char tmp[64];

    if (!buf || isnan (seconds) || seconds < 0) {
        errno = EINVAL;
        return -1;
    }
    if (isinf (seconds))
        snprintf (tmp, sizeof (tmp), "inf");
    else {
        const struct fsd_unit *u = &units[0];
        for (size_t i = 1; i < sizeof (units) / sizeof (units[0]); i++) {
            if (seconds >= units[i].seconds)
                u = &units[i];
        }
        /* Six significant digits read well and are within 0.001%; more are
         * used only when rounding to six would overflow on the way back
         * (values near DBL_MAX), so that every output parses again.
         */
        int prec;
        for (prec = 6; prec <= 17; prec++) {
            double back;
            snprintf (tmp, sizeof (tmp), "%.*g%c", prec, seconds / u->seconds,
                      u->suffix);
            if (fsd_parse (tmp, &back, NULL) == 0 &&
                fabs (back - seconds) <= seconds * 1e-5)
                break;
        }
        if (prec > 17) {
            errno = EOVERFLOW; // not reached for finite doubles
            return -1;
        }
    }
    if (strlen (tmp) >= len) {
        if (len > 0)
            buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    strcpy (buf, tmp);
    return 0;
}

int fsd_parse_json (const json_t *o, double *seconds, struct cairn_error *err)
{
    if (json_is_string (o)) {
        const char *s = json_string_value (o);
        if (strlen (s) != json_string_length (o))
            return errset (err, EINVAL, "invalid duration: contains NUL");
        return fsd_parse (s, seconds, err);
    }
    if (json_is_number (o)) {
        double v = json_number_value (o);
        if (!(v >= 0))
            return errset (err, EINVAL, "invalid duration %g: must be >= 0", v);
        if (seconds)
            *seconds = v;
        return 0;
    }
    return errset (err, EINVAL,
                   "invalid duration: expected a string or a number");
}
