/* t_rv1.c - resource set R version 1 (RFC 20). */
#include <math.h>
#include <time.h>

#include "tap.h"
#include "core/hostlist.h"
#include "core/rv1.h"

static json_t *load (const char *s)
{
    json_error_t jerr;
    json_t *o = json_loads (s, 0, &jerr);
    if (!o)
        BAIL_OUT ("bad test JSON: %s: %s", jerr.text, s);
    return o;
}

static char *ids (const struct idset *s)
{
    static char buf[256];
    char *t = s ? idset_encode (s) : NULL;
    snprintf (buf, sizeof (buf), "%s", t ? t : "(null)");
    free (t);
    return buf;
}

static const char *basic_R =
    "{\"version\":1,"
    "\"execution\":{\"R_lite\":[{\"rank\":\"0-3\","
    "\"children\":{\"core\":\"0-7\",\"gpu\":\"0-1\"}}],"
    "\"nodelist\":[\"node[0-3]\"],"
    "\"starttime\":1700000000.0,\"expiration\":1700003600.0,"
    "\"properties\":{\"debug\":\"2\"}},"
    "\"scheduling\":{\"graph\":[1,2,3]},"
    "\"extra\":{\"kept\":true}}";

/* Ranks interleaved across entries, several hostlists (one empty). Sorted
 * ranks 0..6 get a b c1 c2 c3 z7 z8. */
static const char *mixed_R =
    "{\"version\":1,"
    "\"execution\":{\"R_lite\":["
    "{\"rank\":\"1,5-6\",\"children\":{\"core\":\"0-3\"}},"
    "{\"rank\":\"[0,2-4]\",\"children\":{\"core\":\"0-1\",\"gpu\":\"0\","
    "\"fpga\":\"0-2\"},\"foo\":1}],"
    "\"nodelist\":[\"a,b\",\"c[1-3]\",\"\",\"z[7-8]\"]}}";

static void test_basic (void)
{
    struct cairn_error err;
    json_t *R = load (basic_R);
    struct rv1 *r = rv1_decode (R, &err);

    ok (r != NULL, "decode basic R");
    if (!r)
        BAIL_OUT ("%s", err.text);
    ok (rv1_json (r) == R && R->refcount == 2, "rv1 keeps a reference to R");
    is_int (rv1_nranks (r), 4, "4 ranks");
    is_str (ids (rv1_ranks (r)), "0-3", "ranks");
    is_str (ids (rv1_cores (r, 2)), "0-7", "cores of rank 2");
    is_str (ids (rv1_gpus (r, 3)), "0-1", "gpus of rank 3");
    is_str (rv1_hostname (r, 0), "node0", "host of rank 0");
    is_str (rv1_hostname (r, 3), "node3", "host of rank 3");
    is_int (rv1_rank_index (r, 3), 3, "index of rank 3");
    ok (rv1_starttime (r) == 1700000000.0, "starttime");
    ok (rv1_expiration (r) == 1700003600.0, "expiration");
    errno = 0;
    is_errno_ptr (rv1_cores (r, 4), ENOENT, "no cores for rank 4");
    errno = 0;
    is_errno_ptr (rv1_gpus (r, 4), ENOENT, "no gpus for rank 4");
    errno = 0;
    is_errno_ptr (rv1_hostname (r, 4), ENOENT, "no host for rank 4");
    errno = 0;
    is_errno (rv1_rank_index (r, UINT32_MAX), ENOENT, "no index for 2^32-1");
    rv1_destroy (r);
    is_int (R->refcount, 1, "rv1_destroy drops its reference");
    json_decref (R);

    R = load ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"7\","
              "\"children\":{\"core\":\"\"}}],\"nodelist\":[\"h\"]}}");
    r = rv1_decode (R, &err);
    ok (r != NULL, "decode R without times, with an empty core set");
    ok (r && rv1_starttime (r) == 0 && rv1_expiration (r) == 0,
        "absent times are 0");
    is_str (ids (rv1_gpus (r, 7)), "", "no gpu gives an empty set");
    rv1_destroy (r);
    json_decref (R);
    rv1_destroy (NULL);
}

