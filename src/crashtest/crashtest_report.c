/* crashtest_report.c - the table a person reads, the JSON a machine reads.
 *
 * Every failure is printed with the one command that reproduces it, so a
 * report can be acted on without reading the harness.
 */
#include <stdio.h>
#include <string.h>

#include "crashtest/crashtest_plan.h"

#define MAX_SHOWN 12

struct tally {
    size_t cases, reached, passed, failed, diverged;
    double elapsed;
};

static struct tally count (const struct ct_plan *p, const struct ct_group *g)
{
    struct tally t = {0};
    for (size_t i = g->first; i < g->last; i++) {
        const json_t *r = p->results[i];
        if (!r)
            continue;
        t.cases++;
        if (json_is_true (json_object_get (r, "reached")))
            t.reached++;
        if (json_array_size (json_object_get (r, "violations")) > 0)
            t.failed++;
        else
            t.passed++;
        if (json_array_size (json_object_get (r, "diverged")) > 0)
            t.diverged++;
        t.elapsed += json_real_value (json_object_get (r, "elapsed"));
    }
    return t;
}

static void print_failure (const json_t *r, const char *scenario)
{
    json_t *v = json_object_get (r, "violations");
    printf ("\nFAIL %s: %s\n  reproduce: %s\n", scenario,
            json_string_value (json_object_get (r, "label")),
            json_string_value (json_object_get (r, "repro")));
    for (size_t i = 0; i < json_array_size (v) && i < MAX_SHOWN; i++)
        printf ("  - %s\n", json_string_value (json_array_get (v, i)));
    if (json_array_size (v) > MAX_SHOWN)
        printf ("  ... and %zu more\n", json_array_size (v) - MAX_SHOWN);
    json_t *ex = json_object_get (r, "exits");
    if (json_array_size (ex) > 0) {
        printf ("  cairnd:");
        for (size_t i = 0; i < json_array_size (ex); i++)
            printf ("%s %s", i ? ";" : "",
                    json_string_value (json_array_get (ex, i)));
        printf ("\n");
    }
}

static void print_table (const struct ct_plan *p,
                         const struct ct_group *groups,
                         size_t ngroups,
                         double wall)
{
    struct tally all = {0};
    printf ("%-22s %-10s %6s %6s %7s %6s %6s %8s %8s\n", "scenario", "mode",
            "points", "cases", "reached", "passed", "failed", "diverged",
            "cpu-time");
    for (size_t g = 0; g < ngroups; g++) {
        struct tally t = count (p, &groups[g]);
        printf ("%-22s %-10s %6d %6zu %7zu %6zu %6zu %8zu %7.1fs\n",
                groups[g].scenario, groups[g].mode, groups[g].points, t.cases,
                t.reached, t.passed, t.failed, t.diverged, t.elapsed);
        all.cases += t.cases;
        all.reached += t.reached;
        all.passed += t.passed;
        all.failed += t.failed;
        all.diverged += t.diverged;
        all.elapsed += t.elapsed;
    }
    printf ("%-22s %-10s %6s %6zu %7zu %6zu %6zu %8zu %7.1fs\n", "total", "",
            "", all.cases, all.reached, all.passed, all.failed, all.diverged,
            all.elapsed);
    printf ("wall time %.1fs\n", wall);
    for (size_t g = 0; g < ngroups; g++)
        for (size_t i = groups[g].first; i < groups[g].last; i++)
            if (p->results[i] && json_array_size (json_object_get (
                                     p->results[i], "violations")) > 0)
                print_failure (p->results[i], groups[g].scenario);
}

static void print_json (const struct ct_plan *p,
                        const struct ct_group *groups,
                        size_t ngroups,
                        double wall)
{
    json_t *doc = json_object (), *arr = json_array ();
    struct tally all = {0};
    for (size_t g = 0; g < ngroups; g++) {
        struct tally t = count (p, &groups[g]);
        json_t *cases = json_array ();
        for (size_t i = groups[g].first; i < groups[g].last; i++) {
            const json_t *r = p->results[i];
            if (!r)
                continue;
            json_array_append_new (
                cases, json_pack ("{s:O s:O s:O s:O s:O s:O s:O}", "label",
                                  json_object_get (r, "label"), "repro",
                                  json_object_get (r, "repro"), "reached",
                                  json_object_get (r, "reached"), "violations",
                                  json_object_get (r, "violations"), "diverged",
                                  json_object_get (r, "diverged"), "exits",
                                  json_object_get (r, "exits"), "elapsed",
                                  json_object_get (r, "elapsed")));
        }
        json_array_append_new (
            arr,
            json_pack ("{s:s s:s s:i s:I s:I s:I s:I s:I s:f s:o}", "scenario",
                       groups[g].scenario, "mode", groups[g].mode, "points",
                       groups[g].points, "cases", (json_int_t)t.cases,
                       "reached", (json_int_t)t.reached, "passed",
                       (json_int_t)t.passed, "failed", (json_int_t)t.failed,
                       "diverged", (json_int_t)t.diverged, "cpu-time",
                       t.elapsed, "results", cases));
        all.cases += t.cases;
        all.reached += t.reached;
        all.passed += t.passed;
        all.failed += t.failed;
        all.diverged += t.diverged;
    }
    json_object_set_new (doc, "groups", arr);
    json_object_set_new (
        doc, "totals",
        json_pack ("{s:I s:I s:I s:I s:I s:f}", "cases", (json_int_t)all.cases,
                   "reached", (json_int_t)all.reached, "passed",
                   (json_int_t)all.passed, "failed", (json_int_t)all.failed,
                   "diverged", (json_int_t)all.diverged, "wall-time", wall));
    json_dumpf (doc, stdout, JSON_INDENT (1));
    printf ("\n");
    json_decref (doc);
}

size_t ct_report (const struct ct_plan *p,
                  const struct ct_group *groups,
                  size_t ngroups,
                  const struct ct_opts *o,
                  double wall)
{
    size_t failed = 0;
    for (size_t g = 0; g < ngroups; g++)
        failed += count (p, &groups[g]).failed;
    if (o->json)
        print_json (p, groups, ngroups, wall);
    else
        print_table (p, groups, ngroups, wall);
    fflush (stdout);
    return failed;
}
