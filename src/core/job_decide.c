/* job_decide.c - what a job does next.
 *
 * Inputs (a process outcome, a request, the clock) emit the events that
 * record them, then step() takes every decision the new state allows,
 * until none is left. Every condition step() tests is recorded by the
 * event it emits, so running it again emits nothing: that makes it safe
 * to call after any input and after a replay.
 *
 * The phase rules (the states and events of job.h's table):
 *   NEW      -> prolog-start + prolog intents, or start + shell intents
 *   PROLOG   -> when every prolog process is done: conclude (fatal,
 *               tolerated, or ok): prolog-finish (STARTING), then start
 *               (RUN), cleanup (CLEANUP) or, after a tolerated failure in
 *               a job with hold-on-shrink, `hold` (HELD)
 *   HELD     -> the client's `resume` starts the shells; a fatal
 *               exception cleans the held ranks up instead
 *   RUN      -> when every shell is done: finish, cleanup of the run ranks
 *   CLEANUP  -> epilogs; releases paced by release-after; the final
 *               release and clean once every rank is done
 * A fatal exception terminates the running phase's processes (the prolog's
 * and epilog's only if their cancel-on-exception says so).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/escalate.h"
#include "core/jobid.h"
#include "core/utf8.h"
#include "core/job_private.h"

static const char *phase_name[] = {"prolog", "shell", "epilog"};

/* The job's id as Flux shows it (F58), for the drain reasons and notes a
 * site reads beside Flux's own (flux resource drain). */
struct f58 {
    char s[JOBID_STRLEN];
};
static struct f58 job_f58 (const struct job *job)
{
    struct f58 f;
    if (jobid_encode_f58 (job->id, f.s, sizeof (f.s)) < 0)
        snprintf (f.s, sizeof (f.s), "%ju", (uintmax_t)job->id);
    return f;
}

static int step (struct job *job, const struct job_ctx *ctx, json_t *out);
static bool tolerable (const struct job *job, const struct job_proc *p);

/* ---- small emitters ---- */

static json_t *ranks_str (const struct idset *ranks)
{
    char *s = idset_encode (ranks);
    json_t *o = s ? json_string (s) : NULL;
    free (s);
    return o;
}

static int emit_intent (struct job *job,
                        const struct job_ctx *ctx,
                        json_t *out,
                        enum proc_phase phase,
                        const struct idset *ranks)
{
    char execid[EXECID_LEN + 1];
    ctx->new_execid (execid, ctx->arg);
    return job_emit (job, ctx, out, "proc-intent",
                     json_pack ("{s:s s:s s:o}", "execid", execid, "phase",
                                phase_name[phase], "ranks", ranks_str (ranks)));
}

/* One intent per rank, or one for them all. */
static int emit_intents (struct job *job,
                         const struct job_ctx *ctx,
                         json_t *out,
                         enum proc_phase phase,
                         const struct idset *ranks,
                         bool per_rank)
{
    if (!per_rank)
        return emit_intent (job, ctx, out, phase, ranks);
    struct idset *one = idset_create ();
    if (!one)
        return -1;
    for (uint32_t r = idset_first (ranks); r != IDSET_INVALID_ID;
         r = idset_next (ranks, r)) {
        idset_clear (one, idset_first (one));
        idset_set (one, r);
        if (emit_intent (job, ctx, out, phase, one) < 0) {
            idset_destroy (one);
            return -1;
        }
    }
    idset_destroy (one);
    return 0;
}

static int emit_signal (struct job *job,
                        const struct job_ctx *ctx,
                        json_t *out,
                        const struct job_proc *p,
                        int signum,
                        const char *reason,
                        bool kill)
{
    json_t *o = json_pack ("{s:s s:i s:s}", "execid", p->execid, "signum",
                           signum, "reason", reason);
    if (o && kill)
        json_object_set_new (o, "kill", json_true ());
    return job_emit (job, ctx, out, "proc-signal", o);
}

static int emit_exception (struct job *job,
                           const struct job_ctx *ctx,
                           json_t *out,
                           const char *type,
                           int severity,
                           const char *note,
                           const struct idset *ranks)
{
    json_t *o = json_pack ("{s:s s:i s:s}", "type", type, "severity", severity,
                           "note", note ? note : "");
    if (o && ranks)
        json_object_set_new (o, "ranks", ranks_str (ranks));
    return job_emit (job, ctx, out, "exception", o);
}

static json_t *hosts_str (const struct job *job, const struct idset *ranks)
{
    char *s = job_hosts (job, ranks);
    json_t *o = s ? json_string (s) : NULL;
    free (s);
    return o;
}

static int emit_drain (struct job *job,
                       const struct job_ctx *ctx,
                       json_t *out,
                       const struct idset *ranks,
                       const char *reason)
{
    json_t *o =
        json_pack ("{s:o s:s}", "ranks", ranks_str (ranks), "reason", reason);
    json_t *hosts = hosts_str (job, ranks);
    if (o && hosts)
        json_object_set_new (o, "hosts", hosts);
    else
        json_decref (hosts);
    return job_emit (job, ctx, out, "drain", o);
}

static int emit_cleanup (struct job *job,
                         const struct job_ctx *ctx,
                         json_t *out,
                         const struct idset *ranks)
{
    /* The epilog runs where the job did something: not for a job refused
     * before its prolog or shells were even attempted. */
    bool epilog =
        job->cfg.epilog.command && (job->prolog_started || job->started);
    return job_emit (
        job, ctx, out, "cleanup",
        json_pack ("{s:o s:b}", "ranks", ranks_str (ranks), "epilog", epilog));
}

/* ---- describing outcomes ---- */

static bool proc_failed (const struct job_proc *p)
{
    return p->lost || p->error || p->timed_out || p->status != 0;
}

static void describe (const struct job_proc *p, char *buf, size_t len)
{
    if (p->lost)
        snprintf (buf, len, "%s", p->note ? p->note : "lost");
    else if (p->error)
        snprintf (buf, len, "failed to start: %s", p->note ? p->note : "");
    else if (p->timed_out)
        snprintf (buf, len, "timed out");
    else if (p->note)
        snprintf (buf, len, "%s", p->note);
    else if (WIFEXITED (p->status))
        snprintf (buf, len, "exit %d", WEXITSTATUS (p->status));
    else if (WIFSIGNALED (p->status))
        snprintf (buf, len, "killed by signal %d", WTERMSIG (p->status));
    else
        snprintf (buf, len, "wait status %d", p->status);
}