static void test_mixed (void)
{
    struct cairn_error err;
    json_t *R = load (mixed_R);
    struct rv1 *r = rv1_decode (R, &err);
    const char *hosts[] = {"a", "b", "c1", "c2", "c3", "z7", "z8"};
    const char *cores[] = {"0-1", "0-3", "0-1", "0-1", "0-1", "0-3", "0-3"};
    const char *gpus[] = {"0", "", "0", "0", "0", "", ""};

    ok (r != NULL, "decode interleaved R");
    if (!r)
        BAIL_OUT ("%s", err.text);
    is_int (rv1_nranks (r), 7, "7 ranks");
    is_str (ids (rv1_ranks (r)), "0-6", "ranks");
    for (uint32_t i = 0; i < 7; i++) {
        is_str (rv1_hostname (r, i), hosts[i], "host of rank %u", i);
        is_str (ids (rv1_cores (r, i)), cores[i], "cores of rank %u", i);
        is_str (ids (rv1_gpus (r, i)), gpus[i], "gpus of rank %u", i);
        is_int (rv1_rank_index (r, i), i, "index of rank %u", i);
    }

    struct idset *sub = idset_decode ("1-2,6", NULL);
    json_t *frag = rv1_fragment (r, sub, &err);
    char *s = frag ? json_dumps (frag, JSON_COMPACT) : NULL;
    is_str (s,
            "{\"version\":1,\"execution\":{\"R_lite\":["
            "{\"rank\":\"1,6\",\"children\":{\"core\":\"0-3\"}},"
            "{\"rank\":\"2\",\"children\":{\"core\":\"0-1\",\"gpu\":\"0\","
            "\"fpga\":\"0-2\"},\"foo\":1}],"
            "\"nodelist\":[\"b,c1,z8\"]}}",
            "fragment keeps children and entry keys, drops empty entries");
    free (s);
    struct rv1 *f = frag ? rv1_decode (frag, &err) : NULL;
    ok (f != NULL, "the fragment decodes");
    is_str (ids (rv1_ranks (f)), "1-2,6", "fragment ranks");
    is_str (rv1_hostname (f, 6), "z8", "fragment host of rank 6");
    is_str (rv1_hostname (f, 2), "c1", "fragment host of rank 2");
    is_str (ids (rv1_gpus (f, 2)), "0", "fragment gpus of rank 2");
    rv1_destroy (f);
    json_decref (frag);
    idset_destroy (sub);
    rv1_destroy (r);
    json_decref (R);
}

