/* eventlog.c - RFC 18 eventlog entries.
 *
 * The journal stores entries as lines and replays them to rebuild state, so
 * a line is either exactly an entry or an error: unknown top-level keys and
 * duplicate keys are refused rather than silently dropped, because replay
 * must see the same entry that was written.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"

/* Called on every entry cairnd journals, folds or answers with, several
 * times each: the unknown-key check counts the keys instead of comparing
 * every key's name, and names the culprit only on failure. */
static int validate (const json_t *entry, struct cairn_error *err)
{
    const char *key;
    json_t *val;
    json_t *ts, *name, *ctx;

    if (!json_is_object (entry))
        return errset (err, EINVAL, "eventlog entry: not an object");
    ts = json_object_get (entry, "timestamp");
    name = json_object_get (entry, "name");
    ctx = json_object_get (entry, "context");
    if (json_object_size (entry) != (size_t)(!!ts + !!name + !!ctx)) {
        json_object_foreach ((json_t *)entry, key, val)
        {
            if (strcmp (key, "timestamp") != 0 && strcmp (key, "name") != 0 &&
                strcmp (key, "context") != 0)
                return errset (err, EINVAL,
                               "eventlog entry: unknown key \"%.64s\"", key);
        }
    }
    if (!ts)
        return errset (err, EINVAL, "eventlog entry: timestamp: missing");
    if (!json_is_number (ts))
        return errset (err, EINVAL, "eventlog entry: timestamp: not a number");
    if (!(json_number_value (ts) > 0) || !isfinite (json_number_value (ts)))
        return errset (err, EINVAL, "eventlog entry: timestamp: must be > 0");
    if (!name)
        return errset (err, EINVAL, "eventlog entry: name: missing");
    if (!json_is_string (name))
        return errset (err, EINVAL, "eventlog entry: name: not a string");
    if (json_string_length (name) == 0)
        return errset (err, EINVAL, "eventlog entry: name: empty");
    if (strlen (json_string_value (name)) != json_string_length (name))
        return errset (err, EINVAL, "eventlog entry: name: contains NUL");
    if (ctx && !json_is_object (ctx))
        return errset (err, EINVAL, "eventlog entry: context: not an object");
    return 0;
}

json_t *
eventlog_entry_create (double timestamp, const char *name, json_t *context_new)
{
    json_t *entry = NULL;
    json_t *jname = NULL;
    int rc;

    if (!(timestamp > 0) || !isfinite (timestamp) || !name || *name == '\0' ||
        (context_new && !json_is_object (context_new))) {
        errno = EINVAL;
        goto error;
    }
    if (!(jname = json_string (name))) { // invalid UTF-8
        errno = EINVAL;
        goto error;
    }
    if (!(entry = json_object ()) ||
        json_object_set_new (entry, "timestamp", json_real (timestamp)) < 0) {
        errno = ENOMEM;
        goto error;
    }
    /* json_object_set_new() steals its value even when it fails. */
    rc = json_object_set_new (entry, "name", jname);
    jname = NULL;
    if (rc < 0) {
        errno = ENOMEM;
        goto error;
    }
    if (context_new) {
        rc = json_object_set_new (entry, "context", context_new);
        context_new = NULL;
        if (rc < 0) {
            errno = ENOMEM;
            goto error;
        }
    }
    return entry;
error:
    json_decref (jname);
    json_decref (context_new);
    json_decref (entry);
    return NULL;
}

json_t *
eventlog_entry_pack (double timestamp, const char *name, const char *fmt, ...)
{
    json_t *context = NULL;

    if (fmt) {
        va_list ap;
        va_start (ap, fmt);
        context = json_vpack_ex (NULL, 0, fmt, ap);
        va_end (ap);
        if (!context) {
            errno = EINVAL;
            return NULL;
        }
    }
    return eventlog_entry_create (timestamp, name, context);
}

/* The line is built in one growing buffer (json_dump_callback appends the
 * context to it): no asprintf, one malloc in the common case. */
struct linebuf {
    char *s;
    size_t len, cap;
};

static int line_add (const char *buf, size_t size, void *arg)
{
    struct linebuf *b = arg;
    if (b->len + size + 1 > b->cap) {
        size_t cap = b->cap * 2;
        while (cap < b->len + size + 1)
            cap *= 2;
        char *s = realloc (b->s, cap);
        if (!s)
            return -1;
        b->s = s;
        b->cap = cap;
    }
    memcpy (b->s + b->len, buf, size);
    b->len += size;
    b->s[b->len] = '\0';
    return 0;
}

/* A name of these characters needs no escaping: every event cairn names,
 * and most an outside service posts. */
static bool name_plain (const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
            return false;
    return true;
}

