/* crashtest_modes.c - the cases each mode runs.
 *
 * Every mode starts from the clean run of the scenario (the reference):
 * its crash point counts say which (point, K) pairs exist, its run log
 * which commands run (each a moment to kill the supervisor at), its
 * duration when random kills may land.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashtest/crashtest_plan.h"

static uint64_t splitmix (uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* K values to try for a point passed n times. */
static int ks (int n, bool quick, int out[], int max)
{
    int k = 0;
    if (!quick) {
        for (int i = 1; i <= n && k < max; i++)
            out[k++] = i;
        return k;
    }
    out[k++] = 1;
    if (n > 1)
        out[k++] = n;
    return k;
}

const json_t *ct_ref_counts (const json_t *ref)
{
    return json_array_get (json_object_get (ref, "counts"), 0);
}

void ct_plan_crashes (struct ct_plan *p,
                      const struct ct_opts *o,
                      const struct ct_args *a,
                      const struct ct_scenario *sc,
                      const json_t *ref)
{
    const char *name;
    json_t *n;
    int kv[4096];
    json_object_foreach ((json_t *)ct_ref_counts (ref), name, n)
    {
        int nk = ks ((int)json_integer_value (n), a->quick, kv, 4096);
        for (int i = 0; i < nk; i++) {
            struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_CRASH);
            if (!cs)
                return;
            snprintf (cs->crash[0], sizeof (cs->crash[0]), "%s:%d", name,
                      kv[i]);
            ct_case_describe (cs, o->prog);
        }
    }
}

/* Is the first crash of case i at K = 1 or at the last K of its point? */
static bool edge_k (const struct ct_plan *p, size_t i, const json_t *ref)
{
    char name[96];
    int k;
    if (sscanf (p->cases[i].crash[0], "%95[^:]:%d", name, &k) != 2)
        return false;
    return k == 1 || k == json_integer_value (
                              json_object_get (ct_ref_counts (ref), name));
}

/* The points on the way from a supervisor's death to its commands'
 * statuses, reached only after it died: cairnd's handling of the death
 * (daemon.c), and the keeper's end of each command it inherited
 * (shim/keep.c; the keeper dies there, and cairnd exits on its loss;
 * keeper.session.kill only where the command's session held more). */
static const char *const takeover_points[] = {
    "exec.supervisor.lost", "keeper.record.before", "keeper.session.kill",
    "keeper.reap.before"};

/* A case whose crash killed the supervisor (cairnd lived on, "kills" 0):
 * cairnd dies too, at the first pass of each point of its takeover, in
 * the same generation (CAIRN_CRASH_AT takes a list). */
static void plan_takeover_crashes (struct ct_plan *p,
                                   const struct ct_opts *o,
                                   const struct ct_scenario *sc,
                                   const json_t *ref,
                                   const char *first)
{
    for (size_t t = 0; t < sizeof (takeover_points) / sizeof (char *); t++) {
        struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_CRASH);
        if (!cs)
            return;
        if (snprintf (cs->crash[0], sizeof (cs->crash[0]), "%.60s,%s:1",
                      first, takeover_points[t]) >= (int)sizeof (cs->crash[0]))
            cs->crash[0][0] = '\0'; /* cannot happen: the names are short */
        ct_case_describe (cs, o->prog);
    }
}

/* Second crashes: the restarted cairnd dies at the first pass of each
 * crash point it passes while it restarts (replay, reconcile, the commit
 * of what reconcile found, its effects), before it listens. After a
 * supervisor's death, cairnd dies while it takes over instead. */
void ct_plan_doubles (struct ct_plan *p,
                      const struct ct_opts *o,
                      const struct ct_scenario *sc,
                      const json_t *ref,
                      size_t from,
                      size_t to,
                      bool edges_only)
{
    for (size_t i = from; i < to; i++) {
        const json_t *res = p->results[i];
        char first[96];
        if (!res || !json_is_true (json_object_get (res, "reached")) ||
            (edges_only && !edge_k (p, i, ref)))
            continue;
        snprintf (first, sizeof (first), "%s", p->cases[i].crash[0]);
        if (json_integer_value (json_object_get (res, "kills")) == 0) {
            plan_takeover_crashes (p, o, sc, ref, first);
            continue;
        }
        const json_t *c1 =
            json_array_get (json_object_get (res, "startup-counts"), 1);
        const char *name;
        json_t *n;
        json_object_foreach ((json_t *)c1, name, n)
        {
            struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_CRASH);
            if (!cs)
                return;
            snprintf (cs->crash[0], sizeof (cs->crash[0]), "%s", first);
            snprintf (cs->crash[1], sizeof (cs->crash[1]), "%s:1", name);
            ct_case_describe (cs, o->prog);
        }
    }
}

void ct_plan_random (struct ct_plan *p,
                     const struct ct_opts *o,
                     const struct ct_args *a,
                     const struct ct_scenario *sc,
                     const json_t *ref)
{
    double d = json_real_value (json_object_get (ref, "duration"));
    if (d < 0.3)
        d = 0.3;
    for (int run = 0; run < a->runs; run++) {
        if (a->run >= 0 && run != a->run)
            continue;
        uint64_t s = a->seed ^ ((uint64_t)(run + 1) * 0xD1B54A32D192ED03ULL);
        struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_RANDOM);
        if (!cs)
            return;
        cs->nkills = 1 + (int)(splitmix (&s) % (uint64_t)a->random_n);
        for (int k = 0; k < cs->nkills; k++)
            cs->kills[k] =
                (double)(splitmix (&s) >> 11) / 9007199254740992.0 * d;
        for (int x = 1; x < cs->nkills; x++) /* sort */
            for (int y = x; y > 0 && cs->kills[y] < cs->kills[y - 1]; y--) {
                double t = cs->kills[y];
                cs->kills[y] = cs->kills[y - 1];
                cs->kills[y - 1] = t;
            }
        snprintf (cs->label, sizeof (cs->label),
                  "random run %d (%d kills, first at %.3fs)", run, cs->nkills,
                  cs->kills[0]);
        snprintf (cs->repro, sizeof (cs->repro),
                  "%s --random %d --seed %ju --run %d %s", o->prog, a->random_n,
                  (uintmax_t)a->seed, run, sc->path);
    }
}

