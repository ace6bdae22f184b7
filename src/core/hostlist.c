/* hostlist.c - see hostlist.h
 *
 * Hosts are stored expanded, one malloc'd string each, so hostlist_nth()
 * can hand out stable pointers. Expansion is what makes a short string
 * expensive ("n[0-999999999]"), so decode checks every run against the host
 * and byte limits *before* expanding it.
 *
 * Encode works on the last run of digits of each name ("rack1node07-ib" is
 * "rack1node" + "07" + "-ib"): names sharing prefix and suffix are grouped,
 * and a run continues only while the next number is one more and prints the
 * same way with the run's width, so that decode reproduces every name
 * byte for byte.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostlist.h"

#define TOKEN_MAX 24 // longest token quoted in a message
#define INPUT_MAX 64 // longest input quoted in a message

struct hostlist {
    char **hosts;
    size_t count;
    size_t alloc;
    size_t bytes; // sum of strlen + 1 over hosts
};

struct hostlist *hostlist_create (void)
{
    struct hostlist *hl = calloc (1, sizeof (*hl));
    if (!hl)
        errno = ENOMEM;
    return hl;
}

void hostlist_destroy (struct hostlist *hl)
{
    if (hl) {
        int saved = errno;
        for (size_t i = 0; i < hl->count; i++)
            free (hl->hosts[i]);
        free (hl->hosts);
        free (hl);
        errno = saved;
    }
}

size_t hostlist_count (const struct hostlist *hl)
{
    return hl ? hl->count : 0;
}

const char *hostlist_nth (const struct hostlist *hl, size_t n)
{
    if (!hl || n >= hl->count)
        return NULL;
    return hl->hosts[n];
}

static bool is_hostchar (char c)
{
    return c > ' ' && c <= '~' && c != ',' && c != '[' && c != ']';
}

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

static size_t hostchar_span (const char *s)
{
    size_t n = 0;
    while (is_hostchar (s[n]))
        n++;
    return n;
}

/* Append the first len bytes of host (no validation). */
static int append_n (struct hostlist *hl, const char *host, size_t len)
{
    char *copy;

    if (hl->count == hl->alloc) {
        size_t alloc = hl->alloc ? hl->alloc * 2 : 16;
        char **hosts;
        if (alloc > SIZE_MAX / sizeof (*hosts) ||
            !(hosts = realloc (hl->hosts, alloc * sizeof (*hosts)))) {
            errno = ENOMEM;
            return -1;
        }
        hl->hosts = hosts;
        hl->alloc = alloc;
    }
    if (!(copy = strndup (host, len))) {
        errno = ENOMEM;
        return -1;
    }
    hl->hosts[hl->count++] = copy;
    hl->bytes += len + 1;
    return 0;
}

int hostlist_append (struct hostlist *hl, const char *host)
{
    size_t len;

    if (!hl || !host) {
        errno = EINVAL;
        return -1;
    }
    len = hostchar_span (host);
    if (len == 0 || host[len] != '\0' || len > HOSTLIST_HOST_MAX) {
        errno = EINVAL;
        return -1;
    }
    return append_n (hl, host, len);
}

/* Decoding */

struct parser {
    const char *input;
    struct cairn_error *err;
    struct hostlist *hl;
    size_t max_hosts;
};

