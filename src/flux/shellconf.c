/* shellconf.c - see shellconf.h */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsd.h"
#include "flux/shellconf.h"

static const char *const keys[] = {"barrier-timeout", "shell-exit-timeout",
                                   "job-shell", "imp"};

bool shellconf_is_arg (const char *arg)
{
    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++) {
        size_t n = strlen (keys[i]);
        if (!strncmp (arg, keys[i], n) && arg[n] == '=')
            return true;
    }
    return false;
}

/* The module argument KEY=VALUE's value (the last one wins), or NULL. */
static const char *arg_of (int argc, char **argv, const char *key)
{
    const char *v = NULL;
    size_t n = strlen (key);
    for (int i = 0; i < argc; i++)
        if (!strncmp (argv[i], key, n) && argv[i][n] == '=')
            v = argv[i] + n + 1;
    return v;
}

/* A string key of [exec], or of the arguments; -1 with job-exec's
 * message when the table's value is not a string. */
static int str_key (json_t *exec,
                    int argc,
                    char **argv,
                    const char *key,
                    const char **v,
                    char *err,
                    size_t len)
{
    json_t *o = json_object_get (exec, key);

    *v = NULL;
    if (o && !(*v = json_string_value (o))) {
        snprintf (err, len,
                  "error reading config value exec.%s: "
                  "Expected string, got %s",
                  key, json_is_integer (o) ? "integer" : "another type");
        return -1;
    }
    const char *a = arg_of (argc, argv, key);
    if (a)
        *v = a;
    return 0;
}

/* An FSD ("none" is 0 where allowed, "inf" is never: 0). */
static int duration (const char *s, bool none, double *d)
{
    struct cairn_error e = {{0}};

    if (none && !strcmp (s, "none")) {
        *d = 0;
        return 0;
    }
    if (fsd_parse (s, d, &e) < 0)
        return -1;
    if (isinf (*d))
        *d = 0;
    return 0;
}

int shellconf_read (const flux_conf_t *conf,
                    int argc,
                    char **argv,
                    struct shellconf *sc,
                    char *err,
                    size_t len)
{
    json_t *exec = NULL;
    const char *bt, *set, *shell, *imp;
    struct shellconf n = {.barrier_timeout = SHELLCONF_BARRIER_TIMEOUT,
                          .shell_exit_timeout = SHELLCONF_SHELL_EXIT_TIMEOUT};

    if (conf && flux_conf_unpack (conf, NULL, "{s:o}", "exec", &exec) == 0 &&
        !json_is_object (exec)) {
        snprintf (err, len, "Error reading [exec] table: not a table");
        errno = EINVAL;
        return -1;
    }
    if (str_key (exec, argc, argv, "barrier-timeout", &bt, err, len) < 0 ||
        str_key (exec, argc, argv, "shell-exit-timeout", &set, err, len) < 0 ||
        str_key (exec, argc, argv, "job-shell", &shell, err, len) < 0 ||
        str_key (exec, argc, argv, "imp", &imp, err, len) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (bt && duration (bt, false, &n.barrier_timeout) < 0) {
        snprintf (err, len,
                  "invalid duration '%s' specified for exec.barrier-timeout",
                  bt);
        errno = EINVAL;
        return -1;
    }
    if (set && duration (set, true, &n.shell_exit_timeout) < 0) {
        snprintf (err, len, "invalid shell-exit-timeout: %s", set);
        errno = EINVAL;
        return -1;
    }
    if (!shell)
        shell = flux_conf_builtin_get ("shell_path", FLUX_CONF_AUTO);
    if (!shell || !(n.job_shell = strdup (shell)) ||
        (imp && !(n.imp = strdup (imp)))) {
        free (n.job_shell);
        errno = ENOMEM;
        return -1;
    }
    shellconf_clear (sc);
    *sc = n;
    return 0;
}

void shellconf_clear (struct shellconf *sc)
{
    free (sc->job_shell);
    free (sc->imp);
    sc->job_shell = sc->imp = NULL;
}

json_t *shellconf_stats (const struct shellconf *sc)
{
    json_t *o = json_pack ("{s:s s:f s:f}", "default_job_shell",
                           sc->job_shell ? sc->job_shell : "",
                           "default_barrier_timeout", sc->barrier_timeout,
                           "shell_exit_timeout", sc->shell_exit_timeout);
    if (o && sc->imp &&
        json_object_set_new (o, "flux_imp_path", json_string (sc->imp)) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}
