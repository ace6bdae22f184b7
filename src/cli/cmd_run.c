/* cmd_run.c - `cairn run`: submit a job and follow its responses to the
 * final release, surviving a restart of cairnd on the way.
 *
 * Also the response bookkeeping (struct jobwatch) that `cairn demo` shares.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run_output.h"
#include "cli/cmd_run_reasons.h"
#include "core/fsd.h"
#include "core/job.h"
#include "core/jobid.h"
#include "core/jobspec.h"
#include "core/rv1.h"

extern char **environ;

#define RECONNECT_TIMEOUT_DEFAULT 60.
#define RECONNECT_INTERVAL 0.2

/* jobwatch */

int jobwatch_init (struct jobwatch *jw, uint64_t id, int64_t matchtag)
{
    memset (jw, 0, sizeof (*jw));
    jw->id = id;
    jw->matchtag = matchtag;
    if (!(jw->releases = json_array ()) || !(jw->exceptions = json_array ())) {
        jobwatch_clear (jw);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void jobwatch_clear (struct jobwatch *jw)
{
    if (jw) {
        int saved = errno;
        json_decref (jw->releases);
        json_decref (jw->exceptions);
        jw->releases = jw->exceptions = NULL;
        errno = saved;
    }
}

int jobwatch_decode (const json_t *payload,
                     struct jobwatch_resp *r,
                     struct cairn_error *err)
{
    json_error_t jerr;

    memset (r, 0, sizeof (*r));
    if (json_unpack_ex ((json_t *)payload, &jerr, 0, "{s:s s?o}", "type",
                        &r->name, "data", &r->data) < 0 ||
        (r->data && !json_is_object (r->data)))
        return errset (err, EPROTO, "malformed start response: %s",
                       r->data ? "data is not an object" : jerr.text);
    r->sr = stream_resp_of (r->name);
    return 0;
}

/* One of the job's events, for jobwatch_update. Returns 1 when a reattach's
 * `since` counts it whatever the stream asked for, 0 when only with
 * events, -1 on a malformed response. */
static int watch_event (struct jobwatch *jw,
                        enum job_event ev,
                        json_t *data,
                        struct cairn_error *err)
{
    json_error_t jerr;

    switch (ev) {
    case JOB_EV_START:
        jw->started = true;
        return 0; /* counted by `since` in the events view only */
    case JOB_EV_RELEASE: {
        const char *ranks;
        int final = 0;
        if (json_unpack_ex (data, &jerr, 0, "{s:s s?b}", "ranks", &ranks,
                            "final", &final) < 0)
            return errset (err, EPROTO, "malformed release response: %s",
                           jerr.text);
        if (json_array_append_new (jw->releases, json_string (ranks)) < 0)
            return errset (err, ENOMEM, "out of memory");
        if (final)
            jw->final = true;
        return 1;
    }
    case JOB_EV_EXCEPTION: {
        const char *etype;
        int severity;
        if (json_unpack_ex (data, &jerr, 0, "{s:i s:s}", "severity", &severity,
                            "type", &etype) < 0)
            return errset (err, EPROTO, "malformed exception response: %s",
                           jerr.text);
        if (json_array_append (jw->exceptions, data) < 0)
            return errset (err, ENOMEM, "out of memory");
        if (severity == 0 && !jw->fatal) {
            jw->fatal = true;
            snprintf (jw->fatal_type, sizeof (jw->fatal_type), "%s", etype);
        }
        return 1;
    }
    case JOB_EV_FINISH: {
        int status;
        if (json_unpack_ex (data, &jerr, 0, "{s:i}", "status", &status) < 0)
            return errset (err, EPROTO, "malformed finish response: %s",
                           jerr.text);
        jw->finished = true;
        jw->status = status;
        return 1;
    }
    default:
        return 0; /* a progress event: counted in the events view */
    }
}

int jobwatch_update (struct jobwatch *jw,
                     const struct jobwatch_resp *r,
                     struct cairn_error *err)
{
    int counted = 0;

    switch (stream_resp_kind (r->sr)) {
    case STREAM_KIND_OPENING:
        /* accepted or reattached: either way cairnd has the job in its
         * journal; neither is counted by `since` (cairn-protocol(7),
         * Reattach) */
        jw->accepted = true;
        return 0;
    case STREAM_KIND_NOTICE:
        return 0; /* live, never resent: not counted by `since` */
    case STREAM_KIND_EVENT:
        if ((counted = watch_event (jw, r->sr.event, r->data, err)) < 0)
            return -1;
        break;
    case STREAM_KIND_POSTED:
        break; /* an outside service's event: counted in the events view */
    }
    if (counted || jw->events)
        jw->nresp++;
    return 0;
}

void jobwatch_describe (const struct jobwatch_resp *r, char *buf, size_t len)
{
    json_t *data = r->data;
    const char *s;
    char ws[64];

    switch (r->sr.type == STREAM_EVENT ? r->sr.event : JOB_EV_OTHER) {
    case JOB_EV_RELEASE:
        s = json_string_value (json_object_get (data, "ranks"));
        snprintf (buf, len, "release ranks %s%s", s ? s : "?",
                  json_is_true (json_object_get (data, "final")) ? " final"
                                                                 : "");
        return;
    case JOB_EV_EXCEPTION: {
        const char *etype = json_string_value (json_object_get (data, "type"));
        const char *note = json_string_value (json_object_get (data, "note"));
        json_t *sev = json_object_get (data, "severity");
        snprintf (buf, len, "exception %s (severity %lld)%s%s",
                  etype ? etype : "?",
                  json_is_integer (sev) ? json_integer_value (sev) : -1LL,
                  note && *note ? ": " : "", note && *note ? note : "");
        return;
    }
    case JOB_EV_FINISH: {
        json_t *st = json_object_get (data, "status");
        if (json_is_integer (st)) {
            cli_wait_status_str (json_integer_value (st), ws, sizeof (ws));
            snprintf (buf, len, "finish status %lld (%s)",
                      json_integer_value (st), ws);
        } else
            snprintf (buf, len, "finish status ?");
        return;
    }
    default:
        break;
    }
    const char *name = r->name ? r->name : "?";
    if (!data || json_object_size (data) == 0 ||
        r->sr.type == STREAM_REATTACHED) { /* its owner: ours */
        snprintf (buf, len, "%s", name);
    } else {
        char *d = json_dumps (data, JSON_COMPACT);
        snprintf (buf, len, "%s %s", name, d ? d : "");
        free (d);
    }
}

int jobwatch_exit_code (const struct jobwatch *jw)
{
    if (jw->finished && jw->status != 0) {
        if (WIFSIGNALED (jw->status))
            return 128 + WTERMSIG (jw->status);
        if (WIFEXITED (jw->status))
            return WEXITSTATUS (jw->status);
        return 1;
    }
    if (!jw->finished || jw->fatal)
        return 1;
    return 0;
}

/* cairn run */

struct run {
    struct cli *cli;
    uint64_t id;
    json_t *jobspec;
    json_t *R;
    bool json;
    bool detach;
    double t0;
    char *path; /* the socket */
    struct client *c;
    bool reattaching;  /* the last start sent was a reattach */
    bool announced;    /* "job N (F58) submitted" was printed */
    bool attach;       /* cairn attach: never submits */
    struct runout *ro; /* the job's output; NULL with --detach */
    struct jobwatch jw;
};

static int send_start (struct run *r, bool reattach)
{
    json_t *p;
    int rc;

    /* events: the `accepted` acknowledgment tells when the job is
     * journaled, which is when it is submitted (cairn-protocol(7)) */
    if (!(p = reattach
                  ? json_pack ("{s:I s:b}", "id", (json_int_t)r->id, "events",
                               1)
                  : json_pack ("{s:I s:I s:O s:O s:b}", "id", (json_int_t)r->id,
                               "userid", (json_int_t)getuid (), "jobspec",
                               r->jobspec, "R", r->R, "events", 1)) ||
        (reattach &&
         (json_object_set_new (p, "reattach", json_true ()) < 0 ||
          json_object_set_new (p, "since", json_integer (r->jw.nresp)) < 0)) ||
        /* the job's output as it comes, from where we are */
        (r->ro &&
         (json_object_set_new (p, "output", json_true ()) < 0 ||
          (reattach && json_object_set_new (
                           p, "output-offsets",
                           json_deep_copy (runout_offsets (r->ro))) < 0)))) {
        json_decref (p);
        errno = ENOMEM;
        return -1;
    }
    rc = client_send (r->c, "start", r->jw.matchtag, p);
    json_decref (p);
    r->reattaching = reattach;
    return rc;
}

static double reconnect_timeout (void)
{
    const char *s = getenv ("CAIRN_RECONNECT_TIMEOUT");
    struct cairn_error err = {{0}};
    double t;

    if (!s || !*s)
        return RECONNECT_TIMEOUT_DEFAULT;
    if (fsd_parse (s, &t, &err) < 0) {
        cli_error ("CAIRN_RECONNECT_TIMEOUT: %s; using %gs", err.text,
                   RECONNECT_TIMEOUT_DEFAULT);
        return RECONNECT_TIMEOUT_DEFAULT;
    }
    return t;
}

/* `cairn run` itself gave up (cairnd unreachable, or gone for longer than
 * CAIRN_RECONNECT_TIMEOUT): not the job's code. EX_UNAVAILABLE of
 * sysexits.h; documented in cairn(1). */
#define RUN_EXIT_LOST 69

/* After giving up: what became of the job, as far as we know. */
static void lost_track (struct run *r)
{
    if (r->jw.accepted)
        cli_error ("job %ju goes on without this client: follow it with "
                   "`cairn attach %ju` once cairnd is back",
                   (uintmax_t)r->id, (uintmax_t)r->id);
    else
        cli_error ("job %ju may or may not have reached cairnd: see "
                   "`cairn jobs -a` once cairnd is back",
                   (uintmax_t)r->id);
}

/* cairnd closed the connection before the final release: wait for it to
 * come back and ask for the rest of the job's responses. */
static int reconnect (struct run *r)
{
    double timeout = reconnect_timeout ();
    double deadline = cli_monotime () + timeout;
    struct cairn_error err = {{0}};

    client_close (r->c);
    r->c = NULL;
    cli_error ("cairnd went away; reconnecting");
    for (;;) {
        if ((r->c = cli_client_connect (r->cli, r->path, &err))) {
            if (send_start (r, true) == 0)
                return 0;
            snprintf (err.text, sizeof (err.text), "sending start: %s",
                      strerror (errno));
            client_close (r->c);
            r->c = NULL;
        }
        if (cli_monotime () >= deadline) {
            cli_error ("gave up reconnecting after %gs: %s", timeout, err.text);
            lost_track (r);
            return -1;
        }
        nanosleep (&(struct timespec){0, RECONNECT_INTERVAL * 1e9}, NULL);
    }
}

static void print_response (struct run *r, const json_t *resp)
{
    char line[1024];

    if (r->json) {
        char *s = json_dumps (resp, JSON_COMPACT);
        if (s)
            printf ("%s\n", s);
        free (s);
        return;
    }
    struct jobwatch_resp jr;
    if (jobwatch_decode (json_object_get (resp, "payload"), &jr, NULL) < 0)
        snprintf (line, sizeof (line), "?");
    else
        jobwatch_describe (&jr, line, sizeof (line));
    /* stdout is the job's */
    fprintf (stderr, "%.3fs %s\n", cli_monotime () - r->t0, line);
}

/* A progress event of cairn's own (cairn-protocol(7)): asked for to learn
 * of `accepted`, and shown only with --json (`cairn eventlog` tells the
 * rest). An outside service's posted event (data-out) is shown: it is
 * there for the user who follows the job. */
static bool is_progress (struct stream_resp sr)
{
    return sr.type == STREAM_EVENT && !stream_resp_is_rfc32 (sr);
}

/* Say "job N (F58) submitted" once cairnd has the job: after its `accepted`,
 * or a `reattached` when that was lost with the connection. */
static void announce (struct run *r)
{
    char f58[JOBID_STRLEN];

    if (r->announced || r->json || r->attach)
        return;
    r->announced = true;
    jobid_encode_f58 (r->id, f58, sizeof (f58));
    fprintf (stderr, "job %ju (%s) submitted\n", (uintmax_t)r->id, f58);
}

/* Follow the job's stream. Returns the exit code. */
static int run_follow (struct run *r)
{
    struct cairn_error err = {{0}};

    for (;;) {
        json_t *resp = client_recv (r->c, -1., &err);
        if (!resp) {
            if (errno == ECONNRESET) {
                if (reconnect (r) < 0)
                    return RUN_EXIT_LOST;
                continue;
            }
            int e = errno;
            cli_error ("%s", err.text);
            if (e == EPROTO) /* that line is dropped; go on */
                continue;
            lost_track (r);
            return RUN_EXIT_LOST;
        }
        int64_t tag = json_integer_value (json_object_get (resp, "matchtag"));
        json_t *errnum = json_object_get (resp, "errnum");
        if (tag != r->jw.matchtag && !(tag == 0 && errnum)) {
            json_decref (resp);
            continue;
        }
        if (errnum) {
            int e = json_integer_value (errnum);
            const char *s =
                json_string_value (json_object_get (resp, "errstr"));
            if (r->reattaching && !r->jw.accepted && e == ENOENT) {
                /* cairnd went away before it took the job: submit again */
                json_decref (resp);
                if (send_start (r, false) < 0 && reconnect (r) < 0)
                    return RUN_EXIT_LOST;
                continue;
            }
            if (r->reattaching && e == EAGAIN) {
                /* "cairnd is stopping": this one is on its way out */
                json_decref (resp);
                if (reconnect (r) < 0)
                    return RUN_EXIT_LOST;
                continue;
            }
            if (r->json)
                print_response (r, resp);
            cli_error ("%s", s ? s : strerror (e));
            json_decref (resp);
            return 1;
        }
        struct jobwatch_resp jr;
        if (jobwatch_decode (json_object_get (resp, "payload"), &jr, &err) <
                0 ||
            jobwatch_update (&r->jw, &jr, &err) < 0) {
            cli_error ("%s", err.text);
            json_decref (resp);
            continue;
        }
        if (stream_resp_kind (jr.sr) == STREAM_KIND_NOTICE) {
            if (r->json)
                print_response (r, resp);
            else if (jr.sr.type == STREAM_OUTPUT && r->ro &&
                     runout_write (r->ro, jr.data) < 0)
                cli_error ("job output: %s", strerror (errno));
            json_decref (resp);
            continue;
        }
        if (r->jw.accepted)
            announce (r);
        if (r->json ||
            (jr.sr.type != STREAM_ACCEPTED && !is_progress (jr.sr)))
            print_response (r, resp);
        json_decref (resp);
        if (r->detach && r->jw.accepted)
            return 0;
        if (r->jw.final) {
            int code = jobwatch_exit_code (&r->jw);
            runout_destroy (r->ro); /* its last lines before the reasons */
            r->ro = NULL;
            if (code != 0 && !r->json)
                run_print_reasons (r->cli, r->id);
            return code;
        }
    }
}

/* Connect, send the start (a reattach for attach) and follow the job.
 * Returns the exit code: RUN_EXIT_LOST when cairnd cannot be reached. */
static int run_start (struct run *r, bool reattach)
{
    if (!(r->c = cli_connect (r->cli, &r->path)))
        return RUN_EXIT_LOST; /* nothing was submitted */
    r->t0 = cli_monotime ();
    if (send_start (r, reattach) < 0) {
        if (errno != EPIPE && errno != ECONNRESET) {
            cli_error ("cannot send the request to cairnd: %s",
                       strerror (errno));
            return RUN_EXIT_LOST;
        }
        if (reconnect (r) < 0)
            return RUN_EXIT_LOST;
    }
    return run_follow (r);
}

static int env_add (json_t *env, const char *s)
{
    const char *eq = strchr (s, '=');

    if (!eq || eq == s)
        return -1;
    char *name = strndup (s, eq - s);
    int rc = name ? json_object_set_new (env, name, json_string (eq + 1)) : -1;
    free (name);
    return rc;
}

static int parse_uint (const char *s, unsigned long max, unsigned long *out)
{
    char *end;

    errno = 0;
    unsigned long v = strtoul (s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int cmd_run (struct cli *cli, int argc, char **argv)
{
    enum {
        OPT_PFA = 0x100,
        OPT_CWD,
        OPT_ENV,
        OPT_ID,
        OPT_JSON,
        OPT_DETACH,
        OPT_ERROR
    };
    static const struct option longopts[] = {
        {"label-io", no_argument, NULL, 'l'},
        {"output", required_argument, NULL, 'o'},
        {"error", required_argument, NULL, OPT_ERROR},
        {"nranks", required_argument, NULL, 'N'},
        {"prolog-failures-allowed", required_argument, NULL, OPT_PFA},
        {"time-limit", required_argument, NULL, 't'},
        {"cwd", required_argument, NULL, OPT_CWD},
        {"env", required_argument, NULL, OPT_ENV},
        {"id", required_argument, NULL, OPT_ID},
        {"json", no_argument, NULL, OPT_JSON},
        {"detach", no_argument, NULL, OPT_DETACH},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct run r = {.cli = cli};
    struct cairn_error err = {{0}};
    unsigned long nranks = 1, pfa = 0;
    double limit = 0;
    char *cwd = NULL;
    const char *outpath = NULL, *errpath = NULL;
    bool id_given = false, label = false;
    json_t *env = NULL;
    int rc = 1, opt;

    if (!(env = json_object ()))
        goto nomem;
    /* Like flux run: the job gets the submitter's environment. */
    for (char **e = environ; e && *e; e++)
        env_add (env, *e);
    while ((opt = getopt_long (argc, argv, "+N:t:lo:" CLI_COMMON_SHORTOPTS,
                               longopts, NULL)) != -1) {
        switch (opt) {
        case 'l':
            label = true;
            break;
        case 'o':
            outpath = optarg;
            break;
        case OPT_ERROR:
            errpath = optarg;
            break;
        case 'N':
            if (parse_uint (optarg, RV1_MAX_RANKS, &nranks) < 0 || nranks == 0)
                cli_usage_error (cli, "-N: expected 1..%u, got '%s'",
                                 RV1_MAX_RANKS, optarg);
            break;
        case OPT_PFA:
            if (parse_uint (optarg, INT_MAX, &pfa) < 0)
                cli_usage_error (cli,
                                 "--prolog-failures-allowed: expected a "
                                 "number >= 0, got '%s'",
                                 optarg);
            break;
        case 't':
            if (fsd_parse (optarg, &limit, &err) < 0)
                cli_usage_error (cli, "--time-limit: %s", err.text);
            break;
        case OPT_CWD:
            free (cwd);
            if (!(cwd = strdup (optarg)))
                goto nomem;
            break;
        case OPT_ENV:
            if (env_add (env, optarg) < 0)
                cli_usage_error (cli, "--env: expected NAME=VALUE, got '%s'",
                                 optarg);
            break;
        case OPT_ID:
            if (cli_parse_jobid (cli, optarg, &r.id) < 0)
                goto done;
            id_given = true;
            break;
        case OPT_JSON:
            r.json = true;
            break;
        case OPT_DETACH:
            r.detach = true;
            break;
        default:
            cli_common_option (cli, opt, optarg);
        }
    }
    if (optind >= argc)
        cli_usage_error (cli, "no command given");
    if (isinf (limit))
        limit = 0;
    if (!cwd && !(cwd = getcwd (NULL, 0))) {
        cli_error ("getcwd: %s", strerror (errno));
        goto done;
    }
    char host[256] = "";
    if (gethostname (host, sizeof (host) - 1) < 0) {
        cli_error ("gethostname: %s", strerror (errno));
        goto done;
    }
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    double expiration = limit > 0 ? now.tv_sec + now.tv_nsec * 1e-9 + limit : 0;
    if (!(r.R = rv1_create (nranks, 1, host, expiration))) {
        cli_error ("cannot describe resources: %s", strerror (errno));
        goto done;
    }
    if (!(r.jobspec = jobspec_create (argv + optind, nranks, cwd, env, limit,
                                      (int)pfa))) {
        cli_error ("cannot build the jobspec: %s", strerror (errno));
        goto done;
    }
    if (!id_given && cli_jobid_generate (&r.id) < 0) {
        cli_error ("cannot make a job id: %s", strerror (errno));
        goto done;
    }
    if (jobwatch_init (&r.jw, r.id, 1) < 0)
        goto nomem;
    r.jw.events = true; /* send_start asks for them */
    if (!r.detach && !(r.ro = runout_create (outpath, errpath, label, &err))) {
        cli_error ("%s", err.text);
        goto done;
    }
    rc = run_start (&r, false);
    goto done;
nomem:
    cli_error ("out of memory");
    rc = 1;
done:
    runout_destroy (r.ro);
    client_close (r.c);
    jobwatch_clear (&r.jw);
    json_decref (r.R);
    json_decref (r.jobspec);
    json_decref (env);
    free (r.path);
    free (cwd);
    return rc;
}

const struct cli_command cli_cmd_run = {
    "run",
    cmd_run,
    "[OPTIONS] -- CMD [ARGS...]",
    "Run a job and follow it to the end; exit with its status.",
    "  -N, --nranks N      ranks to run on (default 1)\n"
    "      --prolog-failures-allowed N\n"
    "                      ranks the job may lose to tolerable prolog "
    "failures\n"
    "  -t, --time-limit FSD  time limit (e.g. 30s, 5m, 1h)\n"
    "      --cwd DIR       working directory (default: the current one)\n"
    "      --env NAME=VALUE  set a variable in the job's environment (the\n"
    "                      job gets a copy of this one); may be repeated\n"
    "      --id JOBID      the job's id (default: a fresh one)\n"
    "  -l, --label-io      prefix each line of output with its rank\n"
    "  -o, --output FILE   write the job's stdout to FILE\n"
    "      --error FILE    write the job's stderr to FILE\n"
    "      --json          print the raw responses, one JSON object a line\n"
    "                      (accepted, the progress events and the output)\n"
    "      --detach        exit 0 once cairnd has accepted the job (which\n"
    "                      goes on)\n"
    "\nThe job's stdout and stderr come to this stdout and stderr as its\n"
    "shells write them. On stderr too: \"job N (F58) submitted\" once\n"
    "cairnd has accepted the job, then each start, exception, finish and\n"
    "release response, and why the job failed if it did.\n"
    "Exits with the job's exit code (128+N for signal N), 1 if it failed\n"
    "to run or was refused, 69 if this client gave up on cairnd (the job\n"
    "goes on: cairn attach). Follows the job across a restart of cairnd,\n"
    "waiting up to $CAIRN_RECONNECT_TIMEOUT for it to come back (a\n"
    "duration such as 30s or 5m, default 60s).\n",
};

/* cairn attach: a reattach from the start, with the output */
static int cmd_attach (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"label-io", no_argument, NULL, 'l'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct run r = {.cli = cli, .attach = true};
    struct cairn_error err = {{0}};
    bool label = false;
    int rc = 1, opt;

    while ((opt = getopt_long (argc, argv, "l" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == 'l')
            label = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    if (optind >= argc)
        cli_usage_error (cli, "no job id given");
    if (optind + 1 < argc)
        cli_usage_error (cli, "unexpected '%s'", argv[optind + 1]);
    if (cli_parse_jobid (cli, argv[optind], &r.id) < 0)
        return 1;
    if (jobwatch_init (&r.jw, r.id, 1) < 0 ||
        !(r.ro = runout_create (NULL, NULL, label, &err))) {
        cli_error ("out of memory");
        goto done;
    }
    r.jw.events = true;
    r.jw.accepted = true; /* it is cairnd's already, or ENOENT says not */
    rc = run_start (&r, true);
done:
    runout_destroy (r.ro);
    client_close (r.c);
    jobwatch_clear (&r.jw);
    free (r.path);
    return rc;
}

const struct cli_command cli_cmd_attach = {
    "attach",
    cmd_attach,
    "[-l] JOBID",
    "Follow a job again: its output and responses, to its end.",
    "  -l, --label-io      prefix each line of output with its rank\n"
    "\nFrom the start: the output of shells that ended already (from the\n"
    "journal), then the rest as it comes. Exits as cairn run would.\n",
};
