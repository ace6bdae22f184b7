/* daemon_private.h - cairnd's internals, shared by daemon*.c, service.c
 * and reconcile.c. */
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
#include "supervise/exitdir.h"
#include "util/hashmap.h"
#include "server/server.h"
#include "supervise/spawner_proto.h"
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

/* A job in memory (active jobs only). */
struct jobentry {
    struct cairnd *d;
    struct job *job;
    char key[24];    /* decimal id, the key in d->jobs */
    char name[64];   /* "DECIMAL (ƒF58)", for the log */
    json_t *pending; /* events emitted this turn, not yet committed */
    bool dirty;      /* on d->dirty */
    struct jobentry *dirty_next;
    ev_timer timer;
    struct sub *subs;
};

struct nproc;  /* a node-role cairnd's process (node.c) */
struct outbox; /* outbox.h */
struct remote; /* rank 0's processes on other nodes (remote.c) */
struct node;   /* a node-role cairnd's state (node.c) */

/* A process we watch through its shim's pidfd: a job's (je) or, in the
 * node role, one a rank-0 cairnd asked for (np). */
struct watch {
    struct cairnd *d;
    struct jobentry *je;
    struct nproc *np;
    char execid[EXECID_LEN + 1];
    pid_t pid;
    int pidfd;
    bool supervised; /* our supervisor's: its end comes as an ENDED, and
                      * io is not started (it is readable at the exit,
                      * before the exit record is written) */
    bool orphaned;   /* its supervisor died: the keeper writes its exit
                      * record; we kill what is left of its cgroup */
    ev_io io;
    ev_timer settle; /* another's command that exited: wait for its exit
                      * file until its supervisor reaps it */
};

/* A reply held back until the events that justify it are committed. */
struct ack {
    struct ack *next;
    struct conn *conn; /* NULL once the client went away */
    int64_t matchtag;
    json_t *payload;
};

/* How many live processes (running, or asked for) make cairnd group its
 * commits (journal.commit-interval): fewer, and each commits at once. */
#define CAIRND_GROUP_COMMIT_LIVE 16

struct cairnd {
    struct ev_loop *loop;
    struct cairn_config cfg;
    char *statedir;
    char *sockpath;
    char *shim;
    const char *procroot;    /* /proc, or CAIRN_PROCROOT for tests */
    const char *bootid_path; /* or CAIRN_BOOTID_FILE for tests */
    char bootid[40];
    uid_t uid;
    int64_t instance_uid; /* flux.instance-owner's uid, -1 = none (trust.h) */
    int lockfd;
    int exitdir;                /* xd.fd */
    struct exitdir xd;          /* the shims' files (exitdir.h) */
    struct janitor *janitor;    /* removes ended processes' files */
    struct keeper *keeper;      /* forked before anything below was opened */
    ev_io keeper_watch;         /* its pidfd: readable when it died */
    struct spawner *spawner;    /* the supervisor, the keeper's child */
    ev_io spawner_watch;        /* its pidfd: readable when it died */
    ev_io spawner_msgs;         /* its socket: ENDED notices */
    ev_timer spawner_kick;      /* ENDED notices queued during a spawn */
    struct spawn_pending *pend; /* requests in order, answered up to */
    size_t pend_head, npend, pend_room; /* ... pend_head */
    struct spawn_pending *lost; /* a dead supervisor's unanswered ones */
    size_t nlost, lost_room;
    int supervisor_deaths;     /* within the minute from ... */
    double supervisor_death_t; /* ... this time (ev_now) */
    struct journal *journal;
    struct server *server;
    struct server *public_server; /* cfg public-socket, or NULL */
    char *cgroup;  /* cgroup-parent, checked usable, or NULL (cgroup.c) */
    struct hashmap *jobs;      /* key -> jobentry */
    struct hashmap *watches;   /* execid -> watch */
    struct hashmap *conn_subs; /* conn_id -> connsubs (with streams only) */
    struct remote *remote;     /* exec role: processes on other nodes */
    struct node *node;         /* node role (cfg.role_node), else NULL */
    struct binding *bindings;  /* connections' Flux instances (bind.c) */
    char bind_refused[BIND_UUID_MAX + 1]; /* last refused: logged once */
    struct jobentry *dirty;    /* jobs with events to stage this turn */
    struct outbox *outbox;     /* effects waiting for the commit */
    struct ack *acks;
    struct ack **acks_tail;
    ev_prepare prepare;
    ev_timer lazy_timer; /* a commit that waits (prepare_cb) */
    double last_commit;  /* ev_now of the last one */
    ev_signal sigterm;
    ev_signal sigint;
    ev_timer purge_timer;
    ev_timer reap_timer; /* procfs_reap_strays(), every REAP_INTERVAL */
    ev_timer output_timer; /* live output, while noutput > 0 */
    int noutput;           /* streams that asked for output */
    bool unsafe_effects_first; /* test switch: break the write-ahead rule */
    bool stopping;
    bool clock_starts_bad; /* the spawner's start times disagreed with /proc */
    bool test_clock_skew;  /* test switch: the spawner's are one tick off */
    int exit_code;
    double t_start;
    /* counters for `stats` */
    uint64_t nspawned;
    uint64_t ncommits;
    uint64_t njobs_done;
    /* the unprivileged clients' usage (daemon_quota.c) */
    struct hashmap *ujobs;  /* decimal id -> their jobs in the journal */
    struct hashmap *uusage; /* decimal uid -> bytes, active jobs */
    size_t users_bytes;     /* all their jobs' bytes */
    size_t quota_njobs;     /* job records the journal should have */
    bool quota_stale;       /* the last count failed: count again */
};

