/* fjob_stream.c - a Flux job's side of cairnd's stream (fjob.h): each
 * response cairnd sends, queued by stream_cb() in fjob.c, is
 * handled here in order, one at a time (an RPC or a KVS commit may have
 * to finish first): relayed to the job-manager, posted to the job's
 * eventlogs, or acted on (a shrink of R, drains, the final release once
 * the guest namespace is removed). What a reattach replays is filtered
 * against what the job's eventlog holds already (`skip`, fjob.c's top
 * comment).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testenv.h"
#include "core/idset.h"
#include "core/streamtype.h"
#include "flux/brokers.h"
#include "flux/fctx.h"
#include "flux/fjobrec.h"
#include "flux/fjob_say.h"
#include "flux/fjob_stream.h"
#include "flux/fshell.h"
#include "flux/guest.h"
#include "flux/jmevent.h"
#include "flux/shellout.h"
#include "flux/shrink.h"

/* ---- handling cairnd's responses, one at a time ---- */

static void step_done (flux_future_t *f, void *arg)
{
    struct fjob *job = arg;
    if (flux_future_get (f, NULL) < 0)
        flux_log (job->ctx->h, LOG_ERR, "job %s: %s", job->f58,
                  future_strerror (f, errno));
    flux_future_destroy (f);
    job->step = NULL;
    json_array_remove (job->queue, 0);
    fjob_process (job);
}

/* Does the job's eventlog hold an event named type? */
static bool skipped_peek (const struct fjob *job, const char *type)
{
    return json_integer_value (json_object_get (job->skip, type)) > 0;
}

static void reattached_done (struct fjob *job)
{
    job->step = NULL;
    if (job->jm_reattach && !job->relayed_start) {
        fjob_jm_respond (job, "reattached", NULL);
        job->relayed_start = true;
    }
    json_array_remove (job->queue, 0);
    fjob_process (job);
}

/* Shells block in their start barriers on requests only the module that
 * received them can answer; a reload loses those (as with job-exec, whose
 * jobs are "not recoverable" before the second barrier). A job whose
 * shells had not all passed both barriers (no shell.start, no complete in
 * exec.eventlog) would wait for ever: end it instead. Only a log that
 * knows the shells' past says so: after a broker restart the guest
 * namespace is new (no `init`, guest.h), the shells lost their broker,
 * and their ends, as cairnd reports them, give the reason (issue 33). */
static void exec_eventlog_cb (flux_future_t *f, void *arg)
{
    struct fjob *job = arg;
    const char *s = NULL;

    if (flux_kvs_lookup_get (f, &s) == 0 && s && job->nranks > 1 &&
        strstr (s, "\"name\":\"init\"") && !skipped_peek (job, "finish") &&
        !strstr (s, "\"name\":\"shell.start\"") &&
        !strstr (s, "\"name\":\"complete\""))
        fjob_raise_fatal (job,
                          "job shells were in their start barrier when "
                          "job-exec went away: the job cannot be recovered");
    /* no `init`: the guest namespace is new, the broker restarted while
     * the job ran; the ends of the shells spawned before now are not
     * their tasks' (lost_contact) */
    if (s && !strstr (s, "\"name\":\"init\"") &&
        !skipped_peek (job, "finish")) {
        job->t_restart = flux_reactor_time ();
        flux_log (job->ctx->h, LOG_DEBUG,
                  "job %s ran through a broker restart: the ends of its "
                  "shells spawned before %.3f are not their tasks'",
                  job->f58, job->t_restart);
    }
    /* what the job's shells' replayed ends would post again */
    fshell_recovered_log (job->watch, s);
    flux_future_destroy (f);
    reattached_done (job);
}

static void eventlog_cb (flux_future_t *f, void *arg)
{
    struct fjob *job = arg;
    const char *s = NULL;
    char ns[64];
    flux_future_t *f2 = NULL;

    if (flux_kvs_lookup_get (f, &s) < 0)
        flux_log_error (job->ctx->h, "job %s: eventlog", job->f58);
    json_t *counts = jmevent_count (s);
    json_t *seen = job->ops.seen (job->id, job->arg);
    const char *name;
    json_t *v;
    json_object_foreach (seen, name, v)
    {
        if (counts && json_integer_value (v) >
                          json_integer_value (json_object_get (counts, name)))
            json_object_set (counts, name, v);
    }
    json_decref (seen);
    if (counts) {
        json_decref (job->skip);
        job->skip = counts;
    } else
        json_object_clear (job->skip);
    flux_future_destroy (f);
    if (job->jm_reattach &&
        flux_job_kvs_namespace (ns, sizeof (ns), job->id) >= 0 &&
        (f2 = flux_kvs_lookup (job->ctx->h, ns, 0, "exec.eventlog")) &&
        flux_future_then (f2, -1, exec_eventlog_cb, job) == 0) {
        job->step = f2;
        return;
    }
    flux_future_destroy (f2);
    reattached_done (job);
}

