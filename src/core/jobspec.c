/* jobspec.c - the exec service's view of a jobspec.
 *
 * Strings from the jobspec end up in execve() arguments and environment,
 * where a NUL byte would silently cut them short and a name with '=' would
 * set a different variable than the user wrote; both are refused here, at
 * the boundary, rather than by whoever builds the environment later.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobspec.h"

/* One rank's attributes.system.cairn.rank-environment entry. */
struct rank_env {
    uint32_t rank;
    char **env; /* packed like jobspec.env */
};

/* Only copies: a job lives for as long as it runs, and the jansson tree of
 * a jobspec costs ~15x its text (6 KiB for a 400-byte jobspec), so the
 * tree is let go once these fields are out of it.
 */
struct jobspec {
    char **argv; /* each string malloc'd */
    char **env;  /* one allocation: pointers, then "NAME=value" strings */
    char *cwd;
    double duration;
    int prolog_failures_allowed;
    struct rank_env *rank_env; /* sorted by rank, for bsearch */
    size_t nrank_env;
    char *client;        /* attributes.system.cairn.client, or NULL */
    char *instance;      /* attributes.system.cairn.instance, or NULL */
    bool hold_on_shrink; /* attributes.system.cairn.hold-on-shrink */
    bool hold_start;     /* attributes.system.cairn.hold-start */
    bool shell_leader;   /* attributes.system.cairn.shell-leader */
};

void jobspec_destroy (struct jobspec *js)
{
    if (js) {
        int saved = errno;
        if (js->argv) {
            for (char **p = js->argv; *p; p++)
                free (*p);
            free (js->argv);
        }
        free (js->env);
        for (size_t i = 0; i < js->nrank_env; i++)
            free (js->rank_env[i].env);
        free (js->rank_env);
        free (js->cwd);
        free (js->client);
        free (js->instance);
        free (js);
        errno = saved;
    }
}

static bool has_nul (const json_t *s)
{
    return strlen (json_string_value (s)) != json_string_length (s);
}

static int decode_command (struct jobspec *js,
                           const json_t *tasks,
                           struct cairn_error *err)
{
    const json_t *task;
    const json_t *cmd;
    size_t n;

    if (!tasks)
        return errset (err, EINVAL, "jobspec: tasks: missing");
    if (!json_is_array (tasks) || json_array_size (tasks) == 0)
        return errset (err, EINVAL, "jobspec: tasks: not a non-empty array");
    task = json_array_get (tasks, 0);
    if (!json_is_object (task))
        return errset (err, EINVAL, "jobspec: tasks[0]: not an object");
    if (!(cmd = json_object_get (task, "command")))
        return errset (err, EINVAL, "jobspec: tasks[0].command: missing");
    if (!json_is_array (cmd) || (n = json_array_size (cmd)) == 0)
        return errset (err, EINVAL,
                       "jobspec: tasks[0].command: not a non-empty array");
    if (!(js->argv = calloc (n + 1, sizeof (*js->argv))))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *arg = json_array_get (cmd, i);
        if (!json_is_string (arg))
            return errset (err, EINVAL,
                           "jobspec: tasks[0].command[%zu]: not a string", i);
        if (has_nul (arg))
            return errset (err, EINVAL,
                           "jobspec: tasks[0].command[%zu]: contains NUL", i);
        if (!(js->argv[i] = strdup (json_string_value (arg))))
            return -1;
    }
    return 0;
}

/* Check an environment object; path names it in messages
 * ("attributes.system.environment").
 */
static int
check_environment (const json_t *env, const char *path, struct cairn_error *err)
{
    const char *name;
    size_t len;
    json_t *val;

    if (!json_is_object (env))
        return errset (err, EINVAL, "jobspec: %s: not an object", path);
    json_object_keylen_foreach ((json_t *)env, name, len, val)
    {
        if (len == 0 || strlen (name) != len || strchr (name, '='))
            return errset (err, EINVAL,
                           "jobspec: %s: invalid variable name \"%.64s\"", path,
                           name);
        if (!json_is_string (val))
            return errset (err, EINVAL, "jobspec: %s.%.64s: not a string", path,
                           name);
        if (has_nul (val))
            return errset (err, EINVAL, "jobspec: %s.%.64s: contains NUL", path,
                           name);
    }
    return 0;
}

/* Pack a (checked) environment object into one allocation: the pointers,
 * NULL-terminated, then the "NAME=value" strings. */
