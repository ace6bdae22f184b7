/* fjob.c - see fjob.h. The start path (guest namespace, cairnd's start
 * or reattach), the requests of the job-manager and the shells, and
 * cairnd's stream taken in (stream_cb, the callback of the job's `start`
 * request); its responses are handled in fjob_stream.c, and what the job
 * says is in fjob_say.c. The job moves through fjobstate.h's table.
 *
 * Attaching to cairnd. A job the module has not attached yet is first
 * *reattached* (`start` with reattach, since 0): the job-manager may hand
 * over a job cairnd already runs (a broker restart, a module reload, a KVS
 * checkpoint that lost the `start` event), and only cairnd's journal knows.
 * ENOENT means cairnd never accepted it, and only then is it started
 * fresh. What cairnd replays is filtered against the job's own eventlog
 * (`skip`), so that the job-manager gets exactly the responses and events
 * it is missing. A later reattach (cairnd restarted under a live module)
 * asks only for what came after the `since` responses already received.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "core/idset.h"
#include "core/job.h"
#include "core/signame.h"
#include "core/streamtype.h"
#include "core/testenv.h"
#include "flux/adopt.h"
#include "flux/brokers.h"
#include "flux/fctx.h"
#include "flux/fjob.h"
#include "flux/fjobrec.h"
#include "flux/fjob_say.h"
#include "flux/fjob_stream.h"
#include "flux/fshell.h"
#include "flux/guest.h"
#include "flux/shellout.h"
#include "flux/uris.h"

flux_jobid_t fjob_id (const struct fjob *job)
{
    return job->id;
}

uint32_t fjob_userid (const struct fjob *job)
{
    return job->userid;
}

/* ---- the cairnd side ---- */

/* The jobspec cairnd runs: flux-shell <id> on every rank, with the
 * broker's environment, the guest namespace, and each rank's own broker. */
static json_t *cairn_jobspec (struct fjob *job)
{
    struct fctx *ctx = job->ctx;
    const char *shell = ctx->conf.job_shell;
    double duration = 0;
    int pfa = 0;
    json_t *env = NULL, *renv = NULL, *js = NULL;
    char id[32], ns[64];

    (void)json_unpack (job->jobspec, "{s?{s?{s?F s?{s?s s?i}}}}", "attributes",
                       "system", "duration", &duration, "exec", "job_shell",
                       &shell, "prolog-failures-allowed", &pfa);
    if (!job->out && !(job->out = shellout_create (shell)))
        return NULL;
    snprintf (id, sizeof (id), "%ju", (uintmax_t)job->id);
    if (flux_job_kvs_namespace (ns, sizeof (ns), job->id) < 0 ||
        !(env = json_deep_copy (ctx->env)) ||
        json_object_set_new (env, "FLUX_KVS_NAMESPACE", json_string (ns)) < 0 ||
        !(renv = json_object ()))
        goto done;
    /* another user's job: cairnd runs its shells through flux-imp (a
     * cairnd of a system instance, cairn.conf's flux.imp), which reads the
     * job's signed J through this helper, as with job-exec */
    if (job->userid != getuid ()) {
        char helper[64];
        snprintf (helper, sizeof (helper), "flux imp_exec_helper %ju",
                  (uintmax_t)job->id);
        if (json_object_set_new (env, "FLUX_IMP_EXEC_HELPER",
                                 json_string (helper)) < 0)
            goto done;
    }
    for (size_t i = 0; i < job->nranks; i++) {
        char r[16];
        snprintf (r, sizeof (r), "%u", (unsigned)job->ranks[i]);
        if (json_object_set_new (
                renv, r,
                json_pack ("{s:s}", "FLUX_URI", ctx->uris[job->ranks[i]])) < 0)
            goto done;
    }
    /* hold-on-shrink: flux-shell sizes the job from R, so after a
     * tolerated prolog failure cairnd waits until R is shrunk (shrink.h);
     * hold-start: the shells wait for the guest namespace, made while the
     * prolog runs (say_ready) */
    js = json_pack ("{s:i s:[] s:[{s:[ss] s:s s:{s:i}}]"
                    " s:{s:{s:f s:O s:{s:i} s:{s:O s:s s:b s:b s:b}}}}",
                    "version", 1, "resources", "tasks", "command", shell, id,
                    "slot", "task", "count", "per_slot", 1, "attributes",
                    "system", "duration", duration, "environment", env, "exec",
                    "prolog-failures-allowed", pfa, "cairn", "rank-environment",
                    renv, "client", FJOB_CLIENT, "hold-on-shrink", 1,
                    "hold-start", 1, "shell-leader", 1);
    json_t *cairn = json_object_get (
        json_object_get (json_object_get (js, "attributes"), "system"),
        "cairn");
    /* the site's [exec] kill settings, over cairnd's (execconf.h) */
    if (cairn && json_object_size (ctx->exec_over) > 0)
        json_object_set (cairn, "config", ctx->exec_over);
    /* whose job it is: cairnd serves one instance (exec/bind.h) */
    if (cairn && ctx->instance)
        json_object_set_new (cairn, "instance", json_string (ctx->instance));
done:
    json_decref (env);
    json_decref (renv);
    return js;
}

