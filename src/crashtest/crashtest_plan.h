/* crashtest_plan.h - cases to run, running them, reporting them. */
#ifndef CAIRN_CRASHTEST_PLAN_H
#define CAIRN_CRASHTEST_PLAN_H

#include "crashtest/crashtest.h"
#include "crashtest/crashtest_run.h" /* struct ct_case */

struct ct_opts {
    const char *cairnd;
    const char *prog; /* program name for reproduction commands */
    char workdir[256];
    int jobs;
    bool keep;
    bool keep_all;
    bool json;
    bool verbose;
    unsigned *serial; /* case directory numbering */
};

enum ct_mode {
    M_EXHAUSTIVE,
    M_POINT,
    M_RANDOM,
    M_FAULTS,
    M_FAULT,
    M_REFERENCE,
    M_FULL,
};

struct ct_args {
    enum ct_mode mode;
    bool quick;
    bool dbl;
    bool expect_violations;
    const char *expect; /* a violation must contain this */
    char point[96];
    char point2[96];
    int random_n;
    int runs;
    int run; /* -1: all */
    uint64_t seed;
    char fault[96];
};

struct ct_plan {
    struct ct_case *cases;
    json_t **results; /* results[i] for cases[i], NULL until run */
    size_t n;
    size_t alloc;
};

struct ct_plan *ct_plan_create (void);
void ct_plan_destroy (struct ct_plan *p);

/* A new case (zeroed but for scenario, reference, kind, cairnd, count and
 * its directory), or NULL (ENOMEM). The pointer is valid until the next
 * ct_plan_add. */
struct ct_case *ct_plan_add (struct ct_plan *p,
                             const struct ct_opts *o,
                             const struct ct_scenario *sc,
                             const json_t *ref,
                             enum ct_kind kind);

/* Fill cs->label and cs->repro (fault and random cases set label first). */
void ct_case_describe (struct ct_case *cs, const char *prog);

/* Run cases[from..n-1], o->jobs at a time. Returns 0, or -1 if some case
 * could not be started. */
int ct_plan_run (struct ct_plan *p, size_t from, const struct ct_opts *o);

int ct_rmtree (const char *path);

/* Remove a case's directory and its state dir's run dir (on a tmpfs,
 * outside the case directory: exitdir_discard). */
void ct_case_remove (const char *dir);

/* ---- the cases of each mode (crashtest_modes.c) ---- */

/* The reference's crash point counts {name: passes} (borrowed). */
const json_t *ct_ref_counts (const json_t *ref);

/* Every (point, K) of the reference (K = 1 and last with a->quick). */
void ct_plan_crashes (struct ct_plan *p,
                      const struct ct_opts *o,
                      const struct ct_args *a,
                      const struct ct_scenario *sc,
                      const json_t *ref);

/* For each case in [from, to) that crashed (only K = 1 or last ones with
 * edges_only): the same crash, then one at the first pass of each point
 * the restarted cairnd passed before it listened. */
void ct_plan_doubles (struct ct_plan *p,
                      const struct ct_opts *o,
                      const struct ct_scenario *sc,
                      const json_t *ref,
                      size_t from,
                      size_t to,
                      bool edges_only);

/* a->runs runs (or only a->run) with up to a->random_n kills each, at
 * times drawn from a->seed over the reference's duration. */
void ct_plan_random (struct ct_plan *p,
                     const struct ct_opts *o,
                     const struct ct_args *a,
                     const struct ct_scenario *sc,
                     const json_t *ref);

/* The scenario's fault cases ("faults", default spawn-eagain, fsync and
 * supervisor-kill), for every K or every command of the reference. */
void ct_plan_faults (struct ct_plan *p,
                     const struct ct_opts *o,
                     const struct ct_args *a,
                     const struct ct_scenario *sc,
                     const json_t *ref);

/* Turn cs into the fault case SPEC (spawn-eagain:K, fsync:K,
 * supervisor-kill:PHASE:JOB:RANK, journal-full). Returns 0, or -1 for a bad
 * SPEC. */
int ct_fault_case (struct ct_case *cs, const char *spec, const char *prog);

/* ---- reporting (crashtest_report.c) ---- */

struct ct_group {
    const char *scenario;
    char mode[32];
    size_t first; /* cases [first, last) of the plan */
    size_t last;
    int points; /* distinct crash points the clean run passed */
    double elapsed;
};

/* Print the table and the failures (or the JSON document) of the groups.
 * Returns the number of cases with violations. */
size_t ct_report (const struct ct_plan *p,
                  const struct ct_group *groups,
                  size_t ngroups,
                  const struct ct_opts *o,
                  double wall);

#endif /* CAIRN_CRASHTEST_PLAN_H */
