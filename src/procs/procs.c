/* procs.c - the supervision client's life (create, open, attach,
 * destroy), its watches, and signals.
 *
 * We hold a pidfd per command: it cannot be fooled by pid reuse, it tells
 * us the command ended (readable), and it signals exactly that process.
 * A process of our supervisor's is not watched through it (its end comes
 * as an ENDED, after its exit record is written); one no supervisor of
 * ours holds (an earlier cairnd's, or the keeper's after a supervisor
 * died) is, and its exit record is waited for (settled).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "procs/procs_private.h"
#include "journal/crashpoint.h"
#include "supervise/exitfile.h"
#include "supervise/janitor.h"
#include "supervise/keeper.h"
#include "supervise/procfs.h"
#include "supervise/spawner.h"
#include "util/log.h"

#define SETTLE_INTERVAL 0.005
/* cairnd is a child subreaper (procs_attach): reap what comes to it. A
 * job's process that leaves its command goes to the keeper, the nearest
 * subreaper (keeper.h); what comes to us is what the keeper left when it
 * died (cairnd then exits), and everything where we run as a container's
 * PID 1. No command of ours is ever our child. A timer, not SIGCHLD: the
 * scan reads each child's stat. */
#define REAP_INTERVAL 1.0

struct procs *procs_create (const char *shim, struct cairn_error *err)
{
    struct procs *p = calloc (1, sizeof (*p));

    if (!p || !(p->shim = strdup (shim)) || !(p->watches = hashmap_create ())) {
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    p->uid = getuid ();
    p->xd.fd = -1;
    if (access (shim, X_OK) < 0) {
        errprintf (err, "cairn-shim not found or not executable at %s: %s",
                   shim, strerror (errno));
        goto error;
    }
    if (!(p->keeper = keeper_create (shim, err)) ||
        !(p->spawner = spawner_create (p->keeper, err)))
        goto error;
    return p;
error:
    procs_destroy (p);
    return NULL;
}

int procs_open (struct procs *p,
                const char *statedir,
                const char *run_dir,
                const char *instance,
                const char *bootid,
                const char *procroot,
                struct cairn_error *err)
{
    snprintf (p->bootid, sizeof (p->bootid), "%s", bootid);
    p->procroot = procroot;
    if (exitdir_open (statedir, run_dir, instance, bootid, p->uid, &p->xd,
                      err) < 0)
        return -1;
    /* after the keeper's fork: cairnd forks nothing with a thread */
    if (!(p->janitor = janitor_create (p->xd.fd, err)))
        return -1;
    if (keeper_exitdir (p->keeper, p->xd.fd, err) < 0)
        return -1;
    if (exitdir_settle (&p->xd, false, err) < 0) {
        if (errno != EWOULDBLOCK)
            return -1;
        log_msg (LOG_INFO, "waiting for a start the last cairnd asked for "
                           "(its command's exec) to finish");
        if (exitdir_settle (&p->xd, true, err) < 0)
            return -1;
    }
    return 0;
}

static bool reap_keep (pid_t pid, void *arg)
{
    struct procs *p = arg;
    return pid == keeper_pid (p->keeper);
}

static void reap_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct procs *p = w->data;
    int n = procfs_reap_strays (NULL, /* our own children: the real /proc */
                                reap_keep, p);
    if (n > 0)
        log_msg (LOG_DEBUG, "reaped %d process(es) that were not ours", n);
}

void procs_attach (struct procs *p, struct ev_loop *loop, bool test_clock_skew)
{
    p->loop = loop;
    p->test_clock_skew = test_clock_skew;
    procs_link_watch (p);
    /* What the keeper leaves when it dies comes to us rather than to PID 1,
     * and we reap it (reap_cb): no <defunct> piles up where PID 1 does not
     * reap, as in a container. */
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
        log_msg (LOG_WARNING, "cannot become a child subreaper: %s",
                 strerror (errno));
    ev_timer_init (&p->reap_timer, reap_cb, REAP_INTERVAL, REAP_INTERVAL);
    p->reap_timer.data = p;
    ev_timer_start (loop, &p->reap_timer);
}

bool procs_trusted (const struct procs *p)
{
    return p->xd.trusted;
}

int procs_seal (struct procs *p, struct cairn_error *err)
{
    return exitdir_seal (&p->xd, p->bootid, err);
}

int procs_exitdir (const struct procs *p)
{
    return p->xd.fd;
}

const char *procs_exitdir_path (const struct procs *p)
{
    return p->xd.path;
}

const char *procs_cgroup (const struct procs *p)
{
    return p->cgroup;
}

size_t procs_count (const struct procs *p)
{
    return hashmap_count (p->watches);
}

size_t procs_asked (const struct procs *p)
{
    return p->npend - p->pend_head;
}

