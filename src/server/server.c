/* server.c - see server.h
 *
 * Why it is shaped this way:
 * - Every fd is non-blocking and every read or write is one syscall per
 *   watcher callback, so one client (stalled half-way through a line, or
 *   never reading its responses) can never hold up the loop or the others.
 * - Memory per client is bounded both ways: the input buffer by
 *   max_request_size (a longer line ends the connection), the output queue
 *   by max_output (a client that falls further behind is dropped).
 * - A user (any uid but root and trusted_uid) never starves anyone else:
 *   its connections are read at a lower priority than process events and
 *   privileged clients, a batch of requests at a time and all users
 *   together for at most USER_TURN_NS of each loop turn (so that a slow
 *   build, or many users, add a bounded delay to each step of a root
 *   job), the rest of what they sent waiting in an idle watcher (run when
 *   nothing else is pending);
 *   and while its unread answers pass user_max_queued its connection is
 *   not read at all, so what it costs is bounded by what it reads.
 * - A connection is never freed under a caller's feet. Dropping it only
 *   closes the fd and marks it dead; the disconnect callback and the free
 *   run later, from a prepare watcher (before the loop next blocks), and not
 *   while a read callback of that conn is on the stack. So a request
 *   handler, or the service looping over its subscribers, can call
 *   conn_respond and keep using the conn even when the write fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"

#define READ_CHUNK 65536
#define ACCEPT_BURST 32
#define BUF_KEEP (256 * 1024)  /* a drained buffer larger than this is freed */
#define EMFILE_BACKOFF 0.1     /* seconds without accepting after EMFILE */
#define USER_TURN_NS 2000000LL /* users' requests, all of them, per turn */

struct conn {
    struct server *s;
    struct conn *prev, *next;
    int fd;
    ev_io rw, ww;
    uint64_t id;
    uid_t uid;
    pid_t pid;

    char *in; /* partial input: [0, in_len); no '\n' in [0, in_scan) */
    size_t in_len, in_cap, in_scan;

    char *out; /* queued output: [out_off, out_len) */
    size_t out_off, out_len, out_cap;

    int busy;        /* > 0 while a read callback for this conn is running */
    bool closing;    /* conn_close: flush then drop */
    bool dead;       /* fd closed; disconnect callback pending */
    bool user;       /* not root nor our uid: served after the others */
    bool paused;     /* user: its unread answers passed user_max_queued */
    ev_tstamp active; /* user: when it last sent anything */
    ev_idle backlog; /* user: complete requests left from the last batch */
};

struct server {
    struct ev_loop *loop;
    char *path;
    int fd;
    dev_t dev; /* identity of the socket file we bound, to unlink only it */
    ino_t ino;
    ev_io accept_w;
    ev_timer backoff_w;
    ev_prepare reap_w;    /* active while some conn is dead but not freed */
    ev_timer idle_w;      /* closes idle users' connections */
    ev_prepare turn_w;    /* a new loop turn: users get USER_TURN_NS again */
    long long user_until; /* this turn's end for users' requests, or 0 */
    struct server_limits lim;
    struct server_ops ops;
    void *arg;
    struct conn *conns;
    int nconns;
};

static size_t pending_out (const struct conn *c)
{
    return c->out_len - c->out_off;
}

/* A user's connection: read while it is not paused and has no backlog. */
static void conn_resume (struct conn *c)
{
    if (c->dead || c->closing || c->paused)
        return;
    if (ev_is_active (&c->backlog))
        return;
    ev_io_start (c->s->loop, &c->rw);
}

size_t conn_pending (const struct conn *c)
{
    return pending_out (c);
}

/* Close the fd now; the disconnect callback and the free come from the loop
 * (server_reap_cb), once no read callback of c is on the stack. */
static void conn_drop (struct conn *c)
{
    int saved = errno;

    if (c->dead)
        return;
    c->dead = true;
    ev_io_stop (c->s->loop, &c->rw);
    ev_io_stop (c->s->loop, &c->ww);
    ev_idle_stop (c->s->loop, &c->backlog);
    close (c->fd);
    c->fd = -1;
    c->s->nconns--;
    ev_prepare_start (c->s->loop, &c->s->reap_w);
    errno = saved;
}

