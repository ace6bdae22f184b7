/* fuzz_job.c - replay of a job's journal through job_apply (core/job.h).
 *
 * Input: eventlog lines, '\n' separated, folded into a fresh job after a
 * fixed, valid `accept` event (4 ranks, per-rank prolog and epilog,
 * tolerable prolog exit code 3, a time limit), so the input starts right
 * where a real journal goes on. As in cairnd's replay, each line is
 * decoded with eventlog_entry_decode and folded; the replay stops at the
 * first event job_apply refuses, which it must do with EINVAL (or ENOMEM)
 * and a reason, never by crashing. Lines that do not decode are skipped.
 * Then every query is called on the state reached.
 *
 * Built a second time as fuzz_job_advance (FUZZ_JOB_ADVANCE): after the
 * replay it plays a restart, as reconcile.c does: every process not done is
 * declared lost or spawned, job_advance runs at a later time, and the job
 * is driven to its end by letting every process exit. Every event the
 * decisions emit must then replay (through the line encoding) into a fresh
 * job: the state machine must never write a journal it cannot read back.
 *
 * Seeds: CAIRN_FUZZ_JOB_SEEDS=DIR fuzz_job writes a few complete scenarios
 * (driven through the decision API from the same accept) into DIR and
 * exits; test/fuzz/corpus/job/ holds them.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <jansson.h>

#include "core/eventlog.h"
#include "core/job.h"
#include "core/jobspec.h"
#include "core/rv1.h"

#ifndef FUZZ_JOB_ADVANCE
#define FUZZ_JOB_ADVANCE 0
#endif

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_job: %s:%d: ", __FILE__, __LINE__);         \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

#define T0 1700000000.0
#define OWNER 1000
#define JOBID 42
#define NRANKS 4
#define MAX_ROUNDS 16 /* of the drive to the end: more than needed */

static json_t *accept_entry; /* the template, folded first into every job */

struct sim {
    struct job *job;
    struct job_ctx ctx;
    json_t *out; /* events emitted by decisions */
    int nexecids;
    int pid;
    const char *idprefix; /* of new execids: the input's own must not clash */
};

/* cairnd's execids are random UUIDs (122 bits): never one the job has
 * already. The sim's are counted under a prefix of their own, which the
 * fuzzer learns from the comparisons and puts in its input (CI, stop 51:
 * the epilog's new id was a lost prolog's), so one the job has is
 * skipped. */
static void new_execid (char buf[EXECID_LEN + 1], void *arg)
{
    struct sim *sim = arg;
    do
        snprintf (buf, EXECID_LEN + 1, "%s-0000-4000-8000-%012d", sim->idprefix,
                  ++sim->nexecids);
    while (sim->job && job_proc_find (sim->job, buf));
}

static void sim_init (struct sim *sim, double now)
{
    memset (sim, 0, sizeof (*sim));
    CHECK ((sim->job = job_create (JOBID)) && (sim->out = json_array ()),
           "out of memory");
    sim->ctx.now = now;
    sim->ctx.owner_uid = OWNER;
    sim->ctx.new_execid = new_execid;
    sim->ctx.arg = sim;
    sim->pid = 1000;
    sim->idprefix = "00000000";
}

static void sim_fini (struct sim *sim)
{
    job_destroy (sim->job);
    json_decref (sim->out);
}

static char **argv_of (const char *a, const char *b)
{
    char **argv = calloc (3, sizeof (*argv));
    CHECK (argv && (argv[0] = strdup (a)) && (!b || (argv[1] = strdup (b))),
           "out of memory");
    return argv;
}

