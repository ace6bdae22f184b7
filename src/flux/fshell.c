/* fshell.c - see fshell.h
 *
 * The notes and drain reasons are job-exec's, word for word: sites grep
 * for them (barrier.c calls them "user-facing ... don't change").
 */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fsd.h"
#include "core/idset.h"
#include "flux/fshell.h"
#include "flux/guest.h"

/* Build a response to a NORESPONSE request by hand: flux_respond() sends
 * nothing for those, and the shells match the reply by topic. */
void fshell_barrier_reply (flux_t *h, const flux_msg_t *req, int errnum)
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

struct parked {
    const flux_msg_t *msg;
    uint32_t rank;
};

struct fshell {
    flux_t *h;
    const struct shellconf *conf;
    flux_jobid_t id;
    uint32_t userid;
    char f58[32];
    struct idset *ranks;   /* the shells' broker ranks */
    struct idset *entered; /* ranks in the barrier that waits now */
    struct parked *parked;
    size_t nparked, cap;
    bool first_done;  /* the first barrier was complete */
    bool gone;        /* a shell ended: barriers fail from now on */
    bool stopped;     /* a fatal exception or the finish */
    bool early_fatal; /* "terminated before first barrier" raised */
    bool exit_posted; /* shell-exit is in exec.eventlog */
    char *active;     /* shells still running, as the last shell-end said */
    flux_watcher_t *barrier_timer, *exit_timer;
    fshell_fatal_f fatal;
    void *arg;
};

static void fatalf (struct fshell *fs, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void fatalf (struct fshell *fs, const char *fmt, ...)
{
    char note[512];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    fs->fatal (fs->arg, note);
}

static const char *plural (const char *ids)
{
    return strpbrk (ids, ",-") ? "s" : "";
}

static void drained_cb (flux_future_t *f, void *arg)
{
    if (flux_future_get (f, NULL) < 0)
        flux_log (flux_future_get_flux (f), LOG_ERR, "cairn-exec: drain %s: %s",
                  (const char *)arg, future_strerror (f, errno));
    flux_future_destroy (f);
}

/* Drain ranks in Flux (as job-exec does, not through cairnd: these are
 * the exec system's own findings about its shells' nodes). */
static void drain (struct fshell *fs, const char *ranks, const char *reason)
{
    flux_future_t *f =
        flux_rpc_pack (fs->h, "resource.drain", 0, 0, "{s:s s:s s:s}",
                       "targets", ranks, "reason", reason, "mode", "update");
    char *what = strdup (ranks);

    if (!f || !what || flux_future_aux_set (f, "ranks", what, free) < 0) {
        free (what);
        goto error;
    }
    if (flux_future_then (f, -1, drained_cb, what) < 0)
        goto error;
    return;
error:
    flux_log_error (fs->h, "cairn-exec: job %s: drain %s", fs->f58, ranks);
    flux_future_destroy (f);
}

/* ---- the start barrier ---- */

void fshell_release (struct fshell *fs, int errnum)
{
    if (!fs)
        return;
    for (size_t i = 0; i < fs->nparked; i++) {
        fshell_barrier_reply (fs->h, fs->parked[i].msg, errnum);
        flux_msg_decref (fs->parked[i].msg);
    }
    fs->nparked = 0;
    for (uint32_t r = idset_first (fs->entered); r != IDSET_INVALID_ID;
         r = idset_next (fs->entered, r))
        idset_clear (fs->entered, r);
}

static void barrier_timeout_cb (flux_reactor_t *r,
                                flux_watcher_t *w,
                                int revents,
                                void *arg)
{
    struct fshell *fs = arg;
    struct idset *pending = idset_copy (fs->ranks);
    char *ids = NULL, reason[128];

    flux_watcher_stop (w);
    if (fs->first_done || fs->stopped || !pending)
        goto done;
    idset_subtract (pending, fs->entered);
    if (!(ids = idset_encode (pending)))
        goto done;
    snprintf (reason, sizeof (reason), "job %s start timeout: %s", fs->f58,
              "possible node hang");
    drain (fs, ids, reason);
    fatalf (fs, "start barrier timeout waiting for %zu/%zu nodes (rank%s %s)",
            idset_count (pending), idset_count (fs->ranks), plural (ids), ids);
done:
    free (ids);
    idset_destroy (pending);
}

void fshell_barrier (struct fshell *fs, const flux_msg_t *msg, uint32_t rank)
{
    size_t total = idset_count (fs->ranks);

    /* as job-exec: once a shell has ended, no barrier can complete */
    if (fs->gone || !idset_test (fs->ranks, rank)) {
        fshell_barrier_reply (fs->h, msg, fs->gone ? EIO : EINVAL);
        return;
    }
    if (fs->nparked == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 8;
        struct parked *p = realloc (fs->parked, cap * sizeof (*p));
        if (!p) {
            fshell_barrier_reply (fs->h, msg, ENOMEM);
            return;
        }
        fs->parked = p;
        fs->cap = cap;
    }
    fs->parked[fs->nparked++] =
        (struct parked){.msg = flux_msg_incref (msg), .rank = rank};
    idset_set (fs->entered, rank);
    if (fs->nparked == total) { /* everyone is in: let them all go */
        fshell_release (fs, 0);
        fs->first_done = true;
        flux_watcher_stop (fs->barrier_timer);
        return;
    }
    /* only the first barrier is timed (a node hung at start), from the
     * first shell's entry, as job-exec times it */
    if (fs->nparked == 1 && !fs->first_done && !fs->stopped &&
        fs->barrier_timer)
        flux_watcher_start (fs->barrier_timer);
}

/* ---- shell ends ---- */

static void
exit_timeout_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct fshell *fs = arg;
    char fsd[64] = "";
    char *hosts;

    flux_watcher_stop (w);
    if (fs->stopped || !fs->active || !*fs->active)
        return;
    hosts = flux_hostmap_lookup (fs->h, fs->active, NULL);
    (void)fsd_format (fsd, sizeof (fsd), fs->conf->shell_exit_timeout);
    fatalf (fs,
            "job shells still active on %s (rank%s %s) %s after leader "
            "shell exit",
            hosts ? hosts : "(unknown)", plural (fs->active), fs->active, fsd);
    free (hosts);
}

