/* job.h - a job's state machine: pure, no I/O.
 *
 * A job's state is the fold of its journal events (RFC 18 entries):
 * job_apply() folds one event, and replaying a job's journal through it
 * rebuilds exactly the state the daemon had. Everything else in this file
 * *decides*: an input (a request, a process exit, a timer) plus the current
 * state gives new events. Decisions never act; they only emit events into
 * `out` (a JSON array the caller owns) and fold them into the job at once,
 * so the next decision sees them. The caller journals the emitted events,
 * commits, and only then carries out their effects (doc/design.md, "The
 * write-ahead rule"; the effect of each event is its column in the table
 * below).
 *
 * Event names and contexts are listed in cairn-journal(5).
 *
 * Time is wall-clock epoch seconds, passed in through job_ctx.now; all
 * timers are deadlines derived from journaled timestamps
 * (job_next_deadline), so they survive a restart unchanged.
 */
#ifndef CAIRN_JOB_H
#define CAIRN_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "core/config.h"
#include "core/error.h"
#include "core/idset.h"

#define EXECID_LEN 36

/* The finish status of a job none of whose shells has a known result
 * (each lost, or never started), or whose shells all exited 0 after a
 * fatal exception: 1 << 8, exit code 1, never 0 (a success nobody saw,
 * or a job that did not run to its end), unless an exception carried a
 * wait status. */
#define JOB_STATUS_UNKNOWN (1 << 8)

/* ---- the state machine ----
 *
 * The states (job_state_name() gives the name in parentheses):
 *
 *   JOB_NEW       (new)       accepted; its first decision moves it on
 *   JOB_PROLOG    (prolog)    the prolog runs
 *   JOB_STARTING  (starting)  the prolog is over; start, hold or cleanup
 *                             follows in the same decision (never seen
 *                             between two turns of cairnd)
 *   JOB_HELD      (held)      hold-on-shrink, after tolerated prolog
 *                             failures or with the client away
 *                             (job_ctx.client_away); hold-start, the
 *                             client's word not come by the prolog's end
 *                             (or at once, without a prolog): waits for
 *                             the client's resume
 *   JOB_RUN       (run)       the shells were started (`start` sent)
 *   JOB_CLEANUP   (cleanup)   every rank is in cleanup: epilogs, releases
 *   JOB_DONE      (done)      clean posted: the job takes no more events
 *                             but the record of a node's late report
 *                             (proc-late), which changes nothing
 */
enum job_state {
    JOB_NEW = 0,
    JOB_PROLOG,
    JOB_STARTING,
    JOB_HELD,
    JOB_RUN,
    JOB_CLEANUP,
    JOB_DONE,
};

/* What cairnd does once an event is committed (daemon.c, effects()). */
enum job_effect {
    JOB_EFFECT_NONE = 0,
    JOB_EFFECT_SPAWN,  /* start the process (job_proc_command) */
    JOB_EFFECT_SIGNAL, /* send context.signum to the process */
    JOB_EFFECT_ENDED,  /* forget the process, remove its exit records */
    JOB_EFFECT_LOST,   /* the same, after killing whatever it left */
    JOB_EFFECT_LATE,   /* a late report recorded: its node may forget it */
    JOB_EFFECT_NOTE,   /* a line in cairnd's log (a job's accept and
                        * clean, drains, exceptions) */
};

/* Sets of states, for the table's "from" column. */
#define JOB_IN(s) (1u << (s))
#define JOB_LIVE (JOB_IN (JOB_DONE) - 1) /* every state but done */
#define JOB_AFTER_PROLOG                                                       \
    (JOB_IN (JOB_STARTING) | JOB_IN (JOB_HELD) | JOB_IN (JOB_RUN) |            \
     JOB_IN (JOB_CLEANUP))
#define JOB_SAME (-1) /* the "to" column: the state does not change */

/* The transition table. job_apply() folds an event only in a state of its
 * "from" column, and refuses it otherwise (EINVAL, "EVENT in state S"):
 * a journal that breaks the table is not one cairn wrote. The "to"
 * column is the state after it; "decided by" names the decision of
 * job_decide.c that emits it. Columns: event, its name, from, to, effect,
 * response (becomes an RFC 32 response), progress (also sent to streams
 * that asked for events).
 *
 * Where the fold checks more than the state, the row's comment says so.
 */
