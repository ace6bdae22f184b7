/* t_utf8.c - a process's output as a JSON string (core/utf8.h). */
#include <string.h>

#include "tap.h"
#include "core/utf8.h"

static const struct {
    const char *name;
    const char *in;
    bool final;
    const char *want; /* the string */
    size_t used;
    bool clean;
} cases[] = {
    {"ascii", "hello\n", false, "hello\n", 6, true},
    {"two-byte", "caf\xc3\xa9", false, "caf\xc3\xa9", 5, true},
    {"four-byte", "\xf0\x9f\x98\x80!", false, "\xf0\x9f\x98\x80!", 5, true},
    {"cut, more to come", "caf\xc3", false, "caf", 3, true},
    {"cut in 3 of 4", "a\xf0\x9f\x98", false, "a", 1, true},
    {"cut, final", "caf\xc3", true, "caf\xef\xbf\xbd", 4, false},
    {"bad byte", "a\xff" "b", false, "a\xef\xbf\xbd" "b", 3, false},
    {"lone continuation", "\x80x", false, "\xef\xbf\xbdx", 2, false},
    {"overlong", "\xc0\x80", false, "\xef\xbf\xbd\xef\xbf\xbd", 2, false},
    {"surrogate", "\xed\xa0\x80", false,
     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3, false},
    {"broken in the middle", "\xe2\x82x", false, "\xef\xbf\xbdx", 3, false},
    {"past U+10FFFF", "\xf4\x90\x80\x80", false,
     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 4, false},
};

int main (void)
{
    plan (NO_PLAN);
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        size_t used = 99;
        bool clean = !cases[i].clean;
        json_t *s = utf8_string (cases[i].in, strlen (cases[i].in),
                                 cases[i].final, &used, &clean);
        ok (s != NULL, "%s: a string", cases[i].name);
        is_str (s ? json_string_value (s) : NULL, cases[i].want, "%s: text",
                cases[i].name);
        is_int (used, cases[i].used, "%s: bytes used", cases[i].name);
        ok (clean == cases[i].clean, "%s: %s", cases[i].name,
            cases[i].clean ? "clean" : "replaced");
        json_decref (s);
    }
    /* NUL bytes are output too */
    json_t *s = utf8_string ("a\0b", 3, true, NULL, NULL);
    ok (s && json_string_length (s) == 3, "a NUL byte is kept");
    json_decref (s);
    return done_testing ();
}
