/* jobwatch.c - what a job's `start` stream said so far (jobwatch.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/cli.h"
#include "cli/jobwatch.h"
#include "core/job.h"

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