static void conn_free (struct conn *c)
{
    struct server *s = c->s;

    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (s->ops.disconnect)
        s->ops.disconnect (c, s->arg);
    free (c->in);
    free (c->out);
    free (c);
}

static void server_reap_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct server *s = w->data;
    struct conn *c = s->conns;
    bool again = false;

    while (c) {
        struct conn *next = c->next;
        if (c->dead && c->busy > 0) /* a nested ev_run in a request cb */
            again = true;
        else if (c->dead)
            conn_free (c);
        c = next;
    }
    if (!again)
        ev_prepare_stop (loop, w);
}

/* Send what is queued, as far as the socket takes it without blocking.
 * Returns 0, or -1 with errno set if the connection failed. */
static int conn_flush (struct conn *c)
{
    while (pending_out (c) > 0) {
        ssize_t n = send (c->fd, c->out + c->out_off, pending_out (c),
                          MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        c->out_off += n;
    }
    if (pending_out (c) == 0) {
        c->out_off = c->out_len = 0;
        if (c->out_cap > BUF_KEEP) {
            free (c->out);
            c->out = NULL;
            c->out_cap = 0;
        }
    }
    return 0;
}

static void conn_write_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    struct conn *c = w->data;

    if (conn_flush (c) < 0) {
        conn_drop (c);
        return;
    }
    if (pending_out (c) == 0) {
        ev_io_stop (loop, &c->ww);
        if (c->closing)
            conn_drop (c);
    }
    if (c->paused && !c->dead &&
        pending_out (c) <= c->s->lim.user_max_queued / 2) {
        c->paused = false; /* it reads its answers again */
        if (c->in_len > 0)
            ev_idle_start (loop, &c->backlog);
        else
            conn_resume (c);
    }
}

/* Append one complete line to c's output, sending at once when nothing is
 * queued ahead of it (the common case: no extra loop turn per response). */
static int conn_queue (struct conn *c, const char *buf, size_t len)
{
    if (c->dead || c->closing) {
        errno = ENOTCONN;
        return -1;
    }
    if (pending_out (c) == 0) {
        ssize_t n;
        do {
            n = send (c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                conn_drop (c);
                return -1;
            }
            n = 0;
        }
        buf += n;
        len -= n;
        if (len == 0)
            return 0;
    }
    if (pending_out (c) + len > c->s->lim.max_output) {
        conn_drop (c);
        errno = ENOBUFS;
        return -1;
    }
    if (c->out_cap - c->out_len < len) {
        size_t used = pending_out (c);
        if (used > 0)
            memmove (c->out, c->out + c->out_off, used);
        c->out_off = 0;
        c->out_len = used;
        if (c->out_cap - used < len) {
            size_t cap = c->out_cap ? c->out_cap : 4096;
            while (cap - used < len)
                cap *= 2;
            char *p = realloc (c->out, cap);
            if (!p) {
                conn_drop (c);
                errno = ENOMEM;
                return -1;
            }
            c->out = p;
            c->out_cap = cap;
        }
    }
    memcpy (c->out + c->out_len, buf, len);
    c->out_len += len;
    ev_io_start (c->s->loop, &c->ww);
    /* A user that does not read its answers: read no more of it until it
     * has (its subscriptions still get theirs, up to max_output). */
    if (c->user && !c->paused && pending_out (c) > c->s->lim.user_max_queued) {
        c->paused = true;
        ev_io_stop (c->s->loop, &c->rw);
        ev_idle_stop (c->s->loop, &c->backlog);
    }
    return 0;
}

/* Queue o (consumed) as one compact line. */
static int conn_send_json (struct conn *c, json_t *o)
{
    char *line = o ? json_dumps (o, JSON_COMPACT) : NULL;
    int rc = -1;

    json_decref (o);
    if (!line) {
        errno = ENOMEM;
        return -1;
    }
    size_t len = strlen (line);
    line[len] = '\n'; /* replaces the NUL: the length is what counts */
    rc = conn_queue (c, line, len + 1);
    int saved = errno;
    free (line);
    errno = saved;
    return rc;
}