#define JOB_TRANSITIONS(X)                                                     \
    /* decided by job_accept; from: no accept folded yet */                    \
    X (JOB_EV_ACCEPT, "accept", JOB_IN (JOB_NEW), JOB_NEW, NOTE, 0, 1)         \
    /* step_once (new) */                                                      \
    X (JOB_EV_PROLOG_START, "prolog-start", JOB_IN (JOB_NEW), JOB_PROLOG,      \
       NONE, 0, 1)                                                             \
    /* prolog_conclude, prolog_fail */                                         \
    X (JOB_EV_PROLOG_FINISH, "prolog-finish", JOB_IN (JOB_PROLOG),             \
       JOB_STARTING, NONE, 0, 1)                                               \
    /* start_or_hold (hold-on-shrink, hold-start) */                           \
    X (JOB_EV_HOLD, "hold", JOB_IN (JOB_NEW) | JOB_IN (JOB_STARTING),          \
       JOB_HELD, NONE, 0, 1)                                                   \
    /* job_resume; in prolog only a hold-start job's ready one */              \
    X (JOB_EV_RESUME, "resume", JOB_IN (JOB_PROLOG) | JOB_IN (JOB_HELD),       \
       JOB_SAME, NONE, 0, 0)                                                   \
    /* start_shells */                                                         \
    X (JOB_EV_START, "start",                                                  \
       JOB_IN (JOB_NEW) | JOB_IN (JOB_STARTING) | JOB_IN (JOB_HELD), JOB_RUN,  \
       NONE, 1, 0)                                                             \
    /* run_finish */                                                           \
    X (JOB_EV_FINISH, "finish", JOB_IN (JOB_RUN), JOB_CLEANUP, NONE, 1, 0)     \
    /* emit_cleanup; to cleanup once every rank is in cleanup, else the        \
     * state stays */                                                          \
    X (JOB_EV_CLEANUP, "cleanup",                                              \
       JOB_IN (JOB_NEW) | JOB_IN (JOB_STARTING) | JOB_IN (JOB_HELD) |          \
           JOB_IN (JOB_CLEANUP),                                               \
       JOB_CLEANUP, NONE, 0, 0)                                                \
    /* start_epilogs */                                                        \
    X (JOB_EV_EPILOG_START, "epilog-start", JOB_AFTER_PROLOG, JOB_SAME, NONE,  \
       0, 1)                                                                   \
    /* releases, once the job is complete */                                   \
    X (JOB_EV_EPILOG_FINISH, "epilog-finish", JOB_IN (JOB_CLEANUP), JOB_SAME,  \
       NONE, 0, 1)                                                             \
    /* releases; a final one only in cleanup */                                \
    X (JOB_EV_RELEASE, "release", JOB_AFTER_PROLOG, JOB_SAME, NONE, 1, 0)      \
    /* releases, after the final release */                                    \
    X (JOB_EV_CLEAN, "clean", JOB_IN (JOB_CLEANUP), JOB_DONE, NOTE, 0, 0)      \
    /* emit_exception: job_raise, prolog_conclude, timeouts, losses */         \
    X (JOB_EV_EXCEPTION, "exception", JOB_LIVE, JOB_SAME, NOTE, 1, 0)          \
    /* emit_drain */                                                           \
    X (JOB_EV_DRAIN, "drain", JOB_LIVE, JOB_SAME, NOTE, 0, 1)                  \
    /* prolog_conclude */                                                      \
    X (JOB_EV_TOLERATE, "tolerate", JOB_IN (JOB_PROLOG), JOB_SAME, NONE, 0, 0) \
    /* job_fail_ranks */                                                       \
    X (JOB_EV_FAIL_RANKS, "fail-ranks", JOB_IN (JOB_PROLOG), JOB_SAME, NONE,   \
       0, 0)                                                                   \
    /* job_set_critical */                                                     \
    X (JOB_EV_CRITICAL_RANKS, "critical-ranks", JOB_LIVE, JOB_SAME, NONE, 0,   \
       0)                                                                      \
    /* job_set_expiration */                                                   \
    X (JOB_EV_EXPIRATION, "expiration", JOB_LIVE, JOB_SAME, NONE, 0, 0)        \
    /* job_proc_exited (captured output) */                                    \
    X (JOB_EV_LOG, "log", JOB_LIVE, JOB_SAME, NONE, 0, 0)                      \
    /* emit_intent; also by phase: a prolog's only in prolog, a shell's        \
     * only in run, an epilog's only after the prolog */                       \
    X (JOB_EV_PROC_INTENT, "proc-intent",                                      \
       JOB_IN (JOB_PROLOG) | JOB_AFTER_PROLOG, JOB_SAME, SPAWN, 0, 0)          \
    /* job_proc_spawned; the process must be an intent */                      \
    X (JOB_EV_PROC_SPAWN, "proc-spawn", JOB_LIVE, JOB_SAME, NONE, 0, 0)        \
    /* job_proc_unstarted; the process must be running */                      \
    X (JOB_EV_PROC_UNSTARTED, "proc-unstarted", JOB_LIVE, JOB_SAME, SPAWN, 0,  \
       0)                                                                      \
    /* terminate_phase, job_kill */                                            \
    X (JOB_EV_PROC_SIGNAL, "proc-signal", JOB_LIVE, JOB_SAME, SIGNAL, 0, 0)    \
    /* job_proc_exited; the process must not have ended */                     \
    X (JOB_EV_PROC_EXIT, "proc-exit", JOB_LIVE, JOB_SAME, ENDED, 0, 0)         \
    /* job_proc_lost, give_up; the process must not have ended */              \
    X (JOB_EV_PROC_LOST, "proc-lost", JOB_LIVE, JOB_SAME, LOST, 0, 0)          \
    /* job_proc_failed; the process must not have ended */                     \
    X (JOB_EV_PROC_FAIL, "proc-fail", JOB_LIVE, JOB_SAME, ENDED, 0, 0)         \
    /* job_proc_late, also on a job that is done (remote.c, issue 33); the     \
     * process must have ended */                                              \
    X (JOB_EV_PROC_LATE, "proc-late", JOB_LIVE | JOB_IN (JOB_DONE), JOB_SAME,  \
       LATE, 0, 0)                                                             \
    /* proc_ended, for a shell of a job with shell-leader, after its           \
     * proc-exit, proc-lost or proc-fail and the exceptions they cause;        \
     * it must be an ended shell */                                            \
    X (JOB_EV_SHELL_END, "shell-end", JOB_IN (JOB_RUN), JOB_SAME, NONE, 0, 1)

