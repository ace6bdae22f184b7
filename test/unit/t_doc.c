/* t_doc.c - cairn.conf(5) documents exactly the keys config_parse()
 * accepts: every key of config_keys() has its entry in the KEYS section of
 * man/cairn.conf.5, and every entry there is a key of the code.
 *
 * An entry is a ".TP" paragraph whose tag line is ".B <dotted key>".
 * The man page is found through $CAIRN_SOURCE_DIR (set by ctest).
 */
#include <stdbool.h>

#include "tap.h"
#include "core/config.h"

#define MAX_ENTRIES 128

/* Roff text to plain: "\-" -> "-", drop "\&" and font escapes "\fB". */
static void unroff (const char *in, char *out, size_t len)
{
    size_t n = 0;
    while (*in && n + 1 < len) {
        if (in[0] == '\\' && in[1] == '-') {
            out[n++] = '-';
            in += 2;
        } else if (in[0] == '\\' && in[1] == '&')
            in += 2;
        else if (in[0] == '\\' && in[1] == 'f' && in[2])
            in += 3;
        else
            out[n++] = *in++;
    }
    out[n] = '\0';
}

/* The keys the KEYS section documents; returns their number, -1 if the
 * file cannot be read. */
static int doc_keys (const char *path, char keys[][64], int max)
{
    FILE *f = fopen (path, "r");
    char line[1024], plain[1024];
    bool in_keys = false, after_tp = false;
    int n = 0;

    if (!f)
        return -1;
    while (fgets (line, sizeof (line), f)) {
        line[strcspn (line, "\n")] = '\0';
        if (!strncmp (line, ".SH", 3)) {
            in_keys = strstr (line, "KEYS") != NULL;
            continue;
        }
        if (in_keys && after_tp && !strncmp (line, ".B ", 3) && n < max) {
            unroff (line + 3, plain, sizeof (plain));
            plain[63] = '\0'; /* longer than any key: it will not match */
            memcpy (keys[n++], plain, 64);
        }
        after_tp = !strcmp (line, ".TP");
    }
    fclose (f);
    return n;
}

int main (void)
{
    const char *src = getenv ("CAIRN_SOURCE_DIR");
    static char doc[MAX_ENTRIES][64];
    const char *const *keys = config_keys ();
    char path[4096];
    int ndoc, nkeys = 0;

    plan (NO_PLAN);
    if (!src)
        BAIL_OUT ("CAIRN_SOURCE_DIR is not set (run through ctest)");
    snprintf (path, sizeof (path), "%s/man/cairn.conf.5", src);
    ndoc = doc_keys (path, doc, MAX_ENTRIES);
    ok (ndoc > 0, "%s has a KEYS section with entries", path);
    for (; keys[nkeys]; nkeys++) {
        bool found = false;
        for (int i = 0; i < ndoc && !found; i++)
            found = !strcmp (doc[i], keys[nkeys]);
        ok (found, "cairn.conf(5) documents %s", keys[nkeys]);
    }
    ok (nkeys >= 20, "config_keys() lists the keys (%d)", nkeys);
    for (int i = 0; i < ndoc; i++) {
        bool found = false;
        for (int k = 0; keys[k] && !found; k++)
            found = !strcmp (doc[i], keys[k]);
        ok (found, "cairn.conf(5) entry '%s' is a key of the code", doc[i]);
    }
    is_int (ndoc, nkeys, "as many entries as keys");
    return done_testing ();
}
