/* t_hostlist.c - RFC 29 hostlists: decode/encode, limits, append */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostlist.h"
#include "tap.h"

/* The hosts of hl joined by spaces, in a static buffer. */
static const char *joined (const struct hostlist *hl)
{
    static char buf[4096];
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < hostlist_count (hl); i++)
        len += (size_t)snprintf (buf + len, sizeof (buf) - len, "%s%s",
                                 i ? " " : "", hostlist_nth (hl, i));
    return buf;
}

/* Both lists hold the same hosts in the same order. */
static int same_hosts (const struct hostlist *a, const struct hostlist *b)
{
    if (hostlist_count (a) != hostlist_count (b))
        return 0;
    for (size_t i = 0; i < hostlist_count (a); i++) {
        if (strcmp (hostlist_nth (a, i), hostlist_nth (b, i)) != 0)
            return 0;
    }
    return 1;
}

static const struct {
    const char *input;
    const char *hosts;
    const char *encoded;
} good[] = {
    {"", "", ""},
    {"login1", "login1", "login1"},
    {"node[0-3,7],login1", "node0 node1 node2 node3 node7 login1",
     "node[0-3,7],login1"},
    {"node0,node1,node2,node5,login1", "node0 node1 node2 node5 login1",
     "node[0-2,5],login1"},
    {"n[08-10]", "n08 n09 n10", "n[08-10]"},
    {"n[8-10]", "n8 n9 n10", "n[8-10]"},
    {"n[098-101]", "n098 n099 n100 n101", "n[098-101]"},
    {"n[0099-0100]", "n0099 n0100", "n[0099-0100]"},
    {"n[99-100]", "n99 n100", "n[99-100]"},
    {"x[007]", "x007", "x007"},
    {"n[2-2]", "n2", "n2"},
    {"n[1-2]-ib", "n1-ib n2-ib", "n[1-2]-ib"},
    {"node1.cluster,node2.cluster", "node1.cluster node2.cluster",
     "node[1-2].cluster"},
    {"[1-3]", "1 2 3", "[1-3]"},
    {"n[3,1,2]", "n3 n1 n2", "n[3,1-2]"},
    {"n[1,01,001]", "n1 n01 n001", "n[1,01,001]"},
    {"a,b,a", "a b a", "a,b,a"},
    {"n1,n1", "n1 n1", "n[1,1]"},
    {"rack1node[1-2]", "rack1node1 rack1node2", "rack1node[1-2]"},
    {"n[9-10],n[11-12]", "n9 n10 n11 n12", "n[9-12]"},
    {"n[0-1],m[0-1],n[2]", "n0 n1 m0 m1 n2", "n[0-1],m[0-1],n2"},
    {"n[4294967294-4294967295]", "n4294967294 n4294967295",
     "n[4294967294-4294967295]"},
    {"a-b_c.d~e", "a-b_c.d~e", "a-b_c.d~e"},
};

static void test_decode_good (void)
{
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        struct cairn_error err = {{0}};
        struct hostlist *hl = hostlist_decode (good[i].input, &err);
        ok (hl != NULL, "decode \"%s\" works", good[i].input);
        if (!hl) {
            diag ("%s", err.text);
            continue;
        }
        is_str (joined (hl), good[i].hosts, "\"%s\" expands", good[i].input);
        char *s = hostlist_encode (hl);
        is_str (s, good[i].encoded, "\"%s\" encodes back", good[i].input);
        free (s);
        hostlist_destroy (hl);
    }
}

static char long_name[300];
static char long_prefix_range[300];
static char long_plain[300];
static char wide_number[400];

