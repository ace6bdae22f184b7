/* cmd_jobs.c - `cairn jobs`: the journal's jobs, one a line, as `flux
 * jobs` and `squeue` show theirs. The fields are cmd_jobs_view.c's; -o
 * formats them as cmd_jobs_format.c says.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cmd_journal.h"
#include "cli/commands.h"
#include "core/jobid.h"

/* COMMAND's width when the output is no terminal (and COLUMNS unset). */
#define JOBS_COMMAND_MAX 40

static const char *const job_states[] = {
    "new", "prolog", "starting", "held", "run", "cleanup", "done", "invalid"};

static const char *const headers[] = {"ID",   "USER",  "STATE",   "RESULT",
                                      "EXIT", "RANKS", "RUNTIME", "COMMAND"};

struct jobs {
    struct jcli jc;
    const char *want; /* --state */
    bool json;        /* --json */
    bool decimal;     /* -d */
    struct jfmt *fmt; /* -o */
    struct table *t;  /* the default output */
    size_t cmd_max;   /* COMMAND's width when cut by us, 0: by the table */
    double now;
};

/* The terminal's width: $COLUMNS (as ls and ps read it), else stdout's
 * terminal; 0 when neither says. */
static size_t term_width (void)
{
    const char *c = getenv ("COLUMNS");
    struct winsize ws;
    char *end;

    if (c && *c) {
        long n = strtol (c, &end, 10);
        if (*end == '\0' && n > 0 && n < 100000)
            return (size_t)n;
    }
    if (isatty (STDOUT_FILENO) && ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        return ws.ws_col;
    return 0;
}

static const char *str (const json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : "";
}

static int table_row (struct jobs *js, const json_t *o)
{
    char id[JOBID_STRLEN + 24], code[16] = "", ranks[64], rt[32] = "";
    char cmd[JOBS_COMMAND_MAX * 4 + 8];
    json_t *rc = json_object_get (o, "returncode");
    const char *command = str (o, "command");
    json_int_t nranks = json_integer_value (json_object_get (o, "nranks"));

    if (js->decimal)
        snprintf (id, sizeof (id), "%lld",
                  (long long)json_integer_value (json_object_get (o, "id")));
    else
        snprintf (id, sizeof (id), "%s", str (o, "f58"));
    if (json_is_integer (rc))
        snprintf (code, sizeof (code), "%lld",
                  (long long)json_integer_value (rc));
    /* the count, then the set: "2 (0-1)"; a long set is cut */
    snprintf (ranks, sizeof (ranks), "%lld (%s)", (long long)nranks,
              str (o, "ranks"));
    if (nranks == 0)
        snprintf (ranks, sizeof (ranks), "-");
    if (json_real_value (json_object_get (o, "t_start")) > 0)
        jcli_duration (json_real_value (json_object_get (o, "runtime")), rt,
                       sizeof (rt));
    if (js->cmd_max > 0 && jcli_width (command) > js->cmd_max) {
        snprintf (cmd, sizeof (cmd), "%.*s…",
                  (int)jcli_prefix (command, js->cmd_max - 1), command);
        command = cmd;
    }
    return table_add (js->t, id, str (o, "username"), str (o, "state"),
                      str (o, "result"), code, ranks, rt, command);
}

/* Print job o (a jcli_job_summary() object; stolen) as --json, -o or the
 * table say. Returns 0, or -2 when out of memory (printed). */
static int jobs_print (struct jobs *js, json_t *o)
{
    if (js->json)
        return jcli_print_json (o) < 0 ? -2 : 0;
    if (js->fmt)
        jfmt_print (js->fmt, o, stdout);
    else if (table_row (js, o) < 0) {
        cli_error ("out of memory");
        json_decref (o);
        return -2;
    }
    json_decref (o);
    return 0;
}

/* Show job id if it passes the --state filter. Returns 0, -1 after
 * printing why the job is not there, or -2 when out of memory (printed). */
static int jobs_one (struct jobs *js, uint64_t id)
{
    struct cairn_error err = {{0}};
    struct journal_jobinfo info = {0};
    json_t *events = jcli_events (&js->jc, id, 0, NULL);
    struct job *job = NULL;
    json_t *o;
    int rc = -1;

    if (!events)
        return -1;
    (void)journal_job_info (js->jc.j, id, &info);
    job = jcli_fold (id, events, &err);
    const char *state = job ? job_state_name (job_state (job)) : "invalid";
    if (js->want && strcmp (js->want, state) != 0) {
        rc = 0;
        goto done;
    }
    if (!job)
        cli_error ("job %ju in %s: %s (run cairn verify)", (uintmax_t)id,
                   js->jc.statedir, err.text);
    if (!(o = jcli_job_summary (id, events, job, info.active, js->now))) {
        cli_error ("out of memory");
        rc = -2;
        goto done;
    }
    rc = jobs_print (js, o); /* steals o */
done:
    job_destroy (job);
    json_decref (events);
    return rc;
}

/* The jobs through cairnd (cmd_jremote.c): its answer, filtered by
 * --state as the journal's jobs are. Returns 0, 1 when a job named is
 * unknown (printed), -1 after printing another failure. */
static int jobs_remote (struct jobs *js, bool all, uint64_t *want, int nwant)
{
    json_t *missing = NULL, *o;
    int64_t truncated = 0;
    json_t *jobs = jcli_remote_jobs (&js->jc, all, want, nwant, js->now,
                                     &missing, &truncated);
    size_t i;
    int rc = -1;

    if (!jobs)
        return -1;
    json_array_foreach (jobs, i, o)
    {
        const char *state = json_string_value (json_object_get (o, "state"));
        if (js->want && (!state || strcmp (js->want, state) != 0))
            continue;
        if (jobs_print (js, json_incref (o)) < 0)
            goto done;
    }
    rc = 0;
    json_array_foreach (missing, i, o)
    {
        jcli_no_job (&js->jc, (uint64_t)json_integer_value (o));
        rc = 1;
    }
    if (truncated > 0)
        cli_error ("%jd older finished jobs left out: cairnd lists only the "
                   "newest ones",
                   (intmax_t)truncated);
done:
    json_decref (missing);
    json_decref (jobs);
    return rc;
}

static int cmd_jobs (struct cli *cli, int argc, char **argv)
{
    enum { OPT_JSON = 0x100, OPT_STATE };
    static const struct option longopts[] = {
        {"all", no_argument, NULL, 'a'},
        {"state", required_argument, NULL, OPT_STATE},
        {"json", no_argument, NULL, OPT_JSON},
        {"format", required_argument, NULL, 'o'},
        {"no-header", no_argument, NULL, 'n'},
        {"decimal", no_argument, NULL, 'd'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct jobs js = {.now = jcli_now ()};
    struct cairn_error err = {{0}};
    const char *format = NULL;
    bool all = false, header = true;
    uint64_t *want = NULL;
    json_t *ids = NULL;
    int opt, nwant, rc = 1, failed = 0;

    while ((opt = getopt_long (argc, argv, "ano:d" CLI_COMMON_SHORTOPTS,
                               longopts, NULL)) != -1) {
        switch (opt) {
        case 'a':
            all = true;
            break;
        case OPT_STATE:
            js.want = optarg;
            break;
        case OPT_JSON:
            js.json = true;
            break;
        case 'o':
            format = optarg;
            break;
        case 'n':
            header = false;
            break;
        case 'd':
            js.decimal = true;
            break;
        default:
            cli_common_option (cli, opt, optarg);
        }
    }
    if (js.json && format)
        cli_usage_error (cli, "--json and --format exclude each other");
    if (js.want) {
        size_t n = sizeof (job_states) / sizeof (job_states[0]), i;
        for (i = 0; i < n && strcmp (job_states[i], js.want) != 0; i++)
            ;
        if (i == n)
            cli_usage_error (cli,
                             "--state: expected new, prolog, starting, held, "
                             "run, cleanup, done or invalid, got '%s'",
                             js.want);
        if (!strcmp (js.want, "done") || !strcmp (js.want, "invalid"))
            all = true; /* finished jobs are not in the active index */
    }
    if (format && !(js.fmt = jfmt_create (format, jcli_summary_keys, &err))) {
        if (errno == ENOMEM) {
            cli_error ("out of memory");
            return 1;
        }
        cli_usage_error (cli, "--format: %s", err.text);
    }
    if ((nwant = jcli_parse_ids (cli, argc - optind, argv + optind, &want)) < 0)
        goto done;
    if (jcli_open_view (&js.jc, cli) < 0)
        goto done;
    if (js.jc.c)
        ; /* through cairnd: jobs_remote() below */
    else if (nwant > 0) {
        if (!(ids = json_array ()))
            goto nomem;
        for (int i = 0; i < nwant; i++)
            if (json_array_append_new (
                    ids, json_pack ("{s:I}", "id", (json_int_t)want[i])) < 0)
                goto nomem;
    } else if (!(ids = jcli_job_list (&js.jc, !all)))
        goto done;
    if (!js.json && !js.fmt) {
        size_t width = term_width ();
        if (!(js.t = table_create (8, headers)))
            goto nomem;
        if (width > 0)
            table_set_width (js.t, width);
        else
            js.cmd_max = JOBS_COMMAND_MAX;
    }
    if (js.fmt && header)
        jfmt_print_header (js.fmt, stdout);
    if (js.jc.c) {
        int r = jobs_remote (&js, all, want, nwant);
        if (r < 0)
            goto done;
        failed = r;
    }
    /* an unknown id is reported, and the others are shown all the same */
    for (size_t i = 0; i < json_array_size (ids); i++) {
        int r = jobs_one (&js, jcli_list_id (ids, i));
        if (r == -2)
            goto done;
        if (r < 0)
            failed = 1;
    }
    if (js.t) {
        table_set_header (js.t, header);
        table_print (js.t, stdout);
    }
    rc = failed;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    table_destroy (js.t);
    jfmt_destroy (js.fmt);
    json_decref (ids);
    free (want);
    jcli_close (&js.jc);
    return rc;
}

const struct cli_command cli_cmd_jobs = {
    "jobs",
    cmd_jobs,
    "[-a] [--state STATE] [-d] [-n] [--json | -o FORMAT] [JOBID...]",
    "List the journal's jobs: active ones, all with -a, or those named.",
    "  -a, --all           include finished jobs\n"
    "      --state STATE   only jobs in STATE: new, prolog, run, cleanup,\n"
    "                      done (implies -a) or invalid (fold fails)\n"
    "  -d, --decimal       show ids in decimal, not F58\n"
    "  -n, --no-header     print no header line\n"
    "      --json          one JSON object per job, one a line\n"
    "  -o, --format FORMAT each job as FORMAT says: {field}, {field:WIDTH},\n"
    "                      {field:>WIDTH}, {field:WIDTH.MAX}; the fields are\n"
    "                      the --json keys (see cairn(1)):\n"
    "                      id f58 username userid state result returncode\n"
    "                      waitstatus active nranks ranks released drained\n"
    "                      nodelist runtime command cwd expiration t_accept\n"
    "                      t_start t_finish t_clean nevents last_event "
    "t_last\n",
};
