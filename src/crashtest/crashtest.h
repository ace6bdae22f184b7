/* crashtest.h - cairn-crashtest's internals, shared by all its .c files.
 *
 * cairn-crashtest runs workloads described by scenario files (JSON)
 * through a real cairnd, kills the daemon at named crash points or at
 * random times, restarts it, drives the client until every job has its
 * final release, and then checks the invariants of TESTING.md against the
 * journal, the client's transcript and the run log the scenario's commands
 * append to. See TESTING.md for the command line and the scenario format.
 *
 * Each case runs in a child process of its own (a subreaper, so that
 * orphaned shims are reaped as init would) and reports one JSON result.
 */
#ifndef CAIRN_CRASHTEST_H
#define CAIRN_CRASHTEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

#define CT_MAX_RANKS 64
#define CT_MAX_ACTIONS 8
#define CT_MAX_GENS 8
#define CT_MAX_KILLS 16

/* ---- scenarios (crashtest_scenario.c) ---- */

enum ct_phase { CT_PROLOG = 0, CT_SHELL, CT_EPILOG, CT_NPHASES };

/* What the generic command does on each rank of one phase. */
struct ct_behaviour {
    int exit[CT_MAX_RANKS];
    double sleep[CT_MAX_RANKS];
    bool ignore_term[CT_MAX_RANKS];
    size_t output; /* bytes written to stdout */
    bool leftover; /* leaves a TERM-deaf task in its session (own group) */
};

enum ct_action_kind {
    CT_ACT_CANCEL,
    CT_ACT_FAIL_RANKS,
    CT_ACT_EXPIRATION,
    CT_ACT_POST,
    CT_ACT_UNDRAIN,
    CT_ACT_READY, /* a hold-start job's word (cairn-exec.so's namespace) */
    CT_ACT_RESUME /* a held job's resume (cairn-exec.so's shrink done) */
};

/* A request the client sends to a job, `after` seconds after its trigger:
 * the job's submission (on = -1) or the first start of a phase's command
 * in the run log (on = a ct_phase), which does not depend on when cairnd
 * happened to be up. */
struct ct_action {
    enum ct_action_kind kind;
    int on;
    double after;
    char ranks[64];    /* fail-ranks, undrain; post: the event's name */
    double expiration; /* expiration: seconds from its first sending */
};

struct ct_job {
    uint64_t id;
    int nranks;
    int pfa;             /* jobspec prolog-failures-allowed */
    bool shell_leader;   /* jobspec attributes.system.cairn.shell-leader */
    bool hold_start;     /* jobspec attributes.system.cairn.hold-start */
    bool hold_on_shrink; /* ... .hold-on-shrink */
    double submit_after;
    double time_limit; /* R expiration = submission + this; 0 = none */
    struct ct_behaviour beh[CT_NPHASES];
    struct ct_action actions[CT_MAX_ACTIONS];
    int nactions;
    json_t *expect; /* the outcome the scenario states, or NULL
                     * (crashtest_expect.c); one reference per job */
};

struct ct_scenario {
    char *path; /* absolute */
    char *name;
    json_t *config; /* the cairnd config of the file (commands are added) */
    bool has_prolog;
    bool has_epilog;
    struct ct_job *jobs;
    int njobs;
    double restart_delay; /* seconds cairnd stays dead after a crash */
    double timeout;       /* a run longer than this is "stuck" */
    bool sequential;      /* submit a job once the previous one ended */
    json_t *faults;       /* fault cases for --faults (array of names) */
    json_t *modes;        /* modes that run it (NULL = all) */
};

/* Load and validate a scenario file. Returns 0, or -1 with errno (EINVAL
 * for a bad file, with the key in err; ENOENT...). */
int ct_scenario_load (const char *path,
                      struct ct_scenario *sc,
                      struct cairn_error *err);
void ct_scenario_free (struct ct_scenario *sc);

/* Write dir/config.json, dir/cmd.sh and dir/beh/ for the scenario, and
 * create dir/s (the state dir, mode 0700). Returns 0 or -1 with err. */
int ct_scenario_setup (const struct ct_scenario *sc,
                       const char *dir,
                       struct cairn_error *err);

/* The R and jobspec of a job (new references). */
json_t *ct_job_R (const struct ct_job *job, double expiration);
json_t *ct_job_jobspec (const struct ct_job *job, const char *dir);

const char *ct_phase_name (int phase);
int ct_phase_parse (const char *s);

/* ---- cases ---- */

enum ct_kind { CT_REFERENCE, CT_CRASH, CT_RANDOM, CT_FAULT };

enum ct_fault {
    CT_FAULT_NONE = 0,
    CT_FAULT_SPAWN,   /* CAIRN_FAULT=exec.spawn:K:EAGAIN */
    CT_FAULT_FSYNC,   /* CAIRN_FAULT=journal.commit:K:EIO */
    CT_FAULT_SUPKILL, /* SIGKILL the supervisor while one command runs */
    CT_FAULT_SUPHELD, /* ... with cairnd stopped (SIGSTOP) around it */
    CT_FAULT_SUPSTOP, /* ... then SIGTERM cairnd (a graceful restart) */
    CT_FAULT_FULL,    /* the scenario fills its small journal */
};


/* ---- daemon processes (crashtest_proc.c) ---- */

struct ct_daemon {
    pid_t pid;
    bool exited;
    int status; /* wait status once exited */
};

/* Start cairnd for case directory dir with extra environment entries
 * ("NAME=VALUE", NULL-terminated; others CAIRN_CRASH_* and CAIRN_FAULT are
 * removed from ours). stdout and stderr go to dir/cairnd.log. */
int ct_daemon_start (struct ct_daemon *dm,
                     const char *cairnd,
                     const char *dir,
                     char *const extra_env[],
                     struct cairn_error *err);

