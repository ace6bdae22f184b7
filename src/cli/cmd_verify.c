/* cmd_verify.c - `cairn verify`, `cairn dump` (= `cairn export`), `cairn
 * stats` and `cairn purge`: the journal as a whole.
 *
 * verify runs the pure checks of core/verify.h on every job (the crash
 * harness runs the same ones), then the checks only the journal's indexes
 * allow: a job record marked active must be in the active index and the
 * reverse, or a restart would overlook the job or replay a finished one.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd_journal.h"
#include "cli/commands.h"
#include "client/client.h"
#include "util/statedir.h"
#include "core/fsd.h"
#include "core/verify.h"

/* ---- job lists ---- */

/* The jobs named (checked to exist) or all of them. */
static json_t *jobs_wanted (struct jcli *jc, int argc, char **argv)
{
    uint64_t *ids = NULL;
    int n = jcli_parse_ids (jc->cli, argc, argv, &ids);
    json_t *a;

    if (n < 0)
        return NULL;
    if (n == 0)
        return jcli_job_list (jc, false);
    if (!(a = json_array ()))
        goto nomem;
    for (int i = 0; i < n; i++) {
        struct journal_jobinfo info;
        if (journal_job_info (jc->j, ids[i], &info) < 0) {
            if (errno == ENOENT)
                jcli_no_job (jc, ids[i]);
            else
                cli_error ("%s: job %ju: %s", jc->statedir, (uintmax_t)ids[i],
                           strerror (errno));
            json_decref (a);
            free (ids);
            return NULL;
        }
        if (jcli_list_add (&info, a) < 0)
            goto nomem;
    }
    free (ids);
    return a;
nomem:
    cli_error ("out of memory");
    json_decref (a);
    free (ids);
    return NULL;
}

/* ---- verify ---- */

static void print_problem (uint64_t id, json_t *p, bool json)
{
    json_int_t seq = json_integer_value (json_object_get (p, "seq"));
    const char *text = json_string_value (json_object_get (p, "problem"));

    if (json) {
        (void)jcli_print_json (json_pack ("{s:I s:I s:s}", "id", (json_int_t)id,
                                          "seq", seq, "problem", text));
    } else if (seq >= 0)
        printf ("job %ju seq %jd: %s\n", (uintmax_t)id, (intmax_t)seq, text);
    else
        printf ("job %ju: %s\n", (uintmax_t)id, text);
}

/* Compare the jobs' active flags with the active index. */
static int verify_index (struct jcli *jc, json_t *all, json_t *problems_by_id)
{
    json_t *act = jcli_job_list (jc, true);
    size_t i = 0, k = 0;

    if (!act)
        return -1;
    /* both lists are in id order: merge them */
    while (i < json_array_size (all) || k < json_array_size (act)) {
        uint64_t a =
            i < json_array_size (all) ? jcli_list_id (all, i) : UINT64_MAX;
        uint64_t b =
            k < json_array_size (act) ? jcli_list_id (act, k) : UINT64_MAX;
        bool flagged =
            a <= b &&
            json_is_true (json_object_get (json_array_get (all, i), "active"));
        const char *text = NULL;
        if (a == b) {
            if (!flagged)
                text = "in the active index, but its record says done";
            i++, k++;
        } else if (a < b) {
            if (flagged)
                text = "its record says active, but it is not in the active "
                       "index: a restart would not replay it";
            i++;
        } else {
            text = "in the active index, but it has no job record";
            k++;
        }
        if (text) {
            char key[24];
            snprintf (key, sizeof (key), "%ju", (uintmax_t)(a <= b ? a : b));
            json_t *l = json_object_get (problems_by_id, key);
            if (!l) {
                l = json_array ();
                json_object_set_new (problems_by_id, key, l);
            }
            json_array_append_new (
                l, json_pack ("{s:i s:s}", "seq", -1, "problem", text));
        }
    }
    json_decref (act);
    return 0;
}

