/* t_idset.c - RFC 22 idsets: decode/encode, set operations */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idset.h"
#include "tap.h"

static struct idset *must_decode (const char *s)
{
    struct cairn_error err = {{0}};
    struct idset *set = idset_decode (s, &err);
    if (!set)
        BAIL_OUT ("idset_decode (\"%s\"): %s", s, err.text);
    return set;
}

/* Encode s, compare with want, free. */
static void is_set (const struct idset *s, const char *want, const char *what)
{
    char *got = idset_encode (s);
    is_str (got, want, "%s gives \"%s\"", what, want);
    free (got);
}

static const struct {
    const char *input;
    const char *encoded;
    size_t count;
} good[] = {
    {"", "", 0},
    {"[]", "", 0},
    {"0", "0", 1},
    {"[7]", "7", 1},
    {"[0-3]", "0-3", 4},
    {"0,1,2,3", "0-3", 4},
    {"0-1", "0-1", 2},
    {"1,3,5", "1,3,5", 3},
    {"1-3,4", "1-4", 4},
    {"1-2,3-4,6", "1-4,6", 5},
    {"1-3,5-6,42", "1-3,5-6,42", 6},
    {"[10,20-30,100]", "10,20-30,100", 13},
    {"4294967294", "4294967294", 1},
    {"4294967290-4294967294", "4294967290-4294967294", 5},
    {"0-4000000000", "0-4000000000", 4000000001u},
    {"0-4294967294", "0-4294967294", 4294967295u},
};

static void test_decode_good (void)
{
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        struct cairn_error err = {{0}};
        struct idset *s = idset_decode (good[i].input, &err);
        ok (s != NULL, "decode \"%s\" works", good[i].input);
        if (!s) {
            diag ("%s", err.text);
            continue;
        }
        is_int (idset_count (s), good[i].count, "\"%s\" has %zu ids",
                good[i].input, good[i].count);
        is_set (s, good[i].encoded, good[i].input);
        idset_destroy (s);
    }
}

static const struct {
    const char *input;
    const char *message;
} bad[] = {
    {"1-", "idset \"1-\": range at \"1-\" has no upper bound"},
    {"1-,3", "range at \"1-\" has no upper bound"},
    {"[1-]", "range at \"1-\" has no upper bound"},
    {"-1", "range at \"-1\" has no lower bound"},
    {"1,-3", "range at \"-3\" has no lower bound"},
    {"3-1", "range \"3-1\" is descending"},
    {"2-2", "range \"2-2\" must be written \"2\""},
    {"01", "id \"01\" has a leading zero"},
    {"00", "id \"00\" has a leading zero"},
    {"1-09", "id \"09\" has a leading zero"},
    {"1,1", "\"1\" is a duplicate"},
    {"1-3,1-3", "\"1-3\" is a duplicate"},
    {"3,1", "\"1\" is not in ascending order (after \"3\")"},
    {"5-9,1-3", "\"1-3\" is not in ascending order (after \"5-9\")"},
    {"1-3,2", "\"2\" overlaps \"1-3\""},
    {"1-3,3-5", "\"3-5\" overlaps \"1-3\""},
    {"1-3,1-5", "\"1-5\" overlaps \"1-3\""},
    {"1,,2", "empty entry at position 2"},
    {",", "empty entry at position 0"},
    {",1", "empty entry at position 0"},
    {"1,", "empty entry at position 2"},
    {"[1,]", "empty entry at position 3"},
    {"all", "unexpected character 'a' at position 0"},
    {"1a", "unexpected character 'a' at position 1"},
    {"1-a", "unexpected character 'a' at position 2"},
    {"+1", "unexpected character '+' at position 0"},
    {" 1", "unexpected character ' ' at position 0"},
    {"1 ", "unexpected character ' ' at position 1"},
    {"1, 2", "unexpected character ' ' at position 2"},
    {"1\t", "unexpected character 0x09 at position 1"},
    {"1-2-3", "unexpected character '-' at position 3"},
    {"1--2", "unexpected character '-' at position 2"},
    {"[1", "missing closing \"]\""},
    {"[", "missing closing \"]\""},
    {"[1,2", "missing closing \"]\""},
    {"1]", "unexpected character ']' at position 1"},
    {"]", "unexpected character ']' at position 0"},
    {"[[1]]", "unexpected character '[' at position 1"},
    {"[1]]", "unexpected character ']' at position 3"},
    {"[1],2", "unexpected character ',' at position 3"},
    {"[]]", "unexpected character ']' at position 1"},
    {"4294967295", "id \"4294967295\" is larger than 4294967294"},
    {"0-4294967295", "id \"4294967295\" is larger than 4294967294"},
    {"99999999999999999999", "id \"99999999999999999999\" is larger"},
    {"123456789012345678901234567890", "id \"123456789012345678901234...\""},
};

