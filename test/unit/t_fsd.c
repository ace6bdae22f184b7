/* t_fsd.c - Flux Standard Duration parsing and formatting. */
#include <float.h>
#include <math.h>

#include "tap.h"
#include "core/fsd.h"

static const struct {
    const char *s;
    double want;
} good[] = {
    {"0", 0.},        {"0s", 0.},     {"30", 30.},      {"30s", 30.},
    {"2.5s", 2.5},    {"0.25", 0.25}, {".5", 0.5},      {"5.", 5.},
    {"5m", 300.},     {"1.5m", 90.},  {"1h", 3600.},    {"1d", 86400.},
    {"0.5d", 43200.}, {"1e3", 1000.}, {"1.5E2s", 150.}, {"2e-3s", 0.002},
    {"1e+1m", 600.},  {"007", 7.},    {"1e-400", 0.}, // underflows to 0:
                                                      // harmless for a duration
};

static const struct {
    const char *s;
    const char *msg;
} bad[] = {
    {"", "empty"},
    {"-1", "non-negative number"},
    {"-0", "non-negative number"},
    {"+1", "non-negative number"},
    {"1x", "unknown unit"},
    {"m", "non-negative number"},
    {"1 m", "unknown unit"},
    {" 1", "non-negative number"},
    {"1 ", "unknown unit"},
    {"1mm", "trailing characters"},
    {"1sm", "trailing characters"},
    {"1m ", "trailing characters"},
    {"1.2.3", "unknown unit"},
    {".", "non-negative number"},
    {"nan", "non-negative number"},
    {"NaN", "non-negative number"},
    {"0x10", "unknown unit"},
    {"1e", "bad exponent"},
    {"1e+", "bad exponent"},
    {"1es", "bad exponent"},
    {"inf5", "non-negative number"},
    {"infs", "non-negative number"},
    {"-inf", "non-negative number"},
    {"1e400", "too large"},
    {"1e306d", "too large"},
    {"1M", "unknown unit"},
    {"1H", "unknown unit"},
};

static const struct {
    double v;
    const char *want;
} formats[] = {
    {0., "0s"},     {0.25, "0.25s"}, {1., "1s"},       {59., "59s"},
    {60., "1m"},    {90., "1.5m"},   {3600., "1h"},    {5400., "1.5h"},
    {86400., "1d"}, {172800., "2d"}, {1e-7, "1e-07s"}, {INFINITY, "inf"},
};

static void test_parse (void)
{
    struct cairn_error err;
    double v;

    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        v = -1;
        int rc = fsd_parse (good[i].s, &v, &err);
        ok (rc == 0 && v == good[i].want, "fsd_parse \"%s\" = %g (got %g)",
            good[i].s, good[i].want, v);
    }
    const char *infs[] = {"inf", "infinity", "INF", "Infinity"};
    for (size_t i = 0; i < sizeof (infs) / sizeof (infs[0]); i++) {
        v = 0;
        ok (fsd_parse (infs[i], &v, &err) == 0 && isinf (v) && v > 0,
            "fsd_parse \"%s\" = INFINITY", infs[i]);
    }
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        err.text[0] = '\0';
        v = 42;
        errno = 0;
        is_errno (fsd_parse (bad[i].s, &v, &err), EINVAL,
                  "fsd_parse \"%s\" fails", bad[i].s);
        like (err.text, bad[i].msg, "message for \"%s\"", bad[i].s);
        if (*bad[i].s) {
            char quoted[64];
            snprintf (quoted, sizeof (quoted), "\"%s\"", bad[i].s);
            like (err.text, quoted, "message quotes \"%s\"", bad[i].s);
        }
        ok (v == 42, "fsd_parse \"%s\" leaves the output alone", bad[i].s);
    }
    errno = 0;
    is_errno (fsd_parse (NULL, &v, &err), EINVAL, "fsd_parse NULL fails");
    like (err.text, "invalid duration", "message for NULL");

    char longbad[200];
    memset (longbad, '1', sizeof (longbad) - 2);
    longbad[sizeof (longbad) - 2] = 'x';
    longbad[sizeof (longbad) - 1] = '\0';
    errno = 0;
    is_errno (fsd_parse (longbad, &v, &err), EINVAL, "long junk fails");
    like (err.text, "...\": unknown unit", "long junk is quoted shortened");
    ok (fsd_parse ("1m", &v, NULL) == 0 && v == 60., "err may be NULL");
    ok (fsd_parse ("5m", NULL, NULL) == 0, "seconds may be NULL");
}

