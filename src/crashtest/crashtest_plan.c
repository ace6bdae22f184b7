/* crashtest_plan.c - which cases a mode runs, and running them.
 *
 * Cases run in child processes, at most `jobs` at once, each with a
 * directory of its own; a case's child writes result.json there and the
 * parent reads it back. A case that dies without a result counts as a
 * failure of the harness, reported like a violation.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crashtest/crashtest_plan.h"
#include "supervise/exitdir.h"

struct ct_plan *ct_plan_create (void)
{
    return calloc (1, sizeof (struct ct_plan));
}

void ct_plan_destroy (struct ct_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        json_decref (p->results[i]);
    free (p->results);
    free (p->cases);
    free (p);
}

struct ct_case *ct_plan_add (struct ct_plan *p,
                             const struct ct_opts *o,
                             const struct ct_scenario *sc,
                             const json_t *ref,
                             enum ct_kind kind)
{
    if (p->n == p->alloc) {
        size_t na = p->alloc ? p->alloc * 2 : 64;
        struct ct_case *c = realloc (p->cases, na * sizeof (*c));
        json_t **r = realloc (p->results, na * sizeof (*r));
        if (c)
            p->cases = c;
        if (r)
            p->results = r;
        if (!c || !r)
            return NULL;
        p->alloc = na;
    }
    struct ct_case *cs = &p->cases[p->n];
    memset (cs, 0, sizeof (*cs));
    p->results[p->n] = NULL;
    p->n++;
    cs->sc = sc;
    cs->ref = ref;
    cs->kind = kind;
    cs->cairnd = o->cairnd;
    cs->count = true;
    snprintf (cs->dir, sizeof (cs->dir), "%.120s/%.60s.%u", o->workdir,
              sc->name, o->serial ? ++*o->serial : 0);
    return cs;
}

/* Label and reproduction command from what the case does. */
void ct_case_describe (struct ct_case *cs, const char *prog)
{
    char *l = cs->label, *r = cs->repro;
    size_t ll = sizeof (cs->label), rl = sizeof (cs->repro);
    switch (cs->kind) {
    case CT_REFERENCE:
        snprintf (l, ll, "clean run");
        snprintf (r, rl, "%s --reference %s", prog, cs->sc->path);
        break;
    case CT_CRASH:
        if (cs->crash[1][0]) {
            snprintf (l, ll, "%s then %s", cs->crash[0], cs->crash[1]);
            snprintf (r, rl, "%s --point %s --point2 %s %s", prog, cs->crash[0],
                      cs->crash[1], cs->sc->path);
        } else {
            snprintf (l, ll, "%s", cs->crash[0]);
            snprintf (r, rl, "%s --point %s %s", prog, cs->crash[0],
                      cs->sc->path);
        }
        break;
    case CT_RANDOM:
        /* label and repro are set by the random planner */
        break;
    case CT_FAULT:
        snprintf (r, rl, "%s --fault %s %s", prog, l, cs->sc->path);
        break;
    }
}

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir (path);
    return unlink (path);
}

int ct_rmtree (const char *path)
{
    return nftw (path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void ct_case_remove (const char *dir)
{
    char statedir[4096];
    snprintf (statedir, sizeof (statedir), "%s/s", dir);
    exitdir_discard (statedir);
    (void)ct_rmtree (dir);
}

static json_t *read_result (const struct ct_case *cs, int status)
{
    char path[512], how[64];
    json_error_t jerr;
    snprintf (path, sizeof (path), "%s/result.json", cs->dir);
    json_t *res = json_load_file (path, 0, &jerr);
    if (res)
        return res;
    ct_status_str (status, how, sizeof (how));
    char why[128];
    snprintf (why, sizeof (why),
              "the harness's case process ended (%s) without a result", how);
    return json_pack ("{s:s s:s s:s s:b s:i s:[s] s:[] s:{} s:[] s:[] s:f}",
                      "label", cs->label, "repro", cs->repro, "kind", "?",
                      "reached", 0, "kills", 0, "violations", why, "diverged",
                      "jobs", "exits", "counts", "elapsed", 0.);
}

static bool failed (const json_t *res)
{
    return json_array_size (json_object_get (res, "violations")) > 0;
}

static void child (const struct ct_case *cs)
{
    char path[512];
    json_t *res = ct_case_run (cs);
    snprintf (path, sizeof (path), "%s/result.json", cs->dir);
    if (!res || json_dump_file (res, path, JSON_COMPACT) < 0)
        _exit (1);
    _exit (0);
}

int ct_plan_run (struct ct_plan *p, size_t from, const struct ct_opts *o)
{
    pid_t *pids = calloc (o->jobs, sizeof (*pids));
    size_t *which = calloc (o->jobs, sizeof (*which));
    size_t next = from, done = from, running = 0;

    if (!pids || !which) {
        free (pids);
        free (which);
        return -1;
    }
    fflush (NULL);
    while (done < p->n) {
        while (running < (size_t)o->jobs && next < p->n) {
            size_t slot = 0;
            while (pids[slot] > 0)
                slot++;
            pid_t pid = fork ();
            if (pid < 0) {
                perror ("cairn-crashtest: fork");
                break;
            }
            if (pid == 0)
                child (&p->cases[next]);
            pids[slot] = pid;
            which[slot] = next++;
            running++;
        }
        int status;
        pid_t pid = waitpid (-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int s = 0; s < o->jobs; s++) {
            if (pids[s] != pid)
                continue;
            struct ct_case *cs = &p->cases[which[s]];
            json_t *res = read_result (cs, status);
            json_object_del (res, "transcripts");
            p->results[which[s]] = res;
            if (o->verbose)
                fprintf (stderr, "%-24s %-44s %s%s\n", cs->sc->name, cs->label,
                         failed (res) ? "FAIL" : "ok",
                         json_is_true (json_object_get (res, "reached"))
                             ? ""
                             : " (not reached)");
            if (o->keep_all || (o->keep && failed (res)))
                ;
            else
                ct_case_remove (cs->dir);
            pids[s] = 0;
            running--;
            done++;
        }
    }
    free (pids);
    free (which);
    return done == p->n ? 0 : -1;
}
