/* fjobrec.h - a Flux job's record (struct fjob): the data that fjob.c
 * (the start path, requests from the job-manager and the shells, cairnd's
 * stream taken in), fjob_stream.c (cairnd's responses handled one at a
 * time, fjob_stream.h) and fjob_say.c (state moves, answers to the
 * job-manager, resumes and exceptions to cairnd, fjob_say.h) share. Types
 * only, below all three; calls go down: fjob.c -> fjob_stream.c ->
 * fjob_say.c. Nothing outside these three files (and t_fjob) includes it.
 */
#ifndef CAIRN_FLUX_FJOBREC_H
#define CAIRN_FLUX_FJOBREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/fctx.h" /* struct fjob_ops */
#include "flux/fjobstate.h"

struct relay {
    int64_t matchtag;
    const flux_msg_t *msg;
    double expiration; /* an `expiration` request's, else -1 */
};

struct fjob {
    struct fctx *ctx;
    struct fjob_ops ops; /* the module's, with arg (fjob.h) */
    void *arg;
    const flux_msg_t *req; /* the job-manager's start request */
    flux_jobid_t id;
    uint32_t userid;
    json_t *jobspec, *R;
    char f58[32];
    uint32_t *ranks; /* broker ranks of R, ascending */
    size_t nranks;
    enum fjob_state state; /* fjobstate.h; moved by fjob_move() only */
    bool jm_reattach;      /* the job-manager's request had reattach */
    bool fresh;            /* our stream is a fresh start (not a reattach) */
    bool relayed_start;    /* `start` or `reattached` went to the job-manager */
    int64_t matchtag;      /* current cairnd stream, 0 = none */
    int nresp;             /* responses received on it, for `since` */
    int kill_count;        /* cairnd's kill notices: the escalation's */
    int kill_shell_count;  /* figures, job-exec's per-job stats */
    double kill_timeout;   /* (0 until the first notice) */
    double expiration;     /* the time limit in force (cairnd's, with its
                              start delay), 0 = none or not known */
    double t_restart;      /* when this module took over a job that ran
                              through a broker restart, 0 = none */
    bool lost_contact;     /* a shell lived through it: exception raised */
    json_t *queue;         /* cairnd responses not yet handled, in order */
    json_t *skip;          /* name -> how many the job's eventlog already has */
    json_t *echo;          /* exception types we passed to cairnd */
    flux_future_t *step;   /* the handling of queue[0], when asynchronous */
    flux_future_t *ns;     /* guest namespace creation */
    flux_watcher_t *ns_wait; /* tests: its creation held (TESTENV_HOLD_NS) */
    struct fshell *watch;    /* the shells' barrier and ends (fshell.h) */
    struct relay *relays;
    size_t nrelays;
    bool skip_pending;    /* the first `reattached`: read the eventlog */
    bool has_ns;          /* the guest namespace exists */
    bool asked;           /* cairnd was asked whether it has the job */
    bool conflict;        /* why it failed: cairnd's job of this id is not this
                             one (adopt.h), nothing of the Flux job's may
                             reach it */
    json_t *final;        /* data of the final release being sent */
    flux_watcher_t *hold; /* tests: the final release held (final_cb) */
    struct idset *shells; /* broker ranks running a shell: shell rank i is
                             the i-th (all of R's until a shrink) */
    struct brokers_wait *bw; /* before a resume: the shells' brokers */
    flux_watcher_t *bound;   /* a new job not taken by cairnd in time fails
                                (fctx start_timeout) */
    bool resume_pending;     /* R is shrunk: cairnd must hear `resume` */
    int64_t resume_mt;       /* matchtag of the `resume` sent, 0 = none */
    bool ready_pending;      /* the namespace is made: cairnd must hear the
                                word (a ready `resume`, hold-start) */
    int64_t ready_mt;        /* matchtag of the word sent, 0 = none */
    struct shellout *out;    /* the shells' output posted (shellout.h); NULL:
                                not asked for (a reattach after a module
                                load, which knows not what was posted) */
};

/* Has cairnd's stream for the job opened (running, or releasing after
 * it)? A failed job may have been; it is asked nothing more either way. */
static inline bool fjob_attached (const struct fjob *job)
{
    return job->state == FJOB_RUNNING || job->state == FJOB_RELEASING;
}

#endif /* CAIRN_FLUX_FJOBREC_H */
