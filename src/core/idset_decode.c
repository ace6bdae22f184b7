/* idset_decode.c - strict RFC 22 parser, see idset.h
 *
 * Idsets arrive from clients and from the journal; a lenient parser would
 * let two spellings of one set (or a typo) through, so everything outside
 * the canonical grammar is refused:
 *
 *   idset := "" | list | "[" "]" | "[" list "]"
 *   list  := elem ("," elem)*
 *   elem  := id | id "-" id            (first id < second id)
 *   id    := "0" | [1-9][0-9]*         (<= IDSET_MAX_ID)
 *
 * with elements in ascending order and not overlapping. Error messages quote
 * the input and the offending token, so a user can find the mistake in a
 * long rank list.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/idset.h"

/* Longest token / input quoted in a message; longer ones end with "...". */
#define TOKEN_MAX 24
#define INPUT_MAX 64

struct parser {
    const char *input;
    const char *p; // next character to read
    struct cairn_error *err;
};

struct elem {
    const char *text; // start of the element in the input
    int len;          // its length, clipped to TOKEN_MAX
    const char *more; // "..." if clipped, else ""
    uint32_t lo;
    uint32_t hi;
};

/* Set errno to EINVAL and err to `idset "INPUT": <fmt>`. Returns -1. */
static int fail (struct parser *ps, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int fail (struct parser *ps, const char *fmt, ...)
{
    char why[sizeof (ps->err->text)];
    size_t len = strlen (ps->input);
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (why, sizeof (why), fmt, ap);
    va_end (ap);
    return errset (ps->err, EINVAL, "idset \"%.*s%s\": %s", INPUT_MAX,
                   ps->input, len > INPUT_MAX ? "..." : "", why);
}

static size_t pos (const struct parser *ps, const char *p)
{
    return (size_t)(p - ps->input);
}

static int fail_char (struct parser *ps, const char *p)
{
    unsigned char c = (unsigned char)*p;
    if (c == '\0')
        return fail (ps, "unexpected end at position %zu", pos (ps, p));
    if (c < 0x20 || c > 0x7e)
        return fail (ps, "unexpected character 0x%02x at position %zu", c,
                     pos (ps, p));
    return fail (ps, "unexpected character '%c' at position %zu", c,
                 pos (ps, p));
}

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

/* Read one id at ps->p. */
static int parse_id (struct parser *ps, uint32_t *id)
{
    const char *start = ps->p;
    size_t len = strspn (start, "0123456789");
    int qlen = len > TOKEN_MAX ? TOKEN_MAX : (int)len;
    const char *more = len > TOKEN_MAX ? "..." : "";
    uint64_t value = 0;

    if (len == 0)
        return fail_char (ps, start);
    if (len > 1 && start[0] == '0')
        return fail (ps, "id \"%.*s%s\" has a leading zero", qlen, start, more);
    for (size_t i = 0; i < len; i++) {
        value = value * 10 + (uint64_t)(start[i] - '0');
        if (value > IDSET_MAX_ID)
            return fail (ps, "id \"%.*s%s\" is larger than %lu", qlen, start,
                         more, (unsigned long)IDSET_MAX_ID);
    }
    ps->p += len;
    *id = (uint32_t)value;
    return 0;
}

/* Read "id" or "id-id" at ps->p into e. */
static int parse_elem (struct parser *ps, struct elem *e)
{
    size_t len = strcspn (ps->p, ",]");

    e->text = ps->p;
    e->len = len > TOKEN_MAX ? TOKEN_MAX : (int)len;
    e->more = len > TOKEN_MAX ? "..." : "";

    if (*ps->p == ',' || *ps->p == '\0')
        return fail (ps, "empty entry at position %zu", pos (ps, ps->p));
    if (*ps->p == '-')
        return fail (ps, "range at \"%.*s%s\" has no lower bound", e->len,
                     e->text, e->more);
    if (parse_id (ps, &e->lo) < 0)
        return -1;
    e->hi = e->lo;
    if (*ps->p != '-')
        return 0;
    ps->p++;
    if (!is_digit (*ps->p)) {
        if (*ps->p == ',' || *ps->p == ']' || *ps->p == '\0')
            return fail (ps, "range at \"%.*s%s\" has no upper bound", e->len,
                         e->text, e->more);
        return fail_char (ps, ps->p);
    }
    if (parse_id (ps, &e->hi) < 0)
        return -1;
    if (e->lo > e->hi)
        return fail (ps, "range \"%.*s%s\" is descending", e->len, e->text,
                     e->more);
    if (e->lo == e->hi)
        return fail (ps, "range \"%.*s%s\" must be written \"%lu\"", e->len,
                     e->text, e->more, (unsigned long)e->lo);
    return 0;
}

/* Elements must be ascending and disjoint: say which rule e breaks. */
static int
check_order (struct parser *ps, const struct elem *prev, const struct elem *e)
{
    if (e->lo > prev->hi)
        return 0;
    if (e->lo < prev->lo)
        return fail (
            ps, "\"%.*s%s\" is not in ascending order (after \"%.*s%s\")",
            e->len, e->text, e->more, prev->len, prev->text, prev->more);
    if (e->lo == prev->lo && e->hi == prev->hi)
        return fail (ps, "\"%.*s%s\" is a duplicate", e->len, e->text, e->more);
    return fail (ps, "\"%.*s%s\" overlaps \"%.*s%s\"", e->len, e->text, e->more,
                 prev->len, prev->text, prev->more);
}

static int parse (struct parser *ps, struct idset *s)
{
    bool bracket = false;
    struct elem prev, e;

    if (*ps->p == '[') {
        bracket = true;
        ps->p++;
        if (*ps->p == '\0')
            return fail (ps, "missing closing \"]\"");
        if (!strcmp (ps->p, "]"))
            return 0;
    } else if (*ps->p == '\0')
        return 0;

    for (bool first = true;; first = false) {
        if (parse_elem (ps, &e) < 0)
            return -1;
        if (!first && check_order (ps, &prev, &e) < 0)
            return -1;
        if (idset_range_set (s, e.lo, e.hi) < 0)
            return errprintf (ps->err, "out of memory");
        prev = e;

        if (*ps->p == ',') {
            ps->p++;
            if (*ps->p == ']')
                return fail (ps, "empty entry at position %zu",
                             pos (ps, ps->p));
            continue;
        }
        if (*ps->p == '\0') {
            if (bracket)
                return fail (ps, "missing closing \"]\"");
            return 0;
        }
        if (*ps->p == ']' && bracket) {
            ps->p++;
            if (*ps->p != '\0')
                return fail_char (ps, ps->p);
            return 0;
        }
        return fail_char (ps, ps->p);
    }
}

struct idset *idset_decode (const char *str, struct cairn_error *err)
{
    struct parser ps = {.input = str, .p = str, .err = err};
    struct idset *s;

    if (!str) {
        errset (err, EINVAL, "idset is NULL");
        return NULL;
    }
    if (!(s = idset_create ())) {
        errprintf (err, "out of memory");
        return NULL;
    }
    if (parse (&ps, s) < 0)
        goto error;
    return s;
error:
    idset_destroy (s);
    return NULL;
}
