/* daemon.c - cairnd's wiring: the only file that creates the rooms and
 * connects them, each lent what it uses and answering through its ops:
 * the job table (jobtable.h), the commit turn (turn.h), the streams
 * (streams.h), live output (output.h), held kills (killwait.h), the jobs'
 * context (jobctx.h), quotas, the node role, the service.
 *
 * What stays here is the daemon's own: what a job's committed events do
 * (effects(): the runners, the streams, the log), the retention timer, the
 * state dir and its lock, the signals, and the create/run/destroy phases.
 * The write-ahead rule (no effect before the commit of its cause) is the
 * turn's: effects() runs only when the turn says a batch is on disk.
 */
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/eventlog.h"
#include "core/hostlist.h"
#include "core/job.h"
#include "core/testenv.h"
#include "exec/bind.h"
#include "exec/daemon.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "exec/killwait.h"
#include "exec/localproc.h"
#include "exec/output.h"
#include "exec/quota.h"
#include "exec/reconcile.h"
#include "exec/remote.h"
#include "exec/runner.h"
#include "exec/service.h"
#include "exec/service_views.h"
#include "exec/streams.h"
#include "exec/trust.h"
#include "exec/turn.h"
#include "exec/usercost.h"
#include "journal/crashpoint.h"
#include "journal/journal.h"
#include "journal/outbox.h"
#include "node/node.h"
#include "procs/procs.h"
#include "server/server.h"
#include "supervise/procfs.h"
#include "util/dircheck.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/notify.h"

/* The daemon: the rooms it created and connected, and what no room owns
 * (the state dir, its lock, the sockets, the signals). Only this file
 * knows it; every room is lent what it uses. */
struct outbox;    /* outbox.h */
struct remote;    /* rank 0's processes on other nodes (remote.h) */
struct localproc; /* a job's processes here (localproc.h) */

struct cairnd {
    struct ev_loop *loop;
    struct cairn_config cfg;
    char *statedir;
    char *sockpath;
    const char *procroot;    /* /proc, or CAIRN_PROCROOT for tests */
    const char *bootid_path; /* or CAIRN_BOOTID_FILE for tests */
    char bootid[40];
    uid_t uid;
    struct trust *trust;   /* whom it acts for (trust.h) */
    struct usercost *cost; /* users' requests weighed (usercost.h) */
    int lockfd;
    struct procs *procs; /* the processes here (procs.h) */
    struct journal *journal;
    struct server *server;
    struct server *public_server; /* cfg public-socket, or NULL */
    struct jobtable *jobs;        /* the active jobs (jobtable.h) */
    struct streams *streams;      /* clients following jobs (streams.h) */
    struct remote *remote;        /* exec role: processes on other nodes */
    struct localproc *local;      /* a job's processes here (localproc.h) */
    struct runners runners;       /* local, remote: a process's (runner.h) */
    struct node *node;            /* node role (cfg.role_node), else NULL */
    struct bindings *bindings;    /* connections' Flux instances (bind.h) */
    struct outbox *outbox;        /* effects waiting for the commit */
    struct turn *turn;            /* the commit turn (turn.h) */
    struct jobctx *jctx;          /* the jobs' view of the world (jobctx.h) */
    ev_signal sigterm;
    ev_signal sigint;
    ev_timer purge_timer;
    struct output *output; /* live output (output.h) */
    int exit_code;
    double t_start;
    /* counters for `stats` */
    uint64_t njobs_done;
    struct killwait *kills; /* kills waiting for shells (killwait.h) */
    struct quota *quota;    /* the unprivileged clients' usage (quota.h) */
    struct views *views;    /* jobs requests being answered (service_views.h) */
    struct service *service; /* the sockets' requests (service.h) */
};

/* No stream that asked for the job's events follows it: its client (the
 * Flux module: a broker restart, a module reload) is away. */
static bool client_away (void *arg, uint64_t id)
{
    struct cairnd *d = arg;
    struct jobentry *je = jobtable_get (d->jobs, id);
    for (struct sub *s = je ? je->subs : NULL; s; s = s->next)
        if (s->events)
            return false;
    return true;
}

static const struct jobctx_ops jobctx_ops = {.client_away = client_away};

/* More (or fewer) streams ask for output: the tail timer runs while any. */
static void streams_watch (void *arg, int delta)
{
    struct cairnd *d = arg;
    if (d->output) /* none before the loop, nor any stream */
        output_watch (d->output, delta);
}

