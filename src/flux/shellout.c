/* shellout.c - the job shells' output into exec.eventlog (shellout.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flux/shellout.h"

struct shellout {
    char *component;
    json_t *ends; /* "RANK" -> {"stdout": N, "stderr": N} */
};

struct shellout *shellout_create (const char *shell)
{
    struct shellout *so = calloc (1, sizeof (*so));
    const char *base = shell ? strrchr (shell, '/') : NULL;

    if (!so ||
        !(so->component = strdup (base    ? base + 1
                                  : shell ? shell
                                          : "shell")) ||
        !(so->ends = json_object ())) {
        shellout_destroy (so);
        errno = ENOMEM;
        return NULL;
    }
    return so;
}

void shellout_destroy (struct shellout *so)
{
    if (so) {
        int saved = errno;
        free (so->component);
        json_decref (so->ends);
        free (so);
        errno = saved;
    }
}

json_t *shellout_log (struct shellout *so, const json_t *data)
{
    json_int_t rank, end;
    const char *stream, *text;
    size_t len;
    char key[24];

    if (json_unpack ((json_t *)data, "{s:I s:s s:s% s:I}", "rank", &rank,
                     "stream", &stream, "data", &text, &len, "end", &end) < 0 ||
        rank < 0 || len == 0 ||
        (strcmp (stream, "stdout") != 0 && strcmp (stream, "stderr") != 0))
        return NULL;
    snprintf (key, sizeof (key), "%jd", (intmax_t)rank);
    json_t *r = json_object_get (so->ends, key);
    if (!r) {
        if (!(r = json_pack ("{s:i s:i}", "stdout", 0, "stderr", 0)) ||
            json_object_set_new (so->ends, key, r) < 0)
            return NULL;
    }
    if (end <= json_integer_value (json_object_get (r, stream)))
        return NULL;
    json_object_set_new (r, stream, json_integer (end));
    return json_pack ("{s:s s:s s:s s:s%}", "component", so->component,
                      "stream", stream, "rank", key, "data", text, len);
}

json_t *shellout_offsets (const struct shellout *so)
{
    return json_deep_copy (so->ends);
}
