/* cmd_journal.c - `cairn ranks`: what the journal says about a job's
 * ranks, by folding its events exactly as cairnd's replay does
 * (job_apply). `cairn procs` is in cmd_procs.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_journal.h"
#include "core/eventlog.h"

/* ---- ranks ---- */

static const char *const phase_names[] = {"prolog", "shell", "epilog"};

/* The last process of phase working for rank, or NULL. */
static const struct job_proc *
rank_proc (const struct job *job, uint32_t rank, enum proc_phase phase)
{
    const struct job_proc *found = NULL;
    for (size_t i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        if (p->phase == phase && idset_test (p->ranks, rank))
            found = p;
    }
    return found;
}

static const char *proc_state_word (const struct job_proc *p)
{
    if (p->state == PROC_INTENT)
        return "starting";
    if (p->state == PROC_RUNNING)
        return p->terminating ? "terminating" : "running";
    return p->lost ? "lost" : p->error ? "not-started" : "exited";
}

/* The process's outcome; with pid, the pid of its shim too. */
static void
proc_cell (const struct job_proc *p, bool pid, char *buf, size_t len)
{
    char st[64];
    if (!p) {
        snprintf (buf, len, "-");
        return;
    }
    if (p->state != PROC_DONE || p->lost || p->error)
        snprintf (st, sizeof (st), "%s", proc_state_word (p));
    else
        jcli_status (p->status, st, sizeof (st));
    /* the pid journaled: the command's own, its process group's leader */
    if (pid && p->pid > 0)
        snprintf (buf, len, "%s%s pid %d", p->timed_out ? "timeout, " : "",
                  st, (int)p->pid);
    else
        snprintf (buf, len, "%s%s", p->timed_out ? "timeout, " : "", st);
}

const char *jcli_proc_host (const struct job *job,
                            const struct job_proc *p,
                            const struct rv1 *r)
{
    int64_t node;
    const char *host;

    if (p->host) /* the node's own word (proc-spawn) */
        return p->host;
    if ((node = job_proc_node (job, p)) < 0)
        return NULL;
    /* not spawned (yet, or ever: lost while its node was unreachable) */
    host = r ? rv1_hostname (r, (uint32_t)node) : NULL;
    return host ? host : "?";
}

static json_t *
proc_json (const struct job *job, const struct rv1 *r, const struct job_proc *p)
{
    if (!p)
        return json_null ();
    json_t *o =
        json_pack ("{s:s s:s s:i s:b s:s?}", "execid", p->execid, "state",
                   proc_state_word (p), "pid", (int)p->pid, "timed_out",
                   p->timed_out, "host", jcli_proc_host (job, p, r));
    if (o && p->state == PROC_DONE && !p->lost && !p->error)
        json_object_set_new (o, "status", json_integer (p->status));
    if (o && p->note)
        json_object_set_new (o, "note", json_string (p->note));
    return o;
}

/* The reason of the last drain event naming rank, or NULL. */
static const char *drain_reason (const json_t *events, uint32_t rank)
{
    const char *reason = NULL;
    size_t i;
    json_t *w;

    json_array_foreach (events, i, w)
    {
        const char *name, *r, *s;
        json_t *ctx;
        struct idset *ranks;
        if (eventlog_entry_parse (json_object_get (w, "event"), NULL, &name,
                                  &ctx) < 0 ||
            job_event_of (name) != JOB_EV_DRAIN ||
            json_unpack (ctx, "{s:s s:s}", "ranks", &r, "reason", &s) < 0 ||
            !(ranks = idset_decode (r, NULL)))
            continue;
        if (idset_test (ranks, rank))
            reason = s;
        idset_destroy (ranks);
    }
    return reason;
}

char *jcli_drain_hosts (const json_t *ctx, const struct rv1 *r)
{
    const char *hosts = json_string_value (json_object_get (ctx, "hosts"));
    const char *ranks = json_string_value (json_object_get (ctx, "ranks"));
    struct idset *set;
    char *s;

    if (hosts) /* cairnd names them since drains have "hosts" */
        return strdup (hosts);
    if (!ranks || !r || !(set = idset_decode (ranks, NULL)))
        return strdup ("");
    s = jcli_hosts (r, set, false);
    idset_destroy (set);
    return s || errno == ENOMEM ? s : strdup ("");
}

json_t *jcli_rank_json (const struct job *job,
                        const json_t *events,
                        const struct rv1 *r,
                        uint32_t rank)
{
    bool drained = idset_test (job_drained (job), rank);
    const char *host = r ? rv1_hostname (r, rank) : NULL;

    return json_pack (
        "{s:I s:s? s:o s:o s:o s:b s:s? s:b}", "rank", (json_int_t)rank, "host",
        host, phase_names[0],
        proc_json (job, r, rank_proc (job, rank, PHASE_PROLOG)), phase_names[1],
        proc_json (job, r, rank_proc (job, rank, PHASE_SHELL)), phase_names[2],
        proc_json (job, r, rank_proc (job, rank, PHASE_EPILOG)), "drained",
        drained, "drain_reason", drained ? drain_reason (events, rank) : NULL,
        "released", idset_test (job_released (job), rank));
}

