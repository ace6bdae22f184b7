/* t_jobid.c - decimal and F58 job ids. */
#include <stdint.h>

#include "tap.h"
#include "core/jobid.h"

/* Base 58 values worked out by hand: 57 = z, 58 = 1*58 + 0 = "21",
 * 1000 = 17*58 + 14 = "JF", 3363 = 57*58 + 57 = "zz", 58^2 = "211".
 */
static const struct {
    uint64_t id;
    const char *f58; // without prefix
} known[] = {
    {0, "1"},
    {1, "2"},
    {9, "A"},
    {57, "z"},
    {58, "21"},
    {1000, "JF"},
    {3363, "zz"},
    {3364, "211"},
    {123456789, "BukQL"},
    {430804206899405824ULL, "21111111111"}, // 58^10
    {UINT64_MAX, "jpXCZedGfVQ"},
};

static const struct {
    const char *s;
    const char *msg;
} bad[] = {
    {"", "empty"},
    {"f", "no digits after the F58 prefix"},
    {"\xc6\x92", "no digits after the F58 prefix"},
    {"f0", "not a base58 digit"},
    {"fO", "not a base58 digit"},
    {"fI", "not a base58 digit"},
    {"fl", "not a base58 digit"},
    {"f2 ", "not a base58 digit"},
    {"f-1", "not a base58 digit"},
    {"F21", "expected decimal digits or F58"},
    {"\xc6\x92"
     "0",
     "not a base58 digit"},
    {"\xc6\x92\xc6\x92"
     "2",
     "not a base58 digit"},
    {"\xc6", "expected decimal digits or F58"},
    {"-1", "expected decimal digits or F58"},
    {"+1", "expected decimal digits or F58"},
    {" 1", "expected decimal digits or F58"},
    {"1 ", "expected decimal digits or F58"},
    {"12abc", "expected decimal digits or F58"},
    {"0x10", "expected decimal digits or F58"},
    {"1.0", "expected decimal digits or F58"},
    {"18446744073709551616", "larger than 2^64-1"},
    {"99999999999999999999999", "larger than 2^64-1"},
    {"fjpXCZedGfVR", "larger than 2^64-1"},
    {"f111111111111jpXCZedGfVR", "larger than 2^64-1"},
    {"fzzzzzzzzzzzz", "larger than 2^64-1"},
};

static void test_known (void)
{
    char buf[JOBID_STRLEN];
    char want[JOBID_STRLEN];
    struct cairn_error err;
    uint64_t id;

    for (size_t i = 0; i < sizeof (known) / sizeof (known[0]); i++) {
        snprintf (want, sizeof (want), "\xc6\x92%s", known[i].f58);
        ok (jobid_encode_f58 (known[i].id, buf, sizeof (buf)) == 0,
            "encode %ju works", (uintmax_t)known[i].id);
        is_str (buf, want, "encode %ju", (uintmax_t)known[i].id);

        snprintf (want, sizeof (want), "f%s", known[i].f58);
        ok (jobid_encode_f58_ascii (known[i].id, buf, sizeof (buf)) == 0,
            "encode ascii %ju works", (uintmax_t)known[i].id);
        is_str (buf, want, "encode ascii %ju", (uintmax_t)known[i].id);

        id = 42;
        ok (jobid_parse (want, &id, &err) == 0 && id == known[i].id, "parse %s",
            want);
        snprintf (want, sizeof (want), "%ju", (uintmax_t)known[i].id);
        id = 42;
        ok (jobid_parse (want, &id, &err) == 0 && id == known[i].id,
            "parse decimal %s", want);
    }
    ok (jobid_parse ("f1121", &id, NULL) == 0 && id == 58,
        "leading base58 zeros are accepted");
    ok (jobid_parse ("00058", &id, NULL) == 0 && id == 58,
        "leading decimal zeros are accepted");
    ok (jobid_parse ("58", NULL, NULL) == 0, "id and err may be NULL");
}

