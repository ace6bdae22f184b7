/* t_server.c - the unix-socket transport: server on a loop in this process,
 * clients as raw sockets; the blocking client library against a server in a
 * forked child. Waits are driven by loop events with a deadline, not sleeps.
 */
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/client.h"
#include "server/server.h"
#include "tap.h"

#define WAIT_S 5.0 /* bound on any single wait; only reached on failure */

static char tmpdir[] = "/tmp/t_server.XXXXXX";

struct ctx {
    struct ev_loop *loop;
    int nreq;
    int ndisc;
    uint64_t last_disc_id;
    struct conn *held; /* set by "hold": for pushing responses at it */
    int late_rc, late_errno, late_errno2, late_ndisc;
};

/* A path in the test's directory; valid until the 8th call after. */
static char *tpath (const char *name)
{
    static char buf[8][256];
    static int i;
    char *p = buf[i++ % 8];
    snprintf (p, 256, "%s/%s", tmpdir, name);
    return p;
}

/* The service under test: a few topics that exercise the server's API. */
static void req_cb (
    struct conn *c, const char *topic, int64_t tag, json_t *payload, void *arg)
{
    struct ctx *x = arg;

    x->nreq++;
    if (!strcmp (topic, "echo"))
        conn_respond (c, tag, payload);
    else if (!strcmp (topic, "fail"))
        conn_respond_error (
            c, tag, EINVAL, "fail: %s",
            json_string_value (json_object_get (payload, "why")));
    else if (!strcmp (topic, "creds")) {
        json_t *o =
            json_pack ("{s:i s:i s:I}", "uid", (int)conn_uid (c), "pid",
                       (int)conn_pid (c), "id", (json_int_t)conn_id (c));
        conn_respond (c, tag, o);
        json_decref (o);
    } else if (!strcmp (topic, "close")) {
        conn_respond (c, tag, NULL);
        conn_close (c);
        errno = 0;
        x->late_rc = conn_respond (c, tag, NULL);
        x->late_errno = errno;
    } else if (!strcmp (topic, "late")) { /* the client has hung up already */
        x->late_rc = conn_respond (c, tag, payload);
        x->late_errno = errno;
        conn_respond (c, tag, payload);
        x->late_errno2 = errno;
        x->late_ndisc = x->ndisc;
    } else if (!strcmp (topic, "hold"))
        x->held = c;
    /* "ignore": no response */
}

static void disc_cb (struct conn *c, void *arg)
{
    struct ctx *x = arg;
    x->ndisc++;
    x->last_disc_id = conn_id (c);
    if (x->held == c)
        x->held = NULL;
}

static const struct server_ops ops = {.request = req_cb, .disconnect = disc_cb};

/* Loop driving: run until cond holds or WAIT_S passes. */
static void timeout_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break (loop, EVBREAK_ONE);
}

static void fd_ready_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    *(bool *)w->data = true;
}

struct pump {
    bool (*cond) (void *);
    void *arg;
};

static void pump_check_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct pump *p = w->data;
    if (p->cond (p->arg))
        ev_break (loop, EVBREAK_ONE);
}

/* Run the loop until cond holds or WAIT_S passes. cond is checked from a
 * prepare watcher at the lowest priority: after the server's own prepare
 * work (it reaps dropped conns there), before the loop would block. */
static bool pump (struct ev_loop *loop, bool (*cond) (void *), void *arg)
{
    struct pump p = {cond, arg};
    ev_prepare check;
    ev_timer t;

    ev_now_update (loop); /* the test may have been busy outside the loop */
    ev_timer_init (&t, timeout_cb, WAIT_S, 0.);
    ev_prepare_init (&check, pump_check_cb);
    ev_set_priority (&check, EV_MINPRI);
    check.data = &p;
    ev_timer_start (loop, &t);
    ev_prepare_start (loop, &check);
    if (!cond (arg))
        ev_run (loop, 0);
    ev_prepare_stop (loop, &check);
    ev_timer_stop (loop, &t);
    return cond (arg);
}

struct fdwait {
    struct ev_loop *loop;
    bool ready;
};

static bool fdwait_done (void *arg)
{
    return ((struct fdwait *)arg)->ready;
}

/* Run the loop until fd is readable (or the deadline). */
static bool wait_readable (struct ev_loop *loop, int fd)
{
    struct fdwait w = {.loop = loop};
    ev_io io;
    ev_io_init (&io, fd_ready_cb, fd, EV_READ);
    io.data = &w.ready;
    ev_io_start (loop, &io);
    bool ok = pump (loop, fdwait_done, &w);
    ev_io_stop (loop, &io);
    return ok;
}

struct nconns_wait {
    struct server *s;
    int want;
};

static bool nconns_is (void *arg)
{
    struct nconns_wait *w = arg;
    return server_nconns (w->s) == w->want;
}

static bool wait_nconns (struct ev_loop *loop, struct server *s, int want)
{
    struct nconns_wait w = {s, want};
    return pump (loop, nconns_is, &w);
}

