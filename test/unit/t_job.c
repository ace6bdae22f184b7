/* t_job.c - the job state machine, driven by a fake process backend.
 *
 * No process runs: fakebackend.h plays the exec layer and the test decides
 * when each process starts and how it ends. Every scenario ends with two
 * checks: the exec protocol's invariants (one final release, the last
 * response, after finish; every rank released exactly once; clean last)
 * and replay equivalence (the emitted events, through the journal's line
 * encoding, fold into a fresh job equal to the live one, on which
 * job_advance then emits nothing).
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "tap.h"
#include "fakebackend.h"
#include "core/escalate.h"
#include "core/eventlog.h"
#include "core/jobspec.h"
#include "core/rv1.h"

#define T0 1700000000.0
#define OWNER 1000
#define JOBID 42

#define is_time(got, want, ...)                                                \
    do {                                                                       \
        double t_g_ = (got), t_w_ = (want);                                    \
        if (!ok (t_g_ == t_w_, __VA_ARGS__))                                   \
            diag ("  expected %.6f, got %.6f", t_w_, t_g_);                    \
    } while (0)

/* ---- setup ---- */

static char **argv_new (const char *first, ...)
{
    va_list ap;
    size_t n = 1;
    char **argv;

    va_start (ap, first);
    while (va_arg (ap, const char *))
        n++;
    va_end (ap);
    if (!(argv = calloc (n + 1, sizeof (*argv))))
        BAIL_OUT ("out of memory");
    argv[0] = strdup (first);
    va_start (ap, first);
    for (size_t i = 1; i < n; i++)
        argv[i] = strdup (va_arg (ap, const char *));
    va_end (ap);
    return argv;
}

/* Defaults, plus a per-rank prolog and/or epilog when asked for. */
static void cfg_init (struct job_config *jc, bool prolog, bool epilog)
{
    job_config_init (jc);
    if (prolog) {
        jc->prolog.command = argv_new ("/etc/prolog", NULL);
        jc->prolog.per_rank = true;
    }
    if (epilog) {
        jc->epilog.command = argv_new ("/etc/epilog", "--clean", NULL);
        jc->epilog.per_rank = true;
    }
}

static void cfg_tolerate (struct job_config *jc, int code)
{
    jc->prolog.tolerable_exit_codes = malloc (sizeof (int));
    if (!jc->prolog.tolerable_exit_codes)
        BAIL_OUT ("out of memory");
    jc->prolog.tolerable_exit_codes[0] = code;
    jc->prolog.ntolerable = 1;
}

/* Accept job JOBID at T0 with jc (freed here), nranks ranks on one host,
 * attributes.system.cairn = cairn (stolen) unless NULL. */
static void start_job_cairn (struct fake *fb,
                             struct job_config *jc,
                             uint32_t nranks,
                             double expiration,
                             int allowed,
                             uint32_t userid,
                             json_t *cairn)
{
    struct cairn_error err;
    if (fake_accept (fb, JOBID, T0, OWNER, jc, nranks, expiration, allowed,
                     userid, cairn, &err) < 0)
        BAIL_OUT ("cannot set up job: %s",
                  err.text[0] ? err.text : strerror (errno));
}

static void start_job (struct fake *fb,
                       struct job_config *jc,
                       uint32_t nranks,
                       double expiration,
                       int allowed,
                       uint32_t userid)
{
    start_job_cairn (fb, jc, nranks, expiration, allowed, userid, NULL);
}

/* "a,b*3,c" -> "a,b,b,b,c": keeps the exact sequences readable. */
static const char *expand (const char *pattern)
{
    static char buf[4096];
    char tmp[4096], *save = NULL;
    size_t len = 0;

    snprintf (tmp, sizeof (tmp), "%s", pattern);
    buf[0] = '\0';
    for (char *tok = strtok_r (tmp, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        char *star = strrchr (tok, '*');
        int n = star ? atoi (star + 1) : 1;
        if (star)
            *star = '\0';
        for (int i = 0; i < n; i++)
            len += snprintf (buf + len, sizeof (buf) - len, "%s%s",
                             len ? "," : "", tok);
    }
    return buf;
}

static const char *set_str (const struct idset *s)
{
    static char buf[4][256];
    static int k;
    char *t = s ? idset_encode (s) : NULL;
    k = (k + 1) % 4;
    snprintf (buf[k], sizeof (buf[k]), "%s", t ? t : "(null)");
    free (t);
    return buf[k];
}

static json_t *ctx_get (json_t *ctx, const char *key)
{
    return ctx ? json_object_get (ctx, key) : NULL;
}

static const char *ctx_str (json_t *ctx, const char *key)
{
    const char *s = json_string_value (ctx_get (ctx, key));
    return s ? s : "(none)";
}

static long long ctx_int (json_t *ctx, const char *key)
{
    json_t *v = ctx_get (ctx, key);
    return json_is_integer (v) ? json_integer_value (v) : -999;
}

/* "type/severity/note" of an exception event, to compare in one go. */
static const char *exc_str (json_t *exc)
{
    static char buf[512];
    snprintf (buf, sizeof (buf), "%s/%lld/%s", ctx_str (exc, "type"),
              ctx_int (exc, "severity"), ctx_str (exc, "note"));
    return buf;
}

/* argv (space-joined), cwd, or an environment variable of the process of
 * phase/rank, as job_proc_command gives them; "(none)" if absent. */
static const char *proc_cmd (struct fake *fb,
                             enum proc_phase phase,
                             uint32_t rank,
                             const char *what)
{
    static char buf[512];
    const struct job_proc *p = fake_find (fb, phase, rank);
    char **argv;
    const char *cwd;
    json_t *env;

    if (!p || job_proc_command (fb->job, p, &argv, &cwd, &env) < 0)
        return "(error)";
    if (strcmp (what, "argv") == 0) {
        size_t len = 0;
        buf[0] = '\0';
        for (char **a = argv; *a; a++)
            len += snprintf (buf + len, sizeof (buf) - len, "%s%s",
                             a == argv ? "" : " ", *a);
    } else if (strcmp (what, "cwd") == 0)
        snprintf (buf, sizeof (buf), "%s", cwd ? cwd : "(none)");
    else
        snprintf (buf, sizeof (buf), "%s", ctx_str (env, what));
    job_argv_free (argv);
    json_decref (env);
    return buf;
}

/* "ranks:final" of every release, space-separated: "2:0 0-1,3:1". */
static const char *releases (struct fake *fb)
{
    static char buf[512];
    size_t len = 0;
    json_t *c;
    buf[0] = '\0';
    for (int i = 0; (c = fake_event (fb, 0, "release", i)); i++)
        len += snprintf (buf + len, sizeof (buf) - len, "%s%s:%d", i ? " " : "",
                         ctx_str (c, "ranks"),
                         json_is_true (ctx_get (c, "final")));
    return buf;
}

/* Types of the response events, comma-joined. */
static const char *responses (struct fake *fb)
{
    static char buf[512];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size (fb->out); i++) {
        const char *name = fake_event_name (json_array_get (fb->out, i));
        if (job_event_is_response (name))
            len += snprintf (buf + len, sizeof (buf) - len, "%s%s",
                             len ? "," : "", name);
    }
    return buf;
}

static void spawn_rank (struct fake *fb, enum proc_phase phase, uint32_t rank)
{
    char execid[EXECID_LEN + 1];
    memcpy (execid, fake_find (fb, phase, rank)->execid, sizeof (execid));
    if (fake_spawn (fb, execid) < 0)
        BAIL_OUT ("spawn %s failed", execid);
}

/* Spawn and exit (status 0) everything, a second apart, until clean. */
static void drive_to_end (struct fake *fb)
{
    for (int i = 0; i < 10 && job_state (fb->job) != JOB_DONE; i++) {
        fb->ctx.now += 1;
        fake_spawn_all (fb);
        fake_exit_phase (fb, PHASE_PROLOG, 0);
        fake_exit_phase (fb, PHASE_SHELL, 0);
        fake_exit_phase (fb, PHASE_EPILOG, 0);
    }
}

/* ---- replay equivalence ---- */

/* Fold the first n events of fb->out into a fresh job, each one encoded
 * and decoded as the journal stores it. NULL with a reason in why. */
static struct job *replay (struct fake *fb, size_t n, char *why, size_t len)
{
    struct job *job = job_create (JOBID);
    if (!job)
        BAIL_OUT ("out of memory");
    for (size_t i = 0; i < n; i++) {
        struct cairn_error err = {""};
        char *line = eventlog_entry_encode (json_array_get (fb->out, i));
        json_t *e =
            line ? eventlog_entry_decode (line, strlen (line), &err) : NULL;
        int rc = e ? job_apply (job, e, &err) : -1;
        free (line);
        json_decref (e);
        if (rc < 0) {
            snprintf (why, len, "event %zu: %s", i, err.text);
            job_destroy (job);
            return NULL;
        }
    }
    return job;
}

static char diffbuf[512];

#define D_INT(what, a, b)                                                      \
    do {                                                                       \
        if ((long long)(a) != (long long)(b)) {                                \
            snprintf (diffbuf, sizeof (diffbuf), "%s: live %lld, replay %lld", \
                      what, (long long)(a), (long long)(b));                   \
            return diffbuf;                                                    \
        }                                                                      \
    } while (0)
#define D_DBL(what, a, b)                                                      \
    do {                                                                       \
        if ((a) != (b)) {                                                      \
            snprintf (diffbuf, sizeof (diffbuf), "%s: live %.6f, replay %.6f", \
                      what, (double)(a), (double)(b));                         \
            return diffbuf;                                                    \
        }                                                                      \
    } while (0)
#define D_STR(what, a, b)                                                      \
    do {                                                                       \
        const char *d_a_ = (a) ? (a) : "(null)", *d_b_ = (b) ? (b) : "(null)"; \
        if (strcmp (d_a_, d_b_) != 0) {                                        \
            snprintf (diffbuf, sizeof (diffbuf), "%s: live %s, replay %s",     \
                      what, d_a_, d_b_);                                       \
            return diffbuf;                                                    \
        }                                                                      \
    } while (0)

static const char *config_str (const struct job *job)
{
    static char buf[2][2048];
    static int k;
    json_t *o = job_config_encode (job_config (job));
    char *s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    k = !k;
    snprintf (buf[k], sizeof (buf[k]), "%s", s ? s : "(null)");
    free (s);
    json_decref (o);
    return buf[k];
}

/* The first difference between live job a and replayed job b, or NULL. */
static const char *job_diff (const struct job *a, const struct job *b)
{
    char w[64];

    D_INT ("state", job_state (a), job_state (b));
    D_INT ("nevents", job_nevents (a), job_nevents (b));
    D_INT ("nresponses", job_nresponses (a), job_nresponses (b));
    D_INT ("userid", job_userid (a), job_userid (b));
    D_STR ("ranks", set_str (job_ranks (a)), set_str (job_ranks (b)));
    D_STR ("released", set_str (job_released (a)), set_str (job_released (b)));
    D_STR ("drained", set_str (job_drained (a)), set_str (job_drained (b)));
    D_INT ("started", job_started (a), job_started (b));
    D_INT ("finished", job_finished (a), job_finished (b));
    if (job_finished (a))
        D_INT ("finish status", job_finish_status (a), job_finish_status (b));
    D_DBL ("t_accept", job_t_accept (a), job_t_accept (b));
    D_DBL ("t_clean", job_t_clean (a), job_t_clean (b));
    D_DBL ("next deadline", job_next_deadline (a), job_next_deadline (b));
    for (int ph = PHASE_PROLOG; ph <= PHASE_EPILOG; ph++)
        D_INT ("output room", job_output_room (a, ph), job_output_room (b, ph));
    D_STR ("config", config_str (a), config_str (b));
    D_INT ("nprocs", job_nprocs (a), job_nprocs (b));
    for (size_t i = 0; i < job_nprocs (a); i++) {
        const struct job_proc *p = job_proc_at (a, i);
        const struct job_proc *q = job_proc_at (b, i);
#define PW(field) (snprintf (w, sizeof (w), "proc %zu " field, i), w)
        D_STR (PW ("execid"), p->execid, q->execid);
        D_INT (PW ("phase"), p->phase, q->phase);
        D_STR (PW ("ranks"), set_str (p->ranks), set_str (q->ranks));
        D_INT (PW ("state"), p->state, q->state);
        D_INT (PW ("status"), p->status, q->status);
        D_INT (PW ("pid"), p->pid, q->pid);
        D_INT (PW ("starttime"), p->starttime, q->starttime);
        D_STR (PW ("bootid"), p->bootid, q->bootid);
        D_DBL (PW ("t_intent"), p->t_intent, q->t_intent);
        D_DBL (PW ("t_spawn"), p->t_spawn, q->t_spawn);
        D_DBL (PW ("t_signal"), p->t_signal, q->t_signal);
        D_INT (PW ("nsignals"), p->nsignals, q->nsignals);
        D_INT (PW ("nkills"), p->nkills, q->nkills);
        D_INT (PW ("terminating"), p->terminating, q->terminating);
        D_INT (PW ("timed_out"), p->timed_out, q->timed_out);
        D_INT (PW ("lost"), p->lost, q->lost);
        D_INT (PW ("error"), p->error, q->error);
        D_STR (PW ("note"), p->note, q->note);
#undef PW
    }
    return NULL;
}

static void check_replay (struct fake *fb, const char *label)
{
    char why[512] = "";
    struct job *r = replay (fb, json_array_size (fb->out), why, sizeof (why));
    const char *diff = r ? job_diff (fb->job, r) : why;

    if (!ok (diff == NULL, "%s: replaying the journal rebuilds the job", label))
        diag ("  %s", diff);
    if (r) {
        json_t *out = json_array ();
        int rc = job_advance (r, &fb->ctx, out);
        char *s = json_dumps (out, JSON_COMPACT);
        if (!ok (rc == 0 && json_array_size (out) == 0,
                 "%s: job_advance after replay emits nothing", label))
            diag ("  rc %d, emitted %s", rc, s);
        free (s);
        json_decref (out);
    }
    job_destroy (r);
}

/* ---- protocol invariants of a finished job ---- */

static const char *invariant_violation (struct fake *fb)
{
    static char why[512];
    size_t n = json_array_size (fb->out);
    long finish_at = -1, final_at = -1, last_resp = -1;
    int nfinal = 0, nresp = 0;
    struct idset *rel = idset_create ();
    const char *bad = NULL;

#define BAD(...)                                                               \
    do {                                                                       \
        snprintf (why, sizeof (why), __VA_ARGS__);                             \
        bad = why;                                                             \
        goto done;                                                             \
    } while (0)
    if (job_state (fb->job) != JOB_DONE)
        BAD ("job is %s, not done", job_state_name (job_state (fb->job)));
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get (fb->out, i);
        const char *name = fake_event_name (e);
        json_t *c = fake_event_context (e);
        json_t *resp = job_response (fb->job, e);
        int errnum = errno;
        bool is_resp = job_event_is_response (name);

        if (strcmp (name, "clean") == 0 && i != n - 1)
            BAD ("clean is event %zu of %zu", i, n);
        if (!is_resp) {
            json_decref (resp);
            if (resp || errnum != ENOENT)
                BAD ("%s (event %zu) gave a response", name, i);
            continue;
        }
        nresp++;
        last_resp = i;
        bool match = resp && strcmp (ctx_str (resp, "type"), name) == 0 &&
                     ctx_int (resp, "id") == JOBID &&
                     json_is_object (ctx_get (resp, "data"));
        json_decref (resp);
        if (!match)
            BAD ("%s (event %zu): no matching response", name, i);
        if (strcmp (name, "finish") == 0)
            finish_at = i;
        if (strcmp (name, "release") == 0) {
            struct idset *r = idset_decode (ctx_str (c, "ranks"), NULL);
            struct idset *both = r ? idset_intersect (r, rel) : NULL;
            bool twice = !both || !idset_empty (both);
            if (r)
                idset_add (rel, r);
            idset_destroy (r);
            idset_destroy (both);
            if (twice)
                BAD ("release (event %zu) of %s: bad or already released", i,
                     ctx_str (c, "ranks"));
            if (json_is_true (ctx_get (c, "final"))) {
                nfinal++;
                final_at = i;
            }
        }
    }
    if (nfinal != 1)
        BAD ("%d final releases", nfinal);
    if (final_at != last_resp)
        BAD ("final release is event %ld, last response %ld", final_at,
             last_resp);
    if (finish_at > final_at)
        BAD ("finish (event %ld) after the final release", finish_at);
    if (!idset_equal (rel, job_ranks (fb->job)))
        BAD ("released %s, job has %s", set_str (rel),
             set_str (job_ranks (fb->job)));
    if (!idset_equal (rel, job_released (fb->job)))
        BAD ("releases say %s, job_released %s", set_str (rel),
             set_str (job_released (fb->job)));
    if ((int)job_nresponses (fb->job) != nresp)
        BAD ("job_nresponses %u, %d response events", job_nresponses (fb->job),
             nresp);
    if (strcmp (fake_event_name (json_array_get (fb->out, n - 1)), "clean"))
        BAD ("last event is not clean");
