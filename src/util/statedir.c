/* statedir.c - see statedir.h
 *
 * Empty environment variables count as unset: "CAIRN_STATEDIR= cairn ..."
 * is how people clear a variable in a shell, and an empty path would
 * otherwise put the socket in the current directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/statedir.h"

static const char *getenv_set (const char *name)
{
    const char *v = getenv (name);
    return v && *v ? v : NULL;
}

/* prefix without its trailing slashes, then suffix ("" or "/name"), so
 * that "/x/" gives "/x/cairn" and "/" alone stays "/". */
static char *
path_join (const char *prefix, const char *suffix, struct cairn_error *err)
{
    int n = strlen (prefix);
    char *s;

    while (n > 0 && prefix[n - 1] == '/')
        n--;
    if (n == 0 && *suffix == '\0')
        n = 1;
    if (asprintf (&s, "%.*s%s", n, prefix, suffix) < 0) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    return s;
}

char *statedir_resolve_as (const char *opt,
                           const char *cfg_statedir,
                           uid_t euid,
                           struct cairn_error *err)
{
    const char *v;

    if (opt) {
        if (*opt == '\0') {
            errset (err, EINVAL, "--statedir: empty path");
            return NULL;
        }
        return path_join (opt, "", err);
    }
    if ((v = getenv_set ("CAIRN_STATEDIR")))
        return path_join (v, "", err);
    if (cfg_statedir && *cfg_statedir)
        return path_join (cfg_statedir, "", err);
    if (euid == 0)
        return path_join (STATEDIR_SYSTEM, "", err);
    if ((v = getenv_set ("XDG_STATE_HOME")) && v[0] == '/')
        return path_join (v, "/cairn", err);
    if ((v = getenv_set ("HOME")))
        return path_join (v, "/.local/state/cairn", err);
    errset (err, ENOENT,
            "cannot find a state directory: HOME is not set "
            "(use --statedir or CAIRN_STATEDIR)");
    return NULL;
}

char *statedir_resolve (const char *opt,
                        const char *cfg_statedir,
                        struct cairn_error *err)
{
    return statedir_resolve_as (opt, cfg_statedir, geteuid (), err);
}

char *statedir_socket (const char *statedir)
{
    char *s;

    if (!statedir || *statedir == '\0') {
        errno = EINVAL;
        return NULL;
    }
    size_t n = strlen (statedir);
    const char *sep = statedir[n - 1] == '/' ? "" : "/";
    if (asprintf (&s, "%s%s%s", statedir, sep, STATEDIR_SOCKET_NAME) < 0) {
        errno = ENOMEM;
        return NULL;
    }
    return s;
}

char *statedir_expand_rank (const char *s, uint32_t rank)
{
    size_t n = strlen (s) + 1;
    char *out, *o;

    for (const char *p = s; (p = strstr (p, "%r")); p += 2)
        n += 10; /* at most 10 digits for its 2 characters */
    if (!(o = out = malloc (n)))
        return NULL;
    while (*s) {
        if (s[0] == '%' && s[1] == 'r') {
            o += sprintf (o, "%u", (unsigned)rank);
            s += 2;
        } else
            *o++ = *s++;
    }
    *o = '\0';
    return out;
}
