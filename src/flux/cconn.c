/* cconn.c - see cconn.h */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "flux/cconn.h"

#define RETRY_MIN 0.1
#define RETRY_MAX 2.0
#define READ_CHUNK 65536

struct cconn {
    flux_t *h;
    char *path;
    struct cconn_ops ops;
    void *arg;
    int fd;
    bool up;
    flux_watcher_t *io;    /* POLLIN, and POLLOUT while outbuf is not empty */
    flux_watcher_t *retry; /* reconnect timer */
    double delay;
    char *inbuf, *outbuf;
    size_t inlen, incap, outlen, outcap;
    int64_t next_matchtag;
    int last_errno; /* of the last failed connect, 0 after a success */
    char *hello_topic; /* cconn_set_hello, or NULL */
    json_t *hello;     /* its payload */
    int64_t hello_tag; /* its matchtag while it waits for the answer, or 0 */
    char *refused;     /* the last refusal's text, said once */
    struct creply *replies; /* cconn_rpc's, until answered */
};

static void io_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg);

static int buf_append (char **buf,
                       size_t *len,
                       size_t *cap,
                       const char *data,
                       size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n)
            c *= 2;
        char *nb = realloc (*buf, c);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = c;
    }
    memcpy (*buf + *len, data, n);
    *len += n;
    return 0;
}

static void io_events (struct cconn *cc)
{
    int ev = FLUX_POLLIN | (cc->outlen ? FLUX_POLLOUT : 0);
    flux_watcher_destroy (cc->io);
    cc->io = flux_fd_watcher_create (flux_get_reactor (cc->h), cc->fd, ev,
                                     io_cb, cc);
    if (cc->io)
        flux_watcher_start (cc->io);
}

/* Close the socket and connect again in delay seconds. */
static void reconnect_in (struct cconn *cc, double delay)
{
    flux_watcher_destroy (cc->io);
    cc->io = NULL;
    if (cc->fd >= 0)
        close (cc->fd);
    cc->fd = -1;
    cc->up = false;
    cc->hello_tag = 0;
    cc->inlen = cc->outlen = 0;
    /* the cairnd that would have answered is gone */
    creply_clear (cc->replies);
    flux_timer_watcher_reset (cc->retry, delay, 0);
    flux_watcher_start (cc->retry);
}

static void lost (struct cconn *cc)
{
    bool was_up = cc->up;

    reconnect_in (cc, cc->delay);
    cc->delay = cc->delay * 2 > RETRY_MAX ? RETRY_MAX : cc->delay * 2;
    if (was_up)
        cc->ops.state (cc, false, cc->arg);
}

static int flush_out (struct cconn *cc)
{
    while (cc->outlen > 0) {
        ssize_t n = send (cc->fd, cc->outbuf, cc->outlen, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return 0;
            return -1;
        }
        memmove (cc->outbuf, cc->outbuf + n, cc->outlen - (size_t)n);
        cc->outlen -= (size_t)n;
    }
    return 0;
}

static int queue_request (struct cconn *cc,
                          const char *topic,
                          int64_t matchtag,
                          const json_t *payload);
static int64_t new_matchtag (struct cconn *cc);

static void up (struct cconn *cc)
{
    cc->up = true;
    cc->delay = RETRY_MIN;
    cc->last_errno = 0;
    free (cc->refused);
    cc->refused = NULL;
    flux_log (cc->h, LOG_INFO, "connected to cairnd at %s", cc->path);
    cc->ops.state (cc, true, cc->arg);
}

/* While the hello waits: its answer, or nothing (cairnd sends nothing
 * else before it). */
static void hello_answer (struct cconn *cc, const json_t *msg)
{
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (m.matchtag != cc->hello_tag)
        return;
    cc->hello_tag = 0;
    if (m.errnum == 0) {
        up (cc);
        return;
    }
    const char *why = m.errstr ? m.errstr : strerror ((int)m.errnum);
    if (!cc->refused || strcmp (cc->refused, why) != 0) {
        flux_log (cc->h, LOG_ERR,
                  "cairnd at %s refused the connection: %s (trying again "
                  "every %gs; jobs wait, see cairn-exec(8))",
                  cc->path, why, CCONN_REFUSED_RETRY);
        free (cc->refused);
        cc->refused = strdup (why);
    }
    reconnect_in (cc, CCONN_REFUSED_RETRY);
}

