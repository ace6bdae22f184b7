/* remote.h - rank 0's processes on other nodes (runner_remote, runner.h;
 * multinode, DESIGN-MULTINODE.md).
 *
 * A job's process whose rank runs elsewhere is asked of its node through
 * the relay (the cairn-exec module's `node-relay` stream); the nodes'
 * REPORTs become the job's events, journaled before anything is done with
 * them, and each is acknowledged (`node-ack`) once its cause is committed.
 * Every `poll` seconds an unfinished process is asked about again; a node
 * silent past `timeout`, or whose broker left Flux, has its processes
 * lost.
 *
 * The room is lent the loop (its clock), the journal and the outbox (a
 * late report of a job no longer in memory is staged there), the users'
 * quotas (that record's bytes), the jobs (a report names its job), the
 * commit turn (a request is answered once what it caused is committed)
 * and the jobs' context. Its answers are the jobs' events and the
 * replies to its requests: it tells no room above it anything. The
 * service hands it the four requests below (only in the exec role).
 */
#ifndef CAIRN_REMOTE_H
#define CAIRN_REMOTE_H

#include <ev.h>
#include <jansson.h>
#include <stdint.h>

struct journal;  /* journal/journal.h */
struct outbox;   /* journal/outbox.h */
struct quota;    /* exec/quota.h */
struct jobtable; /* exec/jobtable.h */
struct jobentry;
struct turn;   /* exec/turn.h */
struct jobctx; /* exec/jobctx.h */
struct conn;   /* server/server.h */
struct remote;

/* The room, lent what it uses (kept: they must outlive it). Its clock
 * runs on loop only while there is something to ask or to forget. NULL
 * with errno ENOMEM. */
struct remote *remote_create (struct ev_loop *loop,
                              struct journal *journal,
                              struct outbox *outbox,
                              struct quota *quota,
                              struct jobtable *jobs,
                              struct turn *turn,
                              struct jobctx *jctx);

/* Its clock stops; what it tracks is forgotten (nothing is sent). NULL
 * is fine; errno is kept. */
void remote_destroy (struct remote *r);

/* A remote process of je not done after a replay: ask its node about it
 * (node-exec is idempotent) once a relay is there. 0, or -1 (logged) when
 * it cannot be tracked. */
int remote_track (struct remote *r, struct jobentry *je, const char *execid);

/* Effects of committed events of a remote process: its intent (ask the
 * node to run it; lost at once when its node is down), a signal, its end
 * (node-ack, forget it). r NULL (a node-role cairnd, which runs no
 * job): nothing is tracked, so signal and finished do nothing; exec and
 * late need r. */
void remote_exec (struct remote *r, struct jobentry *je, const char *execid);
void remote_signal (struct remote *r,
                    struct jobentry *je,
                    const char *execid,
                    int signum);
void remote_finished (struct remote *r,
                      struct jobentry *je,
                      const char *execid);

/* A committed proc-late of je (its event context ctx): the node may
 * forget it. */
void remote_late (struct remote *r, struct jobentry *je, json_t *ctx);

/* c went away: if it was the relay, nodes are not asked until another
 * comes. r NULL is fine. */
void remote_conn_gone (struct remote *r, struct conn *c);

/* The requests (service.c's handler table, exec role), each answered on
 * c/matchtag: node-relay (c becomes the relay: a stream, never answered
 * but by an error), node-report (remote_report.c; answered once what it
 * caused is committed), node-hello (a node is up: ask it again),
 * node-state (Flux's word on ranks going offline or online). A malformed
 * payload: EPROTO (EINVAL: node-state's bad idset). */
void req_node_relay (struct remote *r,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);
void req_node_report (struct remote *r,
                      struct conn *c,
                      int64_t matchtag,
                      json_t *payload);
void req_node_hello (struct remote *r,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);
void req_node_state (struct remote *r,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);

#endif /* CAIRN_REMOTE_H */
