/* config.c - see config.h
 *
 * Each JSON object of the file has a small table mapping its keys to a
 * parser and a field offset. The same tables drive the daemon's file
 * (config_parse), the job snapshot (job_config_decode) and the key list
 * (config_keys), so the three cannot drift apart.
 *
 * Parsing works on a deep copy that replaces the caller's struct only when
 * everything parsed, so a bad file leaves the running configuration intact.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "core/config.h"
#include "core/fsd.h"
#include "core/idset.h"
#include "core/signame.h"

#define KIB ((size_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

/* Sizes and counts are size_t but travel as JSON integers. */
#if JSON_INTEGER_IS_LONG_LONG
#define JSON_INT_MAX LLONG_MAX
#else
#define JSON_INT_MAX LONG_MAX
#endif
_Static_assert(SIZE_MAX >= JSON_INT_MAX, "size_t narrower than json_int_t");

/* What a key's parser gets. A parser replaces its field only on success;
 * on failure it returns -1 with errno and a message naming a->path.
 */
struct arg {
    const json_t *v;
    void *base;  /* the struct the enclosing object fills */
    void *field; /* base + the key's offset */
    const struct key *k;
    const char *path; /* dotted key, e.g. "prolog.timeout" */
    struct cairn_error *err;
};

struct key {
    const char *name;
    int (*parse) (const struct arg *a);
    size_t offset;         /* of the field in the struct at base */
    long long min;         /* smallest allowed value, for numbers and sizes */
    const struct key *sub; /* parse_section: the nested object's keys */
};

static int invalid (const struct arg *a, const char *what)
{
    return errset (a->err, EINVAL, "%s: %s", a->path, what);
}

/* A child parser (fsd, signame) wrote its message: put the key in front. */
static int prefixed (const struct arg *a)
{
    errprefix (a->err, "%s", a->path);
    errno = EINVAL;
    return -1;
}

static int nomem (struct cairn_error *err)
{
    return errset (err, ENOMEM, "out of memory");
}

/* argv helpers */

static void argv_free (char **argv)
{
    if (argv) {
        int saved = errno;
        for (char **p = argv; *p; p++)
            free (*p);
        free (argv);
        errno = saved;
    }
}

static char **argv_dup (char *const *argv)
{
    size_t n = 0;
    char **new;

    while (argv[n])
        n++;
    if (!(new = calloc (n + 1, sizeof (*new))))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(new[i] = strdup (argv[i]))) {
            argv_free (new);
            errno = ENOMEM;
            return NULL;
        }
    }
    return new;
}

/* A JSON array of strings, at least one, the first non-empty, into a new
 * argv. NULL with errno EINVAL ("path: what" in err) or ENOMEM.
 */
static char **
argv_decode (const json_t *v, const struct arg *a, const char *what)
{
    size_t n = json_array_size (v);
    char **argv;

    if (!json_is_array (v) || n == 0) {
        invalid (a, what);
        return NULL;
    }
    if (!(argv = calloc (n + 1, sizeof (*argv)))) {
        nomem (a->err);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get (v, i);
        if (!json_is_string (s) ||
            strlen (json_string_value (s)) != json_string_length (s) ||
            (i == 0 && json_string_length (s) == 0)) {
            invalid (a, what);
            goto error;
        }
        if (!(argv[i] = strdup (json_string_value (s)))) {
            nomem (a->err);
            goto error;
        }
    }
    return argv;
error:
    argv_free (argv);
    return NULL;
}