int conn_respond (struct conn *c, int64_t matchtag, const json_t *payload)
{
    json_t *o;

    if (!c || matchtag < 0 || (payload && !json_is_object (payload))) {
        errno = EINVAL;
        return -1;
    }
    if (c->dead || c->closing) {
        errno = ENOTCONN;
        return -1;
    }
    /* 'O' takes a reference to the caller's payload for the time of the
     * dump only: casting away const does not modify it. */
    if (payload)
        o = json_pack ("{s:I s:O}", "matchtag", (json_int_t)matchtag, "payload",
                       (json_t *)payload);
    else
        o = json_pack ("{s:I s:{}}", "matchtag", (json_int_t)matchtag,
                       "payload");
    return conn_send_json (c, o);
}

int conn_respond_error (
    struct conn *c, int64_t matchtag, int errnum, const char *fmt, ...)
{
    char *errstr;
    va_list ap;
    int n;

    if (!c || matchtag < 0 || errnum <= 0 || !fmt) {
        errno = EINVAL;
        return -1;
    }
    if (c->dead || c->closing) {
        errno = ENOTCONN;
        return -1;
    }
    va_start (ap, fmt);
    n = vasprintf (&errstr, fmt, ap);
    va_end (ap);
    if (n < 0) {
        errno = ENOMEM;
        return -1;
    }
    /* The text may quote bytes of a bad request (jansson's error text
     * does), and jansson refuses strings that are not UTF-8. */
    for (unsigned char *p = (unsigned char *)errstr; *p; p++) {
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';
    }
    json_t *o = json_pack ("{s:I s:i s:s}", "matchtag", (json_int_t)matchtag,
                           "errnum", errnum, "errstr", errstr);
    free (errstr);
    return conn_send_json (c, o);
}

/* Check one request line and hand it to ops->request. A malformed request
 * gets an EPROTO error naming what is wrong; the connection stays usable,
 * since the line boundary is still known. */
static void conn_handle_line (struct conn *c, const char *line, size_t len)
{
    struct server *s = c->s;
    json_error_t jerr;
    json_t *req;
    json_t *o;
    json_int_t matchtag = 0;
    bool tag_ok = false;
    const char *topic;
    json_t *payload;
    json_t *empty = NULL;

    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (i == len)
        return; /* blank line */

    if (!(req = json_loadb (line, len, JSON_DECODE_ANY, &jerr))) {
        conn_respond_error (c, 0, EPROTO, "request is not valid JSON: %s",
                            jerr.text);
        return;
    }
    if (!json_is_object (req)) {
        conn_respond_error (c, 0, EPROTO, "request is not a JSON object");
        goto done;
    }
    o = json_object_get (req, "matchtag");
    if (json_is_integer (o) && json_integer_value (o) >= 0) {
        matchtag = json_integer_value (o);
        tag_ok = true;
    }
    o = json_object_get (req, "topic");
    if (!json_is_string (o)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "request has no string \"topic\"");
        goto done;
    }
    topic = json_string_value (o);
    if (!tag_ok) {
        conn_respond_error (c, 0, EPROTO,
                            "request \"matchtag\" must be an integer >= 0");
        goto done;
    }
    payload = json_object_get (req, "payload");
    if (payload && !json_is_object (payload)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "request \"payload\" must be an object");
        goto done;
    }
    if (!payload && !(payload = empty = json_object ())) {
        conn_respond_error (c, matchtag, ENOMEM, "out of memory");
        goto done;
    }
    s->ops.request (c, topic, matchtag, payload, s->arg);
done:
    json_decref (empty);
    json_decref (req);
}

static void conn_too_large (struct conn *c)
{
    conn_respond_error (c, 0, EPROTO, "request too large (limit %zu bytes)",
                        c->s->lim.max_request_size);
    conn_close (c);
}

static long long mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* May a user's request be served in this loop turn? The first one starts
 * the users' share of the turn. */
static bool user_turn_left (struct server *s)
{
    long long now = mono_ns ();
    if (s->user_until == 0)
        s->user_until = now + USER_TURN_NS;
    return now < s->user_until;
}

