/* serve.c - cairn-shim as cairnd's spawner (shim.h, exec/spawner.h).
 *
 * cairnd starts us first thing, before it holds any descriptor a command
 * must not inherit. For each request we clone a child with CLONE_PARENT
 * (cairnd, not us, is its parent and reaps it through the pidfd we send
 * back) and the child runs shim_main() on the request's argv and
 * environment: no exec, so a command costs the exec of the command only.
 * We are small and static, so the clone copies little.
 *
 * At most once: the child is set to die with cairnd until shim_main()
 * takes that back (its first act), and it runs nothing if cairnd is gone
 * by then: a start that cairnd's death cut short never runs, so a
 * restarted cairnd may start an intent it finds no shim for. Once the
 * child has checked that cairnd is alive, it writes its execid into the
 * environment slot (spawner_proto.h), which is how a restarted cairnd
 * finds it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "exec/shim_proto.h"
#include "exec/spawner_proto.h"
#include "journal/crashpoint.h"
#include "shim/shim.h"

extern char **environ;

/* Where our own environment keeps the execid slot's zeros (36 bytes in the
 * memory /proc/PID/environ shows), or NULL. */
static char *slot;

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

/* The child: become a shim (fresh_setup() did the rest), then run it. */
static void __attribute__ ((noreturn))
child_run (struct request *rq, const char *hold, pid_t cairnd, bool drop_due)
{
    const char *execid = execid_of (rq->envp);

    if (hold)
        hold_here (hold);
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != cairnd)
        _exit (126);
    if (slot && execid && shim_execid_valid (execid))
        memcpy (slot, execid, SHIM_EXECID_LEN);
    /* Dispositions, mask and 0-2 are already a shim's (fresh_setup()):
     * what is left per clone is the session and our two descriptors. */
    if (setsid () < 0 || close_range (3, ~0U, 0) < 0)
        _exit (126);
    shim_fresh = true;
    /* Crash points are cairnd's and ours: a shim passes none, but carries
     * out the one we counted for it. */
    crashpoint_active = false;
    shim_kill_at_drop = drop_due ? cairnd : 0;
    environ = rq->envp;
    _exit (shim_main (rq->argc, rq->argv));
}

/* Clone one shim. Returns its pid with *pidfd and *start (its start tick,
 * or 0) set, or 0 with *errnum. */
static pid_t spawn_one (struct request *rq,
                        const char *hold,
                        pid_t cairnd,
                        int *pidfd,
                        uint64_t *start,
                        int *errnum)
{
    int fd = -1;
    struct clone_args ca = {
        /* CLONE_PARENT: cairnd, our parent, is the shim's parent. The exit
         * signal is then ours (SIGCHLD), whatever exit_signal says. */
        .flags = CLONE_PARENT | CLONE_PIDFD,
        .pidfd = (uint64_t)(uintptr_t)&fd,
    };

    *pidfd = -1;
    *errnum = 0;
    /* Between the start marker and the privilege drop (issue 17): the
     * marker alone must keep the command from running twice. */
    bool drop_due = crashpoint_due ("shim.drop.before");
    uint64_t before = boot_ns ();
    long pid = syscall (SYS_clone3, &ca, sizeof (ca));
    if (pid == 0)
        child_run (rq, hold, cairnd, drop_due);
    if (pid < 0) {
        *errnum = errno;
        return 0;
    }
    *start = start_tick (before, boot_ns ());
    CRASHPOINT ("spawner.clone.after");
    *pidfd = fd;
    return (pid_t)pid;
}

static int reply_send (int sock, const struct spawner_reply *r, int fd)
{
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct iovec iov = {.iov_base = (void *)r, .iov_len = sizeof (*r)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

    if (fd >= 0) {
        memset (cbuf, 0, sizeof (cbuf));
        msg.msg_control = cbuf;
        msg.msg_controllen = sizeof (cbuf);
        struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN (sizeof (int));
        memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
    ssize_t n;
    while ((n = sendmsg (sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof (*r) ? 0 : -1;
}

/* Find the zeros of the slot in the environment we were started with. */
static char *slot_find (void)
{
    const char *want = SPAWNER_EXECID_SLOT;
    size_t n = strlen (SHIM_ENV_EXECID) + 1;
    for (char **e = environ; e && *e; e++) {
        if (!strcmp (*e, want))
            return *e + n;
    }
    return NULL;
}

/* Once, for every clone to come: the process state a shim starts from,
 * so that a clone has only its session and descriptors to set.
 * - Default dispositions (an ignored signal would survive the command's
 *   exec), shim_signals_default().
 * - Exactly shim_sigset() blocked, whatever cairnd's mask was: the
 *   terminal's SIGINT, SIGTERM and SIGHUP among them (cairnd decides when
 *   we stop), and a signal cairnd relays the moment it has a shim's pidfd
 *   is queued for the shim, not fatal to it. Blocked, not ignored: a shim
 *   would lose a signal that is ignored when it arrives.
 * - 0-2 on /dev/null: the command's stdin, and nowhere for a shim's
 *   messages to go that could block it. */
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

void shim_serve (int sock)
{
    const char *hold = getenv ("CAIRN_TEST_SPAWN_HOLD");
    pid_t cairnd = getppid ();

    /* cairnd set our death signal before the exec; if it died before, go. */
    if (cairnd == 1)
        _exit (0);
    slot = slot_find ();
    long hz = sysconf (_SC_CLK_TCK);
    tick_ns = hz > 0 && 1000000000 % hz == 0 ? 1000000000u / (uint64_t)hz : 0;
    crashpoint_init ();
    fresh_setup ();
    if (hold && !*hold)
        hold = NULL;
    for (;;) {
        uint32_t len;
        char *buf;
        struct request rq = {0};
        struct spawner_reply r = {0, 0, 0};
        int fd = -1;
        uint64_t start = 0;

        if (read_all (sock, &len, sizeof (len)) < 0)
            _exit (0); /* cairnd closed its end, or died */
        if (len > SPAWNER_MAX_REQUEST || !(buf = malloc (len ? len : 1)))
            _exit (1); /* cairnd checks the size: this is a broken peer */
        if (read_all (sock, buf, len) < 0)
            _exit (0);
        if (request_decode (buf, len, &rq) < 0)
            r.errnum = errno;
        else
            r.pid = spawn_one (&rq, hold, cairnd, &fd, &start, &r.errnum);
        r.starttime = r.pid > 0 ? start : 0;
        free (rq.argv);
        free (rq.envp);
        free (buf);
        if (reply_send (sock, &r, fd) < 0)
            _exit (0);
        if (fd >= 0)
            close (fd);
    }
}
