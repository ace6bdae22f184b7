/* cairn_exec.c - cairn-exec.so, a Flux broker module that stands in for
 * job-exec: the job-manager hands it jobs (RFC 32) and it relays them to
 * cairnd, which journals and runs them. See cairn-exec(8).
 *
 * Loaded on rank 0 under job-exec's name:
 *   [modules.job-exec]
 *   module = "/usr/lib/cairn/cairn-exec.so"
 *   args = ["statedir=/var/lib/cairn"]
 * and, for many nodes, on the other ranks under another name (cairn-node,
 * from a modprobe.d file): there it is only the node's relay
 * (nodeagent.h); rank 0 relays for its cairnd as well (noderelay.h).
 *
 * The module holds no state that matters: cairnd has it all in its
 * journal. A broker restart or a module reload therefore loses nothing;
 * each job is reattached from cairnd when the job-manager sends it again.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flux/core.h>
#include <jansson.h>

#include "core/fsd.h"
#include "util/statedir.h"
#include "flux/cconn.h"
#include "flux/drainsync.h"
#include "flux/execconf.h"
#include "flux/fctx.h"
#include "flux/fjob.h"
#include "flux/fjobs.h"
#include "flux/fshell.h"
#include "flux/instance.h"
#include "flux/fversion.h"
#include "flux/nodeagent.h"
#include "flux/noderelay.h"
#include "flux/nodewatch.h"
#include "flux/orphan.h"
#include "flux/resync.h"
#include "flux/uris.h"

extern char **environ;

/* ---- jobs: what the module lends each (fjob_ops) ---- */

static void job_released (struct fjob *job, void *arg)
{
    struct fctx *ctx = arg;
    fjobs_remove (ctx->jobs, job);
}

static json_t *job_seen (flux_jobid_t id, void *arg)
{
    return resync_take_seen (arg, id);
}

static const struct fjob_ops job_ops = {
    .released = job_released,
    .seen = job_seen,
};

/* ---- cairnd ---- */

static void stats_flush (struct fctx *ctx);

static void cairnd_state (struct cconn *cc, bool up, void *arg)
{
    struct fctx *ctx = arg;

    if (!up)
        flux_log (ctx->h, LOG_ERR, "lost cairnd at %s; its jobs go on, "
                                   "reconnecting", cconn_path (cc));
    noderelay_cairnd_state (ctx->relay, up);
    nodewatch_cairnd_state (ctx->nodewatch, up);
    drainsync_cairnd_state (ctx->drainsync, up);
    for (size_t i = 0; i < fjobs_count (ctx->jobs); i++)
        fjob_cairnd_state (fjobs_nth (ctx->jobs, i), up);
    if (up) {
        resync_run (ctx);
        orphan_run (ctx);
    } else {
        resync_cancel_all (ctx);
        orphan_cancel_all (ctx);
        stats_flush (ctx);
    }
}

/* ---- requests ---- */

static void start_cb (flux_t *h,
                      flux_msg_handler_t *mh,
                      const flux_msg_t *msg,
                      void *arg)
{
    struct fctx *ctx = arg;
    json_int_t id;
    int userid, reattach;
    json_t *jobspec, *R;
    struct fjob *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:i s:o s:b s:o}", "id", &id,
                             "userid", &userid, "jobspec", &jobspec,
                             "reattach", &reattach, "R", &R) < 0) {
        /* not a job we can even name: EPROTO, as job-exec answers it
         * (from the job-manager, whose requests are well formed, such an
         * answer would end its exec interface) */
        flux_log_error (h, "start: malformed request");
        if (flux_respond_error (h, msg, EPROTO, NULL) < 0)
            flux_log_error (h, "start: respond");
        return;
    }
    if (fjobs_find (ctx->jobs, (flux_jobid_t)id)) {
        flux_log (h, LOG_ERR, "job %ju: a second start while one is in "
                              "flight; ignored", (uintmax_t)id);
        return;
    }
    if (!(job = fjob_create (ctx, &job_ops, ctx, msg, (flux_jobid_t)id,
                             (uint32_t)userid, jobspec, R, reattach)))
        goto nomem;
    if (fjobs_add (ctx->jobs, job) < 0) {
        fjob_destroy (job);
        goto nomem;
    }
    resync_hand_barriers (ctx, job);
    fjob_begin (job);
    return;
