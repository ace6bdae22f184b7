/* fjob.c - see fjob.h
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

#include "core/testenv.h"
#include "core/idset.h"
#include "core/job.h"
#include "core/signame.h"
#include "flux/adopt.h"
#include "flux/brokers.h"
#include "flux/fctx.h"
#include "flux/fjob.h"
#include "flux/fshell.h"
#include "flux/guest.h"
#include "flux/jmevent.h"
#include "flux/resync.h"
#include "flux/shellout.h"
#include "flux/shrink.h"

struct relay {
    int64_t matchtag;
    const flux_msg_t *msg;
    double expiration; /* an `expiration` request's, else -1 */
};

struct fjob {
    struct fctx *ctx;
    const flux_msg_t *req; /* the job-manager's start request */
    flux_jobid_t id;
    uint32_t userid;
    json_t *jobspec, *R;
    char f58[32];
    uint32_t *ranks; /* broker ranks of R, ascending */
    size_t nranks;
    bool jm_reattach;  /* the job-manager's request had reattach */
    bool attached;     /* cairnd accepted or reattached this job */
    bool fresh;        /* our stream is a fresh start (not a reattach) */
    bool relayed_start; /* `start` or `reattached` went to the job-manager */
    int64_t matchtag;  /* current cairnd stream, 0 = none */
    int nresp;         /* responses received on it, for `since` */
    int kill_count;    /* cairnd's kill notices: the escalation's */
    int kill_shell_count; /* figures, job-exec's per-job stats */
    double kill_timeout;  /* (0 until the first notice) */
    double expiration;    /* the time limit in force (cairnd's, with its
                             start delay), 0 = none or not known */
    double t_restart;     /* when this module took over a job that ran
                             through a broker restart, 0 = none */
    bool lost_contact;    /* a shell lived through it: exception raised */
    json_t *queue;     /* cairnd responses not yet handled, in order */
    json_t *skip;      /* name -> how many the job's eventlog already has */
    json_t *echo;      /* exception types we passed to cairnd */
    flux_future_t *step; /* the handling of queue[0], when asynchronous */
    flux_future_t *ns;   /* guest namespace creation */
    struct fshell *watch; /* the shells' barrier and ends (fshell.h) */
    struct relay *relays;
    size_t nrelays;
    bool skip_pending; /* the first `reattached`: read the eventlog */
    bool has_ns;       /* the guest namespace exists */
    bool ready;        /* namespace done: cairnd may be asked */
    bool failed;       /* given up: cairnd is not asked again */
    bool conflict;     /* cairnd's job of this id is not this one (adopt.h):
                          nothing of the Flux job's may reach it */
    bool released;
    json_t *final;     /* data of the final release being sent */
    flux_watcher_t *hold; /* tests: the final release held (final_cb) */
    struct idset *shells; /* broker ranks running a shell: shell rank i is
                             the i-th (all of R's until a shrink) */
    struct brokers_wait *bw; /* before a resume: the shells' brokers */
    flux_watcher_t *bound;   /* a new job not taken by cairnd in time fails
                                (fctx start_timeout) */
    bool resume_pending; /* R is shrunk: cairnd must hear `resume` */
    int64_t resume_mt;   /* matchtag of the `resume` sent, 0 = none */
    struct shellout *out; /* the shells' output posted (shellout.h); NULL:
                             not asked for (a reattach after a module
                             load, which knows not what was posted) */
};

static void process (struct fjob *job);

flux_jobid_t fjob_id (const struct fjob *job)
{
    return job->id;
}

uint32_t fjob_userid (const struct fjob *job)
{
    return job->userid;
}

int64_t fjob_matchtag (const struct fjob *job)
{
    return job->matchtag;
}

/* ---- answers to the job-manager ---- */

static void jm_respond (struct fjob *job, const char *type, json_t *data_new)
{
    flux_t *h = job->ctx->h;
    if (!data_new)
        data_new = json_object ();
    if (flux_respond_pack (h, job->req, "{s:I s:s s:o}", "id",
                           (json_int_t)job->id, "type", type, "data",
                           data_new) < 0)
        flux_log_error (h, "job %s: respond %s", job->f58, type);
}