uint64_t procs_nspawned (const struct procs *p)
{
    return p->nspawned;
}

bool procs_watched (const struct procs *p, const char *execid)
{
    return execid && hashmap_get (p->watches, execid) != NULL;
}

void procs_detach (struct procs *p)
{
    size_t pos = 0;
    struct watch *w;

    if (!p || !p->loop)
        return;
    while ((w = hashmap_next (p->watches, &pos, NULL))) {
        ev_io_stop (p->loop, &w->io);
        ev_timer_stop (p->loop, &w->settle);
    }
    procs_link_stop (p);
    ev_timer_stop (p->loop, &p->reap_timer);
    p->loop = NULL;
}

void procs_destroy (struct procs *p)
{
    if (!p)
        return;
    int saved = errno;
    procs_detach (p);
    if (p->watches) {
        size_t pos = 0;
        struct watch *w;
        while ((w = hashmap_next (p->watches, &pos, NULL))) {
            close (w->pidfd);
            free (w);
        }
        hashmap_destroy (p->watches);
    }
    janitor_destroy (p->janitor); /* removes what it still holds */
    exitdir_close (&p->xd);
    spawner_destroy (p->spawner);
    keeper_destroy (p->keeper);
    free (p->pend);
    free (p->lost);
    procs_env_clear (&p->inherit);
    free (p->cgroup);
    free (p->shim);
    free (p);
    errno = saved;
}

static void watch_cb (struct ev_loop *loop, ev_io *w, int revents);
static void settle_cb (struct ev_loop *loop, ev_timer *t, int revents);

int procs_watch (struct procs *p,
                 const char *execid,
                 pid_t pid,
                 int pidfd,
                 void *owner,
                 const struct procs_owner_ops *ops)
{
    if (hashmap_get (p->watches, execid)) {
        /* one watcher per process: a second would be orphaned by the map
         * and outlive its owner */
        log_msg (LOG_ERR, "%s is already watched", execid);
        errno = EEXIST;
        return -1;
    }
    struct watch *w = calloc (1, sizeof (*w));
    if (!w)
        return -1;
    w->p = p;
    w->owner = owner;
    w->ops = ops;
    w->pid = pid;
    w->pidfd = pidfd;
    snprintf (w->execid, sizeof (w->execid), "%s", execid);
    if (hashmap_put (p->watches, w->execid, w) < 0) {
        free (w);
        return -1;
    }
    ev_timer_init (&w->settle, settle_cb, SETTLE_INTERVAL, SETTLE_INTERVAL);
    w->settle.data = w;
    ev_io_init (&w->io, watch_cb, pidfd, EV_READ);
    w->io.data = w;
    ev_io_start (p->loop, &w->io);
    return 0;
}

/* Our supervisor's: its end comes as an ENDED (procs_ended), not through
 * its pidfd, which is readable before the exit record is written. */
static void watch_supervised (struct procs *p, struct watch *w)
{
    ev_io_stop (p->loop, &w->io);
    w->supervised = true;
}

/* Its supervisor died: the keeper sees it through, and we watch it as
 * an earlier supervisor's (its pidfd, then its exit record). */
static void watch_orphan (struct procs *p, struct watch *w)
{
    w->supervised = false;
    w->orphaned = true;
    ev_io_start (p->loop, &w->io);
}

void procs_watch_started (struct procs *p,
                          const char *execid,
                          const struct procs_started *st)
{
    struct watch *w = hashmap_get (p->watches, execid);
    if (w && st->orphaned)
        watch_orphan (p, w);
    else if (w)
        watch_supervised (p, w);
}

size_t procs_orphan_all (struct procs *p)
{
    size_t pos = 0, n = 0;
    struct watch *w;

    while ((w = hashmap_next (p->watches, &pos, NULL))) {
        if (!w->supervised)
            continue;
        watch_orphan (p, w);
        n++;
    }
    return n;
}

void procs_unwatch (struct procs *p, const char *execid)
{
    struct watch *w = p && execid ? hashmap_get (p->watches, execid) : NULL;
    if (!w)
        return;
    if (p->loop) {
        ev_io_stop (p->loop, &w->io);
        ev_timer_stop (p->loop, &w->settle);
    }
    close (w->pidfd);
    hashmap_del (p->watches, execid);
    free (w);
}

/* w's process ended (shim_status as ops->ended's): unwatch it and tell its
 * owner. */
static void watch_end (struct watch *w, int shim_status)
{
    struct procs *p = w->p;
    void *owner = w->owner;
    const struct procs_owner_ops *ops = w->ops;
    char execid[EXECID_LEN + 1];

    snprintf (execid, sizeof (execid), "%s", w->execid);
    /* No supervisor killed the rest of its cgroup: the keeper knows
     * only its process group. */
    if (w->orphaned)
        procs_cgroup_reap (p, execid);
    procs_unwatch (p, execid);
    ops->ended (owner, execid, shim_status, NULL);
}