static json_t *argv_encode (char *const *argv)
{
    json_t *a;

    if (!argv)
        return json_null ();
    if (!(a = json_array ()))
        return NULL;
    for (char *const *p = argv; *p; p++) {
        if (json_array_append_new (a, json_string (*p)) < 0) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}

/* Key parsers */

static int parse_command (const struct arg *a)
{
    const char *what = "must be a non-empty array of strings";
    char **argv = NULL;

    if (!json_is_null (a->v) && !(argv = argv_decode (a->v, a, what)))
        return -1;
    argv_free (*(char ***)a->field);
    *(char ***)a->field = argv;
    return 0;
}

static int parse_job_shell (const struct arg *a)
{
    const char *what = "must be a path or a non-empty array of strings";
    char **argv = NULL;

    if (json_is_string (a->v)) {
        // One path, not split on blanks: a path may contain them.
        json_t *one = json_pack ("[O]", a->v);
        if (!one)
            return nomem (a->err);
        argv = argv_decode (one, a, what);
        json_decref (one);
        if (!argv)
            return -1;
    } else if (!json_is_null (a->v) && !(argv = argv_decode (a->v, a, what)))
        return -1;
    argv_free (*(char ***)a->field);
    *(char ***)a->field = argv;
    return 0;
}

static int parse_string (const struct arg *a)
{
    char *s = NULL;

    if (!json_is_null (a->v)) {
        if (!json_is_string (a->v) || json_string_length (a->v) == 0 ||
            strlen (json_string_value (a->v)) != json_string_length (a->v))
            return invalid (a, "must be a non-empty string");
        if (!(s = strdup (json_string_value (a->v))))
            return nomem (a->err);
    }
    free (*(char **)a->field);
    *(char **)a->field = s;
    return 0;
}

/* An absolute path, or "statedir" (the exit dir stays on the state dir's
 * file system). */
static int parse_run_dir (const struct arg *a)
{
    const char *v = json_string_value (a->v);
    if (v && v[0] != '/' && strcmp (v, "statedir") != 0)
        return invalid (a, "must be an absolute path or \"statedir\"");
    return parse_string (a);
}

/* An absolute path (or null). */
static int parse_absolute (const struct arg *a)
{
    const char *v = json_string_value (a->v);
    if (v && v[0] != '/')
        return invalid (a, "must be an absolute path");
    return parse_string (a);
}

static int parse_bool (const struct arg *a)
{
    if (!json_is_boolean (a->v))
        return invalid (a, "must be true or false");
    *(bool *)a->field = json_is_true (a->v);
    return 0;
}

static int cmp_int (const void *a, const void *b)
{
    int x = *(const int *)a;
    int y = *(const int *)b;
    return (x > y) - (x < y);
}

static int parse_exit_codes (const struct arg *a)
{
    const char *what = "must be an array of integers in 1..255";
    struct perilog_config *p = a->base;
    size_t n = json_array_size (a->v);
    int *codes = NULL;

    if (!json_is_array (a->v))
        return invalid (a, what);
    if (n > 0 && !(codes = calloc (n, sizeof (*codes))))
        return nomem (a->err);
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get (a->v, i);
        json_int_t x = json_integer_value (c);
        if (!json_is_integer (c) || x < 1 || x > 255) {
            free (codes);
            return invalid (a, what);
        }
        codes[i] = (int)x;
    }
    if (n > 0)
        qsort (codes, n, sizeof (*codes), cmp_int);
    for (size_t i = 1; i < n; i++) {
        if (codes[i] == codes[i - 1]) {
            int dup = codes[i];
            free (codes);
            return errset (a->err, EINVAL, "%s: exit code %d listed twice",
                           a->path, dup);
        }
    }
    free (p->tolerable_exit_codes);
    p->tolerable_exit_codes = codes;
    p->ntolerable = n;
    return 0;
}

/* The epilog knows the key only to say why it is refused. */
static int parse_prolog_only (const struct arg *a)
{
    return invalid (a, "only the prolog has tolerable exit codes"
                       " (an epilog failure always drains the rank)");
}

static int get_duration (const struct arg *a, double *d)
{
    if (fsd_parse_json (a->v, d, a->err) < 0)
        return prefixed (a);
    return 0;
}

/* Flux: "0" and "inf" both disable a perilog timeout. */
static int parse_timeout (const struct arg *a)
{
    double d = 0.;

    if (get_duration (a, &d) < 0)
        return -1;
    *(double *)a->field = isinf (d) ? 0. : d;
    return 0;
}

/* The interval between kill signals: the next one must come eventually. */
static int parse_kill_timeout (const struct arg *a)
{
    double d = 0.;

    if (get_duration (a, &d) < 0)
        return -1;
    if (!(d > 0) || isinf (d))
        return invalid (a, "must be a finite duration > 0");
    *(double *)a->field = d;
    return 0;
}

static int parse_max_kill_timeout (const struct arg *a)
{
    double d = 0.;

    if (get_duration (a, &d) < 0)
        return -1;
    if (isinf (d))
        return invalid (a, "must be a finite duration (0 = none)");
    *(double *)a->field = d;
    return 0;
}

