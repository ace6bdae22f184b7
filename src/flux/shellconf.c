/* shellconf.c - see shellconf.h */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/fsd.h"
#include "flux/shellconf.h"

/* One duration key: absent keeps *v; "none" (when allowed) is 0. Flux's
 * job-exec takes these as strings only, and so do we. */
static int duration (
    json_t *exec, const char *key, bool none, double *v, char *err, size_t len)
{
    json_t *o = json_object_get (exec, key);
    struct cairn_error e = {{0}};
    const char *s;
    double d;

    if (!o)
        return 0;
    if (!(s = json_string_value (o))) {
        snprintf (err, len, "[exec] %s: not a string", key);
        return -1;
    }
    if (none && !strcmp (s, "none")) {
        *v = 0;
        return 0;
    }
    if (fsd_parse (s, &d, &e) < 0) {
        snprintf (err, len, "[exec] %s: %s", key, e.text);
        return -1;
    }
    *v = isinf (d) ? 0 : d; /* "inf": never */
    return 0;
}

int shellconf_read (flux_t *h, struct shellconf *ec, char *err, size_t len)
{
    json_t *exec = NULL;

    ec->barrier_timeout = SHELLCONF_BARRIER_TIMEOUT;
    ec->shell_exit_timeout = SHELLCONF_SHELL_EXIT_TIMEOUT;
    if (flux_conf_unpack (flux_get_conf (h), NULL, "{s:o}", "exec", &exec) < 0)
        return 0; /* no [exec]: the defaults */
    if (!json_is_object (exec)) {
        snprintf (err, len, "[exec]: not a table");
        return -1;
    }
    if (duration (exec, "barrier-timeout", false, &ec->barrier_timeout, err,
                  len) < 0 ||
        duration (exec, "shell-exit-timeout", true, &ec->shell_exit_timeout,
                  err, len) < 0)
        return -1;
    return 0;
}