/* daemon.c */
double cairnd_now (void);
void cairnd_ctx (struct cairnd *d, struct job_ctx *ctx);
struct jobentry *cairnd_job (struct cairnd *d, uint64_t id);
struct jobentry *cairnd_job_add (struct cairnd *d, struct job *job);
void cairnd_job_remove (struct jobentry *je);
void cairnd_dirty (struct jobentry *je);
void cairnd_ack (struct cairnd *d,
                 struct conn *c,
                 int64_t matchtag,
                 json_t *payload_new);
void cairnd_timer_rearm (struct jobentry *je);

/* ---- live output (daemon_output.c) ---- */

/* Send a stream what a `log` event (a shell's journaled output) holds
 * beyond the offsets in sent, and advance them. Other events: nothing. */
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

/* ---- the supervisor's link (daemon_spawner.c) ---- */

/* The supervisor went away in the middle of a spawn. Wait for its death
 * (kill it if it lingers), adopt its commands, start a new supervisor, and
 * wait until its last start is done or never made (exitdir_settle): the
 * spawn's execid can then be looked at (proc_look). -1 with err if that
 * wait failed. */
int cairnd_spawner_recover (struct cairnd *d, struct cairn_error *err);
/* No supervisor can be had: exit, so that a restart reconciles. */
void cairnd_spawner_lost (struct cairnd *d) __attribute__ ((noreturn));
/* Watch the keeper's and the supervisor's pidfds and the supervisor's
 * socket (the loop's phase of cairnd_create). */
void cairnd_spawner_watch (struct cairnd *d);
/* ENDED notices may wait in the spawner's queue: look at them next turn. */
void cairnd_spawner_poke (struct cairnd *d);

/* Send the starts queued this turn (spawner_request queues them) in one
 * send: at the end of flush() and before the loop sleeps. A supervisor
 * found gone is replaced as when a spawn finds it gone
 * (cairnd_spawner_recover); what it never read is judged with what it
 * left unanswered. Crash point "exec.spawn.send" before the send. */
void cairnd_spawner_send (struct cairnd *d);

/* daemon.c */
bool cairnd_journal_full (struct cairnd *d);
/* The journal could not stage or commit this turn's batch: log why and
 * exit with CAIRND_EXIT_JOURNAL, acting on none of it (outbox.h, O3). */
void cairnd_journal_failed (struct cairnd *d, const char *why)
    __attribute__ ((noreturn));

/* daemon_quota.c: the unprivileged clients' quotas (issue 30) */

/* Count the unprivileged clients' jobs in the journal afresh (at startup,
 * and after another process purged jobs). -1 with err (ENOMEM, or a
 * journal read error). */