/* Accept the template job into sim (its events land in sim->out). */
static void sim_accept (struct sim *sim)
{
    struct cairn_error err = {{0}};
    struct job_config jc;
    char *av[] = {"/bin/app", "arg", NULL};
    json_t *env = json_pack ("{s:s}", "APPVAR", "1");
    json_t *R = rv1_create (NRANKS, 2, "node0", T0 + 3600);
    json_t *js = jobspec_create (av, NRANKS, "/tmp", env, 0, 1);

    job_config_init (&jc);
    jc.prolog.command = argv_of ("/etc/prolog", NULL);
    jc.prolog.per_rank = true;
    CHECK ((jc.prolog.tolerable_exit_codes = malloc (sizeof (int))), "oom");
    jc.prolog.tolerable_exit_codes[0] = 3;
    jc.prolog.ntolerable = 1;
    jc.epilog.command = argv_of ("/etc/epilog", "--clean");
    jc.epilog.per_rank = true;
    jc.release_after = 10;
    CHECK (R && js, "template");
    CHECK (job_accept (sim->job, &sim->ctx, OWNER, R, js, &jc, sim->out,
                       &err) == 0,
           "job_accept: %s", err.text);
    job_config_free (&jc);
    json_decref (env);
    json_decref (R);
    json_decref (js);
}

/* ---- queries on whatever state the replay reached ---- */

static void query_all (struct job *job, json_t *applied)
{
    size_t i;
    json_t *entry;

    (void)job_state_name (job_state (job));
    (void)job_next_deadline (job);
    (void)job_output_room (job, PHASE_SHELL);
    CHECK (job_nevents (job) >= job_nresponses (job), "nevents");
    CHECK (job_ranks (job) && job_released (job) && job_drained (job), "sets");
    CHECK (job_config (job) != NULL, "config");
    for (i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        char **argv = NULL;
        const char *cwd;
        json_t *env = NULL;

        CHECK (p && job_proc_find (job, p->execid) == p, "proc %zu", i);
        if (job_proc_command (job, p, &argv, &cwd, &env) == 0) {
            job_argv_free (argv);
            json_decref (env);
        }
    }
    CHECK (job_proc_at (job, i) == NULL, "proc past the end");
    json_array_foreach (applied, i, entry)
    {
        json_decref (job_response (job, entry));
    }
}

#if FUZZ_JOB_ADVANCE
/* A decision about a process in the right state, or the clock, must not
 * fail: -1 here means it emitted an event its own fold refused. */
#define DECIDE(call)                                                           \
    do {                                                                       \
        if ((call) < 0) {                                                      \
            char *line_ = json_array_size (sim->out) > 0                       \
                              ? eventlog_entry_encode (json_array_get (        \
                                    sim->out, json_array_size (sim->out) - 1)) \
                              : NULL;                                          \
            CHECK (0, "%s failed: %s (last event %s)", #call,                  \
                   strerror (errno), line_ ? line_ : "none");                  \
        }                                                                      \
    } while (0)

/* Fold entry into a job through its line form, as a replay does. */
static int
replay_one (struct job *job, const json_t *entry, struct cairn_error *err)
{
    char *line = eventlog_entry_encode (entry);
    json_t *back;
    int rc;

    CHECK (line != NULL, "emitted event does not encode");
    back = eventlog_entry_decode (line, strlen (line), err);
    CHECK (back != NULL, "emitted %s does not decode: %s", line, err->text);
    rc = job_apply (job, back, err);
    json_decref (back);
    free (line);
    return rc;
}

/* Let every process run its course: spawn intents, exit running ones
 * (status chosen by round so that some fail), handle deadlines, until the
 * job is done. */
static void drive (struct sim *sim)
{
    for (int round = 0; round < MAX_ROUNDS; round++) {
        if (job_state (sim->job) == JOB_DONE)
            return;
        for (size_t i = 0; i < job_nprocs (sim->job); i++) {
            const struct job_proc *p = job_proc_at (sim->job, i);
            char execid[EXECID_LEN + 1];

            memcpy (execid, p->execid, sizeof (execid));
            if (p->state == PROC_INTENT)
                DECIDE (job_proc_spawned (sim->job, &sim->ctx, execid,
                                          sim->pid++, 5000, "boot-1",
                                          sim->out));
            else if (p->state == PROC_RUNNING)
                DECIDE (job_proc_exited (
                    sim->job, &sim->ctx, execid,
                    &(struct job_proc_end){.status = round % 3 == 2 ? 256 : 0},
                    sim->out));
        }
        sim->ctx.now += 3600;
        DECIDE (job_advance (sim->job, &sim->ctx, sim->out));
    }
}