static bool skipped (struct fjob *job, const char *type)
{
    return jmevent_skip (job->skip, type);
}

static bool echo_of_ours (struct fjob *job, const json_t *data)
{
    const char *type = json_string_value (json_object_get (data, "type"));
    size_t i;
    json_t *t;

    json_array_foreach (job->echo, i, t)
    {
        if (type && !strcmp (json_string_value (t), type)) {
            json_array_remove (job->echo, i);
            return true;
        }
    }
    return false;
}

/* Send the job-manager the final release (data), after exec.eventlog's
 * `done` and the guest namespace's removal when there is one: returns
 * that step's future (final_cb ends it), or NULL if the release went out
 * at once (the job is done) or the table refused the move. */
static flux_future_t *final_release (struct fjob *job, json_t *data)
{
    flux_future_t *f;

    if (!fjob_move (job, FJOB_EV_FINAL))
        return NULL;
    fshell_release (job->watch, EIO);
    json_decref (job->final);
    job->final = json_incref (data);
    if (job->has_ns && (f = guest_finish (job->ctx->h, job->id)))
        return f;
    fjob_jm_respond (job, "release", json_incref (data));
    (void)fjob_move (job, FJOB_EV_RELEASED);
    return NULL;
}

/* Every broker of the job's shells answers: cairnd may start them. */
static void brokers_up (void *arg)
{
    struct fjob *job = arg;
    job->resume_pending = true;
    fjob_send_resume (job);
}

/* R is as the shells will read it: resume them once their brokers are up.
 * After a broker restart, the other brokers come back after this module:
 * the shells would fail without them (brokers.h). */
static void resume_when_brokers_up (struct fjob *job)
{
    brokers_wait_destroy (job->bw);
    if (!(job->bw = brokers_wait (job->ctx->h, job->shells, brokers_up, job)))
        brokers_up (job);
}

/* R is shrunk (or could not be): let cairnd start the shells, or end the
 * job through cairnd, which journals the exception and cleans up. */
static void shrunk_cb (flux_future_t *f, void *arg)
{
    struct fjob *job = arg;

    if (flux_future_get (f, NULL) < 0) {
        char note[160];
        snprintf (note, sizeof (note), "cannot shrink the job's R: %s",
                  future_strerror (f, errno));
        fjob_raise_fatal (job, note);
    } else
        resume_when_brokers_up (job);
    flux_future_destroy (f);
    job->step = NULL;
    json_array_remove (job->queue, 0);
    fjob_process (job);
}

static bool whole_job (const struct fjob *job, const json_t *data);

/* cairnd holds the job's shells after a tolerated prolog failure: the
 * ranks in data run, so R is shrunk to them first (shrink.h). A hold of
 * every rank (its client away at the prolog's end) leaves R as it is; a
 * hold for the word that the guest namespace is there (hold-start, "wait":
 * "ready") needs no resume at all. */
static flux_future_t *shrink (struct fjob *job, const json_t *data)
{
    const char *ranks = json_string_value (json_object_get (data, "ranks"));
    struct idset *keep = ranks ? idset_decode (ranks, NULL) : NULL;
    char err[256] = "";
    flux_future_t *f;

    if (keep) {
        idset_destroy (job->shells);
        job->shells = keep;
    }
    if (!keep || fshell_keep (job->watch, ranks) < 0) {
        fjob_raise_fatal (job, "hold without ranks");
        return NULL;
    }
    /* held for the namespace alone (hold-start): say_ready's word ends it */
    if (json_object_get (data, "wait"))
        return NULL;
    if (whole_job (job, data)) {
        resume_when_brokers_up (job);
        return NULL;
    }
    if (!(f = shrink_commit (job->ctx->h, job->id, job->R, ranks, err,
                             sizeof (err)))) {
        fjob_raise_fatal (job, err[0] ? err : "cannot shrink the job's R");
        return NULL;
    }
    if (flux_future_then (f, -1, shrunk_cb, job) < 0) {
        flux_future_destroy (f);
        fjob_raise_fatal (job, "cannot wait for the KVS commit");
        return NULL;
    }
    job->step = f;
    return f;
}