static int parse_retention (const struct arg *a)
{
    return get_duration (a, a->field);
}

static int parse_commit_interval (const struct arg *a)
{
    double d = 0.;

    if (get_duration (a, &d) < 0)
        return -1;
    if (!(d >= 0 && d <= 1))
        return invalid (a, "must be a duration from 0 to 1s");
    *(double *)a->field = d;
    return 0;
}

static int parse_share (const struct arg *a)
{
    double d;

    if (!json_is_number (a->v))
        return invalid (a, "must be a number from 0 to 0.9");
    d = json_number_value (a->v);
    /* of the journal, the last 10% is the full journal's; of max-jobs,
     * the same bound, for one parser */
    if (!(d >= 0 && d <= 0.9))
        return invalid (a, "must be a number from 0 to 0.9");
    *(double *)a->field = d;
    return 0;
}

/* -1 is not a duration but Flux's "release everything at the end"; inf
 * would mean "never release", which is what -1 is for.
 */
static int parse_release_after (const struct arg *a)
{
    const json_t *v = a->v;
    double d = 0.;

    if ((json_is_number (v) && json_number_value (v) == -1.) ||
        (json_is_string (v) && !strcmp (json_string_value (v), "-1"))) {
        *(double *)a->field = -1.;
        return 0;
    }
    if (get_duration (a, &d) < 0)
        return -1;
    if (isinf (d))
        return invalid (a, "inf is not allowed: use -1 to release every"
                           " rank at the end");
    *(double *)a->field = d;
    return 0;
}

static int parse_signal (const struct arg *a)
{
    if (signame_parse_json (a->v, a->field, a->err) < 0)
        return prefixed (a);
    return 0;
}

static int get_integer (const struct arg *a, long long max, long long *x)
{
    if (!json_is_integer (a->v) || json_integer_value (a->v) < a->k->min)
        return errset (a->err, EINVAL, "%s: must be an integer >= %lld",
                       a->path, a->k->min);
    if (json_integer_value (a->v) > max)
        return errset (a->err, EINVAL, "%s: must be <= %lld", a->path, max);
    *x = json_integer_value (a->v);
    return 0;
}

static int parse_int (const struct arg *a)
{
    long long x = 0;

    if (get_integer (a, INT_MAX, &x) < 0)
        return -1;
    *(int *)a->field = (int)x;
    return 0;
}

static int parse_percent (const struct arg *a)
{
    double d = json_number_value (a->v);

    if (!json_is_number (a->v) || !(d >= 0) || !isfinite (d))
        return invalid (a, "must be a number >= 0");
    *(double *)a->field = d;
    return 0;
}

static int parse_count (const struct arg *a)
{
    long long x = 0;

    if (get_integer (a, JSON_INT_MAX, &x) < 0)
        return -1;
    *(size_t *)a->field = (size_t)x;
    return 0;
}

/* A size: bytes as an integer, or digits with an optional K/M/G suffix.
 * Capped at the largest JSON integer so that it can be encoded again.
 */
static int get_size (const struct arg *a, unsigned long long *sz)
{
    unsigned long long n = 0, mult = 1;
    const char *s, *p;

    if (json_is_integer (a->v)) {
        if (json_integer_value (a->v) < 0)
            return invalid (a, "a size must be >= 0");
        *sz = (unsigned long long)json_integer_value (a->v);
        return 0;
    }
    if (!json_is_string (a->v))
        return invalid (a, "a size must be an integer or a string");
    s = json_string_value (a->v);
    for (p = s; *p >= '0' && *p <= '9'; p++) {
        if (__builtin_mul_overflow (n, 10, &n) ||
            __builtin_add_overflow (n, (unsigned)(*p - '0'), &n))
            goto toolarge;
    }
    if (p == s) // no digits: "", "K", "-1"
        goto invalid;
    if (*p == 'K' || *p == 'k')
        mult = KIB;
    else if (*p == 'M' || *p == 'm')
        mult = MIB;
    else if (*p == 'G' || *p == 'g')
        mult = GIB;
    if (mult > 1)
        p++;
    if (*p != '\0' || strlen (s) != json_string_length (a->v))
        goto invalid;
    if (__builtin_mul_overflow (n, mult, &n) ||
        n > (unsigned long long)JSON_INT_MAX)
        goto toolarge;
    *sz = n;
    return 0;
invalid:
    return errset (a->err, EINVAL,
                   "%s: invalid size '%.64s' (bytes, or a number with"
                   " suffix K, M or G)",
                   a->path, s);
toolarge:
    return errset (a->err, EINVAL, "%s: size '%.64s' is too large", a->path, s);
}

