/* bench.h - the pieces shared by cairn-bench's benchmarks.
 *
 * cairn-bench measures cairnd against this machine's own limits, measured
 * in the same run (see BENCHMARKS.md). Every benchmark repeats its
 * measurement opts->reps times, interleaving cairn and its baseline inside
 * each repetition so that both see the same noise, and reports medians.
 * Ratios are computed per repetition, then their median is reported.
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/error.h"
#include "client/client.h"

#define BENCH_MAX_REPS 50

struct bench_opts {
    const char *bindir; /* where cairnd and cairn-shim are */
    const char *dir;    /* parent of the scratch directories */
    int reps;           /* repetitions; medians are reported */
    bool json;          /* print JSON instead of a table */
    int jobs;           /* throughput: M jobs */
    bool jobs_given;    /* --jobs was given (else each bench's default) */
    int ranks;          /* ranks per job (N) */
    int inflight;       /* jobs in flight at once */
    int cpus;           /* --cpus: run on this many CPUs (0: all allowed) */
    const char *klist;  /* restart: live job counts, "10,100,1000" */
    long finished;      /* restart: finished jobs in the journal */
    int mem_jobs;       /* memory: active jobs */
    int commits;        /* journal: commits per batch size */
    const char *sizes;  /* multinode: ranks per job, "64,256,1024,4096" */
    int single_max;     /* multinode: largest N also run on one host */
    int env_bytes;      /* multinode: pad each job's environment to this */
    int soak_runs;      /* soak: consecutive runs on one cairnd */
    const char *scale_curves;   /* scale: which curves, "inflight,ranks,..." */
    const char *scale_inflight; /* scale: jobs in flight, "1,16,64,256" */
    const char *scale_ranks;    /* scale: ranks per job, "1,4,16,64" */
    const char *scale_live;     /* scale: live processes at a restart */
    const char *scale_mem;      /* scale: active ranks for the memory curve */
    long scale_finished;        /* scale: finished jobs for the purge */
    const char *plot;           /* scale: PNG to draw, or NULL */
};

/* ---- util.c ---- */

/* CLOCK_MONOTONIC, in seconds. */
double bench_now (void);

/* Median of v[0..n-1] (n > 0; v is not modified). NAN when n is 0. */
double bench_median (const double *v, size_t n);

/* A fresh private (0700) directory "<opts->dir>/cairn-bench-<tag>.XXXXXX".
 * Returns a malloc'd path, or NULL with errno set and err filled. */
char *bench_mkdtemp (const struct bench_opts *o,
                     const char *tag,
                     struct cairn_error *err);

/* Remove path and everything under it. NULL is fine; errno preserved. */
void bench_rmrf (const char *path);

/* Write text to path (created 0600, truncated). 0, or -1 with errno. */
int bench_write_file (const char *path, const char *text);

/* VmRSS and RssAnon of pid from /proc/PID/status, in KiB.
 * 0, or -1 with errno (ENOENT: no such process; EINVAL: unparsable). */
int bench_rss (pid_t pid, long *vmrss_kib, long *anon_kib);

/* CPU seconds of pid from /proc/PID/stat: its own (utime + stime) and
 * that of its waited-for descendants (cutime + cstime). 0, or -1. */
int bench_cpu (pid_t pid, double *self, double *children);

/* The pid of cairnd's supervisor (`cairn-shim --spawner`, a child of
 * cairnd's keeper, `cairn-shim --keeper`, so its CPU is in neither of
 * cairnd's bench_cpu() figures), or 0 if none is found. */
pid_t bench_spawner_pid (pid_t cairnd);

/* CPU seconds pid's main thread ran, from /proc/PID/schedstat (ns
 * resolution, unlike the clock ticks of /proc/PID/stat). -1 on error. */
double bench_sched_cpu (pid_t pid);

/* CPU seconds all of pid's threads ran: the sum of
 * /proc/PID/task/TID/schedstat (a thread that exited in between is not
 * counted; cairnd's threads live as long as it does). -1 on error. */
double bench_sched_cpu_all (pid_t pid);

/* CPU seconds of our own waited-for descendants (RUSAGE_CHILDREN). */
double bench_children_cpu (void);

/* CPU seconds of this process itself (RUSAGE_SELF). */
double bench_self_cpu (void);

