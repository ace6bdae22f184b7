/* crashtest_run.h - one case: ct_case_run() (crashtest_case.c) sets it up,
 * crashtest_run.c drives it, crashtest_case.c checks what it left. */
#ifndef CAIRN_CRASHTEST_RUN_H
#define CAIRN_CRASHTEST_RUN_H

#include "crashtest/crashtest.h"
#include "client/client.h"

/* One case of a mode (crashtest_plan.h makes them). */
struct ct_case {
    const struct ct_scenario *sc;
    const json_t *ref; /* the reference run's result; NULL for it */
    enum ct_kind kind;
    char crash[CT_MAX_GENS][96]; /* CAIRN_CRASH_AT per daemon generation */
    enum ct_fault fault;
    char fault_env[96]; /* CAIRN_FAULT for generation 0 */
    char target[64];    /* supervisor-kill*: "PHASE JOBID RANK" */
    int nkills;         /* random: kill times, seconds from the start */
    double kills[CT_MAX_KILLS];
    bool count; /* CAIRN_CRASH_COUNT in every generation */
    char dir[256];
    char label[256];
    char repro[1024];
    const char *cairnd;
};

/* Run one case; call it in a fresh child process. Returns its result:
 *   {"label", "repro", "kind", "reached", "kills", "generations",
 *    "violations": [s], "diverged": [s], "jobs": {id: summary},
 *    "counts": [{point: n}] per generation, "elapsed", "duration",
 *    "exits": [s]}
 * or NULL (ENOMEM). */
json_t *ct_case_run (const struct ct_case *cs);

enum { JOB_UNSUBMITTED = 0, JOB_SUBMITTED, JOB_FINAL, JOB_REFUSED };

struct ct_actstate {
    bool sent; /* a request is out, no answer yet */
    bool done; /* answered (or skipped) */
    int64_t tag;
    double wall_first; /* wall time of its first sending */
    int attempts;
    char result[200];
};

struct ct_jobrun {
    const struct ct_job *job;
    int state;
    double t_submit; /* mono time of the first submission, 0 = none */
    double expiration;
    int64_t tag; /* the current start stream */
    bool reattaching;
    int nresp; /* responses counted for `since` */
    int stream;
    json_t *transcript;
    double trig[CT_NPHASES]; /* mono time of a phase's first start */
    bool saw_full;           /* an exception said the journal is full */
    struct ct_actstate act[CT_MAX_ACTIONS];
};

struct ct_run {
    const struct ct_case *cs;
    const struct ct_scenario *sc;
    struct ct_daemon dm;
    int gen; /* generation of the current cairnd (0 = first) */
    struct client *c;
    char sockpath[512];
    char runlog_path[512];
    char tag_env[320];
    int64_t next_tag;
    struct ct_jobrun *jobs;
    struct ct_runlog rl;
    json_t *violations;
    json_t *diverged;
    json_t *exits;   /* how each cairnd ended */
    json_t *killed;  /* {execid: true}: commands whose loss we caused */
    bool supervisor_killed; /* supervisor-kill*: done */
    bool term_sent;         /* supervisor-kill-stop: SIGTERM to cairnd */
    double cont_due;        /* supervisor-kill-held: SIGCONT then, or 0 */
    json_t *refused; /* {id: errstr} */
    int kills;       /* cairnd deaths by SIGKILL that we caused */
    int next_kill;   /* random: next index in cs->kills */
    bool kill_sent;  /* we sent SIGKILL to the current cairnd */
    bool target_done;
    bool full_killed; /* journal-full: cairnd was killed once refusing */
    bool stuck;
    long ready_off[CT_MAX_GENS * 2]; /* counts file size once listening */
    double t0;
    double t_first_submit;
    double t_last_final;
};

/* Drive the case: start cairnd, submit the jobs, send the actions, crash
 * and restart, until every job has its final release or the timeout.
 * Leaves cairnd stopped. Returns 0, or -1 if the case could not run at
 * all (a violation says why). */
int ct_run_drive (struct ct_run *r);

/* The last n lines of dir/cairnd.log, joined with " | ". */
void ct_log_tail (const char *dir, int n, char *buf, size_t len);
/* How many lines of DIR/cairnd.log contain needle (0 without a log). */
int ct_log_count (const char *dir, const char *needle);
/* What cairnd logs when its supervisor died and it took over. */
#define CT_SUPERVISOR_DIED "died; the keeper sees its"


#endif /* CAIRN_CRASHTEST_RUN_H */