/* clang-format off */
enum job_event {
#define JOB_EV_ENUM(ev, name, from, to, effect, response, progress) ev,
    JOB_TRANSITIONS (JOB_EV_ENUM)
#undef JOB_EV_ENUM
    JOB_EV_COUNT,
    JOB_EV_OTHER = JOB_EV_COUNT, /* not cairn's: an outside service's
                                    (job_post); allowed in any live state */
};
/* clang-format on */

/* The event a name is, or JOB_EV_OTHER. */
enum job_event job_event_of (const char *name);
/* Its name, as journaled; NULL for JOB_EV_OTHER (whose name is the
 * outside service's). */
const char *job_event_name (enum job_event ev);
/* Its row's effect (JOB_EFFECT_NONE for JOB_EV_OTHER). */
enum job_effect job_event_effect (enum job_event ev);

enum proc_phase { PHASE_PROLOG = 0, PHASE_SHELL, PHASE_EPILOG };

enum proc_state {
    PROC_INTENT = 0, /* journaled, not (known to be) spawned */
    PROC_RUNNING,    /* spawned: pid, start time and boot id known */
    PROC_DONE,       /* exited, lost, or never started */
};

/* A process as the journal knows it. Read-only for callers. */
struct job_proc {
    char execid[EXECID_LEN + 1];
    enum proc_phase phase;
    enum proc_state state;
    struct idset *ranks; /* ranks this process works for */
    uint32_t rank;       /* first of ranks (CAIRN_RANK for per-rank ones) */
    double t_intent;
    double t_spawn; /* 0 until spawned */
    pid_t pid;
    unsigned long long starttime; /* /proc/PID/stat field 22 */
    char bootid[40];
    char *host; /* the node it runs on when not here (proc-spawn "host"),
                   else NULL */