static void jm_exception (struct fjob *job, int severity, const char *type,
                          const char *note)
{
    jm_respond (job, "exception",
                json_pack ("{s:i s:s s:s}", "severity", severity, "type", type,
                           "note", note ? note : ""));
}

/* Build a response to a NORESPONSE request by hand: flux_respond() sends
 * nothing for those, and the shells match the reply by topic. */
void fjob_barrier_reply (flux_t *h, const flux_msg_t *req, int errnum)
{
    uint32_t mt = 0;
    flux_msg_t *m = flux_msg_copy (req, false);

    if (!m)
        return;
    (void)flux_msg_get_matchtag (req, &mt);
    if (flux_msg_set_type (m, FLUX_MSGTYPE_RESPONSE) < 0 ||
        flux_msg_clear_flag (m, FLUX_MSGFLAG_NORESPONSE) < 0 ||
        flux_msg_set_matchtag (m, mt) < 0 ||
        flux_msg_set_userid (m, FLUX_USERID_UNKNOWN) < 0 ||
        flux_msg_set_rolemask (m, FLUX_ROLE_NONE) < 0 ||
        (errnum && flux_msg_set_errnum (m, errnum) < 0) ||
        flux_send_new (h, &m, 0) < 0)
        flux_log_error (h, "shell-barrier reply");
    flux_msg_destroy (m);
}

static void barrier_release (struct fjob *job, int errnum)
{
    fshell_release (job->watch, errnum);
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

    (void)json_unpack (job->jobspec,
                       "{s?{s?{s?F s?{s?s s?i}}}}", "attributes", "system",
                       "duration", &duration, "exec", "job_shell", &shell,
                       "prolog-failures-allowed", &pfa);
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
        if (json_object_set_new (renv, r,
                                 json_pack ("{s:s}", "FLUX_URI",
                                            ctx->uris[job->ranks[i]])) < 0)
            goto done;
    }
    /* hold-on-shrink: flux-shell sizes the job from R, so after a
     * tolerated prolog failure cairnd waits until R is shrunk (shrink.h) */
    js = json_pack ("{s:i s:[] s:[{s:[ss] s:s s:{s:i}}]"
                    " s:{s:{s:f s:O s:{s:i} s:{s:O s:s s:b s:b}}}}",
                    "version", 1, "resources", "tasks", "command", shell, id,
                    "slot", "task", "count", "per_slot", 1, "attributes",
                    "system", "duration", duration, "environment", env, "exec",
                    "prolog-failures-allowed", pfa, "cairn", "rank-environment",
                    renv, "client", FJOB_CLIENT, "hold-on-shrink", 1,
                    "shell-leader", 1);
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

static void cairnd_send_start (struct fjob *job, bool reattach, int since)
{
    struct fctx *ctx = job->ctx;
    json_t *p;

    job->matchtag = cconn_matchtag (ctx->cc);
    job->fresh = !reattach;
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
    if (!p || cconn_send (ctx->cc, "start", job->matchtag, p) < 0) {
        if (errno != ENOTCONN)
            flux_log_error (ctx->h, "job %s: start to cairnd", job->f58);
        job->matchtag = 0; /* fjob_cairnd_state (up) will try again */
    }
    json_decref (p);
}

/* Tell cairnd the job's R is shrunk. Sent again after a reconnect until
 * answered: cairnd's `resume` is idempotent. */
static void send_resume (struct fjob *job)
{
    json_t *p = json_pack ("{s:I}", "id", (json_int_t)job->id);

    job->resume_mt = cconn_matchtag (job->ctx->cc);
    if (!p || cconn_send (job->ctx->cc, "resume", job->resume_mt, p) < 0) {
        if (errno != ENOTCONN)
            flux_log_error (job->ctx->h, "job %s: resume", job->f58);
        job->resume_mt = 0;
    }
    json_decref (p);
}