static const struct streams_ops streams_ops = {.watch = streams_watch};

/* ---- jobs in memory (jobtable.h) ---- */

/* A job is forgotten (jobtable_remove: clean, or a refused start): its
 * streams, held kills and watched processes go first. */
static void job_forget (void *arg, struct jobentry *je)
{
    struct cairnd *d = arg;
    streams_drop_job (d->streams, je);
    killwait_drop (d->kills, je);
    /* processes we gave up on (unkillable) are still watched */
    for (size_t i = 0; i < job_nprocs (je->job); i++)
        procs_unwatch (d->procs, job_proc_at (je->job, i)->execid);
}

/* Does cairnd hold a stream of c's (a job's events it follows)? The
 * server's busy: such a connection is not idle. */
static bool conn_busy (struct conn *c, void *arg)
{
    struct cairnd *d = arg;
    return streams_conn_busy (d->streams, c);
}

/* c went away (the server's disconnect): every room forgets it. */
static void conn_gone (struct conn *c, void *arg)
{
    struct cairnd *d = arg;
    remote_conn_gone (d->remote, c);
    killwait_conn_gone (d->kills, c);
    views_conn_gone (d->views, c);
    node_conn_gone (d->node, c);
    bind_conn_gone (d->bindings, c);
    turn_conn_gone (d->turn, c);
    streams_conn_gone (d->streams, c);
}

/* ---- timers ---- */

/* A job's deadline came (jobtable.h): what it decides joins this turn. */
static void job_due (void *arg, struct jobentry *je)
{
    struct cairnd *d = arg;
    struct job_ctx ctx;
    jobctx_fill (d->jctx, &ctx);
    if (job_advance (je->job, &ctx, je->pending) < 0)
        log_msg (LOG_ERR, "job %s: advance: %s", je->name, strerror (errno));
    if (json_array_size (je->pending) > 0)
        jobtable_dirty (je);
    else
        jobtable_rearm (je);
}

static const struct jobtable_ops jobtable_ops = {.due = job_due,
                                                 .forget = job_forget};

/* ---- effects ---- */

/* Does a stream of je want its output? */
static bool wants_output (struct cairnd *d, const struct jobentry *je)
{
    return output_wanted (d->output) && je->subs;
}

static bool want_events (const struct jobentry *je)
{
    for (const struct sub *s = je->subs; s; s = s->next)
        if (s->events)
            return true;
    return false;
}

/* Send one committed event to the job's streams: an RFC 32 response to
 * all of them, a progress event to those that asked for events. `accepted`
 * only goes to the stream of the job's own start request, and so does
 * `start` in the plain view (RFC 32: a reattach stream begins with
 * `reattached` instead); in the events view a reattach stream gets `start`
 * too, as its backlog would (service_start.c). */
static void
respond_subs (struct jobentry *je, const json_t *entry, enum job_event ev)
{
    bool progress = job_ev_is_progress (ev);
    bool accept = ev == JOB_EV_ACCEPT;
    bool start = ev == JOB_EV_START;
    json_t *payload;

    if (progress && !want_events (je))
        return; /* the common case: nobody asked */
    payload = progress ? job_progress_response (je->job, entry)
                       : job_response (je->job, entry);
    if (!payload)
        return;
    for (struct sub *s = je->subs; s; s = s->next) {
        if ((accept && s->reattached) ||
            (start && s->reattached && !s->events) || (progress && !s->events))
            continue;
        CRASHPOINT ("exec.respond.before");
        if (conn_respond (s->conn, s->matchtag, payload) < 0)
            log_msg (LOG_WARNING, "job %s: response to client %ju: %s",
                     je->name, (uintmax_t)conn_id (s->conn), strerror (errno));
        CRASHPOINT ("exec.respond.after");
    }
    json_decref (payload);
}

/* The line in cairnd's log of a committed event whose effect is a note
 * (job.h's table): a job's accept and clean, a drain, an exception. */
