/* job.c - a job's state as the fold of its events.
 *
 * Every function here is a step of the fold: it may only look at the event
 * and the state built so far. Decisions live in job_decide.c; they emit
 * events through job_emit(), which folds them here, so live operation and
 * replay go through the very same code.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "core/eventlog.h"
#include "core/hostlist.h"
#include "core/job_private.h"
#include "core/streamnames.h"

struct job *job_create (uint64_t id)
{
    struct job *job = calloc (1, sizeof (*job));
    if (!job)
        return NULL;
    job->id = id;
    job->exc_wait_status = -1;
    job_config_init (&job->cfg);
    if (!(job->all = idset_create ()) || !(job->critical = idset_create ()) ||
        !(job->marked = idset_create ()) ||
        !(job->tolerated = idset_create ()) || !(job->run = idset_create ()) ||
        !(job->held = idset_create ()) || !(job->cleanup = idset_create ()) ||
        !(job->epilog_ranks = idset_create ()) ||
        !(job->epilog_covered = idset_create ()) ||
        !(job->done = idset_create ()) || !(job->released = idset_create ()) ||
        !(job->drained = idset_create ())) {
        job_destroy (job);
        errno = ENOMEM;
        return NULL;
    }
    return job;
}

void job_destroy (struct job *job)
{
    if (!job)
        return;
    int saved = errno;
    for (size_t i = 0; i < job->nprocs; i++) {
        idset_destroy (job->procs[i].ranks);
        free (job->procs[i].note);
        free (job->procs[i].host);
    }
    free (job->procs);
    free (job->procidx);
    json_decref (job->posted);
    free (job->mark_note);
    free (job->imp);
    idset_destroy (job->all);
    idset_destroy (job->local);
    idset_destroy (job->critical);
    idset_destroy (job->marked);
    idset_destroy (job->tolerated);
    idset_destroy (job->held);
    idset_destroy (job->run);
    idset_destroy (job->cleanup);
    idset_destroy (job->epilog_ranks);
    idset_destroy (job->epilog_covered);
    idset_destroy (job->done);
    idset_destroy (job->released);
    idset_destroy (job->drained);
    free (job->nodelist);
    jobspec_destroy (job->jobspec);
    job_config_free (&job->cfg);
    free (job);
    errno = saved;
}

/* The index of processes by execid: a few bytes per process where a
 * JSON object took some 150 (issue 35: memory per active rank). */
static size_t execid_hash (const char *execid)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = execid; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return h;
}

struct job_proc *job_proc_lookup (struct job *job, const char *execid)
{
    if (execid && job->procidx_cap > 0) {
        size_t mask = job->procidx_cap - 1;
        for (size_t i = execid_hash (execid) & mask; job->procidx[i];
             i = (i + 1) & mask) {
            struct job_proc *p = &job->procs[job->procidx[i] - 1];
            if (strcmp (p->execid, execid) == 0)
                return p;
        }
    }
    errno = ENOENT;
    return NULL;
}

static void
procidx_put (uint32_t *slots, size_t cap, const char *execid, size_t index)
{
    size_t i = execid_hash (execid) & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = (uint32_t)index + 1;
}

/* Index procs[index] (its execid set, not indexed yet). -1 with ENOMEM
 * (or EOVERFLOW past UINT32_MAX - 1 processes), the index unchanged. */
static int procidx_add (struct job *job, size_t index)
{
    if (index >= UINT32_MAX - 1) {
        errno = EOVERFLOW;
        return -1;
    }
    if ((index + 1) * 2 > job->procidx_cap) {
        size_t cap = job->procidx_cap ? job->procidx_cap * 2 : 8;
        while ((index + 1) * 2 > cap)
            cap *= 2;
        uint32_t *slots = calloc (cap, sizeof (*slots));
        if (!slots)
            return -1;
        for (size_t i = 0; i < index; i++)
            procidx_put (slots, cap, job->procs[i].execid, i);
        free (job->procidx);
        job->procidx = slots;
        job->procidx_cap = cap;
    }
    procidx_put (job->procidx, job->procidx_cap, job->procs[index].execid,
                 index);
    return 0;
}

/* ---- helpers for fold steps ---- */

static int ctx_idset (json_t *ctx,
                      const char *key,
                      struct idset **set,
                      struct cairn_error *err)
{
    const char *s;
    if (json_unpack (ctx, "{s:s}", key, &s) < 0)
        return errset (err, EINVAL, "missing %s", key);
    if (strcmp (s, "all") == 0)
        return errset (err, EINVAL, "%s: \"all\" is not expected here", key);
    if (!(*set = idset_decode (s, err)))
        return -1;
    return 0;
}

