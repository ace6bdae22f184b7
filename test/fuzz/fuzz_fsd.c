/* fuzz_fsd.c - fsd_parse (Flux Standard Duration) and the format round trip.
 *
 * A string that parses gives a value >= 0 (or inf); fsd_format of it must
 * parse again to within 0.001%, and the JSON form (a string or a number)
 * must agree with the string form.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/fsd.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_fsd: %s:%d: ", __FILE__, __LINE__);         \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    char *s = malloc (size + 1);
    double v = -1, back = -1, jv = -1;
    char buf[64];
    json_t *o;

    if (!s)
        return 0;
    memcpy (s, data, size);
    s[size] = '\0';
    if (fsd_parse (s, &v, &err) < 0) {
        CHECK (errno == EINVAL, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
        CHECK (v == -1, "*seconds written on failure");
        goto done;
    }
    CHECK (v >= 0 && !isnan (v), "\"%s\" gives %g", s, v);
    CHECK (fsd_format (buf, sizeof (buf), v) == 0, "format %g", v);
    CHECK (fsd_parse (buf, &back, &err) == 0, "\"%s\" (from \"%s\"): %s", buf,
           s, err.text);
    if (isinf (v))
        CHECK (isinf (back), "inf");
    else
        CHECK (fabs (back - v) <= v * 1e-5,
               "\"%s\" -> %.17g -> \"%s\" -> %.17g", s, v, buf, back);
    /* the same string in JSON, and the value as a JSON number */
    if (strlen (s) == size && (o = json_string (s))) {
        CHECK (fsd_parse_json (o, &jv, &err) == 0 && jv == v, "json string");
        json_decref (o);
    }
    if (isfinite (v) && (o = json_real (v))) {
        CHECK (fsd_parse_json (o, &jv, &err) == 0 && jv == v, "json number");
        json_decref (o);
    }
done:
    free (s);
    return 0;
}