static const struct {
    const char *input;
    const char *message;
} bad[] = {
    {"node[3-1]", "hostlist \"node[3-1]\": range \"3-1\" is descending"},
    {"node[", "missing \"]\" for \"[\" at position 4"},
    {"node[1-3", "missing \"]\" for \"[\" at position 4"},
    {"a,n[1,2", "missing \"]\" for \"[\" at position 3"},
    {"node[a]", "unexpected character 'a' at position 5"},
    {"node[1-3]a[4]", "entry \"node[1-3]a[4]\" has more than one bracket"},
    {"x,n[1][2]", "entry \"n[1][2]\" has more than one bracket group"},
    {"a,,b", "empty entry at position 2"},
    {",", "empty entry at position 0"},
    {",a", "empty entry at position 0"},
    {"a,", "empty entry at position 2"},
    {"node[]", "empty brackets at position 4"},
    {"node[1,]", "empty range at position 7"},
    {"node[,1]", "empty range at position 5"},
    {"node[1,,2]", "empty range at position 7"},
    {"node[-1]", "range \"-1\" has no lower bound"},
    {"node[1-]", "range \"1-\" has no upper bound"},
    {"node[1-,3]", "range \"1-\" has no upper bound"},
    {"node[1-2-3]", "unexpected character '-' at position 8"},
    {"node[1--3]", "unexpected character '-' at position 7"},
    {"node]", "unexpected character ']' at position 4"},
    {"node[1]]", "unexpected character ']' at position 7"},
    {"node 1", "unexpected character ' ' at position 4"},
    {"n[1 ]", "unexpected character ' ' at position 3"},
    {"n\001", "unexpected character 0x01 at position 1"},
    {"n\303\251", "unexpected character 0xc3 at position 1"},
    {"n[99999999999]", "number \"99999999999\" is too large"},
    {"n[0-1000000]", "too many hosts (limit 1000000)"},
    {"n[0-999999],x", "too many hosts (limit 1000000)"},
    {"n[0-4294967295]", "too many hosts (limit 1000000)"},
    {long_prefix_range, "too large (limit 67108864 bytes)"},
    {long_plain, "is longer than 255 characters"},
    {long_name, "is longer than 255 characters"},
    {wide_number, "is longer than 255 characters"},
};

static void test_decode_bad (void)
{
    /* 240 + "[0-999999]": short names, but 1M of them are ~250 MB. */
    memset (long_prefix_range, 'x', 240);
    strcpy (long_prefix_range + 240, "[0-999999]");
    memset (long_plain, 'y', 256);
    memset (long_name, 'z', 250);
    strcpy (long_name + 250, "[1-100000]");
    strcpy (wide_number, "w[");
    memset (wide_number + 2, '0', 300);
    strcpy (wide_number + 302, "1]");

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        struct cairn_error err = {{0}};
        errno = 0;
        is_errno_ptr (hostlist_decode (bad[i].input, &err), EINVAL,
                      "decode \"%.20s\" fails with EINVAL", bad[i].input);
        like (err.text, bad[i].message, "and says why");
    }

    struct cairn_error err = {{0}};
    errno = 0;
    is_errno_ptr (hostlist_decode (NULL, &err), EINVAL, "decode NULL: EINVAL");
    like (err.text, "hostlist is NULL", "and says why");
    errno = 0;
    is_errno_ptr (hostlist_decode ("n[", NULL), EINVAL,
                  "decode \"n[\" with err=NULL: EINVAL");
}

static void test_limits (void)
{
    struct cairn_error err = {{0}};
    struct hostlist *hl = hostlist_decode ("n[0-999998],x", &err);

    ok (hl != NULL, "exactly HOSTLIST_MAX_HOSTS hosts decode");
    if (!hl) {
        diag ("%s", err.text);
        return;
    }
    is_int (hostlist_count (hl), HOSTLIST_MAX_HOSTS, "count is the limit");
    is_str (hostlist_nth (hl, 999998), "n999998", "host 999998");
    is_str (hostlist_nth (hl, 999999), "x", "last host");
    is_str (hostlist_nth (hl, 1000000), NULL, "nth past the end is NULL");
    char *s = hostlist_encode (hl);
    is_str (s, "n[0-999998],x", "a million hosts encode back");
    free (s);
    hostlist_destroy (hl);

    char name[HOSTLIST_HOST_MAX + 1];
    memset (name, 'a', HOSTLIST_HOST_MAX);
    name[HOSTLIST_HOST_MAX] = '\0';
    hl = hostlist_decode (name, &err);
    ok (hl && hostlist_count (hl) == 1,
        "a host name of HOSTLIST_HOST_MAX characters decodes");
    hostlist_destroy (hl);
}

/* Regression (fuzz_rv1): a short string naming a million hosts was
 * expanded in full before any caller could refuse it; decode_max stops at
 * its limit before expanding the run that would pass it. */
static void test_decode_max_stops_before_expanding (void)
{
    struct cairn_error err = {{0}};
    struct hostlist *hl;

    errno = 0;
    is_errno_ptr (hostlist_decode_max ("n[0-999999]", 4, &err), E2BIG,
                  "decode_max (\"n[0-999999]\", 4) fails with E2BIG");
    is_str (err.text, "hostlist \"n[0-999999]\": too many hosts (limit 4)",
            "and names the limit");
    errno = 0;
    is_errno_ptr (hostlist_decode_max ("a,b,c,d,e", 4, NULL), E2BIG,
                  "plain names count too: the 5th of limit 4 fails");
    hl = hostlist_decode_max ("a,n[1-2],b", 4, &err);
    ok (hl && hostlist_count (hl) == 4, "exactly the limit decodes");
    hostlist_destroy (hl);
    hl = hostlist_decode_max ("", 0, &err);
    ok (hl && hostlist_count (hl) == 0, "\"\" decodes with limit 0");
    hostlist_destroy (hl);
    errno = 0;
    is_errno_ptr (hostlist_decode_max ("n[", 4, &err), EINVAL,
                  "other errors are still EINVAL");
    errno = 0;
    is_errno_ptr (hostlist_decode_max ("n[0-1000000]", (size_t)-1, &err), E2BIG,
                  "a limit above HOSTLIST_MAX_HOSTS is that limit");
    like (err.text, "too many hosts (limit 1000000)", "and says so");
}

