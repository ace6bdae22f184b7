/* cmd_eventlog.c - `cairn eventlog JOBID [--json] [--follow]`: a job's
 * journal, for a person or for a script.
 *
 * The human form is meant to answer "why did this job fail, on which rank,
 * and what did its prolog/epilog print" without reading JSON: relative
 * times, one line per event with its context as key=value, wait statuses
 * and signals decoded, each process event tagged with the phase and ranks
 * of its intent (and the node it ran on, under multinode), and captured
 * output printed as indented text. A node's late report (proc-late) is a
 * sentence: it matters to an admin, and its keys alone do not say that
 * it changed nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_journal.h"
#include "cli/commands.h"
#include "core/eventlog.h"
#include "core/idset.h"
#include "core/job.h"
#include "core/rv1.h"
#include "core/signame.h"
#include "node/nodeproc.h"

#define FOLLOW_INTERVAL_US 100000

struct elog {
    bool json;
    double t0; /* timestamp of the first event printed */
    bool have_t0;
    bool clean;    /* `clean` was printed: the job is over */
    uint32_t next; /* next seq to read */
    json_t *procs; /* execid -> "phase ranks R", from the intents */
    json_t *hosts; /* execid -> its node's host, from proc-spawn "host" */
};

/* A string value: bare if it is one harmless word, else JSON-quoted. */
static void print_string (const char *s)
{
    bool bare = *s != '\0';
    for (const char *p = s; *p && bare; p++)
        if ((unsigned char)*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' ||
            *p == 0x7f)
            bare = false;
    if (bare) {
        fputs (s, stdout);
        return;
    }
    json_t *o = json_string (s);
    char *q = o ? json_dumps (o, JSON_ENCODE_ANY) : NULL;
    fputs (q ? q : "\"?\"", stdout);
    free (q);
    json_decref (o);
}

static void print_value (const char *key, json_t *v)
{
    if (json_is_string (v)) {
        print_string (json_string_value (v));
        return;
    }
    char *s = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
    fputs (s ? s : "?", stdout);
    free (s);
    if (json_is_integer (v)) {
        int n = (int)json_integer_value (v);
        char buf[64];
        if ((!strcmp (key, "status") || !strcmp (key, "wait_status")) &&
            n >= 0) {
            cli_wait_status_str (n, buf, sizeof (buf));
            printf (" (%s)", buf);
        } else if (!strcmp (key, "signum") && signame_str (n))
            printf (" (%s)", signame_str (n));
    }
}

/* accept carries R, the jobspec and the config: show what a person needs
 * (--json has it all). */
static void print_accept (double t, json_t *ctx)
{
    json_t *R = json_object_get (ctx, "R");
    json_t *cmd = json_object_get (
        json_array_get (
            json_object_get (json_object_get (ctx, "jobspec"), "tasks"), 0),
        "command");
    struct rv1 *r = R ? rv1_decode (R, NULL) : NULL;
    char *ranks = r ? idset_encode (rv1_ranks (r)) : NULL;
    time_t secs = (time_t)t;
    struct tm tm;
    char when[64] = "?";
    size_t i;
    json_t *a;

    if (localtime_r (&secs, &tm))
        strftime (when, sizeof (when), "%Y-%m-%dT%H:%M:%S%z", &tm);
    printf (" time=%s userid=", when);
    print_value ("userid", json_object_get (ctx, "userid"));
    printf (" ranks=%s", ranks ? ranks : "?");
    json_t *imp = json_object_get (ctx, "imp"); /* trust.h, T1 */
    if (json_is_string (json_object_get (imp, "path"))) {
        printf (" imp=");
        print_string (json_string_value (json_object_get (imp, "path")));
        printf (" imp-uid=");
        print_value ("uid", json_object_get (imp, "uid"));
    }
    if (json_is_array (cmd)) {
        printf (" command=");
        json_array_foreach (cmd, i, a)
        {
            if (i > 0)
                putchar (' ');
            print_string (json_string_value (a) ? json_string_value (a) : "?");
        }
    }
    free (ranks);
    rv1_destroy (r);
}

/* Captured output: each line indented under its event. */
static void print_data (const char *data)
{
    while (*data) {
        size_t n = strcspn (data, "\n");
        printf ("        | %.*s\n", (int)n, data);
        data += n;
        if (*data == '\n')
            data++;
    }
}

/* Text from a node (its host name, an error) on one line: control
 * characters and, for a host, anything but printable ASCII become '?'. */
static void print_text (const char *s, bool word)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool bad = c < ' ' || c == 0x7f ||
                   (word && (c == ' ' || c >= 0x80 || c == '[' || c == ']'));
        putchar (bad ? '?' : c);
    }
}

/* The process execid as "[shell rank 2]", "[shell rank 2 on fake2]". */
static void print_tag (const struct elog *el, const char *execid)
{
    const char *what = json_string_value (json_object_get (el->procs, execid));
    const char *host = json_string_value (json_object_get (el->hosts, execid));

    if (!what && !host)
        return;
    printf (" [%s", what ? what : "");
    if (host) {
        printf ("%son ", what ? " " : "");
        print_text (host, true);
    }
    putchar (']');
}

/* proc-late {execid, state, status?, host?, error?}: "late report from
 * node fake2: shell rank 2 ended, exit 0; recorded, nothing undone". */
