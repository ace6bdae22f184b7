/* procs_link.c - the link to the supervisor (cairn-shim(8)) and the
 * keeper behind it: their pidfds and the supervisor's socket watched, a
 * dead supervisor replaced (its commands the keeper's, each watched
 * through its pidfd and exit record), the starts queued in a turn sent in
 * one go, its ENDED and STARTED notices read. What one process's start
 * and end mean is its owner's (procs.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "procs/procs_private.h"
#include "util/log.h"
#include "supervise/keeper.h"
#include "supervise/spawner.h"
#include "journal/crashpoint.h"

#define SUPERVISOR_DEATHS 5

void procs_lost (struct procs *p)
{
    log_msg (LOG_ERR,
             "cannot go on without the supervisor (pid %d); exiting so that "
             "a restart reconciles the jobs",
             (int)spawner_pid (p->spawner));
    _exit (EXIT_FAILURE);
}

/* The keeper died: a supervisor's death would now lose its commands'
 * statuses, and the next supervisor could not be started clean. Exit as a
 * crash would: the supervisor and its commands run on, and the restart
 * starts a new keeper. What the dead keeper had inherited from a dead
 * supervisor comes to us, then to init: those statuses are lost (both
 * died, keeper.h). */
static void keeper_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    struct procs *p = w->data;
    log_msg (LOG_ERR,
             "the keeper (pid %d) died; exiting so that a restart starts a "
             "new one and reconciles the jobs",
             (int)keeper_pid (p->keeper));
    _exit (EXIT_FAILURE);
}

static void spawner_watch_start (struct procs *p)
{
    ev_io_set (&p->spawner_watch, spawner_pidfd (p->spawner), EV_READ);
    ev_io_start (p->loop, &p->spawner_watch);
    ev_io_set (&p->spawner_msgs, spawner_sock (p->spawner), EV_READ);
    ev_io_start (p->loop, &p->spawner_msgs);
}

/* The supervisor died. Its commands are the keeper's children now (a
 * subreaper, and its parent), which writes each one's exit record at its
 * end; we watch each through its pidfd and that record: one it saw
 * through already (its ENDED unread) is found reaped, with its exit
 * record. Then the keeper starts a new supervisor for the next commands,
 * from its own descriptor table (keeper.h). */
static void spawner_replace (struct procs *p)
{
    struct cairn_error err = {{0}};
    pid_t old = spawner_pid (p->spawner);
    double now = ev_now (p->loop);

    CRASHPOINT ("exec.supervisor.lost");
    size_t n = procs_orphan_all (p);
    procs_pending_orphan (p);
    /* A supervisor that dies at every start would be replaced forever:
     * after SUPERVISOR_DEATHS deaths in a minute, stop as a crash would
     * (the keeper keeps what the dead ones ran). */
    if (now - p->supervisor_death_t > 60) {
        p->supervisor_death_t = now;
        p->supervisor_deaths = 0;
    }
    if (++p->supervisor_deaths > SUPERVISOR_DEATHS) {
        log_msg (LOG_ERR,
                 "the supervisor died %d times within a minute; exiting",
                 p->supervisor_deaths);
        _exit (EXIT_FAILURE);
    }
    ev_io_stop (p->loop, &p->spawner_watch);
    ev_io_stop (p->loop, &p->spawner_msgs);
    spawner_destroy (p->spawner);
    log_msg (LOG_ERR,
             "the supervisor (pid %d) died; the keeper sees its %zu "
             "command(s) through (and drains their output); "
             "starting a new supervisor",
             (int)old, n);
    if (!(p->spawner = spawner_create (p->keeper, &err))) {
        log_msg (LOG_ERR, "%s; exiting so that a restart reconciles the jobs",
                 err.text);
        _exit (EXIT_FAILURE);
    }
    spawner_watch_start (p);
}

static void spawner_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    struct procs *p = w->data;
    struct cairn_error err = {{0}};

    if (procs_recover (p, &err) < 0) {
        log_msg (LOG_ERR, "%s", err.text);
        procs_lost (p);
    }
}

