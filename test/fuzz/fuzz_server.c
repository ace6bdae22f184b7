/* fuzz_server.c - cairnd's line framing and request checks (exec/server.h),
 * through a real socket.
 *
 * Once: an ev loop and a server on a socket in a temporary directory, with
 * a small request size limit (so that "too large" is reachable). Per input:
 * a client connects, writes the input, shuts down its write side and reads
 * until the server hangs up; the loop runs (EVRUN_NOWAIT) in between. The
 * request handler checks what the server promises it (a topic string, a
 * matchtag >= 0, an object payload) and answers by topic: "close" closes
 * the connection, "error" sends an error response quoting the payload,
 * anything else echoes the payload. Every line the client gets back must
 * be a JSON object with a matchtag and either a payload or errnum+errstr,
 * and the server must have let go of the connection at the end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <ev.h>
#include <jansson.h>

#include "server/server.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_server: %s:%d: ", __FILE__, __LINE__);      \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

#define MAX_REQUEST 4096
#define MAX_TURNS 100000 /* loop turns for one input: more is a hang */

static struct ev_loop *loop;
static struct server *server;
static char dir[] = "/tmp/cairn-fuzz-server.XXXXXX";
static char path[sizeof (dir) + 16];
static int ndisconnects;
static int nrequests;

static void request_cb (struct conn *c,
                        const char *topic,
                        int64_t matchtag,
                        json_t *payload,
                        void *arg)
{
    CHECK (topic != NULL, "topic");
    CHECK (matchtag >= 0, "matchtag %jd", (intmax_t)matchtag);
    CHECK (json_is_object (payload), "payload");
    nrequests++;
    if (!strcmp (topic, "close"))
        conn_close (c);
    else if (!strcmp (topic, "error")) {
        char *s = json_dumps (payload, JSON_COMPACT);
        (void)conn_respond_error (c, matchtag, EINVAL, "%s", s ? s : "");
        free (s);
    } else
        (void)conn_respond (c, matchtag, payload);
}

static void disconnect_cb (struct conn *c, void *arg)
{
    ndisconnects++;
}

static void cleanup (void)
{
    server_destroy (server);
    rmdir (dir);
}

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    struct server_limits lim = {.max_request_size = MAX_REQUEST};
    struct server_ops ops = {.request = request_cb,
                             .disconnect = disconnect_cb};
    struct cairn_error err = {{0}};

    CHECK (mkdtemp (dir), "mkdtemp: %s", strerror (errno));
    snprintf (path, sizeof (path), "%s/sock", dir);
    CHECK ((loop = ev_loop_new (EVFLAG_AUTO)), "ev_loop_new");
    CHECK ((server = server_create (loop, path, &lim, &ops, NULL, &err)),
           "server_create: %s", err.text);
    atexit (cleanup);
    return 0;
}

/* Check one response line (without its '\n'). */
static void check_response (const char *line, size_t len)
{
    json_error_t jerr;
    json_t *o = json_loadb (line, len, 0, &jerr);
    json_t *tag;

    CHECK (o && json_is_object (o), "response is not an object: %.*s: %s",
           (int)len, line, jerr.text);
    tag = json_object_get (o, "matchtag");
    CHECK (json_is_integer (tag) && json_integer_value (tag) >= 0, "matchtag");
    if (json_object_get (o, "errnum"))
        CHECK (json_integer_value (json_object_get (o, "errnum")) > 0 &&
                   json_is_string (json_object_get (o, "errstr")),
               "error response %.*s", (int)len, line);
    else
        CHECK (json_is_object (json_object_get (o, "payload")), "response %.*s",
               (int)len, line);
    json_decref (o);
}

struct client {
    int fd;
    char *in; /* received, not yet a whole line */
    size_t len, cap;
    bool eof;
};

/* Read what the server sent; check each whole line. */
static void client_read (struct client *cl)
{
    for (;;) {
        if (cl->cap - cl->len < 4096) {
            cl->cap = cl->cap ? cl->cap * 2 : 8192;
            CHECK ((cl->in = realloc (cl->in, cl->cap)), "out of memory");
        }
        ssize_t n =
            recv (cl->fd, cl->in + cl->len, cl->cap - cl->len, MSG_DONTWAIT);
        if (n < 0) {
            CHECK (errno == EAGAIN || errno == ECONNRESET, "recv: %s",
                   strerror (errno));
            if (errno == ECONNRESET)
                cl->eof = true;
            break;
        }
        if (n == 0) {
            cl->eof = true;
            break;
        }
        cl->len += (size_t)n;
    }
    char *start = cl->in, *nl;
    while ((nl = memchr (start, '\n', cl->len - (size_t)(start - cl->in)))) {
        check_response (start, (size_t)(nl - start));
        start = nl + 1;
    }
    cl->len -= (size_t)(start - cl->in);
    memmove (cl->in, start, cl->len);
    if (cl->eof)
        CHECK (cl->len == 0, "partial response line at EOF");
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct client cl = {.fd = -1};
    size_t off = 0;
    int before = ndisconnects;
    bool shut = false;
    int turns;

    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", path);
    cl.fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    CHECK (cl.fd >= 0, "socket: %s", strerror (errno));
    CHECK (connect (cl.fd, (struct sockaddr *)&addr, sizeof (addr)) == 0,
           "connect: %s", strerror (errno));
    for (turns = 0; turns < MAX_TURNS; turns++) {
        if (off < size) {
            ssize_t n = send (cl.fd, data + off, size - off,
                              MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0)
                off += (size_t)n;
            else if (n < 0 && errno != EAGAIN)
                off = size; /* the server hung up (too large, closed) */
        }
        if (off == size && !shut) {
            (void)shutdown (cl.fd, SHUT_WR);
            shut = true;
        }
        ev_run (loop, EVRUN_NOWAIT);
        client_read (&cl);
        if (cl.eof && ndisconnects > before)
            break;
    }
    CHECK (turns < MAX_TURNS, "server did not finish with the client");
    CHECK (ndisconnects == before + 1, "%d disconnects", ndisconnects - before);
    CHECK (server_nconns (server) == 0, "%d conns left",
           server_nconns (server));
    close (cl.fd);
    free (cl.in);
    return 0;
}
