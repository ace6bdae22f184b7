/* node.h - cairnd in the node role ("role": "node", cairnd(8),
 * DESIGN-MULTINODE.md): it runs the processes a rank-0 cairnd asks for
 * (node-exec), reports their ends (node-watch) until rank 0 has journaled
 * them (node-ack), and keeps no job.
 *
 * Each process is one record of the journal's nodeprocs table, journaled
 * before anything is done through the daemon's outbox (journal/outbox.h),
 * and run through procs.h like a job's. A record's state moves only as
 * nodeproc.h's table allows; a record replayed in a state no node writes
 * is refused (node_reconcile, EINVAL). The daemon lends what the node
 * uses (the journal, the outbox, procs) and answers for what it keeps:
 * struct node_ops. A request handler's reply goes through ops->ack, which
 * holds it until this turn's commit (W3, doc/design.md).
 *
 * Crash points: node.exitfile.read, node.push.before, and
 * exec.orphans.kill.before (procs_kill_leftovers) for a lost process.
 */
#ifndef CAIRN_NODE_H
#define CAIRN_NODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "journal/journal.h"
#include "journal/outbox.h"
#include "procs/procs.h"
#include "server/server.h"

struct node;

struct node_ops {
    /* Reply payload (taken) to c's request matchtag once this turn's
     * batch is committed. */
    void (*ack) (void *arg, struct conn *c, int64_t matchtag, json_t *payload);
    /* A record could not be staged: exit, acting on none of the turn's
     * batch (outbox.h, O3). */
    void (*journal_failed) (void *arg, const char *why)
        __attribute__ ((noreturn));
    /* May sender have this node-exec run (its payload as decoded: "user"
     * absent means root)? 0, or -1 with errno EPERM and err (T4,
     * trust.h). */
    int (*may_exec) (void *arg,
                     uid_t sender,
                     const json_t *payload,
                     struct cairn_error *err);
};

/* The node role over j, ob and procs (lent, not owned) on the machine of
 * boot id bootid; ops (with arg) as above. NULL with ENOMEM. */
struct node *node_create (struct journal *j,
                          struct outbox *ob,
                          struct procs *procs,
                          const char *bootid,
                          const struct node_ops *ops,
                          void *arg);
/* Stop watching its processes (they run on) and free it. Accepts NULL. */
void node_destroy (struct node *n);

/* Replay the nodeprocs table and look at each process (procs_look):
 * ended meanwhile, still running (watched again), never started (started
 * now, once), or lost. -1 with err when one could not be looked at, or
 * with errno EINVAL when a record is not one a node writes (not JSON, or
 * its "state" none of a record's, nodeproc.h). */
int node_reconcile (struct node *n, struct cairn_error *err);
/* How many process records the node holds (0 for NULL: the exec role). */
size_t node_nprocs (const struct node *n);
/* Does the node need execid's exit records (not acknowledged yet)? */
bool node_has (const struct node *n, const char *execid);
/* Batch the removal of up to max records acknowledged before cutoff (the
 * journal's retention); returns how many. 0 for NULL. */
size_t node_purge (struct node *n, double cutoff, size_t max);
/* Connection c went away: its node-watch streams and waiting replies. */
void node_conn_gone (struct node *n, struct conn *c);

/* The requests (cairn-protocol(7)), from privileged peers only. */
void node_req_exec (struct node *n,
                    struct conn *c,
                    int64_t matchtag,
                    json_t *payload);
void node_req_signal (struct node *n,
                      struct conn *c,
                      int64_t matchtag,
                      json_t *payload);
void node_req_ack (struct node *n,
                   struct conn *c,
                   int64_t matchtag,
                   json_t *payload);
void node_req_watch (struct node *n,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);

#endif /* CAIRN_NODE_H */
