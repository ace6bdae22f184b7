/* cmd_run_reasons.c - see cmd_run_reasons.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/cmd_journal.h"
#include "cli/cmd_run_reasons.h"
#include "core/eventlog.h"

/* One cause: what happened, in which phase, on which ranks. */
struct cause {
    char what[256];
    int phase;
    struct idset *ranks;
};

struct causes {
    struct cause *v;
    size_t n;
};

static void causes_add (struct causes *cs,
                        int phase,
                        const char *what,
                        const struct idset *ranks)
{
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->v[i].phase == phase && !strcmp (cs->v[i].what, what)) {
            idset_add (cs->v[i].ranks, ranks);
            return;
        }
    }
    struct cause *v = realloc (cs->v, (cs->n + 1) * sizeof (*v));
    if (!v)
        return;
    cs->v = v;
    struct cause *c = &cs->v[cs->n];
    snprintf (c->what, sizeof (c->what), "%s", what);
    c->phase = phase;
    if (!(c->ranks = idset_copy (ranks)))
        return;
    cs->n++;
}

/* Why a process failed, or NULL if it did not. */
static const char *
proc_failure (const struct job_proc *p, char *buf, size_t len)
{
    if (p->state != PROC_DONE)
        return NULL;
    if (p->note) /* a spawn error, a loss: its own words */
        return p->note;
    if (p->timed_out)
        return "timed out";
    if (p->status == 0)
        return NULL;
    cli_wait_status_str (p->status, buf, len);
    return buf;
}

static void print_exceptions (const json_t *events, int *nlines)
{
    size_t i;
    json_t *e;

    json_array_foreach (events, i, e)
    {
        const char *name, *type = "", *note = "";
        json_t *ctx;
        int sev = 0;
        if (eventlog_entry_parse (json_object_get (e, "event"), NULL, &name,
                                  &ctx) < 0 ||
            job_event_of (name) != JOB_EV_EXCEPTION)
            continue;
        (void)json_unpack (ctx, "{s?s s?i s?s}", "type", &type, "severity",
                           &sev, "note", &note);
        if ((*nlines)++ < RUN_REASONS_MAX)
            cli_error ("exception %s (severity %d)%s%s", type, sev,
                       *note ? ": " : "", note);
    }
}

void run_print_reasons (struct cli *cli, uint64_t id)
{
    static const char *const phase[] = {"prolog", "shell", "epilog"};
    struct jcli jc = {0};
    struct causes cs = {0};
    json_t *events = NULL;
    struct job *job;
    int nlines = 0;

    /* quiet: the journal may not be ours to read, nor the job cairnd's */
    bool was = cli_set_quiet (true);
    int rc = jcli_open_view (&jc, cli);
    job = rc == 0 ? jcli_load (&jc, id, &events) : NULL;
    cli_set_quiet (was);
    if (!job)
        goto done;
    print_exceptions (events, &nlines);
    for (size_t i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        char buf[64];
        const char *what = proc_failure (p, buf, sizeof (buf));
        if (what)
            causes_add (&cs, p->phase, what, p->ranks);
    }
    for (int ph = 0; ph < 3; ph++) {
        for (size_t i = 0; i < cs.n; i++) {
            char *rs;
            if (cs.v[i].phase != ph || nlines++ >= RUN_REASONS_MAX)
                continue;
            rs = idset_encode (cs.v[i].ranks);
            cli_error ("%s on %s %s: %s", phase[ph],
                       idset_count (cs.v[i].ranks) == 1 ? "rank" : "ranks",
                       rs ? rs : "?", cs.v[i].what);
            free (rs);
        }
    }
    if (nlines > RUN_REASONS_MAX)
        cli_error ("... and %d more (cairn ranks %ju, cairn eventlog %ju)",
                   nlines - RUN_REASONS_MAX, (uintmax_t)id, (uintmax_t)id);
done:
    for (size_t i = 0; i < cs.n; i++)
        idset_destroy (cs.v[i].ranks);
    free (cs.v);
    json_decref (events);
    job_destroy (job);
    if (rc == 0)
        jcli_close (&jc);
}
