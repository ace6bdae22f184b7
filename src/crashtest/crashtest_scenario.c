/* crashtest_scenario.c - scenario files and the case directory they set up.
 *
 * A scenario names behaviours, not commands: every prolog, shell and
 * epilog runs the same generic script, which looks up what to do (exit
 * code, sleep, ignore SIGTERM, output) in a small file per job, phase and
 * rank, and appends "start"/"end" lines to a run log. That log is the
 * harness's ground truth for "what really ran, and how it ended".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/jobspec.h"
#include "core/rv1.h"
#include "crashtest/crashtest.h"

static const char *phase_names[] = {"prolog", "shell", "epilog"};

const char *ct_phase_name (int phase)
{
    return phase >= 0 && phase < CT_NPHASES ? phase_names[phase] : "?";
}

int ct_phase_parse (const char *s)
{
    for (int i = 0; i < CT_NPHASES; i++)
        if (s && strcmp (s, phase_names[i]) == 0)
            return i;
    return -1;
}

/* Fail on any key of o not in the NULL-terminated list. */
static int check_keys (const json_t *o,
                       const char *const *keys,
                       const char *where,
                       struct cairn_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)o, key, v)
    {
        bool known = false;
        for (size_t i = 0; keys[i] && !known; i++)
            known = strcmp (keys[i], key) == 0;
        if (!known)
            return errset (err, EINVAL, "%s: unknown key '%s'", where, key);
    }
    return 0;
}

static int get_number (const json_t *o,
                       const char *key,
                       double min,
                       double *out,
                       const char *where,
                       struct cairn_error *err)
{
    json_t *v = json_object_get (o, key);
    if (!v)
        return 0;
    if (!json_is_number (v) || json_number_value (v) < min ||
        !isfinite (json_number_value (v)))
        return errset (err, EINVAL, "%s.%s: must be a number >= %g", where, key,
                       min);
    *out = json_number_value (v);
    return 0;
}

/* A value per rank: one value for every rank, or an array of nranks. */
static int per_rank (const json_t *v,
                     int nranks,
                     int idx,
                     json_t **out,
                     const char *where,
                     const char *key,
                     struct cairn_error *err)
{
    if (!json_is_array (v)) {
        *out = (json_t *)v;
        return 0;
    }
    if (json_array_size (v) != (size_t)nranks && json_array_size (v) != 1)
        return errset (err, EINVAL, "%s.%s: needs 1 or %d values", where, key,
                       nranks);
    *out = json_array_get (v, json_array_size (v) == 1 ? 0 : (size_t)idx);
    return 0;
}

static int parse_behaviour (const json_t *o,
                            int nranks,
                            struct ct_behaviour *b,
                            const char *where,
                            struct cairn_error *err)
{
    static const char *const keys[] = {"exit",   "sleep",    "ignore-term",
                                       "output", "leftover", NULL};
    json_t *exit_v, *sleep_v, *ign_v, *v;
    double output = 0;

    for (int r = 0; r < CT_MAX_RANKS; r++) {
        b->exit[r] = 0;
        b->sleep[r] = 0.05;
        b->ignore_term[r] = false;
    }
    b->output = 0;
    b->leftover = false;
    if (!o)
        return 0;
    if (!json_is_object (o))
        return errset (err, EINVAL, "%s: must be an object", where);
    if (check_keys (o, keys, where, err) < 0 ||
        get_number (o, "output", 0, &output, where, err) < 0)
        return -1;
    b->output = (size_t)output;
    json_t *left_v = json_object_get (o, "leftover");
    if (left_v && !json_is_boolean (left_v))
        return errset (err, EINVAL, "%s.leftover: a boolean", where);
    b->leftover = json_is_true (left_v);
    exit_v = json_object_get (o, "exit");
    sleep_v = json_object_get (o, "sleep");
    ign_v = json_object_get (o, "ignore-term");
    for (int r = 0; r < nranks; r++) {
        if (exit_v) {
            if (per_rank (exit_v, nranks, r, &v, where, "exit", err) < 0)
                return -1;
            if (!json_is_integer (v) || json_integer_value (v) < 0 ||
                json_integer_value (v) > 255)
                return errset (err, EINVAL, "%s.exit: codes are 0..255", where);
            b->exit[r] = (int)json_integer_value (v);
        }
        if (sleep_v) {
            if (per_rank (sleep_v, nranks, r, &v, where, "sleep", err) < 0)
                return -1;
            if (!json_is_number (v) || json_number_value (v) < 0)
                return errset (err, EINVAL, "%s.sleep: seconds >= 0", where);
            b->sleep[r] = json_number_value (v);
        }
        if (ign_v) {
            if (per_rank (ign_v, nranks, r, &v, where, "ignore-term", err) < 0)
                return -1;
            if (!json_is_boolean (v))
                return errset (err, EINVAL, "%s.ignore-term: booleans", where);
            b->ignore_term[r] = json_is_true (v);
        }
    }
    return 0;
}