static void dispatch_lines (struct cconn *cc)
{
    char *start = cc->inbuf, *nl;
    size_t left = cc->inlen;

    while (cc->fd >= 0 && (nl = memchr (start, '\n', left))) {
        size_t n = (size_t)(nl - start);
        json_error_t jerr;
        json_t *msg = json_loadb (start, n, 0, &jerr);
        if (msg && json_is_object (msg) && cc->hello_tag)
            hello_answer (cc, msg);
        else if (msg && json_is_object (msg)) {
            json_int_t mt = 0;
            (void)json_unpack (msg, "{s?I}", "matchtag", &mt);
            if (!creply_dispatch (cc->replies, mt, msg) && cc->ops.message)
                cc->ops.message (cc, msg, cc->arg);
        }
        else
            flux_log (cc->h, LOG_ERR, "cairnd sent a line that is not a JSON "
                                      "object: %s", jerr.text);
        json_decref (msg);
        start = nl + 1;
        left -= n + 1;
    }
    if (cc->fd < 0) /* a callback lost the connection */
        return;
    memmove (cc->inbuf, start, left);
    cc->inlen = left;
}

static void io_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct cconn *cc = arg;
    bool had_out = cc->outlen > 0;

    if (revents & FLUX_POLLOUT) {
        if (flush_out (cc) < 0)
            goto fail;
    }
    if (revents & (FLUX_POLLIN | FLUX_POLLERR)) {
        char chunk[READ_CHUNK];
        ssize_t n = recv (cc->fd, chunk, sizeof (chunk), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            goto fail;
        if (n > 0) {
            if (buf_append (&cc->inbuf, &cc->inlen, &cc->incap, chunk,
                            (size_t)n) < 0)
                goto fail;
            dispatch_lines (cc);
            if (cc->fd < 0)
                return;
        }
    }
    if (had_out != (cc->outlen > 0))
        io_events (cc);
    return;
fail:
    lost (cc);
}

static void retry_cb (flux_reactor_t *r,
                      flux_watcher_t *w,
                      int revents,
                      void *arg)
{
    struct cconn *cc = arg;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    strcpy (sa.sun_path, cc->path);
    cc->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (cc->fd < 0 || connect (cc->fd, (struct sockaddr *)&sa, sizeof (sa)) < 0) {
        int e = errno;
        if (cc->fd >= 0)
            close (cc->fd);
        cc->fd = -1;
        /* said at once, and again only when the reason changes */
        if (e != cc->last_errno)
            flux_log (cc->h, LOG_ERR,
                      "cannot connect to cairnd at %s: %s (retrying every "
                      "%gs at most; jobs wait, see cairn-exec(8))",
                      cc->path, strerror (e), RETRY_MAX);
        cc->last_errno = e;
        flux_timer_watcher_reset (cc->retry, cc->delay, 0);
        flux_watcher_start (cc->retry);
        cc->delay = cc->delay * 2 > RETRY_MAX ? RETRY_MAX : cc->delay * 2;
        return;
    }
    /* connected: from here on, never block the broker */
    (void)fcntl (cc->fd, F_SETFL, fcntl (cc->fd, F_GETFL) | O_NONBLOCK);
    cc->last_errno = 0;
    if (!cc->hello_topic) {
        io_events (cc);
        up (cc);
        return;
    }
    cc->hello_tag = new_matchtag (cc);
    if (queue_request (cc, cc->hello_topic, cc->hello_tag, cc->hello) < 0) {
        lost (cc);
        return;
    }
    io_events (cc);
}