#undef BAD
done:
    idset_destroy (rel);
    return bad;
}

/* Both end-of-scenario checks. */
static void check_end (struct fake *fb, const char *label)
{
    const char *why = invariant_violation (fb);
    if (!ok (why == NULL, "%s: protocol invariants hold", label))
        diag ("  %s", why);
    check_replay (fb, label);
}

/* ---- the happy paths ---- */

static void test_happy_path (void)
{
    struct fake fb;
    struct job_config jc;
    size_t m;

    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    is_str (fake_names (&fb, 0), expand ("accept,prolog-start,proc-intent*4"),
            "happy: accept starts a per-rank prolog");
    is_str (job_state_name (job_state (fb.job)), "prolog", "happy: prolog");
    is_time (job_next_deadline (fb.job), 0, "happy: no timer before spawn");

    fb.ctx.now = T0 + 1;
    m = fake_mark (&fb);
    is_int (fake_spawn_all (&fb), 4, "happy: 4 prolog intents spawned");
    is_str (fake_names (&fb, m), expand ("proc-spawn*4"),
            "happy: spawns decide nothing else");
    is_time (job_next_deadline (fb.job), T0 + 1 + 1800,
             "happy: deadline is the prolog's 30m timeout");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 2, "argv"), "/etc/prolog",
            "happy: prolog argv");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 2, "CAIRN_RANK"), "2",
            "happy: prolog CAIRN_RANK");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 2, "CAIRN_JOB_RANKS"), "0-3",
            "happy: prolog CAIRN_JOB_RANKS");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 2, "FLUX_JOB_USERID"), "1000",
            "happy: prolog FLUX_JOB_USERID");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 2, "APPVAR"), "(none)",
            "happy: the job's environment is not the prolog's");
    check_replay (&fb, "happy, prolog running");

    fb.ctx.now = T0 + 2;
    m = fake_mark (&fb);
    is_int (fake_exit_phase (&fb, PHASE_PROLOG, 0), 4, "happy: prologs exit");
    is_str (fake_names (&fb, m),
            expand ("proc-exit*4,prolog-finish,start,proc-intent*4"),
            "happy: prolog done -> prolog-finish, start, shell intents");
    is_int (ctx_int (fake_event (&fb, 0, "prolog-finish", 0), "status"), 0,
            "happy: prolog-finish status 0");
    ok (job_state (fb.job) == JOB_RUN && job_started (fb.job),
        "happy: job runs");
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "argv"), "/bin/app arg",
            "happy: shell runs the jobspec's command");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "cwd"), "/tmp/work",
            "happy: shell cwd from the jobspec");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "APPVAR"), "1",
            "happy: shell gets the jobspec's environment");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "CAIRN_JOB_RANKS"), "0-3",
            "happy: shell CAIRN_JOB_RANKS");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "CAIRN_PHASE"), "shell",
            "happy: shell CAIRN_PHASE");
    is_time (job_next_deadline (fb.job), 0, "happy: no timer for shells");
    check_replay (&fb, "happy, shells running");

    fb.ctx.now = T0 + 10;
    m = fake_mark (&fb);
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    is_str (fake_names (&fb, m),
            expand ("proc-exit*4,finish,cleanup,epilog-start,proc-intent*4"),
            "happy: shells done -> finish, cleanup, epilog");
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_EPILOG, 3, "argv"), "/etc/epilog --clean",
            "happy: epilog argv");
    m = fake_mark (&fb);
    for (uint32_t r = 0; r < 3; r++)
        fake_exit (&fb, PHASE_EPILOG, r, 0);
    is_str (fake_names (&fb, m), expand ("proc-exit*3"),
            "happy: release-after -1 holds the done ranks");
    fb.ctx.now = T0 + 20;
    fake_exit (&fb, PHASE_EPILOG, 3, 0);
    is_str (fake_names (&fb, m + 3), "proc-exit,epilog-finish,release,clean",
            "happy: last epilog -> epilog-finish, final release, clean");
    is_str (fake_names (&fb, 0),
            expand ("accept,prolog-start,proc-intent*4,proc-spawn*4,"
                    "proc-exit*4,prolog-finish,start,proc-intent*4,"
                    "proc-spawn*4,proc-exit*4,finish,cleanup,epilog-start,"
                    "proc-intent*4,proc-spawn*4,proc-exit*4,epilog-finish,"
                    "release,clean"),
            "happy: the whole journal, in order");
    is_str (responses (&fb), "start,finish,release", "happy: responses");
    is_str (releases (&fb), "0-3:1", "happy: one final release of 0-3");
    ok (job_finished (fb.job) && job_finish_status (fb.job) == 0,
        "happy: finish status 0");
    is_time (job_t_clean (fb.job), T0 + 20, "happy: t_clean");
    is_str (set_str (job_drained (fb.job)), "", "happy: nothing drained");
    check_end (&fb, "happy");
    fake_fini (&fb);
}

static void test_no_perilog (void)
{
    struct fake fb;
    struct job_config jc;
    size_t m;

    cfg_init (&jc, false, false);
    jc.exec.job_shell = argv_new ("/usr/libexec/cairn-shell", "-v", NULL);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    is_str (fake_names (&fb, 0), expand ("accept,start,proc-intent*4"),
            "bare: accept starts the shells at once");
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_SHELL, 0, "argv"),
            "/usr/libexec/cairn-shell -v 42",
            "bare: job-shell argv ends with the job id");
    m = fake_mark (&fb);
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    is_str (fake_names (&fb, m),
            expand ("proc-exit*4,finish,cleanup,release,clean"),
            "bare: finish, cleanup, final release, clean");
    ok (json_is_false (ctx_get (fake_event (&fb, 0, "cleanup", 0), "epilog")),
        "bare: cleanup without epilog");
    is_str (releases (&fb), "0-3:1", "bare: one final release");
    check_end (&fb, "bare");
    fake_fini (&fb);
}

/* finish status: the largest shell wait status, or an exception's. */
static void test_finish_status (void)
{
    static const struct {
        const char *name;
        int status[4];
        int severity; /* of an exception raised first, -1 for none */
        int wait_status;
        int want;
    } cases[] = {
        // clang-format off
        {"one rank exits 3", {0, 0, 3 << 8, 0}, -1, -1, 768},
        {"exit 1 beats signal 9", {9, 1 << 8, 0, 0}, -1, -1, 256},
        {"fatal exception's wait_status wins", {0, 3 << 8, 0, 0},
         0, 17 << 8, 17 << 8},
        {"fatal exception's wait_status 0 wins", {0, 3 << 8, 0, 0},
         0, 0, 0},
        {"severity-2 wait_status is ignored", {0, 3 << 8, 0, 0},
         2, 17 << 8, 768},
        {"fatal exception without wait_status", {15, 15, 15, 15},
         0, -1, 15},
        {"fatal exception, every shell exits 0: 1 << 8", {0, 0, 0, 0},
         0, -1, 256},
        {"notice, every shell exits 0: 0", {0, 0, 0, 0}, 2, -1, 0},
        // clang-format on
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;

        cfg_init (&jc, false, false);
        start_job (&fb, &jc, 4, 0, 0, OWNER);
        fake_spawn_all (&fb);
        if (cases[i].severity >= 0 &&
            job_raise (fb.job, &fb.ctx, "cancel", cases[i].severity, "",
                       cases[i].wait_status, fb.out, &err) < 0)
            BAIL_OUT ("job_raise: %s", err.text);
        fake_walk (&fb);
        for (uint32_t r = 0; r < 4; r++)
            fake_exit (&fb, PHASE_SHELL, r, cases[i].status[r]);
        is_int (ctx_int (fake_event (&fb, 0, "finish", 0), "status"),
                cases[i].want, "finish status: %s", cases[i].name);
        is_int (job_finish_status (fb.job), cases[i].want,
                "job_finish_status: %s", cases[i].name);
        check_end (&fb, cases[i].name);
        fake_fini (&fb);
    }

    /* only the first fatal exception's wait status counts (job-exec's
     * exception_in_progress): a later one's is recorded, not used */
    static const struct {
        const char *name;
        int first_ws, second_ws, want;
    } twice[] = {
        {"first fatal's wait_status, not the second's", 17 << 8, 5 << 8,
         17 << 8},
        {"a first fatal without wait_status: the shells'", -1, 5 << 8, 3 << 8},
    };
    for (size_t i = 0; i < sizeof (twice) / sizeof (twice[0]); i++) {
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;

        cfg_init (&jc, false, false);
        start_job (&fb, &jc, 2, 0, 0, OWNER);
        fake_spawn_all (&fb);
        if (job_raise (fb.job, &fb.ctx, "exec", 0, "", twice[i].first_ws,
                       fb.out, &err) < 0 ||
            job_raise (fb.job, &fb.ctx, "cancel", 0, "", twice[i].second_ws,
                       fb.out, &err) < 0)
            BAIL_OUT ("job_raise: %s", err.text);
        fake_walk (&fb);
        fake_exit (&fb, PHASE_SHELL, 0, 3 << 8);
        fake_exit (&fb, PHASE_SHELL, 1, 0);
        is_int (ctx_int (fake_event (&fb, 0, "finish", 0), "status"),
                twice[i].want, "finish status: %s", twice[i].name);
        check_end (&fb, twice[i].name);
        fake_fini (&fb);
    }
}

/* A 4-rank job with a per-rank epilog, at the start of its epilog. */
static void start_in_epilog (struct fake *fb, double release_after)
{
    struct job_config jc;
    cfg_init (&jc, false, true);
    jc.release_after = release_after;
    start_job (fb, &jc, 4, 0, 0, OWNER);
    fake_spawn_all (fb);
    fb->ctx.now = T0 + 5;
    fake_exit_phase (fb, PHASE_SHELL, 0);
    fake_spawn_all (fb);
}

static void test_release_after (void)
{
    static const struct {
        double ra;
        const char *want;
    } cases[] = {
        {0, "2:0 0:0 3:0 1:1"},
        {-1, "0-3:1"},
    };
    static const uint32_t order[] = {2, 0, 3, 1};
    struct fake fb;
    char label[64];
    size_t m;

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        snprintf (label, sizeof (label), "release-after %g", cases[i].ra);
        start_in_epilog (&fb, cases[i].ra);
        for (int k = 0; k < 4; k++) {
            fb.ctx.now = T0 + 10 + k;
            fake_exit (&fb, PHASE_EPILOG, order[k], 0);
        }
        is_str (releases (&fb), cases[i].want, "%s: releases", label);
        check_end (&fb, label);
        fake_fini (&fb);
    }

    /* a duration: a timer from the first done rank, then each at once */
    start_in_epilog (&fb, 10);
    fb.ctx.now = T0 + 6;
    fake_exit (&fb, PHASE_EPILOG, 2, 0);
    is_time (job_next_deadline (fb.job), T0 + 16,
             "release-after 10: deadline 10s after the first done rank");
    fb.ctx.now = T0 + 8;
    fake_exit (&fb, PHASE_EPILOG, 0, 0);
    is_str (releases (&fb), "", "release-after 10: nothing released early");
    is_time (job_next_deadline (fb.job), T0 + 16,
             "release-after 10: the deadline does not move");
    check_replay (&fb, "release-after 10, waiting");
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 15.5);
    is_str (fake_names (&fb, m), "", "release-after 10: not yet at 9.5s");
    fake_advance (&fb, T0 + 16);
    is_str (fake_names (&fb, m), "release", "release-after 10: due at 10s");
    is_str (releases (&fb), "0,2:0", "release-after 10: done ranks go");
    is_time (job_next_deadline (fb.job), 0, "release-after 10: no timer left");
    check_replay (&fb, "release-after 10, after the timer");
    fb.ctx.now = T0 + 20;
    fake_exit (&fb, PHASE_EPILOG, 3, 0);
    is_str (releases (&fb), "0,2:0 3:0", "release-after 10: later at once");
    fb.ctx.now = T0 + 21;
    fake_exit (&fb, PHASE_EPILOG, 1, 0);
    is_str (releases (&fb), "0,2:0 3:0 1:1", "release-after 10: final last");
    check_end (&fb, "release-after 10");
    fake_fini (&fb);
}

static void test_not_per_rank (void)
{
    struct fake fb;
    struct job_config jc;
    const struct job_proc *p;
    size_t m;

    cfg_init (&jc, true, true);
    jc.prolog.per_rank = jc.epilog.per_rank = false;
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    is_str (fake_names (&fb, 0), "accept,prolog-start,proc-intent",
            "per-rank false: one prolog");
    p = job_proc_at (fb.job, 0);
    is_str (set_str (p ? p->ranks : NULL), "0-3",
            "per-rank false: the prolog covers every rank");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 0, "CAIRN_RANKS"), "0-3",
            "per-rank false: CAIRN_RANKS");
    is_str (proc_cmd (&fb, PHASE_PROLOG, 0, "CAIRN_RANK"), "(none)",
            "per-rank false: no CAIRN_RANK");
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 0, 0);
    is_str (fake_names (&fb, m),
            expand ("proc-exit,prolog-finish,start,"
                    "proc-intent*4"),
            "per-rank false: one shell per rank all the same");
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    is_str (fake_names (&fb, m),
            expand ("proc-exit*4,finish,cleanup,epilog-start,proc-intent"),
            "per-rank false: one epilog");
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_EPILOG, 2, 0);
    is_str (fake_names (&fb, m), "proc-exit,epilog-finish,release,clean",
            "per-rank false: epilog done -> final release");
    check_end (&fb, "per-rank false");
    fake_fini (&fb);
}

/* ---- prolog failures ---- */

static void test_prolog_fatal (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *exc;
    size_t m;

    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fb.ctx.now = T0 + 1;
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 0, 0);
    fake_exit (&fb, PHASE_PROLOG, 1, 1 << 8);
    fake_exit (&fb, PHASE_PROLOG, 2, 0);
    /* the failed rank's health check: drained at once, as Flux's perilog
     * does; the job is judged when every prolog is done */
    is_str (fake_names (&fb, m), expand ("proc-exit*2,drain,proc-exit"),
            "prolog fails: judged only when every prolog is done");
    is_str (ctx_str (fake_event (&fb, m, "drain", 0), "reason"),
            "prolog failed for job ƒj: exit 1", "prolog fails: drain reason");
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 3, 0);
    is_str (fake_names (&fb, m),
            expand ("proc-exit,exception,prolog-finish,cleanup,epilog-start,"
                    "proc-intent*4"),
            "prolog fails: exception before prolog-finish, epilog on all");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc), "prolog/0/prolog failed on rank 1: exit 1",
            "prolog fails: exception");
    is_int (ctx_int (fake_event (&fb, m, "prolog-finish", 0), "status"), 256,
            "prolog fails: prolog-finish carries the status");
    ok (!job_started (fb.job), "prolog fails: the job never starts");
    check_replay (&fb, "prolog fails, epilog pending");
    drive_to_end (&fb);
    is_str (responses (&fb), "exception,release",
            "prolog fails: responses exception, release");
    is_str (releases (&fb), "0-3:1", "prolog fails: one final release");
    is_str (set_str (job_drained (fb.job)), "1",
            "prolog fails: its rank drained");
    check_end (&fb, "prolog fails");
    fake_fini (&fb);
}

/* A failed per-rank prolog drains its rank (a node's health check, as
 * Flux's perilog judges it), but not a prolog run once for all ranks, nor
 * one that failed after the job was canceled. */
static void test_prolog_fail_drains (void)
{
    for (int c = 0; c < 2; c++) {
        const char *name = c ? "canceled, then exit 1" : "one prolog for all";
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;

        cfg_init (&jc, true, true);
        if (!c)
            jc.prolog.per_rank = false;
        start_job (&fb, &jc, 2, 0, 0, OWNER);
        fb.ctx.now = T0 + 1;
        fake_spawn_all (&fb);
        if (c &&
            job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, &err) < 0)
            BAIL_OUT ("job_raise: %s", err.text);
        fake_walk (&fb);
        fake_exit_phase (&fb, PHASE_PROLOG, 1 << 8);
        drive_to_end (&fb);
        is_int (fake_count (&fb, 0, "drain"), 0, "%s: no drain", name);
        is_str (set_str (job_drained (fb.job)), "", "%s: nothing drained",
                name);
        check_end (&fb, name);
        fake_fini (&fb);
    }
}

/* Tolerated prolog failures: the exit codes the site lists, or ranks an
 * outside service marks, up to the jobspec's allowance; anything else, or
 * every rank, stays fatal. */