/* The restart after the replay, then the rest of the job's life; all that
 * was applied and emitted must replay into a fresh job. */
static void restart (struct sim *sim, json_t *applied)
{
    struct cairn_error err = {{0}};
    struct job *fresh;
    size_t i;
    json_t *entry;

    sim->ctx.now = T0 + 7200;
    if (job_state (sim->job) == JOB_DONE)
        return; /* a clean job is not reconciled */
    for (i = 0; i < job_nprocs (sim->job); i++) {
        const struct job_proc *p = job_proc_at (sim->job, i);
        char execid[EXECID_LEN + 1];

        memcpy (execid, p->execid, sizeof (execid));
        if (p->state == PROC_INTENT && i % 2 == 0)
            DECIDE (job_proc_spawned (sim->job, &sim->ctx, execid, sim->pid++,
                                      5000, "boot-1", sim->out));
        else if (p->state != PROC_DONE)
            DECIDE (job_proc_lost (sim->job, &sim->ctx, execid,
                                   "gone during the restart", sim->out));
    }
    DECIDE (job_advance (sim->job, &sim->ctx, sim->out));
    drive (sim);
    /* No job is ever left stuck: with every process ended and every
     * deadline passed, the job should be clean. Not enforced by default: a
     * journal that no cairnd could write (e.g. one turn's events cut in
     * half) may leave it stuck, which is not a crash. */
    if (getenv ("CAIRN_FUZZ_JOB_STUCK") && job_state (sim->job) != JOB_DONE) {
        size_t k;
        json_t *e;
        json_array_foreach (sim->out, k, e)
        {
            char *line = eventlog_entry_encode (e);
            fprintf (stderr, "emitted: %s\n", line ? line : "?");
            free (line);
        }
        CHECK (0, "job stuck in %s after the drive",
               job_state_name (job_state (sim->job)));
    }

    CHECK ((fresh = job_create (JOBID)), "out of memory");
    CHECK (job_apply (fresh, accept_entry, &err) == 0, "accept: %s", err.text);
    json_array_foreach (applied, i, entry)
    {
        CHECK (replay_one (fresh, entry, &err) == 0,
               "applied event %zu does not replay: %s", i, err.text);
    }
    json_array_foreach (sim->out, i, entry)
    {
        char *line = eventlog_entry_encode (entry);
        CHECK (replay_one (fresh, entry, &err) == 0,
               "emitted event %zu (%s) does not replay: %s", i,
               line ? line : "?", err.text);
        free (line);
    }
    CHECK (job_state (fresh) == job_state (sim->job), "replayed state %s != %s",
           job_state_name (job_state (fresh)),
           job_state_name (job_state (sim->job)));
    query_all (fresh, sim->out);
    job_destroy (fresh);
}
#endif

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct cairn_error err = {{0}};
    const char *p = (const char *)data;
    const char *end = p + size;
    json_t *applied = json_array ();
    struct sim sim;

    CHECK (applied != NULL, "out of memory");
    sim_init (&sim, T0);
    sim.idprefix = "ffffffff"; /* the seeds use 00000000-... */
    CHECK (job_apply (sim.job, accept_entry, &err) == 0, "accept: %s",
           err.text);
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *entry = eventlog_entry_decode (p, len, NULL);

        p += len + 1;
        if (!entry)
            continue;
        if (job_apply (sim.job, entry, &err) < 0) {
            CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
            CHECK (err.text[0] != '\0', "no reason");
            json_decref (entry);
            break;
        }
        CHECK (json_array_append_new (applied, entry) == 0, "out of memory");
    }
    query_all (sim.job, applied);
#if FUZZ_JOB_ADVANCE
    restart (&sim, applied);
#endif
    json_decref (applied);
    sim_fini (&sim);
    return 0;
}

