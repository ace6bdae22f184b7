/* job_private.h - the job struct, shared by job*.c only. */
#ifndef CAIRN_JOB_PRIVATE_H
#define CAIRN_JOB_PRIVATE_H

#include "core/job.h"
#include "core/jobspec.h"
#include "core/rv1.h"

struct job {
    uint64_t id;
    enum job_state state;
    uint32_t nevents;
    uint32_t nresponses;
    uint32_t userid;

    bool accepted;     /* accept folded: all, userid, jobspec set */
    bool unprivileged; /* submitted by an unprivileged client (accept's
                          "privileged": false; absent means privileged) */
    char *imp;         /* the launcher its shells run through (accept's
                          "imp": Flux's IMP), or NULL: as its user */
    uint32_t imp_uid;  /* the uid the launcher is started as */
    struct jobspec *jobspec;
    struct job_config cfg;
    char *nodelist; /* R's nodelist, one hostlist: drains name hosts */

    /* rank sets; all are subsets of `all` */
    struct idset *all;
    struct idset *local; /* multinode.local-ranks, decoded; NULL when off */
    struct idset *critical;       /* loss is fatal */
    struct idset *marked;         /* fail-ranks during the prolog */
    char *mark_note;              /* the last fail-ranks note (at most
                                     JOB_MARK_NOTE_MAX bytes), or NULL */
    struct idset *tolerated;      /* prolog failed tolerably: left out */
    struct idset *held;           /* ranks whose shells wait for resume */
    struct idset *run;            /* ranks with a shell */
    struct idset *cleanup;        /* finished with the job's work */
    struct idset *epilog_ranks;   /* cleanup ranks that get an epilog */
    struct idset *epilog_covered; /* ranks with an epilog process */
    struct idset *done;           /* cleanup complete: may be released */
    struct idset *released;
    struct idset *drained;

    struct job_proc *procs;
    size_t nprocs;
    size_t procs_alloc;
    uint32_t *procidx;  /* execid -> procs[slot - 1]: open addressing on
                           execid_hash, 0 empty; at most half full */
    size_t procidx_cap; /* slots: 0, or a power of two */
    json_t *posted;  /* outside services' events: name -> [context...];
                        NULL until the first */
    int nactive[3];  /* processes not done, per phase */

    bool prolog_started;
    bool prolog_finished;
    bool started;
    bool resumed; /* the client said resume (held jobs only) */
    bool ready;   /* hold-start: the client's word came (ready resume) */
    bool hold_ready_only; /* the hold waits for that word only */
    bool finished;
    bool epilog_started;
    bool epilog_finished;
    bool final_released;

    bool fatal;          /* a severity-0 exception was raised */
    char fatal_type[32]; /* type of the first one */
    bool expired;        /* the time limit exception was raised */
    bool fatal_after_expiry; /* then another fatal one (a cancel): the
                                shells get the term signal too */
    int exc_wait_status; /* from an exception, or -1 */
    int finish_status;

    double expiration; /* R's, or the last expiration event's; 0 = none */
    double starttime;  /* R's execution.starttime; 0 = unset */
    double t_start;    /* when the shells were started (start event) */
    double t_accept;
    double t_first_done;
    double t_clean;

    size_t output_bytes[3]; /* journaled output, per phase */
    bool output_truncated[3];
};

/* job_decide.c needs these from job.c */
struct job_proc *job_proc_lookup (struct job *job, const char *execid);
int job_emit (struct job *job,
              const struct job_ctx *ctx,
              json_t *out,
              const char *name,
              json_t *context);

#endif /* CAIRN_JOB_PRIVATE_H */