static int cmd_verify (struct cli *cli, int argc, char **argv)
{
    enum { OPT_JSON = 0x100 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct jcli jc = {0};
    json_t *jobs = NULL, *byid = NULL;
    bool json = false;
    size_t nevents = 0, nproblems = 0, i;
    int opt, rc = 1;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == OPT_JSON)
            json = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    if (jcli_open (&jc, cli, false) < 0 ||
        !(jobs = jobs_wanted (&jc, argc - optind, argv + optind)))
        goto done;
    if (!(byid = json_object ()))
        goto nomem;
    if (optind == argc && verify_index (&jc, jobs, byid) < 0)
        goto done;
    for (i = 0; i < json_array_size (jobs); i++) {
        json_t *info = json_array_get (jobs, i);
        uint64_t id = jcli_list_id (jobs, i);
        json_t *events = jcli_events (&jc, id, 0, NULL);
        json_t *problems = json_array ();
        char key[24];
        size_t k;
        json_t *p;

        if (!events || !problems) {
            json_decref (events);
            json_decref (problems);
            goto done;
        }
        nevents += json_array_size (events);
        if (verify_job (id, events, problems) < 0 ||
            verify_record ((uint32_t)json_integer_value (
                               json_object_get (info, "nevents")),
                           json_is_true (json_object_get (info, "active")),
                           events, problems) < 0) {
            json_decref (events);
            json_decref (problems);
            goto nomem;
        }
        snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
        json_array_extend (problems, json_object_get (byid, key));
        json_array_foreach (problems, k, p) print_problem (id, p, json);
        nproblems += json_array_size (problems);
        json_object_del (byid, key);
        json_decref (events);
        json_decref (problems);
    }
    /* index entries of jobs that have no record */
    const char *key;
    json_t *l;
    json_object_foreach (byid, key, l)
    {
        size_t k;
        json_t *p;
        json_array_foreach (l, k, p)
            print_problem (strtoull (key, NULL, 10), p, json);
        nproblems += json_array_size (l);
    }
    if (json) {
        /* the last line, problems or not: a script reads the verdict and
         * the counts from it instead of inferring them from silence */
        if (jcli_print_json (json_pack (
                "{s:b s:I s:I s:I}", "ok", nproblems == 0, "jobs",
                (json_int_t)json_array_size (jobs), "events",
                (json_int_t)nevents, "problems", (json_int_t)nproblems)) < 0)
            goto done;
    } else {
        char what[32] = "no problems";
        if (nproblems)
            snprintf (what, sizeof (what), "%zu problem%s", nproblems,
                      nproblems == 1 ? "" : "s");
        printf ("verified %zu job%s, %zu event%s: %s\n", json_array_size (jobs),
                json_array_size (jobs) == 1 ? "" : "s", nevents,
                nevents == 1 ? "" : "s", what);
    }
    rc = nproblems ? 1 : 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    json_decref (jobs);
    json_decref (byid);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_verify = {
    "verify",
    cmd_verify,
    "[--json] [JOBID...]",
    "Check the journal's invariants for every job (or those named).",
    "      --json          one JSON object per problem, one a line, then\n"
    "                      {\"ok\":B,\"jobs\":N,\"events\":N,\"problems\":N}\n"
    "Prints each problem as 'job ID seq N: problem'; exits 1 if any.\n",
};

/* ---- dump / export ---- */

static int
dump_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    json_error_t jerr;
    json_t *o = json_loadb (line, len, 0, &jerr);

    if (o && json_is_object (o)) {
        /* the line as stored, byte for byte */
        printf ("{\"id\":%ju,\"seq\":%u,\"event\":%.*s}\n", (uintmax_t)id,
                (unsigned)seq, (int)len, line);
    } else {
        json_t *s = json_stringn (line, len);
        char *q = s ? json_dumps (s, JSON_ENCODE_ANY) : NULL;
        cli_error ("job %ju seq %u: not a JSON object; dumped as a string",
                   (uintmax_t)id, (unsigned)seq);
        printf ("{\"id\":%ju,\"seq\":%u,\"event\":%s}\n", (uintmax_t)id,
                (unsigned)seq, q ? q : "null");
        free (q);
        json_decref (s);
        *(bool *)arg = true;
    }
    json_decref (o);
    return 0;
}