/* ---- seeds: a few whole lives of the template job ---- */

enum fate { EXIT, LOST, FAIL };

/* Spawn every intent of phase, then end each running process of phase:
 * rank `odd` gets (fate, status), the others exit 0. */
static void sim_phase (struct sim *sim,
                       enum proc_phase phase,
                       uint32_t odd,
                       enum fate fate,
                       int status)
{
    for (size_t i = 0; i < job_nprocs (sim->job); i++) {
        const struct job_proc *p = job_proc_at (sim->job, i);
        char execid[EXECID_LEN + 1];

        memcpy (execid, p->execid, sizeof (execid));
        if (p->phase != phase || p->state != PROC_INTENT)
            continue;
        if (p->rank == odd && fate == FAIL)
            (void)job_proc_failed (sim->job, &sim->ctx, execid,
                                   "cannot exec: No such file", sim->out);
        else
            (void)job_proc_spawned (sim->job, &sim->ctx, execid, sim->pid++,
                                    5000, "boot-1", sim->out);
    }
    sim->ctx.now += 1;
    for (size_t i = 0; i < job_nprocs (sim->job); i++) {
        const struct job_proc *p = job_proc_at (sim->job, i);
        char execid[EXECID_LEN + 1];

        memcpy (execid, p->execid, sizeof (execid));
        if (p->phase != phase || p->state != PROC_RUNNING)
            continue;
        if (p->rank == odd && fate == LOST)
            (void)job_proc_lost (sim->job, &sim->ctx, execid,
                                 "process gone, exit status unknown", sim->out);
        else
            (void)job_proc_exited (
                sim->job, &sim->ctx, execid,
                &(struct job_proc_end){.status = p->rank == odd ? status : 0,
                                       .outdata = "output\n"},
                sim->out);
    }
    sim->ctx.now += 1;
    (void)job_advance (sim->job, &sim->ctx, sim->out);
}

static void write_seed (const char *dir, const char *name, json_t *events)
{
    char path[4096];
    size_t i;
    json_t *entry;
    FILE *f;

    snprintf (path, sizeof (path), "%s/%s", dir, name);
    CHECK ((f = fopen (path, "w")), "%s: %s", path, strerror (errno));
    json_array_foreach (events, i, entry)
    {
        char *line;
        if (i == 0)
            continue; /* the accept: the target adds it */
        CHECK ((line = eventlog_entry_encode (entry)), "encode");
        fprintf (f, "%s\n", line);
        free (line);
    }
    CHECK (fclose (f) == 0, "%s: %s", path, strerror (errno));
}

