/* fuzz_signame.c - signame_parse and the name round trip.
 *
 * A signal that parses must have a name, and the name must parse back to
 * the same number, also in JSON (as a string and as an integer).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/signame.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_signame: %s:%d: ", __FILE__, __LINE__);     \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    char *s = malloc (size + 1);
    int signum = -1, back = -1;
    const char *name;
    json_t *o;

    if (!s)
        return 0;
    memcpy (s, data, size);
    s[size] = '\0';
    if (signame_parse (s, &signum, &err) < 0) {
        CHECK (errno == EINVAL, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
        CHECK (signum == -1, "*signum written on failure");
        goto done;
    }
    CHECK (signum >= 1 && signum <= SIGRTMAX, "\"%s\" gives %d", s, signum);
    CHECK ((name = signame_str (signum)), "%d has no name", signum);
    CHECK (signame_parse (name, &back, NULL) == 0 && back == signum,
           "\"%s\" -> %d -> \"%s\" -> %d", s, signum, name, back);
    CHECK ((o = json_integer (signum)), "json");
    CHECK (signame_parse_json (o, &back, NULL) == 0 && back == signum, "int");
    json_decref (o);
    CHECK ((o = json_string (name)), "json");
    CHECK (signame_parse_json (o, &back, NULL) == 0 && back == signum, "str");
    json_decref (o);
done:
    free (s);
    return 0;
}