static void log_event (struct jobentry *je, enum job_event ev, json_t *ctx)
{
    const char *ranks = "", *reason = "", *hosts = NULL, *type = "", *note = "";
    int sev = 0;
    char *all;

    switch (ev) {
    case JOB_EV_ACCEPT:
        all = idset_encode (job_ranks (je->job));
        log_msg (LOG_INFO, "job %s: accepted: uid %u, rank(s) %s", je->name,
                 (unsigned)job_userid (je->job), all ? all : "?");
        free (all);
        break;
    case JOB_EV_CLEAN:
        log_msg (LOG_INFO, "job %s: clean: finish status %d%s", je->name,
                 job_finish_status (je->job),
                 job_finished (je->job) ? "" : " (it never started)");
        break;
    case JOB_EV_DRAIN:
        (void)json_unpack (ctx, "{s?s s?s s?s}", "ranks", &ranks, "reason",
                           &reason, "hosts", &hosts);
        log_msg (LOG_WARNING, "drain rank(s) %s%s%s%s: %s", ranks,
                 hosts ? " (" : "", hosts ? hosts : "", hosts ? ")" : "",
                 reason);
        break;
    case JOB_EV_EXCEPTION:
        (void)json_unpack (ctx, "{s?s s?i s?s}", "type", &type, "severity",
                           &sev, "note", &note);
        log_msg (LOG_INFO, "job %s: exception %s severity %d%s%s", je->name,
                 type, sev, *note ? ": " : "", note);
        break;
    default:
        break;
    }
}

/* Carry out what committed events ask for (job.h's effect column).
 * Spawns and signals go first so that a `start` response means the shells
 * are on their way. */
static void effects (struct cairnd *d, struct jobentry *je, json_t *events)
{
    size_t i;
    json_t *entry;
    const char *name;
    json_t *ctx;

    /* Entries cairnd built and folded (job_apply checked each):
     * eventlog_entry_fields() reads them without checking again. */
    json_array_foreach (events, i, entry)
    {
        eventlog_entry_fields (entry, NULL, &name, &ctx);
        if (!name || !ctx)
            continue;
        const char *execid =
            json_string_value (json_object_get (ctx, "execid"));
        enum job_event ev = job_event_of (name);
        enum job_effect effect = job_event_effect (ev);
        const struct job_proc *p = NULL;
        const struct runner *rn = NULL;
        if (effect == JOB_EFFECT_SPAWN || effect == JOB_EFFECT_SIGNAL ||
            effect == JOB_EFFECT_ENDED || effect == JOB_EFFECT_LOST) {
            if (!(p = job_proc_find (je->job, execid)))
                continue; /* the fold knew it: cannot happen */
            rn = runner_of (&d->runners, je, p);
        }
        switch (effect) {
        case JOB_EFFECT_SPAWN:
            rn->ops->start (rn->self, je, execid);
            break;
        case JOB_EFFECT_SIGNAL:
            rn->ops->signal (
                rn->self, je, execid,
                json_integer_value (json_object_get (ctx, "signum")));
            output_kill_notice (je, p, ctx);
            break;
        case JOB_EFFECT_ENDED:
        case JOB_EFFECT_LOST:
            rn->ops->finished (rn->self, je, execid, effect == JOB_EFFECT_LOST);
            break;
        case JOB_EFFECT_LATE:
            remote_late (d->remote, je, ctx);
            break;
        case JOB_EFFECT_NOTE:
            log_event (je, ev, ctx);
            break;
        case JOB_EFFECT_NONE:
            break;
        }
    }
    json_array_foreach (events, i, entry)
    {
        eventlog_entry_fields (entry, NULL, &name, NULL);
        if (!name)
            continue;
        enum job_event ev = job_event_of (name);
        if (job_ev_is_response (ev) || job_ev_is_progress (ev))
            respond_subs (je, entry, ev);
        else if (ev == JOB_EV_LOG && wants_output (d, je))
            output_log_event (je, entry);
    }
    /* Forget the job once its `clean` is committed and acted on. Effects
     * above may have driven it to clean in events not committed yet
     * (e.g. a failed spawn): then it is dirty again, and its turn comes. */
    if (job_state (je->job) == JOB_DONE && !je->dirty) {
        d->njobs_done++;
        jobtable_remove (je);
    } else
        jobtable_rearm (je);
}

/* What the turn asks of cairnd (turn.h). Its exit on a journal failure
 * is cairnd's. */
_Static_assert(CAIRND_EXIT_JOURNAL == TURN_EXIT_JOURNAL,
               "a journal failure exits as cairnd says it does");

/* A dirty job about to be staged: its held kills are carried out once its
 * shells no longer start, their signals in this batch, after the starts
 * they waited for. */