static void test_format (void)
{
    char buf[64];

    for (size_t i = 0; i < sizeof (formats) / sizeof (formats[0]); i++) {
        int rc = fsd_format (buf, sizeof (buf), formats[i].v);
        is_int (rc, 0, "fsd_format %g works", formats[i].v);
        is_str (buf, formats[i].want, "fsd_format %g", formats[i].v);
    }
    errno = 0;
    is_errno (fsd_format (buf, sizeof (buf), -1.), EINVAL, "negative fails");
    errno = 0;
    is_errno (fsd_format (buf, sizeof (buf), NAN), EINVAL, "NaN fails");
    errno = 0;
    is_errno (fsd_format (NULL, 10, 1.), EINVAL, "NULL buf fails");
    errno = 0;
    is_errno (fsd_format (buf, 4, 0.25), EOVERFLOW, "small buffer fails");
    is_str (buf, "", "small buffer is left empty");
    is_int (fsd_format (buf, 6, 0.25), 0, "exact fit works");
    is_str (buf, "0.25s", "exact fit");
    errno = 0;
    is_errno (fsd_format (buf, 0, 1.), EOVERFLOW, "len 0 fails");
}

/* Round trips over many magnitudes: within 0.001%, and always parseable. */
static void test_roundtrip (void)
{
    double vals[] = {
        0.,          1e-300,  1e-9,       0.001,      0.1,    1. / 3,
        1.,          7.5,     59.99,      59.9999999, 60.,    61.,
        100.5,       3599.,   3600.5,     86399.,     86401., 90061.,
        1e6,         1e9,     12345678.9, 1e15,       1e100,  DBL_MAX / 86400,
        DBL_MAX / 2, DBL_MAX,
    };
    int fails = 0;
    char buf[64];

    for (size_t i = 0; i < sizeof (vals) / sizeof (vals[0]); i++) {
        double back = -1;
        if (fsd_format (buf, sizeof (buf), vals[i]) < 0 ||
            fsd_parse (buf, &back, NULL) < 0 ||
            fabs (back - vals[i]) > vals[i] * 1e-5) {
            diag ("%.17g -> \"%s\" -> %.17g", vals[i], buf, back);
            fails++;
        }
    }
    /* A sweep: 1.37^k from 1e-6 up to ~1e300. */
    for (double v = 1e-6; v < 1e300; v *= 1.37) {
        double back = -1;
        if (fsd_format (buf, sizeof (buf), v) < 0 ||
            fsd_parse (buf, &back, NULL) < 0 || fabs (back - v) > v * 1e-5) {
            diag ("%.17g -> \"%s\" -> %.17g", v, buf, back);
            fails++;
        }
    }
    is_int (fails, 0, "fsd_format output parses back within 0.001%%");
    ok (fsd_format (buf, sizeof (buf), DBL_MAX) == 0 &&
            fsd_parse (buf, NULL, NULL) == 0,
        "DBL_MAX formats as \"%s\", which parses", buf);
}

static void test_json (void)
{
    struct cairn_error err;
    double v;
    json_t *o;

    o = json_string ("5m");
    ok (fsd_parse_json (o, &v, &err) == 0 && v == 300., "json \"5m\" is 300");
    json_decref (o);
    o = json_integer (30);
    ok (fsd_parse_json (o, &v, &err) == 0 && v == 30., "json 30 is 30");
    json_decref (o);
    o = json_real (2.5);
    ok (fsd_parse_json (o, &v, &err) == 0 && v == 2.5, "json 2.5 is 2.5");
    json_decref (o);
    o = json_integer (0);
    ok (fsd_parse_json (o, &v, &err) == 0 && v == 0., "json 0 is 0");
    json_decref (o);
    o = json_string ("inf");
    ok (fsd_parse_json (o, &v, &err) == 0 && isinf (v), "json \"inf\"");
    json_decref (o);

    struct {
        json_t *o;
        const char *msg;
    } bad[] = {
        {json_integer (-1), "must be >= 0"},
        {json_real (-0.5), "must be >= 0"},
        {json_string ("1x"), "\"1x\": unknown unit"},
        {json_string ("-5m"), "non-negative number"},
        {json_stringn ("5\0m", 3), "contains NUL"},
        {json_true (), "expected a string or a number"},
        {json_null (), "expected a string or a number"},
        {json_object (), "expected a string or a number"},
        {NULL, "expected a string or a number"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        err.text[0] = '\0';
        is_errno (fsd_parse_json (bad[i].o, &v, &err), EINVAL,
                  "fsd_parse_json bad[%zu] fails", i);
        like (err.text, bad[i].msg, "fsd_parse_json bad[%zu] message", i);
        json_decref (bad[i].o);
    }
}

int main (void)
{
    plan (NO_PLAN);
    test_parse ();
    test_format ();
    test_roundtrip ();
    test_json ();
    return done_testing ();
}
