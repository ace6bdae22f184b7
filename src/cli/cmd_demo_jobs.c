/* cmd_demo_jobs.c - the four jobs of `cairn demo` (see demo.h): what
 * they run, following their responses and the scripts' trace, and checking
 * that each ended as it should.
 *
 * Processes' output is captured by cairnd, not sent to clients, so the
 * demo's scripts and jobs append their lines to <tmp>/trace ("<jobid>
 * <text>", one O_APPEND write each) and the demo follows that file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/demo.h"
#include "core/idset.h"
#include "core/jobid.h"
#include "core/jobspec.h"
#include "core/rv1.h"

#define NJOBS DEMO_NJOBS
#define CANCEL_TAG 100
#define JOBS_WAIT 60.     /* seconds for the jobs to end */
#define CANCEL_AFTER 1.   /* seconds after job 4 starts */
#define INTERRUPT_WAIT 5. /* seconds for canceled jobs after Ctrl-C */

enum { J_HELLO, J_EXIT3, J_TOLERATE, J_CANCEL };

static const struct {
    const char *label;
    const char *what;
    uint32_t nranks;
    int pfa;
    const char *script; /* for sh -c; $T is the trace file */
} specs[NJOBS] = {
    {"hello", "4 ranks say hello; rank 2's slow epilog is released last", 4, 0,
     "echo \"hello from rank $CAIRN_RANK\"; "
     "echo \"$CAIRN_JOB_ID hello from rank $CAIRN_RANK\" >>\"$T\""},
    {"exit3", "4 ranks; rank 1 exits 3", 4, 0,
     "if [ \"$CAIRN_RANK\" = 1 ]; then echo \"$CAIRN_JOB_ID rank 1 exits 3\" "
     ">>\"$T\"; exit 3; fi"},
    {"tolerate", "3 ranks, 1 prolog failure allowed; rank 1's prolog exits 42",
     3, 1, "echo \"$CAIRN_JOB_ID hello from rank $CAIRN_RANK\" >>\"$T\""},
    {"cancel", "2 ranks sleep 30s; canceled 1s after start", 2, 0,
     "echo \"$CAIRN_JOB_ID rank $CAIRN_RANK sleeps 30s\" >>\"$T\"; "
     "exec sleep 30"},
};

void demo_say (struct demo *d, const char *label, const char *fmt, ...)
{
    /* on a terminal, one color per job makes the interleaving readable */
    static const char *const colors[] = {"32", "31", "33", "35"};
    const char *color = "36", *on = "", *off = "";
    va_list ap;

    for (int i = 0; i < NJOBS; i++) {
        if (strcmp (label, specs[i].label) == 0)
            color = colors[i];
    }
    printf ("%7.3fs  ", cli_monotime () - d->t0);
    if (d->color) {
        printf ("\033[%sm%-9s\033[0m ", color, label);
        if (strncmp (fmt, "<-", 2) == 0 || strncmp (fmt, "->", 2) == 0) {
            on = "\033[1m";
            off = "\033[0m";
        }
    } else
        printf ("%-9s ", label);
    printf ("%s", on);
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("%s\n", off);
}