static void turn_staging (void *arg, struct jobentry *je)
{
    struct cairnd *d = arg;
    if (killwait_holds (d->kills, je) && !job_shells_starting (je->job))
        killwait_run (d->kills, je);
}

static void turn_effects (void *arg, struct jobentry *je, json_t *events)
{
    effects (arg, je, events); /* may forget je */
}

static const struct turn_ops turn_ops = {.staging = turn_staging,
                                         .effects = turn_effects};

/* ---- journal space and retention ---- */

struct purge {
    double cutoff;
    uint64_t ids[256];
    size_t n;
};

static int purge_cb (const struct journal_jobinfo *info, void *arg)
{
    struct purge *p = arg;
    if (!info->active && info->t_end > 0 && info->t_end < p->cutoff)
        p->ids[p->n++] = info->id;
    return p->n == sizeof (p->ids) / sizeof (p->ids[0]) ? 1 : 0;
}

/* Remove finished jobs older than the retention; a bounded number per
 * tick, so a huge backlog never stalls the loop. */
static void purge_cb_timer (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct cairnd *d = w->data;
    struct purge p = {.cutoff = jobctx_now () - d->cfg.journal_retention};
    struct cairn_error err;

    if (journal_foreach_job (d->journal, false, purge_cb, &p, &err) < 0) {
        log_msg (LOG_WARNING, "retention: %s", err.text);
        return;
    }
    for (size_t i = 0; i < p.n; i++)
        if (journal_purge (d->journal, p.ids[i]) == 0)
            quota_purged (d->quota, p.ids[i]);
    p.n += node_purge (d->node, p.cutoff,
                       sizeof (p.ids) / sizeof (p.ids[0]) - p.n);
    if (p.n > 0) {
        CRASHPOINT ("journal.purge");
        turn_land (d->turn); /* one commit at a time */
        if (journal_commit (d->journal, &err) < 0)
            turn_journal_failed (err.text);
        log_msg (LOG_DEBUG,
                 "retention: purged %zu finished jobs (or node "
                 "records)",
                 p.n);
        if (p.n == sizeof (p.ids) / sizeof (p.ids[0]))
            ev_feed_event (loop, w, EV_TIMER); /* more to do: next turn */
    }
}

static void signal_cb (struct ev_loop *loop, ev_signal *w, int revents)
{
    struct cairnd *d = w->data;
    log_msg (LOG_INFO,
             "%s: stopping; running processes are left to the next "
             "start",
             strsignal (w->signum));
    service_stopping (d->service);
    (void)notify_send ("STOPPING=1");
    server_stop_accepting (d->server);
    if (d->public_server)
        server_stop_accepting (d->public_server);
    ev_break (loop, EVBREAK_ALL);
}

/* ---- state dir ---- */

static int statedir_check (const char *dir, uid_t uid, struct cairn_error *err)
{
    struct stat st;
    /* Not made, nor used, where another user could swap it for their own */
    if (dir_check_parent (dir, uid, err) < 0)
        return errprefix (err, "state dir %s", dir);
    if (mkdir (dir, 0700) < 0 && errno != EEXIST)
        return errprintf (err, "cannot create state dir %s: %s", dir,
                          strerror (errno));
    if (lstat (dir, &st) < 0)
        return errprintf (err, "%s: %s", dir, strerror (errno));
    if (S_ISLNK (st.st_mode))
        return errset (err, EPERM, "state dir %s is a symlink; refusing it",
                       dir);
    if (!S_ISDIR (st.st_mode))
        return errset (err, ENOTDIR, "state dir %s is not a directory", dir);
    if (st.st_uid != uid)
        return errset (err, EPERM,
                       "state dir %s belongs to uid %u, not to us (uid %u)",
                       dir, (unsigned)st.st_uid, (unsigned)uid);
    if (st.st_mode & 022)
        return errset (err, EPERM,
                       "state dir %s is group or world writable (mode %04o); "
                       "chmod 700 it",
                       dir, (unsigned)(st.st_mode & 07777));
    return 0;
}

/* One cairnd per state dir. The lock is a classic POSIX record lock, not an
 * flock or an OFD lock: those belong to the open file description, which a
 * forked child shares until its exec, so a child caught between fork and
 * exec when cairnd is SIGKILLed would keep the dead cairnd's lock and refuse
 * the restart. A record lock belongs to the process: children never hold
 * it, and it goes when cairnd goes. (We open this file once and never close
 * another descriptor of it, which would drop the lock.) F_GETLK names the
 * holder, so the refusal says who it is. */