void fjob_cairnd_state (struct fjob *job, bool up)
{
    if (!up) {
        job->matchtag = 0; /* that stream is gone with the connection */
        job->resume_mt = 0;
        return;
    }
    if (!job->ready || job->failed || job->released)
        return; /* not that far yet, or nothing to ask */
    cairnd_send_start (job, true, job->attached ? job->nresp : 0);
    if (job->resume_pending)
        send_resume (job);
}

/* The job cannot go on: what job-exec does for a fatal error of its own.
 * Whatever the queue holds still goes out first. */
static void fail (struct fjob *job, const char *note)
{
    flux_log (job->ctx->h, LOG_ERR, "job %s: %s", job->f58, note);
    job->failed = true;
    job->matchtag = 0;
    json_array_append_new (job->queue,
                           json_pack ("{s:s s:{s:i s:s s:s}}", "type",
                                      "exception", "data", "severity", 0,
                                      "type", "exec", "note", note));
    json_array_append_new (job->queue,
                           json_pack ("{s:s s:{s:s s:b}}", "type", "release",
                                      "data", "ranks", "all", "final", 1));
    process (job);
}

static void uris_cb (struct fctx *ctx, int rc, void *arg);

static void cairnd_error (struct fjob *job, int errnum, const char *errstr)
{
    char note[256];

    if (errnum == ENOENT && !job->fresh && !job->attached &&
        !job->jm_reattach) {
        /* cairnd never had it: start it, with each rank's broker URI */
        fctx_uris (job->ctx, job->ranks, job->nranks, uris_cb, job);
        return;
    }
    if (errnum == ENOENT && job->jm_reattach)
        errstr = "cairnd has no record of this started job";
    if (errnum == EEXIST && job->fresh) { /* it got there first after all */
        cairnd_send_start (job, true, 0);
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

bool fjob_cairnd_message (struct fjob *job, const json_t *msg)
{
    struct cconn_msg m;
    const char *type = NULL;

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
        return true;
    }
    if (m.matchtag == job->resume_mt && m.matchtag != 0) {
        if (m.errnum)
            flux_log (job->ctx->h, LOG_ERR, "job %s: resume: %s", job->f58,
                      m.errstr ? m.errstr : strerror ((int)m.errnum));
        job->resume_pending = false;
        job->resume_mt = 0;
        return true;
    }
    if (m.matchtag != job->matchtag || m.matchtag == 0)
        return false; /* not ours, or a stream we gave up */
    if (m.errnum) {
        cairnd_error (job, (int)m.errnum, m.errstr);
        return true;
    }
    if (json_unpack (m.payload, "{s:s}", "type", &type) < 0)
        return true;
    if (!strcmp (type, "reattached")) {
        /* the job under this id must be this Flux job (adopt.h): a job
         * another user started there first is never followed */
        char note[256];
        if (adopt_check (json_object_get (m.payload, "data"), job->userid,
                         job->f58, note, sizeof (note)) < 0) {
            job->conflict = true;
            fail (job, note);
            return true;
        }
    }
    if (!job->attached) {
        /* a fresh start's stream opens with `accepted`; a reattach's with
         * `reattached`. Anything before is about another request (the
         * exception of a duplicate start), not ours. */
        if (strcmp (type, "accepted") != 0 && strcmp (type, "reattached") != 0)
            return true;
        job->attached = true;
        flux_watcher_stop (job->bound);
    }
    if (!strcmp (type, "kill")) {
        kill_notice (job, json_object_get (m.payload, "data"));
        return true;
    }
    if (job_stream_counts (type))
        job->nresp++;
    json_array_append (job->queue, m.payload);
    process (job);
    return true;
}

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
    process (job);
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
        jm_respond (job, "reattached", NULL);
        job->relayed_start = true;
    }
    json_array_remove (job->queue, 0);
    process (job);
}

/* Send cairnd a fatal exec exception for the job; with echo, its copy on
 * the stream is dropped (Flux has it already). */
static void raise_to_cairnd (struct fjob *job, const char *note, bool echo)
{
    json_t *p = json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)job->id,
                           "type", "exec", "severity", 0, "note", note);

    flux_log (job->ctx->h, LOG_ERR, "job %s: %s", job->f58, note);
    if (!p || cconn_send (job->ctx->cc, "exception",
                          cconn_matchtag (job->ctx->cc), p) < 0)
        flux_log_error (job->ctx->h, "job %s: exception", job->f58);
    else if (echo)
        json_array_append_new (job->echo, json_string ("exec"));
    json_decref (p);
}

