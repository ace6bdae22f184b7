/* submit.c - jobs through cairnd's `start` protocol, some in flight.
 *
 * One connection carries every job: each `start` request is a stream of
 * responses with its own matchtag (job i has matchtag i + 1), ending with
 * the final release. That is how a job-manager talks to an exec service,
 * and it keeps the client's own cost to one socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "core/jobspec.h"
#include "core/rv1.h"

/* A small, fixed environment, like the one a user's job carries (the
 * accept event journals it with the jobspec). */
static json_t *job_environment (void)
{
    return json_pack ("{s:s s:s s:s s:s s:s s:s}", "PATH",
                      "/usr/local/bin:/usr/bin:/bin", "HOME", "/home/user",
                      "USER", "user", "SHELL", "/bin/bash", "LANG", "C.UTF-8",
                      "TERM", "xterm-256color");
}

struct jobstate {
    bool sent;
    bool done;
};

static int send_job (struct client *c,
                     const struct submit *s,
                     int i,
                     json_t *js,
                     json_t *R,
                     struct cairn_error *err)
{
    json_t *p = json_pack ("{s:I s:I s:O s:O}", "id",
                           (json_int_t)(s->id0 + (uint64_t)i), "userid",
                           (json_int_t)getuid (), "jobspec", js, "R", R);
    if (!p)
        return errset (err, ENOMEM, "out of memory");
    int rc = client_send (c, "start", i + 1, p);
    json_decref (p);
    if (rc < 0)
        return errset (err, errno, "start: %s", strerror (errno));
    return 0;
}

/* Handle one response; return 1 when it ends job i, 0 if not, -1 on an
 * error response. */
static int handle (const struct submit *s,
                   json_t *resp,
                   int *failed,
                   struct cairn_error *err)
{
    json_t *payload = json_object_get (resp, "payload");
    const char *type = json_string_value (json_object_get (payload, "type"));
    json_t *data = json_object_get (payload, "data");

    if (!payload) {
        json_t *es = json_object_get (resp, "errstr");
        return errset (err, EPROTO, "cairnd refused a job: %s",
                       es ? json_string_value (es) : "?");
    }
    if (!type)
        return 0;
    if (!strcmp (type, "exception") ||
        (!strcmp (type, "finish") &&
         json_integer_value (json_object_get (data, "status")) != 0))
        (*failed)++;
    if (s->until_start)
        return !strcmp (type, "start") ? 1 : 0;
    return !strcmp (type, "release") &&
           json_is_true (json_object_get (data, "final"));
}

int bench_submit (struct client *c,
                  const struct submit *s,
                  struct submit_result *res,
                  struct cairn_error *err)
{
    json_t *env = job_environment ();
    json_t *js = jobspec_create (s->argv, s->nranks, "/", env, 0, 0);
    json_t *R = rv1_create (s->nranks, 1, "localhost", 0);
    struct jobstate *st = calloc (s->njobs ? s->njobs : 1, sizeof (*st));
    int next = 0, ndone = 0, inflight = 0, rc = -1;

    memset (res, 0, sizeof (*res));
    if (!env || !js || !R || !st) {
        errset (err, ENOMEM, "cannot build the jobs");
        goto out;
    }
    double t0 = bench_now ();
    while (ndone < s->njobs) {
        while (next < s->njobs && inflight < s->inflight) {
            if (send_job (c, s, next, js, R, err) < 0)
                goto out;
            st[next++].sent = true;
            inflight++;
        }
        json_t *resp = client_recv (c, 300, err);
        if (!resp)
            goto out;
        int64_t tag = json_integer_value (json_object_get (resp, "matchtag"));
        int i = (int)(tag - 1);
        int r = handle (s, resp, &res->failed, err);
        json_decref (resp);
        if (r < 0)
            goto out;
        if (r == 1 && i >= 0 && i < s->njobs && st[i].sent && !st[i].done) {
            st[i].done = true;
            ndone++;
            inflight--;
        }
    }
    res->seconds = bench_now () - t0;
    rc = 0;
out:
    json_decref (env);
    json_decref (js);
    json_decref (R);
    free (st);
    return rc;
}
