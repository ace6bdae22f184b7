/* keeper.c - see keeper.h; the keeper's side is shim/keep.c, the wire
 * exec/keeper_proto.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/keeper.h"
#include "supervise/keeper_proto.h"
#include "util/scm.h"

#define KEEPER_ANSWER_MS 10000

struct keeper {
    pid_t pid;
    int pidfd;
    int sock;
    char *shim;
};

extern char **environ;

/* The forked child: become `shim --keeper 3 PARENT SHIM`. */
static void __attribute__ ((noreturn))
keeper_exec (const char *shim, int sock, int errfd, pid_t parent)
{
    char pidarg[24];
    char *av[] = {(char *)"cairn-shim", (char *)"--keeper",
                  (char *)"3",          pidarg,
                  (char *)shim,         NULL};

    snprintf (pidarg, sizeof (pidarg), "%d", (int)parent);
    scm_child_exec (shim, av, environ, sock, -1, errfd, parent);
}

struct keeper *keeper_create (const char *shim, struct cairn_error *err)
{
    struct keeper *k = calloc (1, sizeof (*k));
    int sv[2] = {-1, -1}, ep[2] = {-1, -1}, fd, e = 0;
    pid_t parent = getpid ();
    ssize_t n;

    if (!k || !(k->shim = strdup (shim))) {
        free (k);
        errset (err, ENOMEM, "keeper: out of memory");
        return NULL;
    }
    k->sock = k->pidfd = -1;
    /* Keep 0-2 taken, so that no descriptor of ours lands there and is
     * clobbered by a command's /dev/null (cairnd may be started with them
     * closed). */
    while ((fd = open ("/dev/null", O_RDWR)) >= 0 && fd < 3)
        ;
    if (fd >= 3)
        close (fd);
    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
        pipe2 (ep, O_CLOEXEC) < 0) {
        errprintf (err, "keeper: %s: %s", sv[0] < 0 ? "socketpair" : "pipe",
                   strerror (errno));
        goto error;
    }
    if ((k->pid = fork ()) < 0) {
        errprintf (err, "keeper: fork: %s", strerror (errno));
        goto error;
    }
    if (k->pid == 0)
        keeper_exec (shim, sv[1], ep[1], parent);
    close (sv[1]);
    close (ep[1]);
    sv[1] = ep[1] = -1;
    k->sock = sv[0];
    sv[0] = -1;
    while ((n = read (ep[0], &e, sizeof (e))) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof (e)) {
        errset (err, e, "keeper: cannot run %s: %s", shim, strerror (e));
        goto error;
    }
    if ((k->pidfd = pidfd_open (k->pid, 0)) < 0) {
        errprintf (err, "keeper: pidfd_open %d: %s", (int)k->pid,
                   strerror (errno));
        goto error;
    }
    close (ep[0]);
    return k;
error:
    e = errno;
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close (sv[i]);
        if (ep[i] >= 0)
            close (ep[i]);
    }
    if (k->pid > 0) {
        kill (k->pid, SIGKILL);
        while (waitpid (k->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        k->pid = 0;
    }
    keeper_destroy (k);
    errno = e;
    return NULL;
}

/* Send request m (with fd along) and wait for its answer (with *rfd
 * along, or -1). */
static int keeper_ask (struct keeper *k,
                       struct keeper_msg *m,
                       int fd,
                       int *rfd,
                       struct cairn_error *err)
{
    struct pollfd pf = {.fd = k->sock, .events = POLLIN};
    int type = m->type, rc;

    if (scm_send (k->sock, m, sizeof (*m), fd, 0) != (ssize_t)sizeof (*m))
        return errset (err, EPIPE, "the keeper (pid %d) is gone", (int)k->pid);
    while ((rc = poll (&pf, 1, KEEPER_ANSWER_MS)) < 0 && errno == EINTR)
        ;
    if (rc == 0)
        return errset (err, ETIMEDOUT, "the keeper (pid %d) did not answer",
                       (int)k->pid);
    if (scm_recv (k->sock, m, sizeof (*m), rfd, 0) != (ssize_t)sizeof (*m) ||
        m->type != type) {
        if (*rfd >= 0)
            close (*rfd);
        *rfd = -1;
        return errset (err, EPIPE, "the keeper (pid %d) is gone", (int)k->pid);
    }
    return 0;
}

int keeper_exitdir (struct keeper *k, int dirfd, struct cairn_error *err)
{
    struct keeper_msg m = {.type = KEEPER_MSG_EXITDIR};
    int fd;

    if (keeper_ask (k, &m, dirfd, &fd, err) < 0)
        return -1;
    if (fd >= 0)
        close (fd);
    if (m.errnum != 0)
        return errset (err, m.errnum, "the keeper cannot take the exit dir: %s",
                       strerror (m.errnum));
    return 0;
}

pid_t keeper_supervisor (struct keeper *k,
                         int sock,
                         int *pidfd,
                         struct cairn_error *err)
{
    struct keeper_msg m = {.type = KEEPER_MSG_SUPERVISE};

    if (keeper_ask (k, &m, sock, pidfd, err) < 0)
        return -1;
    if (m.errnum != 0 || m.pid <= 0 || *pidfd < 0) {
        int e = m.errnum ? m.errnum : EPROTO;
        if (*pidfd >= 0)
            close (*pidfd);
        *pidfd = -1;
        return errset (err, e, "supervisor: cannot run %s: %s", k->shim,
                       strerror (e));
    }
    return m.pid;
}

pid_t keeper_pid (const struct keeper *k)
{
    return k->pid;
}

int keeper_pidfd (const struct keeper *k)
{
    return k->pidfd;
}

void keeper_destroy (struct keeper *k)
{
    if (!k)
        return;
    int saved = errno;
    if (k->sock >= 0)
        close (k->sock);
    if (k->pidfd >= 0) {
        siginfo_t si;
        /* dead: reap it; alive (cairnd stops): it outlives us */
        (void)waitid (P_PIDFD, (id_t)k->pidfd, &si, WEXITED | WNOHANG);
        close (k->pidfd);
    }
    free (k->shim);
    free (k);
    errno = saved;
}
