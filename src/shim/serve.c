/* serve.c - cairn-shim --spawner: the node's supervisor (shim.h,
 * exec/spawner.h, the wire in exec/spawner_proto.h).
 *
 * The node's keeper starts us (shim/keep.c), from a descriptor table that
 * holds nothing a command must not inherit. We start every command cairnd asks
 * for ourselves (cmd.c: vfork, the marker, the drop to the user, exec): a
 * command costs its own exec and nothing more. We drain its output pipes
 * into its files, keeping the cap, and at its end write its exit record
 * while it is still a zombie, reap it, and tell cairnd (ENDED). So the
 * durable facts are the same files a per-command shim left, and a
 * restarted cairnd reads them the same way.
 *
 * Threads. A pool of workers (workers_start) reads cairnd's requests,
 * taking turns at the socket, and starts the commands; the main thread
 * reaps, caps and writes exit records. A start is the longest part of a
 * command's life here: vfork suspends the thread that calls it until the
 * command's process has made its marker and exec'd, so with one thread a
 * node's spawns ran one at a time and a core idled (BENCHMARKS.md, sixth
 * pass). Each worker's vfork suspends only itself. The answers still go
 * out in the order of the requests (serve_out.h).
 * A command is in `cmds` from its start (its worker adds it before its
 * STARTED) to its reap; while any start is under way, the main thread
 * leaves a zombie it does not know yet alone until its worker has added
 * it, so that no command is reaped without its exit record.
 *
 * We outlive cairnd: once its end of the socket is closed we start
 * nothing more (not even what it sent before it went) and exit when the
 * last command is seen through. At most once across cairnd's death: each
 * start holds the exit dir's shared flock (through its worker's own open
 * file description) from the check that cairnd is still there until the
 * command's exec, and a restarted cairnd takes it exclusively before it
 * judges any intent (exitdir_settle).
 *
 * Our commands outlive us too (no death signal): if we die, the keeper,
 * our parent and a subreaper, inherits them and sees them through.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/testenv.h"
#include "util/hashmap.h"
#include "supervise/keeper_proto.h"
#include "supervise/shim_proto.h"
#include "supervise/spawner_proto.h"
#include "journal/crashpoint.h"
#include "shim/cmd.h"
#include "shim/outpipe.h"
#include "shim/serve_out.h"
#include "shim/session.h"
#include "shim/shim.h"
#include "util/scm.h"

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

/* cairnd's pid, which the crash point "shim.drop.before" kills. */
static pid_t cairnd_pid;

/* A request read, from the main thread's read to its worker's answer. */
struct request {
    uint64_t seq; /* its place in the stream of answers (serve_out.h) */
    char *buf;    /* as read: argv and envp point into it */
    int argc;
    char **argv;
    char **envp;
};

struct sup_cmd {
    struct shim *s;
    struct request *rq; /* its request: s points into it */
    pid_t pid;
    char execid[SHIM_EXECID_LEN + 1];
    long long cap_due, cap_wait; /* ns, CLOCK_MONOTONIC; due 0: no cap */
};

/* The commands started and not reaped yet, by pid (a reap finds its
 * command in O(1) however many are live), each allocated on its own (the
 * main thread works on one it took out while workers add others). Under
 * cmds_lock; cmds_cond is signalled when `starting` falls. */
static pthread_mutex_t cmds_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cmds_cond = PTHREAD_COND_INITIALIZER;
static struct hashmap *cmds;
static int starting; /* workers between their vfork and adding its command */

/* An eventfd the main thread polls: a worker that adds a command whose
 * first output cut is due before the main thread would wake (main_due: 0
 * for never) writes to it, so that the main thread's timeout counts it. */
static int wakefd = -1;
static long long main_due;

/* The commands' output pipes (cmd.h shim_cmd_pipe), level-triggered, each
 * keyed by its command's pid and stream (pipe_key). A worker adds a
 * command's pipes while it adds the command to cmds (under cmds_lock);
 * the main thread drains them and removes them before it closes them (a
 * descriptor the keeper shares stays registered past our close). */
static int epfd = -1;

/* Our socket to the keeper (keeper_proto.h, struct keeper_pipe), or -1
 * (started by hand, or by an older keeper). */
static int keepfd = -1;

