/* trust.c - whom cairnd acts for, and as whom (trust.h). */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/job.h"
#include "exec/trust.h"
#include "util/log.h"

struct trust {
    const struct cairn_config *cfg;
    uid_t uid;            /* cairnd's */
    int64_t instance_uid; /* flux.instance-owner's uid, -1 = none */
};

/* Resolve flux.instance-owner into t->instance_uid (trust_create). */
static int owner_init (struct trust *t, struct cairn_error *err)
{
    const char *who = t->cfg->flux_owner;
    struct passwd pw, *res = NULL;
    char buf[4096], *end;
    struct stat st;

    t->instance_uid = -1;
    if (!who)
        return 0;
    errno = 0;
    unsigned long n = strtoul (who, &end, 10);
    if (*who >= '0' && *who <= '9' && *end == '\0' && errno == 0 &&
        n < (uid_t)-1)
        t->instance_uid = (int64_t)n;
    else if (getpwnam_r (who, &pw, buf, sizeof (buf), &res) == 0 && res)
        t->instance_uid = res->pw_uid;
    else
        return errset (err, EINVAL,
                       "flux.instance-owner: no user '%s' on this host", who);
    if (t->instance_uid == 0 || (uid_t)t->instance_uid == t->uid) {
        uid_t u = (uid_t)t->instance_uid;
        t->instance_uid = -1;
        return errset (err, EINVAL,
                       "flux.instance-owner: uid %u is %s, trusted with "
                       "everything already: name the unprivileged user the "
                       "Flux instance runs as",
                       (unsigned)u, u == 0 ? "root" : "cairnd's own");
    }
    if (t->uid != 0) {
        t->instance_uid = -1;
        return errset (err, EINVAL,
                       "flux.instance-owner: cairnd runs as uid %u, not "
                       "root: it runs jobs of its own uid only, and cannot "
                       "serve another user's instance",
                       (unsigned)t->uid);
    }
    if (t->cfg->flux_imp &&
        (stat (t->cfg->flux_imp, &st) < 0 || !S_ISREG (st.st_mode) ||
         st.st_uid != 0 || !(st.st_mode & S_ISUID)))
        log_msg (LOG_WARNING,
                 "flux.imp %s: %s: jobs of other users than uid %jd will "
                 "fail to start",
                 t->cfg->flux_imp,
                 access (t->cfg->flux_imp, F_OK) < 0 ? strerror (errno)
                                                     : "not setuid root",
                 (intmax_t)t->instance_uid);
    log_msg (LOG_INFO,
             "the Flux instance of uid %jd (%s) may start jobs; other users' "
             "%s",
             (intmax_t)t->instance_uid, who,
             t->cfg->flux_imp ? "run through flux.imp"
                              : "are refused (no "
                                "flux.imp)");
    return 0;
}

struct trust *trust_create (const struct cairn_config *cfg,
                            uid_t uid,
                            struct cairn_error *err)
{
    struct trust *t = calloc (1, sizeof (*t));
    if (!t) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    t->cfg = cfg;
    t->uid = uid;
    t->instance_uid = -1;
    if (owner_init (t, err) < 0) {
        trust_destroy (t);
        return NULL;
    }
    return t;
}

void trust_destroy (struct trust *t)
{
    int saved = errno;
    free (t);
    errno = saved;
}

int64_t trust_instance_uid (const struct trust *t)
{
    return t->instance_uid;
}

bool trust_is_owner (const struct trust *t, uid_t uid)
{
    return t->instance_uid >= 0 && uid == (uid_t)t->instance_uid;
}

bool trust_privileged (const struct trust *t, uid_t uid)
{
    return uid == 0 || uid == t->uid || trust_is_owner (t, uid);
}

/* T5: every job the owner's connections start runs its shells as the
 * owner (its own, or another user's through the IMP: T1, T2), so those
 * are its instance's jobs. A stamp (attributes.system.cairn.instance) is
 * not asked for: a root instance's jobs carry one too, and are root's. */
bool trust_owner_job (const struct trust *t, uid_t sender, int64_t shell_uid)
{
    return !trust_is_owner (t, sender) || shell_uid == (int64_t)sender;
}

json_int_t trust_shell_uid (const json_t *accept)
{
    json_t *imp = json_object_get (json_object_get (accept, "imp"), "uid");
    json_t *uid = json_object_get (accept, "userid");

    return json_is_integer (imp)   ? json_integer_value (imp)
           : json_is_integer (uid) ? json_integer_value (uid)
                                   : -1;
}

