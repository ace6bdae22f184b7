/* procs.h - cairnd's hold on the processes it runs on this node: the
 * client side of supervision (doc/design.md, "The life of a process").
 *
 * One struct procs per cairnd. It owns what stands between cairnd and a
 * command: the keeper and the supervisor it forks (cairn-shim(8),
 * supervise/keeper.h, supervise/spawner.h), the exit dir and its janitor
 * (supervise/exitdir.h, janitor.h), the node's cgroup parent, and a watch
 * per live process, a pidfd that pid reuse cannot fool.
 *
 * It knows nothing of jobs or nodes. Whoever starts or watches a process
 * is its owner: an opaque pointer, with the struct procs_owner_ops through
 * which what becomes of the process comes back:
 *   ended     the process ended and is no longer watched: read its exit
 *             record (procs_exitdir) and record the outcome;
 *   answered  an asynchronous start was answered (procs_start with
 *             async), or was judged after its supervisor died before
 *             answering (enum procs_answer).
 * A supervisor that dies is replaced; its commands become the keeper's
 * children and are watched through their pidfds and exit records. If no
 * supervisor can be had, or the keeper dies, cairnd exits as a crash
 * would (_exit), so that a restart reconciles: never a command run twice.
 *
 * Set up in cairnd_create's phases, in this order:
 *   procs_create   fork the keeper and its first supervisor, before any
 *                  lock, journal or pidfd exists (keeper.h);
 *   procs_open     the exit dir (settled: a start the last cairnd asked
 *                  for is done or never made), the janitor;
 *   procs_attach   the event loop: the keeper's and the supervisor's
 *                  pidfds, the supervisor's socket, the stray reaper;
 *   procs_cgroup_setup, then procs_seal once the restart has looked at
 *                  every process.
 *
 * Crash points (cairn-crashtest(8)): exec.spawn.before, exec.spawn.after,
 * exec.spawn.send, exec.signal.before, exec.signal.after,
 * exec.supervisor.lost, exec.orphans.kill.before.
 */
#ifndef CAIRN_PROCS_H
#define CAIRN_PROCS_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/error.h"

struct procs;

/* What a start gave: the command's process (its pid, and a pidfd now the
 * caller's until it is watched), or nothing started (pid 0: the exit
 * record says why). */
struct procs_started {
    pid_t pid;
    int pidfd;
    unsigned long long starttime; /* 0 if neither the spawner's clock nor
                                   * /proc could tell */
    bool orphaned; /* its supervisor died in the spawn: the keeper's now */
    bool pending;  /* asked for, not answered yet (ops->answered) */
};

enum procs_answer {
    PROCS_STARTED,   /* st: as procs_start's */
    PROCS_FAILED,    /* it could not start: err */
    PROCS_UNSTARTED, /* its supervisor died before starting it: start it
                        again, once */
    PROCS_LOST,      /* its supervisor died and its outcome is unknown:
                        err says why */
};

/* An exit record as our supervisor told it with the end
 * (spawner_proto.h): what the record on disk says, so that the owner
 * need not read it. */
struct procs_exit {
    int status;                   /* the command's wait status */
    long long out_size, err_size; /* output sizes at its end; -1: not said */
    int leftover;                 /* processes of its session left */
};

struct procs_owner_ops {
    /* execid ended. shim_status: its shim's wait status, or -1 when the
     * shim was not our supervisor's child (its exit record, or none,
     * tells; procs_gone_note). rec: its exit record when the supervisor
     * sent it along, else NULL (read the record). */
    void (*ended) (void *owner,
                   const char *execid,
                   int shim_status,
                   const struct procs_exit *rec);
    /* An asynchronous start of execid was answered. */
    void (*answered) (void *owner,
                      const char *execid,
                      enum procs_answer answer,
                      struct procs_started *st,
                      const struct cairn_error *err);
};

/* Fork the keeper and its supervisor for the cairn-shim at shim (copied).
 * NULL with err (the shim missing or not executable, a fork that
 * failed). */
struct procs *procs_create (const char *shim, struct cairn_error *err);

/* Open the exit dir of statedir (exitdir_open: run_dir, the journal's
 * instance, the boot id) and settle it, and start the janitor (after
 * procs_create: nothing is forked once a thread runs). procroot: /proc,
 * or a test's (NULL: /proc). -1 with err. */
int procs_open (struct procs *p,
                const char *statedir,
                const char *run_dir,
                const char *instance,
                const char *bootid,
                const char *procroot,
                struct cairn_error *err);

/* Watch the keeper, the supervisor and its socket on loop; become a child
 * subreaper and reap strays now and then. test_clock_skew: the
 * spawner's start times are taken as one tick off (a test switch). */
void procs_attach (struct procs *p, struct ev_loop *loop, bool test_clock_skew);

/* Each process in a cgroup v2 of its own under cfg's cgroup-parent, where
 * it is usable (else a warning saying why: process groups and the execid
 * sweep stay); with cgroup-pids-max or cgroup-memory-max, enable the
 * controller for its children. -1 with err when a limit is configured and
 * cannot be applied: a site that asked for one never runs without it. */