static int statedir_lock (struct cairnd *d, struct cairn_error *err)
{
    char path[4096], buf[32];
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

    snprintf (path, sizeof (path), "%s/cairnd.lock", d->statedir);
    d->lockfd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (d->lockfd < 0)
        return errprintf (err, "%s: %s", path, strerror (errno));
    if (fcntl (d->lockfd, F_SETLK, &fl) < 0) {
        int e = errno;
        struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (e != EACCES && e != EAGAIN)
            return errprintf (err, "%s: lock: %s", path, strerror (e));
        if (fcntl (d->lockfd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK)
            snprintf (buf, sizeof (buf), "%d", (int)who.l_pid);
        else
            snprintf (buf, sizeof (buf), "?");
        return errset (err, EBUSY, "another cairnd (pid %s) is using %s", buf,
                       d->statedir);
    }
    int n = snprintf (buf, sizeof (buf), "%d\n", (int)getpid ());
    if (ftruncate (d->lockfd, 0) < 0 || pwrite (d->lockfd, buf, n, 0) != n)
        return errprintf (err, "%s: %s", path, strerror (errno));
    return 0;
}

/* cairn-shim: the config's, else next to our own executable, else the
 * install location. */
static char *find_shim (const struct cairn_config *cfg)
{
    char self[4096];
    if (cfg->shim)
        return strdup (cfg->shim);
    ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 32);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr (self, '/');
        if (slash) {
            strcpy (slash + 1, "cairn-shim");
            if (access (self, X_OK) == 0)
                return strdup (self);
        }
    }
    return strdup (CAIRN_LIBEXECDIR "/cairn-shim");
}

/* A held kill whose job's shells no longer start (killwait.h). */
static void killwait_kill (void *arg,
                           struct jobentry *je,
                           struct conn *c,
                           int64_t matchtag,
                           int signum)
{
    struct cairnd *d = arg;
    service_kill (d->service, je, c, matchtag, signum);
}

static const struct killwait_ops killwait_ops = {.kill = killwait_kill};

/* Phase 1: memory only — the maps, the outbox, the paths (the config
 * copy and the state dir's name come first, in cairnd_create). */
static int create_memory (struct cairnd *d, struct cairn_error *err)
{
    char path[4096];

    d->uid = getuid ();
    d->t_start = jobctx_now ();
    if (!(d->trust = trust_create (&d->cfg, d->uid, err)))
        return -1;
    /* before the jobs: forgetting one drops its held kills */
    if (!(d->jctx = jobctx_create (d->uid, &jobctx_ops, d)) ||
        !(d->kills = killwait_create (&killwait_ops, d)) ||
        !(d->streams = streams_create (&streams_ops, d)) ||
        !(d->outbox = outbox_create ()))
        return errset (err, ENOMEM, "out of memory");
    snprintf (path, sizeof (path), "%s/cairn.sock", d->statedir);
    if (!(d->sockpath = strdup (path)))
        return errset (err, ENOMEM, "out of memory");
    d->procroot = getenv (TESTENV_PROCROOT);
    d->bootid_path = getenv (TESTENV_BOOTID_FILE);
    return 0;
}

/* Phase 2: the keeper and its first supervisor, forked before the lock,
 * the journal, the socket or any pidfd exists (keeper.h). */
static int create_keeper (struct cairnd *d, struct cairn_error *err)
{
    char *shim = find_shim (&d->cfg);

    if (!shim)
        return errset (err, ENOMEM, "out of memory");
    d->procs = procs_create (shim, err);
    free (shim);
    return d->procs ? 0 : -1;
}

/* Phase 3: the boot id, the state dir (checked, locked), the journal,
 * the exit dir, settled. */