static char **pack_environment (const json_t *env)
{
    size_t n = json_object_size (env);
    size_t bytes = (n + 1) * sizeof (char *);
    const char *name;
    json_t *val;
    char **v;
    char *p;
    size_t i = 0;

    json_object_foreach ((json_t *)env, name, val)
    {
        bytes += strlen (name) + 1 + json_string_length (val) + 1;
    }
    if (!(v = malloc (bytes))) {
        errno = ENOMEM;
        return NULL;
    }
    p = (char *)(v + n + 1);
    json_object_foreach ((json_t *)env, name, val)
    {
        v[i++] = p;
        p = stpcpy (p, name);
        *p++ = '=';
        p = stpcpy (p, json_string_value (val)) + 1;
    }
    v[i] = NULL;
    return v;
}

/* A rank as a key: decimal digits, no sign, no leading zero (so that two
 * keys never name the same rank), at most IDSET_MAX_ID. */
static int decode_rank (const char *key, uint32_t *rank)
{
    unsigned long long r = 0;

    if (!*key || (key[0] == '0' && key[1]))
        return -1;
    for (const char *p = key; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        r = r * 10 + (unsigned)(*p - '0');
        if (r > IDSET_MAX_ID)
            return -1;
    }
    *rank = (uint32_t)r;
    return 0;
}

static int rank_env_cmp (const void *a, const void *b)
{
    uint32_t ra = ((const struct rank_env *)a)->rank;
    uint32_t rb = ((const struct rank_env *)b)->rank;
    return ra < rb ? -1 : ra > rb;
}

#define RANK_ENV "attributes.system.cairn.rank-environment"

static int decode_rank_environment (struct jobspec *js,
                                    const json_t *o,
                                    struct cairn_error *err)
{
    const char *key;
    size_t len;
    json_t *env;
    char path[96];

    if (!json_is_object (o))
        return errset (err, EINVAL, "jobspec: " RANK_ENV ": not an object");
    if (json_object_size (o) == 0)
        return 0;
    if (!(js->rank_env = calloc (json_object_size (o), sizeof (*js->rank_env))))
        return -1;
    json_object_keylen_foreach ((json_t *)o, key, len, env)
    {
        struct rank_env *re = &js->rank_env[js->nrank_env];
        if (strlen (key) != len || decode_rank (key, &re->rank) < 0)
            return errset (err, EINVAL,
                           "jobspec: " RANK_ENV ": invalid rank \"%.32s\"",
                           key);
        snprintf (path, sizeof (path), RANK_ENV ".%s", key);
        if (check_environment (env, path, err) < 0)
            return -1;
        if (!(re->env = pack_environment (env)))
            return -1;
        js->nrank_env++;
    }
    qsort (js->rank_env, js->nrank_env, sizeof (*js->rank_env), rank_env_cmp);
    return 0;
}

/* cairn.<key>, when present: a string of 1 to JOBSPEC_CLIENT_MAX bytes
 * without NUL, copied to *out. */
static int decode_name (const json_t *cairn,
                        const char *key,
                        char **out,
                        struct cairn_error *err)
{
    const json_t *o = json_object_get (cairn, key);
    if (!o)
        return 0;
    const char *c = json_string_value (o);
    size_t n = c ? strlen (c) : 0;
    if (!c || n == 0 || n > JOBSPEC_CLIENT_MAX || n != json_string_length (o))
        return errset (err, EINVAL,
                       "jobspec: attributes.system.cairn.%s: not a string of "
                       "1 to %d bytes",
                       key, JOBSPEC_CLIENT_MAX);
    if (!(*out = strdup (c)))
        return errset (err, ENOMEM, "out of memory");
    return 0;
}

/* cairn.<key>, when present: a boolean, into *out. */
static int decode_flag (const json_t *cairn,
                        const char *key,
                        bool *out,
                        struct cairn_error *err)
{
    const json_t *o = json_object_get (cairn, key);
    if (!o)
        return 0;
    if (!json_is_boolean (o))
        return errset (err, EINVAL,
                       "jobspec: attributes.system.cairn.%s: not a boolean",
                       key);
    *out = json_is_true (o);
    return 0;
}

