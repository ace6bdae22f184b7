/* remote_private.h - rank 0's state of its processes on other nodes,
 * shared by remote.c (tracking, asking, the clock, a node's loss and
 * return) and remote_report.c (what the nodes report). Nothing else
 * includes it.
 */
#ifndef CAIRN_EXEC_REMOTE_PRIVATE_H
#define CAIRN_EXEC_REMOTE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <ev.h>
#include <jansson.h>

#include "core/job.h"

struct jobentry;
struct conn;
struct hashmap;

struct rproc {
    struct jobentry *je; /* not in remote.gone: the job may be gone */
    uint64_t id;         /* the job's */
    char execid[EXECID_LEN + 1];
    uint32_t rank;
    double t_track;  /* since when we wait on it (this cairnd's life) */
    double t_sent;   /* last node-exec sent, 0: never */
    bool answered;   /* its node knows it: a query needs only the execid */
    bool given_up;   /* lost because its node went silent */
    bool killed;     /* in remote.gone: its kill was sent */
    double t_gone;   /* in remote.gone: since when */
    double t_killed; /* in remote.gone: when its kill was sent */
};

struct rnode {
    char key[16];  /* decimal rank */
    double heard;  /* last report or hello, 0: never */
    bool down;     /* silent past the timeout, or its broker left Flux:
                    * new work is lost at once */
    char why[160]; /* while down: why, as in the notes */
};

struct remote {
    /* lent (remote.h) */
    struct ev_loop *loop;
    struct journal *journal;
    struct outbox *outbox;
    struct quota *quota;
    struct jobtable *jobs;
    struct turn *turn;
    struct jobctx *jctx;
    /* its own */
    struct hashmap *procs; /* execid -> rproc */
    struct hashmap *nodes; /* rank -> rnode */
    struct hashmap *gone;  /* execid -> rproc given up on, not heard of
                              since: killed if its node comes back */
    struct conn *relay;    /* the node-relay stream, or NULL */
    int64_t relay_mt;
    double relay_since;
    bool backlog; /* a message waited for room in the relay's queue */
    json_t *outq; /* node-ack and node-signal messages waiting for room */
    ev_timer tick;
};

/* One message to node rank through the relay (payload_new stolen). A
 * node-exec (queue false) is not sent when the relay's queue has no room
 * now: false, and it is asked again at the next tick; another message
 * (queue true) waits for room. Dropped when there is no relay. */
bool remote_relay_send (struct remote *r,
                        uint32_t rank,
                        const char *topic,
                        json_t *payload_new,
                        bool queue);
/* Node rank was heard from: it is up, and what was given up on there is
 * killed if it still runs. */
void remote_heard (struct remote *r, uint32_t rank);
/* The outbox effect of a node-ack to rank for execid (arg: the remote),
 * queued once what the node reported is committed. */
void remote_ack_effect (void *arg, const char *execid, int rank, json_t *data);

#endif /* CAIRN_EXEC_REMOTE_PRIVATE_H */