struct ndisc_wait {
    struct ctx *x;
    int want;
};

static bool ndisc_is (void *arg)
{
    struct ndisc_wait *w = arg;
    return w->x->ndisc >= w->want;
}

static bool wait_ndisc (struct ctx *x, int want)
{
    struct ndisc_wait w = {x, want};
    return pump (x->loop, ndisc_is, &w);
}

static bool held_set (void *arg)
{
    return ((struct ctx *)arg)->held != NULL;
}

/* Let every closed client be noticed and reaped before the next test. */
static void settle (struct ctx *x, struct server *s)
{
    wait_nconns (x->loop, s, 0);
    ev_run (x->loop, EVRUN_NOWAIT);
}

static int raw_connect (const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", path);
    if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        BAIL_OUT ("connect %s: %s", path, strerror (errno));
    return fd;
}

static void raw_send (int fd, const char *s)
{
    size_t len = strlen (s);
    if (send (fd, s, len, MSG_NOSIGNAL) != (ssize_t)len)
        BAIL_OUT ("send: %s", strerror (errno));
}

/* Read one line (without '\n'), pumping the loop while waiting. Peeks, so
 * nothing after the line is consumed. NULL on EOF or deadline. */
static char *raw_line (struct ev_loop *loop, int fd)
{
    static char buf[64 * 1024];

    for (;;) {
        ssize_t r = recv (fd, buf, sizeof (buf) - 1, MSG_DONTWAIT | MSG_PEEK);
        char *nl = r > 0 ? memchr (buf, '\n', r) : NULL;
        if (nl) {
            size_t len = nl - buf + 1;
            if (recv (fd, buf, len, 0) != (ssize_t)len)
                return NULL;
            buf[len - 1] = '\0';
            return buf;
        }
        if (r == (ssize_t)sizeof (buf) - 1 || r == 0 ||
            (r < 0 && errno != EAGAIN))
            return NULL;
        if (!wait_readable (loop, fd))
            return NULL;
    }
}

/* True when the server has closed fd (data before the EOF is skipped). */
static bool raw_eof (struct ev_loop *loop, int fd)
{
    char buf[4096];
    for (;;) {
        ssize_t r = recv (fd, buf, sizeof (buf), MSG_DONTWAIT);
        if (r == 0)
            return true;
        if (r < 0 && errno != EAGAIN)
            return errno == ECONNRESET;
        if (r < 0 && !wait_readable (loop, fd))
            return false;
    }
}

/* Send line, expect the response line want. */
static void rt (struct ev_loop *loop,
                int fd,
                const char *line,
                const char *want,
                const char *fmt,
                ...) __attribute__ ((format (printf, 5, 6)));
static void rt (struct ev_loop *loop,
                int fd,
                const char *line,
                const char *want,
                const char *fmt,
                ...)
{
    char what[256];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (what, sizeof (what), fmt, ap);
    va_end (ap);
    raw_send (fd, line);
    is_str (raw_line (loop, fd), want, "%s", what);
}

static void test_basics (struct ctx *x, struct server *s, const char *path)
{
    struct stat st;
    int fd;

    ok (stat (path, &st) == 0 && S_ISSOCK (st.st_mode), "socket file exists");
    is_int (st.st_mode & 0777, 0600, "socket file mode is 0600");

    fd = raw_connect (path);
    rt (x->loop, fd,
        "{\"topic\":\"echo\",\"matchtag\":7,\"payload\":{\"x\":1}}\n",
        "{\"matchtag\":7,\"payload\":{\"x\":1}}",
        "echo: same matchtag, payload");
    rt (x->loop, fd, "{\"topic\":\"echo\",\"matchtag\":0}\n",
        "{\"matchtag\":0,\"payload\":{}}", "missing payload is {}");
    rt (x->loop, fd, "\n   \r\n\t\n{\"topic\":\"echo\",\"matchtag\":8}\n",
        "{\"matchtag\":8,\"payload\":{}}", "blank lines are ignored");
    raw_send (fd, "{\"topic\":\"echo\",\"matchtag\":1}\n"
                  "{\"topic\":\"echo\",\"matchtag\":2}\n");
    is_str (raw_line (x->loop, fd), "{\"matchtag\":1,\"payload\":{}}",
            "two requests in one write: first");
    is_str (raw_line (x->loop, fd), "{\"matchtag\":2,\"payload\":{}}",
            "two requests in one write: second");
    rt (x->loop, fd,
        "{\"topic\":\"fail\",\"matchtag\":3,\"payload\":{\"why\":\"no\"}}\n",
        "{\"matchtag\":3,\"errnum\":22,\"errstr\":\"fail: no\"}",
        "conn_respond_error response");

    raw_send (fd, "{\"topic\":\"creds\",\"matchtag\":4}\n");
    json_t *o = json_loads (raw_line (x->loop, fd), 0, NULL);
    int uid = -1, pid = -1;
    json_int_t id1 = 0, id2 = 0;
    json_unpack (o, "{s:{s:i s:i s:I}}", "payload", "uid", &uid, "pid", &pid,
                 "id", &id1);
    json_decref (o);
    is_int (uid, getuid (), "conn_uid is the peer's uid");
    is_int (pid, getpid (), "conn_pid is the peer's pid");

    int fd2 = raw_connect (path);
    raw_send (fd2, "{\"topic\":\"creds\",\"matchtag\":4}\n");
    o = json_loads (raw_line (x->loop, fd2), 0, NULL);
    json_unpack (o, "{s:{s:I}}", "payload", "id", &id2);
    json_decref (o);
    ok (id1 > 0 && id2 > 0 && id1 != id2, "conn_id differs (%lld, %lld)",
        (long long)id1, (long long)id2);
    is_int (server_nconns (s), 2, "server_nconns counts both clients");

    int nd = x->ndisc;
    close (fd2);
    ok (wait_ndisc (x, nd + 1) && x->last_disc_id == (uint64_t)id2,
        "EOF: disconnect callback for that conn");
    is_int (server_nconns (s), 1, "server_nconns after EOF");
    close (fd);
    wait_ndisc (x, nd + 2);
}