static void server_turn_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct server *s = w->data;
    s->user_until = 0;
}

/* Deliver the complete lines in the input buffer (a user's: at most
 * user_batch, the rest left to its backlog watcher), then keep the partial
 * rest for the next read. Stops as soon as a handler closes the conn. */
static void conn_process_input (struct conn *c)
{
    size_t max = c->s->lim.max_request_size;
    size_t start = 0;
    int budget = c->user ? c->s->lim.user_batch : -1;
    struct server *s = c->s;
    bool more = false;

    while (!c->dead && !c->closing && !c->paused) {
        char *nl = memchr (c->in + c->in_scan, '\n', c->in_len - c->in_scan);
        if (!nl) {
            c->in_scan = c->in_len;
            break;
        }
        size_t end = nl - c->in;
        if (end - start > max) {
            conn_too_large (c);
            return;
        }
        if (budget == 0 || (c->user && !user_turn_left (s))) {
            more = true;
            break;
        }
        conn_handle_line (c, c->in + start, end - start);
        start = c->in_scan = end + 1;
        if (budget > 0)
            budget--;
    }
    if (c->dead || c->closing) {
        ev_idle_stop (c->s->loop, &c->backlog);
        return;
    }
    c->in_len -= start;
    c->in_scan -= start;
    memmove (c->in, c->in + start, c->in_len);
    if (c->user && (more || (c->paused && c->in_scan < c->in_len))) {
        /* complete requests wait: no more reading until they are served */
        ev_io_stop (c->s->loop, &c->rw);
        if (!c->paused)
            ev_idle_start (c->s->loop, &c->backlog);
        return;
    }
    ev_idle_stop (c->s->loop, &c->backlog);
    if (c->user)
        conn_resume (c);
    if (c->in_len > max)
        conn_too_large (c); /* no need to wait for the end of it */
    else if (c->in_len == 0 && c->in_cap > BUF_KEEP) {
        free (c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
}

/* A user's backlog, a batch at a time, when nothing else is pending. */
static void conn_backlog_cb (struct ev_loop *loop, ev_idle *w, int revents)
{
    struct conn *c = w->data;

    size_t before = c->in_len;

    c->busy++;
    c->in_scan = 0;
    conn_process_input (c);
    /* Served, with more to do: to the end of the line, behind the other
     * users (one not served, the turn's share spent, keeps its place). */
    if (ev_is_active (&c->backlog) && c->in_len != before) {
        ev_idle_stop (loop, &c->backlog);
        ev_idle_start (loop, &c->backlog);
    }
    c->busy--;
}

static void conn_read (struct conn *c)
{
    ssize_t n;

    if (c->in_cap - c->in_len < READ_CHUNK) {
        size_t cap = c->in_cap * 2 > c->in_len + READ_CHUNK
                         ? c->in_cap * 2
                         : c->in_len + READ_CHUNK;
        char *p = realloc (c->in, cap);
        if (!p) {
            conn_drop (c);
            return;
        }
        c->in = p;
        c->in_cap = cap;
    }
    n = recv (c->fd, c->in + c->in_len, READ_CHUNK, 0);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            conn_drop (c);
        return;
    }
    if (n == 0) { /* EOF: a partial line is discarded with the conn */
        conn_drop (c);
        return;
    }
    c->active = ev_now (c->s->loop);
    c->in_len += n;
    conn_process_input (c);
}

static void conn_read_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    struct conn *c = w->data;

    c->busy++;
    conn_read (c);
    c->busy--;
}

void conn_close (struct conn *c)
{
    if (!c || c->dead || c->closing)
        return;
    c->closing = true;
    ev_io_stop (c->s->loop, &c->rw);
    ev_idle_stop (c->s->loop, &c->backlog);
    if (pending_out (c) == 0)
        conn_drop (c);
}

uid_t conn_uid (const struct conn *c)
{
    return c->uid;
}

pid_t conn_pid (const struct conn *c)
{
    return c->pid;
}

uint64_t conn_id (const struct conn *c)
{
    return c->id;
}