static int parse_action (const json_t *o,
                         struct ct_action *a,
                         const char *where,
                         struct cairn_error *err)
{
    static const char *const keys[] = {
        "after", "on",      "cancel", "fail-ranks", "expiration",
        "post",  "undrain", "resume", "ready",      NULL};
    const char *on = NULL, *ranks = NULL, *post = NULL, *undrain = NULL;
    int nkinds = 0;

    memset (a, 0, sizeof (*a));
    a->on = -1;
    if (!json_is_object (o))
        return errset (err, EINVAL, "%s: must be an object", where);
    if (check_keys (o, keys, where, err) < 0 ||
        get_number (o, "after", 0, &a->after, where, err) < 0)
        return -1;
    if (json_unpack ((json_t *)o, "{s?s s?s s?s s?s}", "on", &on, "fail-ranks",
                     &ranks, "post", &post, "undrain", &undrain) < 0)
        return errset (err, EINVAL,
                       "%s: on, fail-ranks, post, undrain: strings", where);
    if (on && strcmp (on, "submit") != 0 && (a->on = ct_phase_parse (on)) < 0)
        return errset (err, EINVAL, "%s.on: submit, prolog, shell or epilog",
                       where);
    if (json_is_true (json_object_get (o, "cancel"))) {
        a->kind = CT_ACT_CANCEL;
        nkinds++;
    }
    if (ranks) {
        a->kind = CT_ACT_FAIL_RANKS;
        snprintf (a->ranks, sizeof (a->ranks), "%s", ranks);
        nkinds++;
    }
    if (post) {
        a->kind = CT_ACT_POST;
        snprintf (a->ranks, sizeof (a->ranks), "%s", post);
        nkinds++;
    }
    if (undrain) {
        a->kind = CT_ACT_UNDRAIN;
        snprintf (a->ranks, sizeof (a->ranks), "%s", undrain);
        nkinds++;
    }
    if (json_is_true (json_object_get (o, "resume"))) {
        a->kind = CT_ACT_RESUME;
        nkinds++;
    }
    if (json_is_true (json_object_get (o, "ready"))) {
        a->kind = CT_ACT_READY;
        nkinds++;
    }
    if (json_object_get (o, "expiration")) {
        a->kind = CT_ACT_EXPIRATION;
        if (get_number (o, "expiration", 0, &a->expiration, where, err) < 0)
            return -1;
        nkinds++;
    }
    if (nkinds != 1)
        return errset (err, EINVAL,
                       "%s: needs exactly one of cancel, fail-ranks, "
                       "expiration, post, undrain, resume, ready",
                       where);
    return 0;
}

/* o.key, when present: a boolean, into *out (false when absent). */
static int get_flag (const json_t *o,
                     const char *key,
                     bool *out,
                     const char *where,
                     struct cairn_error *err)
{
    json_t *v = json_object_get (o, key);
    if (v && !json_is_boolean (v))
        return errset (err, EINVAL, "%s.%s: must be a boolean", where, key);
    *out = json_is_true (v);
    return 0;
}

static int parse_job (const json_t *o,
                      struct ct_job *job,
                      const char *where,
                      struct cairn_error *err)
{
    static const char *const keys[] = {
        "ranks",        "count",      "prolog-failures-allowed",
        "submit-after", "time-limit", "shell",
        "prolog",       "epilog",     "actions",
        "shell-leader", "hold-start", "hold-on-shrink",
        "expect",       NULL};
    double nranks = 1, pfa = 0;
    char sub[128];
    json_t *actions;