/* Tell the keeper about execid's pipes: a copy of each (PIPE), or that
 * they are done with (UNPIPE). Best effort: without the keeper's copies
 * a command whose supervisor dies gets SIGPIPE at its next write, as any
 * pipe's writer whose reader died does. Any worker or the main thread:
 * one packet each, so they never interleave. */
static void keeper_tell (struct shim *s, const char *execid, int type)
{
    struct keeper_pipe m = {.type = type};

    if (keepfd < 0)
        return;
    snprintf (m.execid, sizeof (m.execid), "%s", execid);
    m.cap = shim_cmd_max_output (s);
    for (int i = 0; i < (type == KEEPER_PIPE_PIPE ? 2 : 1); i++) {
        m.stream = i;
        int fd = type == KEEPER_PIPE_PIPE ? shim_cmd_pipe (s, i) : -1;
        if (type == KEEPER_PIPE_PIPE && fd < 0)
            continue;
        if (scm_send (keepfd, &m, sizeof (m), fd, 0) < 0 && errno != EINTR) {
            fprintf (stderr, "cairn-shim: the keeper's socket: %s\n",
                     strerror (errno));
            keepfd = -1; /* gone: no more copies */
            return;
        }
    }
}

static uint64_t pipe_key (pid_t pid, int stream)
{
    return (uint64_t)(uint32_t)pid << 1 | (uint64_t)(stream & 1);
}

static void main_wake (void)
{
    uint64_t one = 1;
    (void)!write (wakefd, &one, sizeof (one));
}

/* The workers take turns reading the socket (rd_lock): one waits in
 * read() for the next request while the others start theirs, so that a
 * request wakes the thread that starts it and no other. `busy` counts the
 * workers between a request read and its answer; `gone` is set once a
 * read found cairnd's end closed. Both atomic: the main thread reads them
 * while a worker waits in read() under rd_lock. */
static pthread_mutex_t rd_lock = PTHREAD_MUTEX_INITIALIZER;
static int busy;
static bool gone;

/* At most this many workers, however many CPUs: the starts of a node
 * share its locks and its one exit dir. */
#define SERVE_WORKERS_MAX 8

/* Split rq->buf (len bytes) into argv and envp (pointers into it).
 * Returns 0, or -1 with errno EPROTO or ENOMEM. request_free frees all. */