static int cmd_dump (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct jcli jc = {0};
    json_t *jobs = NULL;
    bool bad = false;
    int opt, rc = 1;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1)
        cli_common_option (cli, opt, optarg);
    if (jcli_open (&jc, cli, false) < 0 ||
        !(jobs = jobs_wanted (&jc, argc - optind, argv + optind)))
        goto done;
    for (size_t i = 0; i < json_array_size (jobs); i++) {
        struct cairn_error err = {{0}};
        uint64_t id = jcli_list_id (jobs, i);
        if (journal_read_job (jc.j, id, 0, dump_cb, &bad, &err) < 0) {
            cli_error ("%s: job %ju: %s", jc.statedir, (uintmax_t)id, err.text);
            goto done;
        }
    }
    rc = bad ? 1 : 0;
done:
    json_decref (jobs);
    jcli_close (&jc);
    return rc;
}

#define DUMP_OPTIONS                                                           \
    "Prints every event as {\"id\":ID,\"seq\":N,\"event\":{...}}, one a "      \
    "line,\nin job id and seq order.\n"

const struct cli_command cli_cmd_dump = {
    "dump",
    cmd_dump,
    "[JOBID...]",
    "Print the journal's events as JSON lines (for backups and tools).",
    DUMP_OPTIONS,
};

const struct cli_command cli_cmd_export = {
    "export", cmd_dump, "[JOBID...]", "The same as dump.", DUMP_OPTIONS,
};

/* ---- stats ---- */

static void size_str (double n, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (n >= 1024 && u < 4) {
        n /= 1024;
        u++;
    }
    snprintf (buf, len, u ? "%.1f %s" : "%.0f %s", n, units[u]);
}

/* How the running cairnd confines a process's leftovers ("cgroup" or
 * "process-group"), or NULL when none answers at the state dir. */
static char *confinement (const char *statedir)
{
    char *path = statedir_socket (statedir), *out = NULL;
    struct stat sb;
    uid_t owner = stat (statedir, &sb) == 0 ? sb.st_uid : (uid_t)-1;
    struct client *c = path ? client_connect_as (path, owner, NULL) : NULL;
    json_t *none = json_object ();
    json_t *r = c ? client_rpc (c, "stats", none, 5, NULL) : NULL;
    const char *s = json_string_value (json_object_get (r, "confinement"));
    if (s)
        out = strdup (s);
    json_decref (r);
    json_decref (none);
    client_close (c);
    free (path);
    return out;
}