/* Add ranks named by ctx[key] to set. */
static int ctx_add_ranks (json_t *ctx,
                          const char *key,
                          struct idset *set,
                          struct cairn_error *err)
{
    struct idset *ranks;
    if (ctx_idset (ctx, key, &ranks, err) < 0)
        return -1;
    int rc = idset_add (set, ranks);
    idset_destroy (ranks);
    return rc;
}

static struct job_proc *
ctx_proc (struct job *job, json_t *ctx, struct cairn_error *err)
{
    const char *execid;
    struct job_proc *p;
    if (json_unpack (ctx, "{s:s}", "execid", &execid) < 0) {
        errset (err, EINVAL, "missing execid");
        return NULL;
    }
    if (!(p = job_proc_lookup (job, execid))) {
        errset (err, EINVAL, "unknown execid %s", execid);
        return NULL;
    }
    return p;
}

static void mark_done (struct job *job, const struct idset *ranks, double t)
{
    if (idset_empty (ranks))
        return;
    idset_add (job->done, ranks);
    /* release-after times the job's own cleanup: ranks left out after a
     * tolerated prolog failure are released on their own and do not start
     * the clock */
    if (job->t_first_done == 0 && !idset_is_subset (ranks, job->tolerated))
        job->t_first_done = t;
}

/* ---- fold steps, one per event name ----
 *
 * Each returns -1 with err when the event contradicts the job, else 0, or
 * 1 when the state stays as it is in spite of the table's "to" column
 * (job_apply moves it). */

typedef int (*fold_f) (struct job *job,
                       double t,
                       json_t *ctx,
                       struct cairn_error *err);

/* R's nodelist (an array of RFC 29 hostlists, checked by rv1_decode) as
 * one hostlist: the arrays' strings joined by commas. NULL on ENOMEM. */
static char *nodelist_join (const json_t *nodelist)
{
    size_t len = 1, i;
    json_t *h;
    char *s;

    json_array_foreach (nodelist, i, h) len += json_string_length (h) + 1;
    if (!(s = calloc (1, len)))
        return NULL;
    json_array_foreach (nodelist, i, h)
    {
        if (i > 0)
            strcat (s, ",");
        strcat (s, json_string_value (h));
    }
    return s;
}

static int
fold_accept (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    json_t *R, *jobspec, *config, *imp = NULL;
    struct rv1 *r;
    int userid;
    int privileged = 1; /* absent: journals before the field, all so */
    const char *imp_path = NULL;
    json_int_t imp_uid = 0;

    if (job->accepted)
        return errset (err, EINVAL, "accept: job already accepted");
    if (json_unpack (ctx, "{s:i s:o s:o s:o s?b s?o}", "userid", &userid, "R",
                     &R, "jobspec", &jobspec, "config", &config, "privileged",
                     &privileged, "imp", &imp) < 0)
        return errset (err, EINVAL, "accept: missing userid/R/jobspec/config");
    if (imp && (json_unpack (imp, "{s:s s:I}", "path", &imp_path, "uid",
                             &imp_uid) < 0 ||
                imp_uid < 0 || imp_uid > UINT32_MAX))
        return errset (err, EINVAL, "accept: imp: want {\"path\", \"uid\"}");
    char *impdup = imp_path ? strdup (imp_path) : NULL;
    if (imp_path && !impdup)
        return errset (err, ENOMEM, "accept: out of memory");
    /* Of R the job needs its ranks, expiration and hosts (a drain names
     * them: kept as the compact nodelist text, decoded when a drain
     * comes); the rest is the scheduler's. */
    if (!(r = rv1_decode (R, err)) ||
        !(job->jobspec = jobspec_decode (jobspec, err)) ||
        job_config_decode (&job->cfg, config, err) < 0) {
        rv1_destroy (r);
        jobspec_destroy (job->jobspec);
        job->jobspec = NULL; /* not accepted: as if never folded */
        free (impdup);
        return errprefix (err, "accept");
    }
    if (job->cfg.multinode.on &&
        !(job->local = idset_decode (job->cfg.multinode.local_ranks
                                         ? job->cfg.multinode.local_ranks
                                         : "0",
                                     err))) {
        rv1_destroy (r);
        jobspec_destroy (job->jobspec);
        job->jobspec = NULL;
        free (impdup);
        return errprefix (err, "accept: multinode.local-ranks");
    }
    idset_add (job->all, rv1_ranks (r));
    idset_add (job->critical, job->all);
    job->userid = userid;
    job->unprivileged = !privileged;
    free (job->imp);
    job->imp = impdup;
    job->imp_uid = (uint32_t)imp_uid;
    job->expiration = rv1_expiration (r);
    job->starttime = rv1_starttime (r);
    rv1_destroy (r);
    job->nodelist = nodelist_join (
        json_object_get (json_object_get (R, "execution"), "nodelist"));
    job->accepted = true;
    job->t_accept = t;
    return 0;
}