static void test_prolog_tolerance (void)
{
    static const struct {
        const char *name;
        int allowed;           /* jobspec prolog-failures-allowed */
        int code;              /* tolerable exit code configured, 0 = none */
        const char *fail;      /* job_fail_ranks() before the exits, or NULL */
        int exits[4];          /* prolog exit codes */
        const char *tolerated; /* NULL: the job fails */
        const char *note;
    } cases[] = {
        // clang-format off
        {"non-tolerable code with an allowance", 1, 7, NULL, {0, 0, 1, 0},
         NULL, "prolog failed on rank 2: exit 1"},
        {"tolerable code within the allowance", 1, 7, NULL, {0, 0, 7, 0},
         "2", "prolog failed on rank 2 (tolerated, 1 of 1 allowed)"},
        {"one too many", 1, 7, NULL, {0, 7, 7, 0},
         NULL, "prolog failed on 2 ranks (1-2), more than the 1 allowed"},
        {"every rank", 4, 7, NULL, {7, 7, 7, 7},
         NULL, "prolog failed on every rank (0-3)"},
        {"none allowed", 0, 7, NULL, {0, 7, 0, 0},
         NULL, "prolog failed on 1 rank (1), more than the 0 allowed"},
        {"tolerable and fatal mixed", 1, 7, NULL, {0, 7, 1, 0},
         NULL, "prolog failed on rank 2: exit 1"},
        {"fail-ranks", 1, 0, "3", {0, 0, 0, 0},
         "3", "prolog failed on rank 3 (tolerated, 1 of 1 allowed)"},
        {"fail-ranks plus a code", 2, 7, "0", {0, 0, 0, 7},
         "0,3", "prolog failed on ranks 0,3 (tolerated, 2 of 2 allowed)"},
        {"fail-ranks beyond the allowance", 1, 0, "1-2", {0, 0, 0, 0},
         NULL, "prolog failed on 2 ranks (1-2), more than the 1 allowed"},
        // clang-format on
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const char *name = cases[i].name;
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        json_t *exc;
        size_t m;

        cfg_init (&jc, true, true);
        if (cases[i].code)
            cfg_tolerate (&jc, cases[i].code);
        start_job (&fb, &jc, 4, 0, cases[i].allowed, OWNER);
        fb.ctx.now = T0 + 1;
        fake_spawn_all (&fb);
        if (cases[i].fail) {
            struct idset *ranks = idset_decode (cases[i].fail, NULL);
            m = fake_mark (&fb);
            ok (job_fail_ranks (fb.job, &fb.ctx, ranks, "node down", fb.out,
                                &err) == 0,
                "%s: job_fail_ranks %s", name, cases[i].fail);
            fake_walk (&fb);
            is_str (fake_names (&fb, m), "fail-ranks",
                    "%s: fail-ranks only records", name);
            idset_destroy (ranks);
        }
        fb.ctx.now = T0 + 2;
        for (uint32_t r = 0; r < 3; r++)
            fake_exit (&fb, PHASE_PROLOG, r, cases[i].exits[r] << 8);
        m = fake_mark (&fb);
        fake_exit (&fb, PHASE_PROLOG, 3, cases[i].exits[3] << 8);
        exc = fake_event (&fb, m, "exception", 0);
        like (ctx_str (exc, "note"), cases[i].note, "%s: note", name);
        if (cases[i].fail && cases[i].tolerated)
            like (ctx_str (exc, "note"), "node down",
                  "%s: the note says why the ranks were marked", name);
        else if (cases[i].tolerated)
            is_str (ctx_str (exc, "note"), cases[i].note,
                    "%s: no ranks marked, nothing appended", name);

        if (!cases[i].tolerated) {
            is_str (fake_names (&fb, m),
                    expand ("proc-exit,exception,prolog-finish,cleanup,"
                            "epilog-start,proc-intent*4"),
                    "%s: fatal", name);
            is_int (ctx_int (exc, "severity"), 0, "%s: severity 0", name);
            drive_to_end (&fb);
            ok (!job_started (fb.job), "%s: never started", name);
            is_str (releases (&fb), "0-3:1", "%s: one final release", name);
            check_end (&fb, name);
            fake_fini (&fb);
            continue;
        }

        struct idset *tol = idset_decode (cases[i].tolerated, NULL);
        struct idset *rest = idset_copy (job_ranks (fb.job));
        size_t nt = idset_count (tol);
        char want[256], rs[64];
        idset_subtract (rest, tol);
        snprintf (rs, sizeof (rs), "%s", set_str (rest));
        snprintf (want, sizeof (want),
                  "proc-exit,tolerate,drain,exception,prolog-finish,cleanup,"
                  "start,proc-intent*%zu,epilog-start,proc-intent*%zu",
                  4 - nt, nt);
        is_str (fake_names (&fb, m), expand (want),
                "%s: tolerate, drain, notice, start on the rest", name);
        is_int (ctx_int (exc, "severity"), 2, "%s: severity 2", name);
        is_str (ctx_str (exc, "ranks"), cases[i].tolerated,
                "%s: exception names the ranks", name);
        is_int (ctx_int (fake_event (&fb, m, "prolog-finish", 0), "status"), 0,
                "%s: prolog-finish status 0", name);
        is_str (set_str (job_drained (fb.job)), cases[i].tolerated,
                "%s: the failed ranks are drained", name);
        for (uint32_t r = 0; r < 4; r++)
            ok ((fake_find (&fb, PHASE_SHELL, r) != NULL) ==
                    !idset_test (tol, r),
                "%s: rank %u %s a shell", name, r,
                idset_test (tol, r) ? "has no" : "has");
        is_str (
            proc_cmd (&fb, PHASE_SHELL, idset_first (rest), "CAIRN_JOB_RANKS"),
            rs, "%s: shells' CAIRN_JOB_RANKS", name);
        check_replay (&fb, name);

        /* the failed ranks' epilog ends: they go at once, non-final */
        fb.ctx.now = T0 + 3;
        fake_spawn_all (&fb);
        for (uint32_t r = idset_first (tol); r != IDSET_INVALID_ID;
             r = idset_next (tol, r))
            fake_exit (&fb, PHASE_EPILOG, r, 0);
        is_str (set_str (job_released (fb.job)), cases[i].tolerated,
                "%s: failed ranks released early", name);
        is_int (job_state (fb.job), JOB_RUN, "%s: shells still run", name);

        m = fake_mark (&fb);
        fb.ctx.now = T0 + 4;
        fake_exit_phase (&fb, PHASE_SHELL, 0);
        snprintf (want, sizeof (want),
                  "proc-exit*%zu,finish,cleanup,proc-intent*%zu", 4 - nt,
                  4 - nt);
        is_str (fake_names (&fb, m), expand (want),
                "%s: finish, epilog on the rest", name);
        drive_to_end (&fb);
        want[0] = '\0';
        for (uint32_t r = idset_first (tol); r != IDSET_INVALID_ID;
             r = idset_next (tol, r))
            snprintf (want + strlen (want), sizeof (want) - strlen (want),
                      "%u:0 ", r);
        snprintf (want + strlen (want), sizeof (want) - strlen (want), "%s:1",
                  rs);
        is_str (releases (&fb), want, "%s: releases", name);
        is_str (responses (&fb),
                expand (nt == 1 ? "exception,start,release,finish,release"
                                : "exception,start,release*2,finish,release"),
                "%s: responses", name);
        idset_destroy (tol);
        idset_destroy (rest);
        check_end (&fb, name);
        fake_fini (&fb);
    }
}

/* hold-on-shrink: a tolerated prolog failure holds the shells until the
 * client's resume; a cancel while held cleans the held ranks up. */
static void test_hold_on_shrink (void)
{
    for (int cancel = 0; cancel < 2; cancel++) {
        const char *name = cancel ? "hold, canceled" : "hold, resumed";
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        size_t m;

        cfg_init (&jc, true, true);
        cfg_tolerate (&jc, 7);
        start_job_cairn (&fb, &jc, 4, 0, 1, OWNER,
                         json_pack ("{s:b}", "hold-on-shrink", 1));
        fb.ctx.now = T0 + 1;
        fake_spawn_all (&fb);
        is_errno (job_resume (fb.job, &fb.ctx, false, fb.out, &err), EINVAL,
                  "%s: resume before the hold is refused", name);
        like (err.text, "job 42 is not held", "%s: message", name);
        for (uint32_t r = 0; r < 3; r++)
            fake_exit (&fb, PHASE_PROLOG, r, 0);
        m = fake_mark (&fb);
        fake_exit (&fb, PHASE_PROLOG, 3, 7 << 8);
        is_str (fake_names (&fb, m),
                "proc-exit,tolerate,drain,exception,prolog-finish,cleanup,"
                "hold,epilog-start,proc-intent",
                "%s: tolerated, then held with no shell", name);
        is_str (ctx_str (fake_event (&fb, m, "hold", 0), "ranks"), "0-2",
                "%s: hold names the ranks that will run", name);
        ok (!job_started (fb.job), "%s: not started", name);
        ok (job_event_is_progress ("hold") && !job_event_is_response ("hold"),
            "%s: hold goes to event streams, not as a response", name);
        check_replay (&fb, name);
        fb.ctx.now = T0 + 100; /* nothing moves while held */
        m = fake_mark (&fb);
        ok (job_advance (fb.job, &fb.ctx, fb.out) == 0 &&
                json_array_size (fb.out) == m,
            "%s: time alone does not end the hold", name);

        if (cancel) {
            ok (job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out,
                           &err) == 0,
                "%s: cancel", name);
            fake_walk (&fb);
            is_str (fake_names (&fb, m),
                    expand ("exception,cleanup,proc-intent*3"),
                    "%s: the held ranks go to their epilog", name);
        } else {
            ok (job_resume (fb.job, &fb.ctx, false, fb.out, &err) == 0,
                "%s: resume", name);
            fake_walk (&fb);
            is_str (fake_names (&fb, m), expand ("resume,start,proc-intent*3"),
                    "%s: shells start on the rest", name);
            ok (fake_find (&fb, PHASE_SHELL, 3) == NULL,
                "%s: none on the failed rank", name);
        }
        m = fake_mark (&fb);
        ok (job_resume (fb.job, &fb.ctx, false, fb.out, &err) == 0 &&
                json_array_size (fb.out) == m,
            "%s: a second resume changes nothing", name);
        check_replay (&fb, name);
        drive_to_end (&fb);
        ok (job_started (fb.job) == !cancel, "%s: %s", name,
            cancel ? "never started" : "started");
        is_str (responses (&fb),
                cancel ? "exception,exception,release,release"
                       : "exception,start,finish,release,release",
                "%s: responses", name);
        check_end (&fb, name);
        is_errno (job_resume (fb.job, &fb.ctx, false, fb.out, &err), EALREADY,
                  "%s: resume after clean", name);
        fake_fini (&fb);
    }

    /* no failure: no hold, and resume is refused */
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    cfg_init (&jc, true, false);
    start_job_cairn (&fb, &jc, 2, 0, 1, OWNER,
                     json_pack ("{s:b}", "hold-on-shrink", 1));
    fake_spawn_all (&fb);
    fake_exit_phase (&fb, PHASE_PROLOG, 0);
    ok (job_started (fb.job), "hold-on-shrink, no failure: starts at once");
    is_errno (job_resume (fb.job, &fb.ctx, false, fb.out, &err), EINVAL,
              "hold-on-shrink, no failure: resume refused");
    drive_to_end (&fb);
    check_end (&fb, "hold-on-shrink, no failure");
    fake_fini (&fb);
}

/* An outside service's event: recorded as given, a progress event, no
 * change to the job; cairn's own names and bad contexts refused. */
static void test_post (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    json_t *ctx = json_pack ("{s:s}", "path", "/scratch/u1");
    json_t *bad = json_pack ("[i]", 1);
    size_t m;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    m = fake_mark (&fb);
    ok (job_post (fb.job, &fb.ctx, "data-out", ctx, fb.out, &err) == 0,
        "post: data-out");
    is_str (fake_names (&fb, m), "data-out", "post: one event, nothing else");
    is_str (ctx_str (fake_event (&fb, m, "data-out", 0), "path"),
            "/scratch/u1", "post: its context");
    ok (job_event_is_progress ("data-out") && !job_event_is_response ("data-out"),
        "post: a progress event");
    m = fake_mark (&fb);
    ok (job_post (fb.job, &fb.ctx, "data-out", ctx, fb.out, &err) == 0,
        "post: the same again succeeds");
    is_str (fake_names (&fb, m), "", "post: ... and is recorded once");
    json_t *other = json_pack ("{s:s}", "path", "/scratch/u2");
    ok (job_post (fb.job, &fb.ctx, "data-out", other, fb.out, &err) == 0,
        "post: the same name with another context");
    is_str (fake_names (&fb, m), "data-out", "post: ... is a new event");
    json_decref (other);
    struct job *r = replay (&fb, json_array_size (fb.out), NULL, 0);
    json_t *o2 = json_array ();
    ok (r && job_post (r, &fb.ctx, "data-out", ctx, o2, &err) == 0 &&
            json_array_size (o2) == 0,
        "post: a replayed job knows what was posted");
    json_decref (o2);
    job_destroy (r);
    m = fake_mark (&fb);
    is_errno (job_post (fb.job, &fb.ctx, "finish", NULL, fb.out, &err), EINVAL,
              "post: cairn's own name refused");
    like (err.text, "name: \"finish\" is one of cairn's own events",
          "post: message");
    is_errno (job_post (fb.job, &fb.ctx, "reattached", NULL, fb.out, &err),
              EINVAL, "post: a stream response's name refused");
    is_errno (job_post (fb.job, &fb.ctx, "", NULL, fb.out, &err), EINVAL,
              "post: empty name refused");
    is_errno (job_post (fb.job, &fb.ctx, "a/b", NULL, fb.out, &err), EINVAL,
              "post: name with '/' refused");
    is_errno (job_post (fb.job, &fb.ctx, "x", bad, fb.out, &err), EINVAL,
              "post: context not an object refused");
    like (err.text, "context: must be an object", "post: context message");
    is_str (fake_names (&fb, m), "", "post: refusals emit nothing");
    check_replay (&fb, "post");
    fake_spawn_all (&fb);
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    drive_to_end (&fb);
    check_end (&fb, "post");
    is_errno (job_post (fb.job, &fb.ctx, "late", NULL, fb.out, &err),
              EALREADY, "post: a clean job takes none");
    fake_fini (&fb);
    json_decref (ctx);
    json_decref (bad);
}

static void test_fail_ranks_errors (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    struct idset *bad = idset_decode ("7", NULL);
    struct idset *empty = idset_create ();
    struct idset *one = idset_decode ("1", NULL);
    size_t m;

    cfg_init (&jc, true, false);
    start_job (&fb, &jc, 4, 0, 1, OWNER);
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    is_errno (job_fail_ranks (fb.job, &fb.ctx, bad, "", fb.out, &err), EINVAL,
              "fail-ranks: a rank not in the job is refused");
    like (err.text, "ranks: not a non-empty subset of the job's ranks",
          "fail-ranks: message");
    is_errno (job_fail_ranks (fb.job, &fb.ctx, empty, "", fb.out, &err), EINVAL,
              "fail-ranks: an empty set is refused");
    fake_exit_phase (&fb, PHASE_PROLOG, 0);
    is_int (job_state (fb.job), JOB_RUN, "fail-ranks: job runs");
    m = fake_mark (&fb);
    is_errno (job_fail_ranks (fb.job, &fb.ctx, one, "", fb.out, &err), EINVAL,
              "fail-ranks: refused outside the prolog");
    like (err.text, "job 42 is not in its prolog (run)",
          "fail-ranks: message names the state");
    is_str (fake_names (&fb, m), "", "fail-ranks: refusals emit nothing");
    drive_to_end (&fb);
    check_end (&fb, "fail-ranks errors");
    fake_fini (&fb);
    idset_destroy (bad);
    idset_destroy (empty);
    idset_destroy (one);
}

/* A rank an outside service marked failed is tolerated however its prolog
 * then ends: on a dead node the prolog is typically lost or times out. */
static void test_fail_ranks_then_lost (void)
{
    struct fake fb;
    struct job_config jc;
    struct idset *two = idset_decode ("2", NULL);
    json_t *exc;
    size_t m;

    cfg_init (&jc, true, false);
    start_job (&fb, &jc, 4, 0, 1, OWNER);
    fake_spawn_all (&fb);
    job_fail_ranks (fb.job, &fb.ctx, two, "node2 unreachable", fb.out, NULL);
    fake_walk (&fb);
    fake_end (&fb, PHASE_PROLOG, 2, FAKE_LOST, 0, "node rebooted");
    fake_exit (&fb, PHASE_PROLOG, 0, 0);
    fake_exit (&fb, PHASE_PROLOG, 1, 0);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 3, 0);
    exc = fake_event (&fb, m, "exception", 0);
    is_int (ctx_int (exc, "severity"), 2,
            "marked, then lost: a tolerated failure (severity 2)");
    ok (job_started (fb.job), "marked, then lost: the job starts on 0-1,3");
    if (!job_started (fb.job))
        diag ("BUG: fail-ranks 2 (allowed 1), then rank 2's prolog lost: "
              "got fatal \"%s\"; expected tolerate 2, start on 0-1,3",
              ctx_str (exc, "note"));
    drive_to_end (&fb);
    check_end (&fb, "marked, then lost");
    fake_fini (&fb);
    idset_destroy (two);
}

/* A fail-ranks note longer than JOB_MARK_NOTE_MAX: the tolerate note
 * carries its first JOB_MARK_NOTE_MAX bytes. */
