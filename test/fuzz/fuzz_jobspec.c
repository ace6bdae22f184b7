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
    char *const *env = jobspec_env (js);

    CHECK (argv && argv[0], "empty argv");
    CHECK (jobspec_duration (js) >= 0, "duration");
    const char *client = jobspec_client (js);
    CHECK (!client || (client[0] && strlen (client) <= JOBSPEC_CLIENT_MAX),
           "client");
    CHECK (jobspec_prolog_failures_allowed (js) >= 0, "prolog-failures");
    for (; env && *env; env++) {
        const char *eq = strchr (*env, '=');
        CHECK (eq && eq != *env, "variable \"%s\"", *env);
    }
}

/* The environment array as a JSON object, or NULL when absent. */
static json_t *env_object (const struct jobspec *js)
{
    char *const *env = jobspec_env (js);
    json_t *o;

    if (!env)
        return NULL;
    CHECK ((o = json_object ()), "out of memory");
    for (; *env; env++) {
        const char *eq = strchr (*env, '=');
        CHECK (json_object_setn_new (o, *env, eq - *env,
                                     json_string (eq + 1)) == 0,
               "variable \"%s\"", *env);
    }
    return o;
}

/* Build a jobspec from js's fields and decode it: same fields. */
static void check_create (const struct jobspec *js)
{
    struct cairn_error err = {{0}};
    json_t *env = env_object (js);
    json_t *o = jobspec_create (jobspec_argv (js), 1, jobspec_cwd (js), env,
                                jobspec_duration (js),
                                jobspec_prolog_failures_allowed (js));
    json_t *env_back;
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
    env_back = env_object (back);
    CHECK (json_equal (env, env_back) || (!env && !env_back), "environment");
    jobspec_destroy (back);
    json_decref (env_back);
    json_decref (env);
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
        CHECK (o->refcount == 1, "jobspec keeps a reference");
        check_fields (js);
        check_create (js);
        jobspec_destroy (js);
    }
    json_decref (o);
    return 0;
}