static int parse_size (const struct arg *a)
{
    unsigned long long sz = 0;
    long long min = a->k->min;

    if (get_size (a, &sz) < 0)
        return -1;
    if (sz < (unsigned long long)min) {
        if (min % (long long)MIB == 0)
            return errset (a->err, EINVAL, "%s: must be at least %lldM",
                           a->path, min / (long long)MIB);
        return errset (a->err, EINVAL, "%s: must be at least %lldK", a->path,
                       min / (long long)KIB);
    }
    *(size_t *)a->field = (size_t)sz;
    return 0;
}

static int parse_object (const json_t *o,
                         const struct key *tab,
                         void *base,
                         const char *prefix,
                         struct cairn_error *err);

static int parse_section (const struct arg *a)
{
    return parse_object (a->v, a->k->sub, a->field, a->path, a->err);
}

static int parse_positive_duration (const struct arg *a)
{
    double d;
    if (get_duration (a, &d) < 0)
        return -1;
    if (!(d > 0) || !isfinite (d))
        return invalid (a, "must be a finite duration > 0");
    *(double *)a->field = d;
    return 0;
}

static int parse_idset (const struct arg *a)
{
    struct idset *set;
    if (!json_is_string (a->v) ||
        !(set = idset_decode (json_string_value (a->v), NULL)))
        return invalid (a, "must be an idset string such as \"0\" or "
                           "\"0-3\"");
    idset_destroy (set);
    return parse_string (a);
}

/* null: off; an object: on, its keys over the defaults. */
static int parse_multinode (const struct arg *a)
{
    struct multinode_config *m = a->field;
    struct multinode_config tmp = {.on = true, .timeout = 300., .poll = 10.};

    if (json_is_null (a->v)) {
        free (m->local_ranks);
        *m = (struct multinode_config){0};
        return 0;
    }
    if (m->on)
        tmp = *m;
    if (!(tmp.local_ranks = strdup (m->on && m->local_ranks ? m->local_ranks
                                                            : "0")))
        return nomem (a->err);
    if (parse_object (a->v, a->k->sub, &tmp, a->path, a->err) < 0) {
        free (tmp.local_ranks);
        return -1;
    }
    free (m->local_ranks);
    *m = tmp;
    return 0;
}

static int parse_role (const struct arg *a)
{
    const char *s = json_string_value (a->v);
    if (!s || (strcmp (s, "exec") != 0 && strcmp (s, "node") != 0))
        return invalid (a, "must be \"exec\" or \"node\"");
    *(bool *)a->field = strcmp (s, "node") == 0;
    return 0;
}

// clang-format off
/* Tables. Offsets are relative to the struct the enclosing object fills. */

#define KEY(n, f, off) {.name = (n), .parse = (f), .offset = (off)}
#define KEYMIN(n, f, off, m)                                                   \
    {.name = (n), .parse = (f), .offset = (off), .min = (m)}
#define SECTION(n, off, tab)                                                   \
    {.name = (n), .parse = parse_section, .offset = (off), .sub = (tab)}
#define END {.name = NULL}

#define PL(field) offsetof (struct perilog_config, field)
#define PERILOG_KEYS                                                           \
    KEY ("command", parse_command, PL (command)),                              \
    KEY ("per-rank", parse_bool, PL (per_rank)),                               \
    KEY ("timeout", parse_timeout, PL (timeout)),                              \
    KEY ("kill-timeout", parse_kill_timeout, PL (kill_timeout)),               \
    KEY ("cancel-on-exception", parse_bool, PL (cancel_on_exception))

static const struct key prolog_keys[] = {
    PERILOG_KEYS,
    KEY ("tolerable-exit-codes", parse_exit_codes, 0),
    END,
};