static void test_fail_ranks_long_note (void)
{
    struct fake fb;
    struct job_config jc;
    struct idset *two = idset_decode ("2", NULL);
    char note[200 + 1], want[256];
    json_t *exc;
    size_t m;

    memset (note, 'x', sizeof (note) - 1);
    note[sizeof (note) - 1] = '\0';
    snprintf (want, sizeof (want),
              "prolog failed on rank 2 (tolerated, 1 of 1 allowed): %.*s",
              JOB_MARK_NOTE_MAX, note);
    cfg_init (&jc, true, false);
    start_job (&fb, &jc, 4, 0, 1, OWNER);
    fake_spawn_all (&fb);
    job_fail_ranks (fb.job, &fb.ctx, two, note, fb.out, NULL);
    fake_walk (&fb);
    for (uint32_t r = 0; r < 3; r++)
        fake_exit (&fb, PHASE_PROLOG, r, 0);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 3, 0);
    exc = fake_event (&fb, m, "exception", 0);
    is_str (ctx_str (exc, "note"), want,
            "a long fail-ranks note is cut to %d bytes", JOB_MARK_NOTE_MAX);
    drive_to_end (&fb);
    check_end (&fb, "long note");
    fake_fini (&fb);
    idset_destroy (two);
}

/* ---- exceptions from outside ---- */

static void test_cancel (void)
{
    static const struct {
        const char *name;
        enum proc_phase phase; /* what runs when the exception comes */
        bool coe;              /* that perilog's cancel-on-exception */
        int severity;
        const char *emitted; /* by job_raise */
        const char *signals;
        double kill_after; /* escalation interval, 0 if none */
        int nexc;          /* exception events at the end */
        const char *drained;
        bool started;
        int finish; /* finish status, -1 if no finish */
    } cases[] = {
        // clang-format off
        {"cancel in prolog", PHASE_PROLOG, true, 0,
         "exception,proc-signal*4", "15/terminate*4", 60, 1, "", false, -1},
        {"cancel in prolog, no cancel-on-exception", PHASE_PROLOG, false, 0,
         "exception", "", 0, 1, "", false, -1},
        {"cancel in shells", PHASE_SHELL, false, 0,
         "exception,proc-signal*4", "15/terminate*4", 5, 1, "", true, 15},
        {"cancel in epilog", PHASE_EPILOG, false, 0,
         "exception", "", 0, 1, "", true, 0},
        {"cancel in epilog, cancel-on-exception", PHASE_EPILOG, true, 0,
         "exception,proc-signal*4", "15/terminate*4", 60, 5, "0-3", true, 0},
        {"severity 2 in prolog", PHASE_PROLOG, true, 2,
         "exception", "", 0, 1, "", true, 0},
        {"severity 2 in shells", PHASE_SHELL, false, 2,
         "exception", "", 0, 1, "", true, 0},
        // clang-format on
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const char *name = cases[i].name;
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        int nsig;
        size_t m;

        cfg_init (&jc, true, true);
        jc.prolog.cancel_on_exception = cases[i].coe;
        jc.epilog.cancel_on_exception = cases[i].coe;
        start_job (&fb, &jc, 4, 0, 0, OWNER);
        fb.ctx.now = T0 + 1;
        fake_spawn_all (&fb);
        if (cases[i].phase >= PHASE_SHELL) {
            fb.ctx.now = T0 + 2;
            fake_exit_phase (&fb, PHASE_PROLOG, 0);
            fake_spawn_all (&fb);
        }
        if (cases[i].phase == PHASE_EPILOG) {
            fb.ctx.now = T0 + 3;
            fake_exit_phase (&fb, PHASE_SHELL, 0);
            fake_spawn_all (&fb);
        }
        fb.ctx.now = T0 + 10;
        m = fake_mark (&fb);
        nsig = fb.nsigs;
        ok (job_raise (fb.job, &fb.ctx, "cancel", cases[i].severity,
                       "canceled by user", -1, fb.out, &err) == 0,
            "%s: job_raise", name);
        fake_walk (&fb);
        is_str (fake_names (&fb, m), expand (cases[i].emitted), "%s: emitted",
                name);
        is_str (fake_signals (&fb, nsig), expand (cases[i].signals),
                "%s: signals", name);
        if (cases[i].kill_after > 0)
            is_time (job_next_deadline (fb.job), T0 + 10 + cases[i].kill_after,
                     "%s: kill escalation armed", name);
        check_replay (&fb, name);

        fb.ctx.now = T0 + 11;
        fake_exit_phase (&fb, cases[i].phase, *cases[i].signals ? 15 : 0);
        drive_to_end (&fb);
        is_int (fake_count (&fb, 0, "exception"), cases[i].nexc,
                "%s: exceptions", name);
        is_str (set_str (job_drained (fb.job)), cases[i].drained, "%s: drained",
                name);
        is_int (job_started (fb.job), cases[i].started, "%s: started", name);
        is_int (job_finished (fb.job) ? job_finish_status (fb.job) : -1,
                cases[i].finish, "%s: finish", name);
        if (cases[i].phase == PHASE_PROLOG)
            is_int (ctx_int (fake_event (&fb, 0, "prolog-finish", 0), "status"),
                    *cases[i].signals ? 15 : 0, "%s: prolog-finish status",
                    name);
        check_end (&fb, name);
        fake_fini (&fb);
    }
}

/* A process spawned after a fatal exception is terminated at once. */
static void test_spawn_after_cancel (void)
{
    struct fake fb;
    struct job_config jc;
    size_t m;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    for (uint32_t r = 0; r < 3; r++)
        spawn_rank (&fb, PHASE_SHELL, r);
    m = fake_mark (&fb);
    job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, NULL);
    fake_walk (&fb);
    is_str (fake_names (&fb, m), expand ("exception,proc-signal*3"),
            "late spawn: only running shells are signalled");
    m = fake_mark (&fb);
    fb.ctx.now = T0 + 1;
    spawn_rank (&fb, PHASE_SHELL, 3);
    is_str (fake_names (&fb, m), "proc-spawn,proc-signal",
            "late spawn: signalled as soon as it runs");
    is_str (fake_signals (&fb, 3), "15/terminate", "late spawn: term signal");
    fake_exit_phase (&fb, PHASE_SHELL, SIGTERM);
    check_end (&fb, "late spawn");
    fake_fini (&fb);
}

static void test_raise_errors (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    size_t m;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    is_errno (job_raise (fb.job, &fb.ctx, "", 0, NULL, -1, fb.out, &err),
              EINVAL, "raise: empty type refused");
    like (err.text, "type: must be a non-empty string", "raise: message");
    is_errno (job_raise (fb.job, &fb.ctx, "cancel", 8, NULL, -1, fb.out, &err),
              EINVAL, "raise: severity 8 refused");
    like (err.text, "severity: must be 0..7, not 8", "raise: message");
    is_str (fake_names (&fb, m), "", "raise: refusals emit nothing");
    drive_to_end (&fb);
    check_end (&fb, "raise errors");
    /* job.h: every request fails with EALREADY once the job is clean */
    struct idset *one = idset_decode ("0", NULL);
    m = fake_mark (&fb);
    is_errno (job_raise (fb.job, &fb.ctx, "cancel", 0, NULL, -1, fb.out, &err),
              EALREADY, "raise on a clean job: EALREADY, as job.h says");
    if (errno != EALREADY)
        diag ("BUG: job_raise on a clean job gives %s (%s), job.h promises "
              "EALREADY",
              strerror (errno), err.text);
    is_errno (job_kill (fb.job, &fb.ctx, SIGTERM, fb.out, &err), EALREADY,
              "kill on a clean job: EALREADY");
    is_errno (job_set_expiration (fb.job, &fb.ctx, T0 + 99, fb.out, &err),
              EALREADY, "expiration on a clean job: EALREADY");
    is_errno (job_fail_ranks (fb.job, &fb.ctx, one, "", fb.out, &err), EALREADY,
              "fail-ranks on a clean job: EALREADY");
    is_errno (job_set_critical (fb.job, &fb.ctx, one, fb.out, &err), EALREADY,
              "critical-ranks on a clean job: EALREADY");
    like (err.text, "job 42 is already clean", "clean job: message");
    is_str (fake_names (&fb, m), "", "clean job: nothing emitted");
    idset_destroy (one);
    fake_fini (&fb);
}

/* ---- timers ---- */

static void test_prolog_timeout (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *exc;
    size_t m;

    cfg_init (&jc, true, false);
    jc.prolog.per_rank = false;
    jc.prolog.timeout = 100;
    jc.prolog.kill_timeout = 10;
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fb.ctx.now = T0 + 1;
    fake_spawn_all (&fb);
    is_time (job_next_deadline (fb.job), T0 + 101,
             "prolog timeout: deadline is spawn + timeout");
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 100);
    is_str (fake_names (&fb, m), "", "prolog timeout: nothing before it");
    fake_advance (&fb, T0 + 101);
    is_str (fake_names (&fb, m), "proc-signal", "prolog timeout: signalled");
    is_str (fake_signals (&fb, 0), "15/timeout",
            "prolog timeout: term signal, reason timeout");
    is_time (job_next_deadline (fb.job), T0 + 111,
             "prolog timeout: kill after the prolog's kill-timeout");
    fake_advance (&fb, T0 + 111);
    is_str (fake_signals (&fb, 0), "15/timeout,9/kill",
            "prolog timeout: kill signal");
    ok (fb.sigs[1].kill, "prolog timeout: marked as a kill");
    is_time (job_next_deadline (fb.job), T0 + 121,
             "prolog timeout: next kill armed");
    check_replay (&fb, "prolog timeout, being killed");
    fb.ctx.now = T0 + 112;
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 0, SIGKILL);
    is_str (fake_names (&fb, m),
            "proc-exit,drain,exception,prolog-finish,cleanup,release,clean",
            "prolog timeout: drained, fatal, then cleanup");
    is_str (ctx_str (fake_event (&fb, m, "drain", 0), "reason"),
            "prolog timed out for job ƒj", "prolog timeout: drain reason");
    is_str (set_str (job_drained (fb.job)), "0-3",
            "prolog timeout: its ranks are drained");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc), "prolog/0/prolog failed on ranks 0-3: timed out",
            "prolog timeout: exception");
    is_int (ctx_int (fake_event (&fb, m, "prolog-finish", 0), "status"),
            SIGKILL, "prolog timeout: prolog-finish status");
    check_end (&fb, "prolog timeout");
    fake_fini (&fb);
}

/* A prolog that dies of a signal cairn did not send, or that had to be
 * killed after a cancel, drains its rank; one that obeys the cancel does
 * not (test_cancel). */
static void test_prolog_killed_drains (void)
{
    for (int cancel = 0; cancel < 2; cancel++) {
        const char *name = cancel ? "prolog canceled then killed"
                                  : "prolog killed";
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        size_t m;

        cfg_init (&jc, true, false);
        jc.prolog.kill_timeout = 10;
        start_job (&fb, &jc, 2, 0, 0, OWNER);
        fb.ctx.now = T0 + 1;
        fake_spawn_all (&fb);
        fake_exit (&fb, PHASE_PROLOG, 0, 0);
        if (cancel) {
            job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, &err);
            fake_walk (&fb);
            fake_advance (&fb, T0 + 11); /* SIGTERM ignored: SIGKILL */
        }
        m = fake_mark (&fb);
        fake_exit (&fb, PHASE_PROLOG, 1, SIGKILL);
        is_str (ctx_str (fake_event (&fb, m, "drain", 0), "reason"),
                cancel ? "prolog canceled then killed for job ƒj"
                       : "prolog for job ƒj: killed by signal 9",
                "%s: drain reason", name);
        is_str (set_str (job_drained (fb.job)), "1", "%s: rank 1 drained",
                name);
        drive_to_end (&fb);
        check_end (&fb, name);
        fake_fini (&fb);
    }
}

static void test_epilog_timeout (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *exc;
    size_t m;

    cfg_init (&jc, false, true);
    jc.epilog.timeout = 50;
    jc.epilog.kill_timeout = 10;
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 5;
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    fb.ctx.now = T0 + 6;
    fake_spawn_all (&fb);
    fake_exit (&fb, PHASE_EPILOG, 0, 0);
    fake_exit (&fb, PHASE_EPILOG, 2, 0);
    fake_exit (&fb, PHASE_EPILOG, 3, 0);
    is_time (job_next_deadline (fb.job), T0 + 56, "epilog timeout: deadline");
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 56);
    is_str (fake_signals (&fb, 0), "15/timeout", "epilog timeout: signalled");
    fb.ctx.now = T0 + 57;
    fake_exit (&fb, PHASE_EPILOG, 1, 0); /* caught SIGTERM, exited 0 */
    is_str (fake_names (&fb, m),
            "proc-signal,proc-exit,exception,drain,epilog-finish,release,"
            "clean",
            "epilog timeout: a failure even with exit 0: notice, drain");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc), "epilog/2/epilog failed on rank 1: timed out",
            "epilog timeout: exception");
    is_str (set_str (job_drained (fb.job)), "1", "epilog timeout: drained");
    check_end (&fb, "epilog timeout");
    fake_fini (&fb);
}

static void test_unkillable (void)
{
    struct fake fb;
    struct job_config jc;
    char execid[EXECID_LEN + 1];
    size_t m;

    /* a canceled shell that survives every kill signal: job-exec's
     * schedule (escalate.h), given up with the max-kill-count-th direct
     * kill */
    cfg_init (&jc, false, false);
    jc.exec.kill_timeout = 5;
    jc.exec.max_kill_count = 2;
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 10;
    job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, NULL);
    fake_walk (&fb);
    fb.ctx.now = T0 + 11;
    for (uint32_t r = 0; r < 4; r++)
        if (r != 1)
            fake_exit (&fb, PHASE_SHELL, r, SIGTERM);
    memcpy (execid, fake_find (&fb, PHASE_SHELL, 1)->execid, sizeof (execid));
    for (int k = 1; k <= 5; k++)
        fake_advance (&fb, T0 + 10 + 5 * k);
    is_str (fake_signals (&fb, 0),
            expand ("15/terminate*4,9/kill*4,9/kill-shell"),
            "unkillable shell: term, four kills, a direct kill at 5 x "
            "kill-timeout");
    is_time (job_next_deadline (fb.job), T0 + 45,
             "unkillable shell: the next direct kill 2 x kill-timeout later");
    check_replay (&fb, "unkillable shell, one direct kill sent");
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 44.5);
    is_str (fake_names (&fb, m), "", "unkillable shell: not given up early");
    fake_advance (&fb, T0 + 45);
    is_str (fake_names (&fb, m),
            "proc-signal,proc-lost,drain,exception,finish,cleanup,release,"
            "clean",
            "unkillable shell: the last direct kill, then lost, drained, "
            "the job goes on to clean");
    is_str (ctx_str (fake_event (&fb, m, "proc-lost", 0), "note"),
            "unkillable user processes: exceeded max kill count (6 kill "
            "signals)",
            "unkillable shell: proc-lost note (job-exec's words)");
    like (ctx_str (fake_event (&fb, m, "drain", 0), "reason"),
          "unkillable user processes", "unkillable shell: drain reason");
    like (ctx_str (fake_event (&fb, m, "exception", 0), "note"),
          "shell on rank 1: unkillable", "unkillable shell: exception note");
    is_str (ctx_str (fake_event (&fb, m, "finish", 0), "lost-ranks"), "1",
            "unkillable shell: finish names the lost rank");
    is_str (set_str (job_drained (fb.job)), "1", "unkillable shell: drained");
    check_end (&fb, "unkillable shell");
    m = fake_mark (&fb);
    is_int (job_proc_exited (fb.job, &fb.ctx, execid,
                             &(struct job_proc_end){.status = SIGKILL}, fb.out),
            0, "unkillable shell: a late exit is accepted");
    is_str (fake_names (&fb, m), "", "unkillable shell: and ignored");
    fake_fini (&fb);

    /* a timed-out epilog that cannot be killed: drain, the job goes on */
    cfg_init (&jc, false, true);
    jc.epilog.timeout = 50;
    jc.epilog.kill_timeout = 10;
    jc.exec.max_kill_count = 1;
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    fake_spawn_all (&fb);
    fake_exit (&fb, PHASE_EPILOG, 1, 0);
    fake_advance (&fb, T0 + 50);
    fake_advance (&fb, T0 + 60);
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 70);
    is_str (fake_signals (&fb, 0), "15/timeout,9/kill",
            "unkillable epilog: term, kill");
    is_str (fake_names (&fb, m),
            "proc-lost,drain,exception,epilog-finish,release,clean",
            "unkillable epilog: lost, drained once, severity-2 notice");
    is_int (ctx_int (fake_event (&fb, m, "exception", 0), "severity"), 2,
            "unkillable epilog: not fatal");
    is_str (set_str (job_drained (fb.job)), "0", "unkillable epilog: drained");
    check_end (&fb, "unkillable epilog");
    fake_fini (&fb);
}