static int open_state (struct cairnd *d, struct cairn_error *err)
{
    if (procfs_bootid (d->bootid_path, d->bootid, sizeof (d->bootid)) < 0) {
        errprintf (err, "cannot read the boot id: %s", strerror (errno));
        return -1;
    }
    if (statedir_check (d->statedir, d->uid, err) < 0 ||
        statedir_lock (d, err) < 0)
        return -1;
    /* Users trust what answers there: no one else may be able to put
     * their own socket in its place (server_create replaces a stale one). */
    if (d->cfg.public_socket &&
        dir_check_parent (d->cfg.public_socket, d->uid, err) < 0) {
        errprefix (err, "public-socket");
        return -1;
    }
    struct journal_opts jo = {.map_size = d->cfg.journal_max_size < (64 << 20)
                                              ? d->cfg.journal_max_size
                                              : 0,
                              .max_map_size = d->cfg.journal_max_size,
                              .nosync = getenv (TESTENV_BENCH_NOSYNC) != NULL};
    if (!(d->journal = journal_open (d->statedir, &jo, err)))
        return -1;
    if (!(d->quota = quota_create (d->journal, &d->cfg)))
        return errset (err, ENOMEM, "out of memory");
    return procs_open (d->procs, d->statedir, d->cfg.run_dir,
                       journal_instance (d->journal), d->bootid, d->procroot,
                       err);
}

/* Phase 4: the event loop, its watchers and timers; the process-wide
 * settings (subreaper, descriptor limit, test switches). */
static int setup_loop (struct cairnd *d, struct cairn_error *err)
{
    if (!(d->loop = ev_loop_new (EVFLAG_SIGNALFD | EVFLAG_NOSIGMASK))) {
        errset (err, ENOMEM, "cannot create the event loop");
        return -1;
    }
    if (!(d->jobs = jobtable_create (d->loop, &jobtable_ops, d))) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    if (!(d->bindings = bind_create (d->jobs)) ||
        !(d->cost = usercost_create (d->trust, d->quota, d->jobs))) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    if (!(d->turn = turn_create (
              d->loop, d->journal, d->outbox, d->jobs, d->quota, d->procs,
              d->cfg.journal_commit_interval, &turn_ops, d))) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    if (!(d->output = output_create (d->loop, d->streams, d->procs, &d->cfg))) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    procs_attach (d->procs, d->loop, getenv (TESTENV_CLOCK_SKEW) != NULL);
    ev_signal_init (&d->sigterm, signal_cb, SIGTERM);
    ev_signal_init (&d->sigint, signal_cb, SIGINT);
    d->sigterm.data = d->sigint.data = d;
    ev_signal_start (d->loop, &d->sigterm);
    ev_signal_start (d->loop, &d->sigint);
    signal (SIGPIPE, SIG_IGN);
    /* One pidfd per live process: take every descriptor we are allowed. */
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit (RLIMIT_NOFILE, &rl);
    }
    if (isfinite (d->cfg.journal_retention)) {
        double every = d->cfg.journal_retention / 10;
        every = every < 1 ? 1 : every > 60 ? 60 : every;
        ev_timer_init (&d->purge_timer, purge_cb_timer, every, every);
        d->purge_timer.data = d;
        ev_timer_start (d->loop, &d->purge_timer);
    }
    return 0;
}

/* What the node role (node.h) asks of cairnd. */
static void node_ack (void *arg, struct conn *c, int64_t matchtag, json_t *r)
{
    struct cairnd *d = arg;
    turn_ack (d->turn, c, matchtag, r);
}

__attribute__ ((noreturn)) static void node_journal_failed (void *arg,
                                                            const char *why)
{
    turn_journal_failed (why);
}

static int node_may_exec (void *arg,
                          uid_t sender,
                          const json_t *payload,
                          struct cairn_error *err)
{
    struct cairnd *d = arg;
    return trust_node_exec (d->trust, sender, payload, err);
}

static const struct node_ops node_ops = {.ack = node_ack,
                                         .journal_failed = node_journal_failed,
                                         .may_exec = node_may_exec};

/* Phase 5: cgroups, the role, reconciliation and the first commit,
 * the users' quotas, the exit dir sealed. */