static void test_decode_bad (void)
{
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        struct cairn_error err = {{0}};
        errno = 0;
        is_errno_ptr (idset_decode (bad[i].input, &err), EINVAL,
                      "decode \"%s\" fails with EINVAL", bad[i].input);
        like (err.text, bad[i].message, "and says why");
    }

    struct cairn_error err = {{0}};
    errno = 0;
    is_errno_ptr (idset_decode (NULL, &err), EINVAL, "decode NULL: EINVAL");
    like (err.text, "idset is NULL", "and says why");
    errno = 0;
    is_errno_ptr (idset_decode ("1-", NULL), EINVAL,
                  "decode \"1-\" with err=NULL: EINVAL");

    /* A long input is clipped in the message, but the position is exact. */
    char big[400] = "";
    for (int i = 0; i < 100; i++)
        snprintf (big + strlen (big), sizeof (big) - strlen (big), "%d,",
                  2 * i);
    size_t pos = strlen (big);
    strcat (big, "x");
    char want[64];
    snprintf (want, sizeof (want), "unexpected character 'x' at position %zu",
              pos);
    errno = 0;
    is_errno_ptr (idset_decode (big, &err), EINVAL, "decode long bad input");
    like (err.text, "...\": ", "message clips the input");
    like (err.text, want, "message names the exact position");
}

static void test_empty (void)
{
    struct idset *s = idset_create ();
    ok (s != NULL, "create works");
    ok (idset_empty (s), "new set is empty");
    is_int (idset_count (s), 0, "count is 0");
    is_int (idset_first (s), IDSET_INVALID_ID, "first of empty is invalid");
    is_int (idset_last (s), IDSET_INVALID_ID, "last of empty is invalid");
    is_int (idset_next (s, 0), IDSET_INVALID_ID, "next of empty is invalid");
    is_int (idset_nth (s, 0), IDSET_INVALID_ID, "nth of empty is invalid");
    ok (!idset_test (s, 0), "0 is not in empty set");
    is_int (idset_range_count (s), 0, "no runs");
    is_int (idset_clear (s, 3), 0, "clearing from empty set is ok");
    is_set (s, "", "empty set");
    idset_destroy (s);

    ok (idset_empty (NULL) && idset_count (NULL) == 0 && !idset_test (NULL, 1),
        "NULL set reads as empty");
    errno = 0;
    is_errno (idset_set (NULL, 1), EINVAL, "set on NULL: EINVAL");
    errno = 0;
    is_errno_ptr (idset_encode (NULL), EINVAL, "encode NULL: EINVAL");
    errno = 0;
    is_errno_ptr (idset_copy (NULL), EINVAL, "copy NULL: EINVAL");
    errno = ENOENT;
    idset_destroy (NULL);
    is_int (errno, ENOENT, "destroy NULL preserves errno");
}