static void stream_cb (const json_t *msg, void *arg);

/* Forget the job's stream from cairnd, if any: what else comes on it is
 * not the job's (a new start, a failure). */
static void stream_drop (struct fjob *job)
{
    cconn_rpc_cancel (job->ctx->cc, job->matchtag);
    job->matchtag = 0;
}

static void cairnd_send_start (struct fjob *job, bool reattach, int since)
{
    struct fctx *ctx = job->ctx;
    json_t *p;

    stream_drop (job);
    job->fresh = !reattach;
    job->asked |= reattach;
    if (reattach) {
        p = json_pack ("{s:I s:b s:i s:b}", "id", (json_int_t)job->id,
                       "reattach", 1, "since", since, "events", 1);
        /* the rest of the shells' output, where we know what was posted */
        if (p && job->out &&
            (json_object_set_new (p, "output", json_true ()) < 0 ||
             json_object_set_new (p, "output-offsets",
                                  shellout_offsets (job->out)) < 0)) {
            json_decref (p);
            p = NULL;
        }
    } else {
        json_t *js = cairn_jobspec (job);
        p = js ? json_pack ("{s:I s:i s:o s:O s:b s:b s:b}", "id",
                            (json_int_t)job->id, "userid", (int)job->userid,
                            "jobspec", js, "R", job->R, "reattach", 0, "events",
                            1, "output", 1)
               : NULL;
    }
    int64_t mt =
        p ? cconn_rpc (ctx->cc, "start", p, CREPLY_STREAMING, stream_cb, job)
          : -1;
    if (mt < 0) {
        if (errno != ENOTCONN)
            flux_log_error (ctx->h, "job %s: start to cairnd", job->f58);
        mt = 0; /* fjob_cairnd_state (up) will try again */
    }
    job->matchtag = mt;
    json_decref (p);
}

void fjob_cairnd_state (struct fjob *job, bool up)
{
    if (!up) {
        /* gone with the connection, and their waits with them (cconn.h) */
        job->matchtag = 0;
        job->resume_mt = 0;
        job->ready_mt = 0;
        return;
    }
    if (job->state != FJOB_ASKING && job->state != FJOB_RUNNING)
        return; /* not that far yet, or nothing to ask */
    cairnd_send_start (job, true, job->state == FJOB_RUNNING ? job->nresp : 0);
    if (job->ready_pending)
        fjob_send_ready (job);
    if (job->resume_pending)
        fjob_send_resume (job);
}

/* The job cannot go on: what job-exec does for a fatal error of its own.
 * Whatever the queue holds still goes out first. */
static void fail (struct fjob *job, const char *note)
{
    flux_log (job->ctx->h, LOG_ERR, "job %s: %s", job->f58, note);
    if (!fjob_move (job, FJOB_EV_FAIL))
        return; /* failed already, or past asking */
    stream_drop (job);
    json_array_append_new (job->queue,
                           json_pack ("{s:s s:{s:i s:s s:s}}", "type",
                                      "exception", "data", "severity", 0,
                                      "type", "exec", "note", note));
    json_array_append_new (job->queue,
                           json_pack ("{s:s s:{s:s s:b}}", "type", "release",
                                      "data", "ranks", "all", "final", 1));
    fjob_process (job);
}

static void uris_cb (struct fctx *ctx, int rc, void *arg);