    if (!json_is_object (o))
        return errset (err, EINVAL, "%s: must be an object", where);
    if (check_keys (o, keys, where, err) < 0 ||
        get_number (o, "ranks", 1, &nranks, where, err) < 0 ||
        get_number (o, "prolog-failures-allowed", 0, &pfa, where, err) < 0 ||
        get_number (o, "submit-after", 0, &job->submit_after, where, err) < 0 ||
        get_number (o, "time-limit", 0, &job->time_limit, where, err) < 0)
        return -1;
    if (nranks > CT_MAX_RANKS)
        return errset (err, EINVAL, "%s.ranks: at most %d", where,
                       CT_MAX_RANKS);
    job->nranks = (int)nranks;
    job->pfa = (int)pfa;
    if (get_flag (o, "shell-leader", &job->shell_leader, where, err) < 0 ||
        get_flag (o, "hold-start", &job->hold_start, where, err) < 0 ||
        get_flag (o, "hold-on-shrink", &job->hold_on_shrink, where, err) < 0)
        return -1;
    for (int p = 0; p < CT_NPHASES; p++) {
        snprintf (sub, sizeof (sub), "%.60s.%s", where, phase_names[p]);
        if (parse_behaviour (json_object_get (o, phase_names[p]), job->nranks,
                             &job->beh[p], sub, err) < 0)
            return -1;
    }
    actions = json_object_get (o, "actions");
    if (actions && !json_is_array (actions))
        return errset (err, EINVAL, "%s.actions: must be an array", where);
    if (json_array_size (actions) > CT_MAX_ACTIONS)
        return errset (err, EINVAL, "%s.actions: at most %d", where,
                       CT_MAX_ACTIONS);
    for (size_t i = 0; i < json_array_size (actions); i++) {
        snprintf (sub, sizeof (sub), "%.60s.actions[%zu]", where, i);
        if (parse_action (json_array_get (actions, i), &job->actions[i], sub,
                          err) < 0)
            return -1;
        job->nactions++;
    }
    json_t *expect = json_object_get (o, "expect");
    if (expect) {
        snprintf (sub, sizeof (sub), "%.60s.expect", where);
        if (ct_expect_parse (expect, &job->expect, sub, err) < 0)
            return -1;
    }
    return 0;
}

/* The config as cairnd will get it, with the harness's commands. */
static json_t *config_with_commands (const json_t *config, const char *dir)
{
    json_t *c = json_deep_copy (config);
    char cmd[512];
    if (!c)
        return NULL;
    snprintf (cmd, sizeof (cmd), "%s/cmd.sh", dir);
    for (int p = 0; p < CT_NPHASES; p += 2) {
        json_t *o = json_object_get (c, phase_names[p]);
        if (o)
            json_object_set_new (o, "command",
                                 json_pack ("[s s]", cmd, phase_names[p]));
    }
    return c;
}

static int
parse_config (struct ct_scenario *sc, json_t *config, struct cairn_error *err)
{
    struct cairn_config cfg;
    json_t *full;
    int rc;

    if (!json_is_object (config))
        return errset (err, EINVAL, "config: must be an object");
    if (json_object_get (config, "statedir") ||
        json_object_get (config, "shim"))
        return errset (err, EINVAL,
                       "config: statedir and shim are the harness's");
    for (int p = 0; p < CT_NPHASES; p += 2) {
        json_t *o = json_object_get (config, phase_names[p]);
        if (o && json_object_get (o, "command"))
            return errset (err, EINVAL,
                           "config.%s.command: the harness sets it",
                           phase_names[p]);
    }
    sc->config = json_incref (config);
    sc->has_prolog = json_object_get (config, "prolog") != NULL;
    sc->has_epilog = json_object_get (config, "epilog") != NULL;
    if (!(full = config_with_commands (config, "/nonexistent")))
        return errset (err, ENOMEM, "out of memory");
    config_init (&cfg);
    rc = config_parse (&cfg, full, err);
    config_free (&cfg);
    json_decref (full);
    return rc < 0 ? errprefix (err, "config") : 0;
}

int ct_scenario_load (const char *path,
                      struct ct_scenario *sc,
                      struct cairn_error *err)
{
    static const char *const keys[] = {
        "name",    "description", "config", "jobs",  "restart-delay",
        "timeout", "sequential",  "faults", "modes", NULL};
    json_error_t jerr;
    json_t *o = NULL, *jobs, *config;
    const char *name = NULL;
    char where[64], abspath[PATH_MAX];

