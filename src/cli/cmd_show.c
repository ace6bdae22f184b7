/* cmd_show.c - `cairn show JOBID`: one job on one screen, as `scontrol
 * show job` and `flux job info` give it: who, what, where, its phases and
 * ranks, and what happened to it (exceptions, drains, releases, nodes'
 * late reports, posted events), read from the journal.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_journal.h"
#include "cli/commands.h"
#include "core/eventlog.h"
#include "core/job.h"
#include "node/nodeproc.h"

/* A phase's bounds and status, from its events. */
struct phase {
    const char *name;
    enum job_event start, finish; /* its events */
    double t_start, t_finish;
    bool finished;
    int status;
};

struct show {
    const json_t *events;
    const struct job *job;
    struct rv1 *r;
    double t0; /* accept's time: the others are shown after it */
    struct phase phases[3];
    json_t *exceptions, *drains, *releases, *late, *posted; /* arrays */
};

static int append (json_t *a, json_t *o)
{
    return o ? json_array_append_new (a, o) : -1;
}

/* A proc-late (a node's report of a process given up on): its context,
 * with the time and the process's phase and rank. */
static json_t *late_json (const struct show *sh, double t, json_t *ctx)
{
    static const char *const phases[] = {"prolog", "shell", "epilog"};
    const char *x = json_string_value (json_object_get (ctx, "execid"));
    const struct job_proc *p = x ? job_proc_find (sh->job, x) : NULL;
    json_t *o = json_deep_copy (ctx);
    if (!o || json_object_set_new (o, "timestamp", json_real (t)) < 0 ||
        (p && (json_object_set_new (o, "phase",
                                    json_string (phases[p->phase])) < 0 ||
               json_object_set_new (o, "rank", json_integer (p->rank)) < 0))) {
        json_decref (o);
        return NULL;
    }
    return o;
}