static void test_bad_requests (struct ctx *x, const char *path)
{
    static const struct {
        const char *line;
        int tag;
        const char *errstr;
    } tab[] = {
        {"garbage", 0, "request is not valid JSON: "},
        {"{\"topic\":\"echo\"", 0, "request is not valid JSON: "},
        {"\xff\xfe{}", 0, "request is not valid JSON: "},
        {"[1,2]", 0, "request is not a JSON object"},
        {"42", 0, "request is not a JSON object"},
        {"{\"matchtag\":3}", 3, "request has no string \"topic\""},
        {"{\"topic\":5,\"matchtag\":3}", 3, "request has no string \"topic\""},
        {"{\"topic\":\"echo\"}", 0, "\"matchtag\" must be an integer >= 0"},
        {"{\"topic\":\"echo\",\"matchtag\":-1}", 0, "\"matchtag\" must be"},
        {"{\"topic\":\"echo\",\"matchtag\":1.5}", 0, "\"matchtag\" must be"},
        {"{\"topic\":\"echo\",\"matchtag\":\"7\"}", 0, "\"matchtag\" must be"},
        {"{\"topic\":\"echo\",\"matchtag\":4,\"payload\":[1]}", 4,
         "request \"payload\" must be an object"},
        {"{\"topic\":\"echo\",\"matchtag\":4,\"payload\":null}", 4,
         "request \"payload\" must be an object"},
    };
    int fd = raw_connect (path);
    int nreq = x->nreq;

    for (size_t i = 0; i < sizeof (tab) / sizeof (tab[0]); i++) {
        char line[256];
        snprintf (line, sizeof (line), "%s\n", tab[i].line);
        raw_send (fd, line);
        json_t *o = json_loads (raw_line (x->loop, fd), 0, NULL);
        json_int_t tag = -1;
        int errnum = 0;
        const char *errstr = NULL;
        json_unpack (o, "{s:I s:i s:s}", "matchtag", &tag, "errnum", &errnum,
                     "errstr", &errstr);
        is_int (errnum, EPROTO, "bad request %zu: EPROTO", i);
        is_int (tag, tab[i].tag, "bad request %zu: matchtag %d", i, tab[i].tag);
        like (errstr, tab[i].errstr, "bad request %zu: errstr", i);
        char want[64];
        snprintf (want, sizeof (want), "{\"matchtag\":%zu,\"payload\":{}}",
                  100 + i);
        snprintf (line, sizeof (line),
                  "{\"topic\":\"echo\",\"matchtag\":%zu}\n", 100 + i);
        rt (x->loop, fd, line, want, "bad request %zu: conn still usable", i);
        json_decref (o);
    }
    is_int (x->nreq - nreq, sizeof (tab) / sizeof (tab[0]),
            "bad requests never reached the request callback");
    close (fd);
}

/* A JSON request line of exactly len bytes before the '\n'. */
static char *sized_request (size_t len, int tag)
{
    char head[64];
    int n =
        snprintf (head, sizeof (head),
                  "{\"topic\":\"echo\",\"matchtag\":%d,\"payload\":{}}", tag);
    char *s = malloc (len + 2);
    memcpy (s, head, n);
    memset (s + n, ' ', len - n); /* trailing whitespace is valid JSON */
    strcpy (s + len, "\n");
    return s;
}

