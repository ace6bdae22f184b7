/* spawner.c - see spawner.h
 *
 * Wire format on the socketpair (SOCK_STREAM, both ends blocking):
 *   request: u32 length, then that many bytes: the shim path, argc, the
 *            shim's argv, envc, the environment; every item a NUL-terminated
 *            string (counts in decimal).
 *   reply:   struct reply; when pid > 0 the shim's pidfd rides along
 *            (SCM_RIGHTS). errnum != 0 with pid > 0 means the clone worked
 *            but the exec did not: the child has exited and the caller,
 *            being its parent, reaps it through that pidfd.
 * One request at a time: cairnd waits for the reply, as it waited for
 * posix_spawn before.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/shim_proto.h"
#include "exec/spawner.h"
#include "journal/crashpoint.h"

struct spawner {
    pid_t pid;
    int pidfd;
    int sock;
};

struct reply {
    int32_t errnum;
    int32_t pid;
};

/* ---- both sides ---- */

/* send(), not write(): a dead peer is EPIPE, never a SIGPIPE. */
static int send_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 0 on success, -1 with errno; EOF before len bytes is EPIPE. */
static int read_all (int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read (fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EPIPE;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- the spawner process ---- */

/* The child between clone and exec. Async-signal-safe calls only: it is a
 * copy of the spawner taken in the middle of a request. On failure the
 * errno goes up errfd (close-on-exec: EOF there means the exec worked). */
static void child_exec (const char *path,
                        char **av,
                        char **envp,
                        int errfd,
                        const char *hold,
                        pid_t cairnd)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigset_t block;
    int nul, e;

    if (hold) {
        char held[4096];
        snprintf (held, sizeof (held), "%s.held", hold);
        if ((nul = open (held, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
            char pid[24];
            int n = snprintf (pid, sizeof (pid), "%d\n", (int)getpid ());
            (void)!write (nul, pid, (size_t)n);
            close (nul);
        }
        while (access (hold, F_OK) == 0)
            usleep (10000);
    }
    /* At most once: a restarted cairnd that finds an intent with no shim
     * running under its execid starts it again, so this child must not
     * outlive cairnd and exec the shim later. Die with cairnd (the shim
     * clears this first thing: it must outlive cairnd), and if cairnd is
     * gone already, go without running anything. Before the exec our
     * environment is the spawner's, so nothing could have found us. */
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != cairnd)
        _exit (126);
    for (int s = 1; s < NSIG; s++)
        (void)sigaction (s, &dfl, NULL); /* fails harmlessly for KILL etc. */
    shim_sigset (&block);
    if (sigprocmask (SIG_SETMASK, &block, NULL) < 0 || setsid () < 0)
        goto fail;
    if ((nul = open ("/dev/null", O_RDWR)) < 0)
        goto fail;
    /* errfd and the spawner's socket are >= 3 (spawner_create sees to it);
     * park errfd on 3, then close everything above it. */
    if (dup2 (nul, 0) < 0 || dup2 (nul, 1) < 0 || dup2 (nul, 2) < 0)
        goto fail;
    if (errfd != 3) {
        if (dup3 (errfd, 3, O_CLOEXEC) < 0)
            goto fail;
        errfd = 3;
    }
    if (close_range (4, ~0U, 0) < 0)
        goto fail;
    execve (path, av, envp);
fail:
    e = errno;
    (void)!write (errfd, &e, sizeof (e));
    _exit (127);
}

/* Split a request into the path, argv and envp (pointers into buf).
 * Returns 0, or -1 with errno EPROTO. Caller frees *av and *envp. */
static int request_decode (char *buf,
                           size_t len,
                           const char **path,
                           char ***av,
                           char ***envp)
{
    char *p = buf, *end = buf + len;
    char **lists[2] = {NULL, NULL};

    if (len == 0 || buf[len - 1] != '\0')
        goto proto;
    *path = p;
    p += strlen (p) + 1;
    for (int l = 0; l < 2; l++) {
        if (p >= end)
            goto proto;
        char *num_end;
        unsigned long n = strtoul (p, &num_end, 10);
        if (*num_end != '\0' || n > len)
            goto proto;
        p = num_end + 1;
        if (!(lists[l] = calloc (n + 1, sizeof (char *))))
            goto error;
        for (unsigned long i = 0; i < n; i++) {
            if (p >= end)
                goto proto;
            lists[l][i] = p;
            p += strlen (p) + 1;
        }
    }
    *av = lists[0];
    *envp = lists[1];
    return 0;
proto:
    errno = EPROTO;
error:
    free (lists[0]);
    free (lists[1]);
    return -1;
}

/* Clone one shim. Returns the child's pid with *pidfd set, 0 with *errnum
 * set when nothing was started, or the pid with *pidfd and *errnum set
 * when the clone worked and the exec did not. */
static pid_t spawn_one (const char *path,
                        char **av,
                        char **envp,
                        const char *hold,
                        pid_t cairnd,
                        int *pidfd,
                        int *errnum)
{
    int pfd[2], fd = -1, e = 0;
    struct clone_args ca = {
        /* CLONE_PARENT: cairnd, our parent, is the shim's parent. The exit
         * signal is then ours (SIGCHLD), whatever exit_signal says. */
        .flags = CLONE_PARENT | CLONE_PIDFD,
        .pidfd = (uint64_t)(uintptr_t)&fd,
    };

    *pidfd = -1;
    *errnum = 0;
    if (pipe2 (pfd, O_CLOEXEC) < 0) {
        *errnum = errno;
        return 0;
    }
    long pid = syscall (SYS_clone3, &ca, sizeof (ca));
    if (pid == 0) {
        close (pfd[0]);
        child_exec (path, av, envp, pfd[1], hold, cairnd);
    }
    if (pid < 0) {
        *errnum = errno;
        close (pfd[0]);
        close (pfd[1]);
        return 0;
    }
    close (pfd[1]);
    CRASHPOINT ("spawner.clone.after");
    ssize_t n;
    while ((n = read (pfd[0], &e, sizeof (e))) < 0 && errno == EINTR)
        ;
    close (pfd[0]);
    if (n == (ssize_t)sizeof (e))
        *errnum = e ? e : EIO;
    *pidfd = fd;
    return (pid_t)pid;
}

static int reply_send (int sock, const struct reply *r, int fd)
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

static void __attribute__ ((noreturn)) spawner_main (int sock, pid_t parent)
{
    const char *hold = getenv ("CAIRN_TEST_SPAWN_HOLD");
    struct sigaction ign = {.sa_handler = SIG_IGN};

    /* Die with cairnd; if it is already gone, go now. */
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != parent)
        _exit (0);
    sigaction (SIGINT, &ign, NULL);
    sigaction (SIGTERM, &ign, NULL);
    sigaction (SIGHUP, &ign, NULL);
    sigaction (SIGPIPE, &ign, NULL);
    if (hold && !*hold)
        hold = NULL;
    for (;;) {
        uint32_t len;
        char *buf;
        const char *path;
        char **av = NULL, **envp = NULL;
        struct reply r = {0, 0};
        int fd = -1;

        if (read_all (sock, &len, sizeof (len)) < 0)
            _exit (0); /* cairnd closed its end, or died */
        if (len > SPAWNER_MAX_REQUEST || !(buf = malloc (len ? len : 1)))
            _exit (1); /* cairnd checks the size: this is a broken peer */
        if (read_all (sock, buf, len) < 0)
            _exit (0);
        if (request_decode (buf, len, &path, &av, &envp) < 0)
            r.errnum = errno;
        else
            r.pid = spawn_one (path, av, envp, hold, parent, &fd, &r.errnum);
        free (av);
        free (envp);
        free (buf);
        if (reply_send (sock, &r, fd) < 0)
            _exit (0);
        if (fd >= 0)
            close (fd);
    }
}

/* ---- cairnd's side ---- */

struct spawner *spawner_create (struct cairn_error *err)
{
    struct spawner *sp = calloc (1, sizeof (*sp));
    int sv[2], fd;
    pid_t parent = getpid ();

    if (!sp) {
        errset (err, ENOMEM, "spawner: out of memory");
        return NULL;
    }
    sp->sock = sp->pidfd = -1;
    /* Keep 0-2 taken, so that no descriptor of ours lands there and is
     * clobbered by a shim's /dev/null (cairnd may be started with them
     * closed). */
    while ((fd = open ("/dev/null", O_RDWR)) >= 0 && fd < 3)
        ;
    if (fd >= 3)
        close (fd);
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        errprintf (err, "spawner: socketpair: %s", strerror (errno));
        goto error;
    }
    sp->pid = fork ();
    if (sp->pid < 0) {
        int e = errno;
        close (sv[0]);
        close (sv[1]);
        errset (err, e, "spawner: fork: %s", strerror (e));
        goto error;
    }
    if (sp->pid == 0) {
        close (sv[0]);
        spawner_main (sv[1], parent);
    }
    close (sv[1]);
    sp->sock = sv[0];
    if ((sp->pidfd = pidfd_open (sp->pid, 0)) < 0) {
        errprintf (err, "spawner: pidfd_open %d: %s", (int)sp->pid,
                   strerror (errno));
        goto error;
    }
    return sp;
error:
    spawner_destroy (sp);
    return NULL;
}

