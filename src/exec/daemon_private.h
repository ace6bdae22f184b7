/* daemon_private.h - the daemon's own state (struct cairnd), private to
 * src/exec: the rooms not yet lent what they use read it (daemon_proc.c,
 * reconcile.c, remote*.c, runner.c). The rooms that are lent
 * theirs never include it: the job table (jobtable.h), the commit turn
 * (turn.h), the streams (streams.h), live output (output.h), the held
 * kills (killwait.h), the jobs' context (jobctx.h), the Flux instance
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
#include "node/node.h"
#include "procs/procs.h"
#include "util/hashmap.h"
#include "server/server.h"
#include "journal/journal.h"

struct outbox; /* outbox.h */
struct remote; /* rank 0's processes on other nodes (remote.c) */

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
    struct node *node;         /* node role (cfg.role_node), else NULL */
    struct bindings *bindings; /* connections' Flux instances (bind.h) */
    struct outbox *outbox;     /* effects waiting for the commit */
    struct turn *turn;         /* the commit turn (turn.h) */
    struct jobctx *jctx;       /* the jobs' view of the world (jobctx.h) */
    ev_signal sigterm;
    ev_signal sigint;
    ev_timer purge_timer;
    struct output *output; /* live output (output.h) */
    int exit_code;
    double t_start;
    /* counters for `stats` */
    uint64_t njobs_done;
    struct killwait *kills; /* kills waiting for shells (killwait.h) */
    struct quota *quota; /* the unprivileged clients' usage (quota.h) */
    struct views *views; /* jobs requests being answered (service_views.h) */
    struct service *service; /* the sockets' requests (service.h) */
};




/* daemon_proc.c: a job's processes here (runner_local), through procs.h */

/* Start a job's intent here: asked of the supervisor, answered later. */
int proc_spawn (struct jobentry *je, const char *execid);
/* Watch a job's process (pid, pidfd: taken). */
int proc_watch (struct jobentry *je, const char *execid, pid_t pid, int pidfd);
/* The end of a job's process is committed (lost: outcome unknown): its
 * files go; a lost one's leftovers are killed. */
void proc_finished (struct jobentry *je, const char *execid, bool lost);
/* A job's process ended: read its exit record into the job (shim_status
 * and rec as procs_owner_ops.ended's; rec NULL: read the record). */
void proc_collect (struct jobentry *je,
                   const char *execid,
                   int shim_status,
                   const struct procs_exit *rec);
/* Look at p, a job's process here, after the replay (runner_local's
 * reconcile): collect its exit, watch it again, start it (again) or call
 * it lost, as procs_look judges it. 0, or -1 with err. */
int proc_reconcile (struct jobentry *je,
                    const struct job_proc *p,
                    struct cairn_error *err);

/* ---- rank 0's processes on other nodes (remote.c, DESIGN-MULTINODE.md) */

int remote_create (struct cairnd *d);
void remote_destroy (struct cairnd *d);
/* A remote process of je not done after a replay: ask its node about it
 * (node-exec is idempotent) once a relay is there. */
int remote_track (struct jobentry *je, const char *execid);
/* Effects of committed events of a remote process: its intent (ask the
 * node to run it), a signal, its end (node-ack, forget it). */
void remote_exec (struct jobentry *je, const char *execid);
void remote_signal (struct jobentry *je, const char *execid, int signum);
void remote_finished (struct jobentry *je, const char *execid);
/* A committed proc-late: the node may forget it. */
void remote_late (struct jobentry *je, json_t *ctx);
void remote_conn_gone (struct cairnd *d, struct conn *c);
void req_node_relay (struct cairnd *d,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);
void req_node_report (struct cairnd *d,
                      struct conn *c,
                      int64_t matchtag,
                      json_t *payload);
void req_node_hello (struct cairnd *d,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);
void req_node_state (struct cairnd *d,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);

/* reconcile.c */
int reconcile (struct cairnd *d, struct cairn_error *err);
/* Job id as its committed events leave it (also a job that is done, for
 * what may still be recorded of it), or NULL with errno and err: ENOENT
 * (no such job), EINVAL (an event the fold refuses), ENOMEM. */
struct job *
cairnd_job_read (struct cairnd *d, uint64_t id, struct cairn_error *err);
void reconcile_sweep_exits (struct cairnd *d);

#endif /* CAIRN_DAEMON_PRIVATE_H */