/* Over a connection limit: say why (EAGAIN) and hang up. The line is short
 * and the socket is new, so one non-blocking send is enough; if it does
 * not fit, the client sees a plain EOF. */
static void server_reject (int fd, const char *why)
{
    char line[256];
    int len = snprintf (line, sizeof (line),
                        "{\"matchtag\":0,\"errnum\":%d,\"errstr\":\"%s\"}\n",
                        EAGAIN, why);
    (void)!send (fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    close (fd);
}

/* The connections uid holds now. A walk of the list: connections are few
 * (max_connections) and accepted far less often than served. */
static int uid_conns (const struct server *s, uid_t uid)
{
    int n = 0;
    for (const struct conn *c = s->conns; c; c = c->next)
        n += !c->dead && c->uid == uid;
    return n;
}

/* Root, cairnd's uid and the instance owner: not a user's connection. */
static bool trusted (const struct server *s, uid_t uid)
{
    return uid == 0 || uid == s->lim.trusted_uid || uid == s->lim.trusted_uid2;
}

static void server_add_conn (struct server *s, int fd)
{
    struct conn *c;
    struct ucred cred = {.pid = -1, .uid = (uid_t)-1, .gid = (gid_t)-1};
    socklen_t credlen = sizeof (cred);
    char why[128];

    if (s->nconns >= s->lim.max_connections) {
        snprintf (why, sizeof (why), "too many connections (limit %d)",
                  s->lim.max_connections);
        server_reject (fd, why);
        return;
    }
    /* Without credentials the service could not decide access: refuse. */
    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) < 0) {
        close (fd);
        return;
    }
    /* One user must not hold every connection: the others, and root,
     * could not reach cairnd any more. */
    if (!trusted (s, cred.uid) &&
        uid_conns (s, cred.uid) >= s->lim.max_uid_connections) {
        snprintf (why, sizeof (why),
                  "too many connections of uid %u (limit %d per user)",
                  (unsigned)cred.uid, s->lim.max_uid_connections);
        server_reject (fd, why);
        return;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        close (fd);
        return;
    }
    c->s = s;
    c->fd = fd;
    static uint64_t next_id; /* process-wide: cairnd keys streams by it */
    c->id = ++next_id;
    c->uid = cred.uid;
    c->pid = cred.pid;
    c->user = !trusted (s, cred.uid);
    c->active = ev_now (s->loop);
    ev_io_init (&c->rw, conn_read_cb, fd, EV_READ);
    ev_io_init (&c->ww, conn_write_cb, fd, EV_WRITE);
    ev_idle_init (&c->backlog, conn_backlog_cb);
    c->rw.data = c->ww.data = c->backlog.data = c;
    /* after process events and privileged clients (every other watcher
     * is at the default priority, 0); its backlog after everything */
    if (c->user) {
        ev_set_priority (&c->rw, -1);
        ev_set_priority (&c->backlog, EV_MINPRI);
    }
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    ev_io_start (s->loop, &c->rw);
}

/* Close each user's connection that has sent nothing for user_idle_timeout
 * and holds nothing: no partial request, no unread answer, no stream. */
static void server_idle_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;
    double timeout = s->lim.user_idle_timeout;

    for (struct conn *c = s->conns; c; c = c->next) {
        if (!c->user || c->dead || c->closing || c->in_len > 0 ||
            pending_out (c) > 0 || ev_now (loop) - c->active < timeout ||
            (s->ops.busy && s->ops.busy (c, s->arg)))
            continue;
        conn_respond_error (c, 0, ETIMEDOUT,
                            "idle for %.0f s (limits.user-idle-timeout): "
                            "closing",
                            timeout);
        conn_close (c);
    }
}

static void server_backoff_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    if (s->fd >= 0)
        ev_io_start (loop, &s->accept_w);
}

