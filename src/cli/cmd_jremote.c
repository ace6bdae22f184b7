/* cmd_jremote.c - the views of the journal (jobs, show, eventlog, ranks)
 * through cairnd, for a user who cannot read its state directory: a root
 * cairnd's is 0700, and its users reach it through its public socket
 * (SECURITY.md). cairnd answers from the same journal ("jobs" and
 * "job-events", cairn-protocol(7)), so the commands print the same as
 * they would from the journal; only cairnd judges what a user may see.
 *
 * Here too the readers of a job that work either way (jcli_open_view,
 * jcli_read, jcli_events, jcli_load, jcli_one_job): the commands call
 * them, and they call down into cmd_jutil.c, never the other way round.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_journal.h"
#include "core/eventlog.h"

int jcli_open_view (struct jcli *jc, struct cli *cli)
{
    struct cairn_error err = {{0}};
    bool was = cli_set_quiet (true);
    int rc = jcli_open (jc, cli, false);
    int e = errno;
    char *sock;

    cli_set_quiet (was);
    if (rc == 0)
        return 0;
    if ((e != EACCES && e != ENOENT) || !(sock = cli_public_socket (cli, e))) {
        if (jcli_open (jc, cli, false) == 0) /* say why; or it is there now */
            return 0;
        if (e == EACCES)
            cli_error ("a root cairnd's users see its jobs through its public "
                       "socket: set CAIRN_SOCKET to it");
        return -1;
    }
    jc->cli = cli;
    jc->sockpath = sock;
    if (!(jc->c = cli_client_connect (cli, sock, &err))) {
        int ce = errno;
        was = cli_set_quiet (true);
        char *dir = cli_statedir (cli);
        cli_set_quiet (was);
        if (ce == EPERM && err.text[0]) /* served by someone else */
            cli_error ("cannot read the journal of %s (%s) nor connect to "
                       "cairnd: %s",
                       dir ? dir : "?", strerror (e), err.text);
        else
            cli_error ("cannot read the journal of %s (%s) nor connect to "
                       "cairnd at %s: %s",
                       dir ? dir : "?", strerror (e), sock, strerror (ce));
        free (dir);
        jcli_close (jc);
        return -1;
    }
    return 0;
}

/* One job-events answer: the events from `from` on, handed to cb. Sets
 * *next to the seq after them and *nevents to the job's count. */
static int events_page (struct jcli *jc,
                        uint64_t id,
                        uint32_t from,
                        journal_event_f cb,
                        void *arg,
                        uint32_t *next,
                        json_int_t *nevents,
                        struct cairn_error *err)
{
    json_t *p =
        json_pack ("{s:I s:I}", "id", (json_int_t)id, "from", (json_int_t)from);
    json_t *r = NULL, *events, *v;
    int active = 0, rc = -1;
    size_t i;

    if (!p) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    if (!(r = client_rpc (jc->c, "job-events", p, CLI_RPC_TIMEOUT, err)))
        goto done;
    if (json_unpack (r, "{s:o s:I s:b}", "events", &events, "nevents", nevents,
                     "active", &active) < 0 ||
        !json_is_array (events)) {
        errset (err, EPROTO, "malformed answer from cairnd (job-events)");
        goto done;
    }
    jc->last_id = id;
    jc->last_active = active;
    json_array_foreach (events, i, v)
    {
        const char *line = json_string_value (v);
        size_t len = line ? json_string_length (v) : 0;
        int n = cb (id, from + (uint32_t)i, line ? line : "", len, arg);
        if (n < 0) {
            errset (err, errno, "%s", strerror (errno));
            goto done;
        }
        if (n > 0) { /* the callback stopped: so does the read */
            *next = (uint32_t)*nevents;
            rc = 0;
            goto done;
        }
    }
    *next = from + (uint32_t)json_array_size (events);
    /* an empty page before the end would never end */
    if (json_array_size (events) == 0 && *next < *nevents) {
        errset (err, EPROTO, "malformed answer from cairnd (job-events)");
        goto done;
    }
    rc = 0;
done:
    json_decref (p);
    json_decref (r);
    return rc;
}