/* The leader's end: exec.eventlog shell-exit (once), and the timer for
 * the shells that outlive it. */
static void leader_ended (struct fshell *fs, int rank, int status)
{
    if (!fs->exit_posted) {
        json_t *c =
            json_pack ("{s:i s:i}", "rank", rank, "wait_status", status);
        if (c && *fs->active)
            json_object_set_new (c, "active_ranks", json_string (fs->active));
        flux_future_t *f =
            c ? guest_post (fs->h, fs->id, "shell-exit", c) : NULL;
        if (!f)
            flux_log_error (fs->h, "cairn-exec: job %s: shell-exit", fs->f58);
        flux_future_destroy (f); /* RPCs go out in order */
        json_decref (c);
        fs->exit_posted = true;
    }
    if (*fs->active && !fs->stopped && fs->exit_timer)
        flux_watcher_start (fs->exit_timer);
}

/* Tell the leader a shell is gone, so that it stops waiting for it. No
 * answer is waited for: the leader may be gone too. */
static void lost_shell (struct fshell *fs,
                        int shell_rank,
                        bool critical,
                        const char *message)
{
    char topic[128], plain[32];
    flux_future_t *f = NULL;

    if (flux_job_id_encode (fs->id, "f58plain", plain, sizeof (plain)) < 0 ||
        snprintf (topic, sizeof (topic), "%ju-shell-%s.exception",
                  (uintmax_t)fs->userid, plain) >= (int)sizeof (topic) ||
        !(f = flux_rpc_pack (fs->h, topic, idset_first (fs->ranks), 0,
                             "{s:s s:i s:i s:s}", "type", "lost-shell",
                             "severity", critical ? 0 : 2, "shell_rank",
                             shell_rank, "message", message)))
        flux_log_error (fs->h, "cairn-exec: job %s: lost-shell", fs->f58);
    flux_future_destroy (f);
}

