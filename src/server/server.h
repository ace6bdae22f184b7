/* server.h - cairnd's unix-socket transport, on a libev loop.
 *
 * One JSON object per line ("\n"-terminated, compact), as in cairn-protocol(7),
 * FRAMING: request:        {"topic": "start", "matchtag": 7, "payload": {...}}
 *   response:       {"matchtag": 7, "payload": {...}}
 *   error response: {"matchtag": 7, "errnum": 22, "errstr": "..."}
 *
 * The server owns framing only: it accepts clients, reads lines without ever
 * blocking, checks that each line is a well-formed request and hands it to
 * ops->request; it queues responses and flushes them as the socket allows.
 * Malformed requests are answered with EPROTO by the server itself. Whether
 * a client may do something is the service's decision (see conn_uid).
 *
 * Single-threaded: every function here must be called from the thread that
 * runs the loop. The loop is borrowed, not owned.
 */
#ifndef CAIRN_EXEC_SERVER_H
#define CAIRN_EXEC_SERVER_H

#include <ev.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

struct server;
struct conn;

struct server_limits {
    size_t max_request_size; /* bytes in one line, default 1 MiB */
    size_t max_output;       /* bytes queued for one client before it is
                              * dropped as too slow, default 16 MiB */
    int max_connections;     /* default 256 */
    int user_batch;          /* a user's requests served per turn, default
                              * 16 (a user: not root nor trusted_uid) */
    size_t user_max_queued;  /* a user's unread answers past which its
                              * connection is not read, default 1 MiB */
    double user_idle_timeout; /* seconds after which a user's connection
                               * that sent nothing and holds nothing
                               * (ops->busy) is closed; default 300; < 0:
                               * never */
    int max_uid_connections; /* held by one uid at once, default 32; not
                              * counted for root and trusted_uid */
    uid_t trusted_uid;       /* besides root, the uid not held to
                              * max_uid_connections (cairnd's own); 0 for
                              * none */
    uid_t trusted_uid2;      /* another such uid (the Flux instance's
                              * owner); 0 for none */
    int socket_mode;         /* of the socket file, default 0600; 0666
                              * for a socket every local user may reach
                              * (each request checked by its peer's uid) */
};

/* A field left 0 takes its default. */
#define SERVER_MAX_REQUEST_SIZE_DEFAULT (1024 * 1024)
#define SERVER_MAX_OUTPUT_DEFAULT (16 * 1024 * 1024)
#define SERVER_MAX_CONNECTIONS_DEFAULT 256
#define SERVER_USER_BATCH_DEFAULT 16
#define SERVER_USER_MAX_QUEUED_DEFAULT (1024 * 1024)
#define SERVER_USER_IDLE_TIMEOUT_DEFAULT 300.
#define SERVER_MAX_UID_CONNECTIONS_DEFAULT 32

struct server_ops {
    /* A decoded request. topic and payload are borrowed for the duration of
     * the call (json_incref payload to keep it); a request without payload
     * is handed over with an empty object. The server has already checked
     * the framing and the types of topic, matchtag and payload.
     * The handler may call conn_respond*, conn_close on c. Required. */
    void (*request) (struct conn *c,
                     const char *topic,
                     int64_t matchtag,
                     json_t *payload,
                     void *arg);
    /* The connection is going away (EOF, I/O error, dropped as too slow,
     * closed by conn_close, server_destroy). Called exactly once per
     * connection, from the loop (never from inside conn_respond,
     * conn_respond_error, conn_close or the request callback), or from
     * server_destroy. After it returns the conn is freed: drop every
     * reference to it. Until then c stays valid, but responses to it fail
     * with ENOTCONN. Optional (NULL). */
    void (*disconnect) (struct conn *c, void *arg);
    /* Does the service hold something of c's (a stream it follows)? Then
     * c is not idle however long it is silent. Optional (NULL: never). */
    bool (*busy) (struct conn *c, void *arg);
};

/* Listen on the unix socket at path and serve it on loop.
 * If path exists: when something accepts connections there, fail with
 * EADDRINUSE ("another cairnd is listening on PATH"); when it is a socket
 * nobody listens on (left by a crashed cairnd), remove it; when it is not a
 * socket, fail with EEXIST. The socket file is created with mode 0600, then
 * given lim->socket_mode if set. Connection ids (conn_id) are unique across
 * every server of the process.
 * lim may be NULL (defaults). ops and arg are copied/kept for callbacks.
 * Returns the server, or NULL with errno set and err filled:
 *   EINVAL (empty path, ops->request NULL, negative limit),
 *   ENAMETOOLONG (path does not fit sockaddr_un.sun_path),
 *   EADDRINUSE, EEXIST, ENOMEM, or the errno of socket/bind/listen/chmod.
 */
struct server *server_create (struct ev_loop *loop,
                              const char *path,
                              const struct server_limits *lim,
                              const struct server_ops *ops,
                              void *arg,
                              struct cairn_error *err);

/* Stop the watchers, try once (without blocking) to flush each client's
 * queued output, disconnect every client (the disconnect callback fires for
 * each one still known), remove the socket file if it is still the one this
 * server created, and free everything. NULL is ok; errno is preserved.
 * Must not be called from inside a server callback. */
void server_destroy (struct server *s);

/* Stop accepting new clients and close the listening socket: connecting
 * clients are refused at once rather than left waiting in the backlog.
 * Existing connections keep working. The socket file stays until
 * server_destroy. Idempotent. */
void server_stop_accepting (struct server *s);

/* Number of connected clients (those not yet disconnected). */
int server_nconns (const struct server *s);

/* Queue the response {"matchtag": matchtag, "payload": payload} for c and
 * start sending it. payload is borrowed; NULL means {}; it must be an object.
 * The server writes without blocking; if the bytes queued for c would exceed
 * max_output the client is dropped as too slow.
 * Returns 0, or -1 with errno:
 *   EINVAL   payload not an object, or matchtag < 0
 *   ENOTCONN c is disconnected or closing (conn_close)
 *   ENOBUFS  c was just dropped as too slow (disconnect callback follows)
 *   EPIPE, ECONNRESET, ...  the write failed: c was dropped likewise
 *   ENOMEM
 */
int conn_respond (struct conn *c, int64_t matchtag, const json_t *payload);

/* Queue the error response {"matchtag", "errnum", "errstr"} for c, errstr
 * formatted from fmt (bytes that are not printable ASCII become '?', so the
 * response is always valid JSON). errnum must be > 0.
 * Returns and errno as conn_respond. */
int conn_respond_error (struct conn *c,
                        int64_t matchtag,
                        int errnum,
                        const char *fmt,
                        ...) __attribute__ ((format (printf, 4, 5)));

/* Bytes queued for c and not yet written: a sender of many messages keeps
 * this well under max_output rather than have c dropped. */
size_t conn_pending (const struct conn *c);

/* Credentials of the peer, read with SO_PEERCRED when it connected. */
uid_t conn_uid (const struct conn *c);
pid_t conn_pid (const struct conn *c);

/* Unique per server lifetime (1, 2, ...), for logs. */
uint64_t conn_id (const struct conn *c);

/* Stop reading from c, send what is queued, then disconnect it (the
 * disconnect callback fires from the loop). Safe from inside c's request
 * callback; later lines already received from c are not delivered. A no-op
 * on a conn that is already closing or disconnected. */
void conn_close (struct conn *c);

#endif /* CAIRN_EXEC_SERVER_H */