/* A job's shells wait in cairnd (jobspec hold-start) for the word that
 * its guest namespace is there: for a new job cairnd runs the prolog
 * while the module makes it. Said once cairnd was asked and the namespace
 * is made, after each start sent (a start cairnd did not know the job for
 * answers the word ENOENT, and the fresh start that follows needs it
 * again), and after a reconnect until answered (ready_pending). The word
 * opens that gate only: a hold for a shrink, or for the module's return
 * after a broker restart, still waits for its own resume (shrink). */
static void say_ready (struct fjob *job)
{
    if (!job->has_ns ||
        (job->state != FJOB_ASKING && job->state != FJOB_RUNNING))
        return;
    job->ready_pending = true;
    fjob_send_ready (job);
}

static void cairnd_error (struct fjob *job, int errnum, const char *errstr)
{
    char note[256];

    if (errnum == ENOENT && !job->fresh && job->state == FJOB_ASKING &&
        !job->jm_reattach) {
        /* cairnd never had it: start it, with each rank's broker URI */
        uris_ensure (job->ctx, job->ranks, job->nranks, uris_cb, job);
        return;
    }
    if (errnum == ENOENT && job->jm_reattach)
        errstr = "cairnd has no record of this started job";
    if (errnum == EEXIST && job->fresh) { /* it got there first after all */
        cairnd_send_start (job, true, 0);
        say_ready (job);
        return;
    }
    snprintf (note, sizeof (note), "cairnd refused the job: %s",
              errstr ? errstr : strerror (errnum));
    fail (job, note);
}

/* A step of cairnd's kill escalation (a `kill` notice, one per shell):
 * job-exec's per-job figures and its log line, once per step. */
static void kill_notice (struct fjob *job, const json_t *data)
{
    const char *reason = "kill";
    int signum = 0, kc = 0, ksc = 0;
    double kt = 0;

    if (json_unpack ((json_t *)data, "{s?s s?i s?i s?i s?F}", "reason", &reason,
                     "signum", &signum, "kill_count", &kc, "kill_shell_count",
                     &ksc, "kill_timeout", &kt) < 0)
        return;
    bool shell = !strcmp (reason, "kill-shell");
    if (shell ? ksc > job->kill_shell_count : kc > job->kill_count)
        flux_log (job->ctx->h, LOG_DEBUG, "Sending %s to %sjob %s",
                  signame_str (signum) ? signame_str (signum) : "a signal",
                  shell ? "job shell for " : "", job->f58);
    if (kc > job->kill_count)
        job->kill_count = kc;
    if (ksc > job->kill_shell_count)
        job->kill_shell_count = ksc;
    if (kt > 0)
        job->kill_timeout = kt;
}

/* cairnd's answer to a relayed request (fjob_relay_request): the
 * requester's answer. */
static void relay_cb (const json_t *msg, void *arg)
{
    struct fjob *job = arg;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    for (size_t i = 0; i < job->nrelays; i++) {
        struct relay *r = &job->relays[i];
        if (r->matchtag != m.matchtag)
            continue;
        if (m.errnum)
            flux_respond_error (job->ctx->h, r->msg, (int)m.errnum, m.errstr);
        else {
            /* job-exec's line, which sites and flux-core's t2292 read */
            if (r->expiration >= 0) {
                flux_log (job->ctx->h, LOG_DEBUG,
                          "updated expiration of %s to %.2f", job->f58,
                          r->expiration);
                (void)json_unpack (m.payload, "{s?F}", "expiration",
                                   &job->expiration);
            }
            flux_respond (job->ctx->h, r->msg, NULL);
        }
        flux_msg_decref (r->msg);
        job->relays[i] = job->relays[--job->nrelays];
        return;
    }
}

/* A response on the job's stream from cairnd (cairnd_send_start): taken
 * in, counted for `since`, queued and handled in order (fjob_stream.c).
 * The job may be released and freed by the call. */