static void test_too_large (struct ctx *x, const char *path, size_t max)
{
    char want[128];
    snprintf (want, sizeof (want),
              "{\"matchtag\":0,\"errnum\":%d,\"errstr\":\"request too large "
              "(limit %zu bytes)\"}",
              EPROTO, max);

    int fd = raw_connect (path);
    char *s = sized_request (max, 5);
    rt (x->loop, fd, s, "{\"matchtag\":5,\"payload\":{}}",
        "a line of exactly max_request_size bytes is served");
    free (s);
    s = sized_request (max + 1, 6);
    int nd = x->ndisc;
    rt (x->loop, fd, s, want, "one byte more: EPROTO request too large");
    ok (raw_eof (x->loop, fd), "then the connection is closed");
    ok (wait_ndisc (x, nd + 1), "and the disconnect callback fired");
    free (s);
    close (fd);

    /* no newline at all: rejected as soon as it exceeds the limit */
    fd = raw_connect (path);
    s = sized_request (max + 100, 7);
    s[max + 100] = '\0';
    rt (x->loop, fd, s, want, "partial line over the limit: EPROTO at once");
    ok (raw_eof (x->loop, fd), "then the connection is closed");
    free (s);
    close (fd);
}

static void test_stall (struct ctx *x, const char *path)
{
    int a = raw_connect (path);
    int b = raw_connect (path);

    raw_send (a, "{\"topic\":\"echo\",\"mat");
    rt (x->loop, b, "{\"topic\":\"echo\",\"matchtag\":2}\n",
        "{\"matchtag\":2,\"payload\":{}}",
        "a client stalled mid-line does not block another");
    rt (x->loop, a, "chtag\":1}\n", "{\"matchtag\":1,\"payload\":{}}",
        "the stalled line completes later");
    close (a);
    close (b);
}

static void test_close_in_request (struct ctx *x, const char *path)
{
    int fd = raw_connect (path);
    int nd = x->ndisc;
    int nreq = x->nreq;

    raw_send (fd, "{\"topic\":\"close\",\"matchtag\":1}\n"
                  "{\"topic\":\"echo\",\"matchtag\":2}\n");
    is_str (raw_line (x->loop, fd), "{\"matchtag\":1,\"payload\":{}}",
            "conn_close in request callback: queued response is flushed");
    ok (raw_eof (x->loop, fd), "then EOF; the next line is not served");
    is_int (x->nreq - nreq, 1, "one request delivered");
    ok (x->late_rc == -1 && x->late_errno == ENOTCONN,
        "conn_respond after conn_close fails with ENOTCONN");
    ok (wait_ndisc (x, nd + 1), "disconnect callback fired");
    close (fd);

    /* peer gone when the handler responds: the write fails inside the
     * request callback; the disconnect comes after it returns */
    fd = raw_connect (path);
    nd = x->ndisc;
    raw_send (fd, "{\"topic\":\"late\",\"matchtag\":1}\n");
    close (fd);
    ok (wait_ndisc (x, nd + 1), "peer gone: disconnect callback fired");
    ok (x->late_rc == -1 &&
            (x->late_errno == EPIPE || x->late_errno == ECONNRESET),
        "conn_respond to a vanished peer fails (errno %d)", x->late_errno);
    is_int (x->late_errno2, ENOTCONN, "and again with ENOTCONN");
    is_int (x->late_ndisc, nd, "no disconnect callback inside the request");
    is_int (x->ndisc, nd + 1, "disconnect callback fired exactly once");
}

static void test_slow_reader (struct ctx *x, struct server *s, const char *path)
{
    char pad[8192];
    memset (pad, 'x', sizeof (pad) - 1);
    pad[sizeof (pad) - 1] = '\0';
    json_t *big = json_pack ("{s:s}", "pad", pad);
    int fd, rc = 0, i, n;

    /* First: more than the socket holds, less than max_output, all arrives
     * in order once the client reads (the write watcher flushes it). */
    fd = raw_connect (path);
    raw_send (fd, "{\"topic\":\"hold\",\"matchtag\":1}\n");
    if (!pump (x->loop, held_set, x))
        BAIL_OUT ("hold request not seen");
    struct conn *held = x->held;
    for (i = 0; i < 64 && rc == 0; i++)
        rc = conn_respond (held, i, big);
    is_int (rc, 0, "512 KiB queued for a reader that has not read yet");
    for (n = 0; n < 64; n++) {
        char *line = raw_line (x->loop, fd);
        char want[32];
        snprintf (want, sizeof (want), "{\"matchtag\":%d,", n);
        if (!line || strncmp (line, want, strlen (want)) != 0)
            break;
    }
    is_int (n, 64, "all responses arrive, in order");
    close (fd);
    wait_ndisc (x, x->ndisc + 1);

    /* Then: a client that never reads is dropped; others keep working. */
    fd = raw_connect (path);
    raw_send (fd, "{\"topic\":\"hold\",\"matchtag\":1}\n");
    if (!pump (x->loop, held_set, x))
        BAIL_OUT ("hold request not seen");
    held = x->held;
    uint64_t id = conn_id (held);
    int nd = x->ndisc;
    for (i = 0, rc = 0; i < 100000 && rc == 0; i++)
        rc = conn_respond (held, i, big);
    ok (rc == -1 && errno == ENOBUFS,
        "conn_respond to a reader that never reads fails with ENOBUFS");
    diag ("dropped after %d responses of 8 KiB", i);
    is_int (x->ndisc, nd, "disconnect callback not called from conn_respond");
    errno = 0;
    ok (conn_respond (held, 0, NULL) == -1 && errno == ENOTCONN,
        "conn still valid until the loop runs; responses fail ENOTCONN");
    ok (wait_ndisc (x, nd + 1) && x->last_disc_id == id,
        "the slow client's disconnect callback fired from the loop");
    ok (raw_eof (x->loop, fd), "the slow client sees EOF");
    close (fd);

    fd = raw_connect (path);
    rt (x->loop, fd, "{\"topic\":\"echo\",\"matchtag\":9}\n",
        "{\"matchtag\":9,\"payload\":{}}", "the loop keeps serving others");
    close (fd);
    wait_ndisc (x, nd + 2);
    json_decref (big);
}

