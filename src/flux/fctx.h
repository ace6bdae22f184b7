/* fctx.h - what the cairn-exec module shares with its jobs. */
#ifndef CAIRN_FLUX_FCTX_H
#define CAIRN_FLUX_FCTX_H

#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/cconn.h"
#include "flux/shellconf.h"

struct fjob;
struct resync;
struct orphan;
struct lookup;
struct statsreq;
struct noderelay;
struct nodewatch;
struct drainsync;

/* A shell's barrier request that came before its job's start request. */
struct early_barrier {
    flux_jobid_t id;
    uint32_t rank;
    const flux_msg_t *msg;
};

struct fctx {
    flux_t *h;
    uint32_t size;          /* brokers in the instance */
    struct cconn *cc;       /* to cairnd */
    char *instance;         /* this instance's UUID (instance.h) */
    json_t *env;            /* the broker's environment, for the shells */
    char **uris;            /* local-uri of each broker rank, once asked */
    struct fjob **jobs;     /* in flight, unordered */
    struct uriwait *uriwaits; /* fctx_uris calls in progress */
    size_t njobs, jobs_cap;
    uint64_t nstarted, nreleased; /* for stats */
    struct resync *resyncs; /* resync.h */
    json_t *resynced;       /* resync.h: id -> events seen, until taken */
    struct early_barrier *early; /* resync.h: parked until the start */
    size_t nearly;
    struct orphan *orphans; /* orphan.h */
    struct lookup *orphan_lookup;
    struct statsreq *statsreqs; /* stats-gets waiting for cairnd's stats */
    struct noderelay *relay; /* noderelay.h: to the other ranks, or NULL */
    struct nodewatch *nodewatch; /* nodewatch.h: Flux's view of the nodes */
    struct drainsync *drainsync; /* drainsync.h: Flux's undrains */
    struct shellconf conf;       /* [exec] and module arguments: job-shell,
                                  * barrier and shell-exit timeouts (updated
                                  * by a config reload) */
    int argc;                    /* the module's arguments, which win over */
    char **argv;                 /* [exec] at a config reload too */
    double start_timeout;    /* seconds a new job may wait for cairnd to
                              * take it before it fails (start-timeout=,
                              * default 60); 0 = for ever */
    json_t *exec_over;       /* execconf.h: the site's [exec] settings for
                              * each job's config in cairnd ({} if none) */
    bool partial;           /* partial release through housekeeping:
                             * [job-manager.housekeeping] command is
                             * cairn-flux-housekeeping (cairn_exec.c) */
};

/* The job with a start stream here for id, or NULL. */
struct fjob *fctx_job_find (struct fctx *ctx, flux_jobid_t id);

/* The job has sent its final release: forget and destroy it. */
void fctx_job_done (struct fctx *ctx, struct fjob *job);

/* Ensure ctx->uris[r] for the n broker ranks in ranks[], asking the
 * brokers that were not asked before (attr.get local-uri). Then call
 * cb (ctx, 0, arg), or cb (ctx, -1, arg) with errno (EHOSTUNREACH,
 * EINVAL for a rank outside the instance...) if one could not be asked:
 * at once when every URI is known, else from the reactor. */
typedef void (*fctx_uris_f) (struct fctx *ctx, int rc, void *arg);
void fctx_uris (struct fctx *ctx,
                const uint32_t *ranks,
                size_t n,
                fctx_uris_f cb,
                void *arg);

#endif /* CAIRN_FLUX_FCTX_H */
