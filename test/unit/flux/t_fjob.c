/* t_fjob.c - the Flux module's job path (src/flux/fjob*.c) alone, with a
 * fake cairnd and a fake Flux.
 *
 * cairnd is a unix socket served here: what the job sends it is recorded,
 * and the test answers as cairnd would, line by line. Flux is libflux's
 * loop:// connector: every request the job makes (the KVS, the
 * job-manager's eventlog) comes back to this handle and is answered here,
 * every answer to the job-manager's start request is recorded, and the
 * module's log is captured. Then, one job each: the normal path (accept,
 * start, finish, release), cairnd refusing the job and an exception that
 * cairnd raises (both end the job with an exception and a release), a
 * job the job-manager hands over again (reattach: what the eventlog holds
 * is not sent twice), cairnd restarting under a running job (a reattach
 * `since` what was received), and a job that fails while its broker's URI
 * is asked. Each checks the exact responses, what cairnd was asked, and
 * that the job went through its states without a refused move.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tap.h"
#include "flux/cconn.h"
#include "flux/fctx.h"
#include "flux/fjob.h"
#include "flux/fjobs.h"

#define JOBID 1234
#define T_WAIT 5.0 /* seconds a step may take before the test gives up */

static struct harness {
    flux_t *h;
    struct fctx ctx;
    char dir[32], sock[64];
    int lfd, cfd; /* fake cairnd: listening, connected */
    flux_watcher_t *lw, *cw;
    char in[65536];
    size_t inlen;
    json_t *reqs;              /* cairnd's requests, in order */
    json_t *jm;                /* the start request's responses */
    json_t *logs;              /* the module's log lines */
    bool up;                   /* cconn says cairnd is up */
    int released;              /* fjob_ops.released calls */
    const char *eventlog;      /* the job's eventlog, for kvs.lookup */
    const char *exec_eventlog; /* its exec.eventlog */
    bool park_attr;            /* attr.get is not answered, but kept */
    flux_msg_t *parked;
    flux_msg_handler_t *mh[2];
} H;

/* ---- the fake cairnd ---- */

static void cairnd_read (flux_reactor_t *r, flux_watcher_t *w, int rv, void *a)
{
    ssize_t n = read (H.cfd, H.in + H.inlen, sizeof (H.in) - H.inlen);
    char *nl;

    if (n <= 0) {
        flux_watcher_stop (H.cw);
        return;
    }
    H.inlen += (size_t)n;
    while ((nl = memchr (H.in, '\n', H.inlen))) {
        json_t *m = json_loadb (H.in, (size_t)(nl - H.in), 0, NULL);
        if (m)
            json_array_append_new (H.reqs, m);
        H.inlen -= (size_t)(nl - H.in) + 1;
        memmove (H.in, nl + 1, H.inlen);
    }
}

static void
cairnd_accept (flux_reactor_t *r, flux_watcher_t *w, int rv, void *a)
{
    int fd = accept (H.lfd, NULL, NULL);
    if (fd < 0)
        return;
    H.cfd = fd;
    H.cw = flux_fd_watcher_create (r, fd, FLUX_POLLIN, cairnd_read, NULL);
    flux_watcher_start (H.cw);
}

/* cairnd answers matchtag mt with payload (stolen). */
static void cairnd_say (int64_t mt, json_t *payload)
{
    json_t *m =
        json_pack ("{s:I s:o}", "matchtag", (json_int_t)mt, "payload", payload);
    char *s = m ? json_dumps (m, JSON_COMPACT) : NULL;
    if (!s || write (H.cfd, s, strlen (s)) < 0 || write (H.cfd, "\n", 1) < 0)
        BAIL_OUT ("fake cairnd cannot write");
    free (s);
    json_decref (m);
}

static void cairnd_error (int64_t mt, int errnum, const char *errstr)
{
    char line[256];
    int n = snprintf (line, sizeof (line),
                      "{\"matchtag\":%jd,\"errnum\":%d,\"errstr\":\"%s\"}\n",
                      (intmax_t)mt, errnum, errstr);
    if (write (H.cfd, line, (size_t)n) < 0)
        BAIL_OUT ("fake cairnd cannot write");
}

/* A response of the job's stream: {"type": type, "data": data (stolen)}. */
static void stream_say (int64_t mt, const char *type, json_t *data)
{
    cairnd_say (mt, json_pack ("{s:s s:o}", "type", type, "data",
                               data ? data : json_object ()));
}