static const struct key epilog_keys[] = {
    PERILOG_KEYS,
    KEY ("tolerable-exit-codes", parse_prolog_only, 0),
    END,
};

#define EX(field) offsetof (struct exec_config, field)
static const struct key exec_keys[] = {
    KEY ("job-shell", parse_job_shell, EX (job_shell)),
    KEY ("kill-timeout", parse_kill_timeout, EX (kill_timeout)),
    KEY ("max-kill-timeout", parse_max_kill_timeout, EX (max_kill_timeout)),
    KEY ("term-signal", parse_signal, EX (term_signal)),
    KEY ("kill-signal", parse_signal, EX (kill_signal)),
    KEYMIN ("max-kill-count", parse_int, EX (max_kill_count), 1),
    KEY ("max-start-delay-percent", parse_percent,
         EX (max_start_delay_percent)),
    END,
};

#define JC(field) offsetof (struct job_config, field)
static const struct key output_keys[] = {
    KEY ("max-bytes", parse_size, JC (output_max_bytes)),
    END,
};

#define MN(field) offsetof (struct multinode_config, field)
static const struct key multinode_keys[] = {
    KEY ("local-ranks", parse_idset, MN (local_ranks)),
    KEY ("timeout", parse_positive_duration, MN (timeout)),
    KEY ("poll", parse_positive_duration, MN (poll)),
    END,
};

/* The job's keys, for a job_config at offset off of the enclosing struct. */
#define JOB_KEYS(off)                                                          \
    SECTION ("prolog", (off) + JC (prolog), prolog_keys),                      \
    SECTION ("epilog", (off) + JC (epilog), epilog_keys),                      \
    SECTION ("exec", (off) + JC (exec), exec_keys),                            \
    KEY ("release-after", parse_release_after, (off) + JC (release_after)),    \
    SECTION ("output", (off), output_keys),                                    \
    {.name = "multinode", .parse = parse_multinode,                            \
     .offset = (off) + JC (multinode), .sub = multinode_keys}

static const struct key job_keys[] = {
    JOB_KEYS (0),
    END,
};

#define CF(field) offsetof (struct cairn_config, field)
static const struct key journal_keys[] = {
    KEYMIN ("max-size", parse_size, CF (journal_max_size), MIB),
    KEY ("retention", parse_retention, CF (journal_retention)),
    KEY ("commit-interval", parse_commit_interval,
         CF (journal_commit_interval)),
    END,
};

static const struct key limits_keys[] = {
    KEYMIN ("max-request-size", parse_size, CF (max_request_size), 4 * KIB),
    KEYMIN ("max-ranks", parse_count, CF (max_ranks), 1),
    KEYMIN ("max-connections", parse_int, CF (max_connections), 1),
    KEYMIN ("max-user-connections", parse_int, CF (max_user_connections), 1),
    KEYMIN ("max-jobs", parse_int, CF (max_jobs), 1),
    KEY ("user-idle-timeout", parse_timeout, CF (user_idle_timeout)),
    KEYMIN ("user-max-jobs", parse_int, CF (user_max_jobs), 1),
    KEYMIN ("user-max-journal-bytes", parse_size,
            CF (user_max_journal_bytes), 64 * KIB),
    KEY ("users-journal-share", parse_share, CF (users_journal_share)),
    KEY ("users-jobs-share", parse_share, CF (users_jobs_share)),
    END,
};

/* A Flux system instance run by an unprivileged user (SECURITY.md) */
static const struct key flux_keys[] = {
    KEY ("instance-owner", parse_string, CF (flux_owner)),
    KEY ("imp", parse_absolute, CF (flux_imp)),
    END,
};

static const struct key top_keys[] = {
    KEY ("statedir", parse_string, CF (statedir)),
    KEY ("shim", parse_string, CF (shim)),
    KEY ("public-socket", parse_string, CF (public_socket)),
    KEY ("cgroup-parent", parse_string, CF (cgroup_parent)),
    KEYMIN ("cgroup-pids-max", parse_int, CF (cgroup_pids_max), 1),
    KEYMIN ("cgroup-memory-max", parse_size, CF (cgroup_memory_max), MIB),
    KEYMIN ("rlimit-nofile", parse_int, CF (rlimit_nofile), 64),
    KEYMIN ("rlimit-nproc", parse_int, CF (rlimit_nproc), 1),
    KEY ("run-dir", parse_run_dir, CF (run_dir)),
    KEY ("role", parse_role, CF (role_node)),
    JOB_KEYS (CF (job)),
    SECTION ("journal", 0, journal_keys),
    SECTION ("limits", 0, limits_keys),
    SECTION ("flux", 0, flux_keys),
    END,
};
// clang-format on