static void test_fragment (void)
{
    struct cairn_error err;
    json_t *R = load (basic_R);
    struct rv1 *r = rv1_decode (R, &err);
    struct idset *sub = idset_decode ("1-2", NULL);
    json_t *frag = rv1_fragment (r, sub, &err);
    char *s = frag ? json_dumps (frag, JSON_COMPACT) : NULL;

    is_str (s,
            "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"1-2\","
            "\"children\":{\"core\":\"0-7\",\"gpu\":\"0-1\"}}],"
            "\"nodelist\":[\"node[1-2]\"],"
            "\"starttime\":1700000000.0,\"expiration\":1700003600.0,"
            "\"properties\":{\"debug\":\"2\"}},"
            "\"extra\":{\"kept\":true}}",
            "fragment 1-2: nodelist compresses, times and unknown keys kept,"
            " scheduling dropped");
    free (s);
    json_decref (frag);
    idset_destroy (sub);

    char *orig = json_dumps (R, JSON_COMPACT);
    ok (orig && strstr (orig, "\"scheduling\"") &&
            strstr (orig, "\"rank\":\"0-3\""),
        "the original R is untouched");
    free (orig);

    struct {
        const char *ranks;
        const char *msg;
    } bad[] = {
        {"", "no ranks"},
        {"2-5", "ranks 4-5 not in R"},
        {"9", "ranks 9 not in R"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        sub = idset_decode (bad[i].ranks, NULL);
        errno = 0;
        err.text[0] = '\0';
        is_errno_ptr (rv1_fragment (r, sub, &err), EINVAL,
                      "fragment \"%s\" fails", bad[i].ranks);
        like (err.text, bad[i].msg, "fragment \"%s\" message", bad[i].ranks);
        idset_destroy (sub);
    }
    errno = 0;
    is_errno_ptr (rv1_fragment (r, NULL, &err), EINVAL, "NULL ranks fail");
    rv1_destroy (r);
    json_decref (R);
}

/* R_lite and nodelist templates for the table below. */
// clang-format off
#define RL(x)                                                                  \
    "{\"version\":1,\"execution\":{\"R_lite\":" x                              \
    ",\"nodelist\":[\"n[0-3]\"]}}"
// clang-format on
#define NL(x)                                                                  \
    "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-3\","             \
    "\"children\":{\"core\":\"0\"}}],\"nodelist\":" x "}}"
#define EX(x)                                                                  \
    "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-3\","             \
    "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"n[0-3]\"]," x "}}"

static const struct {
    const char *R;
    const char *msg;
} bad[] = {
    {"[]", "R: not an object"},
    {"{}", "R: version: missing"},
    {"{\"version\":2,\"execution\":{}}", "R: version: must be 1"},
    {"{\"version\":\"1\",\"execution\":{}}", "R: version: must be 1"},
    {"{\"version\":1.0,\"execution\":{}}", "R: version: must be 1"},
    {"{\"version\":1}", "R: execution: missing"},
    {"{\"version\":1,\"execution\":[]}", "R: execution: not an object"},
    {"{\"version\":1,\"execution\":{\"nodelist\":[]}}",
     "R: execution.R_lite: missing"},
    {RL ("[]"), "R: execution.R_lite: not a non-empty array"},
    {RL ("{}"), "R: execution.R_lite: not a non-empty array"},
    {RL ("[1]"), "R: execution.R_lite[0]: not an object"},
    {RL ("[{\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[0].rank: missing"},
    {RL ("[{\"rank\":0,\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[0].rank: not a string"},
    {RL ("[{\"rank\":\"0-3\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"4-\",\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[1].rank: idset \"4-\""},
    {RL ("[{\"rank\":\"\",\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[0].rank: empty"},
    {RL ("[{\"rank\":\"0-3\"}]"), "R: execution.R_lite[0].children: missing"},
    {RL ("[{\"rank\":\"0-3\",\"children\":[]}]"),
     "R: execution.R_lite[0].children: not an object"},
    {RL ("[{\"rank\":\"0-3\",\"children\":{\"gpu\":\"0\"}}]"),
     "R: execution.R_lite[0].children.core: missing"},
    {RL ("[{\"rank\":\"0-3\",\"children\":{\"core\":5}}]"),
     "R: execution.R_lite[0].children.core: not a string"},
    {RL ("[{\"rank\":\"0-3\",\"children\":{\"core\":\"x\"}}]"),
     "R: execution.R_lite[0].children.core: idset \"x\""},
    {RL ("[{\"rank\":\"0-3\",\"children\":{\"core\":\"0\",\"gpu\":1}}]"),
     "R: execution.R_lite[0].children.gpu: not a string"},
    {RL ("[{\"rank\":\"0-3\",\"children\":{\"core\":\"0\",\"gpu\":\"3-1\"}}]"),
     "R: execution.R_lite[0].children.gpu: idset \"3-1\""},
    {RL ("[{\"rank\":\"0-2\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"2-3\",\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[1].rank: rank 2 is also in R_lite[0]"},
    {RL ("[{\"rank\":\"0,5\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"2\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"1,4-5\",\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[2].rank: rank 5 is also in R_lite[0]"},
    {RL ("[{\"rank\":\"0-4000000000\",\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[0].rank: too many ranks"},
    {RL ("[{\"rank\":\"0-1048575\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"2000000\",\"children\":{\"core\":\"0\"}}]"),
     "R: execution.R_lite[1].rank: too many ranks"},
    {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
     "\"children\":{\"core\":\"0\"}}]}}",
     "R: execution.nodelist: missing"},
    {NL ("\"n[0-3]\""), "R: execution.nodelist: not an array"},
    {NL ("[1]"), "R: execution.nodelist[0]: not a string"},
    {NL ("[\"n[0-1]\",\"m[3-1]\"]"), "R: execution.nodelist[1]: hostlist"},
    {NL ("[\"n[0-2]\"]"), "R: execution.nodelist: 3 hosts for 4 ranks"},
    {NL ("[]"), "R: execution.nodelist: 0 hosts for 4 ranks"},
    {NL ("[\"n[0-2]\",\"m[0-1]\"]"),
     "R: execution.nodelist: more hosts than the 4 ranks"},
    {NL ("[\"n[0-999999]\",\"n[0-999999]\",\"n[0-999999]\"]"),
     "R: execution.nodelist: more hosts than the 4 ranks"},
    {EX ("\"starttime\":\"now\""), "R: execution.starttime: not a number"},
    {EX ("\"starttime\":-1"), "R: execution.starttime: must be >= 0"},
    {EX ("\"expiration\":null"), "R: execution.expiration: not a number"},
    {EX ("\"expiration\":-0.5"), "R: execution.expiration: must be >= 0"},
};

static void test_bad (void)
{
    struct cairn_error err;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        json_t *R = load (bad[i].R);
        errno = 0;
        err.text[0] = '\0';
        is_errno_ptr (rv1_decode (R, &err), EINVAL, "bad[%zu] fails", i);
        like (err.text, bad[i].msg, "bad[%zu] message", i);
        is_int (R->refcount, 1, "bad[%zu] leaves no reference behind", i);
        json_decref (R);
    }
    errno = 0;
    is_errno_ptr (rv1_decode (NULL, &err), EINVAL, "decode NULL fails");
    like (err.text, "R: not an object", "decode NULL message");
}

/* Regression (fuzz_rv1): a nodelist string naming far more hosts than R has
 * ranks was expanded in full before the count was checked: a 100-byte R
 * with one rank cost ~0.3 s and ~60 MB in cairnd's loop. */
static void test_nodelist_not_expanded (void)
{
    struct cairn_error err = {{0}};
    struct timespec t0, t1;
    json_t *R;

    /* One host past the hostlist limit: before the fix the hostlist's own
     * limit spoke first, after expanding a million hosts. */
    R = load ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
              "\"children\":{\"core\":\"0\"}}],"
              "\"nodelist\":[\"n[0-1000000]\"]}}");
    errno = 0;
    is_errno_ptr (rv1_decode (R, &err), EINVAL,
                  "1 rank, nodelist n[0-1000000]: EINVAL");
    is_str (err.text, "R: execution.nodelist: more hosts than the 1 ranks",
            "refused for the rank count, not the hostlist limit");
    json_decref (R);

    R = load ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
              "\"children\":{\"core\":\"0\"}}],"
              "\"nodelist\":[\"n[0-999999]\"]}}");
    clock_gettime (CLOCK_MONOTONIC, &t0);
    errno = 0;
    is_errno_ptr (rv1_decode (R, &err), EINVAL,
                  "1 rank, nodelist n[0-999999]: EINVAL");
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ok (secs < 0.05, "and refused without expanding it (%.3f s)", secs);
    json_decref (R);
}

static void test_limits (void)
{
    struct cairn_error err;
    /* Exactly RV1_MAX_RANKS ranks, in two hostlists (one hostlist string
     * holds at most HOSTLIST_MAX_HOSTS). */
    json_t *R =
        load ("{\"version\":1,\"execution\":{\"R_lite\":["
              "{\"rank\":\"0-1048575\",\"children\":{\"core\":\"0\"}}],"
              "\"nodelist\":[\"n[0-999999]\",\"n[1000000-1048575]\"]}}");
    struct rv1 *r = rv1_decode (R, &err);

    ok (r != NULL, "RV1_MAX_RANKS ranks decode");
    is_int (rv1_nranks (r), RV1_MAX_RANKS, "RV1_MAX_RANKS ranks");
    is_str (rv1_hostname (r, 1048575), "n1048575", "host of the last rank");
    is_str (rv1_hostname (r, 999999), "n999999", "host of rank 999999");
    is_str (rv1_hostname (r, 1000000), "n1000000", "host of rank 1000000");

    /* A fragment that large splits its nodelist so that it decodes. */
    json_t *frag = rv1_fragment (r, rv1_ranks (r), &err);
    struct rv1 *f = frag ? rv1_decode (frag, &err) : NULL;
    ok (f != NULL, "a fragment of RV1_MAX_RANKS ranks decodes");
    is_int (json_array_size (json_object_get (
                json_object_get (frag, "execution"), "nodelist")),
            2, "its nodelist has 2 hostlists");
    is_str (rv1_hostname (f, 1048575), "n1048575", "host of its last rank");
    rv1_destroy (f);
    json_decref (frag);
    rv1_destroy (r);
    json_decref (R);

    /* Sparse ranks: a run per rank, lookups still work. */
    R = load ("{\"version\":1,\"execution\":{\"R_lite\":["
              "{\"rank\":\"10,1000,4000000000\",\"children\":{\"core\":\"1\"}},"
              "{\"rank\":\"3,999999999\",\"children\":{\"core\":\"2\"}}],"
              "\"nodelist\":[\"h[0-4]\"]}}");
    r = rv1_decode (R, &err);
    ok (r != NULL, "sparse ranks decode");
    is_str (rv1_hostname (r, 3), "h0", "host of rank 3");
    is_str (rv1_hostname (r, 999999999), "h3", "host of rank 999999999");
    is_str (rv1_hostname (r, 4000000000), "h4", "host of rank 4000000000");
    is_str (ids (rv1_cores (r, 999999999)), "2", "cores of rank 999999999");
    is_str (ids (rv1_cores (r, 1000)), "1", "cores of rank 1000");
    errno = 0;
    is_errno_ptr (rv1_cores (r, 11), ENOENT, "rank 11 is not there");
    rv1_destroy (r);
    json_decref (R);
}

static void test_create (void)
{
    struct cairn_error err;
    json_t *R = rv1_create (4, 2, "localhost", 0.);
    struct rv1 *r = R ? rv1_decode (R, &err) : NULL;

    ok (r != NULL, "rv1_create (4, 2) decodes");
    is_int (rv1_nranks (r), 4, "4 ranks");
    is_str (ids (rv1_ranks (r)), "0-3", "ranks 0-3");
    is_str (ids (rv1_cores (r, 3)), "0-1", "cores 0-1");
    is_str (ids (rv1_gpus (r, 3)), "", "no gpus");
    is_str (rv1_hostname (r, 3), "localhost", "every rank on localhost");
    ok (rv1_starttime (r) == 0 && rv1_expiration (r) == 0, "no times");
    rv1_destroy (r);
    json_decref (R);

    R = rv1_create (1, 1, "h1", 1700000000.5);
    r = R ? rv1_decode (R, &err) : NULL;
    ok (r != NULL, "rv1_create (1, 1) decodes");
    is_str (ids (rv1_ranks (r)), "0", "rank 0");
    is_str (ids (rv1_cores (r, 0)), "0", "core 0");
    ok (rv1_expiration (r) == 1700000000.5, "expiration kept");
    rv1_destroy (r);
    json_decref (R);

    struct {
        uint32_t n, c;
        const char *host;
        double exp;
        const char *what;
    } bad[] = {
        {0, 1, "h", 0., "no ranks"},
        {RV1_MAX_RANKS + 1, 1, "h", 0., "too many ranks"},
        {1, 0, "h", 0., "no cores"},
        {1, 1, NULL, 0., "NULL host"},
        {1, 1, "", 0., "empty host"},
        {1, 1, "a,b", 0., "two hosts"},
        {1, 1, "n[0-1]", 0., "a hostlist"},
        {1, 1, "h", -1., "negative expiration"},
        {1, 1, "h", NAN, "NaN expiration"},
        {1, 1, "h", INFINITY, "infinite expiration"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        is_errno_ptr (rv1_create (bad[i].n, bad[i].c, bad[i].host, bad[i].exp),
                      EINVAL, "rv1_create fails: %s", bad[i].what);
    }
}

int main (void)
{
    plan (NO_PLAN);
    test_basic ();
    test_mixed ();
    test_fragment ();
    test_bad ();
    test_limits ();
    test_nodelist_not_expanded ();
    test_create ();
    return done_testing ();
}
