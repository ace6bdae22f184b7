/* fjob_say.c - what a Flux job says, to the job-manager and to cairnd
 * besides its stream (fjob_say.h): its state moves, its answers to the
 * start request, the `resume`s and the fatal exceptions it sends cairnd.
 * The bottom of the job's three files: fjob.c (the start path) and
 * fjob_stream.c (cairnd's responses handled) both use it, it uses
 * neither, so that the two do not call each other back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flux/cconn.h"
#include "flux/fctx.h"
#include "flux/fjobrec.h"
#include "flux/fjob_say.h"
#include "flux/fshell.h"

bool fjob_move (struct fjob *job, enum fjob_event ev)
{
    enum fjob_state to;

    if (fjob_state_next (job->state, ev, &to) < 0) {
        flux_log (job->ctx->h, LOG_ERR, "job %s: %s in state %s refused",
                  job->f58, fjob_event_name (ev), fjob_state_name (job->state));
        return false;
    }
    job->state = to;
    return true;
}

/* ---- answers to the job-manager ---- */

void fjob_jm_respond (struct fjob *job, const char *type, json_t *data_new)
{
    flux_t *h = job->ctx->h;
    if (!data_new)
        data_new = json_object ();
    if (flux_respond_pack (h, job->req, "{s:I s:s s:o}", "id",
                           (json_int_t)job->id, "type", type, "data",
                           data_new) < 0)
        flux_log_error (h, "job %s: respond %s", job->f58, type);
}

void fjob_jm_exception (struct fjob *job,
                        int severity,
                        const char *type,
                        const char *note)
{
    fjob_jm_respond (job, "exception",
                     json_pack ("{s:i s:s s:s}", "severity", severity, "type",
                                type, "note", note ? note : ""));
}

/* cairnd's answer to the `resume` after a shrink. */
static void resume_cb (const json_t *msg, void *arg)
{
    struct fjob *job = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (m.errnum)
        flux_log (job->ctx->h, LOG_ERR, "job %s: resume: %s", job->f58,
                  m.errstr ? m.errstr : strerror ((int)m.errnum));
    job->resume_pending = false;
    job->resume_mt = 0;
}

/* cairnd's answer to the word that the namespace is there. */
static void ready_cb (const json_t *msg, void *arg)
{
    struct fjob *job = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    /* ENOENT: the word beat the start; say_ready says it again */
    if (m.errnum && m.errnum != ENOENT)
        flux_log (job->ctx->h, LOG_ERR, "job %s: resume (ready): %s", job->f58,
                  m.errstr ? m.errstr : strerror ((int)m.errnum));
    job->ready_pending = false;
    job->ready_mt = 0;
}

/* A `resume` (ready: the word that the namespace is there) to cairnd, in
 * place of the one *mtp names (whose answer no longer counts); *mtp is
 * its matchtag, 0 if it could not go out. */
static void send_resume (struct fjob *job, bool ready, int64_t *mtp)
{
    json_t *p =
        json_pack ("{s:I s:b}", "id", (json_int_t)job->id, "ready", ready);
    int64_t mt;

    cconn_rpc_cancel (job->ctx->cc, *mtp);
    mt = p ? cconn_rpc (job->ctx->cc, "resume", p, 0,
                        ready ? ready_cb : resume_cb, job)
           : -1;
    if (mt < 0) {
        if (errno != ENOTCONN)
            flux_log_error (job->ctx->h, "job %s: resume", job->f58);
        mt = 0;
    }
    json_decref (p);
    *mtp = mt;
}

void fjob_send_resume (struct fjob *job)
{
    send_resume (job, false, &job->resume_mt);
}

void fjob_send_ready (struct fjob *job)
{
    send_resume (job, true, &job->ready_mt);
}

/* Send cairnd a fatal exec exception for the job; with echo, its copy on
 * the stream is dropped (Flux has it already). */
void fjob_raise (struct fjob *job, const char *note, bool echo)
{
    json_t *p = json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)job->id,
                           "type", "exec", "severity", 0, "note", note);

    flux_log (job->ctx->h, LOG_ERR, "job %s: %s", job->f58, note);
    if (!p || cconn_rpc (job->ctx->cc, "exception", p, 0, NULL, NULL) < 0)
        flux_log_error (job->ctx->h, "job %s: exception", job->f58);
    else if (echo)
        json_array_append_new (job->echo, json_string ("exec"));
    json_decref (p);
}

/* End the job with a fatal exec exception, through cairnd, which journals
 * it, stops what runs and sends it back on the stream: that copy is the
 * one Flux gets. */
void fjob_raise_fatal (struct fjob *job, const char *note)
{
    fjob_raise (job, note, false);
}

/* fshell.h's verdicts: fatal through cairnd, like the module's own. */
void fjob_shell_fatal (void *arg, const char *note)
{
    struct fjob *job = arg;

    fshell_stop (job->watch);
    fjob_raise_fatal (job, note);
}

bool fjob_ns_pending (const struct fjob *job)
{
    return job->ns || job->ns_wait;
}

bool fjob_test_held (const char *env)
{
    const char *hold = getenv (env);
    return hold && *hold && access (hold, F_OK) == 0;
}