/* Does the jobspec's attributes.system.cairn.config name a command? */
static const char *config_command (const json_t *jobspec)
{
    const json_t *c = json_object_get (
        json_object_get (
            json_object_get (json_object_get (jobspec, "attributes"), "system"),
            "cairn"),
        "config");
    if (json_object_get (json_object_get (c, "prolog"), "command"))
        return "prolog.command";
    if (json_object_get (json_object_get (c, "epilog"), "command"))
        return "epilog.command";
    if (json_object_get (json_object_get (c, "exec"), "job-shell"))
        return "exec.job-shell";
    return NULL;
}

int trust_start (struct trust *t,
                 uid_t sender,
                 uint32_t userid,
                 const json_t *jobspec,
                 struct job *job,
                 struct cairn_error *err)
{
    const char *key;

    if (!trust_is_owner (t, sender))
        return 0;
    if (userid == 0) /* T2 */
        return errset (err, EPERM,
                       "start: permission denied: uid %u (the Flux "
                       "instance's owner) may not start jobs as root",
                       (unsigned)sender);
    if ((key = config_command (jobspec))) /* T3 */
        return errset (err, EPERM,
                       "start: permission denied: "
                       "attributes.system.cairn.config.%s: uid %u (the Flux "
                       "instance's owner) may not choose a command; they "
                       "are cairn.conf's",
                       key, (unsigned)sender);
    if (userid == sender)
        return 0;
    if (!t->cfg->flux_imp) /* T1 */
        return errset (err, EPERM,
                       "start: permission denied: uid %u (the Flux "
                       "instance's owner) runs jobs of other users (%u) "
                       "only through flux-imp, and cairn.conf sets no "
                       "flux.imp",
                       (unsigned)sender, (unsigned)userid);
    if (job_set_imp (job, t->cfg->flux_imp, sender) < 0)
        return errset (err, errno, "start: %s", strerror (errno));
    return 0;
}

static bool argv_equal (char *const *cmd, const json_t *argv)
{
    size_t i = 0;
    if (!cmd)
        return false;
    for (; cmd[i]; i++) {
        const char *a = json_string_value (json_array_get (argv, i));
        if (!a || strcmp (a, cmd[i]) != 0)
            return false;
    }
    return i == json_array_size (argv);
}

int trust_node_exec (const struct trust *t,
                     uid_t sender,
                     const json_t *payload,
                     struct cairn_error *err)
{
    const json_t *user = json_object_get (payload, "user");
    const json_t *argv = json_object_get (payload, "argv");
    const json_t *cwd = json_object_get (payload, "cwd");
    const char *phase = json_string_value (json_object_get (payload, "phase"));
    const char *name;
    json_t *v;

    if (!trust_is_owner (t, sender))
        return 0;
    if (user) {
        if (json_integer_value (user) == (json_int_t)sender)
            return 0;
        return errset (err, EPERM,
                       "node-exec: permission denied: uid %u (the Flux "
                       "instance's owner) runs commands as itself only "
                       "(other users' through flux-imp), not as uid %jd",
                       (unsigned)sender, (intmax_t)json_integer_value (user));
    }
    /* as root: this node's own prolog or epilog, as rank 0 builds it */
    const struct perilog_config *pc =
        phase && !strcmp (phase, "prolog")   ? &t->cfg->job.prolog
        : phase && !strcmp (phase, "epilog") ? &t->cfg->job.epilog
                                             : NULL;
    if (!pc || !argv_equal (pc->command, argv))
        return errset (err, EPERM,
                       "node-exec: permission denied: uid %u (the Flux "
                       "instance's owner) may run as root only this node's "
                       "own prolog or epilog command (cairn.conf)",
                       (unsigned)sender);
    if (cwd && !json_is_null (cwd))
        return errset (err, EPERM,
                       "node-exec: permission denied: a %s runs in no "
                       "working directory of the sender's",
                       phase);
    json_object_foreach ((json_t *)json_object_get (payload, "env"), name, v)
    {
        if (strncmp (name, "CAIRN_", 6) != 0 &&
            strncmp (name, "FLUX_JOB_", 9) != 0)
            return errset (err, EPERM,
                           "node-exec: permission denied: a %s as root "
                           "takes CAIRN_ and FLUX_JOB_ variables only, not "
                           "%s",
                           phase, name);
    }
    return 0;
}