static int
decode_cairn (struct jobspec *js, const json_t *cairn, struct cairn_error *err)
{
    const json_t *o;

    if (!json_is_object (cairn))
        return errset (err, EINVAL,
                       "jobspec: attributes.system.cairn: not an object");
    if ((o = json_object_get (cairn, "rank-environment")) &&
        decode_rank_environment (js, o, err) < 0)
        return -1;
    if (decode_name (cairn, "client", &js->client, err) < 0 ||
        decode_name (cairn, "instance", &js->instance, err) < 0)
        return -1;
    if ((o = json_object_get (cairn, "config")) && !json_is_object (o))
        return errset (err, EINVAL,
                       "jobspec: attributes.system.cairn.config: not an "
                       "object");
    if (decode_flag (cairn, "hold-on-shrink", &js->hold_on_shrink, err) < 0 ||
        decode_flag (cairn, "hold-start", &js->hold_start, err) < 0 ||
        decode_flag (cairn, "shell-leader", &js->shell_leader, err) < 0)
        return -1;
    return 0;
}

static int
decode_exec (struct jobspec *js, const json_t *exec, struct cairn_error *err)
{
    const json_t *o;

    if (!json_is_object (exec))
        return errset (err, EINVAL,
                       "jobspec: attributes.system.exec: not an object");
    if (!(o = json_object_get (exec, "prolog-failures-allowed")))
        return 0;
    if (!json_is_integer (o))
        return errset (err, EINVAL,
                       "jobspec: attributes.system.exec.prolog-failures-"
                       "allowed: not an integer");
    if (json_integer_value (o) < 0 || json_integer_value (o) > INT_MAX)
        return errset (err, EINVAL,
                       "jobspec: attributes.system.exec.prolog-failures-"
                       "allowed: must be between 0 and %d",
                       INT_MAX);
    js->prolog_failures_allowed = (int)json_integer_value (o);
    return 0;
}

static int
decode_system (struct jobspec *js, const json_t *attrs, struct cairn_error *err)
{
    const json_t *system;
    const json_t *o;

    if (!attrs)
        return 0;
    if (!json_is_object (attrs))
        return errset (err, EINVAL, "jobspec: attributes: not an object");
    if (!(system = json_object_get (attrs, "system")))
        return 0;
    if (!json_is_object (system))
        return errset (err, EINVAL,
                       "jobspec: attributes.system: not an object");
    if ((o = json_object_get (system, "duration"))) {
        if (!json_is_number (o))
            return errset (err, EINVAL,
                           "jobspec: attributes.system.duration: not a"
                           " number");
        if (!(json_number_value (o) >= 0))
            return errset (err, EINVAL,
                           "jobspec: attributes.system.duration: must be"
                           " >= 0");
        js->duration = json_number_value (o);
    }
    if ((o = json_object_get (system, "cwd"))) {
        if (!json_is_string (o))
            return errset (err, EINVAL,
                           "jobspec: attributes.system.cwd: not a string");
        if (has_nul (o))
            return errset (err, EINVAL,
                           "jobspec: attributes.system.cwd: contains NUL");
        if (!(js->cwd = strdup (json_string_value (o))))
            return -1;
    }
    if ((o = json_object_get (system, "environment"))) {
        if (check_environment (o, "attributes.system.environment", err) < 0 ||
            !(js->env = pack_environment (o)))
            return -1;
    }
    if ((o = json_object_get (system, "exec")) && decode_exec (js, o, err) < 0)
        return -1;
    if ((o = json_object_get (system, "cairn")) &&
        decode_cairn (js, o, err) < 0)
        return -1;
    return 0;
}

struct jobspec *jobspec_decode (const json_t *o, struct cairn_error *err)
{
    struct jobspec *js;

    if (!json_is_object (o)) {
        errset (err, EINVAL, "jobspec: not an object");
        return NULL;
    }
    if (!(js = calloc (1, sizeof (*js)))) {
        errset (err, ENOMEM, "jobspec: out of memory");
        return NULL;
    }
    errno = 0;
    if (decode_command (js, json_object_get (o, "tasks"), err) < 0 ||
        decode_system (js, json_object_get (o, "attributes"), err) < 0) {
        if (errno == ENOMEM)
            errset (err, ENOMEM, "jobspec: out of memory");
        jobspec_destroy (js);
        return NULL;
    }
    return js;
}

char **jobspec_argv (const struct jobspec *js)
{
    return js ? js->argv : NULL;
}

char *const *jobspec_env (const struct jobspec *js)
{
    return js ? js->env : NULL;
}

const char *jobspec_cwd (const struct jobspec *js)
{
    return js ? js->cwd : NULL;
}

const char *jobspec_client (const struct jobspec *js)
{
    return js ? js->client : NULL;
}