    /* signalling */
    int nsignals;
    int nkills;       /* kill-signal deliveries, of either kind */
    int nshell_kills; /* of them, a shell's direct kills ("kill-shell",
                         job-exec's kill_shell_count) */
    double t_term;    /* first termination signal (the escalation's
                         start: max-kill-timeout counts from it) */
    double t_signal;  /* last termination signal */
    int term_signum;  /* last termination signal sent (0: none) */
    bool terminating; /* being stopped by cairn (timeout, cancel) */
    bool timed_out;

    /* outcome, once PROC_DONE */
    int status; /* wait(2) status, valid when !lost && !error */
    bool lost;  /* outcome unknown (note says why) */
    bool error; /* never started (spawn failed; note says why) */
    char *note; /* lost or error reason */
    bool late;  /* a node's late report of it is recorded (proc-late) */
    int leftover; /* processes of its session still there at its end,
                     killed by its supervisor (proc-exit "leftover") */
};

struct job;

/* Inputs to decisions that come from outside the pure world. */
struct job_ctx {
    double now;      /* wall clock, epoch seconds */
    uid_t owner_uid; /* the service's uid */
    bool multiuser;  /* it runs as root: jobs of any user run as that user;
                        else jobs of other users than owner_uid are refused */
    /* With multiuser: does uid have an entry in the user database? NULL:
     * assume so. */
    bool (*user_known) (uint32_t uid, void *arg);
    /* Write a fresh execid (canonical lowercase uuid) into buf. */
    void (*new_execid) (char buf[EXECID_LEN + 1], void *arg);
    /* Is job id's client away (no stream follows it)? A hold-on-shrink
     * job whose prolog ends then is held with every rank until the
     * client is back and says resume: its shells need what the client
     * provides (Flux: the brokers, the job's namespace), so they do not
     * start while it is gone. NULL: never away. Asked live only; the
     * hold it leads to is journaled. */
    bool (*client_away) (uint64_t id, void *arg);
    void *arg;
};

struct job *job_create (uint64_t id);
void job_destroy (struct job *job);

/* Fold one journal event into the job. Unknown event names are ignored
 * (RFC 18 allows them). Returns -1 with EINVAL and a message if the event
 * contradicts the state (e.g. an exit for an unknown execid): the journal
 * is then not one this code wrote. */
int job_apply (struct job *job, const json_t *entry, struct cairn_error *err);

/* ---- decisions (each may emit events into the array `out`) ---- */

/* Before job_accept(): the job comes from an unprivileged client (a user
 * on the public socket, not root or the service uid), and its accept event
 * records "privileged": false. Without this call the accept records
 * nothing, which means privileged, as every journal before this field
 * did. The resource manager adopts only privileged jobs (cairn-exec(8)),
 * and the users' quotas count only unprivileged ones. */
void job_set_unprivileged (struct job *job);

/* Before job_accept(): the job's shells run through imp, a launcher that
 * checks the job's user signed it and switches to that user itself
 * (Flux's IMP: "imp exec SHELL ARGS..."), started as uid runas (the Flux
 * instance's owner) instead of as the job's user (SECURITY.md). Recorded
 * in the accept event ("imp": {"path", "uid"}, absent otherwise); the
 * prolog and epilog are unchanged. Returns 0, or -1 with errno = ENOMEM
 * (EEXIST once the job is accepted). */
int job_set_imp (struct job *job, const char *imp, uint32_t runas);

/* A new job: validates R and jobspec (and that the jobspec's per-rank
 * environment names ranks of R), emits `accept` (which snapshots jc)
 * and the first decisions. -1 EINVAL with a message naming the field when
 * the request is malformed: then nothing was emitted. A job that cannot run
 * as its user is accepted and ended at once with a fatal exec exception
 * (it never starts): without ctx->multiuser a userid other than
 * ctx->owner_uid; with it, a uid the user database does not know. */