/* Reap any child (we are a subreaper); record dm's status if it is one.
 * Waits at most timeout seconds for dm to exit (0: do not wait).
 * Returns true once dm has exited. */
bool ct_daemon_reap (struct ct_daemon *dm, double timeout);

/* Describe a wait status ("killed by SIGKILL", "exit 75"). */
void ct_status_str (int status, char *buf, size_t len);

/* Pids of live processes whose environment holds CRASHTEST_CASE=tag
 * (zombies excluded). Returns a new array of integers. */
json_t *ct_proc_scan (const char *tag);

/* Copy the value of variable name in pid's environment to buf. Returns
 * false if pid or the variable is not there. */
bool ct_proc_getenv (pid_t pid, const char *name, char *buf, size_t len);

/* Is pid alive with CAIRN_EXECID=execid in its environment? */
bool ct_proc_has_execid (pid_t pid, const char *execid);

/* The parent pid of pid, or -1. */
pid_t ct_proc_ppid (pid_t pid);

/* ---- the run log (crashtest_check.c) ---- */

struct ct_rlentry {
    int phase;
    uint64_t job;
    char rank[16]; /* a rank, or "all" for a phase run once */
    char execid[40];
    pid_t pid;
    bool end;
    int code;
};

struct ct_runlog {
    struct ct_rlentry *v;
    size_t n;
    size_t alloc;
    long offset;
    char partial[512];
};

/* Read the lines appended to path since the last call. Returns the number
 * of new entries (malformed lines are skipped), or -1 on error. */
int ct_runlog_poll (struct ct_runlog *rl, const char *path);
/* Parse one line into rl (for tests). 0 or -1 (malformed). */
int ct_runlog_add_line (struct ct_runlog *rl, const char *line);
void ct_runlog_free (struct ct_runlog *rl);

/* ---- checks (crashtest_check.c, crashtest_outcome.c) ---- */

struct ct_check_input {
    const struct ct_scenario *sc;
    enum ct_kind kind;
    enum ct_fault fault;
    const json_t *ref;   /* reference result, or NULL */
    json_t *events;      /* {"id": [eventlog entries]} from the journal */
    json_t *transcripts; /* {"id": [{"stream","reattach","type","data"}]} */
    json_t *refused;     /* {"id": errstr} jobs refused at submission */
    const struct ct_runlog *rl;
    json_t *killed_execids; /* shims the harness killed: {execid: true} */
    bool losses_ok;         /* the supervisor died, then the keeper
                             * with inherited commands not seen through:
                             * any may be lost (not started twice, not
                             * invented) */
    const char *drained;    /* the journal's drains table: ranks, or "" */
    bool undrain_refused;   /* an undrain action was not answered ok */
};

/* Check every invariant; append a string per violation to violations,
 * per explained difference to diverged, and a summary per job to jobs
 * (an object id -> summary). */
void ct_check (const struct ct_check_input *in,
               json_t *violations,
               json_t *diverged,
               json_t *jobs);

/* Journal-level checks of one job (fold, structure, releases, losses). */
void ct_check_journal (uint64_t id, const json_t *events, json_t *violations);

/* The client's transcript against the journal's responses. */
void ct_check_transcript (uint64_t id,
                          const json_t *events,
                          const json_t *transcript,
                          json_t *violations);

/* Run log: at most once, statuses really returned, losses. */
void ct_check_runlog (const struct ct_check_input *in,
                      uint64_t id,
                      const json_t *events,
                      json_t *violations);

/* Summary of a job's outcome, for comparison with the reference:
 * {"state", "finish", "exceptions", "released", "drained", "ran", "lost",
 *  "failed-starts", "actions"}. New reference. */
json_t *
ct_summary (uint64_t id, const json_t *events, const struct ct_runlog *rl);

/* Compare a summary with the reference's; a difference is a violation
 * unless a loss or a differently timed action explains it. */
void ct_compare (uint64_t id,
                 const json_t *ref,
                 const json_t *got,
                 json_t *violations,
                 json_t *diverged);

/* ---- a scenario's expected outcome (crashtest_expect.c) ---- */

/* Read a job's "expect" o (where names it in messages): an object of some
 * of ct_summary's fields: "state" ("clean" or "active"), "finish" (a wait
 * status, or null), "exceptions" (["TYPE/SEVERITY"]), "released" and
 * "drained" (rank sets), "ran" (["PHASE.RANK"], "PHASE.all" for a
 * phase run once). Arrays are sorted and rank sets normalized as
 * ct_summary writes them, so that the check compares them as they are.
 * 0 with *expect a new reference, or -1 with errno EINVAL (a key
 * unknown, a value of the wrong kind; err says which) or ENOMEM. */
int ct_expect_parse (const json_t *o,
                     json_t **expect,
                     const char *where,
                     struct cairn_error *err);

/* Compare job id's summary got with expect (NULL: nothing stated). Each
 * stated field that differs goes into one line: in diverged when
 * explained (what explains it, in words: losses, requests landing in
 * other phases), else in violations. */
void ct_expect_check (uint64_t id,
                      const json_t *expect,
                      const json_t *got,
                      const char *explained,
                      json_t *violations,
                      json_t *diverged);

/* ---- helpers (crashtest_proc.c) ---- */

double ct_mono (void);
double ct_wall (void);
void ct_sleep (double s);
/* Append a formatted string to a JSON array. */
void ct_addf (json_t *array, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
int ct_write_file (const char *path, const char *data, int mode);

/* ---- self test (crashtest_selftest.c) ---- */

/* Feed the checks fabricated runs that break each invariant; print TAP.
 * Returns 0 when every check fired as expected. */
int ct_selftest (void);

#endif /* CAIRN_CRASHTEST_H */