/* Do the ranks of a release (data) hold every rank of the job's R? */
static bool whole_job (const struct fjob *job, const json_t *data)
{
    const char *s = json_string_value (json_object_get (data, "ranks"));
    struct idset *ids = s ? idset_decode (s, NULL) : NULL;
    bool all = ids && idset_count (ids) == job->nranks;

    for (size_t i = 0; all && i < job->nranks; i++)
        all = idset_test (ids, job->ranks[i]);
    idset_destroy (ids);
    return all;
}

/* A shell that lived through its broker's restart (rank 0's is killed,
 * the others leave when the new rank 0 disconnects them) lost its broker:
 * the exit it then made (1: "No route to host") is not its tasks'. When
 * the job ran through a restart (t_restart) and Flux has not seen its
 * finish, the end of a shell spawned before the restart raises a fatal
 * exception saying so, in Flux at once and in cairnd's journal while the
 * job is still there: the job fails, as job-exec's lost shells do,
 * instead of reporting an exit status nobody earned. A shell that ended
 * before the restart while another ran on counts too: the other lost its
 * broker, and the job fails for it anyway. Once per job; a shell cairnd
 * had stopped (cancel, time limit) ended as it was told to. */
static void lost_contact (struct fjob *job, const json_t *data)
{
    double t_spawn = 0;
    int rank = -1, killed = 0;
    char note[256];

    if (job->t_restart <= 0 || job->lost_contact ||
        !json_object_get (data, "status") ||
        json_unpack ((json_t *)data, "{s:i s:b s:F}", "rank", &rank, "killed",
                     &killed, "t-spawn", &t_spawn) < 0 ||
        killed || t_spawn >= job->t_restart)
        return;
    char r[16];
    snprintf (r, sizeof (r), "%d", rank);
    char *host = flux_hostmap_lookup (job->ctx->h, r, NULL);
    snprintf (note, sizeof (note),
              "lost contact with job shell on %s (rank %d): its broker "
              "restarted while it ran",
              host ? host : "?", rank);
    free (host);
    job->lost_contact = true;
    /* Flux first, before the finish that follows in the queue: the job
     * may be over in cairnd before an exception through it would be */
    fjob_jm_exception (job, 0, "exec", note);
    fjob_raise (job, note, true);
}

/* ---- one handler per response type ----
 *
 * Each is handed the response's data and its name (as the eventlog
 * knows it, for the ones posted as they are), and returns a future when
 * the handling goes on asynchronously (the next item waits for it), else
 * NULL. handle() decodes the type once and looks the handler up. */
typedef flux_future_t *(*resp_handler_f) (struct fjob *job,
                                          const char *name,
                                          json_t *data);

/* The stream opens after a reattach: at the first attach of this
 * module, what does Flux have already? */
static flux_future_t *
on_reattached (struct fjob *job, const char *name, json_t *data)
{
    flux_future_t *f = NULL;
    char key[128];

    if (!job->skip_pending)
        return NULL;
    job->skip_pending = false;
    if (flux_job_kvs_key (key, sizeof (key), job->id, "eventlog") < 0 ||
        !(f = flux_kvs_lookup (job->ctx->h, NULL, 0, key)) ||
        flux_future_then (f, -1, eventlog_cb, job) < 0) {
        flux_future_destroy (f);
        return NULL;
    }
    job->step = f;
    return f;
}

/* A fresh start: every later reattach asks only for what came after what
 * was received (`since`), so nothing is to be skipped; counting the
 * eventlog then would drop a final release behind an earlier partial
 * one. */
static flux_future_t *
on_accepted (struct fjob *job, const char *name, json_t *data)
{
    job->skip_pending = false;
    return NULL;
}

static flux_future_t *
on_start (struct fjob *job, const char *name, json_t *data)
{
    if (!job->relayed_start)
        fjob_jm_respond (job, "start", NULL);
    job->relayed_start = true;
    return NULL;
}