static const char *rank_word (const struct idset *ranks)
{
    return idset_count (ranks) == 1 ? "rank" : "ranks";
}

/* ---- termination and escalation ---- */

/* What the escalation's schedule reads of p (escalate.h knows no job). */
static struct esc_signals esc_signals_of (const struct job_proc *p)
{
    return (struct esc_signals){.t_term = p->t_term,
                                .t_signal = p->t_signal,
                                .nkills = p->nkills,
                                .nshell_kills = p->nshell_kills};
}

/* A terminating process's next escalation step (escalate.h). */
static struct esc_step esc_next (const struct job *job,
                                 const struct job_proc *p)
{
    double kt = p->phase == PHASE_PROLOG ? job->cfg.prolog.kill_timeout
                                         : job->cfg.epilog.kill_timeout;
    struct esc_signals sig = esc_signals_of (p);
    return escalate_next (&job->cfg.exec, p->phase == PHASE_SHELL, kt, &sig);
}

/* After p's last kill-shell, as journaled: given up at once? */
static bool esc_spent (const struct exec_config *x, const struct job_proc *p)
{
    struct esc_signals sig = esc_signals_of (p);
    return escalate_spent (x, &sig);
}

static double proc_deadline (const struct job *job, const struct job_proc *p)
{
    if (p->state != PROC_RUNNING)
        return 0;
    if (p->terminating)
        return esc_next (job, p).due;
    double timeout = p->phase == PHASE_PROLOG   ? job->cfg.prolog.timeout
                     : p->phase == PHASE_EPILOG ? job->cfg.epilog.timeout
                                                : 0;
    if (timeout > 0 && isfinite (timeout))
        return p->t_spawn + timeout;
    return 0;
}

/* Start terminating every running process of `phase`. */
static int terminate_phase (struct job *job,
                            const struct job_ctx *ctx,
                            json_t *out,
                            enum proc_phase phase,
                            int signum,
                            const char *reason)
{
    if (job->nactive[phase] == 0)
        return 0;
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *p = &job->procs[i];
        if (p->phase == phase && p->state == PROC_RUNNING && !p->terminating) {
            if (emit_signal (job, ctx, out, p, signum, reason, false) < 0)
                return -1;
        }
    }
    return 0;
}

/* The running shells whose last termination signal was the time limit's
 * SIGALRM get signum (reason "terminate"): once, since it becomes their
 * last one. */
static int terminate_expired (struct job *job,
                              const struct job_ctx *ctx,
                              json_t *out,
                              int signum)
{
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *p = &job->procs[i];
        if (p->phase == PHASE_SHELL && p->state == PROC_RUNNING &&
            p->terminating && p->term_signum == SIGALRM && p->nkills == 0 &&
            emit_signal (job, ctx, out, p, signum, "terminate", false) < 0)
            return -1;
    }
    return 0;
}

/* A process the escalation gave up on: lost, its ranks drained, and the
 * job moves on. */
static int give_up (struct job *job,
                    const struct job_ctx *ctx,
                    json_t *out,
                    struct job_proc *p);

static int proc_timers (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    const struct exec_config *x = &job->cfg.exec;
    for (size_t i = 0; i < job->nprocs; i++) {
        struct job_proc *p = &job->procs[i];
        double due = proc_deadline (job, p);
        if (due == 0 || ctx->now < due)
            continue;
        if (!p->terminating) { /* prolog/epilog timeout */
            if (emit_signal (job, ctx, out, p, x->term_signal, "timeout",
                             false) < 0)
                return -1;
            continue;
        }
        switch (esc_next (job, p).action) {
        case ESC_GIVE_UP:
            if (give_up (job, ctx, out, p) < 0)
                return -1;
            break;
        case ESC_KILL:
            if (emit_signal (job, ctx, out, p, x->kill_signal, "kill", true) <
                0)
                return -1;
            break;
        case ESC_KILL_SHELL:
            /* the max-kill-count-th is the last: job-exec gives up with it */
            if (emit_signal (job, ctx, out, p, x->kill_signal, "kill-shell",
                             true) < 0 ||
                (esc_spent (x, p) && give_up (job, ctx, out, p) < 0))
                return -1;
            break;
        }
    }
    return 0;
}

/* ---- consequences of one process ending ---- */

/* A shell's place among the job's shells, in rank order: flux-shell's
 * shell rank (0 is the leader). */
static int shell_index (const struct job *job, uint32_t rank)
{
    struct idset *below = idset_create ();
    int n = 0;
    if (!below)
        return -1;
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *q = &job->procs[i];
        if (q->phase == PHASE_SHELL && q->rank < rank)
            idset_add (below, q->ranks);
    }
    n = (int)idset_count (below);
    idset_destroy (below);
    return n;
}

/* shell-end (jobspec shell-leader only): what a client that runs its own
 * shells on top of cairn's needs to know of each one's end (cairn-exec.so tells
 * flux-shell's leader of a lost shell, and times the others after the leader's
 * end): the rank, its shell rank, how it ended, whether cairn stopped it,
 * which shells still run, and when it was spawned (a shell that lived
 * through its broker's restart lost contact with it). Decided here, from the
 * fold, so that a replay streams the same sequence (the stream's `since` counts
 * it). */
static int emit_shell_end (struct job *job,
                           const struct job_ctx *ctx,
                           json_t *out,
                           const struct job_proc *p,
                           int index)
{
    struct idset *active = idset_create ();
    if (!active)
        return -1;
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *q = &job->procs[i];
        if (q->phase == PHASE_SHELL && q->state != PROC_DONE)
            idset_add (active, q->ranks);
    }
    json_t *o = json_pack (
        "{s:s s:i s:i s:b s:b s:o}", "execid", p->execid, "rank", (int)p->rank,
        "shell-rank", index, "critical", idset_test (job->critical, p->rank),
        "killed", p->terminating, "active", ranks_str (active));
    if (o && p->t_spawn > 0)
        json_object_set_new (o, "t-spawn", json_real (p->t_spawn));
    idset_destroy (active);
    if (o && (p->lost || p->error)) {
        json_object_set_new (o, p->lost ? "lost" : "unstarted", json_true ());
        json_object_set_new (o, "note", json_string (p->note ? p->note : ""));
    } else if (o)
        json_object_set_new (o, "status", json_integer (p->status));
    return job_emit (job, ctx, out, "shell-end", o);
}

/* With jobspec shell-leader, a shell killed by a signal cairn did not
 * send is what Flux's job-exec makes of it: the leader's death ends the
 * job (the others would wait for it for ever), another's is a node
 * failure unless its rank is critical (then the leader, told by the
 * client, decides). */