static void server_accept_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    struct server *s = w->data;

    for (int i = 0; i < ACCEPT_BURST; i++) {
        int fd = accept4 (s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                errno == ENOMEM) {
                /* The pending client stays in the backlog and the socket
                 * stays readable: pause instead of spinning on it. */
                ev_io_stop (loop, &s->accept_w);
                ev_timer_set (&s->backoff_w, EMFILE_BACKOFF, 0.);
                ev_timer_start (loop, &s->backoff_w);
            }
            return; /* EAGAIN, or an aborted connection */
        }
        server_add_conn (s, fd);
    }
}

int server_nconns (const struct server *s)
{
    return s ? s->nconns : 0;
}

void server_stop_accepting (struct server *s)
{
    if (!s || s->fd < 0)
        return;
    ev_io_stop (s->loop, &s->accept_w);
    ev_timer_stop (s->loop, &s->backoff_w);
    close (s->fd);
    s->fd = -1;
}

/* Is anything accepting connections at addr? A connect that succeeds, or
 * that would block because the backlog is full, means yes; ECONNREFUSED
 * means the file is a leftover. Returns 1, 0, or -1 with errno. */
static int socket_is_live (const struct sockaddr_un *addr)
{
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc;

    if (fd < 0)
        return -1;
    if (connect (fd, (const struct sockaddr *)addr, sizeof (*addr)) == 0 ||
        errno == EAGAIN || errno == EINPROGRESS)
        rc = 1;
    else if (errno == ECONNREFUSED)
        rc = 0;
    else
        rc = -1;
    int saved = errno;
    close (fd);
    errno = saved;
    return rc;
}

static int server_clear_path (const struct sockaddr_un *addr,
                              struct cairn_error *err)
{
    const char *path = addr->sun_path;
    struct stat st;
    int live;

    if (lstat (path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        return errprintf (err, "%s: %s", path, strerror (errno));
    }
    if (!S_ISSOCK (st.st_mode))
        return errset (err, EEXIST, "%s exists and is not a socket", path);
    if ((live = socket_is_live (addr)) < 0)
        return errprintf (err, "cannot probe %s: %s", path, strerror (errno));
    if (live)
        return errset (err, EADDRINUSE, "another cairnd is listening on %s",
                       path);
    if (unlink (path) < 0 && errno != ENOENT)
        return errprintf (err, "cannot remove stale socket %s: %s", path,
                          strerror (errno));
    return 0;
}

static int server_listen (struct server *s,
                          const struct sockaddr_un *addr,
                          struct cairn_error *err)
{
    struct stat st;
    mode_t mask;
    int rc;

    s->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s->fd < 0)
        return errprintf (err, "socket: %s", strerror (errno));
    /* umask makes the file 0600 from birth: no window in which another
     * user could connect before the chmod. */
    mask = umask (077);
    rc = bind (s->fd, (const struct sockaddr *)addr, sizeof (*addr));
    int saved = errno;
    umask (mask);
    if (rc < 0)
        return errset (err, saved, "bind %s: %s", s->path, strerror (saved));
    if (chmod (s->path, s->lim.socket_mode) < 0 || lstat (s->path, &st) < 0) {
        errprintf (err, "chmod %s: %s", s->path, strerror (errno));
        goto error_unlink;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    if (listen (s->fd, SOMAXCONN) < 0) {
        errprintf (err, "listen %s: %s", s->path, strerror (errno));
        goto error_unlink;
    }
    return 0;
error_unlink:
    saved = errno;
    unlink (s->path);
    errno = saved;
    return -1;
}

struct server *server_create (struct ev_loop *loop,
                              const char *path,
                              const struct server_limits *lim,
                              const struct server_ops *ops,
                              void *arg,
                              struct cairn_error *err)
{
    struct server *s;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};