static int strings_size (char *const *v, size_t *total, size_t *count)
{
    size_t n = 0;
    for (; v[n]; n++)
        *total += strlen (v[n]) + 1;
    *count = n;
    *total += 24;
    return 0;
}

static char *put_strings (char *p, char *const *v, size_t n)
{
    p += sprintf (p, "%zu", n) + 1;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen (v[i]) + 1;
        memcpy (p, v[i], l);
        p += l;
    }
    return p;
}

/* The request for (path, av, envp): a u32 length and the strings. */
static char *
request_encode (const char *path, char *const *av, char *const *envp, size_t *len)
{
    size_t total = strlen (path) + 1, nav, nenv;
    char *buf, *p;

    strings_size (av, &total, &nav);
    strings_size (envp, &total, &nenv);
    if (total > SPAWNER_MAX_REQUEST) {
        errno = E2BIG;
        return NULL;
    }
    if (!(buf = malloc (sizeof (uint32_t) + total)))
        return NULL;
    p = buf + sizeof (uint32_t);
    memcpy (p, path, strlen (path) + 1);
    p += strlen (path) + 1;
    p = put_strings (p, av, nav);
    p = put_strings (p, envp, nenv);
    uint32_t body = (uint32_t)(p - buf - sizeof (uint32_t));
    memcpy (buf, &body, sizeof (body));
    *len = (size_t)(p - buf);
    return buf;
}