static void test_set (void)
{
    struct idset *s = idset_create ();
    if (!s)
        BAIL_OUT ("idset_create failed");

    ok (idset_set (s, 5) == 0 && idset_set (s, 3) == 0, "set 5, 3");
    is_set (s, "3,5", "5 then 3");
    idset_set (s, 4);
    is_set (s, "3-5", "setting 4 joins 3 and 5");
    idset_set (s, 1);
    is_set (s, "1,3-5", "setting 1 before");
    idset_set (s, 2);
    is_set (s, "1-5", "setting 2 joins on both sides");
    idset_set (s, 3);
    is_set (s, "1-5", "setting a present id changes nothing");
    idset_set (s, 6);
    is_set (s, "1-6", "setting last+1 extends the run");
    idset_set (s, 10);
    idset_set (s, 8);
    is_set (s, "1-6,8,10", "set 10 then 8");
    idset_set (s, 0);
    is_set (s, "0-6,8,10", "setting 0 extends the first run");
    is_int (idset_set (s, IDSET_MAX_ID), 0, "set IDSET_MAX_ID works");
    ok (idset_test (s, IDSET_MAX_ID), "IDSET_MAX_ID is in the set");
    is_int (idset_last (s), IDSET_MAX_ID, "and is the last id");
    errno = 0;
    is_errno (idset_set (s, IDSET_INVALID_ID), EINVAL,
              "set IDSET_INVALID_ID: EINVAL");
    is_set (s, "0-6,8,10,4294967294", "failed set changes nothing");
    idset_destroy (s);

    s = must_decode ("1,3,5,7,20");
    is_int (idset_range_set (s, 2, 6), 0, "range_set 2-6");
    is_set (s, "1-7,20", "range_set swallows several runs");
    idset_range_set (s, 9, 12);
    is_set (s, "1-7,9-12,20", "range_set in a gap");
    idset_range_set (s, 8, 8);
    is_set (s, "1-12,20", "range_set fills a gap of one");
    idset_range_set (s, 13, 19);
    is_set (s, "1-20", "range_set fills the last gap exactly");
    idset_range_set (s, 0, 30);
    is_set (s, "0-30", "range_set over everything");
    idset_range_set (s, 5, 6);
    is_set (s, "0-30", "range_set inside a run changes nothing");
    idset_range_set (s, 31, 40);
    is_set (s, "0-40", "range_set touching the end");
    errno = 0;
    is_errno (idset_range_set (s, 5, 4), EINVAL, "range_set lo > hi: EINVAL");
    errno = 0;
    is_errno (idset_range_set (s, 5, IDSET_INVALID_ID), EINVAL,
              "range_set hi > IDSET_MAX_ID: EINVAL");
    is_set (s, "0-40", "failed range_set changes nothing");
    idset_destroy (s);
}

static void test_clear (void)
{
    struct idset *s = must_decode ("1-5");

    is_int (idset_clear (s, 3), 0, "clear 3");
    is_set (s, "1-2,4-5", "clear inside a run splits it");
    idset_clear (s, 1);
    is_set (s, "2,4-5", "clear the start of a run");
    idset_clear (s, 5);
    is_set (s, "2,4", "clear the end of a run");
    idset_clear (s, 2);
    is_set (s, "4", "clear a run of one");
    is_int (idset_clear (s, 100), 0, "clearing an absent id is ok");
    is_int (idset_clear (s, 3), 0, "clearing an id in a gap is ok");
    is_set (s, "4", "and changes nothing");
    errno = 0;
    is_errno (idset_clear (s, IDSET_INVALID_ID), EINVAL,
              "clear IDSET_INVALID_ID: EINVAL");
    idset_clear (s, 4);
    ok (idset_empty (s), "clearing the last id empties the set");
    idset_destroy (s);

    s = must_decode ("0-4294967294");
    idset_clear (s, 0);
    idset_clear (s, IDSET_MAX_ID);
    idset_clear (s, 2000000000);
    is_set (s, "1-1999999999,2000000001-4294967293", "clear in a huge run");
    is_int (idset_count (s), 4294967292u, "count of the huge set");
    idset_destroy (s);
}