int procs_cgroup_setup (struct procs *p,
                        const struct cairn_config *cfg,
                        struct cairn_error *err);
/* The resource limits of every command run as a user (not cairnd's,
 * which a root cairnd may have raised): cfg's rlimit-nofile and
 * rlimit-nproc, else the defaults a login gets, RLIMIT_NOFILE 1024 soft
 * and 524288 hard (systemd's for every service and session) and
 * RLIMIT_NPROC the kernel's (threads-max / 2); never above the
 * supervisor's own hard limits. */
void procs_rlimit_setup (struct procs *p, const struct cairn_config *cfg);

/* The usable cgroup-parent, or NULL. */
const char *procs_cgroup (const struct procs *p);

/* Was the exit dir sealed under this boot when it was opened (a missing
 * start marker then proves a command never ran)? */
bool procs_trusted (const struct procs *p);
/* Seal it under this boot (every process has been looked at). */
int procs_seal (struct procs *p, struct cairn_error *err);
/* Its descriptor: exitfile.h reads a process's exit record there. */
int procs_exitdir (const struct procs *p);
const char *procs_exitdir_path (const struct procs *p);

/* Stop watching anything on the loop (before it is destroyed). */
void procs_detach (struct procs *p);
/* Free it all. The supervisor, told by its socket's EOF, starts nothing
 * more and exits once its commands are seen through; the keeper
 * outlives us (keeper.h). Accepts NULL. */
void procs_destroy (struct procs *p);

/* Start argv through the supervisor as execid, for owner (ops): exit
 * records in the exit dir, output capped at max_output bytes. user >= 0:
 * a job's shell, run as that uid when it is not cairnd's own (dropped to
 * before the exec, in a cgroup with cgroup-pids-max and
 * cgroup-memory-max), whose environment is env alone (the jobspec's and
 * cairn's; plus HOME, USER, LOGNAME and SHELL from the user database,
 * each unless env has it, when run as another uid). user < 0: a prolog,
 * an epilog or a node's command, run as cairnd's uid, with env added to
 * cairnd's own environment less its private variables.
 * With async, the request is queued (sent by procs_send) and out->pending
 * set: the answer comes to ops->answered. Else out is the start's.
 * -1 with err if it could not start. A supervisor that died in the spawn
 * is replaced first and what it did is found out (procs_look). */
int procs_start (struct procs *p,
                 const char *execid,
                 char **argv,
                 json_t *env,
                 const char *cwd,
                 size_t max_output,
                 int64_t user,
                 bool async,
                 void *owner,
                 const struct procs_owner_ops *ops,
                 struct procs_started *out,
                 struct cairn_error *err);

/* Send the starts queued since the last send, in one send (at the end of
 * a turn's flush and before the loop sleeps). Crash point
 * exec.spawn.send. */
void procs_send (struct procs *p);

/* Watch execid's process (pid, pidfd: taken) for owner. -1 with EEXIST
 * if it is watched already (one watcher per process), or ENOMEM. */
int procs_watch (struct procs *p,
                 const char *execid,
                 pid_t pid,
                 int pidfd,
                 void *owner,
                 const struct procs_owner_ops *ops);
/* After procs_watch of what a start gave (st): its end comes from its
 * supervisor, or through its pidfd and the keeper's exit record when the
 * supervisor died in the spawn. */
void procs_watch_started (struct procs *p,
                          const char *execid,
                          const struct procs_started *st);
/* Stop watching execid (nothing if it is not watched). */
void procs_unwatch (struct procs *p, const char *execid);
bool procs_watched (const struct procs *p, const char *execid);
/* Processes watched, and starts asked for and not answered. */
size_t procs_count (const struct procs *p);
size_t procs_asked (const struct procs *p);
/* Processes started since procs_create. */
uint64_t procs_nspawned (const struct procs *p);

/* Send signum to execid's process group (nothing if it is not watched:
 * it ended, its end is on its way). With session, also to every other
 * process of the command's session while its process has not exited
 * (the kill escalation). */
void procs_signal (struct procs *p,
                   const char *execid,
                   int signum,
                   bool session);

/* End whatever is left of a lost process: its cgroup killed and removed,
 * every process carrying its execid killed. Crash point
 * exec.orphans.kill.before. Returns how many processes were killed by
 * execid. */
int procs_kill_leftovers (struct procs *p, const char *execid);
/* Remove execid's files from the exit dir, off the loop (janitor.h). */
void procs_forget (struct procs *p, const char *execid);
/* Hand the janitor what was forgotten this turn. */
void procs_forget_kick (struct procs *p);

/* What became of a process no cairnd watched (spawned: its pid, start
 * time and boot id are known; else only its intent is). */
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
int procs_look (struct procs *p,
                const char *execid,
                bool spawned,
                pid_t pid,
                unsigned long long starttime,
                const char *bootid,
                struct proc_look *out,
                struct cairn_error *err);

/* Why a process whose shim ended without an exit record is lost
 * (shim_status as ops->ended's). */
void procs_gone_note (char *buf, size_t len, int shim_status, pid_t pid);

#endif /* CAIRN_PROCS_H */