int job_accept (struct job *job,
                const struct job_ctx *ctx,
                uint32_t userid,
                const json_t *R,
                const json_t *jobspec,
                const struct job_config *jc,
                json_t *out,
                struct cairn_error *err);

/* The process behind execid was spawned. */
int job_proc_spawned (struct job *job,
                      const struct job_ctx *ctx,
                      const char *execid,
                      pid_t pid,
                      unsigned long long starttime,
                      const char *bootid,
                      json_t *out);

/* The same, for a process that a node cairnd spawned on host (multinode):
 * the proc-spawn event names the host; pid, starttime and bootid are the
 * node's. */
int job_proc_spawned_on (struct job *job,
                         const struct job_ctx *ctx,
                         const char *execid,
                         pid_t pid,
                         unsigned long long starttime,
                         const char *bootid,
                         const char *host,
                         json_t *out);

/* A node reported what became of a process given up on already (lost):
 * emit proc-late {execid, state, status?, host?, error?} from report (a
 * node's REPORT, DESIGN-MULTINODE.md). Changes nothing else; the job may
 * be done. -1 with errno: ENOENT (no such process), EINVAL (it has not
 * ended, or it ended with a known outcome: a report of that end is a
 * repeat, not late), EALREADY (its late report is recorded already). */
int job_proc_late (struct job *job,
                   const struct job_ctx *ctx,
                   const char *execid,
                   const json_t *report,
                   json_t *out);

/* Where p runs: -1 when here, else the broker rank whose node cairnd runs
 * it. A process runs on its rank's node when the job's multinode config is
 * on, it serves one rank (a shell, a per-rank prolog or epilog) and that
 * rank is not in multinode.local-ranks. Pure: the same job and process
 * give the same answer after any restart. */
int64_t job_proc_node (const struct job *job, const struct job_proc *p);

/* The process could not be started (errnum, reason): it never ran. */
int job_proc_failed (struct job *job,
                     const struct job_ctx *ctx,
                     const char *execid,
                     const char *reason,
                     json_t *out);

/* How a process ended, as its supervisor (or its node) told it. */
struct job_proc_end {
    int status;        /* wait status */
    const char *error; /* the shim could not exec the command, or NULL */
    int leftover;      /* processes its session still held when it ended
                        * (its record's "leftover": its supervisor killed
                        * them before telling its end), 0 if none */
    /* its captured output (may be NULL), already capped by the caller to
     * job_output_room() of its phase; *_trunc: more was there */
    const char *outdata;
    bool out_trunc;
    const char *errdata;
    bool err_trunc;
};

/* The process ended as `end` says. A shell that left processes behind
 * (end->leftover > 0) raises a fatal `exec` exception unless the job has
 * one already: a shell that exits while its tasks still run (its broker
 * gone) did not finish the job. A process given up on earlier: accepted,
 * nothing emitted. ENOENT: no such process. */
int job_proc_exited (struct job *job,
                     const struct job_ctx *ctx,
                     const char *execid,
                     const struct job_proc_end *end,
                     json_t *out);

/* The spawned process is gone and its start marker was never written:
 * the command did not run (a shim cut short by cairnd's death, see
 * spawner.h). Back to an intent, whose effect (proc-unstarted) is to start
 * it again. EINVAL unless the process is running. */
int job_proc_unstarted (struct job *job,
                        const struct job_ctx *ctx,
                        const char *execid,
                        const char *note,
                        json_t *out);

/* The process is gone and its outcome is unknown (note says why). */
int job_proc_lost (struct job *job,
                   const struct job_ctx *ctx,
                   const char *execid,
                   const char *note,
                   json_t *out);

/* An exception from outside (RFC 32 `exception` request). wait_status < 0
 * means none; the first fatal exception's becomes the finish status.
 * Severity 0 terminates the job. EINVAL for bad arguments.
 * This and every request below fail with EALREADY once the job is clean. */
int job_raise (struct job *job,
               const struct job_ctx *ctx,
               const char *type,
               int severity,
               const char *note,
               int wait_status,
               json_t *out,
               struct cairn_error *err);