const char *jobspec_instance (const struct jobspec *js)
{
    return js ? js->instance : NULL;
}

bool jobspec_hold_on_shrink (const struct jobspec *js)
{
    return js && js->hold_on_shrink;
}

bool jobspec_hold_start (const struct jobspec *js)
{
    return js && js->hold_start;
}

bool jobspec_shell_leader (const struct jobspec *js)
{
    return js && js->shell_leader;
}

double jobspec_duration (const struct jobspec *js)
{
    return js ? js->duration : 0.;
}

int jobspec_prolog_failures_allowed (const struct jobspec *js)
{
    return js ? js->prolog_failures_allowed : 0;
}

char *const *jobspec_rank_env (const struct jobspec *js, uint32_t rank)
{
    struct rank_env key = {.rank = rank};
    struct rank_env *re;

    if (!js || js->nrank_env == 0)
        return NULL;
    re = bsearch (&key, js->rank_env, js->nrank_env, sizeof (*js->rank_env),
                  rank_env_cmp);
    return re ? re->env : NULL;
}

int jobspec_check_ranks (const struct jobspec *js,
                         const struct idset *ranks,
                         struct cairn_error *err)
{
    for (size_t i = 0; js && i < js->nrank_env; i++) {
        uint32_t r = js->rank_env[i].rank;
        if (!idset_test (ranks, r))
            return errset (err, EINVAL,
                           "jobspec: " RANK_ENV ".%lu: rank %lu is not in R",
                           (unsigned long)r, (unsigned long)r);
    }
    return 0;
}

static json_t *create_system (const char *cwd,
                              const json_t *environment,
                              double duration,
                              int prolog_failures_allowed)
{
    json_t *system = json_pack ("{s:f}", "duration", duration);
    json_t *o;

    if (!system)
        goto nomem;
    if (cwd) {
        if (!(o = json_string (cwd))) { // invalid UTF-8
            json_decref (system);
            errno = EINVAL;
            return NULL;
        }
        if (json_object_set_new (system, "cwd", o) < 0)
            goto nomem;
    }
    if (environment && json_object_set_new (system, "environment",
                                            json_deep_copy (environment)) < 0)
        goto nomem;
    if (prolog_failures_allowed > 0 &&
        json_object_set_new (system, "exec",
                             json_pack ("{s:i}", "prolog-failures-allowed",
                                        prolog_failures_allowed)) < 0)
        goto nomem;
    return system;
nomem:
    json_decref (system);
    errno = ENOMEM;
    return NULL;
}

json_t *jobspec_create (char **argv,
                        uint32_t nranks,
                        const char *cwd,
                        const json_t *environment,
                        double duration,
                        int prolog_failures_allowed)
{
    json_t *cmd = NULL;
    json_t *system = NULL;
    json_t *o = NULL;
    struct jobspec *check;

    if (!argv || !argv[0] || nranks == 0 || !(duration >= 0) ||
        !isfinite (duration) || prolog_failures_allowed < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cmd = json_array ()))
        goto nomem;
    for (char **p = argv; *p; p++) {
        /* json_string() also fails on invalid UTF-8. */
        json_t *s = json_string (*p);
        if (!s) {
            errno = EINVAL;
            goto error;
        }
        if (json_array_append_new (cmd, s) < 0)
            goto nomem;
    }
    if (!(system = create_system (cwd, environment, duration,
                                  prolog_failures_allowed)))
        goto error;
    if (!(o = json_pack ("{s:i s:[{s:s s:I s:[{s:s s:i s:s s:[{s:s s:i}]}]}]"
                         " s:[{s:O s:s s:{s:i}}] s:{s:O}}",
                         "version", 1, "resources", "type", "node", "count",
                         (json_int_t)nranks, "with", "type", "slot", "count", 1,
                         "label", "task", "with", "type", "core", "count", 1,
                         "tasks", "command", cmd, "slot", "task", "count",
                         "per_slot", 1, "attributes", "system", system)))
        goto nomem;
    /* Refuse anything the decoder would refuse (e.g. environment names),
     * so that a jobspec built here is always accepted by cairnd.
     */
    if (!(check = jobspec_decode (o, NULL)))
        goto error;
    jobspec_destroy (check);
    json_decref (cmd);
    json_decref (system);
    return o;
nomem:
    errno = ENOMEM;
error:
    json_decref (cmd);
    json_decref (system);
    json_decref (o);
    return NULL;
}