static int shell_signaled (struct job *job,
                           const struct job_ctx *ctx,
                           json_t *out,
                           const struct job_proc *p,
                           int index)
{
    char note[256];
    if (p->lost || p->error || p->terminating || !WIFSIGNALED (p->status) ||
        job->fatal)
        return 0;
    char *host = job_hosts (job, p->ranks);
    snprintf (note, sizeof (note), "shell rank %d (on %s): %s", index,
              host ? host : "?", strsignal (WTERMSIG (p->status)));
    free (host);
    if (index == 0)
        return emit_exception (job, ctx, out, "exec", 0, note, p->ranks);
    if (!idset_test (job->critical, p->rank))
        return emit_exception (job, ctx, out, "node-failure", 2, note,
                               p->ranks);
    return 0;
}

static int proc_ended (struct job *job,
                       const struct job_ctx *ctx,
                       json_t *out,
                       const struct job_proc *p)
{
    char what[160], note[320];
    char *rs = idset_encode (p->ranks);
    int rc = -1;

    if (!rs)
        return -1;
    describe (p, what, sizeof (what));
    if (p->lost) {
        snprintf (note, sizeof (note), "%s for job %s: %s",
                  phase_name[p->phase], job_f58 (job).s, what);
        if (emit_drain (job, ctx, out, p->ranks, note) < 0)
            goto done;
    }
    switch (p->phase) {
    case PHASE_PROLOG: /* judged when the whole prolog is done */
        /* but a hung node is not healthy (Flux's perilog drains these
         * too): a prolog that timed out, had to be killed after a cancel,
         * or died of a signal cairn did not send. A cancel it obeyed is
         * not the node's fault. */
        if (p->lost)
            break;
        if (p->timed_out)
            snprintf (note, sizeof (note), "prolog timed out for job %s",
                      job_f58 (job).s);
        else if (p->nkills > 0)
            snprintf (note, sizeof (note),
                      "prolog canceled then killed for job %s",
                      job_f58 (job).s);
        else if (WIFSIGNALED (p->status) && !p->terminating)
            snprintf (note, sizeof (note), "prolog for job %s: %s",
                      job_f58 (job).s, what);
        /* a per-rank prolog is the node's health check: one that failed
         * (or could not start) while the job was not canceled drains its
         * rank, as Flux's perilog does, unless the failure is one the
         * site tolerates or an outside service marked the rank (those are
         * drained with the tolerated ones) */
        else if (job->cfg.prolog.per_rank && !job->fatal &&
                 (p->error || p->status != 0) && !tolerable (job, p) &&
                 !idset_test (job->marked, p->rank))
            snprintf (note, sizeof (note), "prolog failed for job %s: %s",
                      job_f58 (job).s, what);
        else
            break;
        if (emit_drain (job, ctx, out, p->ranks, note) < 0)
            goto done;
        break;
    case PHASE_SHELL: {
        bool leader =
            job->state == JOB_RUN && jobspec_shell_leader (job->jobspec);
        int index = leader ? shell_index (job, p->rank) : 0;
        if (index < 0)
            goto done;
        if (p->lost || p->error) {
            snprintf (note, sizeof (note), "shell on %s %s: %s",
                      rank_word (p->ranks), rs, what);
            if (idset_test (job->critical, p->rank)) {
                if (emit_exception (job, ctx, out, "exec", 0, note, p->ranks) <
                    0)
                    goto done;
            } else if (emit_exception (job, ctx, out, "node-failure", 2, note,
                                       p->ranks) < 0)
                goto done;
        } else if (p->leftover > 0 && !job->fatal &&
                   !(leader && WIFSIGNALED (p->status))) {
            /* It ended while its tasks still ran (flux-shell whose broker
             * went away exits 0 and leaves them): they were killed, and
             * the job did not succeed, whatever the shell's status says.
             * After a fatal exception (a cancel, the time limit) that is
             * expected. A leader's shell killed by a signal is a lost
             * shell whatever it left (below): its job fails as with
             * job-exec, through the leader (flux-core's t2614, where a
             * task kills its own shell and exits a moment later). */
            snprintf (note, sizeof (note),
                      "shell on %s %s exited (%s) while %d other process%s "
                      "of its session still ran; they were killed",
                      rank_word (p->ranks), rs, what, p->leftover,
                      p->leftover == 1 ? "" : "es");
            if (emit_exception (job, ctx, out, "exec", 0, note, p->ranks) < 0)
                goto done;
        } else if (leader && shell_signaled (job, ctx, out, p, index) < 0)
            goto done;
        /* after the exceptions it caused: a client that acts on the end
         * knows by then whether the job is ending anyway */
        if (leader && emit_shell_end (job, ctx, out, p, index) < 0)
            goto done;
        break;
    }
    case PHASE_EPILOG:
        if (!proc_failed (p))
            break;
        snprintf (note, sizeof (note), "epilog failed on %s %s: %s",
                  rank_word (p->ranks), rs, what);
        if (emit_exception (job, ctx, out, "epilog", 2, note, p->ranks) < 0)
            goto done;
        if (!p->lost) {
            snprintf (note, sizeof (note), "epilog failed for job %s: %s",
                      job_f58 (job).s, what);
            if (emit_drain (job, ctx, out, p->ranks, note) < 0)
                goto done;
        }
        break;
    }
    rc = 0;
done:
    free (rs);
    return rc;
}

static int give_up (struct job *job,
                    const struct job_ctx *ctx,
                    json_t *out,
                    struct job_proc *p)
{
    const struct exec_config *x = &job->cfg.exec;
    char note[160];
    /* a shell's words are job-exec's (its drain reason and log line) */
    if (p->phase != PHASE_SHELL)
        snprintf (note, sizeof (note),
                  "unkillable: still running after %d kill signals", p->nkills);
    else if (x->max_kill_timeout > 0)
        snprintf (note, sizeof (note),
                  "unkillable user processes: exceeded max-kill-timeout "
                  "(%g s, %d kill signals)",
                  x->max_kill_timeout, p->nkills);
    else
        snprintf (note, sizeof (note),
                  "unkillable user processes: exceeded max kill count "
                  "(%d kill signals)",
                  p->nkills);
    if (job_emit (job, ctx, out, "proc-lost",
                  json_pack ("{s:s s:s}", "execid", p->execid, "note", note)) <
        0)
        return -1;
    return proc_ended (job, ctx, out, p);
}

/* ---- phase steps ---- */

