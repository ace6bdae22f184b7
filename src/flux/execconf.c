/* execconf.c - see execconf.h */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/escalate.h"
#include "core/signame.h"
#include "flux/execconf.h"

/* job-exec's keys that cairn gives their meaning (cairn.conf's exec keys
 * of the same names). */
static const char *const kept[] = {
    "kill-timeout", "max-kill-timeout", "term-signal",
    "kill-signal",  "max-kill-count",   "max-start-delay-percent",
};
#define NKEPT (sizeof (kept) / sizeof (kept[0]))

static bool is_kept (const char *key, size_t len)
{
    for (size_t i = 0; i < NKEPT; i++)
        if (strlen (kept[i]) == len && !strncmp (kept[i], key, len))
            return true;
    return false;
}

bool execconf_is_arg (const char *arg)
{
    const char *eq = strchr (arg, '=');
    return eq &&
           (is_kept (arg, (size_t)(eq - arg)) || !strncmp (arg, "method=", 7) ||
            !strncmp (arg, "service=", 8));
}

struct why {
    char *buf;
    size_t size, len;
};

static void say (struct why *w, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void say (struct why *w, const char *fmt, ...)
{
    va_list ap;
    if (w->len > 0 && w->len + 2 < w->size) {
        strcpy (w->buf + w->len, "; ");
        w->len += 2;
    }
    if (w->len + 1 >= w->size)
        return;
    va_start (ap, fmt);
    int n = vsnprintf (w->buf + w->len, w->size - w->len, fmt, ap);
    va_end (ap);
    if (n > 0)
        w->len +=
            (size_t)n < w->size - w->len ? (size_t)n : w->size - w->len - 1;
}

/* A module argument's value as the JSON the config parser expects: a
 * number when it reads as one ("3", "12.5"), else the string ("10s",
 * "SIGUSR1"). */
static json_t *arg_value (const char *s)
{
    char *end;
    long long i = strtoll (s, &end, 10);
    if (*s && !*end)
        return json_integer (i);
    double d = strtod (s, &end);
    if (*s && !*end)
        return json_real (d);
    return json_string (s);
}

/* What stands for Flux's own prolog and epilog in the instance. */
static void check_perilog (flux_t *h, json_t *conf, struct why *w)
{
    json_t *jm = json_object_get (conf, "job-manager");
    json_t *plugins = json_object_get (jm, "plugins"), *p;
    size_t i;

    if (json_object_get (jm, "prolog"))
        say (w, "[job-manager.prolog] is set: cairnd runs the prolog "
                "(cairn.conf prolog); Flux's would run as well");
    if (json_object_get (jm, "epilog"))
        say (w, "[job-manager.epilog] is set: cairnd runs the epilog "
                "(cairn.conf epilog); Flux's would run as well");
    json_array_foreach (plugins, i, p)
    {
        const char *load = json_string_value (json_object_get (p, "load"));
        const char *base = load ? strrchr (load, '/') : NULL;
        if (load && !strcmp (base ? base + 1 : load, "perilog.so")) {
            say (w, "[job-manager] plugins loads perilog.so: every prolog "
                    "and epilog would run twice");
            return;
        }
    }
    /* loaded by hand (flux jobtap load perilog.so) */
    flux_future_t *f = flux_rpc_pack (h, "job-manager.jobtap", FLUX_NODEID_ANY,
                                      0, "{s:b}", "query_only", 1);
    json_t *names = NULL;
    if (f && flux_rpc_get_unpack (f, "{s:o}", "plugins", &names) == 0) {
        json_t *n;
        json_array_foreach (names, i, n)
        {
            if (!strcmp (json_string_value (n) ? json_string_value (n) : "",
                         "perilog"))
                say (w, "the perilog jobtap plugin is loaded: every prolog "
                        "and epilog would run twice (flux jobtap remove "
                        "perilog)");
        }
    }
    flux_future_destroy (f);
}

/* One setting, checked alone with cairnd's rules: job-exec's message
 * ("invalid kill-timeout: 1f", "invalid max-kill-count=-1"), then
 * cairnd's reason. */
static void check_one (const char *key, json_t *v, struct why *w)
{
    json_t *one = json_pack ("{s:{s:O}}", "exec", key, v);
    struct job_config jc;
    struct cairn_error e = {{0}};

    job_config_init (&jc);
    /* its own value only: max-kill-timeout against kill-timeout is
     * checked once both are known (execconf_load) */
    jc.exec.kill_timeout = 0;
    if (one && job_config_override (&jc, one, NULL, &e) < 0) {
        char *raw = json_is_string (v) ? NULL : json_dumps (v, JSON_ENCODE_ANY);
        const char *shown = raw ? raw : json_string_value (v);
        if (!strcmp (key, "max-kill-count") && json_is_integer (v))
            say (w, "invalid max-kill-count=%lld (%s)",
                 (long long)json_integer_value (v), e.text);
        else
            say (w, "invalid %s: %s (%s)", key, shown ? shown : "?", e.text);
        free (raw);
    } else if (one && !strcmp (key, "max-kill-timeout") &&
               jc.exec.max_kill_timeout == 0)
        /* 0 is cairn.conf's "no back-off"; job-exec refuses it */
        say (w, "invalid max-kill-timeout: %s (must be > 0)",
             json_string_value (v) ? json_string_value (v) : "0");
    job_config_free (&jc);
    json_decref (one);
}

json_t *execconf_load (flux_t *h,
                       const flux_conf_t *cf,
                       bool perilog,
                       int argc,
                       char **argv,
                       char *err,
                       size_t errsz)
{
    json_t *conf = NULL, *exec, *over = json_object (), *ex = json_object ();
    struct why w = {.buf = err, .size = errsz};
    const char *k;
    json_t *v;

    if (errsz)
        err[0] = '\0';
    if (!over || !ex)
        goto nomem;
    if (!cf || flux_conf_unpack (cf, NULL, "o", &conf) < 0)
        conf = NULL;
    exec = json_object_get (conf, "exec");
    json_object_foreach (exec, k, v)
    {
        if (!is_kept (k, strlen (k)))
            continue;
        /* job-exec reads these of the table as FSD strings only */
        if ((!strcmp (k, "kill-timeout") || !strcmp (k, "max-kill-timeout")) &&
            !json_is_string (v)) {
            char *raw = json_dumps (v, JSON_ENCODE_ANY);
            say (&w, "invalid %s: %s (a duration string, such as \"10s\")", k,
                 raw ? raw : "?");
            free (raw);
            continue;
        }
        if (json_object_set (ex, k, v) < 0)
            goto nomem;
    }
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr (argv[i], '=');
        if (!eq || !is_kept (argv[i], (size_t)(eq - argv[i])))
            continue;
        char key[64];
        snprintf (key, sizeof (key), "%.*s", (int)(eq - argv[i]), argv[i]);
        if (json_object_set_new (ex, key, arg_value (eq + 1)) < 0)
            goto nomem;
    }
    const char *service = NULL, *method = NULL;
    (void)json_unpack (exec, "{s?s s?s}", "service", &service, "method",
                       &method);
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "service=", 8))
            service = argv[i] + 8;
        else if (!strncmp (argv[i], "method=", 7))
            method = argv[i] + 7;
    }
    if (service && strcmp (service, "rexec") != 0)
        say (&w,
             "[exec] service = \"%s\": not supported; cairnd confines "
             "jobs with cgroup-parent (cairn.conf(5))",
             service);
    /* bulk-exec is job-exec's way of running shells, and the one cairn's
     * stands for; testexec and others are job-exec's own */
    if (method && strcmp (method, "bulk-exec") != 0)
        say (&w,
             "unknown exec.method '%s': cairn-exec has one method, "
             "bulk-exec's",
             method);
    if (perilog)
        check_perilog (h, conf, &w);
    json_object_foreach (ex, k, v)
    {
        check_one (k, v, &w);
    }
    if (w.len == 0 && json_object_size (ex) > 0) {
        struct job_config jc;
        struct cairn_error e = {{0}};
        if (json_object_set (over, "exec", ex) < 0)
            goto nomem;
        job_config_init (&jc);
        if (job_config_override (&jc, over, NULL, &e) < 0)
            say (&w, "%s", e.text);
        job_config_free (&jc);
    }
    json_decref (ex);
    if (w.len > 0) {
        json_decref (over);
        errno = EINVAL;
        return NULL;
    }
    return over;
nomem:
    json_decref (over);
    json_decref (ex);
    errno = ENOMEM;
    return NULL;
}

json_t *execconf_effective (const json_t *cairnd_exec, const json_t *over)
{
    struct job_config jc;
    struct cairn_error e;
    json_t *in = json_pack ("{s:O}", "exec", cairnd_exec), *out = NULL;

    if (!in || job_config_decode (&jc, in, &e) < 0) {
        json_decref (in);
        return json_incref ((json_t *)cairnd_exec);
    }
    json_decref (in);
    if (!over || job_config_override (&jc, over, NULL, &e) == 0) {
        const struct exec_config *x = &jc.exec;
        out = json_pack (
            "{s:f s:f s:s s:s s:i s:f}", "kill-timeout", x->kill_timeout,
            /* job-exec's -1: not set */
            "max-kill-timeout",
            x->max_kill_timeout > 0 ? x->max_kill_timeout : -1., "term-signal",
            signame_str (x->term_signal), "kill-signal",
            signame_str (x->kill_signal), "max-kill-count", x->max_kill_count,
            "effective-max-kill-timeout", escalate_give_up_after (x));
    }
    job_config_free (&jc);
    return out ? out : json_incref ((json_t *)cairnd_exec);
}