static flux_future_t *
on_exception (struct fjob *job, const char *name, json_t *data)
{
    flux_t *h = job->ctx->h;

    if (echo_of_ours (job, data))
        return NULL;
    int sev = json_integer_value (json_object_get (data, "severity"));
    const char *t = json_string_value (json_object_get (data, "type"));
    const char *note = json_string_value (json_object_get (data, "note"));
    const char *ranks = json_string_value (json_object_get (data, "ranks"));
    /* name the hosts, as Flux's own notes do ("... on HOST (rank N)") */
    char *hosts = ranks ? flux_hostmap_lookup (h, ranks, NULL) : NULL;
    char *full = NULL, *named = NULL;
    if (hosts && asprintf (&named, "%s (rank", hosts) < 0)
        named = NULL;
    /* not twice: a lost node's note names it ("node HOST (rank R)") */
    if (named && note && !strstr (note, named) &&
        asprintf (&full, "%s (on %s)", note, hosts) < 0)
        full = NULL;
    free (named);
    free (hosts);
    if (full)
        note = full;
    fjob_jm_exception (job, sev, t ? t : "exec", note);
    /* and log a prolog's or epilog's failure, as perilog.so does (t is
     * the exception's type, not a response's) */
    if (t && (!strcmp (t, "prolog") || !strcmp (t, "epilog")))
        flux_log (h, sev == 0 ? LOG_ERR : LOG_WARNING, "job %s: %s", job->f58,
                  note ? note : t);
    free (full);
    if (sev == 0) {
        fshell_release (job->watch, EIO);
        fshell_stop (job->watch);
    }
    return NULL;
}

static flux_future_t *
on_finish (struct fjob *job, const char *name, json_t *data)
{
    flux_t *h = job->ctx->h;
    flux_future_t *f = NULL;
    json_t *st = json_object_get (data, "status");
    json_t *c = json_pack ("{s:O}", "status", st);
    flux_future_t *fc = guest_post (h, job->id, "complete", c);

    json_decref (c);
    flux_future_destroy (fc); /* RPCs go out in order; no need to wait */
    fjob_jm_respond (job, "finish", json_pack ("{s:O}", "status", st));
    fshell_release (job->watch, EIO);
    fshell_stop (job->watch);
    /* partial release: the ranks go to housekeeping now, and each comes
     * back from there when cairnd's epilog on it is done */
    if (job->ctx->partial) {
        json_t *all = json_pack ("{s:s s:b}", "ranks", "all", "final", 1);
        f = final_release (job, all);
        json_decref (all);
    }
    return f;
}

static flux_future_t *
on_prolog (struct fjob *job, const char *name, json_t *data)
{
    return jmevent_post_perilog (job->ctx->h, job->id, name, data);
}

static flux_future_t *
on_epilog (struct fjob *job, const char *name, json_t *data)
{
    /* partial release: not posted, an epilog-start would hold the job's
     * `free`, and with it every rank, until the last epilog-finish */
    if (job->ctx->partial)
        return NULL;
    return jmevent_post_perilog (job->ctx->h, job->id, name, data);
}

static flux_future_t *
on_output (struct fjob *job, const char *name, json_t *data)
{
    flux_future_t *f = NULL;
    json_t *c = job->out ? shellout_log (job->out, data) : NULL;

    if (c)
        f = guest_post (job->ctx->h, job->id, "log", c);
    json_decref (c);
    return f;
}

static flux_future_t *
on_shell_end (struct fjob *job, const char *name, json_t *data)
{
    lost_contact (job, data);
    fshell_end (job->watch, data); /* cairnd's, not Flux's: not posted */
    return NULL;
}

static flux_future_t *on_hold (struct fjob *job, const char *name, json_t *data)
{
    return shrink (job, data);
}

static flux_future_t *
on_drain (struct fjob *job, const char *name, json_t *data)
{
    const char *ranks = NULL, *reason = "";

    if (json_unpack (data, "{s:s s?s}", "ranks", &ranks, "reason", &reason) < 0)
        return NULL;
    /* in flux dmesg, as job-exec and perilog.so log their drains */
    flux_log (job->ctx->h, LOG_WARNING, "job %s: draining rank(s) %s: %s",
              job->f58, ranks, reason);
    return flux_rpc_pack (job->ctx->h, "resource.drain", 0, 0, "{s:s s:s s:s}",
                          "targets", ranks, "reason", reason, "mode", "update");
}

static flux_future_t *
on_release (struct fjob *job, const char *name, json_t *data)
{
    flux_future_t *f;
    int final = 0;

    (void)json_unpack (data, "{s?b}", "final", &final);
    if (!final) {
        fjob_jm_respond (job, "release", json_incref (data));
        return NULL;
    }
    /* one release of every rank says "all", as job-exec's */
    json_t *all = whole_job (job, data)
                      ? json_pack ("{s:s s:b}", "ranks", "all", "final", 1)
                      : NULL;
    f = final_release (job, all ? all : data);
    json_decref (all);
    return f;
}