static void test_max_connections (struct ctx *x)
{
    const char *path = tpath ("max.sock");
    struct server_limits lim = {.max_connections = 2};
    struct cairn_error err;
    struct server *s = server_create (x->loop, path, &lim, &ops, x, &err);
    if (!s)
        BAIL_OUT ("server_create: %s", err.text);

    int a = raw_connect (path);
    int b = raw_connect (path);
    ok (wait_nconns (x->loop, s, 2), "two clients connected");
    int c = raw_connect (path);
    is_str (raw_line (x->loop, c),
            "{\"matchtag\":0,\"errnum\":11,\"errstr\":\"too many connections "
            "(limit 2)\"}",
            "third client: EAGAIN too many connections");
    ok (raw_eof (x->loop, c), "third client is closed");
    is_int (server_nconns (s), 2, "still two clients");
    close (c);
    close (a);
    ok (wait_nconns (x->loop, s, 1), "one left");
    c = raw_connect (path);
    rt (x->loop, c, "{\"topic\":\"echo\",\"matchtag\":3}\n",
        "{\"matchtag\":3,\"payload\":{}}",
        "a slot freed: a new client is served");

    /* server_stop_accepting: refused at once, existing clients unaffected */
    server_stop_accepting (s);
    errno = 0;
    struct client *cl = client_connect (path, &err);
    is_errno_ptr (cl, ECONNREFUSED, "after stop_accepting: ECONNREFUSED");
    like (err.text, path, "message names the path");
    rt (x->loop, b, "{\"topic\":\"echo\",\"matchtag\":4}\n",
        "{\"matchtag\":4,\"payload\":{}}", "existing client still served");

    int nd = x->ndisc;
    server_destroy (s);
    is_int (x->ndisc - nd, 2, "server_destroy: disconnect callback for each");
    ok (raw_eof (x->loop, b) && raw_eof (x->loop, c), "clients see EOF");
    ok (access (path, F_OK) < 0 && errno == ENOENT, "socket file removed");
    close (b);
    close (c);
}

/* A socket connected to path by uid: a child takes the uid and connects
 * it, then exits (SO_PEERCRED keeps the connecting process's ids). */
static int connect_as (const char *path, uid_t uid)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), st;
    pid_t pid;

    snprintf (a.sun_path, sizeof (a.sun_path), "%s", path);
    if (fd < 0 || (pid = fork ()) < 0)
        BAIL_OUT ("socket or fork: %s", strerror (errno));
    if (pid == 0) {
        if (setresgid (uid, uid, uid) < 0 || setresuid (uid, uid, uid) < 0 ||
            connect (fd, (struct sockaddr *)&a, sizeof (a)) < 0)
            _exit (1);
        _exit (0);
    }
    if (waitpid (pid, &st, 0) < 0 || !WIFEXITED (st) || WEXITSTATUS (st) != 0)
        BAIL_OUT ("connect %s as uid %u failed", path, (unsigned)uid);
    return fd;
}

/* One uid cannot hold every connection; root and the trusted uid are
 * not counted. */