static int recover (struct cairnd *d, struct cairn_error *err)
{
    if (procs_cgroup_setup (d->procs, &d->cfg, err) < 0)
        return -1;
    procs_rlimit_setup (d->procs, &d->cfg);
    /* a job's processes: here, and (exec role) on other nodes */
    if (!(d->local =
              localproc_create (d->procs, d->jctx, d->output, d->bootid)) ||
        (d->cfg.role_node
             ? !(d->node = node_create (d->journal, d->outbox, d->procs,
                                        d->bootid, &node_ops, d))
             : !(d->remote =
                     remote_create (d->loop, d->journal, d->outbox, d->quota,
                                    d->jobs, d->turn, d->jctx)))) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    runners_init (&d->runners, d->local, d->remote);
    if ((d->node
             ? node_reconcile (d->node, err)
             : reconcile (d->journal, d->jobs, d->jctx, &d->runners, err)) < 0)
        return -1;
    /* said where it matters: not on a state dir with nothing to look at */
    if (!procs_trusted (d->procs) &&
        (jobtable_count (d->jobs) > 0 || node_nprocs (d->node) > 0))
        log_msg (LOG_INFO,
                 "%s: not sealed under this boot: a process with "
                 "no start marker and no exit status is lost, not started "
                 "again",
                 procs_exitdir_path (d->procs));
    /* what replay decided is committed before we listen */
    turn_flush_all (d->turn);
    reconcile_sweep_exits (d->procs, d->node, d->jobs);
    /* the users' quotas: a count that fails is made again at the next
     * user's start (its count of job records stays 0), never a reason not to
     * start. Without a public socket no user can reach us (the state dir is
     * 0700): no count, which reads every job record of the journal. */
    struct cairn_error qerr = {{0}};
    if (!d->node && d->cfg.public_socket && quota_count (d->quota, &qerr) < 0)
        log_msg (LOG_WARNING, "quota: %s", qerr.text);
    /* Unsealed is safe: the next start is as careful as this one was. */
    struct cairn_error serr = {{0}};
    if (procs_seal (d->procs, &serr) < 0)
        log_msg (LOG_WARNING, "%s", serr.text);
    return 0;
}

/* ---- the service (service.h) ---- */

/* A request on either socket (the server's ops). */
static void request (struct conn *c,
                     const char *topic,
                     int64_t matchtag,
                     json_t *payload,
                     void *arg)
{
    struct cairnd *d = arg;
    service_request (d->service, c, topic, matchtag, payload);
}

static uint64_t service_jobs_done (void *arg)
{
    struct cairnd *d = arg;
    return d->njobs_done;
}

static int service_nconns (void *arg)
{
    struct cairnd *d = arg;
    return server_nconns (d->server) +
           (d->public_server ? server_nconns (d->public_server) : 0);
}

static const struct service_ops service_ops = {.jobs_done = service_jobs_done,
                                               .nconns = service_nconns};

/* Phase 6: the service, lent what it uses, before the sockets that feed
 * it. */
static int create_service (struct cairnd *d, struct cairn_error *err)
{
    if (!(d->views = views_create (d->loop, d->journal, d->jobs, d->trust)))
        return errset (err, ENOMEM, "out of memory");
    struct service_lent lent = {.cfg = &d->cfg,
                                .uid = d->uid,
                                .t_start = d->t_start,
                                .journal = d->journal,
                                .outbox = d->outbox,
                                .jobs = d->jobs,
                                .turn = d->turn,
                                .streams = d->streams,
                                .jctx = d->jctx,
                                .trust = d->trust,
                                .cost = d->cost,
                                .quota = d->quota,
                                .bindings = d->bindings,
                                .kills = d->kills,
                                .procs = d->procs,
                                .views = d->views,
                                .node = d->node,
                                .remote = d->remote};
    if (!(d->service = service_create (&lent, &service_ops, d)))
        return errset (err, ENOMEM, "out of memory");
    return 0;
}

/* Phase 7: the sockets, and the line that says cairnd is up. */
static int listen_sockets (struct cairnd *d, struct cairn_error *err)
{
    struct server_limits lim = {
        .max_request_size = d->cfg.max_request_size,
        .max_output = 0,
        .max_connections = d->cfg.max_connections,
        .max_uid_connections = d->cfg.max_user_connections,
        .trusted_uid = d->uid,
        .trusted_uid2 = trust_instance_uid (d->trust) >= 0
                            ? (uid_t)trust_instance_uid (d->trust)
                            : 0,
        .user_idle_timeout =
            d->cfg.user_idle_timeout > 0 ? d->cfg.user_idle_timeout : -1};
    struct server_ops ops = {
        .request = request, .disconnect = conn_gone, .busy = conn_busy};
    if (!(d->server = server_create (d->loop, d->sockpath, &lim, &ops, d, err)))
        return -1;
    /* The state dir stays 0700 (journal, exit records, the service's
     * socket); users reach cairnd through a second socket of their own,
     * where every request is judged by its peer's uid (service.c). */
    if (d->cfg.public_socket) {
        lim.socket_mode = 0666;
        if (!(d->public_server = server_create (d->loop, d->cfg.public_socket,
                                                &lim, &ops, d, err))) {
            errprefix (err, "public-socket");
            return -1;
        }
        log_msg (LOG_INFO, "listening for every local user on %s",
                 d->cfg.public_socket);
    }
    if (d->uid == 0)
        log_msg (LOG_INFO, "running as root: each job's shells run as the "
                           "job's user; prolog and epilog as root");
    else
        log_msg (LOG_INFO,
                 "running as uid %u, not root: it runs jobs of uid "
                 "%u only",
                 (unsigned)d->uid, (unsigned)d->uid);
    if (d->node)
        log_msg (LOG_INFO, "listening on %s as a node (journal %s)",
                 d->sockpath, journal_instance (d->journal));
    else
        log_msg (LOG_INFO, "listening on %s (journal %s, %zu active jobs)",
                 d->sockpath, journal_instance (d->journal),
                 jobtable_count (d->jobs));
    return 0;
}