static int start_shells (struct job *job,
                         const struct job_ctx *ctx,
                         json_t *out,
                         const struct idset *ranks)
{
    if (job_emit (job, ctx, out, "start", json_object ()) < 0)
        return -1;
    return emit_intents (job, ctx, out, PHASE_SHELL, ranks, true);
}

/* Largest known wait status of a phase's processes; -1 if some failed
 * with no status known and none is known. */
static int phase_status (const struct job *job, enum proc_phase phase)
{
    int status = 0;
    bool unknown = false;
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *p = &job->procs[i];
        if (p->phase != phase || p->state != PROC_DONE)
            continue;
        if (p->lost || p->error)
            unknown = true;
        else if (p->status > status)
            status = p->status;
    }
    return (status == 0 && unknown) ? -1 : status;
}

static bool tolerable (const struct job *job, const struct job_proc *p)
{
    if (p->lost || p->error || p->timed_out || !WIFEXITED (p->status))
        return false;
    int code = WEXITSTATUS (p->status);
    for (size_t i = 0; i < job->cfg.prolog.ntolerable; i++)
        if (job->cfg.prolog.tolerable_exit_codes[i] == code)
            return true;
    return false;
}

static int prolog_finish (struct job *job,
                          const struct job_ctx *ctx,
                          json_t *out,
                          int status)
{
    return job_emit (job, ctx, out, "prolog-finish",
                     json_pack ("{s:s s:i}", "description", "cairn.prolog",
                                "status", status));
}

static int prolog_fail (struct job *job,
                        const struct job_ctx *ctx,
                        json_t *out,
                        const char *note)
{
    int status = phase_status (job, PHASE_PROLOG);
    /* Flux raises the exception before posting prolog-finish */
    if (emit_exception (job, ctx, out, "prolog", 0, note, NULL) < 0 ||
        prolog_finish (job, ctx, out, status ? status : -1) < 0 ||
        emit_cleanup (job, ctx, out, job->all) < 0)
        return -1;
    return 0;
}

/* May a held job's shells start? Two gates: a hold for its client's
 * shrink (or return) opens on its resume, a hold only for the word
 * (`wait` "ready") never closed it; a hold-start job's shells also need
 * the word (its ready resume), before or during the hold. */
static bool held_may_start (const struct job *job)
{
    return (job->resumed || job->hold_ready_only) &&
           (job->ready || !jobspec_hold_start (job->jobspec));
}

/* Start the shells of ranks, or hold them (`hold`) when hold says so (a
 * shrink or the client's return comes first: its resume) or the job waits
 * for its client's word (jobspec hold-start) that has not come yet. */
static int start_or_hold (struct job *job,
                          const struct job_ctx *ctx,
                          json_t *out,
                          const struct idset *ranks,
                          bool hold)
{
    if (hold)
        return job_emit (job, ctx, out, "hold",
                         json_pack ("{s:o}", "ranks", ranks_str (ranks)));
    if (jobspec_hold_start (job->jobspec) && !job->ready)
        return job_emit (job, ctx, out, "hold",
                         json_pack ("{s:o s:s}", "ranks", ranks_str (ranks),
                                    "wait", "ready"));
    return start_shells (job, ctx, out, ranks);
}

static int
prolog_conclude (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    struct idset *fatal = idset_create ();
    struct idset *tol = idset_copy (job->marked);
    struct idset *rest = NULL;
    char what[160] = "", note[512];
    char *fs = NULL, *ts = NULL;
    int rc = -1;

    if (!fatal || !tol)
        goto done;
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *p = &job->procs[i];
        if (p->phase != PHASE_PROLOG || !proc_failed (p))
            continue;
        if (tolerable (job, p))
            idset_add (tol, p->ranks);
        else {
            if (idset_empty (fatal))
                describe (p, what, sizeof (what));
            idset_add (fatal, p->ranks);
        }
    }
    /* A rank an outside service marked failed is excluded and drained
     * however its prolog ends (on a dead node it is usually lost or timed
     * out): the job never runs there, so tolerating it is safe. */
    idset_subtract (fatal, job->marked);
    idset_subtract (tol, fatal);
    if (job->fatal) { /* canceled: the exception is already out */
        rc = prolog_finish (job, ctx, out, phase_status (job, PHASE_PROLOG)) <
                         0 ||
                     emit_cleanup (job, ctx, out, job->all) < 0
                 ? -1
                 : 0;
        goto done;
    }
    if (!idset_empty (fatal)) {
        if (!(fs = idset_encode (fatal)))
            goto done;
        snprintf (note, sizeof (note), "prolog failed on %s %s: %s",
                  rank_word (fatal), fs, what);
        rc = prolog_fail (job, ctx, out, note);
        goto done;
    }
    if (!idset_empty (tol)) {
        int allowed = jobspec_prolog_failures_allowed (job->jobspec);
        size_t n = idset_count (tol);
        if (!(ts = idset_encode (tol)))
            goto done;
        if (n > (size_t)allowed) {
            snprintf (note, sizeof (note),
                      "prolog failed on %zu %s (%s), more than the %d allowed",
                      n, rank_word (tol), ts, allowed);
            rc = prolog_fail (job, ctx, out, note);
            goto done;
        }
        if (idset_equal (tol, job->all)) {
            snprintf (note, sizeof (note), "prolog failed on every rank (%s)",
                      ts);
            rc = prolog_fail (job, ctx, out, note);
            goto done;
        }
        if (!(rest = idset_copy (job->all)))
            goto done;
        idset_subtract (rest, tol);
        snprintf (note, sizeof (note),
                  "prolog failed on %s %s (tolerated, %zu of %d allowed)%s%s",
                  rank_word (tol), ts, n, allowed, job->mark_note ? ": " : "",
                  job->mark_note ? job->mark_note : "");
        char reason[600];
        snprintf (reason, sizeof (reason), "job %s: %s", job_f58 (job).s, note);
        if (job_emit (job, ctx, out, "tolerate",
                      json_pack ("{s:o}", "ranks", ranks_str (tol))) < 0 ||
            emit_drain (job, ctx, out, tol, reason) < 0 ||
            emit_exception (job, ctx, out, "prolog", 2, note, tol) < 0 ||
            prolog_finish (job, ctx, out, 0) < 0 ||
            emit_cleanup (job, ctx, out, tol) < 0)
            goto done;
        /* Held: the client shrinks the job first; step_once() starts the
         * shells on `resume`, or cleans them up on a fatal exception. */
        rc = start_or_hold (job, ctx, out, rest,
                            jobspec_hold_on_shrink (job->jobspec));
        goto done;
    }
    if (prolog_finish (job, ctx, out, 0) < 0)
        goto done;
    /* its client (Flux's module, in a broker restart) is away: the shells
     * would start without the brokers and namespace they need, and fail
     * with nothing said. Held with every rank until it is back. */
    rc = start_or_hold (job, ctx, out, job->all,
                        jobspec_hold_on_shrink (job->jobspec) &&
                            ctx->client_away &&
                            ctx->client_away (job->id, ctx->arg));
