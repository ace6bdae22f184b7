/* jobid.c - decimal and F58 job ids.
 *
 * Ids arrive from people and from Flux's perilog environment, so parsing is
 * strict: a string that is not exactly one of the two forms is an error,
 * rather than a prefix of it being taken as an id (strtoull would read
 * "12abc" as 12 and "-1" as 2^64-1).
 */
#include <errno.h>
#include <string.h>

#include "core/jobid.h"

#define QUOTE_MAX 64

static const char f58_alphabet[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

static const char f58_prefix_utf8[] = "\xc6\x92"; // U+0192 "ƒ"

/* Enough for 2^64-1 in base 58 (11 digits), with room to spare. */
#define F58_DIGITS_MAX 16

static int encode (uint64_t id, const char *prefix, char *buf, size_t len)
{
    char digits[F58_DIGITS_MAX];
    size_t n = 0;
    size_t plen = strlen (prefix);

    if (!buf) {
        errno = EINVAL;
        return -1;
    }
    do {
        digits[n++] = f58_alphabet[id % 58];
        id /= 58;
    } while (id > 0);
    if (plen + n + 1 > len) {
        if (len > 0)
            buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (buf, prefix, plen);
    for (size_t i = 0; i < n; i++)
        buf[plen + i] = digits[n - 1 - i];
    buf[plen + n] = '\0';
    return 0;
}

int jobid_encode_f58 (uint64_t id, char *buf, size_t len)
{
    return encode (id, f58_prefix_utf8, buf, len);
}

int jobid_encode_f58_ascii (uint64_t id, char *buf, size_t len)
{
    return encode (id, "f", buf, len);
}

static int invalid (struct cairn_error *err, const char *s, const char *why)
{
    size_t n = strlen (s);
    return errset (err, EINVAL, "invalid job id \"%.*s%s\": %s", QUOTE_MAX, s,
                   n > QUOTE_MAX ? "..." : "", why);
}

/* Accumulate digits of `base` into *out, refusing to wrap. */
static int accumulate (uint64_t *out, unsigned base, unsigned digit)
{
    if (*out > (UINT64_MAX - digit) / base)
        return -1;
    *out = *out * base + digit;
    return 0;
}

static int parse_f58 (const char *s,
                      const char *digits,
                      uint64_t *id,
                      struct cairn_error *err)
{
    uint64_t v = 0;

    if (*digits == '\0')
        return invalid (err, s, "no digits after the F58 prefix");
    for (const char *p = digits; *p; p++) {
        const char *d = strchr (f58_alphabet, *p); // *p is never NUL here
        if (!d)
            return invalid (err, s, "not a base58 digit (no 0, O, I or l)");
        if (accumulate (&v, 58, (unsigned)(d - f58_alphabet)) < 0)
            return invalid (err, s, "larger than 2^64-1");
    }
    if (id)
        *id = v;
    return 0;
}

int jobid_parse (const char *s, uint64_t *id, struct cairn_error *err)
{
    uint64_t v = 0;

    if (!s)
        return errset (err, EINVAL, "invalid job id: (null)");
    if (*s == '\0')
        return errset (err, EINVAL, "invalid job id \"\": empty");
    if (!strncmp (s, f58_prefix_utf8, strlen (f58_prefix_utf8)))
        return parse_f58 (s, s + strlen (f58_prefix_utf8), id, err);
    if (*s == 'f')
        return parse_f58 (s, s + 1, id, err);
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return invalid (err, s, "expected decimal digits or F58");
        if (accumulate (&v, 10, (unsigned)(*p - '0')) < 0)
            return invalid (err, s, "larger than 2^64-1");
    }
    if (id)
        *id = v;
    return 0;
}