nomem:
    flux_log_error (h, "job %ju: start", (uintmax_t)id);
}

/* expiration and critical-ranks: answered with cairnd's answer */
static void relay_cb (flux_t *h,
                      flux_msg_handler_t *mh,
                      const flux_msg_t *msg,
                      void *arg)
{
    struct fctx *ctx = arg;
    const char *topic = NULL;
    json_t *payload;
    json_int_t id;
    struct fjob *job;

    if (flux_request_unpack (msg, &topic, "{s:I}", "id", &id) < 0 ||
        flux_request_unpack (msg, NULL, "o", &payload) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!(job = fjobs_find (ctx->jobs, (flux_jobid_t)id))) {
        flux_respond_error (h, msg, ENOENT, "job not found");
        return;
    }
    fjob_relay_request (job, strchr (topic, '.') + 1, msg, payload);
}

static void critical_ranks_cb (flux_t *h,
                               flux_msg_handler_t *mh,
                               const flux_msg_t *msg,
                               void *arg)
{
    struct fctx *ctx = arg;
    json_int_t id;
    const char *ranks;
    struct fjob *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:s}", "id", &id, "ranks",
                             &ranks) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!(job = fjobs_find (ctx->jobs, (flux_jobid_t)id))) {
        flux_respond_error (h, msg, ENOENT, "job not found");
        return;
    }
    if (flux_msg_authorize (msg, fjob_userid (job)) < 0) {
        flux_respond_error (h, msg, EPERM, NULL);
        return;
    }
    /* the caller (a sub-instance's broker) counts shell ranks; cairnd
     * knows the job's broker ranks */
    char err[128], *broker = fjob_broker_ranks (job, ranks, err, sizeof (err));
    json_t *p =
        broker ? json_pack ("{s:I s:s}", "id", id, "ranks", broker) : NULL;
    free (broker);
    if (!p) {
        flux_respond_error (h, msg, errno == EINVAL ? EINVAL : ENOMEM,
                            errno == EINVAL ? err : NULL);
        return;
    }
    fjob_relay_request (job, "critical-ranks", msg, p);
    json_decref (p);
}

static void barrier_cb (flux_t *h,
                        flux_msg_handler_t *mh,
                        const flux_msg_t *msg,
                        void *arg)
{
    struct fctx *ctx = arg;
    json_int_t id;
    int rank;
    struct fjob *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:i}", "id", &id, "rank",
                             &rank) < 0) {
        fshell_barrier_reply (h, msg, EPROTO);
        return;
    }
    if (!(job = fjobs_find (ctx->jobs, (flux_jobid_t)id))) {
        if (!resync_park_barrier (ctx, (flux_jobid_t)id, (uint32_t)rank,
                                  msg))
            fshell_barrier_reply (h, msg, ENOENT);
        return;
    }
    if (flux_msg_authorize (msg, fjob_userid (job)) < 0) {
        fshell_barrier_reply (h, msg, EPERM);
        return;
    }
    fjob_barrier (job, msg, (uint32_t)rank);
}

static void exception_cb (flux_t *h,
                          flux_msg_handler_t *mh,
                          const flux_msg_t *msg,
                          void *arg)
{
    struct fctx *ctx = arg;
    json_int_t id;
    const char *type;
    int severity, wait_status = -1;
    struct fjob *job;

    if (flux_event_unpack (msg, NULL, "{s:I s:s s:i s?i}", "id", &id, "type",
                           &type, "severity", &severity, "wait_status",
                           &wait_status) < 0)
        return;
    if ((job = fjobs_find (ctx->jobs, (flux_jobid_t)id)))
        fjob_exception (job, type, severity, wait_status);
}

/* job-exec.stats-get: job-exec's fields, the kill settings being
 * cairnd's (asked each time: cairnd's config is the one in force). */
struct statsreq {
    struct fctx *ctx;
    const flux_msg_t *msg;
    int64_t matchtag;
    struct statsreq *next;
};

