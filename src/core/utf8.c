/* utf8.c - see utf8.h */
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

/* The length of a sequence by its first byte, and whether b continues
 * one whose first byte is c at position k (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF). */
static int seq_len (unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return 2;
    if (c >= 0xe0 && c <= 0xef)
        return 3;
    if (c >= 0xf0 && c <= 0xf4)
        return 4;
    return 0;
}

static bool continues (unsigned char c, int k, unsigned char b)
{
    if ((b & 0xc0) != 0x80)
        return false;
    if (k != 1)
        return true;
    return !((c == 0xe0 && b < 0xa0) || (c == 0xed && b > 0x9f) ||
             (c == 0xf0 && b < 0x90) || (c == 0xf4 && b > 0x8f));
}

json_t *
utf8_string (const char *buf, size_t len, bool final, size_t *used, bool *clean)
{
    const unsigned char *in = (const unsigned char *)buf;
    char *out = malloc (len * 3 + 1);
    size_t i = 0, o = 0;
    bool replaced = false;
    json_t *s;

    if (!out)
        return NULL;
    while (i < len) {
        int n = seq_len (in[i]), k = 1;
        while (n > 1 && k < n && i + (size_t)k < len &&
               continues (in[i], k, in[i + (size_t)k]))
            k++;
        if (n > 0 && k == n) {
            memcpy (out + o, in + i, (size_t)n);
            o += (size_t)n;
            i += (size_t)n;
            continue;
        }
        if (n > 1 && i + (size_t)k == len && !final)
            break; /* cut short by the read: the rest comes later */
        memcpy (out + o, "\xef\xbf\xbd", 3);
        o += 3;
        i += (size_t)(k > 1 ? k : 1);
        replaced = true;
    }
    if (used)
        *used = i;
    if (clean)
        *clean = !replaced;
    s = json_stringn (out, o);
    free (out);
    return s;
}