static int cmd_stats (struct cli *cli, int argc, char **argv)
{
    struct jcli jc = {0};
    struct journal_stats st;
    struct stat sb;
    char path[4096], fsz[32], msz[32], musz[32], dsz[32];
    bool json = jcli_json_option (cli, argc, argv);
    int rc = 1;

    if (optind < argc)
        cli_usage_error (cli, "unexpected argument '%s'", argv[optind]);
    if (jcli_open (&jc, cli, false) < 0)
        goto done;
    if (journal_stats (jc.j, &st) < 0) {
        cli_error ("%s: journal stats: %s", jc.statedir, strerror (errno));
        goto done;
    }
    snprintf (path, sizeof (path), "%s/journal/data.mdb", jc.statedir);
    if (stat (path, &sb) < 0)
        sb.st_size = 0;
    char *conf = confinement (jc.statedir);
    if (json) {
        rc =
            jcli_print_json (json_pack (
                "{s:s s:s s:I s:I s:I s:I s:I s:I s:I s:I s:I s:s?}",
                "journal",
                path, "instance", journal_instance (jc.j), "file_size",
                (json_int_t)sb.st_size, "map_size", (json_int_t)st.map_size,
                "map_used", (json_int_t)st.map_used, "data_used",
                (json_int_t)st.data_used, "page_size", (json_int_t)st.page_size,
                "jobs", (json_int_t)st.njobs, "active", (json_int_t)st.nactive,
                "finished", (json_int_t)(st.njobs - st.nactive), "events",
                (json_int_t)st.nevents, "confinement", conf)) < 0
                ? 1
                : 0;
        free (conf);
        goto done;
    }
    size_str ((double)sb.st_size, fsz, sizeof (fsz));
    size_str ((double)st.map_size, msz, sizeof (msz));
    size_str ((double)st.map_used, musz, sizeof (musz));
    size_str ((double)st.data_used, dsz, sizeof (dsz));
    /* map use is a high water mark; data is what a purge frees */
    printf ("journal   %s\n"
            "instance  %s\n"
            "file      %s (%jd bytes)\n"
            "map       %s used of %s (%.1f%%)\n"
            "data      %s in live pages\n"
            "jobs      %zu (%zu active, %zu finished)\n"
            "events    %zu\n",
            path, journal_instance (jc.j), fsz, (intmax_t)sb.st_size, musz, msz,
            st.map_size ? 100. * st.map_used / st.map_size : 0., dsz, st.njobs,
            st.nactive, st.njobs - st.nactive, st.nevents);
    /* what the cairnd running there uses (cairnd(8), cgroup-parent) */
    printf ("confine   %s\n",
            conf ? conf : "(cairnd is not running: cannot tell)");
    free (conf);
    rc = 0;
done:
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_stats = {
    "stats",
    cmd_stats,
    "[--json]",
    "Show the journal's size, map use and job and event counts.",
    "      --json          one JSON object\n",
};

/* ---- purge ---- */

/* Jobs per write transaction: bounded, so that a huge purge never hits
 * LMDB's dirty page limit (E2BIG). */
#define PURGE_BATCH 256

static int cmd_purge (struct cli *cli, int argc, char **argv)
{
    enum { OPT_OLDER = 0x100, OPT_JSON };
    static const struct option longopts[] = {
        {"older-than", required_argument, NULL, OPT_OLDER},
        {"json", no_argument, NULL, OPT_JSON},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct cairn_error err = {{0}};
    struct jcli jc = {0};
    json_t *jobs = NULL;
    const char *older = NULL;
    double age = 0;
    bool json = false;
    size_t npurged = 0, nevents = 0, batch = 0;
    int opt, rc = 1;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == OPT_OLDER)
            older = optarg;
        else if (opt == OPT_JSON)
            json = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    if (!older)
        cli_usage_error (cli, "--older-than DURATION is required");
    if (fsd_parse (older, &age, &err) < 0)
        cli_usage_error (cli, "--older-than: %s", err.text);
    if (optind < argc)
        cli_usage_error (cli, "unexpected argument '%s'", argv[optind]);
    if (jcli_open (&jc, cli, true) < 0 || !(jobs = jcli_job_list (&jc, false)))
        goto done;
    double cutoff = jcli_now () - age;
    for (size_t i = 0; i < json_array_size (jobs) && !isinf (age); i++) {
        json_t *o = json_array_get (jobs, i);
        double t_end = json_real_value (json_object_get (o, "t-end"));
        if (json_is_true (json_object_get (o, "active")) || t_end <= 0 ||
            t_end > cutoff)
            continue;
        if (journal_purge (jc.j, jcli_list_id (jobs, i)) < 0) {
            if (errno == EBUSY || errno == ENOENT)
                continue; /* active again, or purged meanwhile */
            cli_error ("%s: purging job %ju: %s", jc.statedir,
                       (uintmax_t)jcli_list_id (jobs, i), strerror (errno));
            goto done;
        }
        npurged++;
        nevents += (size_t)json_integer_value (json_object_get (o, "nevents"));
        if (++batch == PURGE_BATCH) {
            if (journal_commit (jc.j, &err) < 0)
                goto commit_failed;
            batch = 0;
        }
    }
    if (journal_commit (jc.j, &err) < 0)
        goto commit_failed;
    if (json)
        rc = jcli_print_json (json_pack ("{s:I s:I}", "purged",
                                         (json_int_t)npurged, "events",
                                         (json_int_t)nevents)) < 0
                 ? 1
                 : 0;
    else {
        printf ("purged %zu job%s (%zu event%s) finished more than %s ago\n",
                npurged, npurged == 1 ? "" : "s", nevents,
                nevents == 1 ? "" : "s", older);
        rc = 0;
    }
    goto done;
commit_failed:
    cli_error ("%s: %s", jc.statedir, err.text);
done:
    json_decref (jobs);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_purge = {
    "purge",
    cmd_purge,
    "--older-than DURATION [--json]",
    "Remove finished jobs from the journal.",
    "      --older-than DURATION\n"
    "                      remove the jobs clean for longer than DURATION\n"
    "                      (30, 2.5s, 5m, 1h, 7d; 0 = every finished job)\n"
    "      --json          print {\"purged\":N,\"events\":M}\n",
};
