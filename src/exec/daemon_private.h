/* daemon_private.h - the daemon's own state (struct cairnd: the loop, the
 * active jobs and their streams, the turn's commit), private to src/exec:
 * its job path (daemon*.c, runner.c, reconcile.c, remote*.c) and its
 * socket service (service*.c, bind.c, trust.c). What other rooms own is
 * behind their headers and only pointed at here: procs.h (the processes
 * here), node.h (the node role), quota.h, journal.h and outbox.h. */
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
#include "exec/daemon.h"
#include "exec/jobtable.h"
#include "exec/turn.h"
#include "exec/killwait.h"
#include "exec/quota.h"
#include "node/node.h"
#include "procs/procs.h"
#include "util/hashmap.h"
#include "server/server.h"
#include "journal/journal.h"

/* A client waiting for a job's responses (a `start` stream). Each sub is
 * on two lists, its job's and its connection's, so that a disconnect
 * costs its own streams, not a walk of every job. */
struct connsubs;
struct sub {
    struct sub *next, **pprev;   /* on je->subs */
    struct sub *cnext, **cpprev; /* on cs->head */
    struct connsubs *cs;
    struct jobentry *je;
    struct conn *conn;
    int64_t matchtag;
    bool reattached; /* a reattach stream: never gets `start` (RFC 32) */
    bool events;     /* asked for progress events (job_event_is_progress) */
    json_t *sent;    /* asked for output: rank -> {stdout, stderr} file
                        offsets sent (daemon_output.c); NULL if not */
};

/* The streams of one connection (d->conn_subs, keyed by conn_id). */
struct connsubs {
    struct sub *head;
    char key[24];
};

struct outbox; /* outbox.h */
struct remote; /* rank 0's processes on other nodes (remote.c) */

#define CAIRND_IDPOOL 64 /* execids per getrandom() */

struct cairnd {
    struct ev_loop *loop;
    struct cairn_config cfg;
    char *statedir;
    char *sockpath;
    const char *procroot;    /* /proc, or CAIRN_PROCROOT for tests */
    const char *bootid_path; /* or CAIRN_BOOTID_FILE for tests */
    char bootid[40];
    uid_t uid;
    int64_t instance_uid; /* flux.instance-owner's uid, -1 = none (trust.h) */
    int lockfd;
    struct procs *procs; /* the processes here (procs.h) */
    struct journal *journal;
    struct server *server;
    struct server *public_server; /* cfg public-socket, or NULL */
    struct jobtable *jobs;        /* the active jobs (jobtable.h) */
    struct hashmap *conn_subs; /* conn_id -> connsubs (with streams only) */
    struct remote *remote;     /* exec role: processes on other nodes */
    struct node *node;         /* node role (cfg.role_node), else NULL */
    struct binding *bindings;  /* connections' Flux instances (bind.c) */
    char bind_refused[BIND_UUID_MAX + 1]; /* last refused: logged once */
    struct outbox *outbox;     /* effects waiting for the commit */
    struct turn *turn;         /* the commit turn (turn.h) */
    ev_signal sigterm;
    ev_signal sigint;
    ev_timer purge_timer;
    ev_timer output_timer; /* live output, while noutput > 0 */
    int noutput;           /* streams that asked for output */
    bool stopping;
    int exit_code;
    double t_start;
    /* counters for `stats` */
    uint64_t njobs_done;
    struct killwait *kills; /* kills waiting for shells (killwait.h) */
    /* random bytes for execids (new_execid), the first idpool_left
     * ids' worth unused */
    unsigned char idpool[16 * CAIRND_IDPOOL];
    size_t idpool_left;
    struct quota *quota; /* the unprivileged clients' usage (quota.h) */
    struct views *views; /* jobs requests being answered (service_views.c) */
};

/* daemon.c */
double cairnd_now (void);
void cairnd_ctx (struct cairnd *d, struct job_ctx *ctx);
/* jobtable_add, the entry told which daemon holds it; NULL with ENOMEM. */
struct jobentry *cairnd_job_add (struct cairnd *d, struct job *job);
/* Forget a job (clean, or a refused start), with its streams, held kills
 * and watched processes. Not on the dirty list. */
void cairnd_job_remove (struct jobentry *je);

/* ---- live output (daemon_output.c) ---- */

/* Send a stream what a `log` event (a shell's journaled output; the
 * caller decoded its name) holds beyond the offsets in sent, and advance
 * them. Notes of cairn's own and other phases' output: nothing. */
void output_send_log (struct conn *c,
                      int64_t matchtag,
                      uint64_t id,
                      json_t *sent,
                      const json_t *entry);

/* p (a shell of je) has ended: send each output sub what its files hold
 * beyond what was sent, before they are read for the journal. */
void output_flush (struct jobentry *je, const struct job_proc *p);

/* A committed `log` event of je: output_send_log() to each output sub. */
void output_log_event (struct jobentry *je, const json_t *entry);

/* A committed proc-signal (ctx) of p: a job shell's kill or kill-shell is
 * told to je's streams that asked for events, as a `kill` notice
 * (cairn-protocol(7)); anything else: nothing. */
void output_kill_notice (struct jobentry *je,
                         const struct job_proc *p,
                         const json_t *ctx);

/* delta output subs more (or fewer): the tail timer runs while any. */
void output_watch (struct cairnd *d, int delta);

/* sent: the stream's output offsets if it asked for output (taken), or
 * NULL. */
void cairnd_sub_add (struct jobentry *je,
                     struct conn *c,
                     int64_t matchtag,
                     bool reattached,
                     bool events,
                     json_t *sent);
void cairnd_conn_gone (struct cairnd *d, struct conn *c);
/* Does cairnd hold a stream of c's (a job's events it follows)? */
bool cairnd_conn_busy (struct cairnd *d, struct conn *c);

/* daemon.c */
bool cairnd_journal_full (struct cairnd *d);

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

/* service.c */
void service_request (struct conn *c,
                      const char *topic,
                      int64_t matchtag,
                      json_t *payload,
                      void *arg);
void service_disconnect (struct conn *c, void *arg);
bool service_busy (struct conn *c, void *arg);
/* A checked `kill` of je's shells, carried out now: answered once its
 * signals are committed, or at once with the error. */
void service_kill (struct cairnd *d,
                   struct jobentry *je,
                   struct conn *c,
                   int64_t matchtag,
                   int signum);

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
/* Look at p, a job's process here, after the replay (runner_local). */
int reconcile_local (struct jobentry *je,
                     const struct job_proc *p,
                     struct cairn_error *err);
void reconcile_sweep_exits (struct cairnd *d);

#endif /* CAIRN_DAEMON_PRIVATE_H */