    memset (sc, 0, sizeof (*sc));
    sc->timeout = 30;
    if (!(o = json_load_file (path, JSON_REJECT_DUPLICATES, &jerr))) {
        errset (err, errno == ENOENT ? ENOENT : EINVAL, "%s:%d: %s", path,
                jerr.line, jerr.text);
        return -1;
    }
    if (!realpath (path, abspath))
        snprintf (abspath, sizeof (abspath), "%s", path);
    if (!(sc->path = strdup (abspath)))
        goto nomem;
    if (!json_is_object (o)) {
        errset (err, EINVAL, "not a JSON object");
        goto error;
    }
    if (check_keys (o, keys, "scenario", err) < 0 ||
        get_number (o, "restart-delay", 0, &sc->restart_delay, "scenario",
                    err) < 0 ||
        get_number (o, "timeout", 0.1, &sc->timeout, "scenario", err) < 0)
        goto error;
    (void)json_unpack (o, "{s?s}", "name", &name);
    if (!name) {
        const char *base = strrchr (abspath, '/');
        name = base ? base + 1 : abspath;
    }
    if (!(sc->name = strdup (name)))
        goto nomem;
    sc->name[strcspn (sc->name, ".")] = '\0';
    sc->sequential = json_is_true (json_object_get (o, "sequential"));
    sc->faults = json_incref (json_object_get (o, "faults"));
    if (sc->faults && !json_is_array (sc->faults)) {
        errset (err, EINVAL, "faults: must be an array of names");
        goto error;
    }
    sc->modes = json_incref (json_object_get (o, "modes"));
    if (sc->modes && !json_is_array (sc->modes)) {
        errset (err, EINVAL, "modes: must be an array of names");
        goto error;
    }
    config = json_object_get (o, "config");
    if (!config)
        config = json_object ();
    else
        json_incref (config);
    int rc = parse_config (sc, config, err);
    json_decref (config);
    if (rc < 0)
        goto error;
    jobs = json_object_get (o, "jobs");
    if (!json_is_array (jobs) || json_array_size (jobs) == 0) {
        errset (err, EINVAL, "jobs: must be a non-empty array");
        goto error;
    }
    for (size_t i = 0; i < json_array_size (jobs); i++) {
        json_t *jo = json_array_get (jobs, i);
        json_t *cnt = json_object_get (jo, "count");
        int count = cnt ? (int)json_integer_value (cnt) : 1;
        struct ct_job job = {0};
        if (count < 1 || count > 1000) {
            errset (err, EINVAL, "jobs[%zu].count: 1..1000", i);
            goto error;
        }
        snprintf (where, sizeof (where), "jobs[%zu]", i);
        if (parse_job (jo, &job, where, err) < 0)
            goto error;
        struct ct_job *nj =
            realloc (sc->jobs, (sc->njobs + count) * sizeof (*nj));
        if (!nj) {
            json_decref (job.expect);
            goto nomem;
        }
        sc->jobs = nj;
        for (int k = 0; k < count; k++) {
            sc->jobs[sc->njobs] = job;
            sc->jobs[sc->njobs].id = (uint64_t)sc->njobs + 1;
            json_incref (job.expect); /* each copy holds one */
            sc->njobs++;
        }
        json_decref (job.expect);
    }
    json_decref (o);
    return 0;
nomem:
    errset (err, ENOMEM, "out of memory");
error:
    errprefix (err, "%s", path);
    json_decref (o);
    ct_scenario_free (sc);
    errno = EINVAL;
    return -1;
}

void ct_scenario_free (struct ct_scenario *sc)
{
    if (!sc)
        return;
    int saved = errno;
    free (sc->path);
    free (sc->name);
    for (int i = 0; i < sc->njobs; i++)
        json_decref (sc->jobs[i].expect);
    free (sc->jobs);
    json_decref (sc->config);
    json_decref (sc->faults);
    json_decref (sc->modes);
    memset (sc, 0, sizeof (*sc));
    errno = saved;
}

/* The generic command. It traps TERM before it logs its start, so that a
 * "start" line of an ignore-term rank always means "TERM will not stop
 * it"; it logs its end just before exiting with the code it logs. */
static const char cmd_script[] =
    "#!/bin/sh\n"
    "# cairn-crashtest's generic command: cmd.sh PHASE\n"
    "d='%s'\n"
    "phase=$1\n"
    "job=${CAIRN_JOB_ID:-0}\n"
    "rank=${CAIRN_RANK:-all}\n"
    "f=\"$d/beh/$job.$phase.$rank\"\n"
    "[ -r \"$f\" ] || f=\"$d/beh/$job.$phase.all\"\n"
    "code=0; secs=0; ignore=0; out=0; left=0\n"
    "[ -r \"$f\" ] && read code secs ignore out left < \"$f\"\n"
    "[ \"$ignore\" = 1 ] && trap '' TERM\n"
    "echo \"$phase $job $rank ${CAIRN_EXECID:-none} $$ start\" >> "
    "\"$d/runlog\"\n"
    "# leftover: a task in a group of its own in our session, deaf to TERM\n"
    "[ \"$left\" = 1 ] && bash -c 'set -m; (trap \"\" TERM; exec sleep 300) "
    "& exit 0'\n"
    "[ \"$out\" -gt 0 ] && head -c \"$out\" /dev/zero | tr '\\000' x\n"
    "sleep \"$secs\"\n"
    "echo \"$phase $job $rank ${CAIRN_EXECID:-none} $$ end $code\" >> "
    "\"$d/runlog\"\n"
    "exit \"$code\"\n";