/* Send signum to the job's running shells (`kill` request). EINVAL if the
 * job has no running shells. A shell whose start is journaled but not yet
 * made is not signalled: see job_shells_starting. */
int job_kill (struct job *job,
              const struct job_ctx *ctx,
              int signum,
              json_t *out,
              struct cairn_error *err);

/* New time limit (epoch seconds, 0 = none). */
int job_set_expiration (struct job *job,
                        const struct job_ctx *ctx,
                        double expiration,
                        json_t *out,
                        struct cairn_error *err);

/* The most of a fail-ranks note a job keeps (bytes; the rest is cut). */
#define JOB_MARK_NOTE_MAX 127

/* Mark ranks as failed (tolerable) during the prolog. EINVAL if the job is
 * not in its prolog or ranks are not the job's. The tolerate exception's
 * note ends with the last note given (its first JOB_MARK_NOTE_MAX bytes). */
int job_fail_ranks (struct job *job,
                    const struct job_ctx *ctx,
                    const struct idset *ranks,
                    const char *note,
                    json_t *out,
                    struct cairn_error *err);

/* Without ready: the client has shrunk a held job (jobspec
 * hold-on-shrink, `hold` event), or is back: start its shells (a
 * hold-start job's once its word came too). EINVAL if the job is not
 * held; 0 and nothing emitted if it was resumed already, or a fatal
 * exception came first (its held ranks are cleaned up instead).
 * With ready: the word of a hold-start job, that what its shells need
 * outside cairn is there: journaled (`resume` {"ready": true}) in its
 * prolog or while held; its shells start at the prolog's end, or now if
 * held for the word only (`hold` with "wait": "ready"); 0 and nothing
 * emitted when said before, for a job that is not hold-start, or too late
 * (no prolog or hold left to wait in).
 * EALREADY if the job is clean. */
int job_resume (struct job *job,
                const struct job_ctx *ctx,
                bool ready,
                json_t *out,
                struct cairn_error *err);

/* Ranks whose loss is fatal (default: all). */
int job_set_critical (struct job *job,
                      const struct job_ctx *ctx,
                      const struct idset *ranks,
                      json_t *out,
                      struct cairn_error *err);

/* Handle every deadline <= ctx->now (timeouts, kill escalation, time
 * limit, release-after) and take any decision that is due. Also the first
 * call after a replay: it is idempotent when nothing is due. */
int job_advance (struct job *job, const struct job_ctx *ctx, json_t *out);

/* ---- queries ---- */

uint64_t job_id (const struct job *job);
enum job_state job_state (const struct job *job);
const char *job_state_name (enum job_state state);
uint32_t job_nevents (const struct job *job);    /* events folded */
uint32_t job_nresponses (const struct job *job); /* response events */
uint32_t job_userid (const struct job *job);
/* The uid a job's shells are started as: the launcher's (job_set_imp),
 * else the job's user. */
uint32_t job_shell_uid (const struct job *job);
/* Was the job submitted by a privileged client (job_set_unprivileged)? */
bool job_privileged (const struct job *job);
/* R's time limit, as updated (expiration events): epoch seconds, 0 =
 * none. */
double job_expiration (const struct job *job);
/* The time limit in force once the shells run (0 = none): job_expiration,
 * moved later by the start's delay after R's starttime when that delay is
 * more than exec.max-start-delay-percent of the job's duration (job-exec's
 * rule: a prolog must not eat a short job's time). Before the start, R's
 * own. */
double job_time_limit (const struct job *job);
const struct idset *job_ranks (const struct job *job);
const struct idset *job_released (const struct job *job);
const struct idset *job_drained (const struct job *job);
const struct job_config *job_config (const struct job *job);
bool job_started (const struct job *job);
bool job_finished (const struct job *job);
/* Is the job running with a shell whose start is journaled and not yet
 * made (proc-intent, no proc-spawn)? A `kill` then waits for it. */
bool job_shells_starting (const struct job *job);
/* Was a fatal (severity 0) exception raised? The job is then on its way
 * to its end, and a second one ends nothing. */
bool job_fatal (const struct job *job);
/* Its processes not done yet, of every phase: an upper bound of the
 * proc-signal events one decision can emit for it (a kill, a cancel). */