/* Read the reply and the pidfd that may ride with it. */
static int reply_recv (int sock, struct reply *r, int *fd)
{
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct iovec iov = {.iov_base = r, .iov_len = sizeof (*r)};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = cbuf,
                         .msg_controllen = sizeof (cbuf)};
    ssize_t n;

    *fd = -1;
    while ((n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c;
         c = CMSG_NXTHDR (&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy (fd, CMSG_DATA (c), sizeof (int));
    }
    if (n != (ssize_t)sizeof (*r)) { /* EOF or a torn reply: spawner gone */
        if (*fd >= 0)
            close (*fd);
        *fd = -1;
        errno = EPIPE;
        return -1;
    }
    return 0;
}

int spawner_spawn (struct spawner *sp,
                   const struct shim_spec *spec,
                   pid_t *pid,
                   int *pidfd,
                   struct cairn_error *err)
{
    char maxbuf[24];
    char **av = NULL, *req = NULL;
    size_t len;
    struct reply r;
    int e, fd;

    if ((e = fault_inject ("exec.spawn")))
        return errset (err, e, "spawn %s: %s (injected)",
                       spec && spec->shim ? spec->shim : "shim", strerror (e));
    if (shim_spec_check (spec, err) < 0)
        return -1;
    if (!(av = shim_argv (spec, maxbuf, sizeof (maxbuf))))
        return errset (err, ENOMEM, "spawn %s: out of memory", spec->shim);
    req = request_encode (spec->shim, av, spec->envp, &len);
    e = errno;
    free (av);
    if (!req)
        return errset (err, e, "spawn %s: %s", spec->shim,
                       e == E2BIG ? "command and environment too large"
                                  : strerror (e));
    if (send_all (sp->sock, req, len) < 0 || reply_recv (sp->sock, &r, &fd) < 0) {
        e = errno == ECONNRESET ? EPIPE : errno;
        free (req);
        return errset (err, e, "spawn %s: the spawner (pid %d) is gone: %s",
                       spec->shim, (int)sp->pid, strerror (e));
    }
    free (req);
    if (r.errnum != 0) {
        if (fd >= 0) { /* cloned, exec failed: it exited; reap it */
            siginfo_t si;
            while (waitid (P_PIDFD, (id_t)fd, &si, WEXITED) < 0 &&
                   errno == EINTR)
                ;
            close (fd);
        }
        return errset (err, r.errnum, "spawn %s: %s", spec->shim,
                       strerror (r.errnum));
    }
    if (fd < 0 || r.pid <= 0)
        return errset (err, EPROTO, "spawn %s: the spawner sent no pidfd",
                       spec->shim);
    *pid = r.pid;
    *pidfd = fd;
    return 0;
}

int spawner_pidfd (const struct spawner *sp)
{
    return sp->pidfd;
}

pid_t spawner_pid (const struct spawner *sp)
{
    return sp->pid;
}

void spawner_destroy (struct spawner *sp)
{
    if (!sp)
        return;
    int saved = errno;
    if (sp->sock >= 0)
        close (sp->sock);
    if (sp->pid > 0) {
        /* EOF makes it exit; SIGKILL in case it is stuck in a clone */
        if (sp->pidfd >= 0) {
            siginfo_t si;
            (void)pidfd_send_signal (sp->pidfd, SIGKILL, NULL, 0);
            while (waitid (P_PIDFD, (id_t)sp->pidfd, &si, WEXITED) < 0 &&
                   errno == EINTR)
                ;
        } else {
            kill (sp->pid, SIGKILL);
            while (waitpid (sp->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
    if (sp->pidfd >= 0)
        close (sp->pidfd);
    free (sp);
    errno = saved;
}