int ct_write_file (const char *path, const char *data, int mode)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    size_t len = strlen (data), off = 0;
    if (fd < 0)
        return -1;
    while (off < len) {
        ssize_t n = write (fd, data + off, len - off);
        if (n < 0) {
            int e = errno;
            close (fd);
            errno = e;
            return -1;
        }
        off += (size_t)n;
    }
    return close (fd);
}

static int write_behaviours (const struct ct_scenario *sc,
                             const char *dir,
                             struct cairn_error *err)
{
    char path[512], line[128];
    for (int j = 0; j < sc->njobs; j++) {
        const struct ct_job *job = &sc->jobs[j];
        for (int p = 0; p < CT_NPHASES; p++) {
            const struct ct_behaviour *b = &job->beh[p];
            for (int r = -1; r < job->nranks; r++) {
                int i = r < 0 ? 0 : r;
                if (r < 0)
                    snprintf (path, sizeof (path), "%s/beh/%ju.%s.all", dir,
                              (uintmax_t)job->id, phase_names[p]);
                else
                    snprintf (path, sizeof (path), "%s/beh/%ju.%s.%d", dir,
                              (uintmax_t)job->id, phase_names[p], r);
                snprintf (line, sizeof (line), "%d %.3f %d %zu %d\n",
                          b->exit[i], b->sleep[i], b->ignore_term[i] ? 1 : 0,
                          b->output, b->leftover ? 1 : 0);
                if (ct_write_file (path, line, 0644) < 0)
                    return errprintf (err, "%s: %s", path, strerror (errno));
            }
        }
    }
    return 0;
}

int ct_scenario_setup (const struct ct_scenario *sc,
                       const char *dir,
                       struct cairn_error *err)
{
    char path[512], *script = NULL;
    json_t *config = NULL;
    int rc = -1;

    snprintf (path, sizeof (path), "%s/beh", dir);
    if (mkdir (dir, 0700) < 0 || mkdir (path, 0700) < 0)
        return errprintf (err, "%s: %s", path, strerror (errno));
    snprintf (path, sizeof (path), "%s/s", dir);
    if (mkdir (path, 0700) < 0)
        return errprintf (err, "%s: %s", path, strerror (errno));
    snprintf (path, sizeof (path), "%s/cmd.sh", dir);
    if (asprintf (&script, cmd_script, dir) < 0)
        return errprintf (err, "out of memory");
    if (ct_write_file (path, script, 0755) < 0) {
        errprintf (err, "%s: %s", path, strerror (errno));
        goto done;
    }
    snprintf (path, sizeof (path), "%s/config.json", dir);
    if (!(config = config_with_commands (sc->config, dir)) ||
        json_dump_file (config, path, JSON_INDENT (1)) < 0) {
        errprintf (err, "%s: cannot write", path);
        goto done;
    }
    snprintf (path, sizeof (path), "%s/runlog", dir);
    if (ct_write_file (path, "", 0644) < 0) {
        errprintf (err, "%s: %s", path, strerror (errno));
        goto done;
    }
    rc = write_behaviours (sc, dir, err);
done:
    free (script);
    json_decref (config);
    return rc;
}

json_t *ct_job_R (const struct ct_job *job, double expiration)
{
    return rv1_create ((uint32_t)job->nranks, 1, "node", expiration);
}

json_t *ct_job_jobspec (const struct ct_job *job, const char *dir)
{
    char cmd[512];
    snprintf (cmd, sizeof (cmd), "%s/cmd.sh", dir);
    char *argv[] = {cmd, "shell", NULL};
    json_t *js =
        jobspec_create (argv, (uint32_t)job->nranks, dir, NULL, 0, job->pfa);
    /* shell-leader: each shell's end is a shell-end event then
     * (cairn-journal(5)); hold-start: the shells wait for the word (a
     * ready action); hold-on-shrink: a tolerated failure's hold for a
     * resume action */
    json_t *cairn = json_object ();
    if (cairn && job->shell_leader)
        json_object_set_new (cairn, "shell-leader", json_true ());
    if (cairn && job->hold_start)
        json_object_set_new (cairn, "hold-start", json_true ());
    if (cairn && job->hold_on_shrink)
        json_object_set_new (cairn, "hold-on-shrink", json_true ());
    if (!js || !cairn ||
        (json_object_size (cairn) > 0 &&
         json_object_set (
             json_object_get (json_object_get (js, "attributes"), "system"),
             "cairn", cairn) < 0)) {
        json_decref (cairn);
        json_decref (js);
        return NULL;
    }
    json_decref (cairn);
    return js;
}