/* ---- the fake Flux ---- */

static void
jm_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg, void *arg)
{
    json_t *o = NULL;
    if (flux_response_decode (msg, NULL, NULL) == 0 &&
        flux_msg_unpack (msg, "o", &o) == 0)
        json_array_append (H.jm, o);
}

/* A KVS value as kvs.lookup answers it (RFC 11 treeobj, base64). */
static json_t *treeobj_val (const char *s)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen (s);
    char *out = calloc (1, 4 * (n / 3 + 1) + 1), *p = out;
    for (size_t i = 0; out && i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        *p++ = b64[(v >> 18) & 63];
        *p++ = b64[(v >> 12) & 63];
        *p++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        *p++ = i + 2 < n ? b64[v & 63] : '=';
    }
    json_t *o = json_pack ("{s:i s:s s:s}", "ver", 1, "type", "val", "data",
                           out ? out : "");
    free (out);
    return o;
}

/* Every request the job makes of Flux: kvs.lookup gets the eventlogs
 * the test set, the rest a plain success. */
static void flux_req_cb (flux_t *h,
                         flux_msg_handler_t *mh,
                         const flux_msg_t *msg,
                         void *arg)
{
    const char *topic = NULL, *key = NULL;

    (void)flux_msg_get_topic (msg, &topic);
    if (topic && !strcmp (topic, "attr.get") && H.park_attr) {
        flux_msg_decref (H.parked);
        H.parked = flux_msg_copy (msg, true);
        return;
    }
    if (topic && !strcmp (topic, "kvs.lookup") &&
        flux_request_unpack (msg, NULL, "{s:s}", "key", &key) == 0) {
        const char *v = strstr (key, "exec.eventlog") ? H.exec_eventlog
                        : strstr (key, "eventlog")    ? H.eventlog
                                                      : NULL;
        if (v)
            (void)flux_respond_pack (h, msg, "{s:s s:o}", "key", key, "val",
                                     treeobj_val (v));
        else
            (void)flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    (void)flux_respond (h, msg, NULL);
}

static void log_cb (const char *buf, int len, void *arg)
{
    json_array_append_new (H.logs, json_stringn (buf, (size_t)len));
}

/* ---- the module's side ---- */

static void state_cb (struct cconn *cc, bool up, void *arg)
{
    H.up = up;
    for (size_t i = 0; i < fjobs_count (H.ctx.jobs); i++)
        fjob_cairnd_state (fjobs_nth (H.ctx.jobs, i), up);
}

static void job_released (struct fjob *job, void *arg)
{
    H.released++;
    fjobs_remove (H.ctx.jobs, job);
}

static json_t *job_seen (flux_jobid_t id, void *arg)
{
    return NULL;
}

static const struct fjob_ops ops = {.released = job_released, .seen = job_seen};

/* ---- driving ---- */

static bool timed_out;
static void timeout_cb (flux_reactor_t *r, flux_watcher_t *w, int rv, void *a)
{
    timed_out = true;
}
static bool (*until_f) (void);
static void check_cb (flux_reactor_t *r, flux_watcher_t *w, int rv, void *a)
{
    if (until_f ())
        flux_reactor_stop (r);
}

/* Run the reactor until cond holds (checked after each turn). */
static bool run_until (bool (*cond) (void))
{
    flux_reactor_t *r = flux_get_reactor (H.h);
    flux_watcher_t *t =
        flux_timer_watcher_create (r, T_WAIT, 0, timeout_cb, NULL);
    flux_watcher_t *c = flux_check_watcher_create (r, check_cb, NULL);
    flux_watcher_t *idle = flux_idle_watcher_create (r, NULL, NULL);

    timed_out = false;
    until_f = cond;
    flux_watcher_start (t);
    flux_watcher_start (c);
    flux_watcher_start (idle); /* turns keep coming: check runs */
    while (!cond () && !timed_out)
        if (flux_reactor_run (r, FLUX_REACTOR_ONCE) < 0)
            break;
    flux_watcher_destroy (t);
    flux_watcher_destroy (c);
    flux_watcher_destroy (idle);
    return cond ();
}

static size_t want_reqs, want_jm;
static bool have_reqs (void)
{
    return json_array_size (H.reqs) >= want_reqs;
}
static bool have_jm (void)
{
    return json_array_size (H.jm) >= want_jm;
}
static bool is_up (void)
{
    return H.up && H.cfd >= 0;
}
static int want_released;
static bool have_released (void)
{
    return H.released >= want_released;
}

/* The i-th request to cairnd whose topic is topic, or NULL. */
static json_t *req_nth (const char *topic, int nth)
{
    size_t i;
    json_t *r;
    json_array_foreach (H.reqs, i, r)
    {
        const char *t = json_string_value (json_object_get (r, "topic"));
        if (t && !strcmp (t, topic) && nth-- == 0)
            return r;
    }
    return NULL;
}

static int64_t mt_of (json_t *req)
{
    return json_integer_value (json_object_get (req, "matchtag"));
}

/* The types of the job-manager's responses, "start,finish,release". */
static char *jm_types (void)
{
    static char buf[512];
    size_t i;
    json_t *o;
    buf[0] = '\0';
    json_array_foreach (H.jm, i, o)
    {
        const char *t = json_string_value (json_object_get (o, "type"));
        if (i)
            strncat (buf, ",", sizeof (buf) - strlen (buf) - 1);
        strncat (buf, t ? t : "?", sizeof (buf) - strlen (buf) - 1);
    }
    return buf;
}

/* How many log lines hold needle. */
static int logged (const char *needle)
{
    size_t i;
    json_t *l;
    int n = 0;
    json_array_foreach (H.logs, i, l) n +=
        strstr (json_string_value (l), needle) != NULL;
    return n;
}

/* A job of one broker rank, handed in as the job-manager would. */
static struct fjob *job_start_on (bool reattach, const char *rank)
{
    json_t *jobspec = json_pack ("{s:i s:[] s:[] s:{s:{}}}", "version", 1,
                                 "resources", "tasks", "attributes", "system");
    json_t *R =
        json_pack ("{s:i s:{s:[{s:s s:{s:s}}]}}", "version", 1, "execution",
                   "R_lite", "rank", rank, "children", "core", "0");
    flux_msg_t *msg = flux_request_encode ("job-exec.start", "{}");
    struct fjob *job;

    json_array_clear (H.reqs);
    json_array_clear (H.jm);
    json_array_clear (H.logs);
    H.released = 0;
    if (!jobspec || !R || !msg ||
        !(job = fjob_create (&H.ctx, &ops, &H.ctx, msg, JOBID, getuid (),
                             jobspec, R, reattach)) ||
        fjobs_add (H.ctx.jobs, job) < 0)
        BAIL_OUT ("cannot make the job");
    flux_msg_decref (msg);
    json_decref (jobspec);
    json_decref (R);
    fjob_begin (job);
    return job;
}

/* A job of rank 0, whose URI is known. */
static struct fjob *job_start (bool reattach)
{
    return job_start_on (reattach, "0");
}

static const char *state_of (struct fjob *job)
{
    json_t *s = fjob_stats (job);
    static char buf[32];
    snprintf (buf, sizeof (buf), "%s",
              json_string_value (json_object_get (s, "state")));
    json_decref (s);
    return buf;
}

/* ---- the paths ---- */

static void normal_path (void)
{
    struct fjob *job = job_start (false);

    want_reqs = 2; /* the start, and the word that the namespace is there */
    bool asked = run_until (have_reqs);
    ok (asked, "a new job: cairnd is asked (%zu requests)",
        json_array_size (H.reqs));
    json_t *start = req_nth ("start", 0);
    ok (start != NULL, "with a start");
    ok (json_is_false (
            json_object_get (json_object_get (start, "payload"), "reattach")),
        "a fresh one (reattach false)");
    ok (json_object_get (json_object_get (start, "payload"), "jobspec") != NULL,
        "with the shells' jobspec");
    ok (req_nth ("resume", 0) != NULL, "and a resume (the namespace is there)");
    is_str (state_of (job), "asking", "the job asks");

    int64_t mt = mt_of (start);
    stream_say (mt, "accepted", NULL);
    stream_say (mt, "start", json_pack ("{s:f}", "expiration", 0.0));
    want_jm = 1;
    ok (run_until (have_jm), "accepted, start: the job-manager hears");
    is_str (jm_types (), "start", "start");
    is_str (state_of (job), "running", "the job runs");

    stream_say (mt, "finish", json_pack ("{s:i}", "status", 0));
    stream_say (mt, "release",
                json_pack ("{s:s s:b}", "ranks", "0", "final", 1));
    want_released = 1;
    ok (run_until (have_released), "finish, release: the job is released");
    is_str (jm_types (), "start,finish,release",
            "the job-manager got start, finish, release");
    json_t *rel = json_array_get (H.jm, 2);
    is_str (json_string_value (
                json_object_get (json_object_get (rel, "data"), "ranks")),
            "all", "a release of every rank says all");
    ok (json_is_true (json_object_get (json_object_get (rel, "data"), "final")),
        "and is final");
    is_int (fjobs_count (H.ctx.jobs), 0, "the job is gone from the table");
    is_int (logged ("refused"), 0, "no state move was refused");
}

static void refused_path (void)
{
    struct fjob *job = job_start (false);

    want_reqs = 1;
    ok (run_until (have_reqs), "cairnd refusing: it is asked");
    cairnd_error (mt_of (req_nth ("start", 0)), EPERM, "not yours");
    want_released = 1;
    ok (run_until (have_released), "a refused job is released");
    (void)job;
    is_str (jm_types (), "exception,release",
            "the job-manager got an exception, then the release");
    json_t *ex = json_object_get (json_array_get (H.jm, 0), "data");
    like (json_string_value (json_object_get (ex, "note")),
          "cairnd refused the job: not yours", "the note says why");
    is_int (json_integer_value (json_object_get (ex, "severity")), 0,
            "a fatal one");
    is_int (logged ("refused the job"), 1, "and it is logged once");
    is_int (logged ("in state"), 0, "no state move was refused");
}

static void exception_path (void)
{
    struct fjob *job = job_start (false);

    want_reqs = 1;
    ok (run_until (have_reqs), "an exception in cairnd: the job is started");
    int64_t mt = mt_of (req_nth ("start", 0));
    stream_say (mt, "accepted", NULL);
    stream_say (mt, "start", NULL);
    stream_say (mt, "exception",
                json_pack ("{s:i s:s s:s}", "severity", 0, "type", "timeout",
                           "note", "time limit"));
    want_jm = 2;
    ok (run_until (have_jm), "start, exception relayed");
    is_str (state_of (job), "running", "the job still runs (its shells end)");

    /* the job-manager's own exception (a cancel) goes to cairnd, and its
     * echo on the stream is not sent back to the job-manager */
    fjob_exception (job, "cancel", 0, -1);
    want_reqs = 3;
    ok (run_until (have_reqs) && req_nth ("exception", 0),
        "a cancel goes to cairnd as an exception");
    stream_say (mt, "exception",
                json_pack ("{s:i s:s s:s}", "severity", 0, "type", "cancel",
                           "note", ""));
    stream_say (mt, "finish", json_pack ("{s:i}", "status", 15));
    stream_say (mt, "release",
                json_pack ("{s:s s:b}", "ranks", "0", "final", 1));
    want_released = 1;
    ok (run_until (have_released), "then released");
    is_str (jm_types (), "start,exception,finish,release",
            "the cancel's echo is dropped, the rest relayed in order");
    is_str (json_string_value (json_object_get (
                json_object_get (json_array_get (H.jm, 1), "data"), "type")),
            "timeout", "cairnd's exception keeps its type");
    is_int (logged ("in state"), 0, "no state move was refused");
}

static void reattach_path (void)
{
    /* Flux has the start already: a reload after it */
    H.eventlog = "{\"timestamp\":1.0,\"name\":\"submit\",\"context\":{}}\n"
                 "{\"timestamp\":2.0,\"name\":\"start\",\"context\":{}}\n";
    H.exec_eventlog = "{\"timestamp\":1.0,\"name\":\"init\"}\n"
                      "{\"timestamp\":2.0,\"name\":\"shell.start\"}\n";
    struct fjob *job = job_start (true);

    want_reqs = 1;
    ok (run_until (have_reqs), "a job handed over again: cairnd is asked");
    json_t *start = req_nth ("start", 0);
    json_t *p = json_object_get (start, "payload");
    ok (json_is_true (json_object_get (p, "reattach")), "to reattach");
    is_int (json_integer_value (json_object_get (p, "since")), 0,
            "from the stream's beginning");
    int64_t mt = mt_of (start);
    stream_say (
        mt, "reattached",
        json_pack ("{s:i s:b}", "userid", (int)getuid (), "privileged", 1));
    stream_say (mt, "start", NULL); /* in the eventlog already */
    stream_say (mt, "finish", json_pack ("{s:i}", "status", 0));
    stream_say (mt, "release",
                json_pack ("{s:s s:b}", "ranks", "0", "final", 1));
    want_released = 1;
    ok (run_until (have_released), "the replay is handled, the job released");
    (void)job;
    is_str (jm_types (), "reattached,finish,release",
            "the job-manager gets reattached, and no start twice");
    is_int (logged ("in state"), 0, "no state move was refused");

    /* another user's job under the id is never followed (adopt.h) */
    json_array_clear (H.jm);
    job = job_start (true);
    want_reqs = 1;
    ok (run_until (have_reqs), "a reattach to another's job");
    stream_say (
        mt_of (req_nth ("start", 0)), "reattached",
        json_pack ("{s:i s:b}", "userid", (int)getuid () + 1, "privileged", 1));
    want_released = 1;
    ok (run_until (have_released), "is given up");
    is_str (jm_types (), "exception,release", "with an exception");
    H.eventlog = H.exec_eventlog = NULL;
}

static bool is_down (void)
{
    return !H.up;
}

/* cairnd restarts under a running job: the job reattaches, asking only
 * for what came after the responses it had (`since`), and the job-manager
 * gets nothing twice. */
static void reconnect_path (void)
{
    struct fjob *job = job_start (false);

    want_reqs = 1;
    ok (run_until (have_reqs), "a job for a cairnd that will restart");
    int64_t mt = mt_of (req_nth ("start", 0));
    stream_say (mt, "accepted", NULL);
    stream_say (mt, "start", NULL);
    stream_say (mt, "output", json_object ()); /* a notice: not counted */
    want_jm = 1;
    ok (run_until (have_jm), "it runs");

    /* cairnd goes away */
    flux_watcher_destroy (H.cw);
    H.cw = NULL;
    close (H.cfd);
    H.cfd = -1;
    ok (run_until (is_down), "the module sees cairnd gone");
    is_str (state_of (job), "running", "the job still runs");
    json_array_clear (H.reqs);
    want_reqs = 1;
    ok (run_until (is_up) && run_until (have_reqs),
        "cairnd is back: the job asks again");
    json_t *p = json_object_get (req_nth ("start", 0), "payload");
    ok (json_is_true (json_object_get (p, "reattach")), "a reattach");
    is_int (json_integer_value (json_object_get (p, "since")), 1,
            "since the one event received (not the opening, not output)");
    mt = mt_of (req_nth ("start", 0));
    stream_say (
        mt, "reattached",
        json_pack ("{s:i s:b}", "userid", (int)getuid (), "privileged", 1));
    stream_say (mt, "finish", json_pack ("{s:i}", "status", 0));
    stream_say (mt, "release",
                json_pack ("{s:s s:b}", "ranks", "0", "final", 1));
    want_released = 1;
    ok (run_until (have_released), "then released");
    is_str (jm_types (), "start,finish,release",
            "the job-manager got each response once");
    is_int (logged ("in state"), 0, "no state move was refused");
}

/* A job that fails while its broker's URI is asked: freed before the
 * broker answers, it must leave no wait behind (the answer would reach
 * a freed job). */
static void uri_wait_path (void)
{
    H.park_attr = true;
    H.ctx.start_timeout = 0.1;
    (void)job_start_on (false, "1"); /* rank 1: its URI not known yet */
    H.ctx.start_timeout = 0;
    want_released = 1;
    ok (run_until (have_released),
        "a job cairnd is not asked for in time is released");
    ok (H.parked != NULL, "while its broker's URI was still asked");
    is_str (jm_types (), "exception,release", "with an exception");
    like (json_string_value (json_object_get (
              json_object_get (json_array_get (H.jm, 0), "data"), "note")),
          "did not take the job within", "saying why");
    ok (H.ctx.uriwaits == NULL, "and no wait for the URI is left behind");
    is_int (json_array_size (H.reqs), 0, "cairnd was never asked");
    H.park_attr = false;
    if (H.parked) { /* the broker answers late: nobody is there */
        (void)flux_respond_pack (H.h, H.parked, "{s:s}", "value",
                                 "local:///tmp/b1");
        flux_msg_decref (H.parked);
        H.parked = NULL;
    }
    flux_reactor_run (flux_get_reactor (H.h), FLUX_REACTOR_NOWAIT);
    is_int (json_array_size (H.reqs), 0, "nor is it after the answer");
}

int main (void)
{
    plan (NO_PLAN);
    H.cfd = H.lfd = -1;
    if (!(H.reqs = json_array ()) || !(H.jm = json_array ()) ||
        !(H.logs = json_array ()))
        BAIL_OUT ("out of memory");

    /* fake cairnd */
    snprintf (H.dir, sizeof (H.dir), "/tmp/t_fjob.XXXXXX");
    if (!mkdtemp (H.dir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    snprintf (H.sock, sizeof (H.sock), "%s/cairn.sock", H.dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf (sa.sun_path, sizeof (sa.sun_path), "%s", H.sock);
    if ((H.lfd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0 ||
        bind (H.lfd, (struct sockaddr *)&sa, sizeof (sa)) < 0 ||
        listen (H.lfd, 4) < 0)
        BAIL_OUT ("fake cairnd: %s", strerror (errno));

    /* fake Flux */
    if (!(H.h = flux_open ("loop://", 0)))
        BAIL_OUT ("loop://: %s", strerror (errno));
    /* what libflux would ask a broker for, synchronously */
    if (flux_attr_set_cacheonly (H.h, "rank", "0") < 0 ||
        flux_attr_set_cacheonly (H.h, "size", "2") < 0 ||
        flux_attr_set_cacheonly (H.h, "hostlist", "node[0-1]") < 0 ||
        flux_attr_set_cacheonly (H.h, "content.hash", "sha1") < 0)
        BAIL_OUT ("attributes: %s", strerror (errno));
    flux_log_set_redirect (H.h, log_cb, NULL);
    struct flux_match jm = FLUX_MATCH_RESPONSE;
    jm.topic_glob = "job-exec.start";
    struct flux_match any = FLUX_MATCH_REQUEST;
    if (!(H.mh[0] = flux_msg_handler_create (H.h, jm, jm_cb, NULL)) ||
        !(H.mh[1] = flux_msg_handler_create (H.h, any, flux_req_cb, NULL)))
        BAIL_OUT ("handlers");
    flux_msg_handler_start (H.mh[0]);
    flux_msg_handler_start (H.mh[1]);
    flux_reactor_t *r = flux_get_reactor (H.h);
    H.lw = flux_fd_watcher_create (r, H.lfd, FLUX_POLLIN, cairnd_accept, NULL);
    flux_watcher_start (H.lw);

    /* the module's context, as mod_main makes it */
    H.ctx.h = H.h;
    H.ctx.size = 2;
    H.ctx.uris = calloc (2, sizeof (char *));
    H.ctx.env = json_object ();
    H.ctx.exec_over = json_object ();
    H.ctx.jobs = fjobs_create ();
    H.ctx.conf.job_shell = strdup ("/bin/true");
    H.ctx.conf.barrier_timeout = SHELLCONF_BARRIER_TIMEOUT;
    H.ctx.conf.shell_exit_timeout = SHELLCONF_SHELL_EXIT_TIMEOUT;
    H.ctx.start_timeout = 0;
    struct cconn_ops cops = {.state = state_cb};
    if (!H.ctx.uris || !(H.ctx.uris[0] = strdup ("local:///tmp/b0")) ||
        !H.ctx.env || !H.ctx.jobs || !H.ctx.conf.job_shell ||
        !(H.ctx.cc = cconn_create (H.h, H.sock, &cops, NULL)))
        BAIL_OUT ("context");
    ok (run_until (is_up), "the module connects to the fake cairnd");

    normal_path ();
    refused_path ();
    exception_path ();
    reattach_path ();
    reconnect_path ();
    uri_wait_path ();

    fjobs_destroy (H.ctx.jobs);
    cconn_destroy (H.ctx.cc);
    free (H.ctx.uris[0]);
    free (H.ctx.uris[1]);
    free (H.ctx.uris);
    free (H.ctx.conf.job_shell);
    json_decref (H.ctx.env);
    json_decref (H.ctx.exec_over);
    flux_watcher_destroy (H.lw);
    flux_watcher_destroy (H.cw);
    flux_msg_handler_destroy (H.mh[0]);
    flux_msg_handler_destroy (H.mh[1]);
    flux_close (H.h);
    if (H.cfd >= 0)
        close (H.cfd);
    close (H.lfd);
    unlink (H.sock);
    rmdir (H.dir);
    json_decref (H.reqs);
    json_decref (H.jm);
    json_decref (H.logs);
    return done_testing ();
}