static void test_query (void)
{
    struct idset *s = must_decode ("1-3,7");
    uint32_t want[] = {1, 2, 3, 7};
    size_t n = 0;
    int in_order = 1;
    uint32_t lo, hi;

    for (uint32_t id = idset_first (s); id != IDSET_INVALID_ID;
         id = idset_next (s, id)) {
        if (n >= 4 || id != want[n])
            in_order = 0;
        n++;
    }
    ok (in_order && n == 4, "first/next visit 1 2 3 7");
    for (size_t i = 0; i < 4; i++)
        is_int (idset_nth (s, i), want[i], "nth %zu is %u", i, want[i]);
    is_int (idset_nth (s, 4), IDSET_INVALID_ID, "nth past the end: invalid");
    is_int (idset_next (s, 0), 1, "next before the first id");
    is_int (idset_next (s, 4), 7, "next from a gap");
    is_int (idset_next (s, 7), IDSET_INVALID_ID, "next after the last id");
    is_int (idset_next (s, IDSET_MAX_ID), IDSET_INVALID_ID,
            "next after IDSET_MAX_ID");
    is_int (idset_next (s, IDSET_INVALID_ID), IDSET_INVALID_ID,
            "next after IDSET_INVALID_ID");
    is_int (idset_last (s), 7, "last");
    is_int (idset_range_count (s), 2, "two runs");
    ok (idset_range_get (s, 1, &lo, &hi) == 0 && lo == 7 && hi == 7,
        "second run is 7-7");
    errno = 0;
    is_errno (idset_range_get (s, 2, &lo, &hi), EINVAL,
              "range_get past the end: EINVAL");
    idset_destroy (s);

    s = must_decode ("4294967293-4294967294");
    is_int (idset_next (s, 4294967293u), IDSET_MAX_ID, "next reaches the max");
    is_int (idset_nth (s, 1), IDSET_MAX_ID, "nth reaches the max");
    idset_destroy (s);

    /* Many runs: binary search must agree with parity everywhere. */
    s = idset_create ();
    for (uint32_t id = 0; id < 2000; id += 2)
        idset_set (s, id);
    int parity_ok = 1;
    for (uint32_t id = 0; id < 2001; id++) {
        if (idset_test (s, id) != (id % 2 == 0 && id < 2000))
            parity_ok = 0;
    }
    ok (parity_ok, "test finds every even id of 1000 runs, and no odd one");
    is_int (idset_count (s), 1000, "count of 1000 runs");
    is_int (idset_nth (s, 500), 1000, "nth in 1000 runs");
    is_int (idset_next (s, 999), 1000, "next from odd id");
    is_int (idset_next (s, 1000), 1002, "next from even id");
    idset_destroy (s);
}

static void test_copy_equal (void)
{
    struct idset *a = must_decode ("0-3");
    struct idset *b = must_decode ("0,1,2,3");
    struct idset *c = must_decode ("0-4");
    struct idset *e = idset_create ();
    struct idset *cpy = idset_copy (a);

    ok (idset_equal (a, b), "0-3 equals 0,1,2,3");
    ok (!idset_equal (a, c), "0-3 differs from 0-4");
    ok (!idset_equal (a, e), "0-3 differs from the empty set");
    ok (idset_equal (e, NULL), "NULL equals the empty set");
    ok (cpy && idset_equal (a, cpy), "copy is equal");
    idset_set (cpy, 9);
    is_set (a, "0-3", "changing the copy leaves the original");
    idset_set (b, 4);
    ok (idset_equal (b, c), "equal after set");
    idset_clear (b, 4);
    ok (idset_equal (a, b), "equal after clear");
    idset_destroy (a);
    idset_destroy (b);
    idset_destroy (c);
    idset_destroy (e);
    idset_destroy (cpy);
}

enum op { ADD, SUBTRACT, INTERSECT };