size_t job_procs_live (const struct job *job);
int job_finish_status (const struct job *job); /* valid once finished */
double job_t_accept (const struct job *job);
double job_t_clean (const struct job *job);
/* The jobspec's attributes.system.cairn.client, or NULL. */
const char *job_client (const struct job *job);
/* Its jobspec's attributes.system.cairn.instance, or NULL (owned by job). */
const char *job_instance (const struct job *job);

/* Earliest deadline of the job, or 0 when nothing is timed. */
double job_next_deadline (const struct job *job);

/* The hosts of ranks (R's nodelist) as one RFC 29 hostlist in rank order
 * ("node[1,3]"): malloc'd, or NULL (ENOMEM, or no nodelist). */
char *job_hosts (const struct job *job, const struct idset *ranks);

/* Captured output the job may still journal for phase before its cap:
 * output.max-bytes is per phase, so that the job's shells, however
 * chatty, never push out the site's prolog and epilog output. */
size_t job_output_room (const struct job *job, enum proc_phase phase);

/* Processes, in intent order. */
size_t job_nprocs (const struct job *job);
const struct job_proc *job_proc_at (const struct job *job, size_t i);
const struct job_proc *job_proc_find (const struct job *job,
                                      const char *execid);

/* What to run for a process: argv (NULL-terminated, caller frees with
 * job_argv_free), cwd (borrowed, may be NULL), and the variables to add to
 * the environment as a JSON object name -> string (new ref; the caller adds
 * them to the daemon's own environment). A shell gets, in this order, each
 * later one overriding: the jobspec's environment, its rank's entry of the
 * jobspec's rank-environment, then cairn's CAIRN_* and FLUX_JOB_*. */
int job_proc_command (const struct job *job,
                      const struct job_proc *proc,
                      char ***argv,
                      const char **cwd,
                      json_t **env);
void job_argv_free (char **argv);

/* The RFC 32 response payload for a response event (start, release,
 * exception, finish), or NULL (ENOENT) for any other event. New ref. */
json_t *job_response (const struct job *job, const json_t *entry);

/* Is this event name one that becomes a response? */
bool job_event_is_response (const char *name);
/* The same of a name already decoded (job_event_of): no lookup. */
bool job_ev_is_response (enum job_event ev);

/* Is this event name one that a stream which asked for "events"
 * (cairn-protocol(7)) gets besides the RFC 32 responses: accept,
 * prolog-start, prolog-finish, epilog-start, epilog-finish, drain, hold,
 * shell-end, and any name cairn does not use itself (an outside service's,
 * posted with job_post())? */
bool job_event_is_progress (const char *name);
/* The same of a name already decoded (job_event_of): no lookup. */
bool job_ev_is_progress (enum job_event ev);

/* Is this name one cairn uses itself, for an event or a stream response
 * (accepted, reattached, output, kill)? Such names cannot be posted. */
bool job_event_is_cairns (const char *name);

/* The longest name job_post() takes. */
#define JOB_POST_NAME_MAX 64

/* An outside service's event (cairn-protocol(7), post): name is 1 to
 * JOB_POST_NAME_MAX bytes of [A-Za-z0-9._-], not one of cairn's own
 * (job_event_is_cairns); context an object or NULL ({}). It changes
 * nothing of the job's state; streams that asked for events get it.
 * Errors: EINVAL (the name, naming it: "name: \"start\" is one of
 * cairn's own events"; the context), EALREADY (the job is clean). The same
 * name with an equal context again is recorded once: 0, nothing emitted
 * (a service that lost the answer in a crash may post again). */
int job_post (struct job *job,
              const struct job_ctx *ctx,
              const char *name,
              const json_t *context,
              json_t *out,
              struct cairn_error *err);

/* The payload such a stream gets for a progress event:
 * {"id": ID, "type": NAME, "data": CONTEXT}, except for accept, which
 * gives {"id": ID, "type": "accepted", "data": {}} (its context is the
 * request itself). NULL (ENOENT) for any other event. New ref. */
json_t *job_progress_response (const struct job *job, const json_t *entry);

#endif /* CAIRN_JOB_H */
