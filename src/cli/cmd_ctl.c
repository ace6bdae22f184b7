/* cmd_ctl.c - `cairn cancel`, `cairn kill`, `cairn post` and `cairn list`:
 * one request, one response each.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cli/cli.h"
#include "cli/cmd_journal.h" /* jcli_duration */
#include "cli/commands.h"
#include "core/jobid.h"
#include "core/signame.h"

/* Send topic with payload p (consumed) and check the answer. */
static int ctl_request (struct cli *cli, const char *topic, json_t *p)
{
    struct client *c = NULL;
    json_t *resp = NULL;
    int rc = 1;

    if (!p) {
        cli_error ("out of memory");
        return 1;
    }
    if (!(c = cli_connect (cli, NULL)))
        goto done;
    if (!(resp = cli_rpc (cli, c, topic, p)))
        goto done;
    rc = 0;
done:
    json_decref (resp);
    json_decref (p);
    client_close (c);
    return rc;
}

/* The single JOBID operand at argv[optind]. */
static int one_jobid (struct cli *cli, int argc, char **argv, uint64_t *id)
{
    if (optind >= argc)
        cli_usage_error (cli, "no job id given");
    if (optind + 1 < argc)
        cli_usage_error (cli, "unexpected '%s'", argv[optind + 1]);
    return cli_parse_jobid (cli, argv[optind], id);
}

static int cmd_cancel (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"note", required_argument, NULL, 'n'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    const char *note = "";
    uint64_t id;
    int opt;

    while ((opt = getopt_long (argc, argv, "n:" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == 'n')
            note = optarg;
        else
            cli_common_option (cli, opt, optarg);
    }
    if (one_jobid (cli, argc, argv, &id) < 0)
        return 1;
    return ctl_request (cli, "exception",
                        json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)id,
                                   "type", "cancel", "severity", 0, "note",
                                   note));
}

static int cmd_kill (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"signal", required_argument, NULL, 's'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct cairn_error err = {{0}};
    int signum = SIGTERM;
    uint64_t id;
    int opt;

    while ((opt = getopt_long (argc, argv, "s:" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == 's') {
            if (signame_parse (optarg, &signum, &err) < 0)
                cli_usage_error (cli, "-s: %s", err.text);
        } else
            cli_common_option (cli, opt, optarg);
    }
    if (one_jobid (cli, argc, argv, &id) < 0)
        return 1;
    return ctl_request (
        cli, "kill",
        json_pack ("{s:I s:i}", "id", (json_int_t)id, "signum", signum));
}

/* post JOBID NAME [KEY=VALUE...]: values are strings, as in
 * `flux post-job-event` */
static int cmd_post (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        {0},
    };
    json_t *context;
    uint64_t id;
    int opt;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1)
        cli_common_option (cli, opt, optarg);
    if (argc - optind < 2)
        cli_usage_error (cli, "need a job id and an event name");
    if (cli_parse_jobid (cli, argv[optind], &id) < 0)
        return 1;
    if (!(context = json_object ())) {
        cli_error ("out of memory");
        return 1;
    }
    for (int i = optind + 2; i < argc; i++) {
        char *eq = strchr (argv[i], '=');
        if (!eq || eq == argv[i]) {
            json_decref (context);
            cli_usage_error (cli, "'%s' is not KEY=VALUE", argv[i]);
        }
        *eq = '\0';
        if (json_object_set_new (context, argv[i], json_string (eq + 1)) < 0) {
            json_decref (context);
            cli_error ("%s: not valid UTF-8", argv[i]);
            return 1;
        }
    }
    return ctl_request (cli, "post",
                        json_pack ("{s:I s:s s:o}", "id", (json_int_t)id,
                                   "name", argv[optind + 1], "context",
                                   context));
}

/* list */

enum { COL_ID, COL_F58, COL_STATE, COL_RANKS, COL_RELEASED, COL_AGE, NCOLS };
static const char *const col_names[NCOLS] = {
    "ID", "F58", "STATE", "RANKS", "RELEASED", "AGE",
};

static const char *field_str (json_t *job, const char *key)
{
    const char *s = json_string_value (json_object_get (job, key));
    return s && *s ? s : "-";
}