static void stream_cb (const json_t *msg, void *arg)
{
    struct fjob *job = arg;
    struct cconn_msg m;
    const char *type = NULL;

    cconn_msg_split (msg, &m);
    if (m.errnum) {
        cairnd_error (job, (int)m.errnum, m.errstr);
        return;
    }
    if (json_unpack (m.payload, "{s:s}", "type", &type) < 0)
        return;
    struct stream_resp r = stream_resp_of (type);
    if (r.type == STREAM_REATTACHED) {
        /* the job under this id must be this Flux job (adopt.h): a job
         * another user started there first is never followed */
        char note[256];
        if (adopt_check (json_object_get (m.payload, "data"), job->userid,
                         job->f58, note, sizeof (note)) < 0) {
            job->conflict = true;
            fail (job, note);
            return;
        }
    }
    if (job->state == FJOB_ASKING) {
        /* a fresh start's stream opens with `accepted`; a reattach's with
         * `reattached`. Anything before is about another request (the
         * exception of a duplicate start), not ours. */
        if (stream_resp_kind (r) != STREAM_KIND_OPENING)
            return;
        if (!fjob_move (job, FJOB_EV_ATTACH))
            return;
        flux_watcher_stop (job->bound);
    }
    if (r.type == STREAM_KILL) {
        kill_notice (job, json_object_get (m.payload, "data"));
        return;
    }
    if (stream_resp_counts (r))
        job->nresp++;
    json_array_append (job->queue, m.payload);
    fjob_process (job);
    return;
}

/* ---- from the job-manager and the shells ---- */

void fjob_exception (struct fjob *job,
                     const char *type,
                     int severity,
                     int wait_status)
{
    json_t *p;

    if (severity != 0 || job->state == FJOB_DONE || job->conflict)
        return; /* as job-exec: only fatal exceptions stop a job */
    fshell_stop (job->watch);
    p = json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)job->id, "type", type,
                   "severity", severity, "note", "");
    /* the wait status a shell puts in its exception is a task's: the
     * job's is that of a shell that exited with the task's code, as
     * job-exec reports it (128 + signal for a signal) */
    if (wait_status >= 0) {
        int code = WIFSIGNALED (wait_status) ? 128 + WTERMSIG (wait_status)
                                             : WEXITSTATUS (wait_status);
        json_object_set_new (p, "wait_status", json_integer (code << 8));
    }
    /* cairnd journals it and answers with the same exception on the job's
     * stream: the job-manager has it already, so that echo is dropped */
    if (p && cconn_rpc (job->ctx->cc, "exception", p, 0, NULL, NULL) > 0)
        json_array_append_new (job->echo, json_string (type));
    else
        flux_log_error (job->ctx->h, "job %s: exception to cairnd", job->f58);
    json_decref (p);
}

void fjob_barrier (struct fjob *job, const flux_msg_t *msg, uint32_t rank)
{
    fshell_barrier (job->watch, msg, rank);
}

void fjob_relay_request (struct fjob *job,
                         const char *topic,
                         const flux_msg_t *msg,
                         json_t *payload)
{
    struct fctx *ctx = job->ctx;
    struct relay *r;
    int64_t mt;

    if (job->conflict) { /* another's job has this id in cairnd */
        flux_respond_error (ctx->h, msg, ESRCH,
                            "the job does not run under cairnd (job id "
                            "conflict)");
        return;
    }
    r = realloc (job->relays, (job->nrelays + 1) * sizeof (*r));
    if (!r) {
        flux_respond_error (ctx->h, msg, ENOMEM, NULL);
        return;
    }
    job->relays = r;
    if ((mt = cconn_rpc (ctx->cc, topic, payload, 0, relay_cb, job)) < 0) {
        flux_respond_error (ctx->h, msg, errno == ENOTCONN ? EAGAIN : errno,
                            errno == ENOTCONN ? "cairnd is not connected"
                                              : NULL);
        return;
    }
    double expiration = -1;
    if (!strcmp (topic, "expiration"))
        (void)json_unpack (payload, "{s:F}", "expiration", &expiration);
    job->relays[job->nrelays++] = (struct relay){
        .matchtag = mt, .msg = flux_msg_incref (msg), .expiration = expiration};
}