static int fold_prolog_start (struct job *job,
                              double t,
                              json_t *ctx,
                              struct cairn_error *err)
{
    job->prolog_started = true;
    return 0;
}

static int fold_prolog_finish (struct job *job,
                               double t,
                               json_t *ctx,
                               struct cairn_error *err)
{
    job->prolog_finished = true;
    return 0;
}

static int
fold_start (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    job->started = true;
    job->t_start = t;
    return 0;
}

static int
fold_finish (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    if (json_unpack (ctx, "{s:i}", "status", &job->finish_status) < 0)
        return errset (err, EINVAL, "finish: missing status");
    job->finished = true;
    return 0;
}

static int fold_epilog_start (struct job *job,
                              double t,
                              json_t *ctx,
                              struct cairn_error *err)
{
    job->epilog_started = true;
    return 0;
}

static int fold_epilog_finish (struct job *job,
                               double t,
                               json_t *ctx,
                               struct cairn_error *err)
{
    job->epilog_finished = true;
    return 0;
}

static int
fold_exception (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    const char *type;
    int severity;
    int ws = -1;
    if (json_unpack (ctx, "{s:s s:i s?i}", "type", &type, "severity", &severity,
                     "wait_status", &ws) < 0)
        return errset (err, EINVAL, "exception: missing type/severity");
    if (severity == 0) {
        /* the first fatal exception is the job's end: only its wait
         * status counts, as with job-exec */
        if (!job->fatal && ws >= 0)
            job->exc_wait_status = ws;
        if (!job->fatal)
            snprintf (job->fatal_type, sizeof (job->fatal_type), "%s", type);
        job->fatal = true;
        if (strcmp (type, "timeout") == 0)
            job->expired = true;
        else if (job->expired)
            job->fatal_after_expiry = true;
    }
    return 0;
}

static int
fold_release (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    int final = 0;
    if (json_unpack (ctx, "{s:b}", "final", &final) < 0)
        return errset (err, EINVAL, "release: missing final");
    if (final && job->state != JOB_CLEANUP)
        return errset (err, EINVAL, "release: a final release in state %s",
                       job_state_name (job->state));
    if (ctx_add_ranks (ctx, "ranks", job->released, err) < 0)
        return errprefix (err, "release");
    if (final)
        job->final_released = true;
    return 0;
}

static int
fold_clean (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    job->t_clean = t;
    return 0;
}

static int
fold_drain (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    if (ctx_add_ranks (ctx, "ranks", job->drained, err) < 0)
        return errprefix (err, "drain");
    return 0;
}

static int
fold_cleanup (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    struct idset *ranks;
    int epilog = 0;
    if (json_unpack (ctx, "{s:b}", "epilog", &epilog) < 0)
        return errset (err, EINVAL, "cleanup: missing epilog");
    if (ctx_idset (ctx, "ranks", &ranks, err) < 0)
        return errprefix (err, "cleanup");
    idset_add (job->cleanup, ranks);
    if (epilog)
        idset_add (job->epilog_ranks, ranks);
    else
        mark_done (job, ranks, t);
    idset_destroy (ranks);
    /* the table's "to" (cleanup) holds once every rank is in cleanup:
     * until then (tolerated ranks, before the shells start) it stays */
    if (!idset_is_subset (job->all, job->cleanup))
        return 1;
    return 0;
}

static int
fold_tolerate (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    if (ctx_add_ranks (ctx, "ranks", job->tolerated, err) < 0)
        return errprefix (err, "tolerate");
    return 0;
}

static int
fold_hold (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    const char *wait = json_string_value (json_object_get (ctx, "wait"));
    if (ctx_add_ranks (ctx, "ranks", job->held, err) < 0)
        return errprefix (err, "hold");
    if (wait && strcmp (wait, "ready") != 0)
        return errset (err, EINVAL, "hold: wait: \"%s\" is not \"ready\"",
                       wait);
    job->hold_ready_only = wait != NULL;
    return 0;
}

static int
fold_resume (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    if (json_is_true (json_object_get (ctx, "ready"))) {
        if (!jobspec_hold_start (job->jobspec))
            return errset (err, EINVAL,
                           "resume: ready: the job is not "
                           "hold-start");
        job->ready = true;
        return 0;
    }
    if (idset_empty (job->held))
        return errset (err, EINVAL, "resume: the job is not held");
    job->resumed = true;
    return 0;
}