static const struct {
    enum op op;
    const char *a, *b, *result;
} ops[] = {
    {ADD, "", "", ""},
    {ADD, "1-3", "", "1-3"},
    {ADD, "", "1-3", "1-3"},
    {ADD, "1-3", "4-6", "1-6"},
    {ADD, "1,5,9", "2-4,6-8", "1-9"},
    {ADD, "0-10", "3-4", "0-10"},
    {ADD, "1-2,10-11", "5", "1-2,5,10-11"},
    {ADD, "5", "1-2,10-11", "1-2,5,10-11"},
    {ADD, "1-3,8-9", "2-8", "1-9"},
    {ADD, "0", "4294967294", "0,4294967294"},
    {SUBTRACT, "1-10", "3-4", "1-2,5-10"},
    {SUBTRACT, "1-10", "1-10", ""},
    {SUBTRACT, "1-10", "0-20", ""},
    {SUBTRACT, "1-10", "", "1-10"},
    {SUBTRACT, "", "1-3", ""},
    {SUBTRACT, "1-10,20-30", "5-25", "1-4,26-30"},
    {SUBTRACT, "1-10", "1,10", "2-9"},
    {SUBTRACT, "1-10", "2,4,6,8", "1,3,5,7,9-10"},
    {SUBTRACT, "1-3,5-7", "3-5", "1-2,6-7"},
    {SUBTRACT, "5-10", "1-2,20-30", "5-10"},
    {SUBTRACT, "1,3,5,7", "2-6", "1,7"},
    {SUBTRACT, "0-4294967294", "0", "1-4294967294"},
    {SUBTRACT, "0-4294967294", "4294967294", "0-4294967293"},
    {INTERSECT, "1-10", "5-15", "5-10"},
    {INTERSECT, "1-3", "4-6", ""},
    {INTERSECT, "", "1", ""},
    {INTERSECT, "1-10,20-30", "5-25", "5-10,20-25"},
    {INTERSECT, "0-100", "2,4,50-60", "2,4,50-60"},
    {INTERSECT, "1,3,5", "1-5", "1,3,5"},
    {INTERSECT, "1-5,7-9", "5-7", "5,7"},
    {INTERSECT, "0-4294967294", "4294967294", "4294967294"},
};

static void test_ops (void)
{
    static const char *name[] = {"add", "subtract", "intersect"};

    for (size_t i = 0; i < sizeof (ops) / sizeof (ops[0]); i++) {
        struct idset *a = must_decode (ops[i].a);
        struct idset *b = must_decode (ops[i].b);
        struct idset *r = NULL;
        char what[128];
        int rc = 0;

        snprintf (what, sizeof (what), "%s (\"%s\", \"%s\")", name[ops[i].op],
                  ops[i].a, ops[i].b);
        if (ops[i].op == ADD)
            rc = idset_add (a, b);
        else if (ops[i].op == SUBTRACT)
            rc = idset_subtract (a, b);
        else if (!(r = idset_intersect (a, b)))
            rc = -1;
        ok (rc == 0, "%s works", what);
        is_set (r ? r : a, ops[i].result, what);
        is_set (b, ops[i].b, "second operand unchanged");
        idset_destroy (a);
        idset_destroy (b);
        idset_destroy (r);
    }

    struct idset *a = must_decode ("1-3,7");
    ok (idset_add (a, a) == 0, "add a set to itself");
    is_set (a, "1-3,7", "a | a");
    ok (idset_subtract (a, a) == 0, "subtract a set from itself");
    ok (idset_empty (a), "a & ~a is empty");
    errno = 0;
    is_errno (idset_add (a, NULL), EINVAL, "add NULL: EINVAL");
    errno = 0;
    is_errno (idset_subtract (NULL, a), EINVAL, "subtract from NULL: EINVAL");
    errno = 0;
    is_errno_ptr (idset_intersect (a, NULL), EINVAL, "intersect NULL: EINVAL");
    idset_destroy (a);
}

static const struct {
    const char *a, *b;
    bool subset;
} subsets[] = {
    {"", "", true},           {"", "1", true},
    {"1", "", false},         {"2-3", "1-5", true},
    {"1-5", "2-3", false},    {"1,5", "1-5", true},
    {"1-5", "1,5", false},    {"1-3,7", "0-4,6-8", true},
    {"1-3,5", "1-4", false},  {"10", "1-5", false},
    {"0-5", "1-5", false},    {"1-5", "1-5", true},
    {"3,9", "1-4,8-9", true}, {"3,9", "1-4,10", false},
};

