/* crashtest_expect.c - the outcome a scenario states, checked.
 *
 * Each crash run is compared with the clean run (ct_compare), and the
 * clean run with nothing: a cairnd that ends a job wrongly ends it wrongly
 * in every run alike, and every run passes. A job of a scenario may state
 * its outcome ("expect", in ct_summary's terms), as its description does
 * in words; every run of it, the clean one included, is held to that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"
#include "crashtest/crashtest.h"

/* An array of strings, sorted and each once, as ct_summary makes them:
 * a new reference, or NULL. */
static json_t *sorted_strings (const json_t *a)
{
    json_t *out = json_array ();
    size_t i;
    json_t *x;

    if (!out || !json_is_array (a))
        goto bad;
    json_array_foreach ((json_t *)a, i, x)
    {
        const char *s = json_string_value (x);
        size_t k = 0;
        if (!s)
            goto bad;
        while (k < json_array_size (out) &&
               strcmp (json_string_value (json_array_get (out, k)), s) < 0)
            k++;
        if (k < json_array_size (out) &&
            strcmp (json_string_value (json_array_get (out, k)), s) == 0)
            continue;
        if (json_array_insert_new (out, k, json_string (s)) < 0)
            goto bad;
    }
    return out;
bad:
    json_decref (out);
    return NULL;
}

/* A rank set as ct_summary writes it ("0-2", "" for none): a new
 * reference, or NULL. */
static json_t *ranks (const json_t *v)
{
    const char *s = json_string_value (v);
    struct idset *set = s ? idset_decode (s, NULL) : NULL;
    char *enc = set ? idset_encode (set) : NULL;
    json_t *out = enc ? json_string (enc) : NULL;
    idset_destroy (set);
    free (enc);
    return out;
}

/* "clean" or "active", as ct_summary's state. */
static json_t *state (const json_t *v)
{
    const char *s = json_string_value (v);
    if (s && (strcmp (s, "clean") == 0 || strcmp (s, "active") == 0))
        return json_incref ((json_t *)v);
    return NULL;
}

/* A wait status, or null: the job never finished. */
static json_t *status (const json_t *v)
{
    if (json_is_null (v) ||
        (json_is_integer (v) && json_integer_value (v) >= 0))
        return json_incref ((json_t *)v);
    return NULL;
}

/* The fields an expectation may state: those ct_compare compares, each
 * with what reads it as ct_summary writes it (a new reference, NULL if
 * it is not what `want` says). */
static const struct {
    const char *key;
    json_t *(*read) (const json_t *v);
    const char *want;
} fields[] = {
    {"state", state, "\"clean\" or \"active\""},
    {"finish", status, "a wait status (an integer), or null (no finish)"},
    {"exceptions", sorted_strings, "an array of \"TYPE/SEVERITY\""},
    {"released", ranks, "a rank set (\"0-2\", \"\" for none)"},
    {"drained", ranks, "a rank set (\"0-2\", \"\" for none)"},
    {"ran", sorted_strings, "an array of \"PHASE.RANK\" (or \"PHASE.all\")"},
};

#define NFIELDS (sizeof (fields) / sizeof (fields[0]))

int ct_expect_parse (const json_t *o,
                     json_t **expect,
                     const char *where,
                     struct cairn_error *err)
{
    json_t *e = json_object ();
    const char *key;
    json_t *v;

    *expect = NULL;
    if (!e)
        return errset (err, ENOMEM, "out of memory");
    if (!json_is_object (o) || json_object_size (o) == 0) {
        json_decref (e);
        return errset (err, EINVAL, "%s: must be an object of %s", where,
                       "state, finish, exceptions, released, drained, ran");
    }
    json_object_foreach ((json_t *)o, key, v)
    {
        size_t f = 0;
        while (f < NFIELDS && strcmp (key, fields[f].key) != 0)
            f++;
        if (f == NFIELDS) {
            json_decref (e);
            return errset (err, EINVAL,
                           "%s: unknown key '%s' (state, finish, exceptions, "
                           "released, drained, ran)",
                           where, key);
        }
        json_t *n = fields[f].read (v);
        if (!n) {
            json_decref (e);
            return errset (err, EINVAL, "%s.%s: must be %s", where, key,
                           fields[f].want);
        }
        if (json_object_set_new (e, key, n) < 0) {
            json_decref (e);
            return errset (err, ENOMEM, "out of memory");
        }
    }
    *expect = e;
    return 0;
}

void ct_expect_check (uint64_t id,
                      const json_t *expect,
                      const json_t *got,
                      const char *explained,
                      json_t *violations,
                      json_t *diverged)
{
    char diff[900] = "";

    if (!expect)
        return;
    for (size_t i = 0; i < NFIELDS; i++) {
        json_t *want = json_object_get (expect, fields[i].key);
        json_t *have = json_object_get (got, fields[i].key);
        if (!want || json_equal (want, have))
            continue;
        char *sw = json_dumps (want, JSON_COMPACT | JSON_ENCODE_ANY);
        char *sh =
            have ? json_dumps (have, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        size_t used = strlen (diff);
        snprintf (diff + used, sizeof (diff) - used,
                  "%s%s: expected %s, this run %s", used ? "; " : "",
                  fields[i].key, sw ? sw : "?", sh ? sh : "nothing");
        free (sw);
        free (sh);
    }
    if (!diff[0])
        return;
    if (explained)
        ct_addf (diverged,
                 "job %ju ended unlike the scenario's expected outcome, "
                 "explained by %s: %s",
                 (uintmax_t)id, explained, diff);
    else
        ct_addf (violations,
                 "job %ju ended unlike the scenario's expected outcome: %s",
                 (uintmax_t)id, diff);
}