int quota_count (struct cairnd *d, struct cairn_error *err);
/* Event seq of job (name, its line len bytes) was staged for the
 * journal. */
void quota_staged (struct cairnd *d,
                   const struct job *job,
                   uint32_t seq,
                   const char *name,
                   size_t len);
/* Job id was purged from the journal by cairnd. */
void quota_purged (struct cairnd *d, uint64_t id);
/* May unprivileged uid start a job whose accept takes about need bytes?
 * 0, or -1 with EDQUOT and the limit named in err: limits.user-max-jobs,
 * limits.user-max-journal-bytes, or limits.users-journal-share; or with
 * the errno of a count that could not be made again (quota_count). */
int quota_check (struct cairnd *d,
                 uid_t uid,
                 size_t need,
                 struct cairn_error *err);
/* Free the counts; the pointers are left NULL. */
void quota_destroy (struct cairnd *d);

/* daemon_proc.c */
struct shim_started {
    pid_t pid;
    int pidfd;
    unsigned long long starttime; /* 0 if neither the spawner's clock nor
                                   * /proc could tell */
    bool orphaned; /* its supervisor died in the spawn: the keeper's now */
    bool pending;  /* asked for, not answered yet (spawn_answered) */
};

/* A spawn request the supervisor has not answered yet. */
struct spawn_pending {
    char execid[EXECID_LEN + 1];
    struct jobentry *je;
};
/* The supervisor's STARTED m (fd its pidfd, or -1) for the oldest pending
 * request: watch and journal the process, as proc_spawn would have. */
void spawn_answered (struct cairnd *d, const struct spawner_msg *m, int fd);
/* The supervisor died: its unanswered requests wait for
 * spawn_orphans_settle (call it once the exit dir is settled). */
void spawn_pending_orphan (struct cairnd *d);
/* Judge each request a dead supervisor left unanswered by its marker
 * (proc_look): ended, running (taken over), or never started (asked for
 * again). */
void spawn_orphans_settle (struct cairnd *d);
/* Start argv through the supervisor (execid, exit records in the exit dir,
 * output capped at max_output bytes). user >= 0: a job's shell, run as
 * that uid when it is not cairnd's own (the command's process drops to it
 * before the exec), whose environment is env alone (the jobspec's and
 * cairn's variables; plus HOME, USER, LOGNAME and SHELL from the user
 * database, each unless env has it, when run as another uid). user < 0:
 * a prolog or epilog, run as cairnd's uid, with env added to cairnd's own
 * environment less its private variables. With async, only the
 * request is sent: out->pending, and the answer comes to
 * spawn_answered(). -1 with err if it could not start; a supervisor that
 * died in the spawn is settled first (cairnd_spawner_recover). */
int shim_start (struct cairnd *d,
                const char *execid,
                char **argv,
                json_t *env,
                const char *cwd,
                size_t max_output,
                int64_t user,
                bool async,
                struct shim_started *out,
                struct cairn_error *err);
/* Why a process whose shim ended without an exit record is lost
 * (shim_status: its wait status, or -1 when it was not our child). */
void shim_gone_note (char *buf, size_t len, int shim_status, pid_t pid);
/* Start a job's intent here (runner_local, runner.h). */
int proc_spawn (struct jobentry *je, const char *execid);
int watch_add (struct cairnd *d,
               struct jobentry *je,
               struct nproc *np,
               const char *execid,
               pid_t pid,
               int pidfd);
int proc_watch (struct jobentry *je, const char *execid, pid_t pid, int pidfd);
/* Watch what shim_start started: through its supervisor, or through its
 * pidfd and the keeper's exit record if its supervisor died in the spawn
 * (st->orphaned). */
void watch_started (struct cairnd *d,
                    const char *execid,
                    const struct shim_started *st);
/* Our supervisor died: every process it ran is the keeper's child now,
 * which writes its exit record at its end. Watch each through its pidfd
 * and that record. Returns how many. */
size_t watch_orphan_all (struct cairnd *d);
/* The supervisor saw execid through: code 0, its exit record is written;
 * else the shim exit code that says why not (shim_proto.h). */