done:
    idset_destroy (fatal);
    idset_destroy (tol);
    idset_destroy (rest);
    free (fs);
    free (ts);
    return rc;
}

static int run_finish (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    int status = 0;
    bool known = false;
    struct idset *lost = idset_create ();
    if (!lost)
        return -1;
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *p = &job->procs[i];
        if (p->phase != PHASE_SHELL)
            continue;
        if (p->lost || p->error)
            idset_add (lost, p->ranks);
        else {
            known = true;
            if (p->status > status)
                status = p->status;
        }
    }
    /* No shell's result known is never a success: 1 << 8 (exit 1), as
     * Flux reports an exception that carries no wait status. (A lost
     * non-critical rank beside shells that exited 0 is 0, as in Flux.) */
    if (!known && !idset_empty (lost))
        status = JOB_STATUS_UNKNOWN;
    /* Nor is a job a fatal exception ended, though its shells exited 0
     * (they obeyed the term signal): 1 << 8 as well, as job-exec reports
     * it; unless the exception carried the status. */
    if (job->fatal && status == 0)
        status = JOB_STATUS_UNKNOWN;
    if (job->exc_wait_status >= 0)
        status = job->exc_wait_status;
    json_t *o = json_pack ("{s:i}", "status", status);
    if (o && !idset_empty (lost))
        json_object_set_new (o, "lost-ranks", ranks_str (lost));
    idset_destroy (lost);
    if (job_emit (job, ctx, out, "finish", o) < 0)
        return -1;
    /* Every rank not yet in cleanup: the run ranks in any journal cairnd
     * writes (the tolerated ones are there already), and still every rank
     * if a damaged journal lost the shell intents after `start`. */
    struct idset *rest = idset_copy (job->all);
    if (!rest)
        return -1;
    idset_subtract (rest, job->cleanup);
    int rc = idset_empty (rest) ? 0 : emit_cleanup (job, ctx, out, rest);
    idset_destroy (rest);
    return rc;
}

static int
start_epilogs (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    if (idset_is_subset (job->epilog_ranks, job->epilog_covered))
        return 0;
    struct idset *pending = idset_copy (job->epilog_ranks);
    int rc = -1;
    if (!pending)
        return -1;
    idset_subtract (pending, job->epilog_covered);
    if (!job->epilog_started &&
        job_emit (job, ctx, out, "epilog-start",
                  json_pack ("{s:s}", "description", "cairn.epilog")) < 0)
        goto done;
    rc = emit_intents (job, ctx, out, PHASE_EPILOG, pending,
                       job->cfg.epilog.per_rank);
done:
    idset_destroy (pending);
    return rc;
}

static bool job_complete (const struct job *job)
{
    return job->state == JOB_CLEANUP && idset_equal (job->cleanup, job->all) &&
           idset_equal (job->done, job->all) && job->nactive[0] == 0 &&
           job->nactive[1] == 0 && job->nactive[2] == 0;
}

static int releases (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    struct idset *ready, *now = NULL;
    int rc = -1;

    if (job->final_released || !(ready = idset_copy (job->done)))
        return job->final_released ? 0 : -1;
    idset_subtract (ready, job->released);
    if (job_complete (job)) {
        if (job->epilog_started && !job->epilog_finished &&
            job_emit (job, ctx, out, "epilog-finish",
                      json_pack ("{s:s s:i}", "description", "cairn.epilog",
                                 "status", phase_status (job, PHASE_EPILOG))) <
                0)
            goto done;
        if (job_emit (job, ctx, out, "release",
                      json_pack ("{s:o s:b}", "ranks", ranks_str (ready),
                                 "final", 1)) < 0 ||
            job_emit (job, ctx, out, "clean", json_object ()) < 0)
            goto done;
        rc = 0;
        goto done;
    }
    if (idset_empty (ready)) {
        rc = 0;
        goto done;
    }
    double ra = job->cfg.release_after;
    if (ra == 0 || (ra > 0 && ctx->now >= job->t_first_done + ra))
        now = idset_copy (ready);
    else /* ranks left out after a tolerated prolog failure go at once */
        now = idset_intersect (ready, job->tolerated);
    if (!now)
        goto done;
    if (!idset_empty (now) &&
        job_emit (
            job, ctx, out, "release",
            json_pack ("{s:o s:b}", "ranks", ranks_str (now), "final", 0)) < 0)
        goto done;
    rc = 0;
done:
    idset_destroy (ready);
    idset_destroy (now);
    return rc;
}

/* A journal cut between prolog-finish and what follows it (cairnd never
 * writes one: they are one batch): the ranks not in cleanup start, or are
 * cleaned up after a fatal exception. */
static int
starting_resume (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    struct idset *rest = idset_copy (job->all);
    int rc = -1;
    if (!rest)
        return -1;
    idset_subtract (rest, job->cleanup);
    if (job->fatal)
        rc = emit_cleanup (job, ctx, out, rest);
    else
        rc = start_shells (job, ctx, out, rest);
    idset_destroy (rest);
    return rc;
}

