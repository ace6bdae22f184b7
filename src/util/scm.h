/* scm.h - a message and at most one descriptor along it (SCM_RIGHTS), on
 * the unix sockets between cairnd, the keeper and the supervisor
 * (keeper_proto.h, spawner_proto.h), and the start of a helper process on
 * one of them. Header-only and libc-only, like shim_proto.h: the static
 * cairn-shim uses it too.
 */
#ifndef CAIRN_EXEC_SCM_H
#define CAIRN_EXEC_SCM_H

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* Send len bytes of buf, with fd along unless fd < 0: one sendmsg, EINTR
 * retried. Returns what sendmsg returned (-1 with errno). */
static inline ssize_t
scm_send (int sock, const void *buf, size_t len, int fd, int flags)
{
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;

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
    while ((n = sendmsg (sock, &msg, MSG_NOSIGNAL | flags)) < 0 &&
           errno == EINTR)
        ;
    return n;
}

/* Receive up to len bytes into buf, and into *fd the descriptor that came
 * along (close-on-exec), or -1: one recvmsg, EINTR retried. Returns what
 * recvmsg returned (-1 with errno, *fd -1). */
static inline ssize_t
scm_recv (int sock, void *buf, size_t len, int *fd, int flags)
{
    char cbuf[CMSG_SPACE (sizeof (int))];
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = cbuf,
                         .msg_controllen = sizeof (cbuf)};
    ssize_t n;

    *fd = -1;
    while ((n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC | flags)) < 0 &&
           errno == EINTR)
        ;
    for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); n >= 0 && c;
         c = CMSG_NXTHDR (&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy (fd, CMSG_DATA (c), sizeof (int));
    }
    return n;
}

/* In a child just forked by parent: die with the parent until the exec
 * (exit 0 at once if it is gone already), put sock on descriptor 3 (and
 * extra, unless it is -1, on 4) and leave nothing else open past them
 * (every other descriptor close-on-exec),
 * and exec path with av and envp. On failure the errno goes up errfd
 * (close-on-exec: the parent reads EOF once the exec succeeded) and the
 * child exits 127. Off 3 even at a low descriptor limit. System calls
 * only. */
static inline void __attribute__ ((noreturn))
scm_child_exec (const char *path,
                char *const av[],
                char *const envp[],
                int sock,
                int extra,
                int errfd,
                pid_t parent)
{
    int fd, e;

    if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != parent)
        _exit (0);
    if ((fd = fcntl (errfd, F_DUPFD_CLOEXEC, 5)) < 0)
        goto fail;
    errfd = fd;
    if ((fd = fcntl (sock, F_DUPFD, 5)) < 0 || dup2 (fd, 3) < 0)
        goto fail;
    if (extra >= 0 && ((fd = fcntl (extra, F_DUPFD, 5)) < 0 || dup2 (fd, 4) < 0))
        goto fail;
    if (close_range (extra >= 0 ? 5 : 4, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        goto fail;
    execve (path, av, envp);
fail:
    e = errno;
    (void)!write (errfd, &e, sizeof (e));
    _exit (127);
}

#endif /* CAIRN_EXEC_SCM_H */