struct cconn *cconn_create (flux_t *h,
                            const char *path,
                            const struct cconn_ops *ops,
                            void *arg)
{
    struct cconn *cc;

    if (strlen (path) >= sizeof (((struct sockaddr_un *)0)->sun_path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (!(cc = calloc (1, sizeof (*cc))))
        return NULL;
    cc->h = h;
    cc->fd = -1;
    cc->ops = *ops;
    cc->arg = arg;
    cc->delay = RETRY_MIN;
    cc->next_matchtag = 1;
    if (!(cc->path = strdup (path)) || !(cc->replies = creply_create ()) ||
        !(cc->retry = flux_timer_watcher_create (flux_get_reactor (h), 0, 0,
                                                 retry_cb, cc))) {
        cconn_destroy (cc);
        errno = ENOMEM;
        return NULL;
    }
    flux_watcher_start (cc->retry); /* connect from the reactor, at once */
    return cc;
}

void cconn_hold (struct cconn *cc)
{
    flux_watcher_stop (cc->retry);
}

void cconn_release (struct cconn *cc)
{
    if (cc->fd >= 0)
        return;
    flux_timer_watcher_reset (cc->retry, 0, 0);
    flux_watcher_start (cc->retry);
}

int cconn_set_hello (struct cconn *cc, const char *topic, const json_t *payload)
{
    char *t = strdup (topic);
    json_t *p = json_deep_copy (payload);

    if (!t || !p) {
        free (t);
        json_decref (p);
        errno = ENOMEM;
        return -1;
    }
    free (cc->hello_topic);
    json_decref (cc->hello);
    cc->hello_topic = t;
    cc->hello = p;
    return 0;
}

/* Queue a request. Returns 0, or -1 with errno ENOTCONN (not up: nothing
 * queued), ENOMEM. */
static int send_request (struct cconn *cc,
                         const char *topic,
                         int64_t matchtag,
                         const json_t *payload)
{
    if (!cc->up) {
        errno = ENOTCONN;
        return -1;
    }
    return queue_request (cc, topic, matchtag, payload);
}

static int queue_request (struct cconn *cc,
                          const char *topic,
                          int64_t matchtag,
                          const json_t *payload)
{
    json_t *req;
    char *s;
    int rc = -1;

    if (!(req = json_pack ("{s:s s:I s:O}", "topic", topic, "matchtag",
                           (json_int_t)matchtag, "payload", payload)) ||
        !(s = json_dumps (req, JSON_COMPACT))) {
        json_decref (req);
        errno = ENOMEM;
        return -1;
    }
    bool had_out = cc->outlen > 0;
    if (buf_append (&cc->outbuf, &cc->outlen, &cc->outcap, s, strlen (s)) <
            0 ||
        buf_append (&cc->outbuf, &cc->outlen, &cc->outcap, "\n", 1) < 0) {
        errno = ENOMEM;
        goto done;
    }
    rc = 0;
    /* A write error is left for io_cb to find (POLLOUT), so that the loss
     * is reported from the reactor, never from inside the caller. */
    if (!had_out && (flush_out (cc) < 0 || cc->outlen))
        io_events (cc);
done:
    free (s);
    json_decref (req);
    return rc;
}

static int64_t new_matchtag (struct cconn *cc)
{
    return cc->next_matchtag++;
}

int64_t cconn_rpc (struct cconn *cc,
                   const char *topic,
                   const json_t *payload,
                   int flags,
                   creply_f cb,
                   void *arg)
{
    int64_t mt = new_matchtag (cc);

    /* waiting before it is sent: a reply cannot come before the reactor
     * reads again, but a failed send must leave no entry behind */
    if (creply_add (cc->replies, mt, flags, cb, arg) < 0)
        return -1;
    if (send_request (cc, topic, mt, payload) < 0) {
        creply_remove (cc->replies, mt);
        return -1;
    }
    return mt;
}

void cconn_rpc_cancel (struct cconn *cc, int64_t matchtag)
{
    creply_remove (cc->replies, matchtag);
}

bool cconn_up (const struct cconn *cc)
{
    return cc->up;
}

int cconn_last_errno (const struct cconn *cc)
{
    return cc->up ? 0 : cc->last_errno;
}

const char *cconn_path (const struct cconn *cc)
{
    return cc->path;
}

void cconn_destroy (struct cconn *cc)
{
    if (!cc)
        return;
    int saved = errno;
    flux_watcher_destroy (cc->io);
    flux_watcher_destroy (cc->retry);
    if (cc->fd >= 0)
        close (cc->fd);
    free (cc->inbuf);
    free (cc->outbuf);
    free (cc->path);
    free (cc->hello_topic);
    json_decref (cc->hello);
    free (cc->refused);
    creply_destroy (cc->replies);
    free (cc);
    errno = saved;
}

void cconn_msg_split (const json_t *msg, struct cconn_msg *m)
{
    *m = (struct cconn_msg){0};
    (void)json_unpack ((json_t *)msg, "{s:I s?I s?s s?o}", "matchtag",
                       &m->matchtag, "errnum", &m->errnum, "errstr",
                       &m->errstr, "payload", &m->payload);
}