static int step_once (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    const struct exec_config *ec = &job->cfg.exec;

    switch (job->state) {
    case JOB_NEW:
        if (job->fatal)
            return emit_cleanup (job, ctx, out, job->all);
        if (job->cfg.prolog.command) {
            if (job_emit (job, ctx, out, "prolog-start",
                          json_pack ("{s:s}", "description", "cairn.prolog")) <
                0)
                return -1;
            return emit_intents (job, ctx, out, PHASE_PROLOG, job->all,
                                 job->cfg.prolog.per_rank);
        }
        return start_or_hold (job, ctx, out, job->all, false);
    case JOB_PROLOG:
        if (job->fatal && job->cfg.prolog.cancel_on_exception &&
            terminate_phase (job, ctx, out, PHASE_PROLOG, ec->term_signal,
                             "terminate") < 0)
            return -1;
        if (job->nactive[PHASE_PROLOG] == 0)
            return prolog_conclude (job, ctx, out);
        return 0;
    case JOB_RUN:
        if (!job->expired && job_time_limit (job) > 0 &&
            ctx->now >= job_time_limit (job) &&
            emit_exception (job, ctx, out, "timeout", 0,
                            "resource allocation expired", NULL) < 0)
            return -1;
        if (job->fatal) {
            bool expired = strcmp (job->fatal_type, "timeout") == 0;
            if (terminate_phase (job, ctx, out, PHASE_SHELL,
                                 expired ? SIGALRM : ec->term_signal,
                                 expired ? "expired" : "terminate") < 0)
                return -1;
            /* canceled after the time limit: SIGALRM asked the shells to
             * end; a cancel tells them with the term signal, as job-exec
             * does, rather than leave them to the kill signal */
            if (job->fatal_after_expiry &&
                terminate_expired (job, ctx, out, ec->term_signal) < 0)
                return -1;
        }
        if (job->nactive[PHASE_SHELL] == 0)
            return run_finish (job, ctx, out);
        return 0;
    case JOB_STARTING:
        /* prolog_conclude went on in the same decision; only a damaged
         * journal ends here: go on as it would have */
        return starting_resume (job, ctx, out);
    case JOB_HELD:
        if (job->fatal) /* canceled while held: no shell ever ran */
            return emit_cleanup (job, ctx, out, job->held);
        if (held_may_start (job))
            return start_shells (job, ctx, out, job->held);
        return 0;
    case JOB_CLEANUP:
        if (job->fatal && job->cfg.epilog.cancel_on_exception &&
            terminate_phase (job, ctx, out, PHASE_EPILOG, ec->term_signal,
                             "terminate") < 0)
            return -1;
        return 0;
    case JOB_DONE:
        return 0;
    }
    return 0;
}

static int step (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    size_t n;
    do {
        n = json_array_size (out);
        if (job->state == JOB_DONE)
            break;
        if (step_once (job, ctx, out) < 0 ||
            start_epilogs (job, ctx, out) < 0 || releases (job, ctx, out) < 0)
            return -1;
    } while (json_array_size (out) != n);
    return 0;
}

/* ---- inputs ---- */

void job_set_unprivileged (struct job *job)
{
    if (job->nevents == 0)
        job->unprivileged = true;
}

int job_set_imp (struct job *job, const char *imp, uint32_t runas)
{
    char *s;
    if (job->nevents > 0) {
        errno = EEXIST;
        return -1;
    }
    if (!(s = strdup (imp)))
        return -1;
    free (job->imp);
    job->imp = s;
    job->imp_uid = runas;
    return 0;
}

/* The job's config: jc, with what the jobspec's
 * attributes.system.cairn.config sets over it (a resource manager's per
 * job settings, e.g. Flux's [exec] kill-timeout); the encoded result is
 * what the accept event snapshots. NULL with err set when a user sets it
 * (EPERM) or it is invalid (EINVAL). */
static json_t *accept_config (const struct job *job,
                              const json_t *jobspec,
                              const struct job_config *jc,
                              struct cairn_error *err)
{
    static const char *where = "attributes.system.cairn.config";
    const json_t *over = json_object_get (
        json_object_get (
            json_object_get (json_object_get (jobspec, "attributes"), "system"),
            "cairn"),
        "config");
    struct job_config mine;
    json_t *o;

    if (!over) {
        if (!(o = job_config_encode (jc)))
            errset (err, ENOMEM, "cannot encode the job's config");
        return o;
    }
    if (job->unprivileged) {
        errset (err, EPERM,
                "jobspec: %s: only a resource manager (root or the "
                "service's uid) sets a job's config",
                where);
        return NULL;
    }
    if (job_config_copy (&mine, jc) < 0) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (job_config_override (&mine, over, where, err) < 0) {
        errprefix (err, "jobspec");
        o = NULL;
    } else if (!(o = job_config_encode (&mine)))
        errset (err, errno, "jobspec: %s: cannot encode the job's config",
                where);
    job_config_free (&mine);
    return o;
}

int job_accept (struct job *job,
                const struct job_ctx *ctx,
                uint32_t userid,
                const json_t *R,
                const json_t *jobspec,
                const struct job_config *jc,
                json_t *out,
                struct cairn_error *err)
{
    struct rv1 *r;
    struct jobspec *js;
    json_t *config;