void procs_ended (struct procs *p,
                  const char *execid,
                  int code,
                  const struct procs_exit *rec)
{
    struct watch *w = execid ? hashmap_get (p->watches, execid) : NULL;
    if (!w)
        return; /* not watched (could not be): its files go with its owner */
    void *owner = w->owner;
    const struct procs_owner_ops *ops = w->ops;
    char id[EXECID_LEN + 1];
    snprintf (id, sizeof (id), "%s", execid);
    procs_unwatch (p, id);
    ops->ended (owner, id, code << 8, rec);
}

/* The end of a watched process that is not our child: its supervisor
 * (an earlier cairnd's) writes the exit record while the process is a
 * zombie and reaps it after. Collect once the file is there, or once the
 * process is reaped without one, or is a zombie no supervisor holds (its
 * supervisor died: whoever reaps it writes nothing). */
static bool settled (struct watch *w)
{
    int status;
    char *error = NULL;
    if (exitfile_read (w->p->xd.fd, w->execid, &status, &error) == 0) {
        free (error);
        return true;
    }
    if (pidfd_send_signal (w->pidfd, 0, NULL, 0) < 0 && errno == ESRCH)
        return true;
    return procfs_zombie_unsupervised (w->p->procroot, w->pid) == 1;
}

static void settle_cb (struct ev_loop *loop, ev_timer *t, int revents)
{
    struct watch *w = t->data;
    if (settled (w))
        watch_end (w, -1);
}

static void watch_cb (struct ev_loop *loop, ev_io *io, int revents)
{
    struct watch *w = io->data;
    int shim_status = -1;

    if (shim_reap (w->pidfd, &shim_status) < 0 && errno == EAGAIN)
        return; /* spurious wake-up */
    if (shim_status < 0 && !settled (w)) {
        ev_io_stop (loop, &w->io);
        ev_timer_start (loop, &w->settle);
        return;
    }
    watch_end (w, shim_status);
}

void procs_gone_note (char *buf, size_t len, int shim_status, pid_t pid)
{
    if (shim_status >= 0)
        snprintf (buf, len,
                  "its supervisor could not record its exit status (code "
                  "%d)",
                  shim_status >> 8);
    else
        snprintf (buf, len,
                  "the process (pid %d) ended and left no exit status: its "
                  "supervisor died",
                  (int)pid);
}

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2)
#endif

/* Send signum to the process group the process of pidfd leads (every
 * command leads its own). Through the pidfd (Linux 6.9) the group cannot
 * be a stranger's; before 6.9, kill(-pid) while the pidfd says the leader
 * has not exited: its pid, the group's id, cannot be reused before its
 * supervisor reaps it, which is after its exit. */
static int cmd_signal (int pidfd, pid_t pid, int signum)
{
    if (pidfd_send_signal (pidfd, signum, NULL, PIDFD_SIGNAL_PROCESS_GROUP) ==
        0)
        return 0;
    if (errno != EINVAL)
        return -1;
    struct pollfd pf = {.fd = pidfd, .events = POLLIN};
    if (poll (&pf, 1, 0) != 0) {
        errno = ESRCH;
        return -1;
    }
    return kill (-pid, signum);
}

void procs_signal (struct procs *p,
                   const char *execid,
                   int signum,
                   bool session)
{
    struct watch *w = execid ? hashmap_get (p->watches, execid) : NULL;
    if (!w)
        return; /* ended meanwhile: its exit is on its way */
    CRASHPOINT ("exec.signal.before");
    if (cmd_signal (w->pidfd, w->pid, signum) < 0 && errno != ESRCH)
        log_msg (LOG_WARNING, "%s: signal %d: %s", execid, signum,
                 strerror (errno));
    /* The kill escalation reaches the whole session: a job shell's tasks
     * sit in groups of their own, and stock Flux has the shell kill them
     * all (flux_job_kill). Once the leader has exited its supervisor kills
     * what is left of the session (shim/cmd.h). */
    if (session) {
        int n = procfs_signal_session (p->procroot, w->pid, w->pidfd, signum);
        if (n > 0)
            log_msg (LOG_INFO,
                     "%s: signal %d to %d other process(es) of its "
                     "session",
                     execid, signum, n);
    }
    CRASHPOINT ("exec.signal.after");
}

int procs_kill_leftovers (struct procs *p, const char *execid)
{
    CRASHPOINT ("exec.orphans.kill.before");
    procs_cgroup_reap (p, execid);
    return procfs_kill_execid (p->procroot, execid, SIGKILL);
}

void procs_forget (struct procs *p, const char *execid)
{
    janitor_push (p->janitor, execid);
}

void procs_forget_kick (struct procs *p)
{
    janitor_kick (p->janitor);
}