/* Fill one table row; cells are malloc'd. */
static int list_row (json_t *job, double now, char *cells[NCOLS])
{
    json_t *id = json_object_get (job, "id");
    json_t *t = json_object_get (job, "t_accept");
    char buf[JOBID_STRLEN], age[32];

    if (json_is_integer (id)) {
        uint64_t v = (uint64_t)json_integer_value (id);
        snprintf (age, sizeof (age), "%ju", (uintmax_t)v);
        cells[COL_ID] = strdup (age);
        jobid_encode_f58 (v, buf, sizeof (buf));
        cells[COL_F58] = strdup (buf);
    } else {
        cells[COL_ID] = strdup ("-");
        cells[COL_F58] = strdup ("-");
    }
    cells[COL_STATE] = strdup (field_str (job, "state"));
    cells[COL_RANKS] = strdup (field_str (job, "ranks"));
    cells[COL_RELEASED] = strdup (field_str (job, "released"));
    if (json_is_number (t))
        jcli_duration (now - json_number_value (t), age, sizeof (age));
    else
        snprintf (age, sizeof (age), "-");
    cells[COL_AGE] = strdup (age);
    for (int i = 0; i < NCOLS; i++) {
        if (!cells[i])
            return -1;
    }
    return 0;
}

/* Columns are as wide as their widest cell; "ƒ" is two bytes but one
 * column, so widths count UTF-8 characters, not bytes. */
static int text_width (const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void print_row (char *const cells[NCOLS], const int width[NCOLS])
{
    for (int i = 0; i < NCOLS; i++) {
        int pad = i < NCOLS - 1 ? width[i] - text_width (cells[i]) + 2 : 0;
        printf ("%s%*s", cells[i], pad, "");
    }
    printf ("\n");
}

static int list_print (json_t *jobs)
{
    size_t n = json_array_size (jobs);
    char *(*rows)[NCOLS] = calloc (n + 1, sizeof (*rows));
    int width[NCOLS];
    struct timeval tv;
    int rc = -1;

    if (!rows)
        return -1;
    gettimeofday (&tv, NULL);
    double now = tv.tv_sec + tv.tv_usec * 1e-6;
    for (int i = 0; i < NCOLS; i++)
        width[i] = text_width (col_names[i]);
    for (size_t j = 0; j < n; j++) {
        if (list_row (json_array_get (jobs, j), now, rows[j]) < 0)
            goto done;
        for (int i = 0; i < NCOLS; i++) {
            int w = text_width (rows[j][i]);
            if (w > width[i])
                width[i] = w;
        }
    }
    print_row ((char *const *)col_names, width);
    for (size_t j = 0; j < n; j++)
        print_row (rows[j], width);
    rc = 0;
done:
    for (size_t j = 0; j < n; j++) {
        for (int i = 0; i < NCOLS; i++)
            free (rows[j][i]);
    }
    free (rows);
    return rc;
}

static int cmd_list (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct client *c = NULL;
    json_t *resp = NULL;
    bool json = false;
    int rc = 1, opt;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == 'j')
            json = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    if (optind < argc)
        cli_usage_error (cli, "unexpected '%s'", argv[optind]);
    if (!(c = cli_connect (cli, NULL)))
        goto done;
    if (!(resp = cli_rpc (cli, c, "list", NULL)))
        goto done;
    json_t *jobs = json_object_get (resp, "jobs");
    if (!json_is_array (jobs)) {
        cli_error ("malformed response from cairnd: no \"jobs\" array");
        goto done;
    }
    if (json) {
        char *s = json_dumps (resp, JSON_COMPACT);
        if (!s)
            goto nomem;
        printf ("%s\n", s);
        free (s);
    } else if (list_print (jobs) < 0)
        goto nomem;
    rc = 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    json_decref (resp);
    client_close (c);
    return rc;
}

const struct cli_command cli_cmd_cancel = {
    "cancel",
    cmd_cancel,
    "[--note TEXT] JOBID",
    "Cancel a job (a fatal cancel exception).",
    "  -n, --note TEXT     say why, in the exception's note\n",
};

const struct cli_command cli_cmd_kill = {
    "kill",
    cmd_kill,
    "[-s SIG] JOBID",
    "Send a signal to a job's processes.",
    "  -s, --signal SIG    signal name or number (default SIGTERM)\n",
};

const struct cli_command cli_cmd_post = {
    "post",
    cmd_post,
    "JOBID NAME [KEY=VALUE...]",
    "Add an outside service's event (e.g. data-out) to a job.",
    "\nThe event is journaled like cairn's own, and followers of the\n"
    "eventlog see it at once. NAME: 1 to 64 letters, digits, . _ -, not\n"
    "one of cairn's own events; each VALUE a string. Posting the same\n"
    "event again records it once.\n",
};

const struct cli_command cli_cmd_list = {
    "list",
    cmd_list,
    "[--json]",
    "List cairnd's jobs.",
    "      --json          print cairnd's answer as JSON\n",
};