    if (job->nevents > 0)
        return errset (err, EEXIST, "job %ju already exists",
                       (uintmax_t)job->id);
    if (!(r = rv1_decode (R, err)))
        return -1;
    if (!(js = jobspec_decode (jobspec, err)) ||
        jobspec_check_ranks (js, rv1_ranks (r), err) < 0) {
        rv1_destroy (r);
        jobspec_destroy (js);
        return -1;
    }
    rv1_destroy (r);
    jobspec_destroy (js);
    if (!(config = accept_config (job, jobspec, jc, err)))
        return -1;
    /* "privileged" first, only when false: a reader that scans the start
     * of each accept line (the quota's startup count, quota.c) finds
     * it there, ahead of a jobspec of any size */
    json_t *rest = json_pack ("{s:i s:O s:O s:o}", "userid", (int)userid, "R",
                              R, "jobspec", jobspec, "config", config);
    json_t *o = job->unprivileged ? json_pack ("{s:b}", "privileged", 0)
                                  : json_object ();
    if (rest && job->imp &&
        json_object_set_new (rest, "imp",
                             json_pack ("{s:s s:I}", "path", job->imp, "uid",
                                        (json_int_t)job->imp_uid)) < 0) {
        json_decref (rest);
        rest = NULL;
    }
    if (!rest || !o || json_object_update (o, rest) < 0) {
        json_decref (rest);
        json_decref (o);
        return errset (err, ENOMEM, "cannot record the job");
    }
    json_decref (rest);
    if (job_emit (job, ctx, out, "accept", o) < 0)
        return errset (err, errno, "cannot record the job");
    char note[200] = "";
    if (!ctx->multiuser && userid != ctx->owner_uid)
        snprintf (note, sizeof (note),
                  "this cairnd runs as uid %u, not root: it runs jobs of uid "
                  "%u only, not %u",
                  (unsigned)ctx->owner_uid, (unsigned)ctx->owner_uid,
                  (unsigned)userid);
    else if (ctx->multiuser && ctx->user_known &&
             !ctx->user_known (userid, ctx->arg))
        snprintf (note, sizeof (note), "no user with uid %u on this host",
                  (unsigned)userid);
    if (note[0] && emit_exception (job, ctx, out, "exec", 0, note, NULL) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_proc_spawned_on (struct job *job,
                         const struct job_ctx *ctx,
                         const char *execid,
                         pid_t pid,
                         unsigned long long starttime,
                         const char *bootid,
                         const char *host,
                         json_t *out)
{
    struct job_proc *p = job_proc_lookup (job, execid);
    json_t *o;
    if (!p)
        return -1;
    if (p->state != PROC_INTENT) {
        errno = EINVAL;
        return -1;
    }
    o = json_pack ("{s:s s:I s:I s:s}", "execid", execid, "pid",
                   (json_int_t)pid, "starttime", (json_int_t)starttime,
                   "bootid", bootid);
    if (o && host)
        json_object_set_new (o, "host", json_string (host));
    if (job_emit (job, ctx, out, "proc-spawn", o) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_proc_spawned (struct job *job,
                      const struct job_ctx *ctx,
                      const char *execid,
                      pid_t pid,
                      unsigned long long starttime,
                      const char *bootid,
                      json_t *out)
{
    return job_proc_spawned_on (job, ctx, execid, pid, starttime, bootid,
                                NULL, out);
}

int job_proc_unstarted (struct job *job,
                        const struct job_ctx *ctx,
                        const char *execid,
                        const char *note,
                        json_t *out)
{
    struct job_proc *p = job_proc_lookup (job, execid);
    if (!p)
        return -1;
    if (p->state != PROC_RUNNING) {
        errno = EINVAL;
        return -1;
    }
    return job_emit (job, ctx, out, "proc-unstarted",
                     json_pack ("{s:s s:s}", "execid", execid, "note", note));
}

/* A process ended with no status: never started (proc-fail) or outcome
 * unknown (proc-lost). */
static int proc_no_status (struct job *job,
                           const struct job_ctx *ctx,
                           const char *execid,
                           const char *name,
                           const char *note,
                           json_t *out)
{
    struct job_proc *p = job_proc_lookup (job, execid);
    if (!p)
        return -1;
    if (p->state == PROC_DONE)
        return 0;
    if (job_emit (job, ctx, out, name,
                  json_pack ("{s:s s:s}", "execid", execid, "note", note)) <
            0 ||
        proc_ended (job, ctx, out, p) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_proc_failed (struct job *job,
                     const struct job_ctx *ctx,
                     const char *execid,
                     const char *reason,
                     json_t *out)
{
    return proc_no_status (job, ctx, execid, "proc-fail", reason, out);
}

/* Journal captured output as one log event per stream. */
static int emit_output (struct job *job,
                        const struct job_ctx *ctx,
                        json_t *out,
                        const struct job_proc *p,
                        const char *stream,
                        const char *data,
                        bool trunc)
{
    if (data && *data) {
        /* bytes that are not UTF-8 become U+FFFD; then "bytes" says how
         * many of the process's the data stands for (live output offsets,
         * cairn-protocol(7)) */
        bool clean;
        size_t len = strlen (data);
        json_t *s = utf8_string (data, len, true, NULL, &clean);
        json_t *o = json_pack ("{s:s s:I s:s s:o}", "stream", stream, "rank",
                               (json_int_t)p->rank, "phase",
                               phase_name[p->phase], "data", s);
        if (o && !clean)
            json_object_set_new (o, "bytes", json_integer ((json_int_t)len));
        if (job_emit (job, ctx, out, "log", o) < 0)
            return -1;
    }
    if (trunc && !job->output_truncated[p->phase]) {
        char msg[128];
        snprintf (msg, sizeof (msg),
                  "output truncated: the %s phase's cap of %zu bytes is "
                  "reached",
                  phase_name[p->phase], job->cfg.output_max_bytes);
        if (job_emit (job, ctx, out, "log",
                      json_pack ("{s:s s:I s:s s:s s:b}", "stream", "cairn",
                                 "rank", (json_int_t)p->rank, "phase",
                                 phase_name[p->phase], "data", msg, "truncated",
                                 1)) < 0)
            return -1;
    }
    return 0;
}

int job_proc_exited (struct job *job,
                     const struct job_ctx *ctx,
                     const char *execid,
                     const struct job_proc_end *end,
                     json_t *out)
{
    struct job_proc *p = job_proc_lookup (job, execid);
    if (!p)
        return -1;
    if (p->state == PROC_DONE) /* given up on earlier; ended after all */
        return 0;
    json_t *o =
        json_pack ("{s:s s:i}", "execid", execid, "status", end->status);
    if (o && end->error)
        json_object_set_new (o, "error", json_string (end->error));
    if (o && end->leftover > 0)
        json_object_set_new (o, "leftover", json_integer (end->leftover));
    if (emit_output (job, ctx, out, p, "stdout", end->outdata,
                     end->out_trunc) < 0 ||
        emit_output (job, ctx, out, p, "stderr", end->errdata,
                     end->err_trunc) < 0 ||
        job_emit (job, ctx, out, "proc-exit", o) < 0 ||
        proc_ended (job, ctx, out, p) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_proc_late (struct job *job,
                   const struct job_ctx *ctx,
                   const char *execid,
                   const json_t *report,
                   json_t *out)
{
    struct job_proc *p = job_proc_lookup (job, execid);
    json_t *o;
    if (!p)
        return -1;
    if (p->state != PROC_DONE || !p->lost) {
        errno = EINVAL;
        return -1;
    }
    if (p->late) {
        errno = EALREADY;
        return -1;
    }
    o = json_pack ("{s:s s:O}", "execid", execid, "state",
                   json_object_get (report, "state"));
    if (o) {
        static const char *const keep[] = {"status", "host", "error"};
        for (size_t i = 0; i < sizeof (keep) / sizeof (keep[0]); i++) {
            json_t *v = json_object_get (report, keep[i]);
            if (v)
                json_object_set (o, keep[i], v);
        }
    }
    return job_emit (job, ctx, out, "proc-late", o);
}

int job_proc_lost (struct job *job,
                   const struct job_ctx *ctx,
                   const char *execid,
                   const char *note,
                   json_t *out)
{
    return proc_no_status (job, ctx, execid, "proc-lost", note, out);
}

static int check_active (const struct job *job, struct cairn_error *err)
{
    if (job->state == JOB_DONE)
        return errset (err, EALREADY, "job %ju is already clean",
                       (uintmax_t)job->id);
    return 0;
}

int job_raise (struct job *job,
               const struct job_ctx *ctx,
               const char *type,
               int severity,
               const char *note,
               int wait_status,
               json_t *out,
               struct cairn_error *err)
{
    if (check_active (job, err) < 0)
        return -1;
    if (!type || !*type || strlen (type) >= 32)
        return errset (err, EINVAL, "type: must be a non-empty string");
    if (severity < 0 || severity > 7)
        return errset (err, EINVAL, "severity: must be 0..7, not %d", severity);
    json_t *o = json_pack ("{s:s s:i s:s}", "type", type, "severity", severity,
                           "note", note ? note : "");
    if (o && wait_status >= 0)
        json_object_set_new (o, "wait_status", json_integer (wait_status));
    if (job_emit (job, ctx, out, "exception", o) < 0)
        return errset (err, errno, "cannot record the exception");
    return step (job, ctx, out);
}

int job_kill (struct job *job,
              const struct job_ctx *ctx,
              int signum,
              json_t *out,
              struct cairn_error *err)
{
    if (check_active (job, err) < 0)
        return -1;
    if (signum <= 0 || signum >= 65)
        return errset (err, EINVAL, "signum: %d is not a signal", signum);
    if (job->state != JOB_RUN || job->nactive[PHASE_SHELL] == 0)
        return errset (err, EINVAL, "job %ju has no running shells",
                       (uintmax_t)job->id);
    for (size_t i = 0; i < job->nprocs; i++) {
        const struct job_proc *p = &job->procs[i];
        if (p->phase == PHASE_SHELL && p->state == PROC_RUNNING &&
            emit_signal (job, ctx, out, p, signum, "request", false) < 0)
            return -1;
    }
    return 0;
}

int job_set_expiration (struct job *job,
                        const struct job_ctx *ctx,
                        double expiration,
                        json_t *out,
                        struct cairn_error *err)
{
    if (check_active (job, err) < 0)
        return -1;
    if (!(expiration >= 0) || !isfinite (expiration))
        return errset (err, EINVAL, "expiration: must be >= 0");
    if (job_emit (job, ctx, out, "expiration",
                  json_pack ("{s:f}", "expiration", expiration)) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_fail_ranks (struct job *job,
                    const struct job_ctx *ctx,
                    const struct idset *ranks,
                    const char *note,
                    json_t *out,
                    struct cairn_error *err)
{
    if (check_active (job, err) < 0)
        return -1;
    if (job->state != JOB_PROLOG)
        return errset (err, EINVAL, "job %ju is not in its prolog (%s)",
                       (uintmax_t)job->id, job_state_name (job->state));
    if (idset_empty (ranks) || !idset_is_subset (ranks, job->all))
        return errset (err, EINVAL,
                       "ranks: not a non-empty subset of the "
                       "job's ranks");
    if (job_emit (job, ctx, out, "fail-ranks",
                  json_pack ("{s:o s:s}", "ranks", ranks_str (ranks), "note",
                             note ? note : "")) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_post (struct job *job,
              const struct job_ctx *ctx,
              const char *name,
              const json_t *context,
              json_t *out,
              struct cairn_error *err)
{
    size_t n = name ? strlen (name) : 0;

    if (check_active (job, err) < 0)
        return -1;
    if (n == 0 || n > JOB_POST_NAME_MAX ||
        strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789._-") != n)
        return errset (err, EINVAL,
                       "name: must be 1 to %d letters, digits, '.', '_' or "
                       "'-'",
                       JOB_POST_NAME_MAX);
    if (job_event_is_cairns (name))
        return errset (err, EINVAL, "name: \"%s\" is one of cairn's own events",
                       name);
    if (context && !json_is_object (context))
        return errset (err, EINVAL, "context: must be an object");
    /* the same event again (a service that lost the answer in a crash and
     * asks again) is recorded once */
    size_t i;
    json_t *prev, *empty = json_object ();
    json_array_foreach (json_object_get (job->posted, name), i, prev)
    {
        if (json_equal (prev, context ? context : empty)) {
            json_decref (empty);
            return 0;
        }
    }
    json_decref (empty);
    json_t *c = context ? json_deep_copy (context) : json_object ();
    if (!c || job_emit (job, ctx, out, name, c) < 0)
        return errset (err, ENOMEM, "out of memory");
    return 0;
}

int job_resume (struct job *job,
                const struct job_ctx *ctx,
                bool ready,
                json_t *out,
                struct cairn_error *err)
{
    if (check_active (job, err) < 0)
        return -1;
    if (ready) {
        /* the word of a hold-start job: in its prolog or held; said
         * before, not needed, or too late (the prolog failed or was
         * canceled, the shells started): nothing changes */
        if (!jobspec_hold_start (job->jobspec) || job->ready || job->started ||
            job->fatal || (job->state != JOB_PROLOG && job->state != JOB_HELD))
            return 0;
        if (job_emit (job, ctx, out, "resume",
                      json_pack ("{s:b}", "ready", 1)) < 0)
            return -1;
        return step (job, ctx, out);
    }
    if (idset_empty (job->held))
        return errset (err, EINVAL, "job %ju is not held", (uintmax_t)job->id);
    if (job->resumed || job->started || job->fatal)
        return 0; /* said before, or too late: nothing changes */
    if (job_emit (job, ctx, out, "resume", json_object ()) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_set_critical (struct job *job,
                      const struct job_ctx *ctx,
                      const struct idset *ranks,
                      json_t *out,
                      struct cairn_error *err)
{
    if (check_active (job, err) < 0)
        return -1;
    if (!idset_is_subset (ranks, job->all))
        return errset (err, EINVAL, "ranks: not a subset of the job's ranks");
    if (job_emit (job, ctx, out, "critical-ranks",
                  json_pack ("{s:o}", "ranks", ranks_str (ranks))) < 0)
        return -1;
    return step (job, ctx, out);
}

int job_advance (struct job *job, const struct job_ctx *ctx, json_t *out)
{
    if (job->state == JOB_DONE)
        return 0;
    if (proc_timers (job, ctx, out) < 0)
        return -1;
    return step (job, ctx, out);
}

double job_next_deadline (const struct job *job)
{
    double next = 0;
    if (job->state == JOB_DONE)
        return 0;
    for (size_t i = 0; i < job->nprocs; i++) {
        double d = proc_deadline (job, &job->procs[i]);
        if (d > 0 && (next == 0 || d < next))
            next = d;
    }
    double limit = job_time_limit (job);
    if (job->state == JOB_RUN && !job->expired && limit > 0 &&
        (next == 0 || limit < next))
        next = limit;
    if (job->cfg.release_after > 0 && job->t_first_done > 0 &&
        !idset_is_subset (job->done, job->released)) {
        double d = job->t_first_done + job->cfg.release_after;
        if (next == 0 || d < next)
            next = d;
    }
    return next;
}
