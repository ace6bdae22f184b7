/* fuzz_jobspec.c - jobspec_decode from JSON text.
 *
 * For a jobspec that decodes, the extracted fields must be what the header
 * promises (non-empty argv of NUL-free strings, duration >= 0, ...), and
 * jobspec_create() from those fields must give a jobspec that decodes to the
 * same fields.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/jobspec.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_jobspec: %s:%d: ", __FILE__, __LINE__);     \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

static bool same_str (const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp (a, b));
}

static void check_fields (const struct jobspec *js)
{
    char **argv = jobspec_argv (js);
    const json_t *env = jobspec_environment (js);
    const char *name;
    json_t *val;

    CHECK (argv && argv[0], "empty argv");
    CHECK (jobspec_duration (js) >= 0, "duration");
    CHECK (jobspec_prolog_failures_allowed (js) >= 0, "prolog-failures");
    if (env) {
        CHECK (json_is_object (env), "environment");
        json_object_foreach ((json_t *)env, name, val)
        {
            CHECK (*name && !strchr (name, '='), "name \"%s\"", name);
            CHECK (json_is_string (val), "value of %s", name);
        }
    }
}

/* Build a jobspec from js's fields and decode it: same fields. */
static void check_create (const struct jobspec *js)
{
    struct cairn_error err = {{0}};
    json_t *o = jobspec_create (jobspec_argv (js), 1, jobspec_cwd (js),
                                jobspec_environment (js), jobspec_duration (js),
                                jobspec_prolog_failures_allowed (js));
    struct jobspec *back;
    char **a, **b;

    CHECK (o != NULL, "jobspec_create failed: errno %d", errno);
    CHECK ((back = jobspec_decode (o, &err)), "created does not decode: %s",
           err.text);
    for (a = jobspec_argv (js), b = jobspec_argv (back); *a && *b; a++, b++)
        CHECK (!strcmp (*a, *b), "argv \"%s\" != \"%s\"", *a, *b);
    CHECK (!*a && !*b, "argv lengths differ");
    CHECK (same_str (jobspec_cwd (js), jobspec_cwd (back)), "cwd");
    CHECK (jobspec_duration (js) == jobspec_duration (back), "duration");
    CHECK (jobspec_prolog_failures_allowed (js) ==
               jobspec_prolog_failures_allowed (back),
           "prolog-failures-allowed");
    CHECK (json_equal ((json_t *)jobspec_environment (js),
                       (json_t *)jobspec_environment (back)) ||
               (!jobspec_environment (js) && !jobspec_environment (back)),
           "environment");
    jobspec_destroy (back);
    json_decref (o);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    json_t *o = json_loadb ((const char *)data, size,
                            JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    struct jobspec *js;

    if (!o)
        return 0;
    if (!(js = jobspec_decode (o, &err))) {
        CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
    } else {
        CHECK (jobspec_json (js) == o, "jobspec_json");
        check_fields (js);
        check_create (js);
        jobspec_destroy (js);
    }
    json_decref (o);
    return 0;
}