static void write_seeds (const char *dir)
{
    struct cairn_error err = {{0}};
    struct idset *ranks;
    struct sim sim;

    /* everything succeeds */
    sim_init (&sim, T0);
    sim_accept (&sim);
    sim_phase (&sim, PHASE_PROLOG, 0, EXIT, 0);
    sim_phase (&sim, PHASE_SHELL, 1, EXIT, 256);
    sim_phase (&sim, PHASE_EPILOG, 0, EXIT, 0);
    sim.ctx.now += 60;
    (void)job_advance (sim.job, &sim.ctx, sim.out);
    write_seed (dir, "happy", sim.out);
    sim_fini (&sim);

    /* a fatal prolog failure on rank 1 */
    sim_init (&sim, T0);
    sim_accept (&sim);
    sim_phase (&sim, PHASE_PROLOG, 1, EXIT, 1 << 8);
    sim_phase (&sim, PHASE_EPILOG, 2, EXIT, 2 << 8);
    sim.ctx.now += 60;
    (void)job_advance (sim.job, &sim.ctx, sim.out);
    write_seed (dir, "prolog-fatal", sim.out);
    sim_fini (&sim);

    /* a tolerated prolog failure (exit 3) on rank 2, then a lost shell */
    sim_init (&sim, T0);
    sim_accept (&sim);
    sim_phase (&sim, PHASE_PROLOG, 2, EXIT, 3 << 8);
    sim_phase (&sim, PHASE_SHELL, 1, LOST, 0);
    sim_phase (&sim, PHASE_EPILOG, 3, FAIL, 0);
    sim.ctx.now += 60;
    (void)job_advance (sim.job, &sim.ctx, sim.out);
    write_seed (dir, "tolerated-lost", sim.out);
    sim_fini (&sim);

    /* fail-ranks in the prolog, critical ranks, kill, cancel while running */
    sim_init (&sim, T0);
    sim_accept (&sim);
    CHECK ((ranks = idset_decode ("3", NULL)), "idset");
    (void)job_fail_ranks (sim.job, &sim.ctx, ranks, "node died", sim.out, &err);
    idset_destroy (ranks);
    sim_phase (&sim, PHASE_PROLOG, 0, FAIL, 0);
    CHECK ((ranks = idset_decode ("0-1", NULL)), "idset");
    (void)job_set_critical (sim.job, &sim.ctx, ranks, sim.out, &err);
    idset_destroy (ranks);
    for (size_t i = 0; i < job_nprocs (sim.job); i++) {
        const struct job_proc *p = job_proc_at (sim.job, i);
        char execid[EXECID_LEN + 1];
        memcpy (execid, p->execid, sizeof (execid));
        if (p->state == PROC_INTENT)
            (void)job_proc_spawned (sim.job, &sim.ctx, execid, sim.pid++, 5000,
                                    "boot-1", sim.out);
    }
    (void)job_kill (sim.job, &sim.ctx, SIGUSR1, sim.out, &err);
    (void)job_set_expiration (sim.job, &sim.ctx, T0 + 1800, sim.out, &err);
    (void)job_raise (sim.job, &sim.ctx, "cancel", 0, "canceled by user", -1,
                     sim.out, &err);
    sim.ctx.now += 10;
    (void)job_advance (sim.job, &sim.ctx, sim.out);
    sim_phase (&sim, PHASE_SHELL, 0, EXIT, SIGTERM);
    sim_phase (&sim, PHASE_EPILOG, 9, EXIT, 0);
    sim.ctx.now += 60;
    (void)job_advance (sim.job, &sim.ctx, sim.out);
    write_seed (dir, "cancel", sim.out);
    sim_fini (&sim);

    /* the time limit passes; the shells ignore SIGTERM until killed */
    sim_init (&sim, T0);
    sim_accept (&sim);
    sim_phase (&sim, PHASE_PROLOG, 9, EXIT, 0);
    for (size_t i = 0; i < job_nprocs (sim.job); i++) {
        const struct job_proc *p = job_proc_at (sim.job, i);
        char execid[EXECID_LEN + 1];
        memcpy (execid, p->execid, sizeof (execid));
        if (p->state == PROC_INTENT)
            (void)job_proc_spawned (sim.job, &sim.ctx, execid, sim.pid++, 5000,
                                    "boot-1", sim.out);
    }
    for (int k = 0; k < 4; k++) {
        sim.ctx.now = T0 + 3600 + k * 10;
        (void)job_advance (sim.job, &sim.ctx, sim.out);
    }
    sim_phase (&sim, PHASE_SHELL, 2, EXIT, SIGKILL);
    sim_phase (&sim, PHASE_EPILOG, 9, EXIT, 0);
    sim.ctx.now += 60;
    (void)job_advance (sim.job, &sim.ctx, sim.out);
    write_seed (dir, "timeout", sim.out);
    sim_fini (&sim);
}

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    const char *dir = getenv ("CAIRN_FUZZ_JOB_SEEDS");
    struct sim sim;

    if (dir) {
        write_seeds (dir);
        exit (0);
    }
    sim_init (&sim, T0);
    sim_accept (&sim);
    accept_entry = json_incref (json_array_get (sim.out, 0));
    CHECK (accept_entry, "no accept event");
    CHECK (!strcmp (json_string_value (json_object_get (accept_entry, "name")),
                    "accept"),
           "first event is not accept");
    sim_fini (&sim);
    return 0;
}