/* Parse a list of increasing numbers >= min, "10,100,1000", into v (at
 * most max). Returns how many, or -1 with errno EINVAL (empty, not a
 * number, below min, not increasing, more than max). */
int bench_parse_list (const char *s, long min, long *v, int max);

/* Can this machine hold `live` live processes of cairnd's, `more` of
 * them still to start? Each is a shim and its command, and a pidfd in
 * cairnd and in the raw restart scan. Checks RLIMIT_NOFILE (as raised by
 * main) against live, and kernel.pid_max, threads-max and (unless root)
 * RLIMIT_NPROC against the tasks running now plus 2 x more. Returns 1,
 * or 0 with the limit that stops it in why (len bytes). */
int bench_capacity (long live, long more, char *why, size_t len);

/* Wait (up to timeout seconds) until exactly `want` processes named comm
 * (their /proc/PID/stat name, e.g. "sleep") descend from this process:
 * the commands of live jobs have started, not only their shims (a shim
 * that has not started its command yet dies with a SIGKILLed cairnd, by
 * design, and its process is started again at the restart). 0, or -1
 * with errno and err: ETIMEDOUT, ENOMEM, or /proc's errno. */
int bench_wait_commands (const char *comm,
                         long want,
                         double timeout,
                         struct cairn_error *err);

/* ---- report.c ---- */

/* A benchmark's results: parameters, rows of measured figures (median and
 * samples), ratios (with an optional target) and notes. Printed as a table
 * or as one JSON object, with a description of the machine. */
struct report;

struct report *report_create (const char *name, const struct bench_opts *o);
void report_destroy (struct report *r);

/* Record a parameter (steals the reference to v). */
void report_param (struct report *r, const char *key, json_t *v);

/* Add a measured figure: its samples (one per repetition) and unit.
 * Returns the median. */
double report_add (struct report *r,
                   const char *name,
                   const char *unit,
                   const double *v,
                   size_t n);

/* Add a ratio (samples per repetition) with a target: cmp is ">=" or "<=",
 * or NULL for none. Returns the median. */
double report_ratio (struct report *r,
                     const char *name,
                     const double *v,
                     size_t n,
                     const char *cmp,
                     double target);

