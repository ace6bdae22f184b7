/* config.h - cairnd's configuration.
 *
 * Pure: parses a jansson object, never reads a file (the daemon does).
 *
 * The file is one JSON object. Durations are Flux Standard Durations (a
 * string such as "30", "2.5s", "5m", "1h", "1d", "inf") or a number of
 * seconds; sizes are a non-negative integer of bytes or a string with a
 * K, M or G suffix (powers of 1024: "64K", "512M", "2G"). Keys:
 *
 *   statedir (string), shim (string), public-socket (string),
 *   cgroup-parent (string)
 *   prolog   { command, per-rank, timeout, kill-timeout,
 *              cancel-on-exception, tolerable-exit-codes }
 *   epilog   { command, per-rank, timeout, kill-timeout,
 *              cancel-on-exception }
 *   exec     { job-shell, kill-timeout, max-kill-timeout, term-signal,
 *              kill-signal, max-kill-count }
 *   release-after (duration, or -1 / "-1")
 *   output   { max-bytes }
 *   multinode { local-ranks, timeout, poll }   (null or absent: one host)
 *   role     ("exec", the default, or "node")
 *   journal  { max-size, retention }
 *   limits   { max-request-size, max-ranks, max-connections,
 *              max-user-connections, max-jobs, user-idle-timeout,
 *              user-max-jobs, user-max-journal-bytes, users-journal-share,
 *              users-jobs-share }
 *   flux     { instance-owner, imp }
 *
 * A command (prolog/epilog command, exec job-shell) may be null: not
 * configured. See the field comments below for types, ranges and defaults.
 */
#ifndef CAIRN_CONFIG_H
#define CAIRN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "core/error.h"

struct perilog_config {
    char **command;            /* NULL-terminated argv (non-empty array of
                                  strings, argv[0] non-empty), or NULL when
                                  not configured */
    bool per_rank;             /* default false (Flux) */
    double timeout;            /* seconds; 0 = none. prolog default 30m,
                                  epilog default none; "0" and "inf" both
                                  mean none (stored as 0) */
    double kill_timeout;       /* seconds, finite and > 0; default 60 */
    bool cancel_on_exception;  /* prolog default true, epilog false */
    int *tolerable_exit_codes; /* prolog only (the epilog rejects the key);
                                  sorted ascending, no duplicates, 1..255;
                                  NULL when ntolerable is 0 */
    size_t ntolerable;
};

struct exec_config {
    char **job_shell;        /* NULL = run the jobspec's command directly;
                                the file gives a string (one path, not
                                split) or a non-empty array */
    double kill_timeout;     /* seconds, finite and > 0; default 5: the
                                kill escalation's pace (escalate.h) */
    double max_kill_timeout; /* seconds, finite; default 0 = none: a shell
                                is given up after max_kill_count direct
                                kills; else it is given up this long after
                                its term signal (escalate.h) */
    int term_signal;         /* default SIGTERM */
    int kill_signal;         /* default SIGKILL */
    int max_kill_count;      /* default 8, >= 1 (escalate.h) */
    double max_start_delay_percent; /* a start (the shells' start) later
                                       than R's starttime by more than this
                                       percentage of the job's duration
                                       moves its time limit by the delay,
                                       as job-exec does; default 25, >= 0 */
};

/* Ranks on many nodes (issue 15, DESIGN-MULTINODE.md): a rank's per-rank
 * processes (shells; prolog and epilog when per-rank) run under the node
 * cairnd of its broker rank unless it is in local_ranks. */
struct multinode_config {
    bool on;           /* the section is there (not null) */
    char *local_ranks; /* idset of ranks run here; default "0" */
    double timeout;    /* seconds a node may stay silent; default 5m, > 0 */
    double poll;       /* seconds between queries; default 10s, > 0 */
};

/* Everything that decides how a job runs. cairnd snapshots it into each
 * job's first journal event, so a job finishes under the rules it started
 * with even if the file changes before a restart.
 */
