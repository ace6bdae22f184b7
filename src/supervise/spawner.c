/* spawner.c - see spawner.h; the wire is in spawner_proto.h, the
 * spawner's side in shim/serve.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/keeper.h"
#include "supervise/msgread.h"
#include "util/scm.h"
#include "supervise/shim_proto.h"
#include "supervise/spawner.h"
#include "supervise/spawner_proto.h"
#include "journal/crashpoint.h"

/* A message read off the socket before its reader asked for it. */
struct queued {
    struct spawner_msg m;
    int fd; /* a STARTED's pidfd, or -1 */
};

struct spawner {
    pid_t pid;
    int pidfd;
    int sock;
    unsigned unanswered; /* spawner_request()s whose STARTED is unread */
    struct queued *q;    /* read while spawner_spawn waited: for
                          * spawner_next, in order */
    size_t nq, qroom;
    char *out; /* spawner_request()s not sent yet, encoded back to back */
    size_t outlen, outroom;
    struct msgread rd; /* its messages, many per read */
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

/* ---- cairnd's side ---- */

struct spawner *spawner_create (struct keeper *k, struct cairn_error *err)
{
    struct spawner *sp = calloc (1, sizeof (*sp));
    int sv[2] = {-1, -1}, e;

    if (!sp) {
        errset (err, ENOMEM, "spawner: out of memory");
        return NULL;
    }
    sp->sock = sp->pidfd = -1;
    msgread_init (&sp->rd);
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        errprintf (err, "spawner: socketpair: %s", strerror (errno));
        goto error;
    }
    if ((sp->pid = keeper_supervisor (k, sv[1], &sp->pidfd, err)) < 0) {
        sp->pid = 0;
        goto error;
    }
    close (sv[1]);
    sp->sock = sv[0];
    return sp;
error:
    e = errno;
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close (sv[i]);
    spawner_destroy (sp);
    errno = e;
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
static char *request_encode (const char *path,
                             char *const *av,
                             char *const *envp,
                             size_t *len)
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

/* The next message and the pidfd that may ride with it. flags: 0 or
 * MSG_DONTWAIT (then EAGAIN when there is none). EOF, a message of
 * neither type or a pidfd in the middle of one is EPIPE: the spawner is
 * gone, or broken. */
static int
msg_recv (struct spawner *sp, struct spawner_msg *m, int *fd, int flags)
{
    if (msgread_next (&sp->rd, sp->sock, m, sizeof (*m), fd, flags) < 0) {
        if (errno == EPROTO)
            errno = EPIPE;
        return -1;
    }
    if (m->type != SPAWNER_MSG_STARTED && m->type != SPAWNER_MSG_ENDED) {
        if (*fd >= 0)
            close (*fd);
        *fd = -1;
        errno = EPIPE;
        return -1;
    }
    m->execid[sizeof (m->execid) - 1] = '\0';
    return 0;
}

static int queue_keep (struct spawner *sp, const struct spawner_msg *m, int fd)
{
    if (sp->nq == sp->qroom) {
        size_t room = sp->qroom ? sp->qroom * 2 : 16;
        struct queued *n = realloc (sp->q, room * sizeof (*n));
        if (!n)
            return -1;
        sp->q = n;
        sp->qroom = room;
    }
    sp->q[sp->nq++] = (struct queued){.m = *m, .fd = fd};
    return 0;
}

/* Wait for the STARTED that answers spawner_spawn's request: the answers
 * come in the order of the requests, so those of earlier
 * spawner_request()s come first. Keep them, and the ENDED, for
 * spawner_next(). */
static int started_recv (struct spawner *sp, struct spawner_msg *m, int *fd)
{
    for (;;) {
        if (msg_recv (sp, m, fd, 0) < 0)
            return -1;
        if (m->type == SPAWNER_MSG_STARTED && sp->unanswered == 0)
            return 0;
        if (m->type == SPAWNER_MSG_STARTED)
            sp->unanswered--;
        if (queue_keep (sp, m, *fd) < 0) {
            if (*fd >= 0)
                close (*fd);
            return -1;
        }
    }
}

int spawner_next (struct spawner *sp, struct spawner_msg *m, int *fd)
{
    if (sp->nq > 0) {
        *m = sp->q[0].m;
        *fd = sp->q[0].fd;
        memmove (sp->q, sp->q + 1, --sp->nq * sizeof (*sp->q));
        return 0;
    }
    if (msg_recv (sp, m, fd, MSG_DONTWAIT) < 0)
        return -1;
    if (m->type == SPAWNER_MSG_STARTED) {
        if (sp->unanswered == 0) { /* an answer nobody asked for */
            if (*fd >= 0)
                close (*fd);
            errno = EPROTO;
            return -1;
        }
        sp->unanswered--;
    }
    return 0;
}

int spawner_ended (struct spawner *sp, struct spawner_msg *m)
{
    int fd;

    for (;;) {
        if (spawner_next (sp, m, &fd) < 0)
            return -1;
        if (m->type == SPAWNER_MSG_ENDED)
            return 0;
        if (fd >= 0) /* spawner_request's answer: not ours to take */
            close (fd);
    }
}

int spawner_sock (const struct spawner *sp)
{
    return sp->sock;
}

/* Encode and send the request for spec. */
static int request_send (struct spawner *sp,
                         const struct shim_spec *spec,
                         struct cairn_error *err)
{
    char maxbuf[24];
    char **av, *req;
    size_t len;
    int e;

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
    if (sp->outlen + len > sp->outroom) {
        size_t room = sp->outroom ? sp->outroom : 4096;
        while (room < sp->outlen + len)
            room *= 2;
        char *o = realloc (sp->out, room);
        if (!o) {
            free (req);
            return errset (err, ENOMEM, "spawn %s: out of memory", spec->shim);
        }
        sp->out = o;
        sp->outroom = room;
    }
    memcpy (sp->out + sp->outlen, req, len);
    sp->outlen += len;
    free (req);
    return 0;
}

bool spawner_queued (const struct spawner *sp)
{
    return sp && sp->outlen > 0;
}

int spawner_send (struct spawner *sp, struct cairn_error *err)
{
    if (!sp || sp->outlen == 0)
        return 0;
    size_t n = sp->outlen;
    sp->outlen = 0; /* sent or lost with the supervisor: never again */
    if (send_all (sp->sock, sp->out, n) < 0) {
        int e = errno == ECONNRESET ? EPIPE : errno;
        return errset (err, e, "spawn: the supervisor (pid %d) is gone: %s",
                       (int)sp->pid, strerror (e));
    }
    return 0;
}

int spawner_started (const struct spawner_msg *m,
                     int fd,
                     const char *what,
                     pid_t *pid,
                     int *pidfd,
                     unsigned long long *starttime,
                     struct cairn_error *err)
{
    if (m->errnum != 0 || m->pid <= 0) {
        if (fd >= 0)
            close (fd);
        if (m->errnum == 0) { /* nothing was started: the exit file says */
            *pid = 0;
            *pidfd = -1;
            return 0;
        }
        return errset (err, m->errnum, "spawn %s: %s", what,
                       m->errnum == EEXIST
                           ? "its execid was used already; not running it"
                           : strerror (m->errnum));
    }
    if (fd < 0)
        return errset (err, EPROTO, "spawn %s: the supervisor sent no pidfd",
                       what);
    *pid = m->pid;
    *pidfd = fd;
    if (starttime)
        *starttime = m->starttime;
    return 0;
}

int spawner_request (struct spawner *sp,
                     const struct shim_spec *spec,
                     struct cairn_error *err)
{
    if (request_send (sp, spec, err) < 0)
        return -1;
    sp->unanswered++;
    if (sp->outlen >= SPAWNER_BATCH_MAX && spawner_send (sp, err) < 0)
        return -1;
    return 0;
}

int spawner_spawn (struct spawner *sp,
                   const struct shim_spec *spec,
                   pid_t *pid,
                   int *pidfd,
                   unsigned long long *starttime,
                   struct cairn_error *err)
{
    struct spawner_msg r;
    int e, fd;

    /* behind the queued requests: the answers come in request order */
    if (request_send (sp, spec, err) < 0 || spawner_send (sp, err) < 0)
        return -1;
    if (started_recv (sp, &r, &fd) < 0) {
        e = errno == ECONNRESET ? EPIPE : errno;
        return errset (err, e, "spawn %s: the supervisor (pid %d) is gone: %s",
                       spec->shim, (int)sp->pid, strerror (e));
    }
    return spawner_started (&r, fd, spec->shim, pid, pidfd, starttime, err);
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
    if (sp->sock >= 0) /* EOF: it starts nothing more, and exits once its
                        * commands are seen through */
        close (sp->sock);
    for (size_t i = 0; i < sp->nq; i++)
        if (sp->q[i].fd >= 0)
            close (sp->q[i].fd);
    free (sp->q);
    msgread_reset (&sp->rd);
    free (sp->out);     /* not sent: judged as unanswered (spawner.h) */
    if (sp->pidfd >= 0) /* its parent, the keeper, reaps it */
        close (sp->pidfd);
    free (sp);
    errno = saved;
}
