/* fctx.h - what the cairn-exec module lends its rooms: the broker, the
 * connection to cairnd, the settings, and each room's own state (the
 * fields name their owner). A data struct only: no function here, so
 * that what includes it calls nothing up in cairn_exec.c; a job gets the
 * rest through fjob_ops (fjob.h). */
#ifndef CAIRN_FLUX_FCTX_H
#define CAIRN_FLUX_FCTX_H

#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/cconn.h"
#include "flux/shellconf.h"

struct fjob;
struct fjobs;
struct resync;
struct orphan;
struct lookup;
struct statsreq;
struct noderelay;
struct nodewatch;
struct drainsync;

/* What the module lends a job besides its context (struct fctx below:
 * the broker, the connection to cairnd, the settings): the job answers through
 * these and never calls up into the module. */
struct fjob_ops {
    /* The final release went to the job-manager: the job is over, and
     * may be destroyed from this call (it is not used after it). */
    void (*released) (struct fjob *job, void *arg);
    /* What a resync saw of job id's events before its start request came
     * (resync.h): {name: count}, a new reference, or NULL. */
    json_t *(*seen) (flux_jobid_t id, void *arg);
};

/* A shell's barrier request that came before its job's start request. */
struct early_barrier {
    flux_jobid_t id;
    uint32_t rank;
    const flux_msg_t *msg;
};

struct fctx {
    flux_t *h;
    uint32_t size;            /* brokers in the instance */
    struct cconn *cc;         /* to cairnd */
    char *instance;           /* this instance's UUID (instance.h) */
    json_t *env;              /* the broker's environment, for the shells */
    char **uris;              /* local-uri of each broker rank, once asked */
    struct fjobs *jobs;       /* fjobs.h: in flight */
    struct uriwait *uriwaits; /* uris.h: calls in progress */
    uint64_t nstarted, nreleased; /* for stats */
    struct resync *resyncs;       /* resync.h */
    json_t *resynced;             /* resync.h: id -> events seen, until taken */
    struct early_barrier *early;  /* resync.h: parked until the start */
    size_t nearly;
    struct orphan *orphans; /* orphan.h */
    struct lookup *orphan_lookup;
    struct statsreq *statsreqs;  /* stats-gets waiting for cairnd's stats */
    struct noderelay *relay;     /* noderelay.h: to the other ranks, or NULL */
    struct nodewatch *nodewatch; /* nodewatch.h: Flux's view of the nodes */
    struct drainsync *drainsync; /* drainsync.h: Flux's undrains */
    struct shellconf conf;       /* [exec] and module arguments: job-shell,
                                  * barrier and shell-exit timeouts (updated
                                  * by a config reload) */
    int argc;                    /* the module's arguments, which win over */
    char **argv;                 /* [exec] at a config reload too */
    double start_timeout;        /* seconds a new job may wait for cairnd to
                                  * take it before it fails (start-timeout=,
                                  * default 60); 0 = for ever */
    json_t *exec_over;           /* execconf.h: the site's [exec] settings for
                                  * each job's config in cairnd ({} if none) */
    bool partial;                /* partial release through housekeeping:
                                  * [job-manager.housekeeping] command is
                                  * cairn-flux-housekeeping (cairn_exec.c) */
};

#endif /* CAIRN_FLUX_FCTX_H */