static void
key_path (char *buf, size_t len, const char *prefix, const char *name)
{
    snprintf (buf, len, "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
              name);
}

/* Apply every key of o to the struct at base, as tab says. */
static int parse_object (const json_t *o,
                         const struct key *tab,
                         void *base,
                         const char *prefix,
                         struct cairn_error *err)
{
    const char *name;
    json_t *v;

    if (!json_is_object (o)) {
        if (prefix)
            return errset (err, EINVAL, "%s: must be an object", prefix);
        return errset (err, EINVAL, "configuration must be a JSON object");
    }
    json_object_foreach ((json_t *)o, name, v)
    {
        const struct key *k = tab;
        char path[128];

        key_path (path, sizeof (path), prefix, name);
        while (k->name && strcmp (k->name, name) != 0)
            k++;
        if (!k->name)
            return errset (err, EINVAL, "unknown key '%s'", path);
        struct arg a = {.v = v,
                        .base = base,
                        .field = (char *)base + k->offset,
                        .k = k,
                        .path = path,
                        .err = err};
        if (k->parse (&a) < 0)
            return -1;
    }
    return 0;
}

/* job_config */

void job_config_init (struct job_config *jc)
{
    *jc = (struct job_config){
        .prolog = {.timeout = 30 * 60.,
                   .kill_timeout = 60.,
                   .cancel_on_exception = true},
        .epilog = {.timeout = 0., .kill_timeout = 60.},
        .exec = {.kill_timeout = 5.,
                 .term_signal = SIGTERM,
                 .kill_signal = SIGKILL,
                 .max_kill_count = 8,
                 .max_start_delay_percent = 25.},
        .release_after = -1.,
        .output_max_bytes = 64 * KIB,
    };
}

void job_config_free (struct job_config *jc)
{
    if (jc) {
        int saved = errno;
        argv_free (jc->prolog.command);
        argv_free (jc->epilog.command);
        argv_free (jc->exec.job_shell);
        free (jc->multinode.local_ranks);
        free (jc->prolog.tolerable_exit_codes);
        free (jc->epilog.tolerable_exit_codes);
        memset (jc, 0, sizeof (*jc));
        errno = saved;
    }
}

/* dst already holds src's scalars and NULL pointers. */
static int perilog_copy (struct perilog_config *dst,
                         const struct perilog_config *src)
{
    size_t sz = src->ntolerable * sizeof (int);

    if (src->command && !(dst->command = argv_dup (src->command)))
        return -1;
    if (src->ntolerable > 0) {
        if (!(dst->tolerable_exit_codes = malloc (sz)))
            return -1;
        memcpy (dst->tolerable_exit_codes, src->tolerable_exit_codes, sz);
    }
    return 0;
}

int job_config_copy (struct job_config *dst, const struct job_config *src)
{
    struct job_config tmp;

    if (!dst || !src) {
        errno = EINVAL;
        return -1;
    }
    tmp = *src;
    tmp.prolog.command = tmp.epilog.command = tmp.exec.job_shell = NULL;
    tmp.prolog.tolerable_exit_codes = tmp.epilog.tolerable_exit_codes = NULL;
    tmp.multinode.local_ranks = NULL;
    if ((src->multinode.local_ranks &&
         !(tmp.multinode.local_ranks = strdup (src->multinode.local_ranks))) ||
        perilog_copy (&tmp.prolog, &src->prolog) < 0 ||
        perilog_copy (&tmp.epilog, &src->epilog) < 0 ||
        (src->exec.job_shell &&
         !(tmp.exec.job_shell = argv_dup (src->exec.job_shell)))) {
        job_config_free (&tmp);
        errno = ENOMEM;
        return -1;
    }
    *dst = tmp;
    return 0;
}