/* cairnd_create in named phases, in this order (each -1 with err). */
struct cairnd *cairnd_create (const struct cairn_config *cfg,
                              const char *statedir,
                              struct cairn_error *err)
{
    struct cairnd *d = calloc (1, sizeof (*d));

    if (!d)
        return NULL;
    d->lockfd = -1;
    /* the whole config, so that no key is left behind a field copy */
    if (config_copy (&d->cfg, cfg) < 0 || !(d->statedir = strdup (statedir))) {
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    if (create_memory (d, err) < 0)
        goto error;
    crashpoint_init ();
    if (create_keeper (d, err) < 0 || open_state (d, err) < 0 ||
        setup_loop (d, err) < 0 || recover (d, err) < 0 ||
        create_service (d, err) < 0 || listen_sockets (d, err) < 0)
        goto error;
    return d;
error:
    cairnd_destroy (d);
    return NULL;
}

int cairnd_run (struct cairnd *d)
{
    /* listening, with every replayed decision committed: ready */
    if (notify_send ("READY=1") < 0)
        log_msg (LOG_WARNING, "cannot tell systemd we are ready: %s",
                 strerror (errno));
    ev_run (d->loop, 0);
    turn_flush_all (d->turn);
    return d->exit_code;
}

void cairnd_destroy (struct cairnd *d)
{
    if (!d)
        return;
    int saved = errno;
    server_destroy (d->server);
    server_destroy (d->public_server);
    bind_destroy (d->bindings);
    d->bindings = NULL;
    /* a commit in flight ends, unacted on, before its jobs go */
    turn_destroy (d->turn);
    d->turn = NULL;
    jobtable_destroy (d->jobs); /* each job forgotten (job_forget) */
    d->jobs = NULL;
    service_destroy (d->service); /* no request, no held kill comes now */
    d->service = NULL;
    if (d->loop) {
        views_destroy (d->views);
        remote_destroy (d->remote);
        d->remote = NULL;
        node_destroy (d->node);
        d->node = NULL;
    }
    localproc_destroy (d->local); /* after the jobs that point at it */
    streams_destroy (d->streams); /* empty: every sub went with its job */
    killwait_destroy (d->kills);
    jobctx_destroy (d->jctx);
    usercost_destroy (d->cost);
    trust_destroy (d->trust); /* empty: every kill went with its job */
    quota_destroy (d->quota);
    outbox_destroy (d->outbox);
    if (d->loop) {
        ev_timer_stop (d->loop, &d->purge_timer);
        output_destroy (d->output);
        d->output = NULL;
        ev_signal_stop (d->loop, &d->sigterm);
        ev_signal_stop (d->loop, &d->sigint);
        procs_detach (d->procs);
        ev_loop_destroy (d->loop);
    }
    journal_close (d->journal);
    procs_destroy (d->procs);
    if (d->lockfd >= 0)
        close (d->lockfd);
    config_free (&d->cfg);
    free (d->statedir);
    free (d->sockpath);
    free (d);
    errno = saved;
}

struct ev_loop *cairnd_loop (struct cairnd *d)
{
    return d->loop;
}

struct journal *cairnd_journal (struct cairnd *d)
{
    return d->journal;
}

struct turn *cairnd_turn (struct cairnd *d)
{
    return d->turn;
}

bool cairnd_is_node (const struct cairnd *d)
{
    return d->node != NULL;
}