/* A shell's kill schedule (escalate.h): every kill-timeout, then direct
 * kills from 5 x kill-timeout on, the interval doubling up to 300 s;
 * max-kill-timeout gives up at its time whatever the count. */
static void kill_schedule (double kt,
                           double max_kt,
                           int max_count,
                           const double *due,
                           const char *const *what,
                           size_t n,
                           const char *signals,
                           const char *name)
{
    struct fake fb;
    struct job_config jc;

    cfg_init (&jc, false, false);
    jc.exec.kill_timeout = kt;
    jc.exec.max_kill_timeout = max_kt;
    jc.exec.max_kill_count = max_count;
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 10;
    job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, NULL);
    fake_walk (&fb);
    for (size_t k = 0; k < n; k++) {
        size_t m = fake_mark (&fb);
        is_time (job_next_deadline (fb.job), T0 + 10 + due[k],
                 "%s: step %zu due at +%g", name, k + 1, due[k]);
        fake_advance (&fb, T0 + 10 + due[k]);
        is_str (fake_names (&fb, m), what[k], "%s: step %zu", name, k + 1);
        if (k == 0)
            check_replay (&fb, name);
    }
    is_str (fake_signals (&fb, 0), expand (signals), "%s: signals", name);
    check_replay (&fb, name);
    if (job_state (fb.job) != JOB_DONE)
        fake_exit (&fb, PHASE_SHELL, 0, SIGKILL);
    check_end (&fb, name);
    fake_fini (&fb);
}

static void test_kill_schedule (void)
{
    static const char *const sig = "proc-signal";
    static const char *const lost =
        "proc-lost,drain,exception,finish,cleanup,release,clean";
    static const char *const last =
        "proc-signal,proc-lost,drain,exception,finish,cleanup,release,clean";

    const double d1[] = {2, 4, 6, 8, 10, 14, 22, 38};
    const char *const w1[] = {sig, sig, sig, sig, sig, sig, sig, sig};
    kill_schedule (2, 0, 8, d1, w1, 8, "15/terminate,9/kill*4,9/kill-shell*4",
                   "kill schedule, default count");

    /* the interval between direct kills stops doubling at 300 s */
    const double d2[] = {100, 200, 300, 400, 500, 700, 1000, 1300};
    kill_schedule (100, 0, 8, d2, w1, 8, "15/terminate,9/kill*4,9/kill-shell*4",
                   "kill schedule, 300 s cap");

    /* max-kill-timeout before the first direct kill */
    const double d3[] = {2, 4, 6, 7};
    const char *const w3[] = {sig, sig, sig, lost};
    kill_schedule (2, 7, 8, d3, w3, 4, "15/terminate,9/kill*3",
                   "max-kill-timeout");

    /* max-kill-timeout overrides a small max-kill-count ... */
    const double d4[] = {2, 4, 6, 8, 10, 14, 22, 30};
    const char *const w4[] = {sig, sig, sig, sig, sig, sig, sig, lost};
    kill_schedule (2, 30, 1, d4, w4, 8, "15/terminate,9/kill*4,9/kill-shell*3",
                   "max-kill-timeout over max-kill-count 1");

    /* ... and without it the first direct kill is the last */
    const double d5[] = {2, 4, 6, 8, 10};
    const char *const w5[] = {sig, sig, sig, sig, last};
    kill_schedule (2, 0, 1, d5, w5, 5, "15/terminate,9/kill*4,9/kill-shell",
                   "max-kill-count 1");
}

/* job-exec's effective-max-kill-timeout (its own estimate, t2406). */
static void test_give_up_after (void)
{
    struct exec_config x = {.kill_timeout = 0.1, .max_kill_count = 3};
    ok (fabs (escalate_give_up_after (&x) - 0.8) < 1e-8,
        "give-up estimate: (5 x 0.1) + 0.1 + 0.2");
    x = (struct exec_config){.kill_timeout = 0.3, .max_kill_count = 4};
    ok (fabs (escalate_give_up_after (&x) - 3.6) < 1e-8,
        "give-up estimate: (5 x 0.3) + 0.3 + 0.6 + 1.2");
    x = (struct exec_config){.kill_timeout = 5, .max_kill_count = 8};
    ok (escalate_give_up_after (&x) == 640, "give-up estimate: defaults 640");
    x.max_kill_timeout = 1;
    ok (escalate_give_up_after (&x) == 1, "give-up: max-kill-timeout itself");
    x = (struct exec_config){.kill_timeout = 0.1, .max_kill_count = 20};
    ok (escalate_give_up_after (&x) > 1000,
        "give-up estimate: intervals capped at 300 s, still > 1000");
    is_time (escalate_interval (&x, 0), 0.1, "interval: kill-timeout first");
    is_time (escalate_interval (&x, 3), 0.8, "interval: doubled per kill");
    is_time (escalate_interval (&x, 30), 300, "interval: at most 300 s");
}

static void test_time_limit (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    json_t *exc;
    size_t m;

    /* from R's expiration */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 4, T0 + 100, 0, OWNER);
    fb.ctx.now = T0 + 1;
    fake_spawn_all (&fb);
    is_time (job_next_deadline (fb.job), T0 + 100,
             "time limit: deadline is R's expiration");
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 99);
    is_str (fake_names (&fb, m), "", "time limit: nothing before it");
    fake_advance (&fb, T0 + 100);
    is_str (fake_names (&fb, m), expand ("exception,proc-signal*4"),
            "time limit: exception, then signals");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc), "timeout/0/resource allocation expired",
            "time limit: exception");
    is_str (fake_signals (&fb, 0), expand ("14/expired*4"),
            "time limit: SIGALRM first");
    is_time (job_next_deadline (fb.job), T0 + 105,
             "time limit: kill after exec's kill-timeout");
    fake_advance (&fb, T0 + 105);
    is_str (fake_signals (&fb, 4), expand ("9/kill*4"),
            "time limit: then the kill signal");
    check_replay (&fb, "time limit, killing");
    fake_exit_phase (&fb, PHASE_SHELL, SIGKILL);
    is_int (job_finish_status (fb.job), SIGKILL, "time limit: finish status");
    check_end (&fb, "time limit (R)");
    fake_fini (&fb);

    /* canceled after the time limit: the term signal follows SIGALRM, and
     * the kill signal a kill-timeout after it, as with job-exec */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 2, T0 + 100, 0, OWNER);
    fb.ctx.now = T0 + 1;
    fake_spawn_all (&fb);
    fake_advance (&fb, T0 + 100);
    is_str (fake_signals (&fb, 0), expand ("14/expired*2"),
            "time limit, then cancel: SIGALRM");
    fb.ctx.now = T0 + 102;
    ok (job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, &err) == 0,
        "time limit, then cancel: canceled");
    fake_walk (&fb);
    is_str (fake_signals (&fb, 2), expand ("15/terminate*2"),
            "time limit, then cancel: the term signal, not the kill signal");
    check_replay (&fb, "time limit, then cancel");
    is_time (job_next_deadline (fb.job), T0 + 107,
             "time limit, then cancel: kill a kill-timeout after the term");
    fb.ctx.now = T0 + 103;
    ok (job_raise (fb.job, &fb.ctx, "cancel", 0, "again", -1, fb.out, &err) ==
            0,
        "time limit, then cancel twice");
    fake_walk (&fb);
    is_str (fake_signals (&fb, 4), "", "a second cancel signals nothing more");
    fake_exit_phase (&fb, PHASE_SHELL, SIGTERM);
    is_int (job_finish_status (fb.job), SIGTERM,
            "time limit, then cancel: finish status 15");
    check_end (&fb, "time limit, then cancel");
    fake_fini (&fb);

    /* a prolog of 5 s on a 10 s job: the start is 50 % late, more than
     * exec.max-start-delay-percent (25), so the limit moves by 5 s */
    for (int pct = 25; pct <= 50; pct += 25) {
        char what[64];
        double limit = pct == 25 ? T0 + 15 : T0 + 10;
        snprintf (what, sizeof (what), "start delay, %d %%", pct);
        cfg_init (&jc, true, false);
        jc.exec.max_start_delay_percent = pct;
        fake_starttime = T0;
        start_job (&fb, &jc, 2, T0 + 10, 0, OWNER);
        fake_starttime = 0;
        fake_spawn_all (&fb);
        fb.ctx.now = T0 + 5;
        fake_exit_phase (&fb, PHASE_PROLOG, 0);
        fake_spawn_all (&fb);
        is_time (job_next_deadline (fb.job), limit, "%s: deadline", what);
        check_replay (&fb, what);
        m = fake_mark (&fb);
        fake_advance (&fb, limit - 0.5);
        is_str (fake_names (&fb, m), "", "%s: nothing before it", what);
        fake_advance (&fb, limit);
        is_str (fake_names (&fb, m), expand ("exception,proc-signal*2"),
                "%s: timeout at the deadline", what);
        fake_exit_phase (&fb, PHASE_SHELL, SIGALRM);
        check_end (&fb, what);
        fake_fini (&fb);
    }

    /* from job_set_expiration */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fake_spawn_all (&fb);
    is_time (job_next_deadline (fb.job), 0, "expiration: none in R");
    fb.ctx.now = T0 + 10;
    m = fake_mark (&fb);
    is_errno (job_set_expiration (fb.job, &fb.ctx, -1, fb.out, &err), EINVAL,
              "expiration: negative refused");
    like (err.text, "expiration: must be >= 0", "expiration: message");
    ok (job_set_expiration (fb.job, &fb.ctx, T0 + 50, fb.out, &err) == 0,
        "expiration: set to +50");
    fake_walk (&fb);
    is_str (fake_names (&fb, m), "expiration", "expiration: recorded");
    is_time (job_next_deadline (fb.job), T0 + 50, "expiration: deadline");
    check_replay (&fb, "expiration set");
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 50);
    is_str (fake_names (&fb, m), expand ("exception,proc-signal*4"),
            "expiration: timeout exception, signals");
    is_str (fake_signals (&fb, 0), expand ("14/expired*4"),
            "expiration: SIGALRM");
    fake_exit_phase (&fb, PHASE_SHELL, SIGALRM);
    is_int (job_finish_status (fb.job), SIGALRM, "expiration: finish status");
    check_end (&fb, "time limit (request)");
    fake_fini (&fb);

    /* a limit already past takes effect at once */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 10;
    m = fake_mark (&fb);
    job_set_expiration (fb.job, &fb.ctx, T0 + 5, fb.out, &err);
    fake_walk (&fb);
    is_str (fake_names (&fb, m), "expiration,exception,proc-signal",
            "expiration in the past: at once");
    fake_exit_phase (&fb, PHASE_SHELL, SIGALRM);
    check_end (&fb, "expiration in the past");
    fake_fini (&fb);
}

static void test_kill (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    size_t m;

    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    is_errno (job_kill (fb.job, &fb.ctx, SIGUSR1, fb.out, &err), EINVAL,
              "kill: refused in the prolog");
    ok (!job_shells_starting (fb.job), "kill: no shell starts in the prolog");
    like (err.text, "job 42 has no running shells", "kill: message");
    fake_exit_phase (&fb, PHASE_PROLOG, 0);
    for (uint32_t r = 0; r < 3; r++)
        spawn_rank (&fb, PHASE_SHELL, r);
    ok (job_shells_starting (fb.job), "kill: a shell is still starting");
    is_errno (job_kill (fb.job, &fb.ctx, 0, fb.out, &err), EINVAL,
              "kill: signal 0 refused");
    like (err.text, "signum: 0 is not a signal", "kill: message");
    m = fake_mark (&fb);
    ok (job_kill (fb.job, &fb.ctx, SIGUSR1, fb.out, &err) == 0,
        "kill: SIGUSR1 to the shells");
    fake_walk (&fb);
    is_str (fake_names (&fb, m), expand ("proc-signal*3"),
            "kill: only the 3 running shells (one is not spawned yet)");
    is_str (fake_signals (&fb, 0), expand ("10/request*3"),
            "kill: SIGUSR1, reason request");
    spawn_rank (&fb, PHASE_SHELL, 3);
    ok (!job_shells_starting (fb.job), "kill: every shell runs");
    is_time (job_next_deadline (fb.job), 0, "kill: no escalation");
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    is_errno (job_kill (fb.job, &fb.ctx, SIGUSR1, fb.out, &err), EINVAL,
              "kill: refused once the shells are done");
    drive_to_end (&fb);
    check_end (&fb, "kill");
    fake_fini (&fb);
}

/* Regression: a `kill` request to a shell that is being terminated must
 * not push its kill escalation back (else repeated requests keep it from
 * ever being killed). */
static void test_kill_keeps_escalation (void)
{
    struct fake fb;
    struct job_config jc;
    size_t m;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 10;
    job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, NULL);
    fake_walk (&fb);
    fb.ctx.now = T0 + 13;
    job_kill (fb.job, &fb.ctx, SIGUSR1, fb.out, NULL);
    fake_walk (&fb);
    is_time (job_next_deadline (fb.job), T0 + 15,
             "kill request keeps the kill due 5s after the term signal");
    if (job_next_deadline (fb.job) != T0 + 15)
        diag ("BUG: cancel at +10 (SIGTERM), kill request at +13: kill "
              "signal due at +%g instead of +15",
              job_next_deadline (fb.job) - T0);
    m = fake_mark (&fb);
    fake_advance (&fb, T0 + 15);
    is_str (fake_names (&fb, m), "proc-signal",
            "kill request: the kill signal still goes at +15");
    fake_advance (&fb, T0 + 18);
    fake_exit (&fb, PHASE_SHELL, 0, SIGKILL);
    check_end (&fb, "kill during termination");
    fake_fini (&fb);
}

/* ---- lost and failed processes ---- */

/* shell-leader (issue 37): each shell's end is a shell-end event a client
 * can act on; a shell killed by a signal cairn did not send ends the job
 * (the leader, shell rank 0) or is a node failure (a non-critical rank). */
static void test_shell_leader (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    json_t *e;
    size_t m;

    cfg_init (&jc, false, false);
    start_job_cairn (&fb, &jc, 4, 0, 0, OWNER,
                     json_pack ("{s:b}", "shell-leader", 1));
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_SHELL, 2, 0);
    is_str (fake_names (&fb, m), "proc-exit,shell-end",
            "shell-leader: a shell's exit, then its shell-end");
    e = fake_event (&fb, m, "shell-end", 0);
    is_int (ctx_int (e, "rank"), 2, "shell-end: rank");
    is_int (ctx_int (e, "shell-rank"), 2, "shell-end: shell rank");
    is_int (ctx_int (e, "status"), 0, "shell-end: status");
    is_str (ctx_str (e, "active"), "0-1,3", "shell-end: shells still active");
    ok (json_is_true (ctx_get (e, "critical")) &&
            json_is_false (ctx_get (e, "killed")),
        "shell-end: critical, not killed by cairn");
    check_replay (&fb, "shell-leader, one shell ended");

    /* a critical rank killed: the leader is told (by the client), the job
     * goes on */
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_SHELL, 1, SIGKILL);
    is_str (fake_names (&fb, m), "proc-exit,shell-end",
            "shell-leader: critical shell rank 1 killed: no exception");

    /* a non-critical rank killed: node-failure, severity 2 */
    struct idset *crit = idset_decode ("0", NULL);
    ok (job_set_critical (fb.job, &fb.ctx, crit, fb.out, &err) == 0,
        "shell-leader: critical-ranks 0");
    idset_destroy (crit);
    fake_walk (&fb);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_SHELL, 3, SIGSEGV);
    is_str (fake_names (&fb, m), "proc-exit,exception,shell-end",
            "shell-leader: non-critical shell killed: a notice");
    is_str (exc_str (fake_event (&fb, m, "exception", 0)),
            "node-failure/2/shell rank 3 (on node0): Segmentation fault",
            "shell-leader: node-failure note");
    is_int (job_state (fb.job), JOB_RUN, "shell-leader: the job runs on");

    /* the leader killed: fatal */
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_SHELL, 0, SIGKILL);
    is_str (fake_names (&fb, m),
            "proc-exit,exception,shell-end,finish,cleanup,release,clean",
            "shell-leader: leader killed: fatal, then finish");
    e = fake_event (&fb, m, "shell-end", 0);
    is_str (ctx_str (e, "active"), "", "shell-end: none left");
    is_str (exc_str (fake_event (&fb, m, "exception", 0)),
            "exec/0/shell rank 0 (on node0): Killed",
            "shell-leader: leader's fatal note");
    check_replay (&fb, "shell-leader, leader killed");
    check_end (&fb, "shell-leader");
    fake_fini (&fb);

    /* a lost shell's shell-end says so; a shell cairn killed is no
     * failure */
    cfg_init (&jc, false, false);
    start_job_cairn (&fb, &jc, 2, 0, 0, OWNER,
                     json_pack ("{s:b}", "shell-leader", 1));
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_end (&fb, PHASE_SHELL, 1, FAKE_LOST, 0, "node rebooted");
    is_str (fake_names (&fb, m),
            "proc-lost,drain,exception,shell-end,proc-signal",
            "shell-leader: a lost shell's shell-end after its exception");
    e = fake_event (&fb, m, "shell-end", 0);
    ok (json_is_true (ctx_get (e, "lost")) && !ctx_get (e, "status"),
        "shell-end: lost, no status");
    is_str (ctx_str (e, "note"), "node rebooted", "shell-end: lost note");
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_SHELL, 0, SIGKILL);
    e = fake_event (&fb, m, "shell-end", 0);
    ok (json_is_true (ctx_get (e, "killed")), "shell-end: killed by cairn");
    is_int (fake_count (&fb, m, "exception"), 0,
            "shell-leader: a shell cairn killed raises nothing");
    check_end (&fb, "shell-leader, lost");
    fake_fini (&fb);

    /* without shell-leader: no shell-end */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_SHELL, 0, SIGKILL);
    is_str (fake_names (&fb, m), "proc-exit",
            "no shell-leader: no shell-end, no exception");
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    fake_fini (&fb);
}

