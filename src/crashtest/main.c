/* cairn-crashtest - prove cairnd's crash safety at every crash point.
 *
 * For each scenario: a clean run first (the reference, counting every
 * crash point cairnd passes), then the cases of the chosen mode, each in a
 * fresh state directory, each checked against the invariants and against
 * the reference. See TESTING.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crashtest/crashtest_plan.h"

static void usage (FILE *f)
{
    fprintf (
        f,
        "Usage: cairn-crashtest [OPTIONS] SCENARIO.json...\n"
        "Crash cairnd at every crash point of each scenario (or at random\n"
        "times, or inject faults), restart it, and check the invariants.\n"
        "Modes (default: exhaustive):\n"
        "      --quick           every point with K = 1 and K = last only\n"
        "      --full            everything: exhaustive, --double after the\n"
        "                        K = 1 and K = last cases, --faults, and\n"
        "                        --random (default 3 kills, 10 runs)\n"
        "      --double          then crash each restarted cairnd again at\n"
        "                        the first pass of every point of its restart\n"
        "      --point NAME:K    one case: crash the first cairnd there\n"
        "      --point2 NAME:K   ... and the second one there\n"
        "      --random N        SIGKILL cairnd up to N times a run\n"
        "      --runs M          random runs per scenario (default 10)\n"
        "      --run R           only random run R (to reproduce it)\n"
        "      --seed S          random seed (default: the time)\n"
        "      --faults          the scenario's fault cases\n"
        "      --fault SPEC      one fault case: spawn-eagain:K, fsync:K,\n"
        "                        supervisor-kill:PHASE:JOB:RANK (also\n"
        "                        supervisor-kill-held, supervisor-kill-stop),\n"
        "                        journal-full\n"
        "      --reference       only the clean run\n"
        "      --selftest        check that each check fires (TAP)\n"
        "Options:\n"
        "  -j, --jobs N          cases at once (default 2)\n"
        "      --cairnd PATH     cairnd to test (default: $CAIRN_BUILD_DIR,\n"
        "                        next to this program, then PATH, /usr/sbin)\n"
        "      --workdir DIR     where case directories go (default $TMPDIR)\n"
        "      --keep            keep the directories of failing cases\n"
        "      --keep-all        keep every case directory\n"
        "      --json            print the results as JSON\n"
        "      --expect-violations  exit 0 only if a violation is found\n"
        "      --expect TEXT     exit 0 only if a violation contains TEXT\n"
        "  -v, --verbose         print each case as it ends\n");
}

static int
parse_args (int argc, char **argv, struct ct_args *a, struct ct_opts *o)
{
    static const struct option opts[] = {
        {"quick", no_argument, NULL, 'q'},
        {"full", no_argument, NULL, 'U'},
        {"double", no_argument, NULL, 'D'},
        {"point", required_argument, NULL, 'p'},
        {"point2", required_argument, NULL, 'P'},
        {"random", required_argument, NULL, 'r'},
        {"runs", required_argument, NULL, 'R'},
        {"run", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},
        {"faults", no_argument, NULL, 'F'},
        {"fault", required_argument, NULL, 'f'},
        {"reference", no_argument, NULL, 'c'},
        {"selftest", no_argument, NULL, 'T'},
        {"jobs", required_argument, NULL, 'j'},
        {"cairnd", required_argument, NULL, 'C'},
        {"workdir", required_argument, NULL, 'w'},
        {"keep", no_argument, NULL, 'k'},
        {"keep-all", no_argument, NULL, 'K'},
        {"json", no_argument, NULL, 'J'},
        {"expect-violations", no_argument, NULL, 'E'},
        {"expect", required_argument, NULL, 'X'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long (argc, argv, "j:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'q':
            a->quick = true;
            break;
        case 'U':
            a->mode = M_FULL;
            break;
        case 'D':
            a->dbl = true;
            break;
        case 'p':
            a->mode = M_POINT;
            snprintf (a->point, sizeof (a->point), "%s", optarg);
            break;
        case 'P':
            snprintf (a->point2, sizeof (a->point2), "%s", optarg);
            break;
        case 'r':
            if (a->mode != M_FULL)
                a->mode = M_RANDOM;
            a->random_n = atoi (optarg);
            break;
        case 'R':
            a->runs = atoi (optarg);
            break;
        case 'n':
            a->run = atoi (optarg);
            break;
        case 's':
            a->seed = strtoull (optarg, NULL, 0);
            break;
        case 'F':
            a->mode = M_FAULTS;
            break;
        case 'f':
            a->mode = M_FAULT;
            snprintf (a->fault, sizeof (a->fault), "%s", optarg);
            break;
        case 'c':
            a->mode = M_REFERENCE;
            break;
        case 'T':
            exit (ct_selftest () == 0 ? 0 : 1);
        case 'j':
            o->jobs = atoi (optarg);
            break;
        case 'C':
            o->cairnd = optarg;
            break;
        case 'w':
            snprintf (o->workdir, sizeof (o->workdir), "%s", optarg);
            break;
        case 'k':
            o->keep = true;
            break;
        case 'K':
            o->keep_all = true;
            break;
        case 'J':
            o->json = true;
            break;
        case 'E':
            a->expect_violations = true;
            break;
        case 'X':
            a->expect_violations = true;
            a->expect = optarg;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'h':
            usage (stdout);
            exit (0);
        default:
            usage (stderr);
            return -1;
        }
    }
    if (a->mode == M_FULL && a->random_n == 0)
        a->random_n = 3;
    if (optind >= argc || o->jobs < 1 ||
        ((a->mode == M_RANDOM || a->mode == M_FULL) &&
         (a->random_n < 1 || a->random_n > CT_MAX_KILLS))) {
        usage (stderr);
        return -1;
    }
    if (a->point2[0] && a->mode != M_POINT) {
        fprintf (stderr, "cairn-crashtest: --point2 needs --point\n");
        return -1;
    }
    return 0;
}

static const char *find_cairnd (void)
{
    static char path[4096];
    const char *b = getenv ("CAIRN_BUILD_DIR");
    if (b && *b) {
        snprintf (path, sizeof (path), "%s/cairnd", b);
        if (access (path, X_OK) == 0)
            return path;
    }
    ssize_t n = readlink ("/proc/self/exe", path, sizeof (path) - 16);
    if (n > 0) {
        path[n] = '\0';
        char *slash = strrchr (path, '/');
        if (slash) {
            strcpy (slash + 1, "cairnd");
            if (access (path, X_OK) == 0)
                return path;
        }
    }
    /* installed: cairnd in PATH, or in /usr/sbin, where a package puts
     * it while the harness sits in /usr/libexec/cairn */
    const char *env = getenv ("PATH");
    char dirs[4096];
    snprintf (dirs, sizeof (dirs), "%s:/usr/sbin", env ? env : "");
    char *save = NULL;
    for (char *d = strtok_r (dirs, ":", &save); d;
         d = strtok_r (NULL, ":", &save)) {
        if (*d != '/')
            continue;
        snprintf (path, sizeof (path), "%s/cairnd", d);
        if (access (path, X_OK) == 0)
            return path;
    }
    return "cairnd";
}