void fshell_end (struct fshell *fs, const json_t *data)
{
    int rank = -1, shell_rank = -1, status = -1, lost = 0, unstarted = 0,
        critical = 1;
    const char *active = "", *note = "";
    char what[256];

    if (json_unpack ((json_t *)data, "{s:i s:i s?i s?b s?b s?b s?s s?s}",
                     "rank", &rank, "shell-rank", &shell_rank, "status",
                     &status, "lost", &lost, "unstarted", &unstarted,
                     "critical", &critical, "active", &active, "note",
                     &note) < 0) {
        flux_log (fs->h, LOG_ERR, "cairn-exec: job %s: bad shell-end", fs->f58);
        return;
    }
    char *a = strdup (active);
    if (a) {
        free (fs->active);
        fs->active = a;
    }
    const char *host = flux_get_hostbyrank (fs->h, (uint32_t)rank);
    if (shell_rank == 0)
        leader_ended (fs, rank, status >= 0 ? status : 1 << 8);
    if (!*fs->active)
        flux_watcher_stop (fs->exit_timer);
    if (idset_count (fs->ranks) <= 1)
        return; /* one shell: no barrier to fail, nobody to tell */

    /* before the first barrier: the shell may not have had the chance to
     * say why (a broken node, a bad key) */
    if (!fs->first_done && (!fs->stopped || fs->early_fatal)) {
        bool entered = idset_test (fs->entered, (uint32_t)rank);
        if (!fs->early_fatal) {
            fs->early_fatal = true;
            fatalf (fs, "%s (rank %d) terminated before first barrier", host,
                    rank);
        }
        if (fs->userid != getuid () && !entered) {
            char r[16], reason[128];
            snprintf (r, sizeof (r), "%d", rank);
            snprintf (reason, sizeof (reason),
                      "%s terminated before first barrier", fs->f58);
            drain (fs, r, reason);
        }
    }
    fs->gone = true;
    fshell_release (fs, EIO);

    if (shell_rank > 0 &&
        (lost || unstarted || (status >= 0 && WIFSIGNALED (status)))) {
        if (status >= 0 && WIFSIGNALED (status))
            snprintf (what, sizeof (what), "shell rank %d (on %s): %s",
                      shell_rank, host, strsignal (WTERMSIG (status)));
        else
            snprintf (what, sizeof (what), "shell rank %d (on %s): %s",
                      shell_rank, host, note);
        /* a non-critical rank's exception (cairnd's) carries the message */
        lost_shell (fs, shell_rank, critical, critical ? what : "");
    }
}

void fshell_stop (struct fshell *fs)
{
    if (!fs)
        return;
    fs->stopped = true;
    flux_watcher_stop (fs->barrier_timer);
    flux_watcher_stop (fs->exit_timer);
}

void fshell_recovered_log (struct fshell *fs, const char *log)
{
    if (fs && log && strstr (log, "\"name\":\"shell-exit\""))
        fs->exit_posted = true;
}

int fshell_keep (struct fshell *fs, const char *ranks)
{
    struct idset *keep = ranks ? idset_decode (ranks, NULL) : NULL;

    if (!keep) {
        errno = EINVAL;
        return -1;
    }
    idset_destroy (fs->ranks);
    fs->ranks = keep;
    return 0;
}

size_t fshell_nwaiting (const struct fshell *fs)
{
    return fs ? fs->nparked : 0;
}

size_t fshell_count (const struct fshell *fs)
{
    return fs ? idset_count (fs->ranks) : 0;
}

/* ---- create, destroy ---- */

struct fshell *fshell_create (flux_t *h,
                              const struct shellconf *conf,
                              flux_jobid_t id,
                              uint32_t userid,
                              const char *f58,
                              const uint32_t *ranks,
                              size_t n,
                              bool recovered,
                              fshell_fatal_f fatal,
                              void *arg)
{
    struct fshell *fs = calloc (1, sizeof (*fs));
    flux_reactor_t *r = flux_get_reactor (h);

    if (!fs)
        return NULL;
    fs->h = h;
    fs->conf = conf;
    fs->id = id;
    fs->userid = userid;
    snprintf (fs->f58, sizeof (fs->f58), "%s", f58);
    fs->first_done = recovered;
    fs->fatal = fatal;
    fs->arg = arg;
    if (!(fs->ranks = idset_create ()) || !(fs->entered = idset_create ()) ||
        !(fs->active = strdup ("")))
        goto error;
    for (size_t i = 0; i < n; i++)
        if (idset_set (fs->ranks, ranks[i]) < 0)
            goto error;
    if (conf->barrier_timeout > 0 &&
        !(fs->barrier_timer = flux_timer_watcher_create (
              r, conf->barrier_timeout, 0., barrier_timeout_cb, fs)))
        goto error;
    if (conf->shell_exit_timeout > 0 &&
        !(fs->exit_timer = flux_timer_watcher_create (
              r, conf->shell_exit_timeout, 0., exit_timeout_cb, fs)))
        goto error;
    return fs;
error:
    fshell_destroy (fs);
    errno = ENOMEM;
    return NULL;
}

int fshell_set_barrier_timeout (struct fshell *fs, double seconds)
{
    flux_watcher_destroy (fs->barrier_timer);
    fs->barrier_timer = NULL;
    if (seconds > 0 &&
        !(fs->barrier_timer = flux_timer_watcher_create (
              flux_get_reactor (fs->h), seconds, 0., barrier_timeout_cb, fs))) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void fshell_destroy (struct fshell *fs)
{
    if (!fs)
        return;
    int saved = errno;
    fshell_release (fs, EIO);
    flux_watcher_destroy (fs->barrier_timer);
    flux_watcher_destroy (fs->exit_timer);
    idset_destroy (fs->ranks);
    idset_destroy (fs->entered);
    free (fs->parked);
    free (fs->active);
    free (fs);
    errno = saved;
}