/* Lists built with append: encoding, and decode (encode (hl)) == hl. */
static const struct {
    const char *hosts[6];
    const char *encoded;
} built[] = {
    {{"n09", "n10"}, "n[09-10]"},
    {{"n9", "n010"}, "n[9,010]"},
    {{"n08", "n9"}, "n[08,9]"},
    {{"n1", "n2", "login", "n3"}, "n[1-2],login,n3"},
    {{"n1", "n01"}, "n[1,01]"},
    {{"n99999999999", "n100000000000"}, "n99999999999,n100000000000"},
    {{"n4294967295", "n4294967296"}, "n4294967295,n4294967296"},
    {{"a-1", "a-2"}, "a-[1-2]"},
    {{"10", "11", "13"}, "[10-11,13]"},
    {{"r1n1", "r1n2", "r2n1", "r2n2"}, "r1n[1-2],r2n[1-2]"},
    {{"n1x", "n2x", "n3y"}, "n[1-2]x,n3y"},
    {{"n5", "n4", "n3"}, "n[5,4,3]"},
    {{"login", "login"}, "login,login"},
};

static void test_append_encode (void)
{
    for (size_t i = 0; i < sizeof (built) / sizeof (built[0]); i++) {
        struct hostlist *hl = hostlist_create ();
        for (size_t j = 0; j < 6 && built[i].hosts[j]; j++) {
            if (hostlist_append (hl, built[i].hosts[j]) < 0)
                BAIL_OUT ("append %s failed", built[i].hosts[j]);
        }
        char *s = hostlist_encode (hl);
        is_str (s, built[i].encoded, "encode %s", joined (hl));
        struct hostlist *back = s ? hostlist_decode (s, NULL) : NULL;
        ok (back && same_hosts (hl, back), "and decodes back to the same");
        free (s);
        hostlist_destroy (back);
        hostlist_destroy (hl);
    }

    struct hostlist *hl = hostlist_create ();
    static const struct {
        const char *name;
        const char *label;
    } invalid[] = {
        {"", "empty"},         {"a,b", "a comma"}, {"a[1]", "brackets"},
        {"a]", "a bracket"},   {"a b", "a space"}, {"a\n", "a newline"},
        {"\303\251", "UTF-8"},
    };
    for (size_t i = 0; i < sizeof (invalid) / sizeof (invalid[0]); i++) {
        errno = 0;
        is_errno (hostlist_append (hl, invalid[i].name), EINVAL,
                  "append a name with %s: EINVAL", invalid[i].label);
    }
    char name[HOSTLIST_HOST_MAX + 2];
    memset (name, 'a', sizeof (name) - 1);
    name[sizeof (name) - 1] = '\0';
    errno = 0;
    is_errno (hostlist_append (hl, name), EINVAL, "append a too long name");
    name[HOSTLIST_HOST_MAX] = '\0';
    is_int (hostlist_append (hl, name), 0, "append the longest name");
    errno = 0;
    is_errno (hostlist_append (hl, NULL), EINVAL, "append NULL: EINVAL");
    errno = 0;
    is_errno (hostlist_append (NULL, "a"), EINVAL, "append to NULL: EINVAL");
    is_int (hostlist_count (hl), 1, "only the valid name was added");
    hostlist_destroy (hl);

    hl = hostlist_create ();
    char *s = hostlist_encode (hl);
    is_str (s, "", "empty list encodes as \"\"");
    free (s);
    is_str (hostlist_nth (hl, 0), NULL, "nth of empty list is NULL");
    hostlist_destroy (hl);
    is_int (hostlist_count (NULL), 0, "count of NULL is 0");
    is_str (hostlist_nth (NULL, 0), NULL, "nth of NULL is NULL");
    errno = 0;
    is_errno_ptr (hostlist_encode (NULL), EINVAL, "encode NULL: EINVAL");
    errno = ENOENT;
    hostlist_destroy (NULL);
    is_int (errno, ENOENT, "destroy NULL preserves errno");
}

int main (void)
{
    plan (NO_PLAN);
    test_decode_good ();
    test_decode_bad ();
    test_limits ();
    test_decode_max_stops_before_expanding ();
    test_append_encode ();
    return done_testing ();
}