int procs_recover (struct procs *p, struct cairn_error *err)
{
    struct pollfd pf = {.fd = spawner_pidfd (p->spawner), .events = POLLIN};

    /* Its socket is closed, so it is dying (or broke the protocol: it is
     * replaced all the same). Once it is dead, its commands are ours. */
    if (poll (&pf, 1, 5000) == 0) {
        log_msg (LOG_ERR,
                 "the supervisor (pid %d) broke its protocol; "
                 "killing it",
                 (int)spawner_pid (p->spawner));
        (void)pidfd_send_signal (pf.fd, SIGKILL, NULL, 0);
        (void)poll (&pf, 1, -1);
    }
    spawner_replace (p);
    /* Its last start is done (the command exec'd or died) or never made:
     * what it left unanswered can be judged, next turn (not from inside
     * a spawn). */
    if (exitdir_settle (&p->xd, true, err) < 0)
        return -1;
    procs_poke (p);
    return 0;
}

/* The supervisor saw commands through: collect them. */
static void spawner_msgs_read (struct procs *p)
{
    struct spawner_msg m;
    int fd;

    if (p->nlost > 0)
        procs_orphans_settle (p);
    while (spawner_next (p->spawner, &m, &fd) == 0) {
        if (m.type == SPAWNER_MSG_STARTED)
            procs_answered (p, &m, fd);
        else {
            struct procs_exit rec = {.status = m.status,
                                     .out_size = m.out_size,
                                     .err_size = m.err_size,
                                     .leftover = m.leftover};
            procs_ended (p, m.execid, m.code, m.record == 1 ? &rec : NULL);
        }
    }
    if (errno == EPIPE) /* it died: its pidfd is readable, or soon is */
        ev_io_stop (p->loop, &p->spawner_msgs);
    else if (errno == EPROTO) { /* broken: replaced like a dead one */
        log_msg (LOG_ERR,
                 "the supervisor (pid %d) answered a request "
                 "never made; killing it",
                 (int)spawner_pid (p->spawner));
        (void)pidfd_send_signal (spawner_pidfd (p->spawner), SIGKILL, NULL, 0);
        ev_io_stop (p->loop, &p->spawner_msgs);
    }
}

static void spawner_msgs_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    spawner_msgs_read (w->data);
}

static void spawner_kick_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    spawner_msgs_read (w->data);
}

/* A timer, not ev_feed_event: a spawn may come from the flush in the
 * prepare watcher, and a fed event would be handled right after it, its
 * journal events left unflushed while the loop sleeps. A due timer comes
 * after the poll, and the next prepare flushes what it made. */
void procs_poke (struct procs *p)
{
    if (!ev_is_active (&p->spawner_kick))
        ev_timer_start (p->loop, &p->spawner_kick);
}

void procs_send (struct procs *p)
{
    struct cairn_error err = {{0}};

    if (!spawner_queued (p->spawner))
        return;
    CRASHPOINT ("exec.spawn.send");
    if (spawner_send (p->spawner, &err) == 0)
        return;
    log_msg (LOG_ERR, "%s", err.text);
    if (procs_recover (p, &err) < 0) {
        log_msg (LOG_ERR, "%s", err.text);
        procs_lost (p);
    }
}

void procs_link_watch (struct procs *p)
{
    ev_io_init (&p->keeper_watch, keeper_cb, keeper_pidfd (p->keeper), EV_READ);
    p->keeper_watch.data = p;
    ev_io_start (p->loop, &p->keeper_watch);
    ev_init (&p->spawner_watch, spawner_cb);
    p->spawner_watch.data = p;
    ev_init (&p->spawner_msgs, spawner_msgs_cb);
    p->spawner_msgs.data = p;
    ev_timer_init (&p->spawner_kick, spawner_kick_cb, 0, 0);
    p->spawner_kick.data = p;
    spawner_watch_start (p);
}

void procs_link_stop (struct procs *p)
{
    ev_io_stop (p->loop, &p->keeper_watch);
    ev_io_stop (p->loop, &p->spawner_watch);
    ev_io_stop (p->loop, &p->spawner_msgs);
    ev_timer_stop (p->loop, &p->spawner_kick);
}