static void stats_respond (struct fctx *ctx,
                           const flux_msg_t *msg,
                           const json_t *exec)
{
    json_t *jobs = json_object ();
    json_t *o = NULL;

    for (size_t i = 0; jobs && i < fjobs_count (ctx->jobs); i++) {
        struct fjob *job = fjobs_nth (ctx->jobs, i);
        char f58[32];
        if (flux_job_id_encode (fjob_id (job), "f58", f58, sizeof (f58)) == 0)
            json_object_set_new (jobs, f58, fjob_stats (job));
    }
    o = json_pack ("{s:s s:{s:s s:b s:b} s:o s:I s:I}", "method", "cairn",
                   "cairnd", "socket", cconn_path (ctx->cc), "connected",
                   cconn_up (ctx->cc), "partial-release", ctx->partial,
                   "jobs", jobs, "started", (json_int_t)ctx->nstarted,
                   "released", (json_int_t)ctx->nreleased);
    /* cairnd's settings with the site's [exec] over them: what a job
     * started now gets */
    json_t *eff = exec ? execconf_effective (exec, ctx->exec_over) : NULL;
    if (o && eff) {
        const char *k;
        json_t *v;
        json_object_foreach (eff, k, v) json_object_set (o, k, v);
    }
    json_t *config = shellconf_stats (&ctx->conf);
    if (config && eff)
        json_object_update (config, eff);
    if (o && config)
        json_object_set (o, "config", config);
    json_decref (config);
    json_decref (eff);
    if (!o || flux_respond_pack (ctx->h, msg, "O", o) < 0)
        flux_log_error (ctx->h, "stats-get");
    json_decref (o);
}

