/* t_statedir.c - state directory resolution order and socket path. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"
#include "util/statedir.h"

/* NULL = unset, "" = set but empty. */
static const struct {
    const char *name;
    const char *opt;
    const char *env; /* CAIRN_STATEDIR */
    const char *cfg;
    uid_t euid;
    const char *xdg;  /* XDG_STATE_HOME */
    const char *home; /* HOME */
    const char *want; /* NULL: expect failure with want_errno, want_msg */
    int want_errno;
    const char *want_msg;
} cases[] = {
    {"opt beats everything", "/o", "/e", "/c", 0, "/x", "/h", "/o", 0, NULL},
    {"relative opt kept as is", "rel/dir", "/e", NULL, 1000, NULL, "/h",
     "rel/dir", 0, NULL},
    {"opt trailing slashes dropped", "/o//", NULL, NULL, 1000, NULL, "/h", "/o",
     0, NULL},
    {"opt / stays /", "/", NULL, NULL, 1000, NULL, "/h", "/", 0, NULL},
    {"empty opt is an error", "", "/e", "/c", 0, "/x", "/h", NULL, EINVAL,
     "--statedir: empty path"},
    {"env beats config", NULL, "/e", "/c", 0, "/x", "/h", "/e", 0, NULL},
    {"empty env is unset", NULL, "", "/c", 0, "/x", "/h", "/c", 0, NULL},
    {"config beats root default", NULL, NULL, "/c/", 0, "/x", "/h", "/c", 0,
     NULL},
    {"empty config is unset", NULL, NULL, "", 0, "/x", "/h", "/var/lib/cairn",
     0, NULL},
    {"root default", NULL, NULL, NULL, 0, "/x", "/h", "/var/lib/cairn", 0,
     NULL},
    {"root needs no HOME", NULL, NULL, NULL, 0, NULL, NULL, "/var/lib/cairn", 0,
     NULL},
    {"user: XDG_STATE_HOME", NULL, NULL, NULL, 1000, "/x", "/h", "/x/cairn", 0,
     NULL},
    {"user: XDG trailing slash", NULL, NULL, NULL, 1000, "/x/", "/h",
     "/x/cairn", 0, NULL},
    {"user: HOME / gives no //", NULL, NULL, NULL, 1000, NULL, "/",
     "/.local/state/cairn", 0, NULL},
    {"user: relative XDG ignored", NULL, NULL, NULL, 1000, "x", "/h",
     "/h/.local/state/cairn", 0, NULL},
    {"user: empty XDG ignored", NULL, NULL, NULL, 1000, "", "/h",
     "/h/.local/state/cairn", 0, NULL},
    {"user: HOME", NULL, NULL, NULL, 1000, NULL, "/h", "/h/.local/state/cairn",
     0, NULL},
    {"user: no HOME fails", NULL, NULL, NULL, 1000, NULL, NULL, NULL, ENOENT,
     "HOME is not set"},
    {"user: empty HOME fails", NULL, NULL, NULL, 1000, NULL, "", NULL, ENOENT,
     "use --statedir or CAIRN_STATEDIR"},
};

static void setenv_or_unset (const char *name, const char *value)
{
    if (value)
        setenv (name, value, 1);
    else
        unsetenv (name);
}

static void test_resolve_table (void)
{
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        struct cairn_error err = {{0}};
        setenv_or_unset ("CAIRN_STATEDIR", cases[i].env);
        setenv_or_unset ("XDG_STATE_HOME", cases[i].xdg);
        setenv_or_unset ("HOME", cases[i].home);
        errno = 0;
        char *p = statedir_resolve_as (cases[i].opt, cases[i].cfg,
                                       cases[i].euid, &err);
        if (cases[i].want) {
            is_str (p, cases[i].want, "%s", cases[i].name);
        } else {
            is_errno_ptr (p, cases[i].want_errno, "%s: fails", cases[i].name);
            like (err.text, cases[i].want_msg, "%s: message", cases[i].name);
        }
        free (p);
    }
}

/* statedir_resolve() must use the real effective uid. */
static void test_resolve_euid (void)
{
    unsetenv ("CAIRN_STATEDIR");
    setenv ("XDG_STATE_HOME", "/x", 1);
    setenv ("HOME", "/h", 1);
    char *p = statedir_resolve (NULL, NULL, NULL);
    is_str (p, geteuid () == 0 ? "/var/lib/cairn" : "/x/cairn",
            "statedir_resolve uses geteuid (%d)", (int)geteuid ());
    free (p);

    /* err may be NULL on failure too */
    errno = 0;
    is_errno_ptr (statedir_resolve ("", NULL, NULL), EINVAL,
                  "empty opt fails with err NULL");
}

static void test_socket (void)
{
    char *s;

    s = statedir_socket ("/var/lib/cairn");
    is_str (s, "/var/lib/cairn/cairn.sock", "socket path");
    free (s);
    s = statedir_socket ("/tmp/x/");
    is_str (s, "/tmp/x/cairn.sock", "socket path: no doubled slash");
    free (s);
    s = statedir_socket ("rel");
    is_str (s, "rel/cairn.sock", "socket path: relative");
    free (s);
    errno = 0;
    is_errno_ptr (statedir_socket (NULL), EINVAL, "socket of NULL fails");
    errno = 0;
    is_errno_ptr (statedir_socket (""), EINVAL, "socket of \"\" fails");
}

static void test_expand_rank (void)
{
    char *s = statedir_expand_rank ("/s/node%r/x%r", 12);
    is_str (s, "/s/node12/x12", "%%r: each replaced by the rank");
    free (s);
    s = statedir_expand_rank ("/var/lib/cairn", 3);
    is_str (s, "/var/lib/cairn", "no %%r: unchanged");
    free (s);
    s = statedir_expand_rank ("%r", 4294967295u);
    is_str (s, "4294967295", "the largest rank fits");
    free (s);
}

int main (void)
{
    plan (NO_PLAN);
    test_resolve_table ();
    test_resolve_euid ();
    test_socket ();
    test_expand_rank ();
    return done_testing ();
}