static void test_lost_shell (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    struct idset *crit = idset_decode ("0-1", NULL);
    struct idset *bad = idset_decode ("3-7", NULL);
    json_t *exc;
    size_t m;

    /* on a critical rank (all are, by default): fatal */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fb.ctx.now = T0 + 1;
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 2;
    m = fake_mark (&fb);
    fake_end (&fb, PHASE_SHELL, 2, FAKE_LOST, 0, "node rebooted");
    is_str (fake_names (&fb, m),
            expand ("proc-lost,drain,exception,"
                    "proc-signal*3"),
            "lost critical shell: drain, fatal, terminate the rest");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc), "exec/0/shell on rank 2: node rebooted",
            "lost critical shell: exception");
    is_str (ctx_str (fake_event (&fb, m, "drain", 0), "reason"),
            "shell for job ƒj: node rebooted", "lost critical shell: reason");
    fake_exit_phase (&fb, PHASE_SHELL, SIGTERM);
    json_t *fin = fake_event (&fb, 0, "finish", 0);
    is_int (ctx_int (fin, "status"), SIGTERM, "lost critical shell: status");
    is_str (ctx_str (fin, "lost-ranks"), "2", "lost critical shell: lost");
    is_str (set_str (job_drained (fb.job)), "2", "lost critical shell: drain");
    check_end (&fb, "lost critical shell");
    fake_fini (&fb);

    /* on a non-critical rank: a notice, the others go on */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    is_errno (job_set_critical (fb.job, &fb.ctx, bad, fb.out, &err), EINVAL,
              "critical-ranks: ranks outside the job refused");
    like (err.text, "ranks: not a subset of the job's ranks",
          "critical-ranks: message");
    struct idset *none = idset_create ();
    ok (job_set_critical (fb.job, &fb.ctx, none, fb.out, &err) == 0,
        "critical-ranks: none");
    idset_destroy (none);
    check_replay (&fb, "critical-ranks none");
    ok (job_set_critical (fb.job, &fb.ctx, crit, fb.out, &err) == 0,
        "critical-ranks: 0-1");
    fake_walk (&fb);
    is_str (fake_names (&fb, m), "critical-ranks,critical-ranks",
            "critical-ranks: recorded");
    m = fake_mark (&fb);
    fake_end (&fb, PHASE_SHELL, 2, FAKE_LOST, 0, "node rebooted");
    is_str (fake_names (&fb, m), "proc-lost,drain,exception",
            "lost non-critical shell: drain and a notice only");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc), "node-failure/2/shell on rank 2: node rebooted",
            "lost non-critical shell: exception");
    is_int (job_state (fb.job), JOB_RUN, "lost non-critical shell: runs on");
    check_replay (&fb, "lost non-critical shell");
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    fin = fake_event (&fb, 0, "finish", 0);
    is_int (ctx_int (fin, "status"), 0, "lost non-critical shell: status 0");
    is_str (ctx_str (fin, "lost-ranks"), "2", "lost non-critical: lost");
    check_end (&fb, "lost non-critical shell");
    fake_fini (&fb);
    idset_destroy (crit);
    idset_destroy (bad);

    /* a shell that could not be started: fatal, nothing drained */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    for (uint32_t r = 1; r < 4; r++)
        spawn_rank (&fb, PHASE_SHELL, r);
    m = fake_mark (&fb);
    fake_end (&fb, PHASE_SHELL, 0, FAKE_FAIL, 0, "exec: No such file");
    is_str (fake_names (&fb, m), expand ("proc-fail,exception,proc-signal*3"),
            "shell spawn failure: fatal, terminate the rest");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc),
            "exec/0/shell on rank 0: failed to start: exec: No such file",
            "shell spawn failure: exception");
    is_int (job_proc_at (fb.job, 0)->error, 1, "shell spawn failure: error");
    fake_exit_phase (&fb, PHASE_SHELL, SIGTERM);
    is_str (set_str (job_drained (fb.job)), "",
            "shell spawn failure: no drain");
    is_str (ctx_str (fake_event (&fb, 0, "finish", 0), "lost-ranks"), "0",
            "shell spawn failure: finish names rank 0");
    check_end (&fb, "shell spawn failure");
    fake_fini (&fb);
}

/* Intents whose spawn was never recorded (cairnd crashed in between): one
 * is found to have exited, one is lost. A lost prolog is fatal. */
/* A job none of whose shells has a known status must not finish as a
 * success: it finished with status 0 ("exit 0") when its only shell was
 * lost (issue 36). */
static void test_lost_every_shell (void)
{
    struct fake fb;
    struct job_config jc;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fake_end (&fb, PHASE_SHELL, 0, FAKE_LOST, 0, "started, outcome lost");
    json_t *fin = fake_event (&fb, 0, "finish", 0);
    is_int (ctx_int (fin, "status"), JOB_STATUS_UNKNOWN,
            "every shell lost: finish status 256 (exit 1), never 0");
    is_str (ctx_str (fin, "lost-ranks"), "0", "every shell lost: lost-ranks");
    check_end (&fb, "every shell lost");
    fake_fini (&fb);
}

/* A node's report of a process given up on (issue 33): recorded as
 * proc-late once, also after the job's clean; a report of an end already
 * known is a repeat, not late. */
static void test_late_report (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *rep = json_pack ("{s:s s:s s:i s:s}", "execid", "", "state",
                             "ended", "status", 9, "host", "node1");

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fake_end (&fb, PHASE_SHELL, 1, FAKE_LOST, 0, "node node1 unreachable");
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    is_int (job_state (fb.job), JOB_DONE, "late: the job is done");
    char lost[EXECID_LEN + 1], ended[EXECID_LEN + 1];
    snprintf (lost, sizeof (lost), "%s",
              fake_find (&fb, PHASE_SHELL, 1)->execid);
    snprintf (ended, sizeof (ended), "%s",
              fake_find (&fb, PHASE_SHELL, 0)->execid);
    size_t m = fake_mark (&fb);
    ok (job_proc_late (fb.job, &fb.ctx, lost, rep, fb.out) == 0,
        "late: a lost shell's report is recorded after the clean");
    is_str (fake_names (&fb, m), "proc-late", "late: proc-late, nothing else");
    json_t *late = fake_event (&fb, m, "proc-late", 0);
    ok (late && !strcmp (ctx_str (late, "execid"), lost) &&
            ctx_int (late, "status") == 9 &&
            !strcmp (ctx_str (late, "host"), "node1"),
        "late: its execid, status and host");
    is_int (job_state (fb.job), JOB_DONE, "late: the job stays done");
    is_errno (job_proc_late (fb.job, &fb.ctx, lost, rep, fb.out), EALREADY,
              "late: a second report of it is not recorded again");
    is_errno (job_proc_late (fb.job, &fb.ctx, ended, rep, fb.out), EINVAL,
              "late: a repeat of a known end is not late");
    is_errno (job_proc_late (fb.job, &fb.ctx,
                             "00000000-0000-4000-8000-999999999999", rep,
                             fb.out),
              ENOENT, "late: an unknown process");
    is_int ((int)(json_array_size (fb.out) - m), 1,
            "late: the refusals emit nothing");
    check_replay (&fb, "late after clean");
    fake_fini (&fb);
    json_decref (rep);
}

static void test_lost_prolog (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *exc;
    size_t m;

    cfg_init (&jc, true, false);
    start_job (&fb, &jc, 4, 0, 0, OWNER);
    fb.ctx.now = T0 + 1;
    spawn_rank (&fb, PHASE_PROLOG, 0);
    spawn_rank (&fb, PHASE_PROLOG, 2);
    check_replay (&fb, "prolog, two intents unspawned");
    fb.ctx.now = T0 + 2;
    m = fake_mark (&fb);
    fake_end (&fb, PHASE_PROLOG, 1, FAKE_LOST, 0, "started, outcome lost");
    is_str (fake_names (&fb, m), "proc-lost,drain", "lost prolog: drained");
    fake_exit (&fb, PHASE_PROLOG, 3, 0);
    is_int (job_proc_at (fb.job, 3)->state, PROC_DONE,
            "lost prolog: an unspawned intent may exit");
    fake_exit (&fb, PHASE_PROLOG, 0, 0);
    m = fake_mark (&fb);
    fake_exit (&fb, PHASE_PROLOG, 2, 0);
    is_str (fake_names (&fb, m),
            "proc-exit,exception,prolog-finish,cleanup,release,clean",
            "lost prolog: fatal once the prolog is done");
    exc = fake_event (&fb, m, "exception", 0);
    is_str (exc_str (exc),
            "prolog/0/prolog failed on rank 1: started, outcome lost",
            "lost prolog: exception");
    is_int (ctx_int (fake_event (&fb, m, "prolog-finish", 0), "status"), -1,
            "lost prolog: prolog-finish status unknown (-1)");
    is_str (set_str (job_drained (fb.job)), "1", "lost prolog: rank 1");
    check_end (&fb, "lost prolog");
    fake_fini (&fb);
}

static void test_multi_user (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *exc;

    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 4, 0, 0, OWNER + 1);
    is_str (fake_names (&fb, 0), "accept,exception,cleanup,release,clean",
            "multi-user: refused and ended at once");
    exc = fake_event (&fb, 0, "exception", 0);
    is_str (exc_str (exc),
            "exec/0/this cairnd runs as uid 1000, not root: it runs jobs of "
            "uid 1000 only, not 1001",
            "multi-user: exception");
    ok (json_is_false (ctx_get (fake_event (&fb, 0, "cleanup", 0), "epilog")),
        "multi-user: no epilog");
    is_int (job_userid (fb.job), OWNER + 1, "multi-user: userid kept");
    ok (!job_started (fb.job), "multi-user: never started");
    is_str (responses (&fb), "exception,release", "multi-user: responses");
    check_end (&fb, "multi-user");
    fake_fini (&fb);
}

/* Issue 30: the accept records who submitted the job. A user's job says
 * "privileged": false, first in its context (quota.c reads only
 * the start of the line); a privileged client's job says nothing, as every
 * job of a journal before the field did, and reads back as privileged. */
static void test_submitter (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    char why[256] = "";
    char *av[] = {"/bin/app", NULL};

    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    json_t *ctx = fake_event (&fb, 0, "accept", 0);
    ok (!json_object_get (json_object_get (ctx, "context"), "privileged"),
        "submitter: a privileged client's accept has no privileged field");
    ok (job_privileged (fb.job), "submitter: privileged by default");
    struct job *re = replay (&fb, json_array_size (fb.out), why, sizeof (why));
    ok (re && job_privileged (re),
        "submitter: an accept without the field replays as privileged %s", why);
    job_destroy (re);
    fake_fini (&fb);

    json_t *R = rv1_create (1, 2, "node0", 0);
    json_t *js = jobspec_create (av, 1, "/tmp/work", NULL, 0, 0);
    cfg_init (&jc, true, true);
    if (fake_init (&fb, JOBID, T0, OWNER) < 0 || !R || !js)
        BAIL_OUT ("cannot set up job: %s", strerror (errno));
    job_set_unprivileged (fb.job);
    ok (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err) == 0,
        "submitter: a user's job is accepted");
    ok (!job_privileged (fb.job), "submitter: a user's job is unprivileged");
    char *line = eventlog_entry_encode (json_array_get (fb.out, 0));
    like (line,
          "\"name\":\"accept\",\"context\":{\"privileged\":false,"
          "\"userid\":1000,",
          "submitter: privileged false comes first, then userid");
    free (line);
    re = replay (&fb, json_array_size (fb.out), why, sizeof (why));
    ok (re && !job_privileged (re), "submitter: it replays as unprivileged %s",
        why);
    job_destroy (re);
    job_set_unprivileged (fb.job); /* too late: changes nothing */
    json_decref (R);
    json_decref (js);
    job_config_free (&jc);
    fake_fini (&fb);
}

/* A Flux system instance's job of another user (trust.h T1): its shells
 * run as "IMP exec SHELL...", started as the instance owner's uid; the
 * prolog and epilog are unchanged; the accept records the IMP, and a
 * replay runs the same. */
static void test_imp (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err = {""};
    char why[256] = "";
    char *av[] = {"/bin/app", "arg", NULL};

    json_t *R = rv1_create (2, 2, "node0", 0);
    json_t *js = jobspec_create (av, 2, "/tmp/work", NULL, 0, 0);
    cfg_init (&jc, true, true);
    if (fake_init (&fb, JOBID, T0, OWNER) < 0 || !R || !js)
        BAIL_OUT ("cannot set up job: %s", strerror (errno));
    fb.ctx.multiuser = true; /* a root cairnd */
    ok (job_set_imp (fb.job, "/usr/libexec/flux/flux-imp", 999) == 0,
        "imp: set before the accept");
    ok (job_accept (fb.job, &fb.ctx, OWNER + 1, R, js, &jc, fb.out, &err) == 0,
        "imp: the job is accepted %s", err.text);
    json_t *imp = ctx_get (fake_event (&fb, 0, "accept", 0), "imp");
    ok (imp && json_is_string (json_object_get (imp, "path")) &&
            !strcmp (json_string_value (json_object_get (imp, "path")),
                     "/usr/libexec/flux/flux-imp") &&
            json_integer_value (json_object_get (imp, "uid")) == 999,
        "imp: the accept records its path and the uid it runs as");
    errno = 0;
    ok (job_set_imp (fb.job, "/x", 1) < 0 && errno == EEXIST,
        "imp: too late after the accept (EEXIST)");
    is_int (job_userid (fb.job), OWNER + 1, "imp: the job's user is kept");
    is_int (job_shell_uid (fb.job), 999, "imp: shells start as the owner");
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_PROLOG, 0, "argv"), "/etc/prolog",
            "imp: the prolog is the site's, no IMP");
    fake_exit_phase (&fb, PHASE_PROLOG, 0);
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "argv"),
            "/usr/libexec/flux/flux-imp exec /bin/app arg",
            "imp: the shell runs as IMP exec SHELL ARGS");
    struct job *re = replay (&fb, json_array_size (fb.out), why, sizeof (why));
    ok (re && job_shell_uid (re) == 999 && job_userid (re) == OWNER + 1,
        "imp: a replay starts its shells the same way %s", why);
    job_destroy (re);
    json_decref (R);
    json_decref (js);
    job_config_free (&jc);
    fake_fini (&fb);

    /* without it: no field, the shells run as the job's user */
    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 1, 0, 0, OWNER + 1);
    ok (!ctx_get (fake_event (&fb, 0, "accept", 0), "imp"),
        "imp: none, no field in the accept");
    is_int (job_shell_uid (fb.job), OWNER + 1,
            "imp: none, shells start as the job's user");
    job_config_free (&jc);
    fake_fini (&fb);
}

static bool away_flag;
static bool away (uint64_t id, void *arg)
{
    return away_flag;
}

/* A hold-on-shrink job whose prolog ends while its client is away (a Flux
 * broker restart) is held with every rank until the client's resume:
 * its shells need the client's brokers and namespace. */
static void test_hold_client_away (void)
{
    for (int is_away = 0; is_away < 2; is_away++) {
        const char *name = is_away ? "client away" : "client here";
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        size_t m;

        cfg_init (&jc, true, true);
        start_job_cairn (&fb, &jc, 4, 0, 0, OWNER,
                         json_pack ("{s:b}", "hold-on-shrink", 1));
        fb.ctx.client_away = away;
        away_flag = is_away;
        fb.ctx.now = T0 + 1;
        fake_spawn_all (&fb);
        m = fake_mark (&fb);
        fake_exit_phase (&fb, PHASE_PROLOG, 0);
        fb.ctx.client_away = NULL;
        if (!is_away) {
            is_str (fake_names (&fb, m),
                    expand ("proc-exit*4,prolog-finish,start,proc-intent*4"),
                    "%s: the shells start at once", name);
            fake_fini (&fb);
            continue;
        }
        is_str (fake_names (&fb, m), expand ("proc-exit*4,prolog-finish,hold"),
                "%s: held at the prolog's end, no shell", name);
        is_str (ctx_str (fake_event (&fb, m, "hold", 0), "ranks"), "0-3",
                "%s: every rank held", name);
        ok (!job_started (fb.job), "%s: not started", name);
        check_replay (&fb, name);
        m = fake_mark (&fb);
        ok (job_resume (fb.job, &fb.ctx, false, fb.out, &err) == 0,
            "%s: the client is back and resumes", name);
        fake_walk (&fb);
        is_str (fake_names (&fb, m), expand ("resume,start,proc-intent*4"),
                "%s: then every shell starts", name);
        fake_spawn_all (&fb);
        fake_exit_phase (&fb, PHASE_SHELL, 0);
        drive_to_end (&fb);
        is_int (job_finish_status (fb.job), 0, "%s: finish 0", name);
        check_end (&fb, name);
        fake_fini (&fb);
    }
}