char *fjob_broker_ranks (const struct fjob *job,
                         const char *shell_ranks,
                         char *err,
                         size_t errsz)
{
    struct cairn_error e = {0};
    struct idset *in = idset_decode (shell_ranks, &e), *out = NULL;
    char *s = NULL;

    if (!in) {
        snprintf (err, errsz, "ranks: %s", e.text);
        errno = EINVAL;
        return NULL;
    }
    if (!(out = idset_create ()))
        goto done;
    size_t n = job->shells ? idset_count (job->shells) : 0;
    /* both sets ascend: one walk of the shells, not idset_nth per rank */
    uint32_t pos = 0;
    uint32_t broker = n ? idset_first (job->shells) : IDSET_INVALID_ID;
    for (uint32_t i = idset_first (in); i != IDSET_INVALID_ID;
         i = idset_next (in, i)) {
        if (i >= n) {
            snprintf (err, errsz,
                      "ranks: shell rank %u is not one of the job's %zu "
                      "shells",
                      (unsigned)i, n);
            errno = EINVAL;
            goto done;
        }
        for (; pos < i; pos++)
            broker = idset_next (job->shells, broker);
        if (idset_set (out, broker) < 0)
            goto done;
    }
    s = idset_encode (out);
done:
    idset_destroy (in);
    idset_destroy (out);
    return s;
}

json_t *fjob_stats (const struct fjob *job)
{
    json_t *o =
        json_pack ("{s:s s:i s:i s:i s:i s:i s:i s:i s:i}", "state",
                   fjob_state_name (job->state), "started", job->relayed_start,
                   "attached", fjob_attached (job), "responses", job->nresp,
                   "queued", (int)json_array_size (job->queue),
                   "barrier_entered", (int)fshell_nwaiting (job->watch),
                   "total_shells", (int)fshell_count (job->watch), "kill_count",
                   job->kill_count, "kill_shell_count", job->kill_shell_count);
    if (o && job->kill_timeout > 0)
        json_object_set_new (o, "kill_timeout", json_real (job->kill_timeout));
    if (o && job->expiration > 0)
        json_object_set_new (o, "expiration", json_real (job->expiration));
    return o;
}

/* ---- start ---- */

static void uris_cb (struct fctx *ctx, int rc, void *arg)
{
    struct fjob *job = arg;

    if (job->state == FJOB_FAILED)
        return; /* given up while the brokers were asked */
    if (rc < 0 && !job->asked && cconn_up (ctx->cc)) {
        /* a job started before a broker restart, whose start Flux hands
         * over again without the reattach flag, while the other brokers
         * are not back: cairnd runs it, and needs no URIs */
        if (!fjob_move (job, FJOB_EV_READY))
            return;
        cairnd_send_start (job, true, 0);
        say_ready (job);
        return;
    }
    if (rc < 0) {
        char note[128];
        snprintf (note, sizeof (note), "cannot find the brokers' URIs: %s",
                  strerror (errno));
        fail (job, note);
        return;
    }
    if (!fjob_move (job, FJOB_EV_READY))
        return;
    if (!cconn_up (ctx->cc))
        return; /* fjob_cairnd_state asks when cairnd is back */
    cairnd_send_start (job, false, 0);
    say_ready (job);
}

static void ns_cb (flux_future_t *f, void *arg)
{
    struct fjob *job = arg;
    int rc = flux_future_get (f, NULL);
    char note[128];

    snprintf (note, sizeof (note), "failed to create guest ns: %s",
              strerror (errno));
    flux_future_destroy (f);
    job->ns = NULL;
    if (rc < 0) {
        /* cairnd may have the job (asked while this ran): it ends it, and
         * the stream brings the exception and the release */
        if (job->state != FJOB_FAILED &&
            (job->matchtag != 0 || fjob_attached (job)))
            fjob_raise_fatal (job, note);
        else if (job->state != FJOB_FAILED)
            fail (job, note);
        fjob_process (job);
        return;
    }
    job->has_ns = true;
    if (job->jm_reattach && job->state == FJOB_PREPARING &&
        fjob_move (job, FJOB_EV_READY)) {
        if (cconn_up (job->ctx->cc))
            cairnd_send_start (job, true, 0);
    }
    say_ready (job);
    fjob_process (job); /* what cairnd said meanwhile */
}

/* A new job cairnd has not taken within start_timeout: say why in its
 * eventlog rather than leave it in RUN. Should cairnd have taken it after
 * all (its answer lost with the connection), the job is over in Flux by
 * then, and the module ends it in cairnd when they meet (orphan.h). */
