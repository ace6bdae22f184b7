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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"

static int validate (const json_t *entry, struct cairn_error *err)
{
    const char *key;
    json_t *val;
    json_t *o;

    if (!json_is_object (entry))
        return errset (err, EINVAL, "eventlog entry: not an object");
    json_object_foreach ((json_t *)entry, key, val)
    {
        if (strcmp (key, "timestamp") != 0 && strcmp (key, "name") != 0 &&
            strcmp (key, "context") != 0)
            return errset (err, EINVAL, "eventlog entry: unknown key \"%.64s\"",
                           key);
    }
    if (!(o = json_object_get (entry, "timestamp")))
        return errset (err, EINVAL, "eventlog entry: timestamp: missing");
    if (!json_is_number (o))
        return errset (err, EINVAL, "eventlog entry: timestamp: not a number");
    if (!(json_number_value (o) > 0) || !isfinite (json_number_value (o)))
        return errset (err, EINVAL, "eventlog entry: timestamp: must be > 0");
    if (!(o = json_object_get (entry, "name")))
        return errset (err, EINVAL, "eventlog entry: name: missing");
    if (!json_is_string (o))
        return errset (err, EINVAL, "eventlog entry: name: not a string");
    if (json_string_length (o) == 0)
        return errset (err, EINVAL, "eventlog entry: name: empty");
    if (strlen (json_string_value (o)) != json_string_length (o))
        return errset (err, EINVAL, "eventlog entry: name: contains NUL");
    if ((o = json_object_get (entry, "context")) && !json_is_object (o))
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

/* "%.6f" keeps microseconds and reads well; a timestamp so small that it
 * would print as 0 (and then fail to decode) is written in full instead.
 */
static char *timestamp_encode (double t)
{
    char *s = NULL;

    if (asprintf (&s, "%.6f", t) < 0)
        return NULL;
    if (strtod (s, NULL) == 0) {
        free (s);
        if (asprintf (&s, "%.17g", t) < 0)
            return NULL;
    }
    return s;
}

char *eventlog_entry_encode (const json_t *entry)
{
    char *ts = NULL;
    char *name = NULL;
    char *context = NULL;
    char *line = NULL;
    json_t *o;
    int rc;

    if (validate (entry, NULL) < 0)
        return NULL;
    if (!(ts = timestamp_encode (
              json_number_value (json_object_get (entry, "timestamp")))) ||
        !(name = json_dumps (json_object_get (entry, "name"), JSON_ENCODE_ANY)))
        goto nomem;
    if ((o = json_object_get (entry, "context")) &&
        !(context = json_dumps (o, JSON_COMPACT | JSON_PRESERVE_ORDER)))
        goto nomem;
    if (context)
        rc = asprintf (&line, "{\"timestamp\":%s,\"name\":%s,\"context\":%s}",
                       ts, name, context);
    else
        rc = asprintf (&line, "{\"timestamp\":%s,\"name\":%s}", ts, name);
    if (rc < 0) {
        line = NULL;
        goto nomem;
    }
    free (ts);
    free (name);
    free (context);
    return line;
nomem:
    free (ts);
    free (name);
    free (context);
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