static int fold_fail_ranks (struct job *job,
                            double t,
                            json_t *ctx,
                            struct cairn_error *err)
{
    const char *note = NULL;
    if (ctx_add_ranks (ctx, "ranks", job->marked, err) < 0)
        return errprefix (err, "fail-ranks");
    (void)json_unpack (ctx, "{s?s}", "note", &note);
    if (note && *note) {
        char *copy = strndup (note, JOB_MARK_NOTE_MAX);
        if (!copy)
            return errset (err, ENOMEM, "out of memory");
        free (job->mark_note);
        job->mark_note = copy;
    }
    return 0;
}

static int fold_critical_ranks (struct job *job,
                                double t,
                                json_t *ctx,
                                struct cairn_error *err)
{
    struct idset *ranks;
    if (ctx_idset (ctx, "ranks", &ranks, err) < 0)
        return errprefix (err, "critical-ranks");
    idset_destroy (job->critical);
    job->critical = ranks;
    return 0;
}

static int fold_expiration (struct job *job,
                            double t,
                            json_t *ctx,
                            struct cairn_error *err)
{
    if (json_unpack (ctx, "{s:F}", "expiration", &job->expiration) < 0)
        return errset (err, EINVAL, "expiration: missing expiration");
    return 0;
}

static int
fold_log (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    const char *data = NULL, *phase = "shell";
    int trunc = 0, ph;
    json_int_t bytes = -1; /* the process's bytes, when data replaced some */
    (void)json_unpack (ctx, "{s?s s?b s?s s?I}", "data", &data, "truncated",
                       &trunc, "phase", &phase, "bytes", &bytes);
    ph = !strcmp (phase, "prolog")   ? PHASE_PROLOG
         : !strcmp (phase, "epilog") ? PHASE_EPILOG
                                     : PHASE_SHELL;
    if (data)
        job->output_bytes[ph] += bytes >= 0 ? (size_t)bytes : strlen (data);
    if (trunc)
        job->output_truncated[ph] = true;
    return 0;
}

static int fold_proc_intent (struct job *job,
                             double t,
                             json_t *ctx,
                             struct cairn_error *err)
{
    const char *execid, *phase;
    struct idset *ranks;
    enum proc_phase ph;

    if (json_unpack (ctx, "{s:s s:s}", "execid", &execid, "phase", &phase) < 0)
        return errset (err, EINVAL, "proc-intent: missing execid/phase");
    if (strlen (execid) != EXECID_LEN)
        return errset (err, EINVAL, "proc-intent: bad execid %s", execid);
    if (job_proc_lookup (job, execid))
        return errset (err, EINVAL, "proc-intent: duplicate execid %s", execid);
    if (strcmp (phase, "prolog") == 0)
        ph = PHASE_PROLOG;
    else if (strcmp (phase, "shell") == 0)
        ph = PHASE_SHELL;
    else if (strcmp (phase, "epilog") == 0)
        ph = PHASE_EPILOG;
    else
        return errset (err, EINVAL, "proc-intent: unknown phase %s", phase);
    if ((ph == PHASE_PROLOG && job->state != JOB_PROLOG) ||
        (ph == PHASE_SHELL && job->state != JOB_RUN) ||
        (ph == PHASE_EPILOG && job->state == JOB_PROLOG))
        return errset (err, EINVAL, "proc-intent: a %s process in state %s",
                       phase, job_state_name (job->state));
    if (ctx_idset (ctx, "ranks", &ranks, err) < 0)
        return errprefix (err, "proc-intent");
    if (job->nprocs == job->procs_alloc) {
        /* first room for one process per rank: a job's usual count per
         * phase, so a small job holds no unused slots */
        size_t n = job->procs_alloc ? job->procs_alloc * 2 : 0;
        if (n == 0 && (n = idset_count (job->all)) == 0)
            n = 1;
        struct job_proc *np = realloc (job->procs, n * sizeof (*np));
        if (!np) {
            idset_destroy (ranks);
            return errset (err, ENOMEM, "out of memory");
        }
        job->procs = np;
        job->procs_alloc = n;
    }
    struct job_proc *p = &job->procs[job->nprocs];
    memset (p, 0, sizeof (*p));
    memcpy (p->execid, execid, EXECID_LEN + 1);
    if (procidx_add (job, job->nprocs) < 0) {
        idset_destroy (ranks);
        return errset (err, errno, "proc-intent: %s", strerror (errno));
    }
    p->phase = ph;
    p->state = PROC_INTENT;
    p->ranks = ranks;
    p->rank = idset_first (ranks);
    p->t_intent = t;
    job->nprocs++;
    job->nactive[ph]++;
    if (ph == PHASE_SHELL)
        idset_add (job->run, ranks);
    else if (ph == PHASE_EPILOG)
        idset_add (job->epilog_covered, ranks);
    return 0;
}