/* cairnd's answer to the `stats` asked for a stats-get (arg). */
static void stats_answer (const json_t *msg, void *arg)
{
    struct statsreq *r = arg;
    struct fctx *ctx = r->ctx;
    json_t *payload = NULL;

    (void)json_unpack ((json_t *)msg, "{s?o}", "payload", &payload);
    for (struct statsreq **pp = &ctx->statsreqs; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    stats_respond (ctx, r->msg, json_object_get (payload, "exec"));
    flux_msg_decref (r->msg);
    free (r);
}

/* Answer every waiting stats-get without cairnd's part (it went away). */
static void stats_flush (struct fctx *ctx)
{
    while (ctx->statsreqs) {
        struct statsreq *r = ctx->statsreqs;
        ctx->statsreqs = r->next;
        cconn_rpc_cancel (ctx->cc, r->matchtag);
        stats_respond (ctx, r->msg, NULL);
        flux_msg_decref (r->msg);
        free (r);
    }
}

static void stats_cb (flux_t *h,
                      flux_msg_handler_t *mh,
                      const flux_msg_t *msg,
                      void *arg)
{
    struct fctx *ctx = arg;
    struct statsreq *r = calloc (1, sizeof (*r));
    json_t *none = json_object ();

    if (r && none && cconn_up (ctx->cc)) {
        r->ctx = ctx;
        r->msg = flux_msg_incref (msg);
        if ((r->matchtag = cconn_rpc (ctx->cc, "stats", none, 0, stats_answer,
                                      r)) > 0) {
            r->next = ctx->statsreqs;
            ctx->statsreqs = r;
            r = NULL;
        }
    }
    if (r || !none)
        stats_respond (ctx, msg, NULL); /* cairnd not there: no kill settings */
    if (r)
        flux_msg_decref (r->msg);
    free (r);
    json_decref (none);
}

/* job-exec.config-reload (flux config reload / load): the new [exec],
 * checked as at load, the module's arguments still winning; refused with
 * job-exec's message (so `flux config load` fails) and nothing changed,
 * or taken: the jobs started from now on get it. Flux's own prolog is
 * checked at load only (cairn-exec(8)). */
static void config_reload_cb (flux_t *h,
                              flux_msg_handler_t *mh,
                              const flux_msg_t *msg,
                              void *arg)
{
    struct fctx *ctx = arg;
    flux_conf_t *conf = NULL;
    struct shellconf sc = {0};
    json_t *over = NULL;
    char err[1024] = "";

    if (flux_module_config_request_decode (msg, &conf) < 0) {
        snprintf (err, sizeof (err), "Error parsing new config: %s",
                  strerror (errno));
        goto error;
    }
    if (!(over = execconf_load (h, conf, false, ctx->argc, ctx->argv, err,
                                sizeof (err))) ||
        shellconf_read (conf, ctx->argc, ctx->argv, &sc, err, sizeof (err)) < 0)
        goto error;
    if (flux_set_conf_new (h, conf) < 0) {
        snprintf (err, sizeof (err), "error updating cached configuration");
        goto error;
    }
    conf = NULL;
    json_decref (ctx->exec_over);
    ctx->exec_over = over;
    shellconf_clear (&ctx->conf);
    ctx->conf = sc;
    if (flux_respond (h, msg, NULL) < 0)
        flux_log_error (h, "config-reload");
    return;
error:
    if (err[0])
        flux_log (h, LOG_ERR, "cairn-exec: config reload refused: %s", err);
    shellconf_clear (&sc);
    json_decref (over);
    flux_conf_decref (conf);
    if (flux_respond_error (h, msg, EINVAL, err[0] ? err : NULL) < 0)
        flux_log_error (h, "config-reload");
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "job-exec.start", start_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "job-exec.expiration", relay_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "job-exec.critical-ranks", critical_ranks_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-exec.shell-barrier", barrier_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-exec.stats-get", stats_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "job-exec.config-reload", config_reload_cb, 0},
    {FLUX_MSGTYPE_EVENT, "job-exception", exception_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* ---- setup ---- */

/* The broker's environment, as job-exec gives it to the shells, less what
 * belongs to the broker's own service manager. */
static json_t *broker_env (void)
{
    static const char *const drop[] = {"NOTIFY_SOCKET", "INVOCATION_ID",
                                       "FLUX_PROXY_REMOTE", "FLUX_URI",
                                       "CAIRN_STATEDIR"};
    json_t *env = json_object ();

    for (char **e = environ; env && e && *e; e++) {
        const char *eq = strchr (*e, '=');
        bool skip = !eq || eq == *e;
        for (size_t i = 0; !skip && i < sizeof (drop) / sizeof (drop[0]); i++)
            skip = strlen (drop[i]) == (size_t)(eq - *e) &&
                   !strncmp (*e, drop[i], (size_t)(eq - *e));
        if (!skip)
            json_object_setn_new (env, *e, (size_t)(eq - *e),
                                  json_string (eq + 1));
    }
    return env;
}

/* start-timeout=FSD: how long a new job waits for cairnd to take it
 * (fjob.h). -1 with a line in the log when it is not a duration. */
static int start_timeout (flux_t *h, int argc, char **argv, double *t)
{
    *t = 60.;
    for (int i = 0; i < argc; i++) {
        struct cairn_error err = {{0}};
        if (strncmp (argv[i], "start-timeout=", 14) != 0)
            continue;
        if (fsd_parse (argv[i] + 14, t, &err) < 0) {
            flux_log (h, LOG_ERR, "cairn-exec: refused: start-timeout: %s",
                      err.text);
            return -1;
        }
        if (isinf (*t))
            *t = 0.;
    }
    return 0;
}

/* Where cairnd is: its state directory, statedir=DIR (where %r stands
 * for the broker's rank: brokers of a test instance share a host, each
 * rank having its own cairnd), else as cairn(1) finds it; and its socket,
 * socket=PATH (%r too: a system instance's brokers, not root, reach a
 * root cairnd through its public-socket), else the state directory's.
 * 0 with *dirp (for messages: the socket's when only socket= is given)
 * and *sockp set, or -1 logged. */
static int cairnd_where (
    flux_t *h, uint32_t rank, int argc, char **argv, char **dirp, char **sockp)
{
    const char *opt = NULL, *sopt = NULL;
    struct cairn_error err = {{0}};
    char *expanded = NULL, *dir = NULL, *sock = NULL;

    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "statedir=", 9))
            opt = argv[i] + 9;
        else if (!strncmp (argv[i], "socket=", 7))
            sopt = argv[i] + 7;
        else if (!execconf_is_arg (argv[i]) && !shellconf_is_arg (argv[i]) &&
                 strncmp (argv[i], "start-timeout=", 14) != 0)
            flux_log (h, LOG_ERR,
                      "unknown argument '%s' (statedir=DIR, socket=PATH, or "
                      "a setting of job-exec's: cairn-exec(8))",
                      argv[i]);
    }
    if (sopt) {
        if (!(sock = statedir_expand_rank (sopt, rank)) ||
            !(dir = opt ? statedir_expand_rank (opt, rank) : strdup (sock))) {
            flux_log_error (h, "socket");
            free (sock);
            return -1;
        }
        *dirp = dir;
        *sockp = sock;
        return 0;
    }
    if (opt && !(opt = expanded = statedir_expand_rank (opt, rank))) {
        flux_log_error (h, "statedir");
        return -1;
    }
    if (!(dir = statedir_resolve (opt, NULL, &err)))
        flux_log (h, LOG_ERR, "cannot find cairnd's state directory: %s",
                  err.text);
    else if (!(sock = statedir_socket (dir))) {
        flux_log_error (h, "statedir");
        free (dir);
        dir = NULL;
    }
    free (expanded);
    *dirp = dir;
    *sockp = sock;
    return dir ? 0 : -1;
}