static void
bound_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct fjob *job = arg;
    int e = cconn_last_errno (job->ctx->cc);
    char note[256];

    if (job->state != FJOB_PREPARING && job->state != FJOB_ASKING)
        return; /* taken, or over already */
    snprintf (note, sizeof (note),
              "cairnd did not take the job within %gs (cairnd at %s: %s)",
              job->ctx->start_timeout, cconn_path (job->ctx->cc),
              e                         ? strerror (e)
              : cconn_up (job->ctx->cc) ? "connected, no answer"
                                        : "not connected");
    fail (job, note);
}

static int make_ns (struct fjob *job)
{
    if (!(job->ns = guest_create (job->ctx->h, job->id, job->userid,
                                  job->jm_reattach)) ||
        flux_future_then (job->ns, -1, ns_cb, job) < 0) {
        flux_future_destroy (job->ns);
        job->ns = NULL;
        fail (job, "failed to create guest ns");
        return -1;
    }
    return 0;
}

/* Tests: the namespace waits while the file TESTENV_HOLD_NS names exists. */
static void
ns_wait_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct fjob *job = arg;
    if (fjob_test_held (TESTENV_HOLD_NS))
        return;
    flux_watcher_destroy (job->ns_wait);
    job->ns_wait = NULL;
    (void)make_ns (job);
}

void fjob_begin (struct fjob *job)
{
    if (!fjob_move (job, FJOB_EV_BEGIN))
        return;
    job->ctx->nstarted++;
    /* a job Flux restarts ran under cairnd already: it is never failed
     * for waiting, whatever cairnd's downtime */
    if (!job->jm_reattach && job->ctx->start_timeout > 0 &&
        (job->bound = flux_timer_watcher_create (flux_get_reactor (job->ctx->h),
                                                 job->ctx->start_timeout, 0,
                                                 bound_cb, job)))
        flux_watcher_start (job->bound);
    if (job->nranks == 0) {
        fail (job, "R has no ranks, or R_lite cannot be read");
        return;
    }
    /* In a root instance, another user's job (multiuser) runs only where
     * the instance names an IMP, as with job-exec (bulk-exec's exec_init),
     * which fails it otherwise: cairnd trusts a root client with any uid,
     * and would run it as that user with no IMP to check J (issue 51). An
     * unprivileged instance's multiuser jobs go through cairnd's own
     * flux.imp (trust.h T1), whatever [exec] imp says (README, the system
     * instance). A job Flux hands over again was started under an earlier
     * config and is left running. */
    if (!job->jm_reattach && getuid () == 0 && job->userid != 0 &&
        !job->ctx->conf.imp) {
        char note[192];
        snprintf (note, sizeof (note),
                  "failed to initialize implementation: unable to run "
                  "multiuser job (uid %u, the instance's %u) with no IMP "
                  "configured",
                  (unsigned)job->userid, (unsigned)getuid ());
        fail (job, note);
        return;
    }
    if (fjob_test_held (TESTENV_HOLD_NS) &&
        (job->ns_wait = flux_timer_watcher_create (
             flux_get_reactor (job->ctx->h), 0.05, 0.05, ns_wait_cb, job)))
        flux_watcher_start (job->ns_wait);
    else if (make_ns (job) < 0)
        return;
    /* A job Flux hands over again: its namespace, then cairnd (ns_cb),
     * since a job cairnd already runs needs no broker URIs (after a
     * broker restart, the other brokers may not be back yet). Any other:
     * started at once, with each rank's broker URI, while the namespace
     * is made: cairnd runs the prolog meanwhile and holds the shells
     * until told the namespace is there (say_ready). Should cairnd have
     * it after all (a job that was in its prolog when the broker
     * restarted comes without the reattach flag), it answers EEXIST and
     * the module attaches (cairnd_error); should the URIs be out of
     * reach, cairnd is asked then (uris_cb). */
    if (!job->jm_reattach)
        uris_ensure (job->ctx, job->ranks, job->nranks, uris_cb, job);
}