struct job_config {
    struct perilog_config prolog;
    struct perilog_config epilog;
    struct exec_config exec;
    double release_after;    /* -1 = release everything at the end
                                (default); 0 = each rank as soon as it is
                                done; > 0 seconds: timer from the first done
                                rank, then each at once. Never inf. */
    size_t output_max_bytes; /* cap on captured stdout/stderr journaled as
                                log events, per phase of a job (prolog,
                                shells, epilog); default 64 KiB */
    struct multinode_config multinode; /* snapshotted too: where a process
                                          runs must not change across a
                                          restart with a new file */
};

struct cairn_config {
    char *statedir; /* NULL = caller's default */
    char *shim;     /* path of cairn-shim, NULL = default lookup */
    char *cgroup_parent; /* a cgroup v2 directory under which each process
                            gets a cgroup of its own; NULL = none (process
                            groups and the execid sweep) */
    int cgroup_pids_max; /* pids.max of each job shell's cgroup (what its
                            processes may hold at once); 0 = none */
    size_t cgroup_memory_max; /* memory.max of each job shell's cgroup,
                                 bytes, >= 1 MiB; 0 = none */
    int rlimit_nofile; /* RLIMIT_NOFILE of a command run as a user, soft
                          and hard, >= 64; 0 = the default (soft 1024,
                          hard 524288) */
    int rlimit_nproc;  /* RLIMIT_NPROC of a command run as a user, soft
                          and hard, >= 1; 0 = the default (the kernel's:
                          threads-max / 2) */
    char *public_socket; /* a second socket, mode 0666, for every local
                            user (requests checked by SO_PEERCRED);
                            NULL = none */
    char *run_dir; /* where the shims' files go (exitdir.h): NULL = the
                      default (a tmpfs), "statedir" = <statedir>/exits
                      on disk */
    struct job_config job;
    size_t journal_max_size;  /* bytes, >= 1 MiB; default 1 GiB */
    double journal_retention; /* seconds finished jobs are kept; default 7d;
                                 0 = purge at once; INFINITY ("inf") =
                                 keep forever */
    double journal_commit_interval; /* seconds, 0..1: the shortest time
                                       between two commits while 16 or
                                       more processes are live; default
                                       2 ms; 0 = every turn */
    size_t max_request_size;  /* bytes, >= 4 KiB; default 1 MiB */
    size_t max_ranks;         /* per job, >= 1; default 65536 */
    int max_connections;      /* >= 1; default 256 */
    int max_user_connections; /* per uid, >= 1; default 32; root and
                                 cairnd's own uid are not counted */
    int max_jobs;             /* active jobs of the privileged clients
                                 (the users' are users_jobs_share's),
                                 >= 1; default 10000 */
    double user_idle_timeout; /* seconds a user's connection may sit idle
                                 holding nothing (no stream) before it is
                                 closed; 0 = never; default 5 min */
    /* Quotas of the unprivileged clients (a user on the public socket,
     * not root or the service's uid), per uid; SECURITY.md, issue 30 */
    int user_max_jobs;             /* active jobs, >= 1; default 1000 */
    size_t user_max_journal_bytes; /* journal bytes of the uid's jobs,
                                      active and finished until purged;
                                      >= 64 KiB; default 64 MiB */
    double users_journal_share;    /* all unprivileged uids together: at
                                      most this fraction of
                                      journal_max_size, so that privileged
                                      jobs always have the rest; 0..0.9,
                                      default 0.5 */
    double users_jobs_share;       /* all unprivileged uids together: at
                                      most this fraction of max_jobs
                                      active jobs, counted apart from the
                                      privileged clients'; 0..0.9, default
                                      0.5 */
    /* A Flux system instance whose broker is not root (SECURITY.md):
     * the user it runs as may act as a resource manager, but runs other
     * users' job shells only through the IMP, which checks that the user
     * signed the job (flux-imp exec), and never as root. */
    char *flux_owner;         /* "flux.instance-owner": a user name or a decimal
                                 uid; NULL = none (only root and cairnd's uid
                                 act for other users) */
    char *flux_imp;           /* "flux.imp": absolute path of flux-imp; NULL =
                                 none (the owner then runs its own jobs only) */
    bool role_node;           /* "role": "node": runs the processes a
                                 rank-0 cairnd asks for, no jobs; refuses
                                 a multinode section */
};

