/* cairn-bench - cairnd's benchmarks, each against this machine's own
 * limits measured in the same run. See BENCHMARKS.md. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"

#ifndef CAIRN_BENCH_BINDIR
#define CAIRN_BENCH_BINDIR "."
#endif

static const struct {
    const char *name;
    struct report *(*fn) (const struct bench_opts *, struct cairn_error *);
    const char *what;
} benches[] = {
    {"throughput", bench_throughput,
     "jobs/s and processes/s vs raw spawn of /bin/true"},
    {"spawn", bench_spawn,
     "raw spawn rates only: /bin/true, the supervisor on disk and on tmpfs"},
    {"durability", bench_durability,
     "durable vs no-sync journal, and the fdatasync rate"},
    {"restart", bench_restart,
     "restart time with K live jobs, and with many finished ones"},
    {"journal", bench_journal, "journal events/s vs raw LMDB, batches 1-100"},
    {"memory", bench_memory, "cairnd RSS per active job and rank"},
    {"multinode", bench_multinode,
     "rank 0's cost per job and rank with fake nodes, N = 64..4096"},
    {"soak", bench_soak,
     "throughput run after run on one cairnd: last vs first run"},
    {"scale", bench_scale,
     "cost vs in flight, ranks, live processes, finished jobs"},
#ifdef CAIRN_BENCH_FLUX
    {"flux", bench_flux,
     "Flux jobs/s: stock job-exec + perilog.so vs cairn-exec.so"},
#endif
};

static void usage (FILE *f)
{
    fprintf (f, "Usage: cairn-bench [OPTIONS] BENCHMARK...\n"
                "Benchmarks (or 'all'):\n");
    for (size_t i = 0; i < sizeof (benches) / sizeof (benches[0]); i++)
        fprintf (f, "  %-11s %s\n", benches[i].name, benches[i].what);
    fprintf (
        f,
        "Options:\n"
        "  --json             print JSON instead of tables\n"
        "  --json-file FILE   also append each report's JSON to FILE\n"
        "  --reps R           repetitions, medians reported (3)\n"
        "  --bindir DIR       where cairnd, cairn-shim, cairn-exec.so are\n"
        "                     (%s)\n"
        "  --dir DIR          where scratch state dirs go ($TMPDIR or"
        " /tmp)\n"
        "  --jobs M           throughput: jobs (200); flux: (100);"
        " multinode: per run (2)\n"
        "  --ranks N          ranks per job (4); flux: instance size\n"
        "  --inflight C       throughput: jobs in flight (16)\n"
        "  --cpus N           run everything (cairnd, the raw loops) on"
        " the first N\n"
        "                     CPUs this process may use (default: all)\n"
        "  --live K,K,...     restart: live job counts (10,100,1000)\n"
        "  --finished F       restart: finished jobs in the journal"
        " (100000)\n"
        "  --mem-jobs K       memory: active jobs (1000)\n"
        "  --commits C        journal: commits per batch size (1000)\n"
        "  --sizes N,N,...    multinode: ranks per job"
        " (64,256,1024,4096)\n"
        "  --single-max N     multinode: largest N also run on one host"
        " (1024; 0: none)\n"
        "  --env-bytes B      multinode: pad the jobs' environment to"
        " B bytes (0)\n"
        "  --soak-runs R      soak: throughput runs on one cairnd (20);"
        " each as\n"
        "                     throughput's perilog run (--jobs, --ranks,"
        " --inflight)\n"
        "  --scale-curves L   scale: which curves"
        " (inflight,ranks,restart,memory,purge)\n"
        "  --scale-inflight L scale: jobs in flight, --ranks each"
        " (1,16,64,256)\n"
        "  --scale-ranks L    scale: ranks per job, --inflight in flight"
        " (1,4,16,64)\n"
        "                     each point runs about --jobs x --ranks x 3"
        " processes\n"
        "  --scale-live L     scale: live processes at a restart"
        " (10,100,1000,10000)\n"
        "  --scale-mem L      scale: active ranks for memory"
        " (10,100,1000,10000)\n"
        "  --scale-finished F scale: finished jobs to purge (1000000;"
        " 0: none)\n"
        "  --plot FILE.png    scale: draw the curves with gnuplot (Debian:"
        " gnuplot-nox);\n"
        "                     FILE.dat and FILE.gp are written next to it,"
        " and kept\n"
        "                     when gnuplot is missing (then run: gnuplot"
        " FILE.gp)\n"
        "A quick scale run (well under 2 minutes): --reps 1 --jobs 50\n"
        "  --scale-inflight 1,16,64 --scale-ranks 1,16 --scale-live"
        " 10,100,1000\n"
        "  --scale-mem 10,100,1000 --scale-finished 10000\n",
        CAIRN_BENCH_BINDIR);
}

static int int_arg (const char *s, long min, long max, long *v)
{
    char *end;
    errno = 0;
    *v = strtol (s, &end, 10);
    if (errno || end == s || *end || *v < min || *v > max) {
        fprintf (stderr, "cairn-bench: bad number '%s' (%ld..%ld)\n", s, min,
                 max);
        return -1;
    }
    return 0;
}

int main (int argc, char *argv[])
{
    enum {
        OPT_SOAK_RUNS = 0x100,
        OPT_CURVES,
        OPT_SC_INFLIGHT,
        OPT_SC_RANKS,
        OPT_SC_LIVE,
        OPT_SC_MEM,
        OPT_SC_FINISHED,
        OPT_PLOT,
        OPT_CPUS,
    };
    static const struct option lopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"json-file", required_argument, NULL, 'J'},
        {"reps", required_argument, NULL, 'r'},
        {"bindir", required_argument, NULL, 'b'},
        {"dir", required_argument, NULL, 'd'},
        {"jobs", required_argument, NULL, 'M'},
        {"ranks", required_argument, NULL, 'N'},
        {"inflight", required_argument, NULL, 'C'},
        {"live", required_argument, NULL, 'K'},
        {"finished", required_argument, NULL, 'F'},
        {"mem-jobs", required_argument, NULL, 'm'},
        {"commits", required_argument, NULL, 'c'},
        {"sizes", required_argument, NULL, 'S'},
        {"single-max", required_argument, NULL, 'X'},
        {"env-bytes", required_argument, NULL, 'E'},
        {"soak-runs", required_argument, NULL, OPT_SOAK_RUNS},
        {"scale-curves", required_argument, NULL, OPT_CURVES},
        {"scale-inflight", required_argument, NULL, OPT_SC_INFLIGHT},
        {"scale-ranks", required_argument, NULL, OPT_SC_RANKS},
        {"scale-live", required_argument, NULL, OPT_SC_LIVE},
        {"scale-mem", required_argument, NULL, OPT_SC_MEM},
        {"scale-finished", required_argument, NULL, OPT_SC_FINISHED},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"cpus", required_argument, NULL, OPT_CPUS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *tmp = getenv ("TMPDIR");
    struct bench_opts o = {.bindir = CAIRN_BENCH_BINDIR,
                           .dir = tmp && tmp[0] ? tmp : "/tmp",
                           .reps = 3,
                           .jobs = 200,
                           .ranks = 4,
                           .inflight = 16,
                           .klist = "10,100,1000",
                           .finished = 100000,
                           .mem_jobs = 1000,
                           .commits = 1000,
                           .sizes = "64,256,1024,4096",
                           .single_max = 1024,
                           .soak_runs = 20,
                           .scale_curves =
                               "inflight,ranks,restart,memory,purge",
                           .scale_inflight = "1,16,64,256",
                           .scale_ranks = "1,4,16,64",
                           .scale_live = "10,100,1000,10000",
                           .scale_mem = "10,100,1000,10000",
                           .scale_finished = 1000000};
    const char *json_path = NULL;
    FILE *jf = NULL;
    int c, status = 0;
    long v;

    while ((c = getopt_long (argc, argv, "h", lopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            o.json = true;
            break;
        case 'J':
            json_path = optarg;
            break;
        case 'b':
            o.bindir = optarg;
            break;
        case 'd':
            o.dir = optarg;
            break;
        case 'K':
            o.klist = optarg;
            break;
        case 'S':
            o.sizes = optarg;
            break;
        case OPT_CURVES:
            o.scale_curves = optarg;
            break;
        case OPT_SC_INFLIGHT:
            o.scale_inflight = optarg;
            break;
        case OPT_SC_RANKS:
            o.scale_ranks = optarg;
            break;
        case OPT_SC_LIVE:
            o.scale_live = optarg;
            break;
        case OPT_SC_MEM:
            o.scale_mem = optarg;
            break;
        case OPT_PLOT:
            o.plot = optarg;
            break;
        case OPT_SOAK_RUNS:
            if (int_arg (optarg, 2, BENCH_MAX_REPS, &v) < 0)
                return 2;
            o.soak_runs = (int)v;
            break;
        case OPT_CPUS:
            if (int_arg (optarg, 1, 1024, &v) < 0)
                return 2;
            o.cpus = (int)v;
            break;
        case OPT_SC_FINISHED:
            if (int_arg (optarg, 0, 100000000, &v) < 0)
                return 2;
            o.scale_finished = v;
            break;
        case 'h':
            usage (stdout);
            return 0;
        case 'r':
        case 'M':
        case 'N':
        case 'C':
        case 'F':
        case 'm':
        case 'c':
        case 'X':
        case 'E':
            if (int_arg (optarg, c == 'F' || c == 'X' || c == 'E' ? 0 : 1,
                         c == 'r' ? BENCH_MAX_REPS : 10000000, &v) < 0)
                return 2;
            if (c == 'r')
                o.reps = (int)v;
            else if (c == 'M') {
                o.jobs = (int)v;
                o.jobs_given = true;
            } else if (c == 'N')
                o.ranks = (int)v;
            else if (c == 'C')
                o.inflight = (int)v;
            else if (c == 'F')
                o.finished = v;
            else if (c == 'm')
                o.mem_jobs = (int)v;
            else if (c == 'X')
                o.single_max = (int)v;
            else if (c == 'E')
                o.env_bytes = (int)v;
            else
                o.commits = (int)v;
            break;
        default:
            usage (stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage (stderr);
        return 2;
    }
    /* cairnd runs from / and is handed the shim's path: an absolute one */
    char *bindir = realpath (o.bindir, NULL);
    if (!bindir) {
        fprintf (stderr, "cairn-bench: --bindir %s: %s\n", o.bindir,
                 strerror (errno));
        return 2;
    }
    o.bindir = bindir;
    if (json_path && !(jf = fopen (json_path, "ae"))) {
        fprintf (stderr, "cairn-bench: %s: %s\n", json_path, strerror (errno));
        return 1;
    }
    /* cairnd (which inherits it) holds a pidfd per live process, and so
     * does the raw restart scan: 1000 jobs x 4 ranks need 4000, the
     * scale benchmark's 10,000 live processes 10,000. */
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit (RLIMIT_NOFILE, &rl);
    }
    struct cairn_error cerr = {{0}};
    if (o.cpus > 0 && bench_limit_cpus (o.cpus, &cerr) < 0) {
        fprintf (stderr, "cairn-bench: %s\n", cerr.text);
        return 2;
    }
    for (int i = optind; i < argc; i++) {
        bool all = !strcmp (argv[i], "all"), found = all;
        for (size_t k = 0; k < sizeof (benches) / sizeof (benches[0]); k++) {
            if (!all && strcmp (argv[i], benches[k].name))
                continue;
            found = true;
            struct cairn_error err = {{0}};
            struct report *r = benches[k].fn (&o, &err);
            if (!r) {
                fprintf (stderr, "cairn-bench: %s: %s\n", benches[k].name,
                         err.text);
                status = 1;
                continue;
            }
            report_print (r, o.json, jf);
            if (report_failed (r))
                status = 1;
            report_destroy (r);
        }
        if (!found) {
            fprintf (stderr, "cairn-bench: unknown benchmark '%s'\n", argv[i]);
            usage (stderr);
            return 2;
        }
    }
    if (jf)
        fclose (jf);
    free (bindir);
    return status;
}