int demo_submit (struct demo *d, int i)
{
    char *argv[] = {"sh", "-c", (char *)specs[i].script, NULL};
    char host[256] = "localhost";
    json_t *env = NULL, *js = NULL, *R = NULL, *p = NULL;
    const char *path = getenv ("PATH");
    uint64_t id;
    int rc = -1;

    gethostname (host, sizeof (host) - 1);
    /* consecutive ids: four fresh ones could meet in one millisecond */
    if (i > 0 && d->jw[0].releases)
        id = d->jw[0].id + i;
    else if (cli_jobid_generate (&id) < 0)
        return -1;
    if (jobwatch_init (&d->jw[i], id, i + 1) < 0)
        return -1;
    if (i == J_TOLERATE) {
        char name[64];
        snprintf (name, sizeof (name), "fail-rank-%ju-1", (uintmax_t)id);
        if (demo_write_file (d->tmp, name, "") < 0)
            return -1;
    }
    if (!(env = json_pack ("{s:s s:s}", "PATH", path ? path : "/usr/bin:/bin",
                           "T", d->trace_path)) ||
        !(js = jobspec_create (argv, specs[i].nranks, d->tmp, env, 0,
                               specs[i].pfa)) ||
        !(R = rv1_create (specs[i].nranks, 1, host, 0)) ||
        /* output: the jobs' own lines, live (cairn-protocol(7)) */
        !(p = json_pack ("{s:I s:I s:O s:O s:b}", "id", (json_int_t)id,
                         "userid", (json_int_t)getuid (), "jobspec", js, "R", R,
                         "output", 1)))
        goto done;
    if (client_send (d->c, "start", i + 1, p) < 0)
        goto done;
    char f58[JOBID_STRLEN];
    jobid_encode_f58 (id, f58, sizeof (f58));
    demo_say (d, specs[i].label, "-> start job %s: %s", f58, specs[i].what);
    rc = 0;
done:
    if (rc < 0)
        cli_error ("cannot submit job %s: %s", specs[i].label,
                   strerror (errno));
    json_decref (env);
    json_decref (js);
    json_decref (R);
    json_decref (p);
    return rc;
}

static const char *label_of (struct demo *d, uint64_t id)
{
    for (int i = 0; i < NJOBS; i++) {
        if (d->jw[i].releases && d->jw[i].id == id)
            return specs[i].label;
    }
    return "?";
}

/* Print the trace lines the scripts added since the last call. */
static void trace_drain (struct demo *d)
{
    ssize_t n;

    while ((n = read (d->trace_fd, d->tbuf + d->tlen,
                      sizeof (d->tbuf) - 1 - d->tlen)) > 0) {
        d->tlen += n;
        char *line = d->tbuf, *nl;
        while ((nl = memchr (line, '\n', d->tlen - (line - d->tbuf)))) {
            *nl = '\0';
            char *end;
            uint64_t id = strtoull (line, &end, 10);
            demo_say (d, label_of (d, id), "   %s",
                      *end == ' ' ? end + 1 : line);
            line = nl + 1;
        }
        d->tlen -= line - d->tbuf;
        memmove (d->tbuf, line, d->tlen);
        if (d->tlen == sizeof (d->tbuf) - 1)
            d->tlen = 0; /* a line that long is not ours */
    }
}

static int send_cancel (struct demo *d, int i, const char *note)
{
    json_t *p = json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)d->jw[i].id,
                           "type", "cancel", "severity", 0, "note", note);
    int rc = p ? client_send (d->c, "exception", CANCEL_TAG + i, p) : -1;

    json_decref (p);
    if (rc == 0)
        demo_say (d, specs[i].label, "-> cancel (%s)", note);
    return rc;
}

static bool all_final (struct demo *d)
{
    for (int i = 0; i < NJOBS; i++) {
        if (d->jw[i].releases && !d->jw[i].final)
            return false; /* submitted, not over */
    }
    return true;
}

/* A job's own output, a line at a time: "   rank 0 | hello". */
static void say_output (struct demo *d, const char *label, const json_t *data)
{
    const char *s = json_string_value (json_object_get (data, "data"));
    json_int_t rank = json_integer_value (json_object_get (data, "rank"));
    const char *nl;

    for (; s && *s; s = nl ? nl + 1 : s + strlen (s)) {
        nl = strchr (s, '\n');
        int len = nl ? (int)(nl - s) : (int)strlen (s);
        demo_say (d, label, "   rank %d | %.*s", (int)rank, len, s);
    }
}