static int fold_proc_spawn (struct job *job,
                            double t,
                            json_t *ctx,
                            struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    json_int_t pid, start;
    const char *bootid, *host = NULL;
    if (!p)
        return errprefix (err, "proc-spawn");
    (void)json_unpack (ctx, "{s?s}", "host", &host);
    if (json_unpack (ctx, "{s:I s:I s:s}", "pid", &pid, "starttime", &start,
                     "bootid", &bootid) < 0)
        return errset (err, EINVAL, "proc-spawn: missing pid/starttime/bootid");
    if (p->state != PROC_INTENT)
        return errset (err, EINVAL, "proc-spawn: %s is not an intent",
                       p->execid);
    p->state = PROC_RUNNING;
    p->pid = (pid_t)pid;
    p->starttime = (unsigned long long)start;
    snprintf (p->bootid, sizeof (p->bootid), "%s", bootid);
    p->t_spawn = t;
    free (p->host);
    p->host = NULL;
    if (host && !(p->host = strdup (host)))
        return errset (err, ENOMEM, "proc-spawn: out of memory");
    return 0;
}

/* The spawned process is gone before its shim marked the start: the
 * command never ran, and the process is an intent again (its effect is to
 * start it, once more under the same execid). */
static int fold_proc_unstarted (struct job *job,
                                double t,
                                json_t *ctx,
                                struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    if (!p)
        return errprefix (err, "proc-unstarted");
    if (p->state != PROC_RUNNING)
        return errset (err, EINVAL, "proc-unstarted: %s is not running",
                       p->execid);
    p->state = PROC_INTENT;
    p->pid = 0;
    p->starttime = 0;
    p->bootid[0] = '\0';
    p->t_spawn = 0;
    return 0;
}

static int fold_proc_signal (struct job *job,
                             double t,
                             json_t *ctx,
                             struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    const char *reason = "request";
    int kill = 0;
    if (!p)
        return errprefix (err, "proc-signal");
    (void)json_unpack (ctx, "{s?s s?b}", "reason", &reason, "kill", &kill);
    p->nsignals++;
    if (kill)
        p->nkills++;
    if (kill && strcmp (reason, "kill-shell") == 0)
        p->nshell_kills++;
    /* A signal a client asked for does not move the escalation clock: a
     * `kill` request in the middle of a termination must not postpone the
     * next kill signal. */
    if (strcmp (reason, "request") != 0) {
        int signum = 0;
        (void)json_unpack (ctx, "{s?i}", "signum", &signum);
        if (!p->terminating)
            p->t_term = t;
        p->terminating = true;
        p->t_signal = t;
        p->term_signum = signum;
    }
    if (strcmp (reason, "timeout") == 0)
        p->timed_out = true;
    return 0;
}

/* A process ended (exit, lost, never started). Epilog ends complete the
 * ranks' cleanup. */
static void proc_done (struct job *job, struct job_proc *p, double t)
{
    p->state = PROC_DONE;
    job->nactive[p->phase]--;
    if (p->phase == PHASE_EPILOG)
        mark_done (job, p->ranks, t);
}

static int
fold_proc_exit (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    const char *error = NULL;
    if (!p)
        return errprefix (err, "proc-exit");
    if (p->state == PROC_DONE)
        return errset (err, EINVAL, "proc-exit: %s already ended", p->execid);
    p->leftover = 0;
    if (json_unpack (ctx, "{s:i s?s s?i}", "status", &p->status, "error",
                     &error, "leftover", &p->leftover) < 0)
        return errset (err, EINVAL, "proc-exit: missing status");
    if (p->leftover < 0)
        return errset (err, EINVAL, "proc-exit: leftover < 0");
    if (error && !(p->note = strdup (error)))
        return errset (err, ENOMEM, "out of memory");
    proc_done (job, p, t);
    return 0;
}

/* proc-lost (outcome unknown) and proc-fail (never started) */
static int proc_unknown (struct job *job,
                         double t,
                         json_t *ctx,
                         bool never_started,
                         struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    const char *note = "";
    if (!p)
        return -1;
    if (p->state == PROC_DONE)
        return errset (err, EINVAL, "%s already ended", p->execid);
    (void)json_unpack (ctx, "{s?s}", "note", &note);
    if (!(p->note = strdup (note)))
        return errset (err, ENOMEM, "out of memory");
    if (never_started)
        p->error = true;
    else
        p->lost = true;
    proc_done (job, p, t);
    return 0;
}

