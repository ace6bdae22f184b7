/* fakebackend.h - a simulated process world for the job state machine.
 *
 * No process is ever started. The test owns the clock (fb->ctx.now) and
 * decides every process's fate: after a call into the job, the events it
 * emitted are walked once (proc-signal deliveries are logged), and the test
 * then spawns intents, exits, loses or fails processes through the helpers
 * below. Spawning is never automatic, so a test can also leave an intent
 * unspawned (a crash between intent and spawn).
 *
 * All events the job ever emitted stay in fb->out, in order: a test takes
 * a mark (fake_mark) before a step and asserts the names emitted since.
 *
 * Header-only (static inline): include it from one test program.
 */
#ifndef CAIRN_TEST_FAKEBACKEND_H
#define CAIRN_TEST_FAKEBACKEND_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/eventlog.h"
#include "core/idset.h"
#include "core/job.h"
#include "core/jobspec.h"
#include "core/rv1.h"

#define FAKE_MAXSIGS 512

/* One proc-signal the job asked for. */
struct fake_signal {
    char execid[EXECID_LEN + 1];
    int signum;
    char reason[16];
    bool kill;
};

struct fake {
    struct job *job;
    struct job_ctx ctx;
    json_t *out;   /* every event the job emitted, in order */
    size_t walked; /* events of out already walked */
    int nexecids;
    pid_t next_pid;
    struct fake_signal sigs[FAKE_MAXSIGS];
    int nsigs;
    char names[16384]; /* result of fake_names() */
};

static inline void fake_new_execid (char buf[EXECID_LEN + 1], void *arg)
{
    struct fake *fb = arg;
    snprintf (buf, EXECID_LEN + 1, "00000000-0000-4000-8000-%012d",
              ++fb->nexecids);
}

/* Set up fb for a job `id` at time `now`, run by uid `owner`. */
static inline int
fake_init (struct fake *fb, uint64_t id, double now, uid_t owner)
{
    memset (fb, 0, sizeof (*fb));
    if (!(fb->job = job_create (id)) || !(fb->out = json_array ())) {
        job_destroy (fb->job);
        return -1;
    }
    fb->ctx.now = now;
    fb->ctx.owner_uid = owner;
    fb->ctx.new_execid = fake_new_execid;
    fb->ctx.arg = fb;
    fb->next_pid = 1000;
    return 0;
}

static inline void fake_fini (struct fake *fb)
{
    job_destroy (fb->job);
    json_decref (fb->out);
    fb->job = NULL;
    fb->out = NULL;
}

static inline const char *fake_event_name (const json_t *entry)
{
    const char *name = NULL;
    if (eventlog_entry_parse (entry, NULL, &name, NULL) < 0)
        return "(malformed)";
    return name;
}

static inline json_t *fake_event_context (const json_t *entry)
{
    json_t *ctx = NULL;
    (void)eventlog_entry_parse (entry, NULL, NULL, &ctx);
    return ctx;
}

/* Walk the events emitted since the last walk; log proc-signals. Returns
 * the number of new events. */
static inline size_t fake_walk (struct fake *fb)
{
    size_t n = json_array_size (fb->out);
    size_t walked = n - fb->walked;

    for (; fb->walked < n; fb->walked++) {
        json_t *e = json_array_get (fb->out, fb->walked);
        json_t *c = fake_event_context (e);
        const char *execid = "", *reason = "request";
        int signum = 0, kill = 0;

        if (strcmp (fake_event_name (e), "proc-signal") != 0 ||
            fb->nsigs >= FAKE_MAXSIGS)
            continue;
        (void)json_unpack (c, "{s:s s:i s?s s?b}", "execid", &execid, "signum",
                           &signum, "reason", &reason, "kill", &kill);
        struct fake_signal *s = &fb->sigs[fb->nsigs++];
        snprintf (s->execid, sizeof (s->execid), "%s", execid);
        snprintf (s->reason, sizeof (s->reason), "%s", reason);
        s->signum = signum;
        s->kill = kill;
    }
    return walked;
}

/* R's execution.starttime in the jobs fake_accept makes (0: unset). */
static double fake_starttime;