/* Set every field of cfg to its default. Allocates nothing, so it cannot
 * fail; cfg's previous contents are overwritten, not freed.
 */
void config_init (struct cairn_config *cfg);

/* Free the memory cfg owns and zero it, so it can be config_init()ed
 * again. Safe on a zeroed or config_init()ed struct and on NULL.
 * Preserves errno.
 */
void config_free (struct cairn_config *cfg);

/* Deep-copy src into dst (its strings and job config too). dst is an
 * output: its previous contents are overwritten, not freed, and it is only
 * written on success. The caller frees dst with config_free(). Returns 0,
 * or -1 with errno = ENOMEM. */
int config_copy (struct cairn_config *dst, const struct cairn_config *src);

/* Apply the keys present in o over cfg's current values (keys absent from
 * o keep their values, so config_init() then config_parse() gives the
 * defaults for what the file leaves out). Strict: an unknown key is an
 * error naming its dotted path ("unknown key 'prolog.comand'"), and so is
 * a wrong type or value ("prolog.timeout: invalid duration ...",
 * "exec.max-kill-count: must be an integer >= 1").
 * Returns 0, or -1 with errno = EINVAL (ENOMEM if out of memory) and a
 * message in err; on error cfg is unchanged.
 */
int config_parse (struct cairn_config *cfg,
                  const json_t *o,
                  struct cairn_error *err);

/* NULL-terminated list of every dotted key config_parse() accepts, e.g.
 * "prolog.command", each once, in the order of the file description above.
 * Static storage: do not free. Thread-safe.
 */
const char *const *config_keys (void);

/* Set jc to the defaults (the job part of config_init()). Allocates
 * nothing; jc's previous contents are overwritten, not freed.
 */
void job_config_init (struct job_config *jc);

/* Free what jc owns and zero it. Safe on a zeroed or initialized struct
 * and on NULL. Preserves errno.
 */
void job_config_free (struct job_config *jc);

/* Deep-copy src into dst. dst is an output: its previous contents are
 * overwritten, not freed, and it is only written on success. The caller
 * frees dst with job_config_free(). Returns 0, or -1 with errno = ENOMEM.
 */
int job_config_copy (struct job_config *dst, const struct job_config *src);

/* Encode jc as canonical JSON with the same keys as the file: "prolog",
 * "epilog", "exec", "release-after", "output": {"max-bytes"}, and "multinode"
 * when it is on (absent when off: the snapshot of a one-host job is as it
 * always was), and "exec.max-start-delay-percent" only when it is not
 * its default (a snapshot the previous release reads). Nothing else is
 * omitted: unset commands are null, durations are numbers of seconds,
 * signals are names. Returns a new reference (caller decrefs), or NULL
 * with errno = ENOMEM, or EINVAL if jc holds a value that cannot be
 * encoded (a signal with no name, an infinite duration).
 */
json_t *job_config_encode (const struct job_config *jc);

/* Decode an object as produced by job_config_encode() (the same strict
 * rules as config_parse(); keys absent from o take their defaults, so an
 * older snapshot still decodes). decode (encode (x)) equals x.
 * jc is an output: overwritten (not freed) on success, untouched on error.
 * Returns 0, or -1 with errno = EINVAL (ENOMEM) and a message in err.
 */
int job_config_decode (struct job_config *jc,
                       const json_t *o,
                       struct cairn_error *err);

/* Apply o, an object with the job part of the file's keys ("exec":
 * {"kill-timeout": "10s"}, ...), over jc's current values: what o names
 * changes, the rest stays. The same strict rules as config_parse(); a
 * message names the key under prefix ("P.exec.kill-timeout: ..."; no
 * prefix when NULL). jc is changed only on success. Returns 0, or -1
 * with errno = EINVAL (ENOMEM) and a message in err.
 */
int job_config_override (struct job_config *jc,
                         const json_t *o,
                         const char *prefix,
                         struct cairn_error *err);

#endif /* CAIRN_CONFIG_H */
