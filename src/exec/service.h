/* service.h - cairnd's socket service: the RFC 32 requests
 * (cairn-protocol(7)) of both sockets, who may send each, and what each
 * asks of the rooms that own the state.
 *
 * A request that changes a job is answered only after the events it
 * caused are committed (turn_ack), so a client is never told something a
 * crash could take back. Requests that cannot be understood get EPROTO,
 * bad values EINVAL, unknown jobs ENOENT; per-job failures after a job was
 * accepted travel as `exception` responses, never as errors.
 *
 * The service owns no job and no stream: it checks a request (its table
 * says who may send it and which role serves it, before any handler
 * runs), decodes it, and hands it to the room that owns what it changes,
 * all of them lent (struct service_lent), rank 0's processes on other
 * nodes (remote.h) among them. What the wiring keeps (its counters) is
 * reached through struct service_ops.
 */
#ifndef CAIRN_EXEC_SERVICE_H
#define CAIRN_EXEC_SERVICE_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct cairn_config; /* core/config.h */
struct conn;         /* server/server.h */
struct journal;      /* journal/journal.h */
struct outbox;       /* journal/outbox.h */
struct procs;        /* procs/procs.h */
struct node;         /* node/node.h */
struct remote;       /* exec/remote.h */
struct jobentry;     /* exec/jobtable.h */
struct jobtable;
struct turn;     /* exec/turn.h */
struct streams;  /* exec/streams.h */
struct jobctx;   /* exec/jobctx.h */
struct trust;    /* exec/trust.h */
struct usercost; /* exec/usercost.h */
struct quota;    /* exec/quota.h */
struct bindings; /* exec/bind.h */
struct killwait; /* exec/killwait.h */
struct views;    /* exec/service_views.h */
struct service;

/* What the service uses and does not own: the wiring's, living as long as
 * the service. */
struct service_lent {
    const struct cairn_config *cfg; /* read live: limits, job settings */
    uid_t uid;                      /* cairnd's own */
    double t_start;                 /* cairnd's start (stats' uptime) */
    struct journal *journal;        /* reads; undrain's removals, staged */
    struct outbox *outbox;          /* undrain's batch (outbox.h) */
    struct jobtable *jobs;          /* the active jobs: found, added */
    struct turn *turn;              /* replies held for the commit */
    struct streams *streams;        /* a start's or reattach's stream */
    struct jobctx *jctx;            /* each decision's context */
    struct trust *trust;            /* who may ask what */
    struct usercost *cost;          /* users' requests weighed */
    struct quota *quota;            /* users' jobs and journal room */
    struct bindings *bindings;      /* connections' Flux instances */
    struct killwait *kills;         /* kills held for starting shells */
    struct procs *procs;            /* stats: processes, confinement */
    struct views *views;            /* jobs, job-events */
    struct node *node;              /* the node role's, or NULL (exec role) */
    struct remote *remote; /* rank 0's other nodes, or NULL (node role) */
};

typedef void (*service_request_f) (void *arg,
                                   struct conn *c,
                                   int64_t matchtag,
                                   json_t *payload);

/* What the wiring answers for (all required). */
struct service_ops {
    /* Jobs done since cairnd started (stats' "jobs-done"). */
    uint64_t (*jobs_done) (void *arg);
    /* Connections open on cairnd's sockets (stats' "connections"). */
    int (*nconns) (void *arg);
};

/* The service over what lent names (copied; each pointer the wiring's),
 * answering through ops (copied) with arg. NULL with errno ENOMEM. */
struct service *service_create (const struct service_lent *lent,
                                const struct service_ops *ops,
                                void *arg);

/* NULL is fine; errno is kept. Nothing it was lent is freed. */
void service_destroy (struct service *svc);

/* A request from c (the server's request callback): answered now, or
 * once what it staged is committed. Never fails: each error is its
 * response (EPERM before any handler runs, EAGAIN once stopping, ENOSYS
 * for an unknown topic or one of the other role). */
void service_request (struct service *svc,
                      struct conn *c,
                      const char *topic,
                      int64_t matchtag,
                      json_t *payload);

/* cairnd is stopping (a SIGTERM): every request from now on gets
 * EAGAIN "cairnd is stopping". */
void service_stopping (struct service *svc);

/* A checked `kill` of je's shells, carried out now: answered once its
 * signals are committed, or at once with the error. (A held kill, when
 * the job's shells no longer start: killwait.h's ops.kill.) */
void service_kill (struct service *svc,
                   struct jobentry *je,
                   struct conn *c,
                   int64_t matchtag,
                   int signum);

#endif /* CAIRN_EXEC_SERVICE_H */