int jcli_read (struct jcli *jc,
               uint64_t id,
               uint32_t from,
               journal_event_f cb,
               void *arg,
               struct cairn_error *err)
{
    json_int_t nevents;

    if (!jc->c)
        return journal_read_job (jc->j, id, from, cb, arg, err);
    do {
        if (events_page (jc, id, from, cb, arg, &from, &nevents, err) < 0)
            return -1;
    } while (from < nevents);
    return 0;
}

void jcli_read_error (struct jcli *jc, uint64_t id, struct cairn_error *err)
{
    if (errno == ENOENT)
        jcli_no_job (jc, id);
    else if (jc->c)
        cli_error ("%s", err->text[0] ? err->text : strerror (errno));
    else
        cli_error ("%s: job %ju: %s", jc->statedir, (uintmax_t)id,
                   err->text[0] ? err->text : strerror (errno));
}

int jcli_job_info (struct jcli *jc, uint64_t id, struct journal_jobinfo *info)
{
    if (!jc->c)
        return journal_job_info (jc->j, id, info);
    if (jc->last_id != id) {
        errno = ENOENT;
        return -1;
    }
    memset (info, 0, sizeof (*info));
    info->id = id;
    info->active = jc->last_active;
    return 0;
}

/* ---- a job read either way: the journal, or cairnd (jcli_read) ---- */

struct readarg {
    json_t *events;
    bool bad;
};