/* End the job with a fatal exec exception, through cairnd, which journals
 * it, stops what runs and sends it back on the stream: that copy is the
 * one Flux gets. */
static void raise_fatal (struct fjob *job, const char *note)
{
    raise_to_cairnd (job, note, false);
}

/* fshell.h's verdicts: fatal through cairnd, like the module's own. */
static void shell_fatal (void *arg, const char *note)
{
    struct fjob *job = arg;

    fshell_stop (job->watch);
    raise_fatal (job, note);
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
        raise_fatal (job, "job shells were in their start barrier when "
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
    json_t *seen = resync_take_seen (job->ctx, job->id);
    const char *name;
    json_t *v;
    json_object_foreach (seen, name, v) {
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
 * at once (job->released). */
static flux_future_t *final_release (struct fjob *job, json_t *data)
{
    flux_future_t *f;

    barrier_release (job, EIO);
    json_decref (job->final);
    job->final = json_incref (data);
    if (job->has_ns && (f = guest_finish (job->ctx->h, job->id)))
        return f;
    jm_respond (job, "release", json_incref (data));
    job->released = true;
    return NULL;
}

/* Every broker of the job's shells answers: cairnd may start them. */
static void brokers_up (void *arg)
{
    struct fjob *job = arg;
    job->resume_pending = true;
    send_resume (job);
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
        raise_fatal (job, note);
    } else {
        /* after a broker restart, the other brokers come back after this
         * module: the shells would fail without them (brokers.h) */
        brokers_wait_destroy (job->bw);
        if (!(job->bw =
                  brokers_wait (job->ctx->h, job->shells, brokers_up, job)))
            brokers_up (job);
    }
    flux_future_destroy (f);
    job->step = NULL;
    json_array_remove (job->queue, 0);
    process (job);
}

/* cairnd holds the job's shells after a tolerated prolog failure: the
 * ranks in data run, so R is shrunk to them first (shrink.h). */
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
    if (!ranks || fshell_keep (job->watch, ranks) < 0 ||
        !(f = shrink_commit (job->ctx->h, job->id, job->R, ranks, err,
                             sizeof (err)))) {
        raise_fatal (job, err[0] ? err : "hold without ranks");
        return NULL;
    }
    if (flux_future_then (f, -1, shrunk_cb, job) < 0) {
        flux_future_destroy (f);
        raise_fatal (job, "cannot wait for the KVS commit");
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
    jm_exception (job, 0, "exec", note);
    raise_to_cairnd (job, note, true);
}

/* Handle queue[0]. Returns a future when the handling goes on
 * asynchronously (the next item waits for it), else NULL. */
static flux_future_t *handle (struct fjob *job, const json_t *item)
{
    flux_t *h = job->ctx->h;
    const char *type = json_string_value (json_object_get (item, "type"));
    json_t *data = json_object_get (item, "data");
    flux_future_t *f = NULL;
    char key[128];

    if (!type)
        return NULL;
    if (!strcmp (type, "reattached")) {
        if (job->skip_pending) {
            /* first attach of this module: what does Flux have already? */
            job->skip_pending = false;
            if (flux_job_kvs_key (key, sizeof (key), job->id, "eventlog") < 0 ||
                !(f = flux_kvs_lookup (h, NULL, 0, key)) ||
                flux_future_then (f, -1, eventlog_cb, job) < 0) {
                flux_future_destroy (f);
                return NULL;
            }
            job->step = f;
            return f;
        }
        return NULL;
    }
    if (!strcmp (type, "accepted")) {
        /* a fresh start: every later reattach asks only for what came
         * after what was received (`since`), so nothing is to be skipped;
         * counting the eventlog then would drop a final release behind an
         * earlier partial one */
        job->skip_pending = false;
        return NULL;
    }
    if (!strcmp (type, "start")) /* whether or not Flux has it already */
        (void)json_unpack (data, "{s?F}", "expiration", &job->expiration);
    if (skipped (job, type))
        return NULL;
    if (!strcmp (type, "start")) {
        if (!job->relayed_start)
            jm_respond (job, "start", NULL);
        job->relayed_start = true;
    } else if (!strcmp (type, "exception")) {
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
        jm_exception (job, sev, t ? t : "exec", note);
        /* and log a prolog's or epilog's failure, as perilog.so does */
        if (t && (!strcmp (t, "prolog") || !strcmp (t, "epilog")))
            flux_log (h, sev == 0 ? LOG_ERR : LOG_WARNING, "job %s: %s",
                      job->f58, note ? note : t);
        free (full);
        if (sev == 0) {
            barrier_release (job, EIO);
            fshell_stop (job->watch);
        }
    } else if (!strcmp (type, "finish")) {
        json_t *st = json_object_get (data, "status");
        json_t *c = json_pack ("{s:O}", "status", st);
        flux_future_t *fc = guest_post (h, job->id, "complete", c);
        json_decref (c);
        flux_future_destroy (fc); /* RPCs go out in order; no need to wait */
        jm_respond (job, "finish", json_pack ("{s:O}", "status", st));
        barrier_release (job, EIO);
        fshell_stop (job->watch);
        /* partial release: the ranks go to housekeeping now, and each
         * comes back from there when cairnd's epilog on it is done */
        if (job->ctx->partial) {
            json_t *all = json_pack ("{s:s s:b}", "ranks", "all", "final", 1);
            f = final_release (job, all);
            json_decref (all);
        }
    } else if (!strncmp (type, "epilog-", 7) && job->ctx->partial) {
        /* not posted: an epilog-start would hold the job's `free`, and
         * with it every rank, until the last epilog-finish */
    } else if (!strncmp (type, "prolog-", 7) || !strncmp (type, "epilog-", 7)) {
        f = jmevent_post_perilog (h, job->id, type, data);
    } else if (!strcmp (type, "output")) {
        json_t *c = job->out ? shellout_log (job->out, data) : NULL;
        if (c)
            f = guest_post (h, job->id, "log", c);
        json_decref (c);
    } else if (!strcmp (type, "shell-end")) {
        lost_contact (job, data);
        fshell_end (job->watch, data); /* cairnd's, not Flux's: not posted */
    } else if (!strcmp (type, "hold")) {
        return shrink (job, data);
    } else if (!strcmp (type, "drain")) {
        const char *ranks = NULL, *reason = "";
        if (json_unpack (data, "{s:s s?s}", "ranks", &ranks, "reason",
                         &reason) == 0) {
            /* in flux dmesg, as job-exec and perilog.so log their drains */
            flux_log (h, LOG_WARNING, "job %s: draining rank(s) %s: %s",
                      job->f58, ranks, reason);
            f = flux_rpc_pack (h, "resource.drain", 0, 0, "{s:s s:s s:s}",
                               "targets", ranks, "reason", reason, "mode",
                               "update");
        }
    } else if (!strcmp (type, "release")) {
        int final = 0;
        (void)json_unpack (data, "{s?b}", "final", &final);
        if (!final) {
            jm_respond (job, type, json_incref (data));
            return NULL;
        }
        /* one release of every rank says "all", as job-exec's */
        json_t *all = whole_job (job, data)
                          ? json_pack ("{s:s s:b}", "ranks", "all", "final", 1)
                          : NULL;
        f = final_release (job, all ? all : data);
        json_decref (all);
    }
    return f;
}

static void send_final (struct fjob *job)
{
    jm_respond (job, "release", json_incref (job->final));
    job->released = true;
    job->ctx->nreleased++;
    fctx_job_done (job->ctx, job);
}

/* Tests: while the file CAIRN_TEST_HOLD_RELEASE names exists, the final
 * release waits, so that a test can unload the module between a job's
 * finish and its release. */
static bool release_held (void)
{
    const char *hold = getenv (TESTENV_HOLD_RELEASE);
    return hold && *hold && access (hold, F_OK) == 0;
}

static void hold_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
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
        flux_log (job->ctx->h, LOG_ERR, "job %s: guest namespace: %s",
                  job->f58, strerror (errno));
    flux_future_destroy (f);
    job->step = NULL;
    if (release_held () &&
        (job->hold = flux_timer_watcher_create (
             flux_get_reactor (job->ctx->h), 0.05, 0.05, hold_cb, job))) {
        flux_watcher_start (job->hold);
        return;
    }
    send_final (job);
}

static void process (struct fjob *job)
{
    while (!job->step && !job->released && json_array_size (job->queue) > 0) {
        json_t *item = json_array_get (job->queue, 0);
        flux_future_t *f = handle (job, item);

        if (job->released) { /* final release sent without a namespace */
            fctx_job_done (job->ctx, job);
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

/* ---- from the job-manager and the shells ---- */

void fjob_exception (struct fjob *job,
                     const char *type,
                     int severity,
                     int wait_status)
{
    json_t *p;

    if (severity != 0 || job->released || job->conflict)
        return; /* as job-exec: only fatal exceptions stop a job */
    fshell_stop (job->watch);
    p = json_pack ("{s:I s:s s:i s:s}", "id", (json_int_t)job->id, "type",
                   type, "severity", severity, "note", "");
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
    if (p && cconn_send (job->ctx->cc, "exception",
                         cconn_matchtag (job->ctx->cc), p) == 0)
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
    mt = cconn_matchtag (ctx->cc);
    if (!r) {
        flux_respond_error (ctx->h, msg, ENOMEM, NULL);
        return;
    }
    job->relays = r;
    if (cconn_send (ctx->cc, topic, mt, payload) < 0) {
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
        json_pack ("{s:i s:i s:i s:i s:i s:i s:i s:i}", "started",
                   job->relayed_start, "attached", job->attached, "responses",
                   job->nresp, "queued", (int)json_array_size (job->queue),
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

    if (rc < 0) {
        char note[128];
        snprintf (note, sizeof (note), "cannot find the brokers' URIs: %s",
                  strerror (errno));
        fail (job, note);
        return;
    }
    if (cconn_up (ctx->cc))
        cairnd_send_start (job, false, 0);
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
        fail (job, note);
        return;
    }
    job->has_ns = true;
    /* cairnd first: a job it already runs needs no broker URIs (after a
     * broker restart, the other brokers may not be back yet) */
    job->ready = true;
    if (cconn_up (job->ctx->cc))
        cairnd_send_start (job, true, 0);
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

    if (job->attached || job->failed || job->released)
        return;
    snprintf (note, sizeof (note),
              "cairnd did not take the job within %gs (cairnd at %s: %s)",
              job->ctx->start_timeout, cconn_path (job->ctx->cc),
              e                         ? strerror (e)
              : cconn_up (job->ctx->cc) ? "connected, no answer"
                                        : "not connected");
    fail (job, note);
}

void fjob_begin (struct fjob *job)
{
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
    if (!(job->ns = guest_create (job->ctx->h, job->id, job->userid,
                                  job->jm_reattach)) ||
        flux_future_then (job->ns, -1, ns_cb, job) < 0) {
        flux_future_destroy (job->ns);
        job->ns = NULL;
        fail (job, "failed to create guest ns");
    }
}

/* The broker ranks of R, ascending. */
static int ranks_of (struct fjob *job)
{
    size_t i;
    json_t *e;
    struct idset *all = idset_create ();

    if (!all)
        return -1;
    json_array_foreach (json_object_get (json_object_get (job->R, "execution"),
                                         "R_lite"),
                        i, e)
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
    if (job->nranks == 0 || !(job->ranks = calloc (job->nranks,
                                                   sizeof (uint32_t)))) {
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
                                      shell_fatal, job)))
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
    for (size_t i = 0; i < job->nrelays; i++) {
        flux_respond_error (job->ctx->h, job->relays[i].msg, ENOSYS, NULL);
        flux_msg_decref (job->relays[i].msg);
    }
    flux_watcher_destroy (job->hold);
    flux_watcher_destroy (job->bound);
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