/* Partial release is on when Flux's housekeeping runs our helper: only
 * then does something hold each rank until cairnd's epilog on it is done,
 * so only then may the final release go out before the epilogs end. */
static bool partial_release (flux_t *h)
{
    json_t *cmd = NULL;
    const char *argv0;

    if (flux_conf_unpack (flux_get_conf (h), NULL, "{s:{s:{s:o}}}",
                          "job-manager", "housekeeping", "command", &cmd) < 0 ||
        !(argv0 = json_string_value (json_array_get (cmd, 0))))
        return false;
    const char *base = strrchr (argv0, '/');
    return !strcmp (base ? base + 1 : argv0, "cairn-flux-housekeeping");
}

static int hello (flux_t *h)
{
    const char *name = flux_aux_get (h, "flux::name");
    flux_future_t *f = flux_rpc_pack (h, "job-manager.exec-hello",
                                      FLUX_NODEID_ANY, 0, "{s:s}", "service",
                                      name ? name : "job-exec");
    int rc = f ? flux_future_get (f, NULL) : -1;

    if (rc < 0)
        flux_log_error (h, "job-manager.exec-hello");
    flux_future_destroy (f);
    return rc;
}

static void ctx_destroy (struct fctx *ctx)
{
    uris_cancel_all (ctx);
    fjobs_destroy (ctx->jobs);
    json_decref (ctx->exec_over);
    resync_cancel_all (ctx);
    orphan_cancel_all (ctx);
    stats_flush (ctx);
    resync_drop_barriers (ctx);
    json_decref (ctx->resynced);
    noderelay_destroy (ctx->relay);
    cconn_destroy (ctx->cc);
    for (uint32_t r = 0; ctx->uris && r < ctx->size; r++)
        free (ctx->uris[r]);
    free (ctx->uris);
    nodewatch_destroy (ctx->nodewatch);
    drainsync_destroy (ctx->drainsync);
    shellconf_clear (&ctx->conf);
    free (ctx->instance);
    json_decref (ctx->env);
}

/* A broker rank > 0: the node's relay, nothing else. */
static int node_main (flux_t *h, uint32_t rank, int argc, char **argv)
{
    char *dir = NULL, *sock = NULL;
    struct nodeagent *na = NULL;
    int rc = -1;

    if (cairnd_where (h, rank, argc, argv, &dir, &sock) < 0)
        goto done;
    if (!(na = nodeagent_create (h, rank, sock, dir))) {
        flux_log_error (h, "cairn-exec: rank %u: setup", (unsigned)rank);
        goto done;
    }
    flux_log (h, LOG_INFO, "cairn-exec: rank %u: relaying rank 0's requests "
              "for this node to cairnd at %s", (unsigned)rank, sock);
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        flux_log_error (h, "reactor");
    else
        rc = 0;
done:
    nodeagent_destroy (na);
    free (sock);
    free (dir);
    return rc;
}