static json_t *perilog_encode (const struct perilog_config *p, bool prolog)
{
    json_t *o, *codes;

    o = json_pack ("{s:o s:b s:f s:f s:b}", "command", argv_encode (p->command),
                   "per-rank", p->per_rank, "timeout", p->timeout,
                   "kill-timeout", p->kill_timeout, "cancel-on-exception",
                   p->cancel_on_exception);
    if (!o || !prolog)
        return o;
    if (!(codes = json_array ()) ||
        json_object_set_new (o, "tolerable-exit-codes", codes) < 0)
        goto error;
    for (size_t i = 0; i < p->ntolerable; i++) {
        json_t *c = json_integer (p->tolerable_exit_codes[i]);
        if (json_array_append_new (codes, c) < 0)
            goto error;
    }
    return o;
error:
    json_decref (o);
    return NULL;
}

json_t *job_config_encode (const struct job_config *jc)
{
    const struct exec_config *e;
    const char *term, *kill;
    json_t *o;

    if (!jc) {
        errno = EINVAL;
        return NULL;
    }
    e = &jc->exec;
    term = signame_str (e->term_signal);
    kill = signame_str (e->kill_signal);
    // json_real() refuses inf and nan: say EINVAL, not ENOMEM.
    if (!term || !kill || !isfinite (jc->prolog.timeout) ||
        !isfinite (jc->prolog.kill_timeout) || !isfinite (jc->epilog.timeout) ||
        !isfinite (jc->epilog.kill_timeout) || !isfinite (e->kill_timeout) ||
        !isfinite (e->max_kill_timeout) ||
        !isfinite (e->max_start_delay_percent) ||
        !isfinite (jc->release_after) ||
        jc->output_max_bytes > (size_t)JSON_INT_MAX) {
        errno = EINVAL;
        return NULL;
    }
    // clang-format off
    o = json_pack ("{s:o s:o s:{s:o s:f s:f s:s s:s s:i} s:f s:{s:I}}",
                   "prolog", perilog_encode (&jc->prolog, true),
                   "epilog", perilog_encode (&jc->epilog, false),
                   "exec",
                   "job-shell", argv_encode (e->job_shell),
                   "kill-timeout", e->kill_timeout,
                   "max-kill-timeout", e->max_kill_timeout,
                   "term-signal", term,
                   "kill-signal", kill,
                   "max-kill-count", e->max_kill_count,
                   "release-after", jc->release_after,
                   "output",
                   "max-bytes", (json_int_t)jc->output_max_bytes);
    // clang-format on
    /* newer keys only when not their default: a job that uses none of
     * them snapshots a config the previous release still reads (a
     * downgrade finishes the jobs this release started) */
    if (o && e->max_start_delay_percent != 25. &&
        json_object_set_new (json_object_get (o, "exec"),
                             "max-start-delay-percent",
                             json_real (e->max_start_delay_percent)) < 0) {
        json_decref (o);
        o = NULL;
    }
    if (o && jc->multinode.on) {
        json_t *m = json_pack ("{s:s s:f s:f}", "local-ranks",
                               jc->multinode.local_ranks
                                   ? jc->multinode.local_ranks
                                   : "0",
                               "timeout", jc->multinode.timeout, "poll",
                               jc->multinode.poll);
        if (!m || json_object_set_new (o, "multinode", m) < 0) {
            json_decref (o);
            o = NULL;
        }
    }
    if (!o)
        errno = ENOMEM;
    return o;
}

int job_config_decode (struct job_config *jc,
                       const json_t *o,
                       struct cairn_error *err)
{
    struct job_config tmp;

    if (!jc)
        return errset (err, EINVAL, "invalid argument");
    job_config_init (&tmp);
    if (parse_object (o, job_keys, &tmp, NULL, err) < 0) {
        job_config_free (&tmp);
        return -1;
    }
    *jc = tmp;
    return 0;
}

int job_config_override (struct job_config *jc,
                         const json_t *o,
                         const char *prefix,
                         struct cairn_error *err)
{
    struct job_config tmp;

    if (!jc)
        return errset (err, EINVAL, "invalid argument");
    if (job_config_copy (&tmp, jc) < 0)
        return errset (err, ENOMEM, "out of memory");
    if (parse_object (o, job_keys, &tmp, prefix, err) < 0) {
        job_config_free (&tmp);
        return -1;
    }
    job_config_free (jc);
    *jc = tmp;
    return 0;
}

