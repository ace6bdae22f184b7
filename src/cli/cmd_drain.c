/* cmd_drain.c - `cairn drain` (the drained ranks, read from the journal's
 * drains table) and `cairn undrain RANKS` (a request to cairnd, which
 * journals it), as `flux resource drain` and `undrain`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_journal.h"
#include "cli/commands.h"
#include "core/jobid.h"

struct drains {
    struct table *t; /* NULL with --json */
};

static int drain_cb (uint32_t rank, const char *rec, size_t len, void *arg)
{
    struct drains *dr = arg;
    json_t *o = json_loadb (rec, len, 0, NULL);
    const char *host = "", *reason = "";
    double t = 0;
    json_int_t job = 0;
    char rk[16], when[64], jid[JOBID_STRLEN];

    if (!o)
        return 0; /* not ours to judge here: cairn verify */
    (void)json_unpack (o, "{s?s s?s s?F s?I}", "host", &host, "reason", &reason,
                       "time", &t, "job", &job);
    if (!dr->t) {
        json_object_set_new (o, "rank", json_integer (rank));
        return jcli_print_json (o) < 0 ? -1 : 0;
    }
    snprintf (rk, sizeof (rk), "%u", (unsigned)rank);
    jcli_time (t, when, sizeof (when));
    jobid_encode_f58 ((uint64_t)job, jid, sizeof (jid));
    int rc = table_add (dr->t, rk, host, when, jid, reason);
    json_decref (o);
    return rc;
}

static int cmd_drain (struct cli *cli, int argc, char **argv)
{
    static const char *const headers[] = {"RANK", "HOST", "SINCE", "JOB",
                                          "REASON"};
    struct jcli jc = {0};
    struct drains dr = {0};
    struct cairn_error err = {{0}};
    bool json = jcli_json_option (cli, argc, argv);
    int rc = 1;

    if (optind < argc)
        cli_usage_error (cli, "unexpected '%s'", argv[optind]);
    if (jcli_open (&jc, cli, false) < 0)
        return 1;
    if (!json && !(dr.t = table_create (5, headers))) {
        cli_error ("out of memory");
        goto done;
    }
    if (journal_foreach_drain (jc.j, drain_cb, &dr, &err) < 0) {
        cli_error ("%s: %s", jc.statedir, err.text);
        goto done;
    }
    if (dr.t)
        table_print (dr.t, stdout);
    rc = 0;
done:
    table_destroy (dr.t);
    jcli_close (&jc);
    return rc;
}

static int cmd_undrain (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct client *c = NULL;
    json_t *resp = NULL;
    int opt, rc = 1;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1)
        cli_common_option (cli, opt, optarg);
    if (argc - optind != 1)
        cli_usage_error (cli, "expected RANKS (an idset: 3, 0-2,5)");
    json_t *p = json_pack ("{s:s}", "ranks", argv[optind]);
    if (!p) {
        cli_error ("out of memory");
        return 1;
    }
    if ((c = cli_connect (cli, NULL)) &&
        (resp = cli_rpc (cli, c, "undrain", p)))
        rc = 0;
    json_decref (resp);
    json_decref (p);
    client_close (c);
    return rc;
}

const struct cli_command cli_cmd_drain = {
    "drain",
    cmd_drain,
    "[--json]",
    "List the drained ranks: host, since when, which job, why.",
    "      --json          one JSON object a line\n"
    "\nA rank is drained when something went wrong there (cairn-journal(5),\n"
    "drain): until `cairn undrain`, whatever the resource manager does.\n",
};

const struct cli_command cli_cmd_undrain = {
    "undrain", cmd_undrain,
    "RANKS",   "Return drained ranks to service (journaled by cairnd).",
    "",
};
