/* serve.c - cairn-shim --spawner: the node's supervisor (shim.h,
 * exec/spawner.h, the wire in exec/spawner_proto.h).
 *
 * cairnd starts us first thing, before it holds any descriptor a command
 * must not inherit. We start every command cairnd asks for ourselves
 * (cmd.c: vfork, the marker, the drop to the user, exec): a command costs
 * its own exec and nothing more. We cap its output files on a timer, and
 * at its end write its exit record while it is still a zombie, reap it, and
 * tell cairnd (ENDED). So the durable facts are the same files a
 * per-command shim left, and a restarted cairnd reads them the same way.
 *
 * We outlive cairnd: once its end of the socket is closed we start
 * nothing more (not even what it sent before it went) and exit when the
 * last command is seen through. At most once across cairnd's death: each
 * start holds the exit dir's shared flock from the check that cairnd is
 * still there until the command's exec, and a restarted cairnd takes it
 * exclusively before it judges any intent (exitdir_settle).
 *
 * Our commands outlive us too (no death signal): if we die, cairnd, our
 * parent and a subreaper, inherits them and sees them through.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/shim_proto.h"
#include "exec/spawner_proto.h"
#include "journal/crashpoint.h"
#include "shim/cmd.h"
#include "shim/shim.h"

extern char **environ;

/* Nanoseconds per clock tick (sysconf _SC_CLK_TCK, the unit of
 * /proc/PID/stat's start time); 0 if unknown: no start times then. */
static uint64_t tick_ns;