/* One pass over the events fills sh's phases and lists. */
static int show_scan (struct show *sh)
{
    size_t i;
    json_t *w;

    json_array_foreach (sh->events, i, w)
    {
        json_t *entry = json_object_get (w, "event");
        const char *name;
        double t;
        json_t *ctx;
        if (eventlog_entry_parse (entry, &t, &name, &ctx) < 0)
            continue;
        enum job_event ev = job_event_of (name);
        for (int ph = 0; ph < 3; ph++) {
            struct phase *p = &sh->phases[ph];
            if (ev == p->start)
                p->t_start = t;
            else if (ev == p->finish) {
                json_int_t st = -1;
                (void)json_unpack (ctx, "{s:I}", "status", &st);
                p->t_finish = t;
                p->finished = true;
                p->status = (int)st;
            }
        }
        switch (ev) {
        case JOB_EV_EXCEPTION: {
            json_t *o = json_deep_copy (ctx);
            if (!o || json_object_set_new (o, "timestamp", json_real (t)) < 0 ||
                append (sh->exceptions, o) < 0)
                return -1;
            break;
        }
        case JOB_EV_DRAIN: {
            char *hosts = jcli_drain_hosts (ctx, sh->r);
            json_t *o =
                hosts
                    ? json_pack ("{s:f s:O? s:s s:O?}", "timestamp", t, "ranks",
                                 json_object_get (ctx, "ranks"), "hosts", hosts,
                                 "reason", json_object_get (ctx, "reason"))
                    : NULL;
            free (hosts);
            if (append (sh->drains, o) < 0)
                return -1;
            break;
        }
        case JOB_EV_RELEASE:
            if (append (sh->releases,
                        json_pack ("{s:f s:O? s:O?}", "timestamp", t, "ranks",
                                   json_object_get (ctx, "ranks"), "final",
                                   json_object_get (ctx, "final"))) < 0)
                return -1;
            break;
        case JOB_EV_PROC_LATE:
            if (append (sh->late, late_json (sh, t, ctx)) < 0)
                return -1;
            break;
        case JOB_EV_OTHER:
            /* an outside service's; a stream response's name is cairn's */
            if (!job_event_is_cairns (name) &&
                append (sh->posted, json_incref (entry)) < 0)
                return -1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* ---- --json ---- */

static json_t *phases_json (const struct show *sh)
{
    json_t *a = json_array ();
    for (int ph = 0; a && ph < 3; ph++) {
        const struct phase *p = &sh->phases[ph];
        if (p->t_start == 0)
            continue;
        if (append (a,
                    json_pack ("{s:s s:f s:f s:o}", "name", p->name, "t_start",
                               p->t_start, "t_finish", p->t_finish, "status",
                               p->finished ? json_integer (p->status)
                                           : json_null ())) < 0) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}

static json_t *per_rank_json (const struct show *sh)
{
    const struct idset *all = job_ranks (sh->job);
    json_t *a = json_array ();
    for (uint32_t rk = idset_first (all); a && rk != IDSET_INVALID_ID;
         rk = idset_next (all, rk)) {
        if (append (a, jcli_rank_json (sh->job, sh->events, sh->r, rk)) < 0) {
            json_decref (a);
            return NULL;
        }
    }
    return a;
}

/* Steals o. */
static int show_json (const struct show *sh, json_t *o)
{
    if (json_object_set_new (o, "phases", phases_json (sh)) < 0 ||
        json_object_set_new (o, "per_rank", per_rank_json (sh)) < 0 ||
        json_object_set (o, "exceptions", sh->exceptions) < 0 ||
        json_object_set (o, "drains", sh->drains) < 0 ||
        json_object_set (o, "releases", sh->releases) < 0 ||
        json_object_set (o, "late", sh->late) < 0 ||
        json_object_set (o, "events", sh->posted) < 0) {
        json_decref (o);
        cli_error ("out of memory");
        return -1;
    }
    return jcli_print_json (o);
}

/* ---- for people ---- */

static const char *str (const json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s && *s ? s : "-";
}

static double num (const json_t *o, const char *key)
{
    return json_number_value (json_object_get (o, key));
}

/* t after accept: "+1.234s", or "-" for no time. */
static void since (const struct show *sh, double t, char *buf, size_t len)
{
    if (t > 0)
        snprintf (buf, len, "+%.3fs", t - sh->t0);
    else
        snprintf (buf, len, "-");
}

static void line (const char *label, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void line (const char *label, const char *fmt, ...)
{
    va_list ap;
    printf ("%-11s ", label);
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    putchar ('\n');
}

static void show_head (const struct show *sh, const json_t *o)
{
    char buf[128], buf2[128];
    json_t *uid = json_object_get (o, "userid");
    json_t *rc = json_object_get (o, "returncode");

    line ("job", "%lld (%s)",
          (long long)json_integer_value (json_object_get (o, "id")),
          str (o, "f58"));
    snprintf (buf, sizeof (buf), "%lld", (long long)json_integer_value (uid));
    if (json_is_integer (uid) && strcmp (buf, str (o, "username")) != 0)
        line ("user", "%s (%s)", str (o, "username"), buf);
    else if (json_is_integer (uid)) /* no name in the user database */
        line ("user", "%s", buf);
    else
        line ("user", "-");
    line ("state", "%s", str (o, "state"));
    line ("result", "%s", str (o, "result"));
    if (json_is_integer (rc)) {
        jcli_status ((int)num (o, "waitstatus"), buf, sizeof (buf));
        line ("exit code", "%lld (%s)", (long long)json_integer_value (rc),
              buf);
    } else
        line ("exit code", "-");
    line ("command", "%s", str (o, "command"));
    line ("cwd", "%s", str (o, "cwd"));
    line ("ranks", "%s (%lld)", str (o, "ranks"),
          (long long)json_integer_value (json_object_get (o, "nranks")));
    line ("hosts", "%s", str (o, "nodelist"));
    double exp = num (o, "expiration");
    if (exp > 0) {
        /* a limit counts from R's starttime, or from the acceptance */
        double from =
            sh->r && rv1_starttime (sh->r) > 0 ? rv1_starttime (sh->r) : sh->t0;
        double limit = exp - from;
        if (limit >= 1) /* a client sets it a moment before the accept */
            limit = round (limit);
        jcli_duration (limit, buf, sizeof (buf));
        jcli_time (exp, buf2, sizeof (buf2));
        line ("time limit", "%s (until %s)", buf, buf2);
    } else
        line ("time limit", "none");
    jcli_time (sh->t0, buf, sizeof (buf));
    line ("accepted", "%s", sh->t0 > 0 ? buf : "-");
    double rt = num (o, "runtime");
    if (num (o, "t_start") == 0)
        snprintf (buf, sizeof (buf), "-");
    else if (rt < 60) /* as precise as the phases' times */
        snprintf (buf, sizeof (buf), "%.3fs", rt);
    else
        jcli_duration (rt, buf, sizeof (buf));
    line ("runtime", "%s", buf);
    since (sh, num (o, "t_clean"), buf, sizeof (buf));
    line ("clean", "%s", buf);
}

/* Print t after a blank line (nothing if it has no rows). */
static void show_table (struct table *t, size_t nrows)
{
    if (nrows == 0)
        return;
    putchar ('\n');
    table_print (t, stdout);
}

static int show_phases (const struct show *sh)
{
    static const char *const h[] = {"PHASE", "START", "END", "STATUS"};
    struct table *t = table_create (4, h);
    size_t n = 0;

    if (!t)
        return -1;
    for (int ph = 0; ph < 3; ph++) {
        const struct phase *p = &sh->phases[ph];
        char a[32], b[32], st[64] = "";
        if (p->t_start == 0)
            continue;
        since (sh, p->t_start, a, sizeof (a));
        since (sh, p->finished ? p->t_finish : 0, b, sizeof (b));
        if (p->finished)
            jcli_status (p->status, st, sizeof (st));
        if (table_add (t, p->name, a, b, st) < 0) {
            table_destroy (t);
            return -1;
        }
        n++;
    }
    show_table (t, n);
    table_destroy (t);
    return 0;
}

static int show_ranks (const struct show *sh)
{
    const struct idset *all = job_ranks (sh->job);
    struct table *t = jcli_rank_table (sh->job, false);
    int rc = -1;

    if (!t)
        return -1;
    for (uint32_t rk = idset_first (all); rk != IDSET_INVALID_ID;
         rk = idset_next (all, rk))
        if (jcli_rank_row (t, sh->job, sh->events, sh->r, rk, false) < 0)
            goto done;
    show_table (t, idset_count (all));
    rc = 0;
done:
    table_destroy (t);
    return rc;
}

/* A table of one row per element of list, each added by row (0, or -1
 * ENOMEM); nothing printed when list is empty. */
typedef int (*row_f) (const struct show *sh, struct table *t, json_t *o);
static int show_list (const struct show *sh,
                      int ncols,
                      const char *const *headers,
                      const json_t *list,
                      row_f row)
{
    struct table *t = table_create (ncols, headers);
    size_t i;
    json_t *o;
    int rc = 0;

    if (!t)
        return -1;
    json_array_foreach (list, i, o)
    {
        if ((rc = row (sh, t, o)) < 0)
            break;
    }
    if (rc == 0)
        show_table (t, json_array_size (list));
    table_destroy (t);
    return rc;
}

static int exception_row (const struct show *sh, struct table *t, json_t *o)
{
    char when[32], sev[16];
    since (sh, num (o, "timestamp"), when, sizeof (when));
    snprintf (sev, sizeof (sev), "%lld",
              (long long)json_integer_value (json_object_get (o, "severity")));
    return table_add (t, str (o, "type"), when, sev, str (o, "ranks"),
                      str (o, "note"));
}

static int drain_row (const struct show *sh, struct table *t, json_t *o)
{
    char when[32];
    since (sh, num (o, "timestamp"), when, sizeof (when));
    return table_add (t, str (o, "ranks"), when, str (o, "hosts"),
                      str (o, "reason"));
}

static int release_row (const struct show *sh, struct table *t, json_t *o)
{
    char when[32];
    since (sh, num (o, "timestamp"), when, sizeof (when));
    return table_add (t, str (o, "ranks"), when,
                      json_is_true (json_object_get (o, "final")) ? "yes"
                                                                  : "no");
}

/* A node's late report: the process's phase and rank, its outcome. */
static int late_row (const struct show *sh, struct table *t, json_t *o)
{
    char when[32], rank[16] = "-", outcome[160];
    json_t *error = json_object_get (o, "error");
    enum nodeproc_state st;
    since (sh, num (o, "timestamp"), when, sizeof (when));
    if (json_is_integer (json_object_get (o, "rank")))
        snprintf (rank, sizeof (rank), "%lld",
                  (long long)json_integer_value (json_object_get (o, "rank")));
    if (nodeproc_state_of (str (o, "state"), &st) == 0 &&
        st == NODEPROC_ENDED && json_is_integer (json_object_get (o, "status")))
        jcli_status ((int)num (o, "status"), outcome, sizeof (outcome));
    else
        snprintf (outcome, sizeof (outcome), "%s%s%s", str (o, "state"),
                  error ? ": " : "", error ? str (o, "error") : "");
    return table_add (t, str (o, "phase"), when, rank, str (o, "host"),
                      outcome);
}

/* A posted event's context as KEY=VALUE words, values JSON unless they
 * are plain words. */
static char *context_text (const json_t *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    const char *key;
    json_t *v;
    bool first = true;

    if (!f)
        return NULL;
    json_object_foreach ((json_t *)ctx, key, v)
    {
        const char *s = json_string_value (v);
        fprintf (f, "%s%s=", first ? "" : " ", key);
        first = false;
        if (s && *s && !strpbrk (s, " \t\n\"'\\=")) {
            fputs (s, f);
            continue;
        }
        char *j = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
        fputs (j ? j : "?", f);
        free (j);
    }
    if (fclose (f) != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

static int posted_row (const struct show *sh, struct table *t, json_t *e)
{
    char when[32];
    double ts;
    const char *name;
    json_t *ctx;
    if (eventlog_entry_parse (e, &ts, &name, &ctx) < 0)
        return 0;
    char *c = context_text (ctx);
    since (sh, ts, when, sizeof (when));
    int r = c ? table_add (t, name, when, c) : -1;
    free (c);
    return r;
}

static int show_lists (const struct show *sh)
{
    static const char *const exc[] = {"EXCEPTION", "TIME", "SEVERITY", "RANKS",
                                      "NOTE"};
    static const char *const drain[] = {"DRAINED", "TIME", "HOSTS", "REASON"};
    static const char *const rel[] = {"RELEASED", "TIME", "FINAL"};
    static const char *const late[] = {"LATE REPORT", "TIME", "RANK", "HOST",
                                       "OUTCOME"};
    static const char *const posted[] = {"EVENT", "TIME", "CONTEXT"};

    return show_list (sh, 5, exc, sh->exceptions, exception_row) < 0 ||
                   show_list (sh, 4, drain, sh->drains, drain_row) < 0 ||
                   show_list (sh, 3, rel, sh->releases, release_row) < 0 ||
                   show_list (sh, 5, late, sh->late, late_row) < 0 ||
                   show_list (sh, 3, posted, sh->posted, posted_row) < 0
               ? -1
               : 0;
}

static int show_human (const struct show *sh, const json_t *o)
{
    show_head (sh, o);
    if (show_phases (sh) < 0 || show_ranks (sh) < 0 || show_lists (sh) < 0) {
        cli_error ("out of memory");
        return -1;
    }
    return 0;
}

static int cmd_show (struct cli *cli, int argc, char **argv)
{
    struct show sh = {
        .phases = {{"prolog", JOB_EV_PROLOG_START, JOB_EV_PROLOG_FINISH},
                   {"shell", JOB_EV_START, JOB_EV_FINISH},
                   {"epilog", JOB_EV_EPILOG_START, JOB_EV_EPILOG_FINISH}},
    };
    struct journal_jobinfo info = {0};
    struct jcli jc = {0};
    struct job *job = NULL;
    json_t *events = NULL, *o = NULL;
    bool json;
    uint64_t id;
    int rc = 1;

    if (!(job = jcli_one_job (&jc, cli, argc, argv, &json, &id, &events)))
        goto done;
    (void)jcli_job_info (&jc, id, &info);
    sh.events = events;
    sh.job = job;
    sh.r = jcli_rv1 (events);
    sh.t0 = job_t_accept (job);
    if (!(sh.exceptions = json_array ()) || !(sh.drains = json_array ()) ||
        !(sh.releases = json_array ()) || !(sh.late = json_array ()) ||
        !(sh.posted = json_array ()) || show_scan (&sh) < 0 ||
        !(o = jcli_job_summary (id, events, job, info.active, jcli_now ()))) {
        cli_error ("out of memory");
        goto done;
    }
    if (json) {
        rc = show_json (&sh, o) < 0 ? 1 : 0;
        o = NULL; /* stolen */
    } else
        rc = show_human (&sh, o) < 0 ? 1 : 0;
done:
    json_decref (o);
    json_decref (sh.exceptions);
    json_decref (sh.drains);
    json_decref (sh.releases);
    json_decref (sh.late);
    json_decref (sh.posted);
    rv1_destroy (sh.r);
    job_destroy (job);
    json_decref (events);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_show = {
    "show",
    cmd_show,
    "[--json] JOBID",
    "Show one job on one screen: who, what, where, and what happened.",
    "      --json          the same as one JSON object\n",
};