/* fake_init, then job_accept of a job of userid on nranks ranks of host
 * node0 (2 cores each), with expiration (0: none), `allowed` tolerated
 * prolog failures and attributes.system.cairn = cairn (stolen) unless
 * NULL, running /bin/app in /tmp/work; its first events walked. jc is
 * freed. 0, or -1 with err (or errno, with an empty err). */
static inline int fake_accept (struct fake *fb,
                               uint64_t id,
                               double now,
                               uid_t owner,
                               struct job_config *jc,
                               uint32_t nranks,
                               double expiration,
                               int allowed,
                               uint32_t userid,
                               json_t *cairn,
                               struct cairn_error *err)
{
    char *av[] = {"/bin/app", "arg", NULL};
    json_t *env = json_pack ("{s:s}", "APPVAR", "1");
    json_t *R = rv1_create (nranks, 2, "node0", expiration);
    json_t *js = jobspec_create (av, nranks, "/tmp/work", env, 0, allowed);
    json_t *sys =
        json_object_get (json_object_get (js, "attributes"), "system");
    int rc = -1;

    err->text[0] = '\0';
    if (R && fake_starttime > 0)
        json_object_set_new (json_object_get (R, "execution"), "starttime",
                             json_real (fake_starttime));
    if (fake_init (fb, id, now, owner) < 0 || !R || !js || !sys ||
        (cairn && json_object_set_new (sys, "cairn", cairn) < 0))
        goto done;
    cairn = NULL;
    if (job_accept (fb->job, &fb->ctx, userid, R, js, jc, fb->out, err) < 0)
        goto done;
    fake_walk (fb);
    rc = 0;
done:
    json_decref (cairn);
    json_decref (env);
    json_decref (R);
    json_decref (js);
    job_config_free (jc);
    return rc;
}

/* Number of events emitted so far: a mark for fake_names(). */
static inline size_t fake_mark (const struct fake *fb)
{
    return json_array_size (fb->out);
}

/* Comma-joined names of the events emitted since `from` ("" if none).
 * Points into fb, overwritten by the next call. */
static inline const char *fake_names (struct fake *fb, size_t from)
{
    size_t len = 0;
    fb->names[0] = '\0';
    for (size_t i = from; i < json_array_size (fb->out); i++) {
        const char *name = fake_event_name (json_array_get (fb->out, i));
        int n = snprintf (fb->names + len, sizeof (fb->names) - len, "%s%s",
                          i > from ? "," : "", name);
        if (n < 0 || (size_t)n >= sizeof (fb->names) - len)
            break;
        len += n;
    }
    return fb->names;
}

/* Context of the nth (0-based) event called name since `from`, or NULL
 * (also when that event has no context). */
static inline json_t *
fake_event (struct fake *fb, size_t from, const char *name, int nth)
{
    for (size_t i = from; i < json_array_size (fb->out); i++) {
        json_t *e = json_array_get (fb->out, i);
        if (strcmp (fake_event_name (e), name) == 0 && nth-- == 0)
            return fake_event_context (e);
    }
    return NULL;
}

/* Number of events called name since `from`. */
static inline int fake_count (struct fake *fb, size_t from, const char *name)
{
    int n = 0;
    for (size_t i = from; i < json_array_size (fb->out); i++)
        if (strcmp (fake_event_name (json_array_get (fb->out, i)), name) == 0)
            n++;
    return n;
}

/* The most recent process of `phase` working for `rank`, or NULL. */
static inline const struct job_proc *
fake_find (struct fake *fb, enum proc_phase phase, uint32_t rank)
{
    const struct job_proc *found = NULL;
    for (size_t i = 0; i < job_nprocs (fb->job); i++) {
        const struct job_proc *p = job_proc_at (fb->job, i);
        if (p->phase == phase && idset_test (p->ranks, rank))
            found = p;
    }
    return found;
}