/* The broker ranks of R, ascending. */
static int ranks_of (struct fjob *job)
{
    size_t i;
    json_t *e;
    struct idset *all = idset_create ();

    if (!all)
        return -1;
    json_array_foreach (
        json_object_get (json_object_get (job->R, "execution"), "R_lite"), i, e)
    {
        const char *s = json_string_value (json_object_get (e, "rank"));
        struct idset *one = s ? idset_decode (s, NULL) : NULL;
        if (!one || idset_add (all, one) < 0) {
            idset_destroy (one);
            idset_destroy (all);
            errno = EINVAL;
            return -1;
        }
        idset_destroy (one);
    }
    job->nranks = idset_count (all);
    if (job->nranks == 0 ||
        !(job->ranks = calloc (job->nranks, sizeof (uint32_t)))) {
        idset_destroy (all);
        errno = job->nranks ? ENOMEM : EINVAL;
        return -1;
    }
    i = 0;
    for (uint32_t r = idset_first (all); r != IDSET_INVALID_ID;
         r = idset_next (all, r))
        job->ranks[i++] = r;
    job->shells = all;
    return 0;
}

struct fjob *fjob_create (struct fctx *ctx,
                          const struct fjob_ops *ops,
                          void *arg,
                          const flux_msg_t *msg,
                          flux_jobid_t id,
                          uint32_t userid,
                          json_t *jobspec,
                          json_t *R,
                          bool reattach)
{
    struct fjob *job = calloc (1, sizeof (*job));

    if (!job)
        return NULL;
    job->ctx = ctx;
    job->ops = *ops;
    job->arg = arg;
    job->id = id;
    job->userid = userid;
    job->jm_reattach = reattach;
    job->skip_pending = true;
    job->jobspec = json_incref (jobspec);
    job->R = json_incref (R);
    job->req = flux_msg_incref (msg);
    if (flux_job_id_encode (id, "f58", job->f58, sizeof (job->f58)) < 0)
        snprintf (job->f58, sizeof (job->f58), "%ju", (uintmax_t)id);
    if (!(job->queue = json_array ()) || !(job->skip = json_object ()) ||
        !(job->echo = json_array ()))
        goto error;
    if (ranks_of (job) < 0)
        job->nranks = 0; /* fjob_begin fails it, on the stream */
    /* a job handed over again (a reload) is past its first barrier, or
     * is ended as unrecoverable (exec_eventlog_cb) */
    if (!(job->watch = fshell_create (ctx->h, &ctx->conf, id, userid, job->f58,
                                      job->ranks, job->nranks, reattach,
                                      fjob_shell_fatal, job)))
        goto error;
    /* a job's own barrier timeout, as job-exec's bulk-exec takes it */
    double bt;
    if (json_unpack (jobspec, "{s:{s:{s:{s:{s:F}}}}}", "attributes", "system",
                     "exec", "bulkexec", "barrier-timeout", &bt) == 0 &&
        bt >= 0 && fshell_set_barrier_timeout (job->watch, bt) < 0)
        goto error;
    return job;
error:
    fjob_destroy (job);
    errno = ENOMEM;
    return NULL;
}

void fjob_destroy (struct fjob *job)
{
    if (!job)
        return;
    int saved = errno;
    fshell_destroy (job->watch);
    /* a job that failed while its brokers were asked is freed before
     * they answer */
    uris_cancel (job->ctx, job);
    /* nothing cairnd says after this may reach the job */
    cconn_rpc_cancel (job->ctx->cc, job->matchtag);
    cconn_rpc_cancel (job->ctx->cc, job->resume_mt);
    cconn_rpc_cancel (job->ctx->cc, job->ready_mt);
    for (size_t i = 0; i < job->nrelays; i++) {
        cconn_rpc_cancel (job->ctx->cc, job->relays[i].matchtag);
        flux_respond_error (job->ctx->h, job->relays[i].msg, ENOSYS, NULL);
        flux_msg_decref (job->relays[i].msg);
    }
    flux_watcher_destroy (job->hold);
    flux_watcher_destroy (job->bound);
    flux_watcher_destroy (job->ns_wait);
    brokers_wait_destroy (job->bw);
    flux_future_destroy (job->step);
    flux_future_destroy (job->ns);
    flux_msg_decref (job->req);
    json_decref (job->jobspec);
    json_decref (job->R);
    json_decref (job->queue);
    json_decref (job->skip);
    json_decref (job->echo);
    shellout_destroy (job->out);
    json_decref (job->final);
    free (job->relays);
    free (job->ranks);
    idset_destroy (job->shells);
    free (job);
    errno = saved;
}
