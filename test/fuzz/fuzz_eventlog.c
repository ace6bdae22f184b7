/* fuzz_eventlog.c - eventlog_entry_decode (RFC 18) and the encode round trip.
 *
 * An entry that decodes must encode to one line that decodes to the same
 * entry: same name, same context, and the timestamp within the microsecond
 * the encoding keeps (eventlog.h). Encoding is then stable: a second round
 * gives the same line byte for byte.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/eventlog.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_eventlog: %s:%d: ", __FILE__, __LINE__);    \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

static json_t *decode (const char *line, size_t len)
{
    struct cairn_error err = {{0}};
    json_t *e = eventlog_entry_decode (line, len, &err);

    if (!e) {
        CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
    }
    return e;
}

static void check_same (const json_t *a, const json_t *b, const char *line)
{
    double ta, tb;
    const char *na, *nb;
    json_t *ca, *cb;

    CHECK (eventlog_entry_parse (a, &ta, &na, &ca) == 0, "parse a");
    CHECK (eventlog_entry_parse (b, &tb, &nb, &cb) == 0, "parse b");
    CHECK (!strcmp (na, nb), "name differs after \"%s\"", line);
    CHECK ((!ca && !cb) || json_equal (ca, cb), "context differs after %s",
           line);
    CHECK (tb > 0 && isfinite (tb), "timestamp %g", tb);
    CHECK (fabs (ta - tb) <= 5e-7 + fabs (ta) * 1e-15,
           "timestamp %.17g became %.17g in %s", ta, tb, line);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *entry, *back, *again;
    char *line, *line2;
    json_t *ctx;
    double t;
    const char *name;

    if (!(entry = decode ((const char *)data, size)))
        return 0;
    CHECK (eventlog_entry_parse (entry, &t, &name, &ctx) == 0, "parse");
    CHECK ((line = eventlog_entry_encode (entry)), "encode failed");
    CHECK (!strchr (line, '\n'), "newline in %s", line);
    CHECK ((back = decode (line, strlen (line))), "%s does not decode", line);
    check_same (entry, back, line);
    CHECK ((line2 = eventlog_entry_encode (back)), "encode failed");
    CHECK ((again = decode (line2, strlen (line2))), "decode");
    CHECK (!strcmp (line, line2), "not stable: %s then %s", line, line2);
    free (line2);
    json_decref (again);

    /* the same entry built with eventlog_entry_create */
    json_decref (back);
    back = eventlog_entry_create (t, name, ctx ? json_deep_copy (ctx) : NULL);
    CHECK (back != NULL, "create failed: errno %d", errno);
    if (json_is_real (json_object_get (entry, "timestamp")))
        CHECK (json_equal (back, entry), "create gives another entry");
    json_decref (back);
    free (line);
    json_decref (entry);
    return 0;
}