static int request_decode (struct request *rq, size_t len)
{
    char *buf = rq->buf, *p = buf, *end = buf + len;
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

static void request_free (struct request *rq)
{
    if (!rq)
        return;
    free (rq->argv);
    free (rq->envp);
    free (rq->buf);
    free (rq);
}

static long long mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* pid as the key of cmds. */
static void pid_key (char key[16], pid_t pid)
{
    snprintf (key, 16, "%d", (int)pid);
}

/* Under cmds_lock. Returns 0, or -1 (ENOMEM). */
static int cmd_add (struct sup_cmd *c)
{
    char key[16];
    pid_key (key, c->pid);
    return hashmap_put (cmds, key, c);
}

/* Under cmds_lock: take the command of pid out of cmds, or NULL. */
static struct sup_cmd *cmd_take (pid_t pid)
{
    char key[16];
    pid_key (key, pid);
    struct sup_cmd *c = hashmap_get (cmds, key);
    if (c)
        hashmap_del (cmds, key);
    return c;
}

static void ended_send (const struct sup_cmd *c, int code)
{
    struct spawner_msg m = {
        .type = SPAWNER_MSG_ENDED, .pid = c->pid, .code = code};
    snprintf (m.execid, sizeof (m.execid), "%s", c->execid);
    int status, left;
    long long osz, esz;
    if (code == 0 && shim_cmd_record (c->s, &status, &osz, &esz, &left)) {
        m.record = 1; /* cairnd need not read it (spawner_proto.h) */
        m.status = status;
        m.out_size = osz;
        m.err_size = esz;
        m.leftover = left;
    }
    out_ended (c->rq->seq, &m); /* cairnd gone: the record says it */
}

/* Is pid still an unreaped child of ours? (A worker that gave up on its
 * command reaps it itself.) */
static bool still_zombie (pid_t pid)
{
    siginfo_t si;
    memset (&si, 0, sizeof (si));
    return waitid (P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid == pid;
}

/* Its end told, the command is done with. */
static void cmd_done (struct sup_cmd *c, int code)
{
    ended_send (c, code);
    shim_cmd_free (c->s);
    request_free (c->rq);
    free (c);
}

/* Commands reaped whose session still holds processes that survived
 * shim_cmd_drain (in uninterruptible sleep, say). Their end is told only
 * once the session is empty: cairnd starts no epilog beside them, and a
 * kill escalation gives up on them (drains the rank) as on any process
 * that does not end. Each is SIGKILLed again at every look, the looks
 * 10 ms apart, doubling up to 1 s. Main thread only. */
struct lingering_cmd {
    struct sup_cmd *c;
    int code;
    long long due, wait;
    struct lingering_cmd *next;
};
static struct lingering_cmd *lingering;

#define LINGER_FIRST_NS (10LL * 1000 * 1000)
#define LINGER_MAX_NS (1000LL * 1000 * 1000)

/* False if c cannot be kept (ENOMEM): its end is told now. */
static bool linger_add (struct sup_cmd *c, int code)
{
    struct lingering_cmd *l = calloc (1, sizeof (*l));
    if (!l)
        return false;
    l->c = c;
    l->code = code;
    l->wait = LINGER_FIRST_NS;
    l->due = mono_ns () + l->wait;
    l->next = lingering;
    lingering = l;
    return true;
}

/* Look at the lingering commands that are due; the nearest due time
 * after that, or 0. */
static long long linger_look (void)
{
    long long now = mono_ns (), next = 0;
    for (struct lingering_cmd **lp = &lingering; *lp;) {
        struct lingering_cmd *l = *lp;
        if (l->due <= now) {
            if (shim_session_linger (l->c->pid) == 0) {
                *lp = l->next;
                cmd_done (l->c, l->code);
                free (l);
                continue;
            }
            l->wait = l->wait * 2 < LINGER_MAX_NS ? l->wait * 2 : LINGER_MAX_NS;
            l->due = now + l->wait;
        }
        if (next == 0 || l->due < next)
            next = l->due;
        lp = &l->next;
    }
    return next;
}

/* The pipe of c's stream is done with: out of the epoll set, then
 * closed. */
static void pipe_close (struct sup_cmd *c, int stream)
{
    int fd = shim_cmd_pipe (c->s, stream);
    if (fd < 0)
        return;
    (void)epoll_ctl (epfd, EPOLL_CTL_DEL, fd, NULL);
    shim_cmd_pipe_close (c->s, stream);
}

/* c's process has exited: what its pipes hold goes to its files before
 * its record says their sizes; then they are closed (what is left of its
 * session is killed next, and its writes have nowhere to go). */
static void pipes_end (struct sup_cmd *c)
{
    for (int i = 0; i < 2; i++) {
        while (shim_cmd_pipe_drain (c->s, i) == OUTPIPE_MORE)
            ;
        pipe_close (c, i);
    }
    keeper_tell (c->s, c->execid, KEEPER_PIPE_UNPIPE);
}

/* Drain the pipes epoll says are ready. */
static void pipes_drain (void)
{
    struct epoll_event ev[64];
    int n = epoll_wait (epfd, ev, 64, 0);
    for (int k = 0; k < n; k++) {
        pid_t pid = (pid_t)(ev[k].data.u64 >> 1);
        int stream = (int)(ev[k].data.u64 & 1);
        char key[16];
        pid_key (key, pid);
        pthread_mutex_lock (&cmds_lock);
        struct sup_cmd *c = hashmap_get (cmds, key);
        pthread_mutex_unlock (&cmds_lock);
        /* Only this thread takes commands out of cmds, and it closes
         * their pipes first: one not found has none registered. */
        if (c && shim_cmd_pipe_drain (c->s, stream) == OUTPIPE_END)
            pipe_close (c, stream);
    }
}

/* Every command whose process has exited: kill what is left of its group
 * (of its session, after the record when some was left: cmd.h), write its
 * exit record while it is still a zombie (so that a status is never only
 * in memory: the keeper, a child subreaper, inherits a zombie whose
 * supervisor died), then reap it and tell cairnd (or, if some of its
 * session survived, once they are gone: lingering). A zombie whose worker
 * has not added its command yet waits for it. */
static void cmds_reap (void)
{
    for (;;) {
        siginfo_t si;
        memset (&si, 0, sizeof (si));
        if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
            si.si_pid == 0)
            return;
        pthread_mutex_lock (&cmds_lock);
        struct sup_cmd *c;
        while (!(c = cmd_take (si.si_pid)) && starting > 0 &&
               still_zombie (si.si_pid))
            pthread_cond_wait (&cmds_cond, &cmds_lock);
        pthread_mutex_unlock (&cmds_lock);
        if (!c) { /* not a command (one its worker gave up on and reaps):
                   * never loop on it */
            (void)waitpid (si.si_pid, NULL, WNOHANG);
            continue;
        }
        pipes_end (c);
        shim_cmd_exited (c->s);
        CRASHPOINT ("supervisor.exitfile.before");
        int code = shim_cmd_finish (c->s, shim_wait_status (&si)) < 0 ? 3 : 0;
        int left = 0;
        if (shim_cmd_leftover (c->s) > 0) {
            /* Its session outlived it (a task in a group of its own):
             * the record says so; kill them before the end is told, so
             * that cairnd starts no epilog beside them. Still a zombie:
             * the session's id is still this command's. */
            CRASHPOINT ("supervisor.session.kill");
            left = shim_cmd_drain (c->s);
        }
        CRASHPOINT ("supervisor.reap.before");
        while (waitpid (c->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (left > 0 && linger_add (c, code))
            continue;
        cmd_done (c, code);
    }
}

/* Cut the output files of the commands that are due; the nearest due
 * time after that, or 0. */
static long long cmds_cap (void)
{
    long long now = mono_ns (), next = 0;
    size_t pos = 0;
    struct sup_cmd *c;
    const char *key;
    pthread_mutex_lock (&cmds_lock);
    while ((c = hashmap_next (cmds, &pos, &key))) {
        if (c->cap_due == 0)
            continue;
        if (c->cap_due <= now) {
            c->cap_wait = shim_cmd_cap (c->s, c->cap_wait);
            c->cap_due = now + c->cap_wait;
        }
        if (next == 0 || c->cap_due < next)
            next = c->cap_due;
    }
    pthread_mutex_unlock (&cmds_lock);
    return next;
}

/* Two descriptors per live command (its pipes): raise our limit as far
 * as we may, root to the system's most (fs.nr_open), so that a node's
 * live commands are bounded by that, not by a service's default; each
 * command's process takes the limit it would have had back (cmd.c
 * child_run, shim_nofile). */
static void nofile_raise (void)
{
    struct rlimit was, want;
    char buf[32];

    if (getrlimit (RLIMIT_NOFILE, &was) < 0)
        return;
    want = was;
    if (shim_read_small (AT_FDCWD, "/proc/sys/fs/nr_open", buf, sizeof (buf)) >
        0) {
        unsigned long long most = strtoull (buf, NULL, 10);
        if (most > want.rlim_max && setrlimit (RLIMIT_NOFILE, &(struct rlimit){
                                                   most, most}) == 0)
            want.rlim_max = most;
    }
    want.rlim_cur = want.rlim_max;
    if (want.rlim_cur != was.rlim_cur &&
        setrlimit (RLIMIT_NOFILE, &want) == 0)
        shim_nofile = was;
}

/* Is cairnd's end of the socket still open? */
static bool cairnd_there (int sock)
{
    struct pollfd pf = {.fd = sock, .events = POLLIN};
    return poll (&pf, 1, 0) >= 0 && !(pf.revents & (POLLHUP | POLLERR));
}

/* A start is under way (done false) or over (done true): the main thread,
 * waiting for a zombie's command to be added, looks again. */
static void starting_mark (bool done)
{
    pthread_mutex_lock (&cmds_lock);
    if (done) {
        starting--;
        pthread_cond_broadcast (&cmds_cond);
    } else
        starting++;
    pthread_mutex_unlock (&cmds_lock);
}

/* In a worker: start the command of rq; answer with STARTED, or with
 * nothing when cairnd is gone (nothing started). Returns true if the
 * command keeps rq. */
static bool start_one (int sock, struct request *rq, pid_t cairnd)
{
    struct spawner_msg m = {.type = SPAWNER_MSG_STARTED};
    const char *execid = execid_of (rq->envp);
    struct shim *s = NULL;
    struct sup_cmd *c = NULL;
    uint64_t seq = rq->seq; /* rq is the main thread's once in cmds */
    int lockfd = -1, pidfd = -1;
    bool gone = false, counted = false;

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
     * a start is either done (its marker written) by then, or never made.
     * The dir fd is this worker's own (cmd.c): another's unlock is not
     * ours. */
    lockfd = shim_cmd_dirfd (s);
    while (flock (lockfd, LOCK_SH) < 0 && errno == EINTR)
        ;
    if (!cairnd_there (sock)) {
        gone = true;
        goto reply;
    }
    if (shim_cmd_used (s)) {
        m.errnum = EEXIST;
        goto reply;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        m.errnum = ENOMEM;
        goto reply;
    }
    /* Between the start marker and the privilege drop (issue 17): the
     * marker alone must keep the command from running twice. */
    shim_kill_at_drop = crashpoint_due ("shim.drop.before") ? cairnd : 0;
    starting_mark (false);
    counted = true;
    /* Its output goes through pipes (cmd.h shim_cmd_pipes), copies of
     * which the keeper holds from before the start (keeper_proto.h). */
    bool piped = shim_cmd_pipes (s) == 0;
    if (piped) {
        keeper_tell (s, execid, KEEPER_PIPE_PIPE);
        CRASHPOINT ("supervisor.pipes.after");
    }
    uint64_t before = boot_ns ();
    if (!piped || shim_cmd_start (s, rq->envp) < 0) {
        /* nothing started: the exit file says why */
        if (piped)
            keeper_tell (s, execid, KEEPER_PIPE_UNPIPE);
        m.errnum = shim_cmd_finish (s, SHIM_STATUS_NOEXEC) < 0 ? EIO : 0;
        goto reply;
    }
    m.starttime = start_tick (before, boot_ns ());
    CRASHPOINT ("spawner.clone.after");
    m.pid = shim_cmd_pid (s);
    /* The clone straddled a tick (a slow or loaded machine): /proc tells,
     * while the command is ours and not reaped (only the main thread
     * reaps, once it is in cmds), rather than cairnd's loop, which often
     * finds it gone already. */
    unsigned long long ticks;
    if (m.starttime == 0 && shim_start_ticks (m.pid, &ticks) == 0)
        m.starttime = ticks;
    c->s = s;
    c->rq = rq;
    c->pid = m.pid;
    snprintf (c->execid, sizeof (c->execid), "%s", execid);
    c->cap_wait = SHIM_CAP_FIRST_NS;
    c->cap_due = shim_cmd_capped (s) ? mono_ns () + c->cap_wait : 0;
    /* The pidfd first: once in cmds, the command is the main thread's,
     * which may reap and free it at once: c is not read after cmd_add. */
    int added = -1;
    long long cap_due = c->cap_due;
    if ((pidfd = (int)syscall (SYS_pidfd_open, m.pid, 0)) >= 0) {
        pthread_mutex_lock (&cmds_lock);
        added = cmd_add (c);
        for (int i = 0; added == 0 && i < 2; i++) {
            struct epoll_event ev = {.events = EPOLLIN,
                                     .data.u64 = pipe_key (m.pid, i)};
            int fd = shim_cmd_pipe (s, i);
            if (fd >= 0 && epoll_ctl (epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                /* never a command whose output nobody reads */
                for (int j = 0; j < i; j++)
                    (void)epoll_ctl (epfd, EPOLL_CTL_DEL, shim_cmd_pipe (s, j),
                                     NULL);
                (void)cmd_take (m.pid);
                added = -1;
            }
        }
        pthread_mutex_unlock (&cmds_lock);
        long long due = __atomic_load_n (&main_due, __ATOMIC_RELAXED);
        if (added == 0 && cap_due && (due == 0 || cap_due < due))
            main_wake ();
    }
    if (added < 0) {
        /* cannot keep it: it must not run unseen. Ours to reap: the main
         * thread leaves it alone while we are `starting`. */
        m.errnum = pidfd < 0 ? errno : ENOMEM;
        if (pidfd >= 0)
            close (pidfd);
        pidfd = -1;
        shim_cmd_relay (s, SIGKILL);
        while (waitpid (m.pid, NULL, 0) < 0 && errno == EINTR)
            ;
        keeper_tell (s, execid, KEEPER_PIPE_UNPIPE);
        m.pid = 0;
        goto reply;
    }
    c = NULL;
    s = NULL;
reply:
    if (lockfd >= 0) /* the command exec'd, or its exit record is written */
        (void)flock (lockfd, LOCK_UN);
    shim_kill_at_drop = 0;
    if (m.pid == 0) {
        shim_cmd_free (s);
        free (c);
    }
    /* Its STARTED in the stream before its ENDED can be: out_ended keeps
     * an ENDED behind its STARTED, and the main thread finds the command
     * (and may send its ENDED) only once it is in cmds. */
    out_started (seq, gone ? NULL : &m, pidfd);
    if (counted)
        starting_mark (true);
    return m.pid > 0;
}

/* Read one request off the socket (under rd_lock): the request, or NULL
 * when cairnd is gone. A request that cannot be decoded is answered here
 * (EPROTO) and *rq is NULL with true returned. */
static bool request_read (int sock, struct request **out)
{
    uint32_t len;
    struct request *rq;

    *out = NULL;
    if (read_all (sock, &len, sizeof (len)) < 0)
        return false;
    if (len > SPAWNER_MAX_REQUEST || !(rq = calloc (1, sizeof (*rq))) ||
        !(rq->buf = malloc (len ? len : 1)))
        _exit (1); /* cairnd checks the size: this is a broken peer */
    if (read_all (sock, rq->buf, len) < 0) {
        request_free (rq);
        return false;
    }
    rq->seq = out_reserve ();
    if (request_decode (rq, len) < 0) {
        struct spawner_msg m = {.type = SPAWNER_MSG_STARTED, .errnum = errno};
        out_started (rq->seq, &m, -1);
        request_free (rq);
        return true;
    }
    *out = rq;
    return true;
}

static void *worker (void *arg)
{
    int sock = (int)(intptr_t)arg;
    pid_t cairnd = cairnd_pid;

    for (;;) {
        struct request *rq = NULL;
        pthread_mutex_lock (&rd_lock);
        bool more = !__atomic_load_n (&gone, __ATOMIC_SEQ_CST) &&
                    request_read (sock, &rq);
        if (rq)
            __atomic_add_fetch (&busy, 1, __ATOMIC_SEQ_CST);
        else if (!more)
            __atomic_store_n (&gone, true, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock (&rd_lock);
        if (!more) { /* cairnd is gone: nothing more to read */
            main_wake ();
            for (;;)
                pause ();
        }
        if (!rq)
            continue;
        if (!start_one (sock, rq, cairnd))
            request_free (rq);
        if (__atomic_sub_fetch (&busy, 1, __ATOMIC_SEQ_CST) == 0 &&
            __atomic_load_n (&gone, __ATOMIC_SEQ_CST))
            main_wake ();
    }
    return NULL;
}

/* True once cairnd is gone (a read found its end closed) and every request
 * read has been answered: no command can be added any more. */
static bool starts_over (void)
{
    return __atomic_load_n (&gone, __ATOMIC_SEQ_CST) &&
           __atomic_load_n (&busy, __ATOMIC_SEQ_CST) == 0;
}

/* Start the workers: two per CPU, at least 2 and at most
 * SERVE_WORKERS_MAX. A worker spends most of a start suspended in vfork,
 * off the CPU, while its command's process makes its marker and execs:
 * one per CPU left cores idle (BENCHMARKS.md, sixth pass: 2, 3 and 4
 * workers on 2 CPUs). They start with our signal mask (all that we wait
 * for blocked) and a small stack. */
static void workers_start (int sock)
{
    long ncpu = sysconf (_SC_NPROCESSORS_ONLN);
    long want = ncpu < 1 ? 2 : 2 * ncpu;
    int n = want > SERVE_WORKERS_MAX ? SERVE_WORKERS_MAX : (int)want;
    pthread_attr_t attr;

    if (pthread_attr_init (&attr) != 0 ||
        pthread_attr_setstacksize (&attr, 256 * 1024) != 0)
        _exit (1);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create (&t, &attr, worker, (void *)(intptr_t)sock) != 0) {
            if (i == 0)
                _exit (1);
            break;
        }
    }
    pthread_attr_destroy (&attr);
}

void shim_serve (int sock, pid_t cairnd, int keeper)
{
    bool orphan = false;
    sigset_t chld;
    int sigfd;

    /* The keeper set our death signal before the exec. From here on we
     * outlive it and cairnd: our commands are ours to see through. If
     * cairnd is gone already, there is nothing to start. */
    (void)prctl (PR_SET_PDEATHSIG, 0);
    if (!cairnd_there (sock))
        _exit (0);
    cairnd_pid = cairnd;
    long hz = sysconf (_SC_CLK_TCK);
    tick_ns = hz > 0 && 1000000000 % hz == 0 ? 1000000000u / (uint64_t)hz : 0;
    if (getenv (TESTENV_TICK_UNKNOWN))
        tick_ns = 0;
    crashpoint_init ();
    (void)shim_cmd_init (); /* a failure shows in each --user start */
    fresh_setup ();
    hold = getenv (TESTENV_SPAWN_HOLD);
    if (hold && !*hold)
        hold = NULL;
    if (setsid () < 0) /* out of cairnd's process group and session */
        _exit (1);
    /* Ours alone: a command that held it could read cairnd's requests,
     * forge our messages, and keep cairnd from seeing our death. */
    if (fcntl (sock, F_SETFD, FD_CLOEXEC) < 0 ||
        (keeper >= 0 && fcntl (keeper, F_SETFD, FD_CLOEXEC) < 0))
        _exit (1);
    keepfd = keeper;
    shim_fresh = true;
    sigemptyset (&chld);
    sigaddset (&chld, SIGCHLD);
    if ((sigfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
        (wakefd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        _exit (1);
    if (!(cmds = hashmap_create ()) ||
        (epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0)
        _exit (1);
    /* Two descriptors per live command (its pipes): as many as we may;
     * each command's process takes the limit it would have had back
     * (cmd.c child_run). */
    nofile_raise ();
    out_init (sock, wakefd);
    workers_start (sock);
    for (;;) {
        /* The workers read the socket; we only send on it (POLLOUT while
         * messages wait), and see its end close (POLLHUP). */
        struct pollfd pf[4] = {
            {.fd = sigfd, .events = POLLIN},
            {.fd = orphan ? -1 : sock, .events = out_waiting () ? POLLOUT : 0},
            {.fd = wakefd, .events = POLLIN},
            {.fd = epfd, .events = POLLIN}};
        long long due = cmds_cap (), ldue = lingering ? linger_look () : 0;
        if (ldue > 0 && (due == 0 || ldue < due))
            due = ldue;
        __atomic_store_n (&main_due, due, __ATOMIC_RELAXED);
        int timeout = -1;
        if (due > 0) {
            long long left = (due - mono_ns ()) / 1000000 + 1;
            timeout = left > 0 ? (int)(left < 60000 ? left : 60000) : 0;
        }
        if (starts_over ()) {
            if (!orphan) {
                orphan = true;
                out_drop ();
            }
            /* Only a start adds a command: none is under way. */
            pthread_mutex_lock (&cmds_lock);
            bool none =
                hashmap_count (cmds) == 0 && starting == 0 && !lingering;
            pthread_mutex_unlock (&cmds_lock);
            if (none) /* cairnd is gone and every command seen through */
                _exit (0);
        }
        if (poll (pf, 4, timeout) < 0 && errno != EINTR)
            _exit (1);
        /* Output before ends: a command's last words are in its files
         * before its record (pipes_end drains the rest). */
        if (pf[3].revents & POLLIN)
            pipes_drain ();
        if (pf[2].revents & POLLIN) {
            uint64_t v;
            (void)!read (wakefd, &v, sizeof (v));
        }
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo ssi;
            while (read (sigfd, &ssi, sizeof (ssi)) > 0)
                ;
            cmds_reap ();
        }
        /* cairnd gone (its end closed): start nothing more, not even what
         * it sent before it went (each start looks, cairnd_there), and
         * send nothing more. */
        if (!orphan && (pf[1].revents & (POLLHUP | POLLERR))) {
            orphan = true;
            out_drop ();
        } else if (!orphan &&
                   (pf[1].revents & POLLOUT || pf[2].revents & POLLIN))
            out_flush ();
    }
}