/* The stream's own responses (opening, notices); kill never comes here
 * (fjob.c's stream_cb takes it), nor do posted events, which the
 * job-manager does not get. */
static const resp_handler_f stream_handlers[STREAM_TYPE_COUNT] = {
    [STREAM_ACCEPTED] = on_accepted,
    [STREAM_REATTACHED] = on_reattached,
    [STREAM_OUTPUT] = on_output,
};

/* The job's events; those without a handler (accept, cleanup, the
 * processes' ...) are cairnd's business only. */
static const resp_handler_f event_handlers[JOB_EV_COUNT] = {
    [JOB_EV_START] = on_start,
    [JOB_EV_EXCEPTION] = on_exception,
    [JOB_EV_FINISH] = on_finish,
    [JOB_EV_PROLOG_START] = on_prolog,
    [JOB_EV_PROLOG_FINISH] = on_prolog,
    [JOB_EV_EPILOG_START] = on_epilog,
    [JOB_EV_EPILOG_FINISH] = on_epilog,
    [JOB_EV_SHELL_END] = on_shell_end,
    [JOB_EV_HOLD] = on_hold,
    [JOB_EV_DRAIN] = on_drain,
    [JOB_EV_RELEASE] = on_release,
};

/* Handle queue[0]. Returns a future when the handling goes on
 * asynchronously (the next item waits for it), else NULL. */
static flux_future_t *handle (struct fjob *job, const json_t *item)
{
    const char *name = json_string_value (json_object_get (item, "type"));
    json_t *data = json_object_get (item, "data");
    struct stream_resp r = stream_resp_of (name);
    resp_handler_f fn;

    if (!name)
        return NULL;
    if (r.type == STREAM_EVENT && r.event == JOB_EV_START)
        /* whether or not Flux has it already */
        (void)json_unpack (data, "{s?F}", "expiration", &job->expiration);
    /* what Flux has already (a replay's) is not sent again; the opening
     * is about the stream, not a thing Flux could have */
    if (stream_resp_kind (r) != STREAM_KIND_OPENING && skipped (job, name))
        return NULL;
    if (r.type == STREAM_EVENT)
        fn = event_handlers[r.event];
    else
        fn = r.type < STREAM_TYPE_COUNT ? stream_handlers[r.type] : NULL;
    return fn ? fn (job, name, data) : NULL;
}

static void send_final (struct fjob *job)
{
    fjob_jm_respond (job, "release", json_incref (job->final));
    (void)fjob_move (job, FJOB_EV_RELEASED);
    job->ctx->nreleased++;
    job->ops.released (job, job->arg);
}

/* Tests: while the file CAIRN_TEST_HOLD_RELEASE names exists, the final
 * release waits, so that a test can unload the module between a job's
 * finish and its release. */
static bool release_held (void)
{
    return fjob_test_held (TESTENV_HOLD_RELEASE);
}

static void
hold_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct fjob *job = arg;
    if (release_held ())
        return;
    flux_watcher_destroy (job->hold);
    job->hold = NULL;
    send_final (job);
}

static void final_cb (flux_future_t *f, void *arg)
{
    struct fjob *job = arg;

    if (flux_future_get (f, NULL) < 0)
        flux_log (job->ctx->h, LOG_ERR, "job %s: guest namespace: %s", job->f58,
                  strerror (errno));
    flux_future_destroy (f);
    job->step = NULL;
    if (release_held () &&
        (job->hold = flux_timer_watcher_create (flux_get_reactor (job->ctx->h),
                                                0.05, 0.05, hold_cb, job))) {
        flux_watcher_start (job->hold);
        return;
    }
    send_final (job);
}

void fjob_process (struct fjob *job)
{
    /* releasing: the final release is on its way, and nothing after it
     * concerns the job-manager */
    while (!job->step && !fjob_ns_pending (job) &&
           job->state != FJOB_RELEASING && job->state != FJOB_DONE &&
           json_array_size (job->queue) > 0) {
        json_t *item = json_array_get (job->queue, 0);
        flux_future_t *f = handle (job, item);

        if (job->state == FJOB_DONE) { /* released without a namespace */
            job->ops.released (job, job->arg);
            return;
        }
        if (!f) {
            json_array_remove (job->queue, 0);
            continue;
        }
        if (job->step == f) /* handle() chained it itself */
            return;
        bool final = job->final != NULL;
        if (flux_future_then (f, -1, final ? final_cb : step_done, job) < 0) {
            flux_future_destroy (f);
            json_array_remove (job->queue, 0);
            continue;
        }
        job->step = f;
    }
}