/* Where rank's processes ran, for the NODE column: the node's host if any
 * of them ran on another node (all of a rank's that do run on its own
 * node), "local" if they ran on cairnd's host, "-" if none was started. */
static const char *
rank_node (const struct job *job, const struct rv1 *r, uint32_t rank)
{
    static const enum proc_phase order[] = {PHASE_SHELL, PHASE_PROLOG,
                                            PHASE_EPILOG};
    const char *node = NULL;
    bool any = false;

    for (size_t i = 0; i < sizeof (order) / sizeof (order[0]); i++) {
        const struct job_proc *p = rank_proc (job, rank, order[i]);
        const char *host = p ? jcli_proc_host (job, p, r) : NULL;
        any = any || p;
        if (p && p->host) /* reported by the node itself: the best name */
            return p->host;
        if (host && !node)
            node = host;
    }
    return node ? node : any ? "local" : "-";
}

bool jcli_rank_has_node (const struct job *job)
{
    return job_config (job)->multinode.on;
}

struct table *jcli_rank_table (const struct job *job, bool detail)
{
    static const char *const headers[] = {"RANK",     "HOST",   "PROLOG",
                                          "SHELL",    "EPILOG", "DRAINED",
                                          "RELEASED", "NOTE"};
    static const char *const headers_node[] = {"RANK",    "HOST",     "NODE",
                                               "PROLOG",  "SHELL",    "EPILOG",
                                               "DRAINED", "RELEASED", "NOTE"};
    bool node = jcli_rank_has_node (job);

    return table_create ((node ? 8 : 7) + (detail ? 1 : 0),
                         node ? headers_node : headers);
}

int jcli_rank_row (struct table *t,
                   const struct job *job,
                   const json_t *events,
                   const struct rv1 *r,
                   uint32_t rank,
                   bool detail)
{
    bool drained = idset_test (job_drained (job), rank);
    const char *host = r ? rv1_hostname (r, rank) : NULL;
    const char *note = drained ? drain_reason (events, rank) : NULL;
    char rs[16], c[3][96];

    snprintf (rs, sizeof (rs), "%u", (unsigned)rank);
    for (int ph = 0; ph < 3; ph++)
        proc_cell (rank_proc (job, rank, (enum proc_phase)ph), detail, c[ph],
                   sizeof (c[ph]));
    const char *dr = drained ? "yes" : "no";
    const char *rel = idset_test (job_released (job), rank) ? "yes" : "no";
    if (jcli_rank_has_node (job)) {
        const char *node = rank_node (job, r, rank);
        if (detail)
            return table_add (t, rs, host, node, c[0], c[1], c[2], dr, rel,
                              note);
        return table_add (t, rs, host, node, c[0], c[1], c[2], dr, rel);
    }
    if (detail)
        return table_add (t, rs, host, c[0], c[1], c[2], dr, rel, note);
    return table_add (t, rs, host, c[0], c[1], c[2], dr, rel);
}

static int cmd_ranks (struct cli *cli, int argc, char **argv)
{
    struct jcli jc = {0};
    struct job *job = NULL;
    struct rv1 *r = NULL;
    json_t *events = NULL;
    struct table *t = NULL;
    bool json;
    uint64_t id;
    int rc = 1;

    if (!(job = jcli_one_job (&jc, cli, argc, argv, &json, &id, &events)))
        goto done;
    r = jcli_rv1 (events);
    if (!json && !(t = jcli_rank_table (job, true)))
        goto nomem;
    const struct idset *all = job_ranks (job);
    for (uint32_t rk = idset_first (all); rk != IDSET_INVALID_ID;
         rk = idset_next (all, rk)) {
        if (json) {
            if (jcli_print_json (jcli_rank_json (job, events, r, rk)) < 0)
                goto done;
        } else if (jcli_rank_row (t, job, events, r, rk, true) < 0)
            goto nomem;
    }
    if (t)
        table_print (t, stdout);
    rc = 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    table_destroy (t);
    rv1_destroy (r);
    job_destroy (job);
    json_decref (events);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_ranks = {
    "ranks",
    cmd_ranks,
    "[--json] JOBID",
    "Show each rank of a job: its host, processes, drained, released.",
    "      --json          one JSON object per rank, one a line\n"
    "A process's pid is the command's own (the leader of its process "
    "group).\n"
    "A job run with multinode has a NODE column: where the rank's processes "
    "ran,\n"
    "the node's host, or local (cairnd's own host); with --json each "
    "process's\n"
    "\"host\" (null: local). A process on a node has that node's pid.\n",
};