static json_t *entry_load (const char *line);

/* hold-start: the client's word (a ready resume) in the prolog lets the
 * shells start at its end; without it the prolog's end holds every rank
 * for the word alone (wait "ready"), and without a prolog the job is held
 * at once. A tolerated failure with hold-on-shrink holds for the shrink
 * whatever was said: that hold needs the plain resume, and the word too,
 * in either order (CI of this change: the word after the hold started
 * shells on an R not yet shrunk). */
static void test_hold_start (void)
{
    static const char *const names[] = {"word first", "prolog first",
                                        "no prolog", "word, then tolerated",
                                        "tolerated, then word"};
    for (int c = 0; c < 5; c++) {
        const char *name = names[c];
        bool tolerated = c >= 3;
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        size_t m;

        cfg_init (&jc, c != 2, true);
        cfg_tolerate (&jc, 7);
        start_job_cairn (
            &fb, &jc, 3, 0, tolerated, OWNER,
            json_pack ("{s:b s:b}", "hold-start", 1, "hold-on-shrink", 1));
        fb.ctx.now = T0 + 1;
        if (c != 2)
            fake_spawn_all (&fb);
        if (c == 0 || c == 3) {
            m = fake_mark (&fb);
            ok (job_resume (fb.job, &fb.ctx, true, fb.out, &err) == 0,
                "%s: the word in the prolog", name);
            is_str (fake_names (&fb, m), "resume",
                    "%s: journaled, nothing else", name);
            ok (json_is_true (
                    ctx_get (fake_event (&fb, m, "resume", 0), "ready")),
                "%s: a ready resume", name);
            check_replay (&fb, name);
            m = fake_mark (&fb);
            ok (job_resume (fb.job, &fb.ctx, true, fb.out, &err) == 0 &&
                    json_array_size (fb.out) == m,
                "%s: said twice, once in the journal", name);
        }
        m = fake_mark (&fb);
        if (c != 2) {
            fake_exit (&fb, PHASE_PROLOG, 0, 0);
            fake_exit (&fb, PHASE_PROLOG, 1, 0);
            fake_exit (&fb, PHASE_PROLOG, 2, tolerated ? 7 << 8 : 0);
        }
        if (c == 0) {
            is_str (fake_names (&fb, m),
                    expand ("proc-exit*3,prolog-finish,start,proc-intent*3"),
                    "%s: the shells start at the prolog's end", name);
            goto end;
        }
        json_t *hold = fake_event (&fb, c == 2 ? 0 : m, "hold", 0);
        is_str (ctx_str (hold, "ranks"), tolerated ? "0-1" : "0-2",
                "%s: held: %s", name,
                tolerated ? "the ranks that will run" : "every rank");
        is_str (ctx_str (hold, "wait"), tolerated ? "(none)" : "ready",
                "%s: held %s", name,
                tolerated ? "for the shrink" : "for the word only");
        ok (!job_started (fb.job), "%s: not started", name);
        check_replay (&fb, name);
        if (c == 1) {
            /* a journal cairnd did not write: a hold waiting for else */
            size_t h = 0;
            char why[256];
            while (strcmp (fake_event_name (json_array_get (fb.out, h)),
                           "hold") != 0)
                h++;
            struct job *r = replay (&fb, h, why, sizeof (why));
            json_t *e = entry_load ("{\"timestamp\":1700000002.0,"
                                    "\"name\":\"hold\",\"context\":"
                                    "{\"ranks\":\"0-2\",\"wait\":\"later\"}}");
            is_errno (job_apply (r, e, &err), EINVAL, "%s: a hold's wait: %s",
                      name, "not ready");
            like (err.text, "hold: wait: \"later\" is not \"ready\"",
                  "%s: message", name);
            json_decref (e);
            job_destroy (r);
        }
        if (c == 1 || c == 4) {
            /* the other gate first: nothing starts yet */
            m = fake_mark (&fb);
            ok (job_resume (fb.job, &fb.ctx, c == 4, fb.out, &err) == 0,
                "%s: %s", name, c == 4 ? "the word" : "a plain resume");
            fake_walk (&fb);
            is_str (fake_names (&fb, m), "resume",
                    "%s: journaled, no shell yet", name);
            ok (!job_started (fb.job), "%s: still held", name);
            check_replay (&fb, name);
        }
        m = fake_mark (&fb);
        ok (job_resume (fb.job, &fb.ctx, c == 1 || c == 2, fb.out, &err) == 0,
            "%s: %s", name, c == 1 || c == 2 ? "the word" : "the resume");
        fake_walk (&fb);
        is_str (fake_names (&fb, m),
                tolerated ? expand ("resume,start,proc-intent*2")
                          : expand ("resume,start,proc-intent*3"),
                "%s: then the shells start", name);
    end:
        drive_to_end (&fb);
        is_int (job_finish_status (fb.job), 0, "%s: finish 0", name);
        check_end (&fb, name);
        is_errno (job_resume (fb.job, &fb.ctx, true, fb.out, &err), EALREADY,
                  "%s: the word after clean", name);
        fake_fini (&fb);
    }

    /* too late, or not needed: the word changes nothing */
    for (int hs = 0; hs < 2; hs++) {
        const char *name = hs ? "hold-start, failed prolog" : "no hold-start";
        struct fake fb;
        struct job_config jc;
        struct cairn_error err;
        cfg_init (&jc, true, true);
        start_job_cairn (&fb, &jc, 2, 0, 0, OWNER,
                         json_pack ("{s:b}", "hold-start", hs));
        fake_spawn_all (&fb);
        if (hs) {
            fake_exit (&fb, PHASE_PROLOG, 0, 0);
            fake_exit (&fb, PHASE_PROLOG, 1, 1 << 8);
        }
        size_t m = fake_mark (&fb);
        ok (job_resume (fb.job, &fb.ctx, true, fb.out, &err) == 0 &&
                json_array_size (fb.out) == m,
            "%s: the word changes nothing", name);
        if (!hs) { /* nor may a journal say it for such a job */
            char why[256];
            struct job *r = replay (&fb, m, why, sizeof (why));
            json_t *e = entry_load ("{\"timestamp\":1700000002.0,"
                                    "\"name\":\"resume\",\"context\":"
                                    "{\"ready\":true}}");
            is_errno (job_apply (r, e, &err), EINVAL,
                      "%s: a journaled word refused", name);
            like (err.text, "resume: ready: the job is not hold-start",
                  "%s: message", name);
            json_decref (e);
            job_destroy (r);
        }
        drive_to_end (&fb);
        ok (job_started (fb.job) == !hs, "%s: %s", name,
            hs ? "never started" : "started");
        check_end (&fb, name);
        fake_fini (&fb);
    }
}

/* attributes.system.cairn.config: a resource manager's per-job settings
 * over cairnd's, snapshotted in accept; a user may not set them. */
static void test_job_config_override (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    char why[256] = "";

    cfg_init (&jc, false, false);
    start_job_cairn (&fb, &jc, 2, 0, 0, OWNER,
                     json_pack ("{s:{s:{s:s s:s}}}", "config", "exec",
                                "kill-timeout", "2s", "term-signal", "USR1"));
    json_t *cfg = ctx_get (fake_event (&fb, 0, "accept", 0), "config");
    json_t *ex = json_object_get (cfg, "exec");
    ok (json_real_value (json_object_get (ex, "kill-timeout")) == 2.,
        "config override: kill-timeout 2s in the snapshot");
    is_str (json_string_value (json_object_get (ex, "term-signal")), "SIGUSR1",
            "config override: term-signal in the snapshot");
    is_int (json_integer_value (json_object_get (ex, "max-kill-count")), 8,
            "config override: the rest is cairnd's");
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 1;
    ok (job_raise (fb.job, &fb.ctx, "cancel", 0, "", -1, fb.out, &err) == 0,
        "config override: canceled");
    fake_walk (&fb);
    is_str (fake_signals (&fb, 0), expand ("10/terminate*2"),
            "config override: the job's term signal");
    is_time (job_next_deadline (fb.job), T0 + 3,
             "config override: the job's kill-timeout");
    struct job *re = replay (&fb, json_array_size (fb.out), why, sizeof (why));
    ok (re && job_next_deadline (re) == T0 + 3,
        "config override: replayed with the job's config %s", why);
    job_destroy (re);
    fake_fini (&fb);

    static const struct {
        const char *name, *over, *text;
    } bad[] = {
        {"bad value", "{\"exec\": {\"kill-timeout\": 0}}",
         "jobspec: attributes.system.cairn.config.exec.kill-timeout: must be "
         "a finite duration > 0"},
        {"unknown key", "{\"exec\": {\"nope\": 1}}",
         "jobspec: unknown key 'attributes.system.cairn.config.exec.nope'"},
        {"infinite give-up",
         "{\"exec\": {\"kill-timeout\": \"10s\", "
         "\"max-kill-timeout\": \"inf\"}}",
         "jobspec: attributes.system.cairn.config.exec.max-kill-timeout: "
         "must be a finite duration (0 = none)"},
        {"not an object", "[]",
         "jobspec: attributes.system.cairn.config: not an object"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        cfg_init (&jc, false, false);
        json_t *over = json_loads (bad[i].over, 0, NULL);
        ok (fake_accept (&fb, JOBID, T0, OWNER, &jc, 2, 0, 0, OWNER,
                         json_pack ("{s:o}", "config", over), &err) < 0 &&
                errno == EINVAL,
            "config override, %s: EINVAL", bad[i].name);
        is_str (err.text, bad[i].text, "config override, %s: message",
                bad[i].name);
        is_int (json_array_size (fb.out), 0,
                "config override, %s: nothing emitted", bad[i].name);
        fake_fini (&fb);
    }

    /* a user's job may not carry one */
    char *av[] = {"/bin/app", NULL};
    json_t *R = rv1_create (1, 2, "node0", 0);
    json_t *js = jobspec_create (av, 1, "/tmp/work", NULL, 0, 0);
    json_object_set_new (
        json_object_get (json_object_get (js, "attributes"), "system"), "cairn",
        json_pack ("{s:{s:{s:i}}}", "config", "exec", "max-kill-count", 100));
    cfg_init (&jc, false, false);
    if (fake_init (&fb, JOBID, T0, OWNER) < 0 || !R || !js)
        BAIL_OUT ("cannot set up job: %s", strerror (errno));
    job_set_unprivileged (fb.job);
    is_errno (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err),
              EPERM, "config override by a user: EPERM");
    like (err.text, "only a resource manager",
          "config override by a user: "
          "message");
    is_int (json_array_size (fb.out), 0,
            "config override by a user: nothing emitted");
    json_decref (R);
    json_decref (js);
    job_config_free (&jc);
    fake_fini (&fb);
}

/* ---- malformed requests and journals ---- */

static void test_accept_errors (void)
{
    static const struct {
        const char *name;
        const char *R;           /* NULL: a valid one */
        const char *jobspec_del; /* key deleted from a valid jobspec */
        bool jobspec_string;
        const char *msg;
    } cases[] = {
        // clang-format off
        {"R without R_lite",
         "{\"version\":1,\"execution\":{\"nodelist\":[\"n0\"]}}",
         NULL, false, "R: execution.R_lite: missing"},
        {"R version 2", "{\"version\":2,\"execution\":{}}",
         NULL, false, "R: version: must be 1"},
        {"R not an object", "[]", NULL, false, "R: not an object"},
        {"jobspec without tasks", NULL, "tasks", false,
         "jobspec: tasks: missing"},
        {"jobspec not an object", NULL, NULL, true,
         "jobspec: not an object"},
        // clang-format on
    };
    char *av[] = {"/bin/app", NULL};
    struct job_config jc;
    struct cairn_error err;
    struct fake fb;

    job_config_init (&jc);
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        json_t *R = cases[i].R ? json_loads (cases[i].R, 0, NULL)
                               : rv1_create (2, 1, "node0", 0);
        json_t *js = cases[i].jobspec_string
                         ? json_string ("nope")
                         : jobspec_create (av, 2, NULL, NULL, 0, 0);
        if (cases[i].jobspec_del)
            json_object_del (js, cases[i].jobspec_del);
        fake_init (&fb, JOBID, T0, OWNER);
        err.text[0] = '\0';
        is_errno (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err),
                  EINVAL, "accept: %s refused", cases[i].name);
        like (err.text, cases[i].msg, "accept: %s: message", cases[i].name);
        ok (json_array_size (fb.out) == 0 && job_nevents (fb.job) == 0,
            "accept: %s: nothing emitted", cases[i].name);
        fake_fini (&fb);
        json_decref (R);
        json_decref (js);
    }

    /* a second accept */
    json_t *R = rv1_create (2, 1, "node0", 0);
    json_t *js = jobspec_create (av, 2, NULL, NULL, 0, 0);
    fake_init (&fb, JOBID, T0, OWNER);
    ok (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err) == 0,
        "accept: valid request");
    size_t n = fake_mark (&fb);
    is_errno (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err),
              EEXIST, "accept: twice refused");
    like (err.text, "job 42 already exists", "accept: twice: message");
    is_int (fake_mark (&fb), n, "accept: twice: nothing emitted");
    fake_fini (&fb);
    json_decref (R);
    json_decref (js);
    job_config_free (&jc);
}

static void test_output (void)
{
    struct fake fb;
    struct job_config jc;
    json_t *log;
    size_t m;

    cfg_init (&jc, false, false);
    jc.output_max_bytes = 100;
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fake_spawn_all (&fb);
    is_int (job_output_room (fb.job, PHASE_SHELL), 100,
            "output: room is the cap");
    m = fake_mark (&fb);
    job_proc_exited (
        fb.job, &fb.ctx, fake_find (&fb, PHASE_SHELL, 0)->execid,
        &(struct job_proc_end){.outdata = "hello\n", .errdata = "oops\n"},
        fb.out);
    fake_walk (&fb);
    is_str (fake_names (&fb, m), "log,log,proc-exit",
            "output: one log per stream, before the exit");
    log = fake_event (&fb, m, "log", 0);
    ok (strcmp (ctx_str (log, "stream"), "stdout") == 0 &&
            strcmp (ctx_str (log, "phase"), "shell") == 0 &&
            ctx_int (log, "rank") == 0 &&
            strcmp (ctx_str (log, "data"), "hello\n") == 0,
        "output: stdout log context");
    is_str (ctx_str (fake_event (&fb, m, "log", 1), "stream"), "stderr",
            "output: stderr log");
    is_int (job_output_room (fb.job, PHASE_SHELL), 89,
            "output: room shrinks by 11");
    check_replay (&fb, "output");

    m = fake_mark (&fb);
    job_proc_exited (fb.job, &fb.ctx, fake_find (&fb, PHASE_SHELL, 1)->execid,
                     &(struct job_proc_end){.outdata = "x",
                                            .out_trunc = true,
                                            .errdata = "y",
                                            .err_trunc = true},
                     fb.out);
    fake_walk (&fb);
    is_str (fake_names (&fb, m),
            "log,log,log,proc-exit,finish,cleanup,release,clean",
            "output: truncation noted once, though both streams were");
    log = fake_event (&fb, m, "log", 1);
    ok (strcmp (ctx_str (log, "stream"), "cairn") == 0 &&
            json_is_true (ctx_get (log, "truncated")),
        "output: the notice is cairn's, marked truncated");
    like (ctx_str (log, "data"), "output truncated", "output: notice text");
    is_str (ctx_str (fake_event (&fb, m, "log", 2), "data"), "y",
            "output: stderr data still logged");
    ok (job_output_room (fb.job, PHASE_SHELL) < 87,
        "output: room shrinks further");
    check_end (&fb, "output");
    fake_fini (&fb);

    /* a chatty job does not push out the site's epilog output: the cap is
     * per phase, each with its own notice */
    cfg_init (&jc, false, true);
    jc.output_max_bytes = 10;
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    job_proc_exited (
        fb.job, &fb.ctx, fake_find (&fb, PHASE_SHELL, 0)->execid,
        &(struct job_proc_end){.outdata = "0123456789", .out_trunc = true},
        fb.out);
    fake_walk (&fb);
    is_int (job_output_room (fb.job, PHASE_SHELL), 0,
            "output per phase: the shells' room is used up");
    is_int (job_output_room (fb.job, PHASE_EPILOG), 10,
            "output per phase: the epilog's is whole");
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    job_proc_exited (fb.job, &fb.ctx,
                     fake_find (&fb, PHASE_EPILOG, 0)->execid,
                     &(struct job_proc_end){.outdata = "node ok"}, fb.out);
    fake_walk (&fb);
    log = fake_event (&fb, m, "log", 0);
    ok (log && !strcmp (ctx_str (log, "phase"), "epilog") &&
            !strcmp (ctx_str (log, "data"), "node ok"),
        "output per phase: the epilog's output is journaled");
    check_end (&fb, "output per phase");
    fake_fini (&fb);
}