static int handle (struct demo *d, json_t *resp)
{
    int64_t tag = json_integer_value (json_object_get (resp, "matchtag"));
    json_t *errnum = json_object_get (resp, "errnum");
    const char *errstr = json_string_value (json_object_get (resp, "errstr"));
    struct cairn_error err = {{0}};
    char line[1024];
    int i = tag >= CANCEL_TAG ? tag - CANCEL_TAG : tag - 1;

    if (i < 0 || i >= NJOBS) {
        if (errnum)
            cli_error ("cairnd: %s", errstr ? errstr : "error");
        return errnum ? -1 : 0;
    }
    if (errnum) {
        cli_error ("%s: %s: %s", specs[i].label,
                   tag >= CANCEL_TAG ? "cancel" : "start",
                   errstr ? errstr : "error");
        return -1;
    }
    if (tag >= CANCEL_TAG)
        return 0; /* the cancel was taken */
    struct jobwatch_resp jr;
    if (jobwatch_decode (json_object_get (resp, "payload"), &jr, &err) < 0 ||
        jobwatch_update (&d->jw[i], &jr, &err) < 0) {
        cli_error ("%s: %s", specs[i].label, err.text);
        return -1;
    }
    if (jr.sr.type == STREAM_OUTPUT) {
        say_output (d, specs[i].label, jr.data);
        return 0;
    }
    jobwatch_describe (&jr, line, sizeof (line));
    demo_say (d, specs[i].label, "<- %s", line);
    if (i == J_CANCEL && d->jw[i].started && d->t_cancel_at == 0)
        d->t_cancel_at = cli_monotime () + CANCEL_AFTER;
    return 0;
}

/* Follow the jobs until every one has had its final release. */
int demo_follow (struct demo *d)
{
    double deadline = cli_monotime () + JOBS_WAIT;
    struct cairn_error err = {{0}};

    while (!all_final (d)) {
        trace_drain (d);
        if (demo_interrupted) {
            cli_error ("interrupted");
            return -1;
        }
        if (cli_monotime () >= deadline) {
            cli_error ("the jobs did not end within %gs", JOBS_WAIT);
            return -1;
        }
        if (d->t_cancel_at > 0 && !d->cancel_sent &&
            cli_monotime () >= d->t_cancel_at) {
            if (send_cancel (d, J_CANCEL, "canceled by the demo") < 0)
                goto lost;
            d->cancel_sent = true;
        }
        json_t *resp = client_recv (d->c, 0.05, &err);
        if (!resp) {
            if (errno == ETIMEDOUT || errno == EINTR)
                continue;
            if (errno == ECONNRESET)
                goto lost;
            cli_error ("%s", err.text);
            return -1;
        }
        int rc = handle (d, resp);
        json_decref (resp);
        if (rc < 0)
            return -1;
    }
    trace_drain (d);
    return 0;
lost:
    cli_error ("lost the connection to cairnd");
    return -1;
}

/* After a failure or Ctrl-C: cancel what still runs and give it a moment,
 * so no process outlives the demo's directory. */
void demo_cancel_rest (struct demo *d)
{
    struct cairn_error err = {{0}};
    double deadline = cli_monotime () + INTERRUPT_WAIT;

    if (!d->c)
        return;
    for (int i = 0; i < NJOBS; i++) {
        if (d->jw[i].releases && !d->jw[i].final &&
            send_cancel (d, i, "the demo is stopping") < 0)
            return;
    }
    demo_interrupted = 0; /* a second Ctrl-C stops the wait */
    while (!all_final (d) && cli_monotime () < deadline && !demo_interrupted) {
        json_t *resp = client_recv (d->c, 0.1, &err);
        if (!resp && errno != ETIMEDOUT && errno != EINTR)
            return;
        int rc = resp ? handle (d, resp) : 0;
        json_decref (resp);
        if (rc < 0)
            return;
    }
}

/* checks */

/* The releases of jw as idsets; NULL if one does not decode. */
static struct idset *release_nth (const struct jobwatch *jw, size_t n)
{
    const char *s = json_string_value (json_array_get (jw->releases, n));
    return s ? idset_decode (s, NULL) : NULL;
}

/* Every rank released exactly once, the final release last. */
static const char *check_releases (const struct jobwatch *jw, uint32_t nranks)
{
    struct idset *all = idset_create ();
    size_t total = 0;
    const char *why = NULL;

    for (size_t n = 0; n < json_array_size (jw->releases) && !why; n++) {
        struct idset *s = release_nth (jw, n);
        if (!s || !all)
            why = "a release is not an idset";
        else {
            total += idset_count (s);
            idset_add (all, s);
        }
        idset_destroy (s);
    }
    if (!why && (total != nranks || idset_count (all) != nranks ||
                 idset_last (all) != nranks - 1))
        why = "ranks released twice or not at all";
    idset_destroy (all);
    return why;
}