/* "supervisor-kill[-held|-stop]:PHASE:JOB:RANK": its parts and its kind. */
static bool supkill_parse (const char *spec,
                           char *phase,
                           unsigned long long *job,
                           char *rank,
                           enum ct_fault *fault)
{
    static const struct {
        const char *name;
        enum ct_fault fault;
    } kinds[] = {{"supervisor-kill:", CT_FAULT_SUPKILL},
                 {"supervisor-kill-held:", CT_FAULT_SUPHELD},
                 {"supervisor-kill-stop:", CT_FAULT_SUPSTOP}};
    for (size_t i = 0; i < sizeof (kinds) / sizeof (kinds[0]); i++) {
        size_t n = strlen (kinds[i].name);
        if (strncmp (spec, kinds[i].name, n) == 0 &&
            sscanf (spec + n, "%15[a-z]:%llu:%15s", phase, job, rank) == 3 &&
            ct_phase_parse (phase) >= 0) {
            *fault = kinds[i].fault;
            return true;
        }
    }
    return false;
}

/* Parse a fault SPEC into cs. Returns 0 or -1. */
int ct_fault_case (struct ct_case *cs, const char *spec, const char *prog)
{
    int k = 0;
    char phase[16], rank[16];
    unsigned long long job;

    snprintf (cs->label, sizeof (cs->label), "%s", spec);
    cs->kind = CT_FAULT;
    if (sscanf (spec, "spawn-eagain:%d", &k) == 1 && k > 0) {
        cs->fault = CT_FAULT_SPAWN;
        snprintf (cs->fault_env, sizeof (cs->fault_env), "exec.spawn:%d:%d", k,
                  EAGAIN);
    } else if (sscanf (spec, "fsync:%d", &k) == 1 && k > 0) {
        cs->fault = CT_FAULT_FSYNC;
        snprintf (cs->fault_env, sizeof (cs->fault_env), "journal.commit:%d:%d",
                  k, EIO);
    } else if (supkill_parse (spec, phase, &job, rank, &cs->fault)) {
        snprintf (cs->target, sizeof (cs->target), "%s %llu %s", phase, job,
                  rank);
    } else if (strcmp (spec, "journal-full") == 0)
        cs->fault = CT_FAULT_FULL;
    else
        return -1;
    ct_case_describe (cs, prog);
    return 0;
}

void ct_plan_faults (struct ct_plan *p,
                     const struct ct_opts *o,
                     const struct ct_args *a,
                     const struct ct_scenario *sc,
                     const json_t *ref)
{
    static const char *defaults[] = {"spawn-eagain", "fsync",
                                     "supervisor-kill"};
    char spec[96];
    int kv[4096];
    size_t nf = sc->faults ? json_array_size (sc->faults) : 3;

    for (size_t f = 0; f < nf; f++) {
        const char *name =
            sc->faults ? json_string_value (json_array_get (sc->faults, f))
                       : defaults[f];
        if (!name)
            continue;
        const char *point = strcmp (name, "spawn-eagain") == 0 ? "exec.spawn"
                            : strcmp (name, "fsync") == 0 ? "journal.commit"
                                                          : NULL;
        if (point) {
            int n = (int)json_integer_value (
                json_object_get (ct_ref_counts (ref), point));
            int nk = ks (n, a->quick, kv, 4096);
            for (int i = 0; i < nk; i++) {
                struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_FAULT);
                snprintf (spec, sizeof (spec), "%s:%d", name, kv[i]);
                if (cs)
                    (void)ct_fault_case (cs, spec, o->prog);
            }
        } else if (strcmp (name, "supervisor-kill") == 0 ||
                   strcmp (name, "supervisor-kill-held") == 0 ||
                   strcmp (name, "supervisor-kill-stop") == 0) {
            const char *id;
            json_t *sum;
            json_object_foreach (json_object_get (ref, "jobs"), id, sum)
            {
                json_t *ran = json_object_get (sum, "ran");
                for (size_t i = 0; i < json_array_size (ran); i++) {
                    char ph[16], rk[16];
                    const char *s = json_string_value (json_array_get (ran, i));
                    if (sscanf (s, "%15[a-z].%15s", ph, rk) != 2)
                        continue;
                    snprintf (spec, sizeof (spec), "%s:%s:%s:%s", name, ph, id,
                              rk);
                    struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_FAULT);
                    if (cs)
                        (void)ct_fault_case (cs, spec, o->prog);
                }
                if (a->quick)
                    break;
            }
        } else {
            struct ct_case *cs = ct_plan_add (p, o, sc, ref, CT_FAULT);
            if (cs && ct_fault_case (cs, name, o->prog) < 0)
                snprintf (cs->label, sizeof (cs->label), "unknown fault %s",
                          name);
        }
    }
}