/* cairn_config */

void config_init (struct cairn_config *cfg)
{
    *cfg = (struct cairn_config){
        .journal_max_size = GIB,
        .journal_retention = 7 * 86400.,
        .journal_commit_interval = 0.002,
        .max_request_size = MIB,
        .max_ranks = 65536,
        .max_connections = 256,
        .max_user_connections = 32,
        .max_jobs = 10000,
        .user_idle_timeout = 300.,
        .user_max_jobs = 1000,
        .user_max_journal_bytes = 64 * MIB,
        .users_journal_share = 0.5,
        .users_jobs_share = 0.5,
    };
    job_config_init (&cfg->job);
}

void config_free (struct cairn_config *cfg)
{
    if (cfg) {
        int saved = errno;
        free (cfg->statedir);
        free (cfg->shim);
        free (cfg->public_socket);
        free (cfg->cgroup_parent);
        free (cfg->run_dir);
        free (cfg->flux_owner);
        free (cfg->flux_imp);
        job_config_free (&cfg->job);
        memset (cfg, 0, sizeof (*cfg));
        errno = saved;
    }
}

int config_copy (struct cairn_config *dst, const struct cairn_config *src)
{
    struct cairn_config tmp = *src;

    tmp.statedir = tmp.shim = tmp.public_socket = tmp.cgroup_parent = NULL;
    tmp.run_dir = tmp.flux_owner = tmp.flux_imp = NULL;
    memset (&tmp.job, 0, sizeof (tmp.job));
    if ((src->statedir && !(tmp.statedir = strdup (src->statedir))) ||
        (src->shim && !(tmp.shim = strdup (src->shim))) ||
        (src->public_socket &&
         !(tmp.public_socket = strdup (src->public_socket))) ||
        (src->cgroup_parent &&
         !(tmp.cgroup_parent = strdup (src->cgroup_parent))) ||
        (src->run_dir && !(tmp.run_dir = strdup (src->run_dir))) ||
        (src->flux_owner && !(tmp.flux_owner = strdup (src->flux_owner))) ||
        (src->flux_imp && !(tmp.flux_imp = strdup (src->flux_imp))) ||
        job_config_copy (&tmp.job, &src->job) < 0) {
        config_free (&tmp);
        errno = ENOMEM;
        return -1;
    }
    *dst = tmp;
    return 0;
}

int config_parse (struct cairn_config *cfg,
                  const json_t *o,
                  struct cairn_error *err)
{
    struct cairn_config tmp;

    if (!cfg)
        return errset (err, EINVAL, "invalid argument");
    if (config_copy (&tmp, cfg) < 0)
        return nomem (err);
    if (parse_object (o, top_keys, &tmp, NULL, err) < 0) {
        config_free (&tmp);
        return -1;
    }
    if (tmp.role_node && tmp.job.multinode.on) {
        errset (err, EINVAL, "multinode: only for the rank-0 cairnd, not "
                             "one with \"role\": \"node\"");
        config_free (&tmp);
        return -1;
    }
    config_free (cfg);
    *cfg = tmp;
    return 0;
}

/* config_keys: built once from the tables. */

#define MAX_KEYS 64
#define MAX_KEYLEN 48

static char key_names[MAX_KEYS][MAX_KEYLEN];
static const char *key_list[MAX_KEYS + 1];
static once_flag key_once = ONCE_FLAG_INIT;

static void keys_add (const struct key *tab, const char *prefix, size_t *n)
{
    for (const struct key *k = tab; k->name; k++) {
        char path[MAX_KEYLEN];

        if (k->parse == parse_prolog_only)
            continue; // known only to refuse it
        key_path (path, sizeof (path), prefix, k->name);
        if (k->parse == parse_section || k->parse == parse_multinode)
            keys_add (k->sub, path, n);
        else if (*n < MAX_KEYS) {
            memcpy (key_names[*n], path, sizeof (path));
            key_list[*n] = key_names[*n];
            (*n)++;
        }
    }
}

static void keys_build (void)
{
    size_t n = 0;
    keys_add (top_keys, NULL, &n);
    key_list[n] = NULL;
}

const char *const *config_keys (void)
{
    call_once (&key_once, keys_build);
    return key_list;
}