static void test_max_uid_connections (struct ctx *x)
{
    const uid_t u = 4000123, other = 4000125, trusted = 4000124;
    struct server_limits lim = {.max_connections = 16,
                                .max_uid_connections = 2,
                                .trusted_uid = trusted,
                                .socket_mode = 0666};
    struct cairn_error err;
    int fds[9], n = 0;

    if (geteuid () != 0) {
        ok (1, "# SKIP connections of another uid need root");
        return;
    }
    chmod (tmpdir, 0711); /* the other uids reach the socket */
    const char *path = tpath ("peruid.sock");
    struct server *s = server_create (x->loop, path, &lim, &ops, x, &err);
    if (!s)
        BAIL_OUT ("server_create: %s", err.text);
    fds[n++] = connect_as (path, u);
    fds[n++] = connect_as (path, u);
    ok (wait_nconns (x->loop, s, 2), "uid %u: two connections", (unsigned)u);
    int c = connect_as (path, u);
    is_str (raw_line (x->loop, c),
            "{\"matchtag\":0,\"errnum\":11,\"errstr\":\"too many "
            "connections of uid 4000123 (limit 2 per user)\"}",
            "a third of the same uid: EAGAIN, naming the uid and the limit");
    ok (raw_eof (x->loop, c), "... and it is closed");
    close (c);
    fds[n++] = connect_as (path, other);
    rt (x->loop, fds[n - 1], "{\"topic\":\"echo\",\"matchtag\":5}\n",
        "{\"matchtag\":5,\"payload\":{}}", "another uid is served");
    for (int i = 0; i < 3; i++)
        fds[n++] = raw_connect (path);
    rt (x->loop, fds[n - 1], "{\"topic\":\"echo\",\"matchtag\":6}\n",
        "{\"matchtag\":6,\"payload\":{}}",
        "root is not counted: a third of root's is served");
    for (int i = 0; i < 3; i++)
        fds[n++] = connect_as (path, trusted);
    rt (x->loop, fds[n - 1], "{\"topic\":\"echo\",\"matchtag\":7}\n",
        "{\"matchtag\":7,\"payload\":{}}",
        "nor is the trusted uid: a third of its own is served");
    close (fds[0]);
    ok (wait_nconns (x->loop, s, n - 1), "uid %u let one go", (unsigned)u);
    c = connect_as (path, u);
    rt (x->loop, c, "{\"topic\":\"echo\",\"matchtag\":8}\n",
        "{\"matchtag\":8,\"payload\":{}}", "... and may connect again");
    close (c);
    for (int i = 1; i < n; i++)
        close (fds[i]);
    server_destroy (s);
    chmod (tmpdir, 0700);
}