    if (!loop || !path || !ops || !ops->request) {
        errset (err, EINVAL, "server_create: invalid argument");
        return NULL;
    }
    if (*path == '\0') {
        errset (err, EINVAL, "socket path is empty");
        return NULL;
    }
    if (strlen (path) >= sizeof (addr.sun_path)) {
        errset (err, ENAMETOOLONG,
                "socket path too long (%zu bytes, limit %zu): %s",
                strlen (path), sizeof (addr.sun_path) - 1, path);
        return NULL;
    }
    if (lim && (lim->max_connections < 0 || lim->max_uid_connections < 0)) {
        errset (err, EINVAL, "max_connections must not be negative");
        return NULL;
    }
    strcpy (addr.sun_path, path);
    if (!(s = calloc (1, sizeof (*s))) || !(s->path = strdup (path))) {
        free (s);
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    s->fd = -1;
    s->loop = loop;
    s->ops = *ops;
    s->arg = arg;
    s->lim.max_request_size = SERVER_MAX_REQUEST_SIZE_DEFAULT;
    s->lim.max_output = SERVER_MAX_OUTPUT_DEFAULT;
    s->lim.max_connections = SERVER_MAX_CONNECTIONS_DEFAULT;
    s->lim.user_batch = SERVER_USER_BATCH_DEFAULT;
    s->lim.user_max_queued = SERVER_USER_MAX_QUEUED_DEFAULT;
    s->lim.user_idle_timeout = SERVER_USER_IDLE_TIMEOUT_DEFAULT;
    s->lim.socket_mode = 0600;
    if (lim && lim->socket_mode > 0)
        s->lim.socket_mode = lim->socket_mode & 0777;
    if (lim && lim->max_request_size > 0)
        s->lim.max_request_size = lim->max_request_size;
    if (lim && lim->max_output > 0)
        s->lim.max_output = lim->max_output;
    if (lim && lim->max_connections > 0)
        s->lim.max_connections = lim->max_connections;
    if (lim && lim->user_batch > 0)
        s->lim.user_batch = lim->user_batch;
    if (lim && lim->user_max_queued > 0)
        s->lim.user_max_queued = lim->user_max_queued;
    if (lim && lim->user_idle_timeout != 0)
        s->lim.user_idle_timeout = lim->user_idle_timeout;
    s->lim.max_uid_connections = SERVER_MAX_UID_CONNECTIONS_DEFAULT;
    if (lim && lim->max_uid_connections > 0)
        s->lim.max_uid_connections = lim->max_uid_connections;
    if (lim) {
        s->lim.trusted_uid = lim->trusted_uid;
        s->lim.trusted_uid2 = lim->trusted_uid2;
    }
    ev_io_init (&s->accept_w, server_accept_cb, -1, EV_READ);
    ev_init (&s->backoff_w, server_backoff_cb);
    ev_prepare_init (&s->reap_w, server_reap_cb);
    ev_prepare_init (&s->turn_w, server_turn_cb);
    s->accept_w.data = s->backoff_w.data = s->reap_w.data = s->turn_w.data = s;
    double every = s->lim.user_idle_timeout / 4;
    ev_timer_init (&s->idle_w, server_idle_cb, every < 1 ? 1 : every,
                   every < 1 ? 1 : every);
    s->idle_w.data = s;

    if (server_clear_path (&addr, err) < 0 || server_listen (s, &addr, err) < 0)
        goto error;
    ev_io_set (&s->accept_w, s->fd, EV_READ);
    ev_io_start (loop, &s->accept_w);
    if (s->lim.user_idle_timeout > 0)
        ev_timer_start (loop, &s->idle_w);
    ev_prepare_start (loop, &s->turn_w);
    return s;
error:
    s->ino = 0; /* nothing of ours to unlink */
    server_destroy (s);
    return NULL;
}

void server_destroy (struct server *s)
{
    int saved = errno;
    struct stat st;

    if (!s)
        return;
    server_stop_accepting (s);
    ev_timer_stop (s->loop, &s->idle_w);
    ev_prepare_stop (s->loop, &s->turn_w);
    while (s->conns) {
        struct conn *c = s->conns;
        if (!c->dead) {
            (void)conn_flush (c); /* best effort: the loop is going away */
            conn_drop (c);
        }
        conn_free (c);
    }
    ev_prepare_stop (s->loop, &s->reap_w); /* after: conn_drop starts it */
    /* Unlink only the file we created: a successor may already have
     * replaced it. */
    if (s->ino != 0 && lstat (s->path, &st) == 0 && st.st_dev == s->dev &&
        st.st_ino == s->ino)
        unlink (s->path);
    free (s->path);
    free (s);
    errno = saved;
}
