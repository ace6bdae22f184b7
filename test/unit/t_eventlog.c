/* t_eventlog.c - RFC 18 eventlog entries. */
#include <math.h>

#include "tap.h"
#include "core/eventlog.h"

static void test_pack_encode (void)
{
    json_t *e;
    char *s;

    e = eventlog_entry_pack (1552593348.09283, "release", "{s:s s:b}", "ranks",
                             "all", "final", 1);
    ok (e != NULL, "pack release with context");
    s = eventlog_entry_encode (e);
    is_str (s,
            "{\"timestamp\":1552593348.092830,\"name\":\"release\","
            "\"context\":{\"ranks\":\"all\",\"final\":true}}",
            "encode is compact, ordered, microseconds");
    free (s);
    json_decref (e);

    e = eventlog_entry_pack (1700000000.5, "start", NULL);
    s = eventlog_entry_encode (e);
    is_str (s, "{\"timestamp\":1700000000.500000,\"name\":\"start\"}",
            "encode without context");
    free (s);
    json_decref (e);

    e = eventlog_entry_pack (1.0, "clean", "{}");
    s = eventlog_entry_encode (e);
    is_str (s, "{\"timestamp\":1.000000,\"name\":\"clean\",\"context\":{}}",
            "encode empty context");
    free (s);
    json_decref (e);

    /* Keys come out in RFC 18 order whatever order the object has. */
    e = json_pack ("{s:{s:i} s:s s:f}", "context", "status", 256, "name",
                   "finish", "timestamp", 2.25);
    s = eventlog_entry_encode (e);
    is_str (s,
            "{\"timestamp\":2.250000,\"name\":\"finish\","
            "\"context\":{\"status\":256}}",
            "encode reorders keys");
    free (s);
    json_decref (e);

    /* A name with a newline stays on one line. */
    e = eventlog_entry_pack (5., "odd\nname\"", "{s:s}", "note", "a\nb");
    s = eventlog_entry_encode (e);
    ok (s && !strchr (s, '\n'), "encode escapes newlines: %s", s);
    free (s);
    json_decref (e);

    /* A timestamp too small for %.6f still decodes as > 0. */
    e = eventlog_entry_pack (1e-9, "tiny", NULL);
    s = eventlog_entry_encode (e);
    json_t *back = s ? eventlog_entry_decode (s, strlen (s), NULL) : NULL;
    double t = 0;
    ok (back && eventlog_entry_parse (back, &t, NULL, NULL) == 0 && t > 0 &&
            fabs (t - 1e-9) < 1e-15,
        "a tiny timestamp round trips: %s", s);
    json_decref (back);
    free (s);
    json_decref (e);

    /* Encoding refuses what decoding would refuse. */
    struct {
        json_t *e;
        const char *what;
    } bad[] = {
        {json_pack ("{s:f s:s s:i}", "timestamp", 1., "name", "x", "foo", 1),
         "unknown key"},
        {json_pack ("{s:s}", "name", "x"), "no timestamp"},
        {json_pack ("{s:f s:s s:i}", "timestamp", 1., "name", "x", "context",
                    1),
         "context not an object"},
        {json_array (), "not an object"},
        {NULL, "NULL"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        is_errno_ptr (eventlog_entry_encode (bad[i].e), EINVAL,
                      "encode fails: %s", bad[i].what);
        json_decref (bad[i].e);
    }
}

static void test_pack_bad (void)
{
    struct {
        double t;
        const char *name;
        const char *fmt;
        const char *what;
    } bad[] = {
        {0., "x", NULL, "timestamp 0"},
        {-1., "x", NULL, "negative timestamp"},
        {NAN, "x", NULL, "NaN timestamp"},
        {INFINITY, "x", NULL, "infinite timestamp"},
        {1., NULL, NULL, "NULL name"},
        {1., "", NULL, "empty name"},
        {1., "\xff", NULL, "name not UTF-8"},
        {1., "x", "[]", "context not an object"},
        {1., "x", "{", "bad format"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        is_errno_ptr (eventlog_entry_pack (bad[i].t, bad[i].name, bad[i].fmt),
                      EINVAL, "pack fails: %s", bad[i].what);
    }

    /* create steals its context, also when it fails. */
    json_t *ctx = json_object ();
    json_incref (ctx);
    errno = 0;
    is_errno_ptr (eventlog_entry_create (0., "x", ctx), EINVAL,
                  "create fails on timestamp 0");
    is_int (ctx->refcount, 1, "failed create dropped its context reference");
    json_t *e = eventlog_entry_create (3., "x", json_incref (ctx));
    ok (e != NULL, "create works");
    ok (json_object_get (e, "context") == ctx, "the entry holds the context");
    is_int (ctx->refcount, 2, "create took the reference it was given");
    json_decref (e);
    is_int (ctx->refcount, 1, "destroying the entry dropped its reference");
    json_decref (ctx);

    json_t *arr = json_array ();
    errno = 0;
    is_errno_ptr (eventlog_entry_create (1., "x", arr), EINVAL,
                  "create fails on an array context (and frees it)");
}

static void test_decode (void)
{
    struct cairn_error err;
    const char *name;
    json_t *ctx;
    double t;
    json_t *e;

    const char *line =
        "{\"timestamp\":1700000000.123456,\"name\":\"exception\","
        "\"context\":{\"type\":\"cancel\",\"severity\":0}}\n";
    e = eventlog_entry_decode (line, strlen (line), &err);
    ok (e != NULL, "decode with a trailing newline");
    ok (eventlog_entry_parse (e, &t, &name, &ctx) == 0, "parse works");
    ok (fabs (t - 1700000000.123456) < 1e-7, "timestamp %.6f", t);
    is_str (name, "exception", "name");
    ok (json_is_object (ctx), "context is an object");
    is_int (json_integer_value (json_object_get (ctx, "severity")), 0,
            "context.severity");
    ok (ctx->refcount == 1, "context is borrowed");
    char *s = eventlog_entry_encode (e);
    ok (s && strlen (s) == strlen (line) - 1 && !strncmp (s, line, strlen (s)),
        "encode gives the line back without its newline");
    free (s);
    ok (eventlog_entry_parse (e, NULL, NULL, NULL) == 0,
        "parse with NULL out-parameters");
    json_decref (e);

    /* Not NUL-terminated: only len bytes are read. */
    char buf[] = "{\"timestamp\":5,\"name\":\"start\"}GARBAGE";
    e = eventlog_entry_decode (buf, strlen (buf) - 7, &err);
    ok (e != NULL, "decode reads only len bytes");
    ctx = (json_t *)1;
    ok (eventlog_entry_parse (e, &t, &name, &ctx) == 0 && t == 5. &&
            !strcmp (name, "start") && ctx == NULL,
        "integer timestamp; no context gives NULL");
    json_decref (e);

    const char *bad[][2] = {
        {"", "eventlog entry: "},
        {"\n", "eventlog entry: "},
        {"[]", "not an object"},
        {"{}", "timestamp: missing"},
        {"{\"name\":\"x\"}", "timestamp: missing"},
        {"{\"timestamp\":\"1\",\"name\":\"x\"}", "timestamp: not a number"},
        {"{\"timestamp\":0,\"name\":\"x\"}", "timestamp: must be > 0"},
        {"{\"timestamp\":-1.5,\"name\":\"x\"}", "timestamp: must be > 0"},
        {"{\"timestamp\":1}", "name: missing"},
        {"{\"timestamp\":1,\"name\":5}", "name: not a string"},
        {"{\"timestamp\":1,\"name\":\"\"}", "name: empty"},
        {"{\"timestamp\":1,\"name\":\"a\\u0000b\"}", "eventlog entry: "},
        {"{\"timestamp\":1,\"name\":\"x\",\"context\":[]}",
         "context: not an object"},
        {"{\"timestamp\":1,\"name\":\"x\",\"context\":null}",
         "context: not an object"},
        {"{\"timestamp\":1,\"name\":\"x\",\"foo\":1}", "unknown key \"foo\""},
        {"{\"timestamp\":1,\"name\":\"x\",\"name\":\"y\"}", "duplicate"},
        {"{\"timestamp\":1,\"name\":\"x\"}{\"timestamp\":1,\"name\":\"x\"}",
         "end of file expected"},
        {"{\"timestamp\":1,\"name\":\"x\"} x", "end of file expected"},
        {"{\"timestamp\":1,\"name\":\"x\"}\n\n", "more than one line"},
        {"{\"timestamp\":1,\n\"name\":\"x\"}", "more than one line"},
        {"{\"timestamp\":1,\"name\":\"x\"", "eventlog entry: "},
        {"{\"timestamp\":1e999,\"name\":\"x\"}", "eventlog entry: "},
        {"\"str\"", "eventlog entry: "},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        err.text[0] = '\0';
        is_errno_ptr (
            eventlog_entry_decode (bad[i][0], strlen (bad[i][0]), &err), EINVAL,
            "decode bad[%zu] fails", i);
        like (err.text, bad[i][1], "decode bad[%zu] message", i);
    }
    char nul[] = "{\"timestamp\":1,\"name\":\"x\"}";
    nul[5] = '\0';
    errno = 0;
    is_errno_ptr (eventlog_entry_decode (nul, sizeof (nul) - 1, &err), EINVAL,
                  "decode refuses a NUL byte");
    errno = 0;
    is_errno_ptr (eventlog_entry_decode (NULL, 0, &err), EINVAL,
                  "decode NULL fails");

    errno = 0;
    json_t *o =
        json_pack ("{s:f s:s s:b}", "timestamp", 1., "name", "x", "z", 1);
    is_errno (eventlog_entry_parse (o, &t, &name, &ctx), EINVAL,
              "parse refuses an unknown key");
    json_decref (o);
    errno = 0;
    is_errno (eventlog_entry_parse (NULL, &t, &name, &ctx), EINVAL,
              "parse NULL fails");
}

/* Timestamps keep microseconds through encode and decode. */
static void test_roundtrip (void)
{
    double ts[] = {
        1e-6,
        0.5,
        1.0,
        1.000001,
        123.456789,
        1552593348.09283,
        1700000000.000001,
        1700000000.999999,
        1799999999.123456,
        4e9 + 0.25,
    };
    int fails = 0;

    for (size_t i = 0; i < sizeof (ts) / sizeof (ts[0]); i++) {
        for (int k = 0; k < 100; k++) {
            double t = ts[i] + k * 1e-6;
            json_t *e = eventlog_entry_pack (t, "x", "{s:i}", "k", k);
            char *s = eventlog_entry_encode (e);
            json_t *back =
                s ? eventlog_entry_decode (s, strlen (s), NULL) : NULL;
            double t2 = 0;
            json_t *ctx = NULL;
            if (!back || eventlog_entry_parse (back, &t2, NULL, &ctx) < 0 ||
                fabs (t2 - t) > 0.5e-6 + t * 1e-15 ||
                json_integer_value (json_object_get (ctx, "k")) != k) {
                diag ("%.9f -> %s -> %.9f", t, s ? s : "(null)", t2);
                fails++;
            }
            json_decref (back);
            free (s);
            json_decref (e);
        }
    }
    is_int (fails, 0, "timestamps round trip to the microsecond");
}

/* The unchecked read cairnd uses on entries it built (issue 35): the
 * parts as eventlog_entry_parse() gives them, and a part that is missing
 * or of another type as 0 or NULL. An escaped name and a long context
 * still encode exactly as json_dumps would. */
static void test_fields (void)
{
    json_t *e = eventlog_entry_pack (3.5, "proc-exit", "{s:s s:i}", "execid",
                                     "x", "status", 0);
    double t = 0;
    const char *name = NULL;
    json_t *ctx = NULL;
    eventlog_entry_fields (e, &t, &name, &ctx);
    ok (t == 3.5 && name && strcmp (name, "proc-exit") == 0 && ctx &&
            json_integer_value (json_object_get (ctx, "status")) == 0,
        "fields reads timestamp, name and context");
    eventlog_entry_fields (e, NULL, NULL, NULL);
    ok (1, "fields takes NULL out-parameters");
    json_decref (e);

    json_t *odd = json_pack ("{s:s s:i}", "name", "x", "context", 1);
    t = 9;
    name = "y";
    ctx = odd;
    eventlog_entry_fields (odd, &t, &name, &ctx);
    ok (t == 0 && name && strcmp (name, "x") == 0 && ctx == NULL,
        "fields reads a missing timestamp as 0, a context not an object "
        "as NULL");
    json_decref (odd);

    json_t *big = json_object ();
    for (int i = 0; i < 200; i++) {
        char k[16];
        snprintf (k, sizeof (k), "k%d", i);
        json_object_set_new (big, k, json_string ("a \"quoted\" value\n"));
    }
    char *want = json_dumps (big, JSON_COMPACT | JSON_PRESERVE_ORDER);
    e = eventlog_entry_create (1.0, "weird \"name\"\t", big);
    char *s = eventlog_entry_encode (e);
    char *w = NULL;
    if (asprintf (&w,
                  "{\"timestamp\":1.000000,\"name\":\"weird \\\"name\\\"\\t\","
                  "\"context\":%s}",
                  want) < 0)
        w = NULL;
    is_str (s, w, "encode: an escaped name and a context past 256 bytes");
    free (s);
    free (w);
    free (want);
    json_decref (e);
}

/* The encoder's own "%.6f" for epoch times writes what snprintf does:
 * ties (1/128 s is 7812.5 us), the carry into the seconds, the edges of
 * its range, and random times. */
static void test_timestamp_digits (void)
{
    double edge[] = {8192.0,
                     8191.9999999,
                     1700000000.0078125,
                     1700000000.0234375,
                     1700000000.9999995,
                     1700000000.99999949,
                     1799999999.9999999,
                     9007199254740991.0,
                     9007199254740992.0,
                     123456.5000005};
    int bad = 0, n = 0;
    unsigned long long x = 88172645463325252ULL;

    for (int i = 0; i < 200000 + (int)(sizeof (edge) / sizeof (edge[0]));
         i++, n++) {
        double t;
        if (i < (int)(sizeof (edge) / sizeof (edge[0])))
            t = edge[i];
        else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            t = i % 2 ? 1.6e9 + (double)(x % 400000000000ULL) / 1e3
                      : 8192.0 + (double)(x >> 11) / 1e3;
        }
        char want[400], line[480];
        snprintf (want, sizeof (want), "{\"timestamp\":%.6f,\"name\":\"x\"}",
                  t);
        json_t *e = json_pack ("{s:f s:s}", "timestamp", t, "name", "x");
        char *got = e ? eventlog_entry_encode (e) : NULL;
        snprintf (line, sizeof (line), "%s", got ? got : "(null)");
        if (strcmp (line, want) != 0 && bad++ < 5)
            diag ("t=%.17g: got %s, want %s", t, line, want);
        free (got);
        json_decref (e);
    }
    ok (bad == 0, "timestamps: %d of %d encoded as %%.6f would", n - bad, n);
}

int main (void)
{
    plan (NO_PLAN);
    test_timestamp_digits ();
    test_fields ();
    test_pack_encode ();
    test_pack_bad ();
    test_decode ();
    test_roundtrip ();
    return done_testing ();
}