static void test_subset (void)
{
    for (size_t i = 0; i < sizeof (subsets) / sizeof (subsets[0]); i++) {
        struct idset *a = must_decode (subsets[i].a);
        struct idset *b = must_decode (subsets[i].b);
        ok (idset_is_subset (a, b) == subsets[i].subset, "\"%s\" %s \"%s\"",
            subsets[i].a,
            subsets[i].subset ? "is a subset of" : "is not a subset of",
            subsets[i].b);
        idset_destroy (a);
        idset_destroy (b);
    }
}

/* Random operations on small ids, checked against a plain bool array, and
 * every result round-tripped through encode/decode. */
#define REF_N 96

static void ref_encode (const bool *ref, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < REF_N;) {
        if (!ref[i]) {
            i++;
            continue;
        }
        int j = i;
        while (j + 1 < REF_N && ref[j + 1])
            j++;
        len +=
            (size_t)snprintf (buf + len, size - len, "%s%d", len ? "," : "", i);
        if (j > i)
            len += (size_t)snprintf (buf + len, size - len, "-%d", j);
        i = j + 1;
    }
}

static struct idset *random_set (bool *ref)
{
    struct idset *s = idset_create ();
    for (int i = 0; i < REF_N; i++) {
        ref[i] = rand () % 3 == 0;
        if (ref[i])
            idset_set (s, (uint32_t)i);
    }
    return s;
}

static void test_random (void)
{
    bool ref[REF_N], ref2[REF_N];
    char want[1024];
    int failures = 0;

    srand (22);
    for (int round = 0; round < 2000; round++) {
        struct idset *s = random_set (ref);
        struct idset *t = random_set (ref2);
        struct idset *r = NULL;
        int op = rand () % 5;
        uint32_t lo = (uint32_t)(rand () % REF_N);
        uint32_t hi = lo + (uint32_t)(rand () % (REF_N - lo));

        if (op == 0) {
            idset_range_set (s, lo, hi);
            for (uint32_t i = lo; i <= hi; i++)
                ref[i] = true;
        } else if (op == 1) {
            for (uint32_t i = lo; i <= hi; i++) {
                idset_clear (s, i);
                ref[i] = false;
            }
        } else if (op == 2) {
            idset_add (s, t);
            for (int i = 0; i < REF_N; i++)
                ref[i] = ref[i] || ref2[i];
        } else if (op == 3) {
            idset_subtract (s, t);
            for (int i = 0; i < REF_N; i++)
                ref[i] = ref[i] && !ref2[i];
        } else {
            r = idset_intersect (s, t);
            idset_destroy (s);
            s = r;
            for (int i = 0; i < REF_N; i++)
                ref[i] = ref[i] && ref2[i];
        }
        ref_encode (ref, want, sizeof (want));
        char *got = idset_encode (s);
        struct idset *back = got ? idset_decode (got, NULL) : NULL;
        size_t count = 0;
        for (int i = 0; i < REF_N; i++) {
            count += ref[i];
            if (idset_test (s, (uint32_t)i) != ref[i])
                failures++;
        }
        if (!got || strcmp (got, want) != 0 || idset_count (s) != count ||
            !idset_equal (s, back)) {
            if (failures++ < 5)
                diag ("round %d op %d: want \"%s\", got \"%s\"", round, op,
                      want, got ? got : "(null)");
        }
        free (got);
        idset_destroy (back);
        idset_destroy (s);
        idset_destroy (t);
    }
    is_int (failures, 0, "2000 random operations agree with a bool array");
}

int main (void)
{
    plan (NO_PLAN);
    test_decode_good ();
    test_decode_bad ();
    test_empty ();
    test_set ();
    test_clear ();
    test_query ();
    test_copy_equal ();
    test_ops ();
    test_subset ();
    test_random ();
    return done_testing ();
}