/* The backend reports that execid was spawned. */
static inline int fake_spawn (struct fake *fb, const char *execid)
{
    pid_t pid = fb->next_pid++;
    int rc = job_proc_spawned (fb->job, &fb->ctx, execid, pid,
                               50000ULL + (unsigned long long)pid, "boot-1",
                               fb->out);
    fake_walk (fb);
    return rc;
}

/* Spawn every process that is still an intent. Returns how many, or -1. */
static inline int fake_spawn_all (struct fake *fb)
{
    int n = 0;
    /* by index: a spawn may emit events that grow the process table */
    for (size_t i = 0; i < job_nprocs (fb->job); i++) {
        const struct job_proc *p = job_proc_at (fb->job, i);
        char execid[EXECID_LEN + 1];
        if (p->state != PROC_INTENT)
            continue;
        memcpy (execid, p->execid, sizeof (execid));
        if (fake_spawn (fb, execid) < 0)
            return -1;
        n++;
    }
    return n;
}

enum fake_fate { FAKE_EXIT, FAKE_LOST, FAKE_FAIL };

/* Decide the fate of the process of phase/rank: exit with status, lost
 * (note), or failed to start (note). -1 if there is no such process or
 * the job refused the report. */
static inline int fake_end (struct fake *fb,
                            enum proc_phase phase,
                            uint32_t rank,
                            enum fake_fate fate,
                            int status,
                            const char *note)
{
    const struct job_proc *p = fake_find (fb, phase, rank);
    char execid[EXECID_LEN + 1];
    int rc;

    if (!p)
        return -1;
    memcpy (execid, p->execid, sizeof (execid));
    if (fate == FAKE_EXIT)
        rc = job_proc_exited (fb->job, &fb->ctx, execid,
                              &(struct job_proc_end){.status = status},
                              fb->out);
    else if (fate == FAKE_LOST)
        rc = job_proc_lost (fb->job, &fb->ctx, execid, note, fb->out);
    else
        rc = job_proc_failed (fb->job, &fb->ctx, execid, note, fb->out);
    fake_walk (fb);
    return rc;
}

static inline int
fake_exit (struct fake *fb, enum proc_phase phase, uint32_t rank, int status)
{
    return fake_end (fb, phase, rank, FAKE_EXIT, status, NULL);
}

/* Exit every running process of phase with status. Returns how many. */
static inline int
fake_exit_phase (struct fake *fb, enum proc_phase phase, int status)
{
    char (*ids)[EXECID_LEN + 1];
    size_t n = 0, nprocs = job_nprocs (fb->job);
    int rc = 0;

    /* collect first: each exit may append processes (epilog intents) */
    if (!(ids = calloc (nprocs ? nprocs : 1, sizeof (*ids))))
        return -1;
    for (size_t i = 0; i < nprocs; i++) {
        const struct job_proc *p = job_proc_at (fb->job, i);
        if (p->phase == phase && p->state == PROC_RUNNING)
            memcpy (ids[n++], p->execid, EXECID_LEN + 1);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = job_proc_exited (fb->job, &fb->ctx, ids[i],
                              &(struct job_proc_end){.status = status},
                              fb->out);
        fake_walk (fb);
    }
    free (ids);
    return rc < 0 ? -1 : (int)n;
}

/* Move the clock to `now` and let the job handle what is due. */
static inline int fake_advance (struct fake *fb, double now)
{
    fb->ctx.now = now;
    int rc = job_advance (fb->job, &fb->ctx, fb->out);
    fake_walk (fb);
    return rc;
}

/* Comma-joined signal numbers delivered since signal index `from`, each
 * with its reason: "15/terminate,9/kill". Points into fb->names. */
static inline const char *fake_signals (struct fake *fb, int from)
{
    size_t len = 0;
    fb->names[0] = '\0';
    for (int i = from; i < fb->nsigs; i++) {
        int n = snprintf (fb->names + len, sizeof (fb->names) - len, "%s%d/%s",
                          i > from ? "," : "", fb->sigs[i].signum,
                          fb->sigs[i].reason);
        if (n < 0 || (size_t)n >= sizeof (fb->names) - len)
            break;
        len += n;
    }
    return fb->names;
}

#endif /* CAIRN_TEST_FAKEBACKEND_H */