__attribute__ ((visibility ("default"))) int
mod_main (flux_t *h, int argc, char **argv)
{
    struct fctx ctx = {.h = h};
    flux_msg_handler_t **handlers = NULL;
    char *dir = NULL, *sock = NULL;
    uint32_t rank;
    int rc = -1;

    char why[512];
    if (fversion_check (FLUX_CORE_VERSION_STRING, flux_core_version_string (),
                        why, sizeof (why)) < 0) {
        flux_log (h, LOG_ERR, "cairn-exec: %s", why);
        errno = EINVAL;
        return -1;
    }
    if (flux_get_rank (h, &rank) < 0) {
        flux_log_error (h, "cairn-exec: rank");
        return -1;
    }
    if (rank > 0)
        return node_main (h, rank, argc, argv);
    if (start_timeout (h, argc, argv, &ctx.start_timeout) < 0)
        goto done;
    char refused[1024];
    if (!(ctx.exec_over = execconf_load (h, flux_get_conf (h), true, argc, argv,
                                         refused, sizeof (refused)))) {
        if (errno == EINVAL)
            flux_log (h, LOG_ERR, "cairn-exec: refused: %s", refused);
        else
            flux_log_error (h, "cairn-exec: [exec]");
        goto done;
    }
    if (flux_get_size (h, &ctx.size) < 0 ||
        !(ctx.uris = calloc (ctx.size, sizeof (char *))) ||
        !(ctx.env = broker_env ()) || !(ctx.resynced = json_object ()) ||
        !(ctx.jobs = fjobs_create ())) {
        flux_log_error (h, "cairn-exec: setup");
        goto done;
    }
    /* an invalid [exec] value is refused, as job-exec refuses it, rather
     * than replaced by a default the site did not ask for */
    if (shellconf_read (flux_get_conf (h), argc, argv, &ctx.conf, refused,
                        sizeof (refused)) < 0) {
        if (errno == EINVAL)
            flux_log (h, LOG_ERR, "cairn-exec: refused: %s", refused);
        else
            flux_log_error (h, "cairn-exec: [exec]");
        goto done;
    }
    ctx.argc = argc;
    ctx.argv = argv;
    if (cairnd_where (h, rank, argc, argv, &dir, &sock) < 0)
        goto done;
    ctx.partial = partial_release (h);
    /* no .message: every request's answer goes to its own callback
     * (cconn_rpc), and what is nobody's is dropped */
    struct cconn_ops ops = {.state = cairnd_state};
    if (!(ctx.cc = cconn_create (h, sock, &ops, &ctx))) {
        flux_log_error (h, "cairnd socket %s", sock);
        goto done;
    }
    /* one instance per cairnd: bind first on each connection */
    if (instance_identity (h, &ctx.instance) < 0)
        goto done;
    json_t *bind = instance_bind_payload (h, ctx.instance);
    int brc = bind ? cconn_set_hello (ctx.cc, "bind", bind) : -1;
    json_decref (bind);
    if (brc < 0) {
        flux_log_error (h, "cairn-exec: bind");
        goto done;
    }
    /* without it, jobs still run on this host's cairnd; but the service
     * taken means another cairn-exec on this broker: one job-exec only */
    if (!(ctx.relay = noderelay_create (&ctx, dir))) {
        if (errno == EEXIST) {
            flux_log (h, LOG_ERR, "cairn-exec: service cairn taken: another "
                                  "cairn-exec is loaded on rank 0");
            goto done;
        }
        flux_log_error (h, "cairn-exec: no relay to other nodes");
    }
    if (ctx.size > 1 && !(ctx.nodewatch = nodewatch_create (&ctx)))
        flux_log_error (h, "cairn-exec: no watch on broker.online (lost "
                           "nodes are found by multinode.timeout only)");
    if (!(ctx.drainsync = drainsync_create (&ctx)))
        flux_log_error (h, "cairn-exec: no watch on resource.journal (an "
                           "undrain in Flux does not undrain in cairnd)");
    /* handlers first, then the subscription, then hello: the job-manager
     * sends its start requests right after answering */
    if (flux_msg_handler_addvec (h, htab, &ctx, &handlers) < 0 ||
        flux_event_subscribe (h, "job-exception") < 0 || hello (h) < 0)
        goto done;
    flux_log (h, LOG_INFO,
              "cairn-exec: relaying jobs to cairnd at %s "
              "(shell %s, %s)",
              sock, ctx.conf.job_shell,
              ctx.partial ? "partial release through housekeeping"
                          : "ranks freed after the last epilog");
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        flux_log_error (h, "reactor");
    else
        rc = 0;
    (void)flux_event_unsubscribe (h, "job-exception");
done:
    flux_msg_handler_delvec (handlers);
    ctx_destroy (&ctx);
    free (sock);
    free (dir);
    return rc;
}
