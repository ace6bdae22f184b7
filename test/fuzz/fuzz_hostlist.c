/* fuzz_hostlist.c - hostlist_decode (RFC 29) and the encode round trip.
 *
 * Decoding goes through hostlist_decode_max with MAX_HOSTS: lists of up to
 * HOSTLIST_MAX_HOSTS are valid but take seconds under ASan, which would
 * drown the fuzzer in timeouts (the limits themselves are unit tested).
 * hostlist_decode must agree with it: the same list, or the same error.
 * A list that decodes must encode to text that decodes to the same hosts in
 * the same order; every host must be a valid name (hostlist_append takes
 * it). A failed decode must say EINVAL (E2BIG past the limit) and why.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostlist.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_hostlist: %s:%d: ", __FILE__, __LINE__);    \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

#define MAX_HOSTS 2000

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    char *buf = malloc (size + 1);
    struct cairn_error err2 = {{0}};
    struct hostlist *hl, *back, *copy;
    char *text;
    size_t n;

    if (!buf)
        return 0;
    memcpy (buf, data, size);
    buf[size] = '\0';
    if (!(hl = hostlist_decode_max (buf, MAX_HOSTS, &err))) {
        CHECK (errno == EINVAL || errno == E2BIG || errno == ENOMEM, "errno %d",
               errno);
        CHECK (err.text[0] != '\0', "no reason");
        if (errno == EINVAL) {
            CHECK (!hostlist_decode (buf, &err2) && errno == EINVAL,
                   "hostlist_decode takes what decode_max refused");
            CHECK (!strcmp (err.text, err2.text), "\"%s\" != \"%s\"", err.text,
                   err2.text);
        }
        free (buf);
        return 0;
    }
    CHECK ((back = hostlist_decode (buf, &err2)), "hostlist_decode: %s",
           err2.text);
    CHECK (hostlist_count (back) == hostlist_count (hl),
           "decode != decode_max");
    for (size_t i = 0; i < hostlist_count (hl); i++)
        CHECK (!strcmp (hostlist_nth (hl, i), hostlist_nth (back, i)),
               "host %zu", i);
    hostlist_destroy (back);
    n = hostlist_count (hl);
    CHECK (n <= MAX_HOSTS, "%zu hosts", n);
    CHECK ((text = hostlist_encode (hl)), "encode failed");
    back = hostlist_decode (text, &err);
    CHECK (back, "encoded \"%.200s\" does not decode: %s", text, err.text);
    CHECK (hostlist_count (back) == n, "count %zu != %zu",
           hostlist_count (back), n);
    CHECK ((copy = hostlist_create ()), "create");
    for (size_t i = 0; i < n; i++) {
        const char *h = hostlist_nth (hl, i);
        CHECK (h && strlen (h) > 0 && strlen (h) <= HOSTLIST_HOST_MAX,
               "host %zu", i);
        CHECK (!strcmp (h, hostlist_nth (back, i)), "host %zu: %s != %s", i, h,
               hostlist_nth (back, i));
        if (i < 1000)
            CHECK (hostlist_append (copy, h) == 0, "append \"%s\"", h);
    }
    CHECK (hostlist_nth (hl, n) == NULL, "nth past the end");
    /* a list built by append encodes like the decoded one (when short) */
    if (n <= 1000) {
        char *t2 = hostlist_encode (copy);
        CHECK (t2 && !strcmp (t2, text), "append list encodes differently");
        free (t2);
    }
    hostlist_destroy (copy);
    hostlist_destroy (back);
    hostlist_destroy (hl);
    free (text);
    free (buf);
    return 0;
}
