/* daemon_private.h - the daemon's own state (struct cairnd), private to
 * src/exec: the rooms not yet lent what they use read it (service*.c).
 * The rooms that are lent theirs never include it: the job table
 * (jobtable.h), the commit turn (turn.h), the streams (streams.h), live
 * output (output.h), the held kills (killwait.h), the jobs' context
 * (jobctx.h), a job's processes here (localproc.h) and on other nodes
 * (remote.h), their runners (runner.h), the replay (reconcile.h), the Flux instance
 * bound (bind.h), whom it trusts (trust.h), the users' quotas (quota.h)
 * and their requests' weight (usercost.h); struct cairnd only points at
 * them, as at procs.h (the processes here), node.h (the node role),
 * journal.h and outbox.h. Only daemon.c, the wiring, creates and connects
 * them. */
#ifndef CAIRN_DAEMON_PRIVATE_H
#define CAIRN_DAEMON_PRIVATE_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/job.h"
#include "exec/bind.h"
#include "exec/trust.h"
#include "exec/usercost.h"
#include "exec/daemon.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/output.h"
#include "exec/streams.h"
#include "exec/turn.h"
#include "exec/killwait.h"
#include "exec/quota.h"
#include "exec/runner.h"
#include "node/node.h"
#include "procs/procs.h"
#include "util/hashmap.h"
#include "server/server.h"
#include "journal/journal.h"

struct outbox; /* outbox.h */
struct remote;    /* rank 0's processes on other nodes (remote.h) */
struct localproc; /* a job's processes here (localproc.h) */

struct cairnd {
    struct ev_loop *loop;
    struct cairn_config cfg;
    char *statedir;
    char *sockpath;
    const char *procroot;    /* /proc, or CAIRN_PROCROOT for tests */
    const char *bootid_path; /* or CAIRN_BOOTID_FILE for tests */
    char bootid[40];
    uid_t uid;
    struct trust *trust;  /* whom it acts for (trust.h) */
    struct usercost *cost; /* users' requests weighed (usercost.h) */
    int lockfd;
    struct procs *procs; /* the processes here (procs.h) */
    struct journal *journal;
    struct server *server;
    struct server *public_server; /* cfg public-socket, or NULL */
    struct jobtable *jobs;     /* the active jobs (jobtable.h) */
    struct streams *streams;   /* clients following jobs (streams.h) */
    struct remote *remote;     /* exec role: processes on other nodes */
    struct localproc *local;   /* a job's processes here (localproc.h) */
    struct runners runners;    /* local, remote: a process's (runner.h) */
    struct node *node;         /* node role (cfg.role_node), else NULL */
    struct bindings *bindings; /* connections' Flux instances (bind.h) */
    char bind_refused[BIND_UUID_MAX + 1]; /* last refused: logged once */
    struct outbox *outbox;     /* effects waiting for the commit */
    struct turn *turn;         /* the commit turn (turn.h) */
    struct jobctx *jctx;       /* the jobs' view of the world (jobctx.h) */
    ev_signal sigterm;
    ev_signal sigint;
    ev_timer purge_timer;
    struct output *output; /* live output (output.h) */
    bool stopping;
    int exit_code;
    double t_start;
    /* counters for `stats` */
    uint64_t njobs_done;
    struct killwait *kills; /* kills waiting for shells (killwait.h) */
    struct quota *quota; /* the unprivileged clients' usage (quota.h) */
    struct views *views; /* jobs requests being answered (service_views.c) */
};




/* service.c */
void service_request (struct conn *c,
                      const char *topic,
                      int64_t matchtag,
                      json_t *payload,
                      void *arg);
/* A checked `kill` of je's shells, carried out now: answered once its
 * signals are committed, or at once with the error. */
void service_kill (struct cairnd *d,
                   struct jobentry *je,
                   struct conn *c,
                   int64_t matchtag,
                   int signum);

#endif /* CAIRN_DAEMON_PRIVATE_H */