/* Add a line of explanation. */
void report_note (struct report *r, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Record that part of the benchmark failed (a note "FAILED: ...", and
 * "failed": true in the JSON) while the rest is still reported. */
void report_fail (struct report *r, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
bool report_failed (const struct report *r);

/* Print the report on stdout: a table, or JSON (one line) when json is
 * true; and the JSON line to jf too when it is not NULL. */
void report_print (struct report *r, bool json, FILE *jf);

/* ---- daemonctl.c: one cairnd in a scratch directory ---- */

struct bd {
    const struct bench_opts *o;
    pid_t pid;      /* 0 when not running */
    char *root;     /* scratch directory (removed by bd_destroy) */
    char *statedir; /* <root>/state */
    char *sock;     /* <statedir>/cairn.sock */
    char *conf;     /* <root>/cairn.conf */
    char *log;      /* <root>/cairnd.log: cairnd's stderr */
    bool nosync;    /* start with CAIRN_BENCH_NOSYNC=1 */
};

/* Make the scratch directory (<o->dir>/cairn-bench-<tag>.XXXXXX), its
 * private state dir and the config file holding config (JSON text).
 * Does not start cairnd. NULL with errno and err on failure. */
struct bd *bd_create (const struct bench_opts *o,
                      const char *tag,
                      const char *config,
                      bool nosync,
                      struct cairn_error *err);

/* Stop cairnd if it runs (SIGTERM, then wait), remove the scratch dir,
 * free. NULL is fine. */
void bd_destroy (struct bd *d);

/* Start cairnd and wait until it answers a `stats` request (it reconciles
 * the journal before it listens, so that answer means "ready"). Sets
 * *seconds (if not NULL) to the time from the spawn to the answer.
 * 0, or -1 with errno and err: ECHILD (cairnd died; err quotes the last
 * line of its log, which goes with the scratch dir), ETIMEDOUT. */
int bd_start (struct bd *d, double *seconds, struct cairn_error *err);

/* Send sig to cairnd and wait for it to exit. 0, or -1 with errno. */
int bd_stop (struct bd *d, int sig);

/* The payload of a `stats` request on a new connection (new reference),
 * or NULL with errno and err. */
json_t *bd_stats (struct bd *d, struct cairn_error *err);

/* An integer member of a stats object ("a.b" for nested); -1 if absent. */
int64_t bd_stat_int (const json_t *stats, const char *path);

/* Wait (up to 300 s) until cairnd watches `want` processes (its shims are
 * spawned). Returns 0, or -1 with errno and err (ETIMEDOUT). */
int bd_wait_procs (struct bd *d, int64_t want, struct cairn_error *err);

/* ---- plot.c: a PNG of curves, drawn by gnuplot ---- */

/* A figure of panels, each a few curves, written as <base>.dat (the
 * points, one gnuplot index per curve) and <base>.gp (the script) next to
 * the PNG, <base> being its path without ".png". */
struct plot;

/* NULL with errno ENOMEM. png is copied. */
struct plot *plot_create (const char *png);
void plot_destroy (struct plot *p); /* NULL is fine; errno preserved */

/* Start a new panel; the curves added next go into it. Axes are
 * logarithmic when logx / logy. 0, or -1 with errno ENOMEM. */
int plot_panel (struct plot *p,
                const char *title,
                const char *xlabel,
                const char *ylabel,
                bool logx,
                bool logy);

/* Add a curve of n points (copied; non-finite ones are left out) to the
 * current panel. A target is drawn as a dashed grey line.
 * 0, or -1 with errno: EINVAL (no panel yet), ENOMEM. */
int plot_curve (struct plot *p,
                const char *name,
                const double *x,
                const double *y,
                size_t n,
                bool target);

/* Write the .dat and .gp files and run gnuplot on the script ($GNUPLOT,
 * else gnuplot in $PATH). Returns 0 once the PNG is drawn, or -1 with
 * errno and err: ENOENT when gnuplot is not installed (the files are
 * written; err says how to draw them), EIO when gnuplot failed, or the
 * errno of a write. Either way err (or, on success, msg) is a sentence
 * fit for a report note. */
int plot_draw (struct plot *p, char *msg, size_t len, struct cairn_error *err);

/* ---- submit.c: jobs through cairnd's start protocol ---- */

struct submit {
    int njobs;        /* jobs to submit */
    int nranks;       /* ranks per job */
    int inflight;     /* at most this many unfinished at once */
    char **argv;      /* the job's command */
    uint64_t id0;     /* first job id; then id0+1, ... */
    bool until_start; /* a job counts as done at its `start` response
                       * (for live jobs), not at its final release */
};

struct submit_result {
    double seconds; /* first request sent .. last job done */
    int failed;     /* jobs with an exception or a non-zero finish status */
};

/* Submit s->njobs jobs over c, keeping at most s->inflight of them
 * unfinished, and wait until all are done. Error responses make it fail
 * (EPROTO, with cairnd's message in err); per-job failures are counted.
 * 0, or -1 with errno and err. */
int bench_submit (struct client *c,
                  const struct submit *s,
                  struct submit_result *res,
                  struct cairn_error *err);

/* ---- raw.c: the machine's own limits ---- */

/* What a raw run measured. */
struct raw_result {
    double rate; /* processes per second */
    double cpu;  /* CPU seconds per process, all processes included: the
                  * spawning one (ours), its children, a spawner */
    double self; /* of which the spawning process's (ours) */
};

/* Spawn `total` processes running argv with posix_spawn, at most `conc`
 * at a time, each reaped through a pidfd (pidfd_open, poll, waitid
 * P_PIDFD). 0, or -1 with errno/err. */
int raw_spawn_rate (char *const argv[],
                    int total,
                    int conc,
                    struct raw_result *res,
                    struct cairn_error *err);

/* The machine's parallel limit: nloops processes (at most conc), each a
 * raw_spawn_rate() loop with its share of total and of conc, released
 * together; rate is total over the time from the release to the last
 * loop's end, cpu the loops' and their children's per process. nloops is
 * usually bench_ncpus(). */
int raw_spawn_parallel (char *const argv[],
                        int total,
                        int conc,
                        int nloops,
                        struct raw_result *res,
                        struct cairn_error *err);

/* CPUs this process may run on (its affinity mask), at least 1. */
int bench_ncpus (void);

/* Keep this process, and so cairnd and everything it starts, on the first
 * n CPUs of its affinity mask (--cpus). EINVAL if fewer are allowed. */
int bench_limit_cpus (int n, struct cairn_error *err);

/* The same through cairn's own supervisor (spawner.h: cairn-shim
 * --spawner) into exitdir: each command's end seen through its ENDED
 * message (its exit file written, the command reaped), then its exit file
 * read and its files removed, as cairnd does. Its CPU counts the
 * supervisor's and its reaped children's. */
int raw_shim_rate (const char *shim,
                   const char *exitdir,
                   char *const argv[],
                   int total,
                   int conc,
                   struct raw_result *res,
                   struct cairn_error *err);

/* What a per-node supervisor that forks each command itself (no shim
 * process) must still do, done here, in-process, into exitdir: per
 * command a start marker (O_EXCL), stdout and stderr files, posix_spawn
 * with those as 1 and 2, the exit file (written to a temporary, renamed)
 * once reaped, then what cairnd does (read it, remove the four files).
 * res->cpu counts the commands and all of our own work, as for
 * raw_spawn_rate(). The floor such a design could reach, cairnd aside. */
int raw_supervisor_rate (const char *exitdir,
                         char *const argv[],
                         int total,
                         int conc,
                         struct raw_result *res,
                         struct cairn_error *err);

/* write(4 KiB) + fdatasync in a loop on a file in dir for about `seconds`.
 * Sets *rate to syncs per second. 0, or -1 with errno/err. */
int raw_fsync_rate (const char *dir,
                    double seconds,
                    double *rate,
                    struct cairn_error *err);

/* ---- sample.c: realistic journal contents ---- */

/* The event lines of one real job: N ranks, prolog, shell and epilog all
 * /bin/true, run through a scratch cairnd. On success *lines is a
 * NULL-terminated array of malloc'd strings (free with sample_free) and
 * *n their count. 0, or -1 with errno/err. */
int sample_job (const struct bench_opts *o,
                int nranks,
                char ***lines,
                size_t *n,
                struct cairn_error *err);
void sample_free (char **lines);

/* Write njobs finished jobs (ids id0..) made of the sample's lines into
 * the journal of statedir, in batches, without syncing (fast generation).
 * 0, or -1 with errno/err. */
int sample_fill_journal (const char *statedir,
                         char **lines,
                         size_t n,
                         uint64_t id0,
                         long njobs,
                         struct cairn_error *err);

/* ---- mnodes.c: fake nodes for the multinode benchmark ---- */

/* Many fake nodes behind one node-relay connection to a rank-0 cairnd,
 * plus a connection for jobs (see mnodes.c for what the nodes answer). */
struct mnodes;

/* What crossed the relay connection since mnodes_create. */
struct mnodes_counts {
    int64_t exec, signal, ack;   /* rank 0's node-relay messages by topic */
    int64_t reask;               /* node-exec for an execid already run */
    int64_t acked;               /* execids acknowledged */
    int64_t reports, answers;    /* our node-reports, cairnd's answers */
    int64_t lines_in, lines_out; /* lines from / to cairnd, all kinds */
    int64_t bytes_in, bytes_out;
};

/* Connect to the cairnd at sock: a jobs' connection and, when relay is
 * true, the nodes' connection, which opens a node-relay stream. NULL with
 * errno and err (connect(2)'s errno, ENOMEM). */
struct mnodes *
mnodes_create (const char *sock, bool relay, struct cairn_error *err);

/* Close both connections, free. NULL is fine; errno preserved. */
void mnodes_destroy (struct mnodes *m);

/* Send a `start` request (payload start, borrowed; matchtag mt, unique on
 * this connection) and answer the nodes' part until the job's final
 * release has come and every remote process was acknowledged and every
 * report answered. Sets *wall (start sent .. final release, seconds) and
 * *failed (an exception, or a non-zero finish status).
 * 0, or -1 with errno and err: ETIMEDOUT (nothing came for stall seconds),
 * ECONNRESET (cairnd closed a connection), EPROTO (cairnd refused the job
 * or the relay, or sent something malformed), EIO (cairnd refused a
 * report), ENOMEM. */
int mnodes_job (struct mnodes *m,
                const json_t *start,
                int64_t mt,
                double stall,
                double *wall,
                bool *failed,
                struct cairn_error *err);

/* The counts so far. */
void mnodes_counts (const struct mnodes *m, struct mnodes_counts *c);

/* ---- b_restart.c ---- */

/* After PR_SET_CHILD_SUBREAPER: kill every process we adopted (the shims
 * of a stopped or killed cairnd) and their commands' process groups, and
 * reap them all. Call only when no cairnd of ours is running. */
void restart_cleanup (void);

/* Start d (not running yet; NULL is an error already in err), then
 * restart it n times on its empty journal, SIGKILL each time, and add the
 * row "restart, empty journal": the floor under every restart figure.
 * Returns 0, or -1 with err. */
int restart_floor (struct bd *d,
                   int n,
                   struct report *r,
                   struct cairn_error *err);

/* The raw cost of a restart, while no cairnd runs on statedir: open its
 * journal, read and parse every active job's events, pidfd_open each
 * process still listed as running and check its start time in /proc.
 * Sets *seconds and *nlive (processes verified alive).
 * 0, or -1 with errno and err. */
int restart_raw (const char *statedir,
                 double *seconds,
                 size_t *nlive,
                 struct cairn_error *err);

/* ---- the benchmarks (b_*.c): each fills and returns a report ---- */

struct report *bench_throughput (const struct bench_opts *o,
                                 struct cairn_error *err);
struct report *bench_spawn (const struct bench_opts *o,
                            struct cairn_error *err);
struct report *bench_durability (const struct bench_opts *o,
                                 struct cairn_error *err);
struct report *bench_restart (const struct bench_opts *o,
                              struct cairn_error *err);
struct report *bench_journal (const struct bench_opts *o,
                              struct cairn_error *err);
struct report *bench_memory (const struct bench_opts *o,
                             struct cairn_error *err);
/* b_multinode.c: a rank-0 cairnd (multinode on) with fake nodes in this
 * process, jobs of each N in o->sizes: commits, journal, relay messages
 * and time per job and per rank, against the same N on one host. */
struct report *bench_multinode (const struct bench_opts *o,
                                struct cairn_error *err);
/* b_flux.c: built only with the Flux module. The flux command is $FLUX,
 * else CAIRN_BENCH_FLUX (where cmake found flux-core); the module is
 * <bindir>/cairn-exec.so. If either is missing, fails before starting
 * anything (errno from access(2), e.g. ENOENT; err names the file). */
struct report *bench_flux (const struct bench_opts *o, struct cairn_error *err);
/* b_soak.c: o->soak_runs throughput runs (perilog) on one cairnd and one
 * state dir, each after a raw /bin/true run: does the rate hold up? */
struct report *bench_soak (const struct bench_opts *o, struct cairn_error *err);
/* b_scale.c: cost against work (jobs in flight, ranks per job, live
 * processes at a restart, active ranks, finished jobs in the journal),
 * each point against a raw figure of the same run; o->plot draws it. */
struct report *bench_scale (const struct bench_opts *o,
                            struct cairn_error *err);

/* Run M jobs of N ranks through a fresh cairnd; shared by throughput and
 * durability. perilog adds a per-rank prolog and epilog (/bin/true). */
struct tp_result {
    double jobs_per_s;
    double procs_per_s;
    double commits_per_job;
    double journal_bytes_per_job;
    double cpu_per_proc;    /* CPU s per process: cairnd, shims, commands */
    double daemon_per_proc; /* CPU s per process of cairnd's loop thread */
    double daemon_all_per_proc; /* ... of cairnd, all its threads */
};
int tp_run_cairn (const struct bench_opts *o,
                  bool perilog,
                  bool nosync,
                  struct tp_result *res,
                  struct cairn_error *err);

/* The same run on a cairnd already running (d, configured with or
 * without BENCH_PERILOG_CONFIG as perilog says), job ids id0.. (unused
 * in its journal). Its history stays: the soak benchmark runs again and
 * again on one daemon. 0, or -1 with errno and err (EIO: jobs failed). */
int tp_run_on (struct bd *d,
               const struct bench_opts *o,
               bool perilog,
               uint64_t id0,
               struct tp_result *res,
               struct cairn_error *err);

/* cairnd's config for jobs with a per-rank prolog and epilog. */
#define BENCH_PERILOG_CONFIG                                                   \
    "{\"prolog\": {\"command\": [\"/bin/true\"], \"per-rank\": true},"         \
    " \"epilog\": {\"command\": [\"/bin/true\"], \"per-rank\": true}}"

/* The shell command of every benchmark job: /bin/true. */
extern char *bench_true_argv[];

/* The command of live jobs: /bin/sleep 1000. */
extern char *bench_sleep_argv[];

#endif /* CAIRN_BENCH_H */