/* A scenario may name the modes it is meant for ("modes": ["faults"]);
 * the modes that pick one case run it anyway. */
static bool allowed (const struct ct_scenario *sc, const char *name)
{
    if (!sc->modes || !name)
        return true;
    for (size_t i = 0; i < json_array_size (sc->modes); i++) {
        const char *s = json_string_value (json_array_get (sc->modes, i));
        if (s && strcmp (s, name) == 0)
            return true;
    }
    return false;
}

static void add_group (struct ct_group *groups,
                       size_t *ng,
                       const struct ct_scenario *sc,
                       const char *mode,
                       size_t first,
                       size_t last,
                       int points,
                       double t)
{
    struct ct_group *g = &groups[(*ng)++];
    g->scenario = sc->name;
    snprintf (g->mode, sizeof (g->mode), "%s", mode);
    g->first = first;
    g->last = last;
    g->points = points;
    g->elapsed = ct_mono () - t;
}

static int run_scenario (const char *file,
                         struct ct_plan *p,
                         struct ct_group *groups,
                         size_t *ng,
                         const struct ct_opts *o,
                         const struct ct_args *a,
                         struct ct_scenario *sc)
{
    struct cairn_error err = {{0}};
    bool full = a->mode == M_FULL;
    if (ct_scenario_load (file, sc, &err) < 0) {
        fprintf (stderr, "cairn-crashtest: %s\n", err.text);
        return -1;
    }
    bool crash_ok = allowed (sc, "crash"), faults_ok = allowed (sc, "faults");
    bool random_ok = allowed (sc, "random");
    if ((a->mode == M_EXHAUSTIVE && !crash_ok) ||
        (a->mode == M_FAULTS && !faults_ok) ||
        (a->mode == M_RANDOM && !random_ok)) {
        if (!o->json)
            printf ("(%s is not meant for this mode: skipped)\n", sc->name);
        return 0;
    }
    double t = ct_mono ();
    size_t iref = p->n;
    struct ct_case *cs = ct_plan_add (p, o, sc, NULL, CT_REFERENCE);
    if (!cs)
        return -1;
    ct_case_describe (cs, o->prog);
    ct_plan_run (p, iref, o);
    const json_t *ref = p->results[iref];
    int points = (int)json_object_size ((json_t *)ct_ref_counts (ref));
    add_group (groups, ng, sc, "clean", iref, iref + 1, points, t);

