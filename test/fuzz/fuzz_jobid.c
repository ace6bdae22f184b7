/* fuzz_jobid.c - jobid_parse (decimal and F58) and the encode round trip.
 *
 * An id that parses must encode in both F58 forms to strings that parse
 * back to it; decimal input must be exactly the digits of the id (save
 * leading zeros).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobid.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_jobid: %s:%d: ", __FILE__, __LINE__);       \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

static void round_trip (uint64_t id)
{
    char buf[JOBID_STRLEN];
    char small[4];
    uint64_t back;

    CHECK (jobid_encode_f58 (id, buf, sizeof (buf)) == 0, "encode");
    CHECK (jobid_parse (buf, &back, NULL) == 0 && back == id, "\"%s\"", buf);
    CHECK (jobid_encode_f58_ascii (id, buf, sizeof (buf)) == 0, "encode");
    CHECK (jobid_parse (buf, &back, NULL) == 0 && back == id, "\"%s\"", buf);
    if (strlen (buf) >= sizeof (small))
        CHECK (jobid_encode_f58_ascii (id, small, sizeof (small)) < 0 &&
                   errno == EOVERFLOW && small[0] == '\0',
               "small buffer");
    snprintf (buf, sizeof (buf), "%" PRIu64, id);
    CHECK (jobid_parse (buf, &back, NULL) == 0 && back == id, "\"%s\"", buf);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    char *s = malloc (size + 1);
    uint64_t id = 0;

    if (!s)
        return 0;
    memcpy (s, data, size);
    s[size] = '\0';
    if (jobid_parse (s, &id, &err) < 0) {
        CHECK (errno == EINVAL, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
    } else {
        if (s[0] >= '0' && s[0] <= '9') {
            const char *p = s;
            char buf[JOBID_STRLEN];
            while (p[0] == '0' && p[1] != '\0')
                p++;
            snprintf (buf, sizeof (buf), "%" PRIu64, id);
            CHECK (!strcmp (p, buf), "\"%s\" parses to %s", s, buf);
        }
        round_trip (id);
    }
    /* any 8 bytes are an id: encode them */
    if (size >= sizeof (id)) {
        memcpy (&id, data, sizeof (id));
        round_trip (id);
    }
    free (s);
    return 0;
}