static bool
has_exception (const struct jobwatch *jw, const char *type, bool fatal)
{
    for (size_t n = 0; n < json_array_size (jw->exceptions); n++) {
        json_t *e = json_array_get (jw->exceptions, n);
        const char *t = json_string_value (json_object_get (e, "type"));
        int sev = json_integer_value (json_object_get (e, "severity"));
        if (t && strcmp (t, type) == 0 && (sev == 0) == fatal)
            return true;
    }
    return false;
}

/* How many ranks the last release holds if rank is one of them, else 0. */
static size_t in_last_release (const struct jobwatch *jw, uint32_t rank)
{
    size_t n = json_array_size (jw->releases);
    struct idset *s = n > 0 ? release_nth (jw, n - 1) : NULL;
    size_t count = s && idset_test (s, rank) ? idset_count (s) : 0;

    idset_destroy (s);
    return count;
}

/* NULL if job i ended as the demo means it to, else why not. */
static const char *check_job (const struct jobwatch *jw, int i)
{
    const char *why;

    if (!jw->releases)
        return "not submitted";
    if (!jw->final)
        return "no final release";
    if ((why = check_releases (jw, specs[i].nranks)))
        return why;
    switch (i) {
    case J_HELLO:
        if (!jw->finished || jw->status != 0 || jw->fatal)
            return "expected success";
        if (in_last_release (jw, 2) != 1)
            return "expected rank 2 alone in the last release";
        return NULL;
    case J_EXIT3:
        if (!jw->finished || jw->status != 3 << 8)
            return "expected finish status 768";
        return NULL;
    case J_TOLERATE:
        if (!jw->finished || jw->status != 0 || jw->fatal)
            return "expected success on ranks 0,2";
        if (!has_exception (jw, "prolog", false))
            return "expected a non-fatal prolog exception";
        if (in_last_release (jw, 1) != 0)
            return "expected rank 1 released before the end";
        return NULL;
    case J_CANCEL:
        if (!has_exception (jw, "cancel", true))
            return "expected a fatal cancel exception";
        if (jobwatch_exit_code (jw) == 0)
            return "expected a failure status";
        return NULL;
    }
    return NULL;
}

int demo_summary (struct demo *d)
{
    int failed = 0;

    printf ("\nSummary:\n  %-9s %-11s %-24s %-22s %s\n", "JOB", "RESULT",
            "FINISH", "RELEASE ORDER", "CHECK");
    for (int i = 0; i < NJOBS; i++) {
        const struct jobwatch *jw = &d->jw[i];
        char result[48], fin[64] = "-", order[256] = "", ws[48];
        const char *why = check_job (jw, i);

        if (!jw->releases || !jw->final)
            snprintf (result, sizeof (result), "unfinished");
        else if (jw->fatal)
            snprintf (result, sizeof (result), "%s",
                      strcmp (jw->fatal_type, "cancel") == 0 ? "canceled"
                                                             : jw->fatal_type);
        else
            snprintf (result, sizeof (result), "%s",
                      jw->status == 0 ? "completed" : "failed");
        if (jw->finished) {
            cli_wait_status_str (jw->status, ws, sizeof (ws));
            snprintf (fin, sizeof (fin), "%d (%s)", jw->status, ws);
        }
        for (size_t n = 0; jw->releases && n < json_array_size (jw->releases);
             n++) {
            size_t len = strlen (order);
            snprintf (order + len, sizeof (order) - len, "%s%s", n ? " > " : "",
                      json_string_value (json_array_get (jw->releases, n)));
        }
        printf ("  %-9s %-11s %-24s %-22s %s\n", specs[i].label, result, fin,
                *order ? order : "-", why ? why : "ok");
        if (why)
            failed++;
    }
    if (failed)
        printf ("%d of %d jobs did not end as expected\n", failed, NJOBS);
    else
        printf ("All %d jobs ended as expected.\n", NJOBS);
    return failed ? -1 : 0;
}
