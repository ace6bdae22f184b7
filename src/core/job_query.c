/* job_query.c - what the exec layer asks of a job: what to run, what to
 * tell the client. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"
#include "core/jobid.h"
#include "core/job_private.h"

void job_argv_free (char **argv)
{
    if (argv) {
        int saved = errno;
        for (char **a = argv; *a; a++)
            free (*a);
        free (argv);
        errno = saved;
    }
}

static size_t argv_len (char *const *argv)
{
    size_t n = 0;
    while (argv && argv[n])
        n++;
    return n;
}

/* Concatenate a and b (either may be NULL) into a new argv. */
static char **argv_join (char *const *a, char *const *b)
{
    size_t na = argv_len (a), nb = argv_len (b);
    char **v = calloc (na + nb + 1, sizeof (*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < na + nb; i++) {
        if (!(v[i] = strdup (i < na ? a[i] : b[i - na]))) {
            job_argv_free (v);
            errno = ENOMEM;
            return NULL;
        }
    }
    return v;
}

static int env_set (json_t *env, const char *name, const char *value)
{
    return json_object_set_new (env, name, json_string (value));
}

static int env_setf (json_t *env, const char *name, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int env_setf (json_t *env, const char *name, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    return env_set (env, name, buf);
}

/* Set each "NAME=value" of v (may be NULL) in env. */
static int env_add (json_t *env, char *const *v)
{
    for (; v && *v; v++) {
        const char *eq = strchr (*v, '=');
        if (json_object_setn_new (env, *v, eq - *v, json_string (eq + 1)) < 0)
            return -1;
    }
    return 0;
}

int job_proc_command (const struct job *job,
                      const struct job_proc *proc,
                      char ***argvp,
                      const char **cwd,
                      json_t **envp)
{
    char **argv = NULL;
    json_t *env = NULL;
    char *ranks = NULL, *jobranks = NULL;
    char f58[JOBID_STRLEN];
    const struct idset *jr;

    switch (proc->phase) {
    case PHASE_PROLOG:
        argv = argv_join (job->cfg.prolog.command, NULL);
        *cwd = NULL;
        jr = job->all;
        break;
    case PHASE_EPILOG:
        argv = argv_join (job->cfg.epilog.command, NULL);
        *cwd = NULL;
        jr = job->all;
        break;
    case PHASE_SHELL:
    default:
        if (job->cfg.exec.job_shell) {
            char id[24];
            char *extra[] = {id, NULL};
            snprintf (id, sizeof (id), "%ju", (uintmax_t)job->id);
            argv = argv_join (job->cfg.exec.job_shell, extra);
        } else
            argv = argv_join (jobspec_argv (job->jobspec), NULL);
        if (argv && job->imp) { /* "IMP exec SHELL ARGS..." (job_set_imp) */
            char *imp[] = {job->imp, "exec", NULL};
            char **shell = argv;
            argv = argv_join (imp, shell);
            job_argv_free (shell);
        }
        *cwd = jobspec_cwd (job->jobspec);
        jr = job->run;
        break;
    }
    if (!argv || !argv[0])
        goto nomem;
    if (!(env = json_object ()))
        goto nomem;
    if (proc->phase == PHASE_SHELL &&
        (env_add (env, jobspec_env (job->jobspec)) < 0 ||
         env_add (env, jobspec_rank_env (job->jobspec, proc->rank)) < 0))
        goto nomem;
    if (!(ranks = idset_encode (proc->ranks)) ||
        !(jobranks = idset_encode (jr)) ||
        jobid_encode_f58 (job->id, f58, sizeof (f58)) < 0)
        goto nomem;
    if (env_setf (env, "CAIRN_JOB_ID", "%ju", (uintmax_t)job->id) < 0 ||
        env_set (env, "CAIRN_JOB_RANKS", jobranks) < 0 ||
        env_set (env, "CAIRN_RANKS", ranks) < 0 ||
        env_set (env, "CAIRN_EXECID", proc->execid) < 0 ||
        env_set (env, "CAIRN_PHASE",
                 proc->phase == PHASE_PROLOG   ? "prolog"
                 : proc->phase == PHASE_EPILOG ? "epilog"
                                               : "shell") < 0 ||
        env_set (env, "FLUX_JOB_ID", f58) < 0 ||
        env_set (env, "FLUX_JOB_RANKS", jobranks) < 0 ||
        env_setf (env, "FLUX_JOB_USERID", "%u", (unsigned)job->userid) < 0 ||
        env_setf (env, "CAIRN_JOB_USERID", "%u", (unsigned)job->userid) < 0)
        goto nomem;
    if (idset_count (proc->ranks) == 1 &&
        env_setf (env, "CAIRN_RANK", "%u", (unsigned)proc->rank) < 0)
        goto nomem;
    free (ranks);
    free (jobranks);
    *argvp = argv;
    *envp = env;
    return 0;
nomem:
    free (ranks);
    free (jobranks);
    job_argv_free (argv);
    json_decref (env);
    errno = ENOMEM;
    return -1;
}

json_t *job_response (const struct job *job, const json_t *entry)
{
    const char *name;
    json_t *ctx, *data;

    if (eventlog_entry_parse (entry, NULL, &name, &ctx) < 0 ||
        !job_event_is_response (name)) {
        errno = ENOENT;
        return NULL;
    }
    enum job_event ev = job_event_of (name);
    if (ev == JOB_EV_EXCEPTION) {
        /* RFC 32 data: severity, type, note; ranks is cairn's addition */
        data = json_pack ("{s:O s:O s:O}", "severity",
                          json_object_get (ctx, "severity"), "type",
                          json_object_get (ctx, "type"), "note",
                          json_object_get (ctx, "note"));
        json_t *ranks = json_object_get (ctx, "ranks");
        if (data && ranks)
            json_object_set (data, "ranks", ranks);
    } else if (ctx)
        data = json_deep_copy (ctx);
    else
        data = json_object ();
    if (!data) {
        errno = EPROTO;
        return NULL;
    }
    /* the time limit in force, as job-exec's per-job stat: a view of the
     * fold, so a stream that reattaches gets the current one */
    double limit = job_time_limit (job);
    if (ev == JOB_EV_START && limit > 0)
        json_object_set_new (data, "expiration", json_real (limit));
    return json_pack ("{s:I s:s s:o}", "id", (json_int_t)job->id, "type", name,
                      "data", data);
}

json_t *job_progress_response (const struct job *job, const json_t *entry)
{
    const char *name;
    json_t *ctx, *data;

    if (eventlog_entry_parse (entry, NULL, &name, &ctx) < 0 ||
        !job_event_is_progress (name)) {
        errno = ENOENT;
        return NULL;
    }
    if (strcmp (name, "accept") == 0) {
        name = "accepted";
        data = json_object ();
    } else
        data = ctx ? json_deep_copy (ctx) : json_object ();
    if (!data) {
        errno = ENOMEM;
        return NULL;
    }
    return json_pack ("{s:I s:s s:o}", "id", (json_int_t)job->id, "type", name,
                      "data", data);
}

int64_t job_proc_node (const struct job *job, const struct job_proc *p)
{
    bool one_rank = p->phase == PHASE_SHELL ||
                    (p->phase == PHASE_PROLOG && job->cfg.prolog.per_rank) ||
                    (p->phase == PHASE_EPILOG && job->cfg.epilog.per_rank);
    if (!job->local || !one_rank || idset_test (job->local, p->rank))
        return -1;
    return (int64_t)p->rank;
}