/* attributes.system.cairn.rank-environment: each rank's shell talks to
 * its own broker (FLUX_URI), so each gets its own variables, over the
 * jobspec's and under cairn's. */
static void test_rank_env (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    char *av[] = {"/bin/app", NULL};
    json_t *env = json_pack ("{s:s s:s}", "APPVAR", "1", "FLUX_URI", "job");
    json_t *R = rv1_create (3, 1, "node0", 0);
    json_t *js = jobspec_create (av, 3, NULL, env, 0, 0);
    json_t *system =
        json_object_get (json_object_get (js, "attributes"), "system");

    if (!R || !js || !system ||
        json_object_set_new (system, "cairn",
                             json_pack ("{s:{s:{s:s s:s s:s} s:{s:s}}}",
                                        "rank-environment", "1", "FLUX_URI",
                                        "local:///run/r1", "APPVAR", "rank1",
                                        "CAIRN_RANK", "bogus", "2", "FLUX_URI",
                                        "local:///run/r2")) < 0)
        BAIL_OUT ("cannot build the jobspec");
    cfg_init (&jc, true, true);
    if (fake_init (&fb, JOBID, T0, OWNER) < 0)
        BAIL_OUT ("out of memory");
    ok (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err) == 0,
        "rank-env: accepted");
    job_config_free (&jc);
    fake_walk (&fb);
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_PROLOG, 1, "FLUX_URI"), "(none)",
            "rank-env: not the prolog's");
    fake_exit_phase (&fb, PHASE_PROLOG, 0);
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_SHELL, 0, "FLUX_URI"), "job",
            "rank-env: rank 0 has no entry: the jobspec's value");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "FLUX_URI"), "local:///run/r1",
            "rank-env: rank 1's own value");
    is_str (proc_cmd (&fb, PHASE_SHELL, 2, "FLUX_URI"), "local:///run/r2",
            "rank-env: rank 2's own value");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "APPVAR"), "rank1",
            "rank-env: overrides the jobspec's environment");
    is_str (proc_cmd (&fb, PHASE_SHELL, 2, "APPVAR"), "1",
            "rank-env: the jobspec's environment where it does not");
    is_str (proc_cmd (&fb, PHASE_SHELL, 1, "CAIRN_RANK"), "1",
            "rank-env: cairn's own variables win");
    check_replay (&fb, "rank-env, shells running");
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    fake_spawn_all (&fb);
    is_str (proc_cmd (&fb, PHASE_EPILOG, 1, "FLUX_URI"), "(none)",
            "rank-env: not the epilog's");
    drive_to_end (&fb);
    check_end (&fb, "rank-env");
    fake_fini (&fb);

    /* a rank that is not R's: refused, nothing emitted */
    json_object_set_new (system, "cairn",
                         json_pack ("{s:{s:{}}}", "rank-environment", "3"));
    job_config_init (&jc);
    fake_init (&fb, JOBID, T0, OWNER);
    err.text[0] = '\0';
    is_errno (job_accept (fb.job, &fb.ctx, OWNER, R, js, &jc, fb.out, &err),
              EINVAL, "rank-env: rank 3 of a 3-rank R refused");
    is_str (err.text,
            "jobspec: attributes.system.cairn.rank-environment.3: rank 3 is "
            "not in R",
            "rank-env: message names the rank");
    ok (json_array_size (fb.out) == 0 && job_nevents (fb.job) == 0,
        "rank-env: nothing emitted");
    fake_fini (&fb);
    job_config_free (&jc);
    json_decref (env);
    json_decref (R);
    json_decref (js);
}

/* Progress events, as a stream that asked for "events" gets them. */
static void test_progress_responses (void)
{
    struct fake fb;
    struct job_config jc;
    char buf[2048];
    size_t len = 0;
    bool others = true;

    cfg_init (&jc, true, true);
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fake_spawn_all (&fb);
    fake_exit_phase (&fb, PHASE_PROLOG, 0);
    fake_spawn_all (&fb);
    fake_exit_phase (&fb, PHASE_SHELL, 0);
    fake_spawn_all (&fb);
    fake_exit (&fb, PHASE_EPILOG, 0, 0);
    fake_exit (&fb, PHASE_EPILOG, 1, 1 << 8);
    is_int (job_state (fb.job), JOB_DONE, "progress: job done");
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size (fb.out); i++) {
        json_t *e = json_array_get (fb.out, i);
        const char *name = fake_event_name (e);
        json_t *r = job_progress_response (fb.job, e);
        int errnum = errno;
        if (!job_event_is_progress (name)) {
            if (r || errnum != ENOENT) {
                diag ("%s gave a progress response", name);
                others = false;
            }
            json_decref (r);
            continue;
        }
        if (job_event_is_response (name)) {
            diag ("%s is also an RFC 32 response", name);
            others = false;
        }
        char *s = r ? json_dumps (r, JSON_COMPACT) : NULL;
        len +=
            snprintf (buf + len, sizeof (buf) - len, "%s\n", s ? s : "(null)");
        free (s);
        json_decref (r);
    }
    is_str (buf,
            "{\"id\":42,\"type\":\"accepted\",\"data\":{}}\n"
            "{\"id\":42,\"type\":\"prolog-start\","
            "\"data\":{\"description\":\"cairn.prolog\"}}\n"
            "{\"id\":42,\"type\":\"prolog-finish\","
            "\"data\":{\"description\":\"cairn.prolog\",\"status\":0}}\n"
            "{\"id\":42,\"type\":\"epilog-start\","
            "\"data\":{\"description\":\"cairn.epilog\"}}\n"
            "{\"id\":42,\"type\":\"drain\",\"data\":{\"ranks\":\"1\","
            "\"reason\":\"epilog failed for job ƒj: exit 1\","
            "\"hosts\":\"node0\"}}\n"
            "{\"id\":42,\"type\":\"epilog-finish\","
            "\"data\":{\"description\":\"cairn.epilog\",\"status\":256}}\n",
            "progress: accepted, then the perilog events and the drain, with "
            "their contexts");
    ok (others, "progress: no other event gives one (ENOENT), and none is "
                "also an RFC 32 response");
    check_end (&fb, "progress");
    fake_fini (&fb);
}

static json_t *entry_load (const char *line)
{
    json_t *e = eventlog_entry_decode (line, strlen (line), NULL);
    if (!e)
        BAIL_OUT ("bad test entry %s", line);
    return e;
}

/* A shim gone before its start marker (killed with the cairnd that
 * spawned it): the process is an intent again and runs once more. */
static void test_unstarted (void)
{
    struct fake fb;
    struct job_config jc;
    const struct job_proc *p;
    char execid[EXECID_LEN + 1];

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fake_spawn_all (&fb);
    p = fake_find (&fb, PHASE_SHELL, 1);
    snprintf (execid, sizeof (execid), "%s", p->execid);
    size_t from = json_array_size (fb.out);
    ok (job_proc_unstarted (fb.job, &fb.ctx, execid, "shim ended early",
                            fb.out) == 0,
        "job_proc_unstarted of a running shell");
    is_int (fake_count (&fb, from, "proc-unstarted"), 1,
            "... emits proc-unstarted");
    p = job_proc_find (fb.job, execid);
    ok (p && p->state == PROC_INTENT && p->pid == 0,
        "... and the shell is an intent again, without a pid");
    check_replay (&fb, "unstarted shell");
    is_errno (job_proc_unstarted (fb.job, &fb.ctx, execid, "x", fb.out),
              EINVAL, "job_proc_unstarted of an intent: EINVAL");
    is_errno (job_proc_unstarted (fb.job, &fb.ctx, "nope", "x", fb.out),
              ENOENT, "job_proc_unstarted of an unknown execid: ENOENT");
    ok (fake_spawn (&fb, execid) == 0, "it is spawned again, same execid");
    drive_to_end (&fb);
    is_int (job_finish_status (fb.job), 0, "and the job ends normally");
    is_int (fake_count (&fb, 0, "exception"), 0, "... with no exception");
    check_replay (&fb, "unstarted shell, respawned, done");
    fake_fini (&fb);
}

static void test_apply_rejects (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    char why[512];
    struct job *r;
    json_t *e;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    is_errno (fake_spawn (&fb, fake_find (&fb, PHASE_SHELL, 0)->execid), EINVAL,
              "job_proc_spawned twice refused");
    is_errno (fake_spawn (&fb, "00000000-0000-4000-8000-000000000999"), ENOENT,
              "job_proc_spawned of an unknown execid refused");
    is_errno (job_proc_exited (fb.job, &fb.ctx, "nope",
                               &(struct job_proc_end){0}, fb.out),
              ENOENT, "job_proc_exited of an unknown execid refused");
    drive_to_end (&fb);
    is_str (fake_names (&fb, 0),
            "accept,start,proc-intent,proc-spawn,proc-exit,finish,cleanup,"
            "release,clean",
            "apply: the journal under test");

    r = job_create (JOBID);
    e = entry_load ("{\"timestamp\":1700000000.0,\"name\":\"start\"}");
    is_errno (job_apply (r, e, &err), EINVAL, "apply: start before accept");
    like (err.text, "event start before accept", "apply: message");
    json_decref (e);
    ok (job_apply (r, json_array_get (fb.out, 0), &err) == 0, "apply: accept");
    is_errno (job_apply (r, json_array_get (fb.out, 0), &err), EINVAL,
              "apply: accept twice");
    like (err.text, "accept: job already accepted", "apply: message");
    e = entry_load ("{\"timestamp\":1700000001.0,\"name\":\"proc-exit\","
                    "\"context\":{\"execid\":"
                    "\"00000000-0000-4000-8000-000000000999\",\"status\":0}}");
    is_errno (job_apply (r, e, &err), EINVAL, "apply: exit of unknown execid");
    like (err.text,
          "proc-exit: unknown execid "
          "00000000-0000-4000-8000-000000000999",
          "apply: message");
    json_decref (e);
    e = entry_load ("{\"timestamp\":1700000001.0,\"name\":\"frobnicate\"}");
    ok (job_apply (r, e, &err) == 0 && job_nevents (r) == 2,
        "apply: unknown names are counted and ignored");
    json_decref (e);
    job_destroy (r);

    r = replay (&fb, 4, why, sizeof (why));
    ok (r != NULL, "apply: replay up to proc-spawn");
    is_errno (job_apply (r, json_array_get (fb.out, 3), &err), EINVAL,
              "apply: proc-spawn twice");
    like (err.text, "is not an intent", "apply: message");
    job_destroy (r);

    r = replay (&fb, json_array_size (fb.out), why, sizeof (why));
    ok (r != NULL, "apply: replay to clean");
    is_errno (job_apply (r, json_array_get (fb.out, 1), &err), EINVAL,
              "apply: event after clean");
    like (err.text, "event start after clean", "apply: message");
    job_destroy (r);
    fake_fini (&fb);
}

/* Regression (found by fuzz_job_advance): a journal that ends right after
 * `start`, before the shell intents, left the job stuck in RUN after a
 * replay: finish cleaned up only the (empty) run ranks, so no rank ever
 * reached cleanup and the job never released. cairnd cannot write such a
 * journal (start and the intents are one batch), but a replay must never
 * leave a job stuck. */
static void test_replay_start_without_shells (void)
{
    struct fake fb;
    struct job_config jc;
    struct cairn_error err;
    size_t i;
    json_t *entry;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    struct job *job = job_create (JOBID);
    json_array_foreach (fb.out, i, entry) {
        if (strcmp (fake_event_name (entry), "proc-intent") == 0)
            break; /* cut after `start` */
        if (job_apply (job, entry, &err) < 0)
            BAIL_OUT ("replay: %s", err.text);
    }
    is_str (job_state_name (job_state (job)), "run",
            "start without shells: replayed into run");
    json_t *out = json_array ();
    ok (job_advance (job, &fb.ctx, out) == 0, "start without shells: advance");
    is_str (job_state_name (job_state (job)), "done",
            "start without shells: the job still reaches clean");
    is_str (set_str (job_released (job)), "0-1",
            "start without shells: every rank released");
    json_decref (out);
    job_destroy (job);
    fake_fini (&fb);
}

/* Issue 37: a shell whose session still held processes at its end (its
 * supervisor killed them) did not finish the job: a fatal exec exception,
 * the others terminated. After a cancel, nothing more is raised. */
static void test_shell_leftover (void)
{
    struct fake fb;
    struct job_config jc;
    size_t m;

    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 2, 0, 0, OWNER);
    fb.ctx.now = T0 + 1;
    fake_spawn_all (&fb);
    fb.ctx.now = T0 + 2;
    m = fake_mark (&fb);
    const struct job_proc *p = fake_find (&fb, PHASE_SHELL, 0);
    char execid[EXECID_LEN + 1];
    memcpy (execid, p->execid, sizeof (execid));
    ok (job_proc_exited (fb.job, &fb.ctx, execid,
                         &(struct job_proc_end){.leftover = 2}, fb.out) == 0,
        "leftover: exit accepted");
    fake_walk (&fb);
    is_str (fake_names (&fb, m), "proc-exit,exception,proc-signal",
            "leftover: fatal exception, the other shell terminated");
    is_int (ctx_int (fake_event (&fb, m, "proc-exit", 0), "leftover"), 2,
            "leftover: journaled in proc-exit");
    is_str (exc_str (fake_event (&fb, m, "exception", 0)),
            "exec/0/shell on rank 0 exited (exit 0) while 2 other processes "
            "of its session still ran; they were killed",
            "leftover: the note says what happened");
    fake_exit_phase (&fb, PHASE_SHELL, SIGTERM);
    check_end (&fb, "leftover");
    fake_fini (&fb);

    /* none left: nothing raised (the key is left out) */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    m = fake_mark (&fb);
    memcpy (execid, fake_find (&fb, PHASE_SHELL, 0)->execid, sizeof (execid));
    ok (job_proc_exited (fb.job, &fb.ctx, execid, &(struct job_proc_end){0},
                         fb.out) == 0,
        "no leftover: exit accepted");
    fake_walk (&fb);
    is_int (ctx_int (fake_event (&fb, m, "proc-exit", 0), "leftover"), -999,
            "no leftover: not in proc-exit");
    is_int (fake_count (&fb, m, "exception"), 0, "no leftover: no exception");
    check_end (&fb, "no leftover");
    fake_fini (&fb);

    /* after a cancel the leftovers are expected: no second exception */
    cfg_init (&jc, false, false);
    start_job (&fb, &jc, 1, 0, 0, OWNER);
    fake_spawn_all (&fb);
    struct cairn_error err;
    ok (job_raise (fb.job, &fb.ctx, "cancel", 0, NULL, -1, fb.out, &err) == 0,
        "leftover after cancel: raised");
    fake_walk (&fb);
    m = fake_mark (&fb);
    memcpy (execid, fake_find (&fb, PHASE_SHELL, 0)->execid, sizeof (execid));
    ok (job_proc_exited (fb.job, &fb.ctx, execid,
                         &(struct job_proc_end){.status = SIGKILL,
                                                .leftover = 1},
                         fb.out) == 0,
        "leftover after cancel: exit accepted");
    fake_walk (&fb);
    is_int (fake_count (&fb, m, "exception"), 0,
            "leftover after cancel: no new exception");
    check_end (&fb, "leftover after cancel");
    fake_fini (&fb);
}

int main (void)
{
    plan (NO_PLAN);
    test_happy_path ();
    test_no_perilog ();
    test_finish_status ();
    test_release_after ();
    test_not_per_rank ();
    test_prolog_fatal ();
    test_prolog_fail_drains ();
    test_prolog_tolerance ();
    test_fail_ranks_long_note ();
    test_hold_on_shrink ();
    test_post ();
    test_fail_ranks_errors ();
    test_fail_ranks_then_lost ();
    test_cancel ();
    test_spawn_after_cancel ();
    test_raise_errors ();
    test_prolog_timeout ();
    test_prolog_killed_drains ();
    test_epilog_timeout ();
    test_unkillable ();
    test_kill_schedule ();
    test_give_up_after ();
    test_time_limit ();
    test_kill ();
    test_kill_keeps_escalation ();
    test_lost_shell ();
    test_shell_leftover ();
    test_shell_leader ();
    test_lost_every_shell ();
    test_late_report ();
    test_lost_prolog ();
    test_multi_user ();
    test_submitter ();
    test_imp ();
    test_accept_errors ();
    test_output ();
    test_rank_env ();
    test_job_config_override ();
    test_hold_client_away ();
    test_hold_start ();
    test_progress_responses ();
    test_unstarted ();
    test_apply_rejects ();
    test_replay_start_without_shells ();
    return done_testing ();
}