void proc_ended (struct cairnd *d, const char *execid, int code);
void proc_unwatch (struct cairnd *d, const char *execid);
void proc_signal (struct cairnd *d, const char *execid, int signum);
/* proc_signal, and with session true also to every other process of the
 * command's session while the command's process has not exited (the kill
 * escalation: procfs_signal_session). */
void proc_signal_to (struct cairnd *d,
                     const char *execid,
                     int signum,
                     bool session);
void proc_finished (struct jobentry *je, const char *execid, bool lost);
void proc_collect (struct jobentry *je, const char *execid, int shim_status);

/* service.c */
void service_request (struct conn *c,
                      const char *topic,
                      int64_t matchtag,
                      json_t *payload,
                      void *arg);
void service_disconnect (struct conn *c, void *arg);
bool service_busy (struct conn *c, void *arg);

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

/* ---- the node role (node.c) ---- */

int node_create (struct cairnd *d);
void node_destroy (struct cairnd *d);
/* Replay the nodeprocs table and look at each process (proc_look). */
int node_reconcile (struct cairnd *d, struct cairn_error *err);
/* A watched process ended (shim_status as proc_collect's). */
void node_collect (struct cairnd *d, struct nproc *np, int shim_status);
/* How many process records the node holds (0 in the exec role). */
size_t node_nprocs (struct cairnd *d);
/* Does the node need execid's exit records (not acknowledged yet)? */
bool node_has (struct cairnd *d, const char *execid);
/* Batch the removal of up to max records acknowledged before cutoff;
 * returns how many. */
size_t node_purge (struct cairnd *d, double cutoff, size_t max);
void node_conn_gone (struct cairnd *d, struct conn *c);
void req_node_exec (struct cairnd *d,
                    struct conn *c,
                    int64_t matchtag,
                    json_t *payload);
void req_node_signal (struct cairnd *d,
                      struct conn *c,
                      int64_t matchtag,
                      json_t *payload);
void req_node_ack (struct cairnd *d,
                   struct conn *c,
                   int64_t matchtag,
                   json_t *payload);
void req_node_watch (struct cairnd *d,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);

/* cgroup.c: each process in a cgroup v2 of its own under cgroup-parent,
 * where the machine allows it. */
/* Check cfg's cgroup-parent (make it if its parent exists): d->cgroup
 * when it is a cgroup v2 directory cairnd may make cgroups in; else NULL
 * and a warning saying why (process groups and the execid sweep stay).
 * With cgroup-pids-max or cgroup-memory-max, enable the pids or memory
 * controller for cgroup-parent's children. Returns 0, or -1 with err when
 * a limit is configured and cannot be applied (no usable cgroup-parent, a
 * controller not available there or not enabled): a site that asked for
 * a limit never runs without it. */
int cgroup_setup (struct cairnd *d,
                  const struct cairn_config *cfg,
                  struct cairn_error *err);
/* The cgroup of execid into buf (for the shim's --cgroup): NULL if none. */
const char *cgroup_path (struct cairnd *d,
                         const char *execid,
                         char *buf,
                         size_t len);
/* Kill whatever is left in execid's cgroup, and remove it (a lost shim's
 * leftovers); nothing without cgroups. */
void cgroup_reap (struct cairnd *d, const char *execid);

/* proclook.c: what became of a process no cairnd watched (spawned: its
 * pid, start time and boot id are known; else only its intent is). */
enum look_verdict {
    LOOK_EXITED,    /* its exit record is there: collect it */
    LOOK_ALIVE,     /* running: pid, starttime, and a pidfd now ours */
    LOOK_UNSTARTED, /* the command never ran: start it (again), once */
    LOOK_LOST,      /* gone, outcome unknown: why */
};
struct proc_look {
    enum look_verdict verdict;
    pid_t pid;
    unsigned long long starttime;
    int pidfd;
    char why[200];
};
/* -1 with err when the process could not be looked at (never "lost"
 * then: the caller fails loudly instead). */
int proc_look (struct cairnd *d,
               const char *execid,
               bool spawned,
               pid_t pid,
               unsigned long long starttime,
               const char *bootid,
               struct proc_look *out,
               struct cairn_error *err);

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