/* What snprintf "%.6f" writes for t, without it (glibc's exact decimal
 * conversion is a good part of cairnd's loop per event), for
 * 2^13 <= t < 2^53: every epoch time. There t's fraction has at most 39
 * bits, so frac * 10^6 = frac * 5^6 * 2^6 is exact in a double, and
 * nearbyint rounds it as printf does (to nearest, ties to even). Returns
 * false for any other t. */
static bool timestamp_fast (double t, char *buf, size_t size)
{
    char digits[24];
    double ip;
    int n = 0;

    if (!(t >= 8192.0 && t < 9007199254740992.0) || size < 32)
        return false;
    double us = nearbyint (modf (t, &ip) * 1e6);
    unsigned long long sec = (unsigned long long)ip;
    unsigned long frac = (unsigned long)us;
    if (frac >= 1000000) { /* .9999995 and up: the carry */
        frac -= 1000000;
        sec++;
    }
    do
        digits[n++] = (char)('0' + sec % 10);
    while ((sec /= 10) > 0);
    for (int i = 0; i < n; i++)
        buf[i] = digits[n - 1 - i];
    buf[n] = '.';
    for (int i = 6; i >= 1; i--, frac /= 10)
        buf[n + i] = (char)('0' + frac % 10);
    buf[n + 7] = '\0';
    return true;
}

/* "%.6f" keeps microseconds and reads well; a timestamp so small that it
 * would print as 0 (and then fail to decode) is written in full instead.
 */
static void timestamp_encode (double t, char *buf, size_t size)
{
    if (timestamp_fast (t, buf, size))
        return;
    snprintf (buf, size, "%.6f", t);
    if (strtod (buf, NULL) == 0)
        snprintf (buf, size, "%.17g", t);
}

char *eventlog_entry_encode (const json_t *entry)
{
    /* %.6f of a double: up to 309 digits before the point */
    char ts[400];
    struct linebuf b = {.cap = 256};
    json_t *name, *o;

    if (validate (entry, NULL) < 0)
        return NULL;
    if (!(b.s = malloc (b.cap)))
        goto nomem;
    timestamp_encode (json_number_value (json_object_get (entry, "timestamp")),
                      ts, sizeof (ts));
    name = json_object_get (entry, "name");
    if (line_add ("{\"timestamp\":", 13, &b) < 0 ||
        line_add (ts, strlen (ts), &b) < 0 ||
        line_add (",\"name\":", 8, &b) < 0)
        goto nomem;
    if (name_plain (json_string_value (name))) {
        if (line_add ("\"", 1, &b) < 0 ||
            line_add (json_string_value (name), json_string_length (name), &b) <
                0 ||
            line_add ("\"", 1, &b) < 0)
            goto nomem;
    } else if (json_dump_callback (name, line_add, &b, JSON_ENCODE_ANY) < 0)
        goto nomem;
    if ((o = json_object_get (entry, "context")) &&
        (line_add (",\"context\":", 11, &b) < 0 ||
         json_dump_callback (o, line_add, &b,
                             JSON_COMPACT | JSON_PRESERVE_ORDER) < 0))
        goto nomem;
    if (line_add ("}", 1, &b) < 0)
        goto nomem;
    return b.s;
nomem:
    free (b.s);
    errno = ENOMEM;
    return NULL;
}

json_t *
eventlog_entry_decode (const char *line, size_t len, struct cairn_error *err)
{
    json_error_t jerr;
    json_t *entry;

    if (!line) {
        errset (err, EINVAL, "eventlog entry: (null)");
        return NULL;
    }
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (memchr (line, '\n', len)) {
        errset (err, EINVAL, "eventlog entry: more than one line");
        return NULL;
    }
    if (!(entry = json_loadb (line, len, JSON_REJECT_DUPLICATES, &jerr))) {
        errset (err, EINVAL, "eventlog entry: %s (at byte %d)", jerr.text,
                jerr.position);
        return NULL;
    }
    if (validate (entry, err) < 0) {
        json_decref (entry);
        return NULL;
    }
    return entry;
}

void eventlog_entry_fields (const json_t *entry,
                            double *timestamp,
                            const char **name,
                            json_t **context)
{
    if (timestamp)
        *timestamp = json_number_value (json_object_get (entry, "timestamp"));
    if (name)
        *name = json_string_value (json_object_get (entry, "name"));
    if (context) {
        json_t *o = json_object_get (entry, "context");
        *context = json_is_object (o) ? o : NULL;
    }
}

int eventlog_entry_parse (const json_t *entry,
                          double *timestamp,
                          const char **name,
                          json_t **context)
{
    if (validate (entry, NULL) < 0)
        return -1;
    if (timestamp)
        *timestamp = json_number_value (json_object_get (entry, "timestamp"));
    if (name)
        *name = json_string_value (json_object_get (entry, "name"));
    if (context)
        *context = json_object_get (entry, "context");
    return 0;
}