static int
fold_proc_lost (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    if (proc_unknown (job, t, ctx, false, err) < 0)
        return errprefix (err, "proc-lost");
    return 0;
}

static int
fold_proc_fail (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    if (proc_unknown (job, t, ctx, true, err) < 0)
        return errprefix (err, "proc-fail");
    return 0;
}

/* Remember a posted event, so that the same post again is recognized. */
static int fold_posted (struct job *job, const char *name, json_t *ctx)
{
    if (!job->posted && !(job->posted = json_object ()))
        return -1;
    json_t *list = json_object_get (job->posted, name);
    if (!list && (!(list = json_array ()) ||
                  json_object_set_new (job->posted, name, list) < 0))
        return -1;
    return json_array_append_new (list,
                                  ctx ? json_deep_copy (ctx) : json_object ());
}

/* A node's report about a process that was already given up on (lost
 * when its node went silent): recorded, never acted on. */
static int
fold_proc_late (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    if (!p)
        return errprefix (err, "proc-late");
    if (p->state != PROC_DONE)
        return errset (err, EINVAL, "proc-late: %s has not ended", p->execid);
    p->late = true;
    return 0;
}

/* A shell's end, as the stream sees it: it changes nothing (the proc-exit,
 * proc-lost or proc-fail before it did), but it must be about a shell
 * that ended, so that a journal cairn did not write is refused. */
static int
fold_shell_end (struct job *job, double t, json_t *ctx, struct cairn_error *err)
{
    struct job_proc *p = ctx_proc (job, ctx, err);
    if (!p)
        return errprefix (err, "shell-end");
    if (p->phase != PHASE_SHELL || p->state != PROC_DONE)
        return errset (err, EINVAL, "shell-end: %s is not an ended shell",
                       p->execid);
    return 0;
}

/* The fold step of each event, in the order of JOB_TRANSITIONS (job.h). */
static const fold_f fold_steps[JOB_EV_COUNT] = {
    [JOB_EV_ACCEPT] = fold_accept,
    [JOB_EV_PROLOG_START] = fold_prolog_start,
    [JOB_EV_PROLOG_FINISH] = fold_prolog_finish,
    [JOB_EV_HOLD] = fold_hold,
    [JOB_EV_RESUME] = fold_resume,
    [JOB_EV_START] = fold_start,
    [JOB_EV_FINISH] = fold_finish,
    [JOB_EV_CLEANUP] = fold_cleanup,
    [JOB_EV_EPILOG_START] = fold_epilog_start,
    [JOB_EV_EPILOG_FINISH] = fold_epilog_finish,
    [JOB_EV_RELEASE] = fold_release,
    [JOB_EV_CLEAN] = fold_clean,
    [JOB_EV_EXCEPTION] = fold_exception,
    [JOB_EV_DRAIN] = fold_drain,
    [JOB_EV_TOLERATE] = fold_tolerate,
    [JOB_EV_FAIL_RANKS] = fold_fail_ranks,
    [JOB_EV_CRITICAL_RANKS] = fold_critical_ranks,
    [JOB_EV_EXPIRATION] = fold_expiration,
    [JOB_EV_LOG] = fold_log,
    [JOB_EV_PROC_INTENT] = fold_proc_intent,
    [JOB_EV_PROC_SPAWN] = fold_proc_spawn,
    [JOB_EV_PROC_UNSTARTED] = fold_proc_unstarted,
    [JOB_EV_PROC_SIGNAL] = fold_proc_signal,
    [JOB_EV_PROC_EXIT] = fold_proc_exit,
    [JOB_EV_PROC_LOST] = fold_proc_lost,
    [JOB_EV_PROC_FAIL] = fold_proc_fail,
    [JOB_EV_PROC_LATE] = fold_proc_late,
    [JOB_EV_SHELL_END] = fold_shell_end,
};