static void test_create_errors (struct ctx *x, const char *live)
{
    struct cairn_error err;
    struct server *s;
    char longp[200];

    errno = 0;
    s = server_create (x->loop, live, NULL, &ops, x, &err);
    is_errno_ptr (s, EADDRINUSE, "second server on a live path: EADDRINUSE");
    like (err.text, "another cairnd is listening on ", "message");
    like (err.text, live, "message names the path");
    ok (access (live, F_OK) == 0, "the live socket file is left alone");

    /* a socket file with no listener, as left by a crash */
    const char *stale = tpath ("stale.sock");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", stale);
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    if (bind (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        BAIL_OUT ("bind: %s", strerror (errno));
    close (fd);
    s = server_create (x->loop, stale, NULL, &ops, x, &err);
    ok (s != NULL, "server on a stale socket path succeeds");
    fd = raw_connect (stale);
    rt (x->loop, fd, "{\"topic\":\"echo\",\"matchtag\":1}\n",
        "{\"matchtag\":1,\"payload\":{}}", "and serves");
    close (fd);
    server_destroy (s);

    const char *file = tpath ("plain");
    close (open (file, O_CREAT | O_WRONLY, 0644));
    s = server_create (x->loop, file, NULL, &ops, x, &err);
    is_errno_ptr (s, EEXIST, "path is a regular file: EEXIST");
    like (err.text, "exists and is not a socket", "message");
    ok (access (file, F_OK) == 0, "the file is left alone");
    unlink (file);

    memset (longp, 'a', sizeof (longp) - 1);
    longp[0] = '/';
    longp[sizeof (longp) - 1] = '\0';
    s = server_create (x->loop, longp, NULL, &ops, x, &err);
    is_errno_ptr (s, ENAMETOOLONG, "path too long: ENAMETOOLONG");
    like (err.text, "socket path too long (199 bytes, limit 107)", "message");

    s = server_create (x->loop, tpath ("nodir/x.sock"), NULL, &ops, x, &err);
    is_errno_ptr (s, ENOENT, "directory missing: ENOENT");
    like (err.text, "bind ", "message says bind");
}

/* ---- client library, against a server in a child process ---- */

static void child_quit_cb (struct ev_loop *loop, ev_io *w, int revents)
{
    ev_break (loop, EVBREAK_ALL);
}

static pid_t child_server (const char *path, int *quit_fd)
{
    int ready[2], quit[2];
    char ch;

    if (pipe (ready) < 0 || pipe (quit) < 0)
        BAIL_OUT ("pipe: %s", strerror (errno));
    pid_t pid = fork ();
    if (pid < 0)
        BAIL_OUT ("fork: %s", strerror (errno));
    if (pid == 0) {
        struct ctx x = {0};
        struct server_limits lim = {.max_request_size = 1024};
        struct cairn_error err;
        ev_io w;
        close (ready[0]);
        close (quit[1]);
        alarm (60);
        x.loop = ev_loop_new (EVFLAG_SIGNALFD | EVFLAG_NOSIGMASK);
        struct server *s = server_create (x.loop, path, &lim, &ops, &x, &err);
        if (!s)
            _exit (1);
        ev_io_init (&w, child_quit_cb, quit[0], EV_READ);
        ev_io_start (x.loop, &w);
        (void)!write (ready[1], "r", 1);
        ev_run (x.loop, 0);
        server_destroy (s);
        ev_io_stop (x.loop, &w);
        ev_loop_destroy (x.loop);
        _exit (0);
    }
    close (ready[1]);
    close (quit[0]);
    if (read (ready[0], &ch, 1) != 1)
        BAIL_OUT ("child server did not start");
    close (ready[0]);
    *quit_fd = quit[1];
    return pid;
}

static void test_client (void)
{
    const char *path = tpath ("client.sock");
    struct cairn_error err;
    struct client *c;
    json_t *p, *o;
    int quit, status;
    pid_t pid = child_server (path, &quit);

    c = client_connect (path, &err);
    ok (c != NULL && client_fd (c) >= 0, "client_connect");

    o = json_pack ("{s:i}", "a", 1);
    p = client_rpc (c, "echo", o, WAIT_S, &err);
    ok (json_equal (p, o), "client_rpc echo returns the payload");
    json_decref (p);
    json_decref (o);

    o = json_pack ("{s:s}", "why", "because");
    errno = 0;
    p = client_rpc (c, "fail", o, WAIT_S, &err);
    is_errno_ptr (p, EINVAL, "error response: NULL, errno = errnum");
    is_str (err.text, "fail: because", "err text = errstr");
    json_decref (o);

    o = json_pack ("{s:i}", "n", 50);
    ok (client_send (c, "echo", 50, o) == 0, "client_send matchtag 50");
    json_decref (o);
    o = json_pack ("{s:i}", "n", 51);
    p = client_rpc (c, "echo", o, WAIT_S, &err);
    ok (json_equal (p, o), "client_rpc gets its own response");
    json_decref (p);
    json_decref (o);
    o = client_recv (c, WAIT_S, &err);
    json_int_t tag = -1, n = -1;
    json_unpack (o, "{s:I s:{s:I}}", "matchtag", &tag, "payload", "n", &n);
    ok (tag == 50 && n == 50, "response for the other matchtag kept for "
                              "client_recv");
    json_decref (o);
    errno = 0;
    o = client_recv (c, 0.05, &err);
    is_errno_ptr (o, ETIMEDOUT, "client_recv: nothing more: ETIMEDOUT");
    like (err.text, "timed out", "message");

    errno = 0;
    p = client_rpc (c, "ignore", NULL, 0.05, &err);
    is_errno_ptr (p, ETIMEDOUT, "client_rpc without answer: ETIMEDOUT");

    char pad[2048];
    memset (pad, 'x', sizeof (pad) - 1);
    pad[sizeof (pad) - 1] = '\0';
    o = json_pack ("{s:s}", "pad", pad);
    errno = 0;
    p = client_rpc (c, "echo", o, WAIT_S, &err);
    is_errno_ptr (p, EPROTO, "client_rpc too large: EPROTO (matchtag 0)");
    like (err.text, "request too large (limit 1024 bytes)", "message");
    json_decref (o);
    errno = 0;
    o = client_recv (c, WAIT_S, &err);
    is_errno_ptr (o, ECONNRESET, "then client_recv: ECONNRESET");
    like (err.text, "closed the connection", "message");
    client_close (c);

    close (quit);
    ok (waitpid (pid, &status, 0) == pid && WIFEXITED (status) &&
            WEXITSTATUS (status) == 0,
        "child server exited cleanly");

    errno = 0;
    c = client_connect (path, &err);
    is_errno_ptr (c, ENOENT, "client_connect to a missing socket: ENOENT");
    like (err.text, path, "message names the path");
    like (err.text, "is cairnd running?", "message hints");
}

/* Malformed lines from a fake server: EPROTO, consumed, then go on. */
static void test_client_malformed (void)
{
    const char *path = tpath ("fake.sock");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct cairn_error err;
    int lfd = socket (AF_UNIX, SOCK_STREAM, 0);
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", path);
    if (bind (lfd, (struct sockaddr *)&addr, sizeof (addr)) < 0 ||
        listen (lfd, 4) < 0)
        BAIL_OUT ("fake server: %s", strerror (errno));

    struct client *c = client_connect (path, &err);
    int fd = accept (lfd, NULL, NULL);
    raw_send (fd, "not json\n[1]\n{\"matchtag\":1}\n{\"matchtag\":-1,"
                  "\"payload\":{}}\n\n{\"matchtag\":2,\"payload\":{}}\n");
    static const char *want[] = {
        "malformed response from cairnd: ", "not a JSON object",
        "neither \"payload\" object nor \"errnum\"", "no integer \"matchtag\""};
    for (size_t i = 0; i < 4; i++) {
        errno = 0;
        json_t *o = client_recv (c, WAIT_S, &err);
        is_errno_ptr (o, EPROTO, "malformed line %zu: EPROTO", i);
        like (err.text, want[i], "malformed line %zu: message", i);
    }
    json_t *o = client_recv (c, WAIT_S, &err);
    ok (json_integer_value (json_object_get (o, "matchtag")) == 2,
        "next good line is returned");
    json_decref (o);
    close (fd);
    errno = 0;
    o = client_recv (c, WAIT_S, &err);
    is_errno_ptr (o, ECONNRESET, "EOF: ECONNRESET");
    client_close (c);

    close (lfd); /* the file stays: a stale socket */
    errno = 0;
    c = client_connect (path, &err);
    is_errno_ptr (c, ECONNREFUSED, "client_connect to a stale socket");
    like (err.text, path, "message names the path");
    unlink (path);
}

/* A socket served by another uid is refused before anything is sent,
 * unless that uid is the one named. The server is a child that takes uid
 * 4000123 before it listens (SO_PEERCRED gives a client the listener's
 * ids). */
static void test_client_peer (void)
{
    const char *path = tpath ("theirs.sock");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct cairn_error err = {{0}};
    int ready[2], quit[2];
    char want[512], b;
    pid_t pid;

    if (geteuid () != 0) {
        ok (1, "# SKIP a server of another uid needs root");
        return;
    }
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", path);
    chmod (tmpdir, 01777);
    if (pipe (ready) < 0 || pipe (quit) < 0 || (pid = fork ()) < 0)
        BAIL_OUT ("pipe or fork: %s", strerror (errno));
    if (pid == 0) {
        int lfd = -1;
        close (quit[1]); /* its EOF says quit */
        close (ready[0]);
        if (setresgid (4000123, 4000123, 4000123) < 0 ||
            setresuid (4000123, 4000123, 4000123) < 0 ||
            (lfd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0 ||
            bind (lfd, (struct sockaddr *)&addr, sizeof (addr)) < 0 ||
            listen (lfd, 4) < 0)
            _exit (1);
        (void)!write (ready[1], "r", 1);
        (void)!read (quit[0], &b, 1);
        _exit (0);
    }
    close (ready[1]);
    close (quit[0]);
    if (read (ready[0], &b, 1) != 1)
        BAIL_OUT ("the other uid's server did not start");

    errno = 0;
    struct client *c = client_connect (path, &err);
    is_errno_ptr (c, EPERM, "a socket another uid serves: EPERM");
    snprintf (want, sizeof (want),
              "%s is served by uid 4000123, not by root: refusing to talk to "
              "it",
              path);
    is_str (err.text, want, "... naming the path and its uid");
    errno = 0;
    c = client_connect_as (path, 4000124, &err);
    is_errno_ptr (c, EPERM, "served by another uid than the one named: EPERM");
    like (err.text, "not by root, uid 0 or uid 4000124",
          "... naming each uid it would talk to");
    c = client_connect_as (path, 4000123, &err);
    ok (c != NULL, "client_connect_as its uid: connected");
    client_close (c);

    close (quit[1]);
    close (ready[0]);
    int status;
    ok (waitpid (pid, &status, 0) == pid && WIFEXITED (status) &&
            WEXITSTATUS (status) == 0,
        "the other uid's server exited cleanly");
    unlink (path);
    chmod (tmpdir, 0700);
}

static int count_fds (void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        if (fcntl (fd, F_GETFD) >= 0)
            n++;
    return n;
}

int main (void)
{
    struct ctx x = {0};
    struct cairn_error err;
    struct server_limits lim = {.max_request_size = 1024,
                                .max_output = 1024 * 1024};

    plan (NO_PLAN);
    alarm (60);
    if (!mkdtemp (tmpdir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    int nfds = count_fds ();

    test_client ();
    test_client_malformed ();
    test_client_peer ();

    x.loop = ev_loop_new (EVFLAG_SIGNALFD | EVFLAG_NOSIGMASK);
    char path[256];
    snprintf (path, sizeof (path), "%s", tpath ("cairn.sock"));
    struct server *s = server_create (x.loop, path, &lim, &ops, &x, &err);
    if (!s)
        BAIL_OUT ("server_create: %s", err.text);

    test_basics (&x, s, path);
    settle (&x, s);
    test_bad_requests (&x, path);
    settle (&x, s);
    test_too_large (&x, path, 1024);
    settle (&x, s);
    test_stall (&x, path);
    settle (&x, s);
    test_close_in_request (&x, path);
    settle (&x, s);
    test_slow_reader (&x, s, path);
    settle (&x, s);
    test_max_connections (&x);
    test_max_uid_connections (&x);
    test_create_errors (&x, path);

    wait_nconns (x.loop, s, 0);
    is_int (server_nconns (s), 0, "all clients gone");
    server_destroy (s);
    ok (access (path, F_OK) < 0, "server_destroy removes the socket file");
    server_destroy (NULL);
    ev_loop_destroy (x.loop);
    is_int (count_fds (), nfds, "no file descriptor leaked");
    rmdir (tmpdir);
    return done_testing ();
}
