/* client.c - see client.h
 *
 * The socket stays blocking for writes (a request is written whole before
 * anything else happens) and is read through poll() so that every wait has
 * a deadline. Input is buffered: one recv may bring several responses, and
 * a response may arrive in pieces.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"

#define READ_CHUNK 65536

struct client {
    int fd;
    char *buf; /* received, not yet parsed: [0, len); no '\n' in [0, scan) */
    size_t len, cap, scan;
    json_t *kept;     /* responses client_rpc set aside, oldest first */
    int64_t next_tag; /* client_rpc's next matchtag */
};

static double now_mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double deadline_after (double timeout)
{
    return timeout < 0 ? -1. : now_mono () + timeout;
}

/* Milliseconds left until deadline for poll(): -1 = forever. */
static int ms_left (double deadline)
{
    if (deadline < 0)
        return -1;
    double ms = ceil ((deadline - now_mono ()) * 1e3);
    if (ms <= 0)
        return 0;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Who serves fd: root, ourselves or server_uid; anyone else is refused. */
static int
peer_check (int fd, const char *path, uid_t server_uid, struct cairn_error *err)
{
    struct ucred cred = {.uid = (uid_t)-1};
    socklen_t len = sizeof (cred);
    uid_t me = geteuid ();

    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return errprintf (err, "cannot tell who serves %s: %s", path,
                          strerror (errno));
    if (cred.uid == 0 || cred.uid == me || cred.uid == server_uid)
        return 0;
    if (server_uid != (uid_t)-1 && server_uid != 0 && server_uid != me)
        return errset (err, EPERM,
                       "%s is served by uid %u, not by root, uid %u or uid "
                       "%u: refusing to talk to it",
                       path, (unsigned)cred.uid, (unsigned)me,
                       (unsigned)server_uid);
    if (me == 0)
        return errset (err, EPERM,
                       "%s is served by uid %u, not by root: refusing to "
                       "talk to it",
                       path, (unsigned)cred.uid);
    return errset (err, EPERM,
                   "%s is served by uid %u, not by root or uid %u: refusing "
                   "to talk to it",
                   path, (unsigned)cred.uid, (unsigned)me);
}

struct client *client_connect (const char *path, struct cairn_error *err)
{
    return client_connect_as (path, (uid_t)-1, err);
}

struct client *
client_connect_as (const char *path, uid_t server_uid, struct cairn_error *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct client *c;

    if (!path || *path == '\0') {
        errset (err, EINVAL, "socket path is empty");
        return NULL;
    }
    if (strlen (path) >= sizeof (addr.sun_path)) {
        errset (err, ENAMETOOLONG, "socket path too long (limit %zu bytes): %s",
                sizeof (addr.sun_path) - 1, path);
        return NULL;
    }
    strcpy (addr.sun_path, path);
    if (!(c = calloc (1, sizeof (*c))) || !(c->kept = json_array ())) {
        free (c);
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    c->next_tag = 1;
    c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        errprintf (err, "socket: %s", strerror (errno));
        goto error;
    }
    if (connect (c->fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        bool down = errno == ENOENT || errno == ECONNREFUSED;
        errprintf (err, "cannot connect to %s: %s%s", path, strerror (errno),
                   down ? " (is cairnd running?)" : "");
        goto error;
    }
    if (peer_check (c->fd, path, server_uid, err) < 0)
        goto error;
    return c;
error:
    client_close (c);
    return NULL;
}

void client_close (struct client *c)
{
    int saved = errno;

    if (!c)
        return;
    if (c->fd >= 0)
        close (c->fd);
    json_decref (c->kept);
    free (c->buf);
    free (c);
    errno = saved;
}

int client_fd (const struct client *c)
{
    return c ? c->fd : -1;
}

int client_send (struct client *c,
                 const char *topic,
                 int64_t matchtag,
                 const json_t *payload)
{
    json_t *o = NULL;
    char *line = NULL;
    int rc = -1;

    if (!c || !topic || matchtag < 0 ||
        (payload && !json_is_object (payload))) {
        errno = EINVAL;
        return -1;
    }
    if (!(o = json_pack ("{s:s s:I}", "topic", topic, "matchtag",
                         (json_int_t)matchtag)) ||
        (payload && json_object_set (o, "payload", (json_t *)payload) < 0) ||
        !(line = json_dumps (o, JSON_COMPACT))) {
        errno = ENOMEM;
        goto done;
    }
    size_t len = strlen (line);
    line[len++] = '\n'; /* replaces the NUL: the length is what counts */
    for (size_t off = 0; off < len;) {
        ssize_t n = send (c->fd, line + off, len - off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto done;
        }
        off += n;
    }
    if (matchtag >= c->next_tag)
        c->next_tag = matchtag + 1;
    rc = 0;
done:
    json_decref (o);
    int saved = errno;
    free (line);
    errno = saved;
    return rc;
}

/* A response line is an object with an integer matchtag >= 0 and either a
 * payload object or an integer errnum. Returns it, or NULL + EPROTO. */
static json_t *
decode_response (const char *line, size_t len, struct cairn_error *err)
{
    json_error_t jerr;
    json_t *o = json_loadb (line, len, JSON_DECODE_ANY, &jerr);
    json_t *tag;
    const char *why;

    if (!o) {
        errset (err, EPROTO, "malformed response from cairnd: %s", jerr.text);
        return NULL;
    }
    tag = json_object_get (o, "matchtag");
    if (!json_is_object (o))
        why = "not a JSON object";
    else if (!json_is_integer (tag) || json_integer_value (tag) < 0)
        why = "no integer \"matchtag\" >= 0";
    else if (!json_is_object (json_object_get (o, "payload")) &&
             !json_is_integer (json_object_get (o, "errnum")))
        why = "neither \"payload\" object nor \"errnum\"";
    else
        return o;
    json_decref (o);
    errset (err, EPROTO, "malformed response from cairnd: %s", why);
    return NULL;
}

/* Read until the buffer holds a line, then decode and consume it. */
static json_t *
read_response (struct client *c, double deadline, struct cairn_error *err)
{
    for (;;) {
        char *nl =
            c->buf ? memchr (c->buf + c->scan, '\n', c->len - c->scan) : NULL;
        if (nl) {
            size_t n = nl - c->buf;
            json_t *o = NULL;
            bool blank = true;
            for (size_t i = 0; i < n && blank; i++)
                blank =
                    c->buf[i] == ' ' || c->buf[i] == '\t' || c->buf[i] == '\r';
            if (!blank)
                o = decode_response (c->buf, n, err);
            c->len -= n + 1;
            memmove (c->buf, nl + 1, c->len);
            c->scan = 0;
            if (blank)
                continue;
            return o;
        }
        c->scan = c->len;

        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int rc = poll (&pfd, 1, ms_left (deadline));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0) {
            errprintf (err, "poll: %s", strerror (errno));
            return NULL;
        }
        if (rc == 0) {
            errset (err, ETIMEDOUT, "timed out waiting for cairnd");
            return NULL;
        }
        if (c->cap - c->len < READ_CHUNK) {
            size_t cap = c->cap * 2 > c->len + READ_CHUNK ? c->cap * 2
                                                          : c->len + READ_CHUNK;
            char *p = realloc (c->buf, cap);
            if (!p) {
                errset (err, ENOMEM, "out of memory");
                return NULL;
            }
            c->buf = p;
            c->cap = cap;
        }
        ssize_t n = recv (c->fd, c->buf + c->len, READ_CHUNK, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            errset (err, ECONNRESET, "reading from cairnd: %s",
                    strerror (errno));
            return NULL;
        }
        if (n == 0) {
            errset (err, ECONNRESET, "cairnd closed the connection");
            return NULL;
        }
        c->len += n;
    }
}

json_t *client_recv (struct client *c, double timeout, struct cairn_error *err)
{
    if (!c) {
        errset (err, EINVAL, "client_recv: invalid argument");
        return NULL;
    }
    if (json_array_size (c->kept) > 0) {
        json_t *o = json_incref (json_array_get (c->kept, 0));
        json_array_remove (c->kept, 0);
        return o;
    }
    return read_response (c, deadline_after (timeout), err);
}

/* Turn the response to an rpc into its result. Consumes resp. */
static json_t *rpc_result (json_t *resp, struct cairn_error *err)
{
    json_t *payload = json_object_get (resp, "payload");
    json_t *errnum = json_object_get (resp, "errnum");

    if (json_is_integer (errnum)) {
        const char *errstr =
            json_string_value (json_object_get (resp, "errstr"));
        int e = json_integer_value (errnum);
        if (e <= 0)
            e = EPROTO;
        errset (err, e, "%s", errstr ? errstr : strerror (e));
        payload = NULL;
    } else
        json_incref (payload);
    int saved = errno;
    json_decref (resp);
    errno = saved;
    return payload;
}

json_t *client_rpc (struct client *c,
                    const char *topic,
                    const json_t *payload,
                    double timeout,
                    struct cairn_error *err)
{
    double deadline = deadline_after (timeout);
    int64_t tag;

    if (!c || !topic) {
        errset (err, EINVAL, "client_rpc: invalid argument");
        return NULL;
    }
    tag = c->next_tag;
    if (client_send (c, topic, tag, payload) < 0) {
        errprintf (err, "sending %s request: %s", topic, strerror (errno));
        return NULL;
    }
    for (;;) {
        json_t *resp = read_response (c, deadline, err);
        if (!resp)
            return NULL;
        int64_t t = json_integer_value (json_object_get (resp, "matchtag"));
        if (t == tag || (t == 0 && json_object_get (resp, "errnum")))
            return rpc_result (resp, err);
        if (json_array_append_new (c->kept, resp) < 0) {
            errset (err, ENOMEM, "out of memory");
            return NULL;
        }
    }
}