static int
read_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct readarg *ra = arg;
    json_t *entry = eventlog_entry_decode (line, len, NULL);
    json_t *o;

    if (!entry) {
        if (errno == ENOMEM)
            return -1;
        ra->bad = true;
        entry = json_stringn_nocheck (line, len);
    }
    if (!(o = json_pack ("{s:I s:o}", "seq", (json_int_t)seq, "event",
                         entry)) ||
        json_array_append_new (ra->events, o) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

json_t *jcli_events (struct jcli *jc, uint64_t id, uint32_t from, bool *bad)
{
    struct cairn_error err = {{0}};
    struct readarg ra = {.events = json_array ()};

    if (!ra.events) {
        cli_error ("out of memory");
        return NULL;
    }
    if (jcli_read (jc, id, from, read_cb, &ra, &err) < 0) {
        jcli_read_error (jc, id, &err);
        json_decref (ra.events);
        return NULL;
    }
    if (bad)
        *bad = ra.bad;
    return ra.events;
}

struct job *jcli_one_job (struct jcli *jc,
                          struct cli *cli,
                          int argc,
                          char **argv,
                          bool *json,
                          uint64_t *id,
                          json_t **events)
{
    *events = NULL;
    *json = jcli_json_option (cli, argc, argv);
    if (argc - optind != 1)
        cli_usage_error (cli, "expected one JOBID");
    if (cli_parse_jobid (cli, argv[optind], id) < 0 ||
        jcli_open_view (jc, cli) < 0)
        return NULL;
    return jcli_load (jc, *id, events);
}

struct job *jcli_load (struct jcli *jc, uint64_t id, json_t **eventsp)
{
    struct cairn_error err = {{0}};
    json_t *events = jcli_events (jc, id, 0, NULL);
    struct job *job;

    if (!events)
        return NULL;
    if (!(job = jcli_fold (id, events, &err)))
        cli_error ("job %ju in %s: %s (run cairn verify)", (uintmax_t)id,
                   jc->c ? jc->sockpath : jc->statedir, err.text);
    if (eventsp && job)
        *eventsp = events;
    else
        json_decref (events);
    return job;
}

/* ---- jobs ---- */

static double real (const json_t *o, const char *key)
{
    return json_number_value (json_object_get (o, key));
}

/* From the start to the finish (or the clean, or now), as cmd_jobs_view.c
 * counts it. */
static double runtime (const json_t *e, double now)
{
    double start = real (e, "t_start");
    double end = real (e, "t_finish") > 0  ? real (e, "t_finish")
                 : real (e, "t_clean") > 0 ? real (e, "t_clean")
                                           : now;
    return start > 0 && end > start ? end - start : 0;
}

/* The value of key in the summary of cairnd's entry e (NULL: ENOMEM). */
static json_t *summary_value (const json_t *e, const char *key, double now)
{
    json_t *v = json_object_get (e, key);
    json_t *uid = json_object_get (e, "userid");
    json_t *ws = json_object_get (e, "waitstatus");
    char buf[256];

    if (!strcmp (key, "f58")) {
        jcli_f58 ((uint64_t)json_integer_value (json_object_get (e, "id")), buf,
                  sizeof (buf));
        return json_string (buf);
    }
    if (!strcmp (key, "username")) {
        if (!json_is_integer (uid))
            return json_null ();
        jcli_username ((uint32_t)json_integer_value (uid), buf, sizeof (buf));
        return json_string (buf);
    }
    if (!strcmp (key, "returncode"))
        return json_is_integer (ws) ? json_integer (jcli_exit_code (
                                          (int)json_integer_value (ws)))
                                    : json_null ();
    if (!strcmp (key, "runtime"))
        return json_real (runtime (e, now));
    if (!strcmp (key, "command")) {
        /* another user's job: its name only, as flux jobs shows it */
        if (!json_is_array (v))
            return json_string (
                json_string_value (json_object_get (e, "name"))
                    ? json_string_value (json_object_get (e, "name"))
                    : "");
        char *s = jcli_command (v);
        json_t *o = s ? json_string (s) : NULL;
        free (s);
        return o;
    }
    if (!strcmp (key, "cwd"))
        return json_string (json_string_value (v) ? json_string_value (v) : "");
    if (!strncmp (key, "t_", 2) || !strcmp (key, "expiration"))
        return json_real (json_number_value (v)); /* times are reals */
    if (!v)
        return json_null ();
    return json_incref (v);
}

/* cairnd's entry as jcli_job_summary() gives it from the journal. */
static json_t *summary_of (const json_t *e, double now)
{
    json_t *o = json_object ();

    for (int i = 0; o && jcli_summary_keys[i]; i++) {
        const char *key = jcli_summary_keys[i];
        if (json_object_set_new (o, key, summary_value (e, key, now)) < 0) {
            json_decref (o);
            o = NULL;
        }
    }
    return o;
}

json_t *jcli_remote_jobs (struct jcli *jc,
                          bool all,
                          const uint64_t *ids,
                          int nids,
                          double now,
                          json_t **missing,
                          int64_t *truncated)
{
    struct cairn_error err = {{0}};
    json_t *p = json_object (), *a = NULL, *r = NULL, *out = NULL, *e;
    json_t *jobs;
    size_t i;

    *missing = NULL;
    *truncated = 0;
    if (!p || (all && json_object_set_new (p, "all", json_true ()) < 0))
        goto nomem;
    if (nids > 0) {
        if (!(a = json_array ()) || json_object_set (p, "ids", a) < 0)
            goto nomem;
        for (int k = 0; k < nids; k++)
            if (json_array_append_new (a, json_integer ((json_int_t)ids[k])) <
                0)
                goto nomem;
    }
    if (!(r = client_rpc (jc->c, "jobs", p, CLI_RPC_TIMEOUT, &err))) {
        cli_error ("%s", err.text);
        goto done;
    }
    jobs = json_object_get (r, "jobs");
    if (!json_is_array (jobs)) {
        cli_error ("malformed answer from cairnd at %s: no \"jobs\" array",
                   jc->sockpath);
        goto done;
    }
    if (!(out = json_array ()))
        goto nomem;
    json_array_foreach (jobs, i, e)
    {
        if (json_array_append_new (out, summary_of (e, now)) < 0)
            goto nomem;
    }
    *missing = json_incref (json_object_get (r, "missing"));
    *truncated = json_integer_value (json_object_get (r, "truncated"));
    goto done;
nomem:
    cli_error ("out of memory");
    json_decref (out);
    out = NULL;
done:
    json_decref (a);
    json_decref (p);
    json_decref (r);
    return out;
}