static void test_bad (void)
{
    struct cairn_error err;
    uint64_t id;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        id = 42;
        errno = 0;
        err.text[0] = '\0';
        is_errno (jobid_parse (bad[i].s, &id, &err), EINVAL,
                  "parse bad[%zu] fails", i);
        like (err.text, bad[i].msg, "parse bad[%zu] message", i);
        like (err.text, "invalid job id", "parse bad[%zu] says what", i);
        is_int (id, 42, "parse bad[%zu] leaves id alone", i);
    }
    like (err.text, "\"fzzzzzzzzzzzz\"", "message quotes the string");
    errno = 0;
    is_errno (jobid_parse (NULL, &id, &err), EINVAL, "parse NULL fails");
    like (err.text, "(null)", "parse NULL message");
}

static void test_buffers (void)
{
    char buf[JOBID_STRLEN];

    /* "ƒ21" is 4 bytes + NUL, "f21" 3 + NUL. */
    errno = 0;
    is_errno (jobid_encode_f58 (58, buf, 4), EOVERFLOW, "short buf fails");
    is_str (buf, "", "short buf is left empty");
    is_int (jobid_encode_f58 (58, buf, 5), 0, "exact buf works");
    is_str (buf,
            "\xc6\x92"
            "21",
            "exact buf");
    errno = 0;
    is_errno (jobid_encode_f58_ascii (58, buf, 3), EOVERFLOW,
              "short ascii buf fails");
    is_int (jobid_encode_f58_ascii (58, buf, 4), 0, "exact ascii buf works");
    errno = 0;
    is_errno (jobid_encode_f58 (1, NULL, 10), EINVAL, "NULL buf fails");
    errno = 0;
    is_errno (jobid_encode_f58 (1, buf, 0), EOVERFLOW, "len 0 fails");
    ok (jobid_encode_f58 (UINT64_MAX, buf, sizeof (buf)) == 0 &&
            strlen (buf) < JOBID_STRLEN,
        "JOBID_STRLEN holds the longest id");
}

/* Round trips over 0, the powers of two and of 58 and their neighbours,
 * and a pseudo-random sweep. */
static int roundtrip (uint64_t id)
{
    char buf[JOBID_STRLEN];
    uint64_t back;

    if (jobid_encode_f58 (id, buf, sizeof (buf)) < 0 ||
        jobid_parse (buf, &back, NULL) < 0 || back != id)
        return -1;
    if (jobid_encode_f58_ascii (id, buf, sizeof (buf)) < 0 ||
        jobid_parse (buf, &back, NULL) < 0 || back != id)
        return -1;
    snprintf (buf, sizeof (buf), "%ju", (uintmax_t)id);
    if (jobid_parse (buf, &back, NULL) < 0 || back != id)
        return -1;
    return 0;
}

static void test_roundtrip (void)
{
    int fails = 0;
    int count = 0;
    uint64_t x = 88172645463325252ULL;

    for (int i = 0; i < 64; i++) {
        uint64_t p = 1ULL << i;
        fails += roundtrip (p - 1) < 0;
        fails += roundtrip (p) < 0;
        fails += roundtrip (p + 1) < 0;
        count += 3;
    }
    for (uint64_t p = 1; p <= UINT64_MAX / 58; p *= 58) {
        fails += roundtrip (p * 58 - 1) < 0;
        fails += roundtrip (p * 58) < 0;
        count += 2;
    }
    for (uint64_t id = 0; id < 5000; id++, count++)
        fails += roundtrip (id) < 0;
    for (int i = 0; i < 20000; i++, count++) {
        x ^= x << 13; // xorshift64
        x ^= x >> 7;
        x ^= x << 17;
        fails += roundtrip (x) < 0;
    }
    fails += roundtrip (UINT64_MAX) < 0;
    fails += roundtrip (UINT64_MAX - 1) < 0;
    count += 2;
    is_int (fails, 0, "%d ids round trip in F58, ASCII F58 and decimal", count);
}

int main (void)
{
    plan (NO_PLAN);
    test_known ();
    test_bad ();
    test_buffers ();
    test_roundtrip ();
    return done_testing ();
}