/* JOB_TRANSITIONS as data. */
static const struct {
    const char *name;
    unsigned from; /* JOB_IN() of each state it may come in */
    int to;        /* a state, or JOB_SAME */
    enum job_effect effect;
    bool response; /* becomes an RFC 32 response */
    bool progress; /* also sent to streams that asked for "events" */
} transitions[JOB_EV_COUNT] = {
#define JOB_EV_ROW(ev, name, from, to, effect, response, progress)             \
    [ev] = {name, from, to, JOB_EFFECT_##effect, response, progress},
    JOB_TRANSITIONS (JOB_EV_ROW)
#undef JOB_EV_ROW
};

/* The events in name order, for job_event_of's binary search: cairnd looks
 * up every event it stages and acts on, and a scan of the table would
 * cost it more than the rest of the lookup's caller. */
static unsigned char by_name[JOB_EV_COUNT];
static once_flag by_name_once = ONCE_FLAG_INIT;

static int by_name_cmp (const void *a, const void *b)
{
    return strcmp (transitions[*(const unsigned char *)a].name,
                   transitions[*(const unsigned char *)b].name);
}

static void by_name_init (void)
{
    for (int i = 0; i < JOB_EV_COUNT; i++)
        by_name[i] = (unsigned char)i;
    qsort (by_name, JOB_EV_COUNT, 1, by_name_cmp);
}

const char *job_event_name (enum job_event ev)
{
    return ev < JOB_EV_COUNT ? transitions[ev].name : NULL;
}

enum job_event job_event_of (const char *name)
{
    size_t lo = 0, hi = JOB_EV_COUNT;
    call_once (&by_name_once, by_name_init);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp (name, transitions[by_name[mid]].name);
        if (c == 0)
            return (enum job_event)by_name[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return JOB_EV_OTHER;
}

enum job_effect job_event_effect (enum job_event ev)
{
    return ev < JOB_EV_COUNT ? transitions[ev].effect : JOB_EFFECT_NONE;
}

bool job_ev_is_response (enum job_event ev)
{
    return ev < JOB_EV_COUNT && transitions[ev].response;
}

bool job_event_is_response (const char *name)
{
    return job_ev_is_response (job_event_of (name));
}

bool job_ev_is_progress (enum job_event ev)
{
    /* a name cairn does not use is an outside service's (job_post) */
    return ev >= JOB_EV_COUNT || transitions[ev].progress;
}

bool job_event_is_progress (const char *name)
{
    return job_ev_is_progress (job_event_of (name));
}

/* The stream's own names (streamnames.h) of the given kind. */
static bool stream_name (const char *type, enum stream_kind kind)
{
    static const struct {
        const char *name;
        enum stream_kind kind;
    } names[] = {
#define STREAM_NAME_ROW(e, name, kind) {name, kind},
        STREAM_NAMES (STREAM_NAME_ROW)
#undef STREAM_NAME_ROW
    };
    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
        if (names[i].kind == kind && strcmp (names[i].name, type) == 0)
            return true;
    return false;
}

bool job_event_is_cairns (const char *name)
{
    return job_event_of (name) != JOB_EV_OTHER ||
           stream_name (name, STREAM_KIND_OPENING) ||
           stream_name (name, STREAM_KIND_NOTICE);
}

int job_apply (struct job *job, const json_t *entry, struct cairn_error *err)
{
    double t;
    const char *name;
    json_t *ctx;
    json_t *empty = NULL;
    int rc = 0;

    if (eventlog_entry_parse (entry, &t, &name, &ctx) < 0)
        return errset (err, EINVAL, "malformed event");
    enum job_event ev = job_event_of (name);
    if (job->state == JOB_DONE &&
        !(ev != JOB_EV_OTHER && (transitions[ev].from & JOB_IN (JOB_DONE))))
        return errset (err, EINVAL, "event %s after clean", name);
    if (ev == JOB_EV_OTHER) { /* an outside service's (job_post); RFC 18
                                 allows any name */
        if (job->accepted && fold_posted (job, name, ctx) < 0)
            return errset (err, ENOMEM, "out of memory");
        goto out;
    }
    if (ev != JOB_EV_ACCEPT && !job->accepted)
        return errset (err, EINVAL, "event %s before accept", name);
    if (!(transitions[ev].from & JOB_IN (job->state)))
        return errset (err, EINVAL, "event %s in state %s", name,
                       job_state_name (job->state));
    if (!ctx)
        ctx = empty = json_object ();
    rc = fold_steps[ev](job, t, ctx, err);
    json_decref (empty);
    if (rc < 0)
        return -1;
    if (rc == 0 && transitions[ev].to != JOB_SAME)
        job->state = (enum job_state)transitions[ev].to;
    if (transitions[ev].response)
        job->nresponses++;
out:
    job->nevents++;
    return 0;
}

int job_emit (struct job *job,
              const struct job_ctx *ctx,
              json_t *out,
              const char *name,
              json_t *context)
{
    struct cairn_error err;
    json_t *entry = eventlog_entry_create (ctx->now, name, context);
    if (!entry)
        return -1;
    if (job_apply (job, entry, &err) < 0) {
        /* a decision produced an event the fold rejects: a bug */
        json_decref (entry);
        errno = EINVAL;
        return -1;
    }
    if (json_array_append_new (out, entry) < 0)
        return -1;
    return 0;
}

/* ---- queries ---- */

uint64_t job_id (const struct job *job)
{
    return job->id;
}

enum job_state job_state (const struct job *job)
{
    return job->state;
}

const char *job_state_name (enum job_state state)
{
    static const char *names[] = {"new", "prolog",  "starting", "held",
                                  "run", "cleanup", "done"};
    if (state < 0 || state > JOB_DONE)
        return "unknown";
    return names[state];
}

uint32_t job_nevents (const struct job *job)
{
    return job->nevents;
}

uint32_t job_nresponses (const struct job *job)
{
    return job->nresponses;
}

uint32_t job_userid (const struct job *job)
{
    return job->userid;
}

uint32_t job_shell_uid (const struct job *job)
{
    return job->imp ? job->imp_uid : job->userid;
}

bool job_privileged (const struct job *job)
{
    return !job->unprivileged;
}

double job_expiration (const struct job *job)
{
    return job->expiration;
}

/* Pure in journaled facts (R, expiration events, the start's timestamp),
 * so it is the same after a restart. */
double job_time_limit (const struct job *job)
{
    double exp = job->expiration;
    double duration = exp - job->starttime;
    double delay = job->t_start - job->starttime;

    if (exp <= 0 || job->starttime <= 0 || job->t_start <= 0 || duration <= 0 ||
        delay <= 0)
        return exp;
    if (delay / duration * 100 > job->cfg.exec.max_start_delay_percent)
        return exp + delay;
    return exp;
}

const struct idset *job_ranks (const struct job *job)
{
    return job->all;
}

const struct idset *job_released (const struct job *job)
{
    return job->released;
}

const struct idset *job_drained (const struct job *job)
{
    return job->drained;
}

const struct job_config *job_config (const struct job *job)
{
    return &job->cfg;
}

bool job_started (const struct job *job)
{
    return job->started;
}

bool job_finished (const struct job *job)
{
    return job->finished;
}

bool job_fatal (const struct job *job)
{
    return job->fatal;
}

size_t job_procs_live (const struct job *job)
{
    return (size_t)job->nactive[PHASE_PROLOG] +
           (size_t)job->nactive[PHASE_SHELL] +
           (size_t)job->nactive[PHASE_EPILOG];
}

bool job_shells_starting (const struct job *job)
{
    if (job->state != JOB_RUN || job->nactive[PHASE_SHELL] == 0)
        return false;
    for (size_t i = 0; i < job->nprocs; i++)
        if (job->procs[i].phase == PHASE_SHELL &&
            job->procs[i].state == PROC_INTENT)
            return true;
    return false;
}

int job_finish_status (const struct job *job)
{
    return job->finish_status;
}

double job_t_accept (const struct job *job)
{
    return job->t_accept;
}

double job_t_clean (const struct job *job)
{
    return job->t_clean;
}

const char *job_client (const struct job *job)
{
    return jobspec_client (job->jobspec);
}

const char *job_instance (const struct job *job)
{
    return jobspec_instance (job->jobspec);
}

char *job_hosts (const struct job *job, const struct idset *ranks)
{
    struct hostlist *all = NULL, *hl = hostlist_create ();
    char *s = NULL;
    size_t idx = 0;

    if (!hl || !job->nodelist || !(all = hostlist_decode (job->nodelist, NULL)))
        goto done;
    /* host i of the nodelist is the job's i-th rank in ascending order */
    for (uint32_t r = idset_first (job->all); r != IDSET_INVALID_ID;
         r = idset_next (job->all, r), idx++) {
        if (idset_test (ranks, r) &&
            hostlist_append (hl, hostlist_nth (all, idx)) < 0)
            goto done;
    }
    s = hostlist_encode (hl);
done:
    hostlist_destroy (all);
    hostlist_destroy (hl);
    return s;
}

size_t job_output_room (const struct job *job, enum proc_phase phase)
{
    size_t cap = job->cfg.output_max_bytes;
    size_t used = job->output_bytes[phase];
    return used >= cap ? 0 : cap - used;
}

size_t job_nprocs (const struct job *job)
{
    return job->nprocs;
}

const struct job_proc *job_proc_at (const struct job *job, size_t i)
{
    return i < job->nprocs ? &job->procs[i] : NULL;
}

const struct job_proc *job_proc_find (const struct job *job, const char *execid)
{
    return job_proc_lookup ((struct job *)job, execid);
}
