/* cmd_jobs_format.c - `cairn jobs -o FORMAT`, like `flux jobs -o`: text
 * with {field} placeholders (see cmd_journal.h, jfmt_create).
 *
 * Widths count characters, not bytes: an F58 id starts with "ƒ", two
 * bytes but one column.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_journal.h"

/* A piece of the format: literal text, or a field. */
struct piece {
    char *text;   /* literal (field NULL), or the field's name */
    bool field;   /* a {field} */
    bool right;   /* '>' */
    size_t width; /* pad to this many characters (0: none) */
    size_t max;   /* cut to this many characters (0: no limit) */
};

struct jfmt {
    struct piece *v;
    size_t n;
};

void jfmt_destroy (struct jfmt *f)
{
    if (f) {
        int saved = errno;
        for (size_t i = 0; i < f->n; i++)
            free (f->v[i].text);
        free (f->v);
        free (f);
        errno = saved;
    }
}

static int add (struct jfmt *f, struct piece p)
{
    struct piece *v = realloc (f->v, (f->n + 1) * sizeof (*v));
    if (!v) {
        free (p.text);
        return -1;
    }
    f->v = v;
    f->v[f->n++] = p;
    return 0;
}

/* The literal text s[0..len), with {{ and }} as single braces. */
static char *literal (const char *s, size_t len)
{
    char *t = malloc (len + 1), *q = t;
    if (!t)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        *q++ = s[i];
        if ((s[i] == '{' || s[i] == '}') && i + 1 < len && s[i + 1] == s[i])
            i++;
    }
    *q = '\0';
    return t;
}

static bool known (const char *name, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp (*keys, name))
            return true;
    return false;
}

/* Read a decimal number at *s (none: 0). -1 when it is too large. */
static long number (const char **s)
{
    long n = 0;
    for (; isdigit ((unsigned char)**s); (*s)++) {
        n = n * 10 + (**s - '0');
        if (n > 10000)
            return -1;
    }
    return n;
}

/* {NAME[:[<>]WIDTH[.MAX]]}: spec is what is between the braces. */
static int parse_field (struct jfmt *f,
                        const char *spec,
                        size_t len,
                        const char *const *keys,
                        struct cairn_error *err)
{
    struct piece p = {.field = true};
    const char *colon = memchr (spec, ':', len);
    size_t nlen = colon ? (size_t)(colon - spec) : len;

    if (!(p.text = strndup (spec, nlen)))
        return -1;
    if (nlen == 0) {
        free (p.text);
        return errset (err, EINVAL, "empty field name in '{%.*s}'", (int)len,
                       spec);
    }
    if (!known (p.text, keys)) {
        errset (err, EINVAL, "unknown field '%s'", p.text);
        free (p.text);
        return -1;
    }
    if (colon) {
        char *s = strndup (colon + 1, len - nlen - 1);
        const char *q = s;
        long w = 0, m = 0;
        if (!s) {
            free (p.text);
            return -1;
        }
        if (*q == '<' || *q == '>')
            p.right = *q++ == '>';
        w = number (&q);
        if (w >= 0 && *q == '.') {
            q++;
            if (!isdigit ((unsigned char)*q) || (m = number (&q)) <= 0)
                m = -1;
        }
        if (w < 0 || m < 0 || *q != '\0') {
            errset (err, EINVAL,
                    "field '%s': bad spec ':%s' (expected [<>]WIDTH[.MAX])",
                    p.text, s);
            free (s);
            free (p.text);
            return -1;
        }
        free (s);
        p.width = (size_t)w;
        p.max = (size_t)m;
    }
    return add (f, p);
}

struct jfmt *
jfmt_create (const char *text, const char *const *keys, struct cairn_error *err)
{
    struct jfmt *f = calloc (1, sizeof (*f));
    const char *s = text, *lit = text;

    if (!f)
        goto nomem;
    while (*s) {
        if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
            s += 2;
            continue;
        }
        if (*s == '}') {
            errset (err, EINVAL, "unmatched '}' (write '}}' for a brace)");
            goto error;
        }
        if (*s != '{') {
            s++;
            continue;
        }
        const char *end = strpbrk (s + 1, "{}");
        if (!end || *end != '}') {
            errset (err, EINVAL, "unmatched '{' (write '{{' for a brace)");
            goto error;
        }
        if (s > lit) {
            struct piece p = {.text = literal (lit, (size_t)(s - lit))};
            if (!p.text || add (f, p) < 0)
                goto nomem;
        }
        if (parse_field (f, s + 1, (size_t)(end - s - 1), keys, err) < 0) {
            if (errno == ENOMEM)
                goto nomem;
            goto error;
        }
        s = lit = end + 1;
    }
    if (s > lit) {
        struct piece p = {.text = literal (lit, (size_t)(s - lit))};
        if (!p.text || add (f, p) < 0)
            goto nomem;
    }
    return f;
nomem:
    errset (err, ENOMEM, "out of memory");
error:
    jfmt_destroy (f); /* keeps errno */
    return NULL;
}

/* Print s as piece p says: cut to p->max, padded to p->width. */
static void put (const struct piece *p, const char *s, FILE *out)
{
    size_t n = strlen (s), w;

    if (p->max > 0 && jcli_width (s) > p->max)
        n = jcli_prefix (s, p->max);
    w = p->width;
    size_t cw = 0; /* the characters of s[0..n) */
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            cw++;
    size_t pad = w > cw ? w - cw : 0;
    if (p->right)
        fprintf (out, "%*s", (int)pad, "");
    fwrite (s, 1, n, out);
    if (!p->right)
        fprintf (out, "%*s", (int)pad, "");
}

void jfmt_print_header (const struct jfmt *f, FILE *out)
{
    for (size_t i = 0; i < f->n; i++) {
        const struct piece *p = &f->v[i];
        if (!p->field) {
            fputs (p->text, out);
            continue;
        }
        char name[64];
        snprintf (name, sizeof (name), "%s", p->text);
        for (char *c = name; *c; c++)
            *c = (char)toupper ((unsigned char)*c);
        put (p, name, out);
    }
    fputc ('\n', out);
}

/* A real as people write it: up to 6 decimals, no trailing zeros. */
static void real_text (double d, char *buf, size_t len)
{
    snprintf (buf, len, "%.6f", d);
    char *dot = strchr (buf, '.');
    if (dot) {
        char *e = buf + strlen (buf) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
}

void jfmt_print (const struct jfmt *f, const json_t *o, FILE *out)
{
    for (size_t i = 0; i < f->n; i++) {
        const struct piece *p = &f->v[i];
        char buf[64];
        if (!p->field) {
            fputs (p->text, out);
            continue;
        }
        json_t *v = json_object_get (o, p->text);
        const char *s = buf;
        if (json_is_string (v))
            s = json_string_value (v);
        else if (json_is_integer (v))
            snprintf (buf, sizeof (buf), "%lld",
                      (long long)json_integer_value (v));
        else if (json_is_real (v))
            real_text (json_real_value (v), buf, sizeof (buf));
        else if (json_is_boolean (v))
            s = json_is_true (v) ? "true" : "false";
        else
            s = "";
        put (p, s, out);
    }
    fputc ('\n', out);
}