static uint64_t boot_ns (void)
{
    struct timespec ts;
    if (clock_gettime (CLOCK_BOOTTIME, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The start tick of a process cloned between before and after (the kernel
 * stamps it with CLOCK_BOOTTIME inside the clone, and /proc shows that
 * divided down to ticks), or 0 when the two fall in different ticks. */
static uint64_t start_tick (uint64_t before, uint64_t after)
{
    if (tick_ns == 0 || before == 0 || after < before ||
        before / tick_ns != after / tick_ns)
        return 0;
    return before / tick_ns;
}

/* 0 on success, -1 with errno; EOF before len bytes is EPIPE. */
static int read_all (int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EPIPE;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

struct request {
    int argc;
    char **argv;
    char **envp;
};

/* Split buf into argv and envp (pointers into buf). Returns 0, or -1 with
 * errno EPROTO or ENOMEM. The caller frees rq->argv and rq->envp. */
static int request_decode (char *buf, size_t len, struct request *rq)
{
    char *p = buf, *end = buf + len;
    char **lists[2] = {NULL, NULL};
    unsigned long counts[2] = {0, 0};

    if (len == 0 || buf[len - 1] != '\0')
        goto proto;
    p += strlen (p) + 1; /* the shim path: we are the shim */
    for (int l = 0; l < 2; l++) {
        char *num_end;
        if (p >= end)
            goto proto;
        counts[l] = strtoul (p, &num_end, 10);
        if (*num_end != '\0' || counts[l] > len)
            goto proto;
        p = num_end + 1;
        if (!(lists[l] = calloc (counts[l] + 1, sizeof (char *))))
            goto error;
        for (unsigned long i = 0; i < counts[l]; i++) {
            if (p >= end)
                goto proto;
            lists[l][i] = p;
            p += strlen (p) + 1;
        }
    }
    if (counts[0] < 1)
        goto proto;
    rq->argc = (int)counts[0];
    rq->argv = lists[0];
    rq->envp = lists[1];
    return 0;
proto:
    errno = EPROTO;
error:
    free (lists[0]);
    free (lists[1]);
    return -1;
}

static const char *execid_of (char **envp)
{
    size_t n = strlen (SHIM_ENV_EXECID);
    for (; *envp; envp++) {
        if (!strncmp (*envp, SHIM_ENV_EXECID, n) && (*envp)[n] == '=')
            return *envp + n + 1;
    }
    return NULL;
}

/* The test hook of spawner.h: hold here until the file is gone. */
static void hold_here (const char *hold)
{
    char held[4096];
    int fd;

    snprintf (held, sizeof (held), "%s.held", hold);
    if ((fd = open (held, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
        char pid[24];
        int n = snprintf (pid, sizeof (pid), "%d\n", (int)getpid ());
        (void)!write (fd, pid, (size_t)n);
        close (fd);
    }
    while (access (hold, F_OK) == 0)
        usleep (10000);
}

/* Messages for cairnd its socket could not take yet, oldest first. We
 * never block on that socket: cairnd may be blocked sending us a request
 * while its own socket is full of our messages, and each would wait on
 * the other for ever. Each message keeps its pidfd (or -1) until sent;
 * off is how much of the front one went already. */
struct outmsg {
    struct spawner_msg m;
    int fd;
};
static struct outmsg *outq;
static size_t outq_head, outq_n, outq_room, outq_off;

/* Send what is left of o from off without blocking: the pidfd rides with
 * its first byte. Returns the bytes sent, or -1 with errno (EAGAIN: the
 * socket is full). */
static ssize_t msg_try (int sock, const struct outmsg *o, size_t off)
{
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct iovec iov = {.iov_base = (char *)&o->m + off,
                        .iov_len = sizeof (o->m) - off};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

    if (o->fd >= 0 && off == 0) {
        memset (cbuf, 0, sizeof (cbuf));
        msg.msg_control = cbuf;
        msg.msg_controllen = sizeof (cbuf);
        struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN (sizeof (int));
        memcpy (CMSG_DATA (c), &o->fd, sizeof (int));
    }
    ssize_t n;
    while ((n = sendmsg (sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 &&
           errno == EINTR)
        ;
    return n;
}

/* Drop what is queued: cairnd is gone (the exit records say it all). */
static void outq_drop (void)
{
    for (size_t i = outq_head; i < outq_n; i++) {
        if (outq[i].fd >= 0)
            close (outq[i].fd);
    }
    outq_head = outq_n = outq_off = 0;
}

/* Send what is queued, in order, as far as the socket takes it. */
static void outq_flush (int sock)
{
    while (outq_head < outq_n) {
        struct outmsg *o = &outq[outq_head];
        ssize_t n = msg_try (sock, o, outq_off);
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            outq_drop ();
            return;
        }
        outq_off += (size_t)n;
        if (o->fd >= 0) { /* passed with the first byte */
            close (o->fd);
            o->fd = -1;
        }
        if (outq_off < sizeof (o->m))
            continue;
        outq_off = 0;
        outq_head++;
    }
    outq_head = outq_n = 0;
}

/* Send m to cairnd after what is queued; fd (ours to close, or -1) rides
 * with it. */
static void msg_post (int sock, const struct spawner_msg *m, int fd)
{
    if (outq_n == outq_room) {
        size_t room = outq_room ? outq_room * 2 : 64;
        struct outmsg *n = realloc (outq, room * sizeof (*n));
        if (!n)
            _exit (1); /* cairnd takes our commands over */
        outq = n;
        outq_room = room;
    }
    outq[outq_n++] = (struct outmsg){.m = *m, .fd = fd};
    outq_flush (sock);
}

/* Once, for every command to come: the process state each command's
 * process starts from (it is forked from us), so that it has only its
 * stdio to set.
 * - Default dispositions (an ignored signal would survive the command's
 *   exec), shim_signals_default().
 * - Exactly shim_sigset() blocked, whatever cairnd's mask was: the
 *   terminal's SIGINT, SIGTERM and SIGHUP among them (cairnd decides when
 *   we stop), and SIGCHLD, which our signalfd reads. Blocked, not
 *   ignored: an ignored SIGCHLD would have the kernel reap our commands
 *   and lose their statuses. A command's process unblocks all before its
 *   exec.
 * - 0-2 on /dev/null: the commands' stdin, and nowhere for our messages
 *   to go that could block us. */
static void fresh_setup (void)
{
    sigset_t block;
    int nul;

    shim_signals_default ();
    shim_sigset (&block);
    if (sigprocmask (SIG_SETMASK, &block, NULL) < 0)
        _exit (1);
    if ((nul = open ("/dev/null", O_RDWR)) < 0 || dup2 (nul, 0) < 0 ||
        dup2 (nul, 1) < 0 || dup2 (nul, 2) < 0)
        _exit (1);
    if (nul > 2)
        close (nul);
}

/* ---- the commands we supervise ---- */

/* CAIRN_TEST_SPAWN_HOLD (spawner.h), or NULL. */
static const char *hold;

struct sup_cmd {
    struct shim *s;
    char *req; /* its request: s points into it */
    char **argv, **envp;
    pid_t pid;
    char execid[SHIM_EXECID_LEN + 1];
    long long cap_due, cap_wait; /* ns, CLOCK_MONOTONIC; due 0: no cap */
};

static struct sup_cmd *cmds;
static size_t ncmds, cmds_room;

static long long mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct sup_cmd *cmd_add (void)
{
    if (ncmds == cmds_room) {
        size_t room = cmds_room ? cmds_room * 2 : 64;
        struct sup_cmd *n = realloc (cmds, room * sizeof (*n));
        if (!n)
            return NULL;
        cmds = n;
        cmds_room = room;
    }
    return &cmds[ncmds++];
}

static struct sup_cmd *cmd_find (pid_t pid)
{
    for (size_t i = 0; i < ncmds; i++) {
        if (cmds[i].pid == pid)
            return &cmds[i];
    }
    return NULL;
}

static void ended_send (int sock, pid_t pid, const char *execid, int code)
{
    struct spawner_msg m = {
        .type = SPAWNER_MSG_ENDED, .pid = pid, .code = code};
    snprintf (m.execid, sizeof (m.execid), "%s", execid);
    msg_post (sock, &m, -1); /* cairnd gone: the exit record says it */
}

/* Every command whose process has exited: kill what is left of its group,
 * write its exit record while it is still a zombie (so that a status is
 * never only in memory: cairnd, as a child subreaper, inherits a zombie
 * whose supervisor died), then reap it and tell cairnd. */
static void cmds_reap (int sock)
{
    for (;;) {
        siginfo_t si;
        memset (&si, 0, sizeof (si));
        if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
            si.si_pid == 0)
            return;
        struct sup_cmd *c = cmd_find (si.si_pid);
        if (!c) { /* not a command: cannot happen, but never loop on it */
            (void)waitpid (si.si_pid, NULL, WNOHANG);
            continue;
        }
        shim_cmd_exited (c->s);
        CRASHPOINT ("supervisor.exitfile.before");
        int code = shim_cmd_finish (c->s, shim_wait_status (&si)) < 0 ? 3 : 0;
        CRASHPOINT ("supervisor.reap.before");
        while (waitpid (c->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        ended_send (sock, c->pid, c->execid, code);
        shim_cmd_free (c->s);
        free (c->req);
        free (c->argv);
        free (c->envp);
        *c = cmds[--ncmds];
    }
}

/* Cut the output files of the commands that are due; the nearest due
 * time after that, or 0. */
static long long cmds_cap (void)
{
    long long now = mono_ns (), next = 0;
    for (size_t i = 0; i < ncmds; i++) {
        struct sup_cmd *c = &cmds[i];
        if (c->cap_due == 0)
            continue;
        if (c->cap_due <= now) {
            c->cap_wait = shim_cmd_cap (c->s, c->cap_wait);
            c->cap_due = now + c->cap_wait;
        }
        if (next == 0 || c->cap_due < next)
            next = c->cap_due;
    }
    return next;
}

/* Is cairnd's end of the socket still open? */
static bool cairnd_there (int sock)
{
    struct pollfd pf = {.fd = sock, .events = POLLIN};
    return poll (&pf, 1, 0) >= 0 && !(pf.revents & (POLLHUP | POLLERR));
}

/* Start the command of rq (read into buf); answer with STARTED, or set
 * *gone when cairnd is gone (nothing started, no answer). Returns true if
 * the command keeps buf and rq's arrays. */
static bool
start_one (int sock, char *buf, struct request *rq, pid_t cairnd, bool *gone)
{
    struct spawner_msg m = {.type = SPAWNER_MSG_STARTED};
    const char *execid = execid_of (rq->envp);
    struct shim *s = NULL;
    struct sup_cmd *c = NULL;
    int lockfd = -1, pidfd = -1;

    if (hold)
        hold_here (hold);
    if (!shim_execid_valid (execid) ||
        !(s = shim_cmd_parse (rq->argc, rq->argv, execid))) {
        m.errnum = EPROTO;
        goto reply;
    }
    snprintf (m.execid, sizeof (m.execid), "%s", execid);
    if (shim_cmd_opendir (s) < 0) {
        m.errnum = errno ? errno : EIO;
        goto reply;
    }
    /* At most once across cairnd's death: under the exit dir's shared
     * lock, start only while cairnd is there. A restarted cairnd takes the
     * lock exclusively before it judges any intent (exitdir_settle), so
     * a start is either done (its marker written) by then, or never made. */
    lockfd = shim_cmd_dirfd (s);
    while (flock (lockfd, LOCK_SH) < 0 && errno == EINTR)
        ;
    if (!cairnd_there (sock)) {
        *gone = true;
        goto reply;
    }
    if (shim_cmd_used (s)) {
        m.errnum = EEXIST;
        goto reply;
    }
    /* Between the start marker and the privilege drop (issue 17): the
     * marker alone must keep the command from running twice. */
    shim_kill_at_drop = crashpoint_due ("shim.drop.before") ? cairnd : 0;
    uint64_t before = boot_ns ();
    if (shim_cmd_start (s, rq->envp) < 0) {
        /* nothing started: the exit record says why */
        m.errnum = shim_cmd_finish (s, SHIM_STATUS_NOEXEC) < 0 ? EIO : 0;
        goto reply;
    }
    m.starttime = start_tick (before, boot_ns ());
    CRASHPOINT ("spawner.clone.after");
    c = cmd_add ();
    m.pid = shim_cmd_pid (s);
    if (!c || (pidfd = (int)syscall (SYS_pidfd_open, m.pid, 0)) < 0) {
        /* cannot keep it: it must not run unseen */
        m.errnum = c ? errno : ENOMEM;
        shim_cmd_relay (s, SIGKILL);
        if (c)
            ncmds--;
        c = NULL;
        m.pid = 0;
        while (waitpid (shim_cmd_pid (s), NULL, 0) < 0 && errno == EINTR)
            ;
        goto reply;
    }
    c->s = s;
    c->req = buf;
    c->argv = rq->argv;
    c->envp = rq->envp;
    c->pid = m.pid;
    snprintf (c->execid, sizeof (c->execid), "%s", execid);
    c->cap_wait = SHIM_CAP_FIRST_NS;
    c->cap_due = shim_cmd_capped (s) ? mono_ns () + c->cap_wait : 0;
    s = NULL;
reply:
    if (lockfd >= 0) /* the command exec'd, or its exit record is written */
        (void)flock (lockfd, LOCK_UN);
    shim_kill_at_drop = 0;
    shim_cmd_free (s);
    if (*gone)
        return false;
    msg_post (sock, &m, pidfd);
    return m.pid > 0;
}

/* Read and start one request. Returns -1 when cairnd is gone. */
static int request_one (int sock, pid_t cairnd)
{
    uint32_t len;
    char *buf;
    struct request rq = {0};
    bool gone = false;

    if (read_all (sock, &len, sizeof (len)) < 0)
        return -1;
    if (len > SPAWNER_MAX_REQUEST || !(buf = malloc (len ? len : 1)))
        _exit (1); /* cairnd checks the size: this is a broken peer */
    if (read_all (sock, buf, len) < 0) {
        free (buf);
        return -1;
    }
    if (request_decode (buf, len, &rq) < 0) {
        struct spawner_msg m = {.type = SPAWNER_MSG_STARTED, .errnum = errno};
        msg_post (sock, &m, -1);
    } else if (start_one (sock, buf, &rq, cairnd, &gone))
        return 0;
    free (rq.argv);
    free (rq.envp);
    free (buf);
    return gone ? -1 : 0;
}

void shim_serve (int sock)
{
    pid_t cairnd = getppid ();
    bool orphan = false;
    sigset_t chld;
    int sigfd;

    /* cairnd set our death signal before the exec; if it died before, go.
     * From here on we outlive it: its commands are ours to see through. */
    if (cairnd == 1)
        _exit (0);
    (void)prctl (PR_SET_PDEATHSIG, 0);
    long hz = sysconf (_SC_CLK_TCK);
    tick_ns = hz > 0 && 1000000000 % hz == 0 ? 1000000000u / (uint64_t)hz : 0;
    crashpoint_init ();
    fresh_setup ();
    hold = getenv ("CAIRN_TEST_SPAWN_HOLD");
    if (hold && !*hold)
        hold = NULL;
    if (setsid () < 0) /* out of cairnd's process group and session */
        _exit (1);
    /* Ours alone: a command that held it could read cairnd's requests,
     * forge our messages, and keep cairnd from seeing our death. */
    if (fcntl (sock, F_SETFD, FD_CLOEXEC) < 0)
        _exit (1);
    shim_fresh = true;
    sigemptyset (&chld);
    sigaddset (&chld, SIGCHLD);
    if ((sigfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        _exit (1);
    for (;;) {
        struct pollfd pf[2] = {
            {.fd = sigfd, .events = POLLIN},
            {.fd = orphan ? -1 : sock,
             .events = POLLIN | (outq_n > outq_head ? POLLOUT : 0)}};
        long long due = cmds_cap ();
        int timeout = -1;
        if (due > 0) {
            long long left = (due - mono_ns ()) / 1000000 + 1;
            timeout = left > 0 ? (int)(left < 60000 ? left : 60000) : 0;
        }
        if (orphan && ncmds == 0)
            _exit (0); /* cairnd is gone and every command seen through */
        if (poll (pf, 2, timeout) < 0 && errno != EINTR)
            _exit (1);
        if (pf[1].revents & POLLOUT)
            outq_flush (sock);
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo ssi;
            while (read (sigfd, &ssi, sizeof (ssi)) > 0)
                ;
            cmds_reap (sock);
        }
        /* cairnd gone (its end closed): start nothing more, not even what
         * it sent before it went. */
        if (!orphan && (pf[1].revents & (POLLHUP | POLLERR))) {
            orphan = true;
            outq_drop ();
        }
        else if (!orphan && (pf[1].revents & POLLIN) &&
                 request_one (sock, cairnd) < 0)
            orphan = true;
    }
}