/* Set errno to EINVAL and err to `hostlist "INPUT": <fmt>`. Returns -1. */
static int fail (struct parser *ps, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int fail (struct parser *ps, const char *fmt, ...)
{
    char why[sizeof (ps->err->text)];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (why, sizeof (why), fmt, ap);
    va_end (ap);
    return errset (ps->err, EINVAL, "hostlist \"%.*s%s\": %s", INPUT_MAX,
                   ps->input, strlen (ps->input) > INPUT_MAX ? "..." : "", why);
}

static int fail_char (struct parser *ps, const char *p)
{
    unsigned char c = (unsigned char)*p;
    size_t pos = (size_t)(p - ps->input);

    if (c == '\0')
        return fail (ps, "unexpected end at position %zu", pos);
    if (c < ' ' || c > '~')
        return fail (ps, "unexpected character 0x%02x at position %zu", c, pos);
    return fail (ps, "unexpected character '%c' at position %zu", c, pos);
}

/* One entry being decoded: "prefix[ranges]suffix" or a plain name. */
struct entry {
    const char *prefix;
    size_t plen;
    const char *suffix;
    size_t slen;
};

static int ndigits (uint64_t v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Read a number of the bracket at *p: its value and width in characters. */
static int
parse_number (struct parser *ps, const char **p, uint64_t *value, size_t *width)
{
    size_t len = strspn (*p, "0123456789");
    uint64_t v = 0;

    for (size_t i = 0; i < len && v <= UINT32_MAX; i++)
        v = v * 10 + (uint64_t)((*p)[i] - '0');
    if (v > UINT32_MAX)
        return fail (ps, "number \"%.*s%s\" is too large",
                     len > TOKEN_MAX ? TOKEN_MAX : (int)len, *p,
                     len > TOKEN_MAX ? "..." : "");
    *p += len;
    *value = v;
    *width = len;
    return 0;
}

/* The list would exceed ps->max_hosts: EINVAL with the reason, then E2BIG
 * so that hostlist_decode_max() callers can tell this case apart. */
static int too_many (struct parser *ps)
{
    fail (ps, "too many hosts (limit %zu)", ps->max_hosts);
    errno = E2BIG;
    return -1;
}

/* Expand the run lo..hi of entry e, checking the limits first. */
static int expand_run (struct parser *ps,
                       const struct entry *e,
                       uint64_t lo,
                       uint64_t hi,
                       size_t width)
{
    size_t digits = (size_t)ndigits (hi) > width ? (size_t)ndigits (hi) : width;
    size_t hostlen = e->plen + digits + e->slen;
    uint64_t n = hi - lo + 1;
    char buf[HOSTLIST_HOST_MAX + 1];

    if (hostlen > HOSTLIST_HOST_MAX)
        return fail (ps, "host name \"%.*s...\" is longer than %d characters",
                     TOKEN_MAX, e->prefix, HOSTLIST_HOST_MAX);
    if (n > ps->max_hosts - ps->hl->count)
        return too_many (ps);
    if (n * (hostlen + 1) > HOSTLIST_MAX_BYTES - ps->hl->bytes)
        return fail (ps, "too large (limit %d bytes)", HOSTLIST_MAX_BYTES);
    for (uint64_t v = lo; v <= hi; v++) {
        int len =
            snprintf (buf, sizeof (buf), "%.*s%0*" PRIu64 "%.*s", (int)e->plen,
                      e->prefix, (int)width, v, (int)e->slen, e->suffix);
        if (append_n (ps->hl, buf, (size_t)len) < 0)
            return errprintf (ps->err, "out of memory");
    }
    return 0;
}

/* Expand the ranges between '[' at open and ']' at close. Only digits, ','
 * and '-' occur in between (checked by the caller). */
static int expand_ranges (struct parser *ps,
                          const struct entry *e,
                          const char *open,
                          const char *close)
{
    const char *p = open + 1;

    if (p == close)
        return fail (ps, "empty brackets at position %zu",
                     (size_t)(open - ps->input));
    for (;;) {
        const char *tok = p;
        int toklen = (int)strcspn (tok, ",]");
        const char *more = toklen > TOKEN_MAX ? "..." : "";
        uint64_t lo, hi;
        size_t width, hiwidth;

        if (toklen > TOKEN_MAX)
            toklen = TOKEN_MAX;
        if (*p == ',' || p == close)
            return fail (ps, "empty range at position %zu",
                         (size_t)(p - ps->input));
        if (*p == '-')
            return fail (ps, "range \"%.*s%s\" has no lower bound", toklen, tok,
                         more);
        if (parse_number (ps, &p, &lo, &width) < 0)
            return -1;
        hi = lo;
        if (*p == '-') {
            p++;
            if (!is_digit (*p)) {
                if (*p == '-')
                    return fail_char (ps, p);
                return fail (ps, "range \"%.*s%s\" has no upper bound", toklen,
                             tok, more);
            }
            if (parse_number (ps, &p, &hi, &hiwidth) < 0)
                return -1;
            if (lo > hi)
                return fail (ps, "range \"%.*s%s\" is descending", toklen, tok,
                             more);
        }
        if (*p == '-')
            return fail_char (ps, p);
        if (expand_run (ps, e, lo, hi, width) < 0)
            return -1;
        if (p == close)
            return 0;
        p++; // ','
    }
}

/* Decode the entry at *p, leaving *p on the ',' or NUL that ends it. */
static int parse_entry (struct parser *ps, const char **p)
{
    const char *start = *p;
    const char *open, *close;
    struct entry e = {.prefix = start};

    e.plen = hostchar_span (start);
    open = start + e.plen;
    if (*open != '[') {
        if (e.plen == 0 && (*open == ',' || *open == '\0'))
            return fail (ps, "empty entry at position %zu",
                         (size_t)(open - ps->input));
        if (*open != ',' && *open != '\0')
            return fail_char (ps, open);
        if (e.plen > HOSTLIST_HOST_MAX)
            return fail (ps,
                         "host name \"%.*s...\" is longer than %d characters",
                         TOKEN_MAX, start, HOSTLIST_HOST_MAX);
        if (ps->hl->count >= ps->max_hosts)
            return too_many (ps);
        if (e.plen + 1 > HOSTLIST_MAX_BYTES - ps->hl->bytes)
            return fail (ps, "too large (limit %d bytes)", HOSTLIST_MAX_BYTES);
        if (append_n (ps->hl, start, e.plen) < 0)
            return errprintf (ps->err, "out of memory");
        *p = open;
        return 0;
    }
    close = open + 1 + strspn (open + 1, "0123456789,-");
    if (*close == '\0')
        return fail (ps, "missing \"]\" for \"[\" at position %zu",
                     (size_t)(open - ps->input));
    if (*close != ']')
        return fail_char (ps, close);
    e.suffix = close + 1;
    e.slen = hostchar_span (e.suffix);
    if (e.suffix[e.slen] == '[') {
        int len = (int)strcspn (start, ",");
        return fail (ps, "entry \"%.*s%s\" has more than one bracket group",
                     len > TOKEN_MAX ? TOKEN_MAX : len, start,
                     len > TOKEN_MAX ? "..." : "");
    }
    if (e.suffix[e.slen] != ',' && e.suffix[e.slen] != '\0')
        return fail_char (ps, e.suffix + e.slen);
    if (expand_ranges (ps, &e, open, close) < 0)
        return -1;
    *p = e.suffix + e.slen;
    return 0;
}

struct hostlist *
hostlist_decode_max (const char *s, size_t max_hosts, struct cairn_error *err)
{
    struct parser ps = {.input = s, .err = err, .max_hosts = max_hosts};
    const char *p = s;

    if (!s) {
        errset (err, EINVAL, "hostlist is NULL");
        return NULL;
    }
    if (max_hosts > HOSTLIST_MAX_HOSTS)
        ps.max_hosts = HOSTLIST_MAX_HOSTS;
    if (!(ps.hl = hostlist_create ())) {
        errprintf (err, "out of memory");
        return NULL;
    }
    if (*p == '\0')
        return ps.hl;
    for (;;) {
        if (parse_entry (&ps, &p) < 0)
            goto error;
        if (*p == '\0')
            break;
        p++; // ','
    }
    return ps.hl;
error:
    hostlist_destroy (ps.hl);
    return NULL;
}

struct hostlist *hostlist_decode (const char *s, struct cairn_error *err)
{
    struct hostlist *hl = hostlist_decode_max (s, HOSTLIST_MAX_HOSTS, err);

    if (!hl && errno == E2BIG)
        errno = EINVAL; // documented: past HOSTLIST_MAX_HOSTS is just invalid
    return hl;
}

/* Encoding */

/* A host name split around its last run of digits. */
struct parts {
    const char *name;
    size_t plen;        // prefix: name[0..plen-1]
    size_t nlen;        // number: name[plen..plen+nlen-1], 0 if none
    const char *suffix; // after the number
    uint32_t value;
};

static void split (const char *name, struct parts *pt)
{
    size_t end = strlen (name);
    size_t start;
    uint64_t v = 0;

    pt->name = name;
    while (end > 0 && !is_digit (name[end - 1]))
        end--;
    start = end;
    while (start > 0 && is_digit (name[start - 1]))
        start--;
    for (size_t i = start; i < end && v <= UINT32_MAX; i++)
        v = v * 10 + (uint64_t)(name[i] - '0');
    pt->plen = start;
    pt->nlen = v <= UINT32_MAX ? end - start : 0; // too big: not a number
    pt->suffix = name + end;
    pt->value = (uint32_t)v;
}

static bool same_group (const struct parts *a, const struct parts *b)
{
    return a->nlen > 0 && b->nlen > 0 && a->plen == b->plen &&
           !strncmp (a->name, b->name, a->plen) &&
           !strcmp (a->suffix, b->suffix);
}

/* Does b continue a run of width `width` that ends with a? */
static bool
continues_run (const struct parts *a, const struct parts *b, size_t width)
{
    size_t digits = (size_t)ndigits (b->value);

    return a->value < UINT32_MAX && b->value == a->value + 1 &&
           b->nlen == (digits > width ? digits : width);
}

struct sbuf {
    char *s;
    size_t len;
    size_t alloc;
};

static int sbuf_printf (struct sbuf *sb, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int sbuf_printf (struct sbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start (ap, fmt);
        n = vsnprintf (sb->s + sb->len, sb->alloc - sb->len, fmt, ap);
        va_end (ap);
        if (n < 0)
            return -1;
        if ((size_t)n < sb->alloc - sb->len)
            break;
        size_t alloc = sb->alloc * 2 + (size_t)n;
        char *s = realloc (sb->s, alloc);
        if (!s) {
            errno = ENOMEM;
            return -1;
        }
        sb->s = s;
        sb->alloc = alloc;
    }
    sb->len += (size_t)n;
    return 0;
}

/* Append the bracket group made of hosts[i..j-1] (same prefix and suffix). */
static int encode_group (struct sbuf *sb, char **hosts, size_t i, size_t j)
{
    struct parts first, a, b;

    split (hosts[i], &first);
    if (sbuf_printf (sb, "%.*s[", (int)first.plen, first.name) < 0)
        return -1;
    for (size_t k = i; k < j;) {
        size_t m = k + 1;
        split (hosts[k], &a);
        b = a;
        while (m < j) {
            struct parts next;
            split (hosts[m], &next);
            if (!continues_run (&b, &next, a.nlen))
                break;
            b = next;
            m++;
        }
        if (sbuf_printf (sb, "%s%.*s", k > i ? "," : "", (int)a.nlen,
                         a.name + a.plen) < 0)
            return -1;
        if (m - 1 > k &&
            sbuf_printf (sb, "-%0*" PRIu32, (int)a.nlen, b.value) < 0)
            return -1;
        k = m;
    }
    return sbuf_printf (sb, "]%s", first.suffix);
}

char *hostlist_encode (const struct hostlist *hl)
{
    struct sbuf sb = {0};

    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (!(sb.s = malloc (64))) {
        errno = ENOMEM;
        return NULL;
    }
    sb.alloc = 64;
    sb.s[0] = '\0';
    for (size_t i = 0; i < hl->count;) {
        struct parts a, b;
        size_t j = i + 1;

        split (hl->hosts[i], &a);
        while (j < hl->count) {
            split (hl->hosts[j], &b);
            if (!same_group (&a, &b))
                break;
            j++;
        }
        if (i > 0 && sbuf_printf (&sb, ",") < 0)
            goto error;
        if (j - i == 1) {
            if (sbuf_printf (&sb, "%s", hl->hosts[i]) < 0)
                goto error;
        } else if (encode_group (&sb, hl->hosts, i, j) < 0)
            goto error;
        i = j;
    }
    return sb.s;
error:
    free (sb.s);
    return NULL;
}
