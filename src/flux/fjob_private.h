/* fjob_private.h - a Flux job's state, shared by fjob.c (the start path,
 * requests from the job-manager and the shells, cairnd's stream taken in),
 * fjob_stream.c (cairnd's responses handled one at a time) and, below
 * both, fjob_say.c (state moves, answers to the job-manager, resumes and
 * exceptions to cairnd). Calls go down only: fjob.c -> fjob_stream.c ->
 * fjob_say.c. Nothing outside these three files includes it.
 */
#ifndef CAIRN_FLUX_FJOB_PRIVATE_H
#define CAIRN_FLUX_FJOB_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/fjob.h"
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
    bool jm_reattach;     /* the job-manager's request had reattach */
    bool fresh;           /* our stream is a fresh start (not a reattach) */
    bool relayed_start;   /* `start` or `reattached` went to the job-manager */
    int64_t matchtag;     /* current cairnd stream, 0 = none */
    int nresp;            /* responses received on it, for `since` */
    int kill_count;       /* cairnd's kill notices: the escalation's */
    int kill_shell_count; /* figures, job-exec's per-job stats */
    double kill_timeout;  /* (0 until the first notice) */
    double expiration;    /* the time limit in force (cairnd's, with its
                             start delay), 0 = none or not known */
    double t_restart;     /* when this module took over a job that ran
                             through a broker restart, 0 = none */
    bool lost_contact;    /* a shell lived through it: exception raised */
    json_t *queue;        /* cairnd responses not yet handled, in order */
    json_t *skip;         /* name -> how many the job's eventlog already has */
    json_t *echo;         /* exception types we passed to cairnd */
    flux_future_t *step;  /* the handling of queue[0], when asynchronous */
    flux_future_t *ns;    /* guest namespace creation */
    flux_watcher_t *ns_wait; /* tests: its creation held (TESTENV_HOLD_NS) */
    struct fshell *watch; /* the shells' barrier and ends (fshell.h) */
    struct relay *relays;
    size_t nrelays;
    bool skip_pending; /* the first `reattached`: read the eventlog */
    bool has_ns;       /* the guest namespace exists */
    bool asked;        /* cairnd was asked whether it has the job */
    bool conflict;     /* why it failed: cairnd's job of this id is not this
                          one (adopt.h), nothing of the Flux job's may
                          reach it */
    json_t *final;           /* data of the final release being sent */
    flux_watcher_t *hold;    /* tests: the final release held (final_cb) */
    struct idset *shells;    /* broker ranks running a shell: shell rank i is
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

/* fjob_say.c: move the job by ev (fjobstate.h's table). Returns true, or
 * false with a line in the log and the state left alone when the table
 * has no such move: the caller then does nothing of what the move was
 * for. */
bool fjob_move (struct fjob *job, enum fjob_event ev);

/* Has cairnd's stream for the job opened (running, or releasing after
 * it)? A failed job may have been; it is asked nothing more either way. */
static inline bool fjob_attached (const struct fjob *job)
{
    return job->state == FJOB_RUNNING || job->state == FJOB_RELEASING;
}

/* fjob_say.c: answers to the job-manager's start request (data_new stolen;
 * NULL: {}). */
void fjob_jm_respond (struct fjob *job, const char *type, json_t *data_new);
void fjob_jm_exception (struct fjob *job,
                        int severity,
                        const char *type,
                        const char *note);
/* fjob_say.c: tell cairnd the job's R is shrunk (sent again after a
 * reconnect until answered: cairnd's `resume` is idempotent). */
void fjob_send_resume (struct fjob *job);
/* fjob_say.c: tell cairnd the job's guest namespace is there (a ready
 * `resume`, fjob.c's say_ready). */
void fjob_send_ready (struct fjob *job);

/* fjob_stream.c: handle the queue of cairnd's responses, in order, one
 * asynchronous step at a time, until it is empty or the final release is
 * sent; nothing while the guest namespace is being made (job->ns). */
void fjob_process (struct fjob *job);
/* fjob_say.c: is the guest namespace still to be made (job->ns, ns_wait)? */
bool fjob_ns_pending (const struct fjob *job);
/* fjob_say.c: tests: does the file the environment variable env names exist
 * (core/testenv.h's holds)? */
bool fjob_test_held (const char *env);
/* fjob_say.c: end the job with a fatal exec exception, through cairnd,
 * which journals it and sends it back on the stream. */
void fjob_raise_fatal (struct fjob *job, const char *note);
/* fjob_say.c: the same, and with echo, cairnd's copy on the stream is
 * dropped (Flux has it already). */
void fjob_raise (struct fjob *job, const char *note, bool echo);
/* fjob_say.c: fshell.h's verdict on the shells: a fatal exception,
 * through cairnd (arg: the job). */
void fjob_shell_fatal (void *arg, const char *note);

#endif /* CAIRN_FLUX_FJOB_PRIVATE_H */