    size_t from = p->n;
    t = ct_mono ();
    switch (a->mode) {
    case M_FULL:
    case M_EXHAUSTIVE:
        if (!crash_ok)
            break;
        ct_plan_crashes (p, o, a, sc, ref);
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, a->quick ? "crash-quick" : "crash", from,
                   p->n, points, t);
        if (a->dbl || full) {
            size_t to = p->n;
            t = ct_mono ();
            ct_plan_doubles (p, o, sc, ref, from, to, full && !a->quick);
            ct_plan_run (p, to, o);
            add_group (groups, ng, sc, "double", to, p->n, points, t);
        }
        break;
    case M_POINT:
        if ((cs = ct_plan_add (p, o, sc, ref, CT_CRASH))) {
            snprintf (cs->crash[0], sizeof (cs->crash[0]), "%s", a->point);
            snprintf (cs->crash[1], sizeof (cs->crash[1]), "%s", a->point2);
            ct_case_describe (cs, o->prog);
        }
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, "point", from, p->n, points, t);
        break;
    case M_RANDOM:
        ct_plan_random (p, o, a, sc, ref);
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, "random", from, p->n, points, t);
        break;
    case M_FAULTS:
        ct_plan_faults (p, o, a, sc, ref);
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, "faults", from, p->n, points, t);
        break;
    case M_FAULT:
        if ((cs = ct_plan_add (p, o, sc, ref, CT_FAULT)) &&
            ct_fault_case (cs, a->fault, o->prog) < 0) {
            fprintf (stderr, "cairn-crashtest: bad --fault %s\n", a->fault);
            p->n--;
            return -1;
        }
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, "fault", from, p->n, points, t);
        break;
    default:
        break;
    }
    if (full && faults_ok) {
        from = p->n;
        t = ct_mono ();
        ct_plan_faults (p, o, a, sc, ref);
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, "faults", from, p->n, points, t);
    }
    if (full && random_ok) {
        from = p->n;
        t = ct_mono ();
        ct_plan_random (p, o, a, sc, ref);
        ct_plan_run (p, from, o);
        add_group (groups, ng, sc, "random", from, p->n, points, t);
    }
    return 0;
}

static bool violation_found (const struct ct_plan *p, const char *text)
{
    for (size_t i = 0; i < p->n; i++) {
        json_t *v = json_object_get (p->results[i], "violations");
        for (size_t k = 0; k < json_array_size (v); k++)
            if (strstr (json_string_value (json_array_get (v, k)), text))
                return true;
    }
    return false;
}

int main (int argc, char **argv)
{
    struct ct_args a = {.mode = M_EXHAUSTIVE, .runs = 10, .run = -1};
    struct ct_opts o = {.jobs = 2, .prog = "cairn-crashtest"};
    unsigned serial = 0;
    int rc = 0;

    o.serial = &serial;
    if (parse_args (argc, argv, &a, &o) < 0)
        return 2;
    if ((a.mode == M_RANDOM || a.mode == M_FULL) && a.seed == 0)
        a.seed = (uint64_t)time (NULL);
    if (!o.cairnd)
        o.cairnd = find_cairnd ();
    char base[300];
    const char *tmp = getenv ("TMPDIR");
    snprintf (base, sizeof (base), "%s/cct.XXXXXX",
              o.workdir[0]  ? o.workdir
              : tmp && *tmp ? tmp
                            : "/tmp");
    if (!mkdtemp (base)) {
        fprintf (stderr, "cairn-crashtest: mkdtemp %s: %s\n", base,
                 strerror (errno));
        return 2;
    }
    if (strlen (base) > 60) {
        fprintf (stderr,
                 "cairn-crashtest: %s is too long a path for the "
                 "sockets; use --workdir\n",
                 base);
        return 2;
    }
    snprintf (o.workdir, sizeof (o.workdir), "%s", base);
    if ((a.mode == M_RANDOM || a.mode == M_FULL) && !o.json)
        printf ("random seed %ju\n", (uintmax_t)a.seed);

    int nsc = argc - optind;
    struct ct_scenario *scs = calloc (nsc, sizeof (*scs));
    struct ct_group *groups = calloc (5 * nsc, sizeof (*groups));
    struct ct_plan *p = ct_plan_create ();
    size_t ng = 0;
    double t0 = ct_mono ();
    if (!scs || !groups || !p) {
        fprintf (stderr, "cairn-crashtest: out of memory\n");
        return 2;
    }
    for (int i = 0; i < nsc; i++)
        if (run_scenario (argv[optind + i], p, groups, &ng, &o, &a, &scs[i]) <
            0)
            rc = 2;
    size_t failed = ct_report (p, groups, ng, &o, ct_mono () - t0);
    if (o.keep || o.keep_all) {
        if (rmdir (o.workdir) < 0 && !o.json)
            printf ("case directories kept under %s\n", o.workdir);
    } else
        (void)ct_rmtree (o.workdir);
    if (rc == 0) {
        if (a.expect)
            rc = violation_found (p, a.expect) ? 0 : 1;
        else if (a.expect_violations)
            rc = failed > 0 ? 0 : 1;
        else
            rc = failed > 0 ? 1 : 0;
    }
    ct_plan_destroy (p);
    for (int i = 0; i < nsc; i++)
        ct_scenario_free (&scs[i]);
    free (scs);
    free (groups);
    return rc;
}