static void print_late (const struct elog *el, json_t *ctx)
{
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    const char *state = json_string_value (json_object_get (ctx, "state"));
    const char *host = json_string_value (json_object_get (ctx, "host"));
    const char *error = json_string_value (json_object_get (ctx, "error"));
    json_t *status = json_object_get (ctx, "status");
    const char *what = NULL;
    enum nodeproc_state st;
    char buf[64];

    if (execid) {
        what = json_string_value (json_object_get (el->procs, execid));
        if (!host)
            host = json_string_value (json_object_get (el->hosts, execid));
    }
    printf (" execid=");
    print_string (execid ? execid : "?");
    printf (": late report from ");
    if (host) {
        printf ("node ");
        print_text (host, true);
    } else
        printf ("its node");
    printf (": %s ", what ? what : "the process");
    if (!state)
        printf ("in an unknown state");
    else if (nodeproc_state_of (state, &st) < 0)
        print_text (state, true);
    else if (st == NODEPROC_ENDED) {
        printf ("ended");
        if (json_is_integer (status) && json_integer_value (status) >= 0) {
            cli_wait_status_str ((int)json_integer_value (status), buf,
                                 sizeof (buf));
            printf (", %s", buf);
        }
    } else if (st == NODEPROC_FAILED)
        printf ("never started");
    else if (st == NODEPROC_RUNNING)
        printf ("still running");
    else
        print_text (state, true); /* "lost": unknown there too */
    if (error) {
        printf (" (");
        print_text (error, false);
        putchar (')');
    }
    printf ("; recorded, nothing undone");
}

static void remember_proc (struct elog *el, json_t *ctx)
{
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    const char *phase = json_string_value (json_object_get (ctx, "phase"));
    const char *ranks = json_string_value (json_object_get (ctx, "ranks"));
    char buf[128];

    if (!execid || !phase || !ranks)
        return;
    snprintf (buf, sizeof (buf), "%s %s %s", phase,
              strchr (ranks, ',') || strchr (ranks, '-') ? "ranks" : "rank",
              ranks);
    json_object_set_new (el->procs, execid, json_string (buf));
}

static void print_human (struct elog *el, json_t *entry)
{
    double t;
    const char *name;
    json_t *ctx;
    const char *key;
    json_t *v;

    (void)eventlog_entry_parse (entry, &t, &name, &ctx);
    if (!el->have_t0) {
        el->t0 = t;
        el->have_t0 = true;
    }
    printf ("%+.3fs %s", t - el->t0, name);
    enum job_event ev = job_event_of (name);
    if (ev == JOB_EV_ACCEPT) {
        print_accept (t, ctx);
        putchar ('\n');
        return;
    }
    if (ev == JOB_EV_PROC_LATE) {
        print_late (el, ctx);
        putchar ('\n');
        return;
    }
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    const char *host = json_string_value (json_object_get (ctx, "host"));
    bool spawn = ev == JOB_EV_PROC_SPAWN;
    if (ev == JOB_EV_PROC_INTENT)
        remember_proc (el, ctx);
    else if (spawn && execid && host) /* on a node: the tag says which */
        json_object_set (el->hosts, execid, json_object_get (ctx, "host"));
    json_object_foreach (ctx, key, v)
    {
        if (ev == JOB_EV_LOG && !strcmp (key, "data"))
            continue;
        if (spawn && execid && host && !strcmp (key, "host"))
            continue;
        printf (" %s=", key);
        print_value (key, v);
    }
    if (execid && ev != JOB_EV_PROC_INTENT)
        print_tag (el, execid);
    putchar ('\n');
    const char *data = json_string_value (json_object_get (ctx, "data"));
    if (ev == JOB_EV_LOG && data)
        print_data (data);
}

static int
print_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct elog *el = arg;
    struct cairn_error err = {{0}};
    json_t *entry = eventlog_entry_decode (line, len, &err);
    const char *name = NULL;

    el->next = seq + 1;
    if (el->json)
        printf ("%.*s\n", (int)len, line);
    else if (entry)
        print_human (el, entry);
    else
        printf ("seq %u: malformed event (%s): %.*s\n", (unsigned)seq, err.text,
                (int)len, line);
    if (entry && eventlog_entry_parse (entry, NULL, &name, NULL) == 0 &&
        job_event_of (name) == JOB_EV_CLEAN)
        el->clean = true;
    json_decref (entry);
    return 0;
}

static int cmd_eventlog (struct cli *cli, int argc, char **argv)
{
    enum { OPT_JSON = 0x100 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"follow", no_argument, NULL, 'f'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct elog el = {0};
    struct jcli jc = {0};
    struct cairn_error err = {{0}};
    bool follow = false;
    uint64_t id;
    int opt, rc = 1;

    while ((opt = getopt_long (argc, argv, "f" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        switch (opt) {
        case OPT_JSON:
            el.json = true;
            break;
        case 'f':
            follow = true;
            break;
        default:
            cli_common_option (cli, opt, optarg);
        }
    }
    if (argc - optind != 1)
        cli_usage_error (cli, "expected one JOBID");
    if (cli_parse_jobid (cli, argv[optind], &id) < 0)
        return 1;
    if (!(el.procs = json_object ()) || !(el.hosts = json_object ())) {
        json_decref (el.procs);
        cli_error ("out of memory");
        return 1;
    }
    if (jcli_open_view (&jc, cli) < 0)
        goto done;
    for (;;) {
        if (jcli_read (&jc, id, el.next, print_cb, &el, &err) < 0) {
            jcli_read_error (&jc, id, &err);
            goto done;
        }
        if (!follow || el.clean)
            break;
        fflush (stdout);
        usleep (FOLLOW_INTERVAL_US);
    }
    rc = 0;
done:
    jcli_close (&jc);
    json_decref (el.procs);
    json_decref (el.hosts);
    return rc;
}

const struct cli_command cli_cmd_eventlog = {
    "eventlog",
    cmd_eventlog,
    "[--json] [-f] JOBID",
    "Print a job's journal events (read from the journal, or through "
    "cairnd).",
    "      --json          the raw RFC 18 lines, one a line\n"
    "  -f, --follow        keep printing new events until the job is clean\n",
};
