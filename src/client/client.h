/* client.h - a small blocking client for cairnd's unix socket.
 *
 * Used by the `cairn` CLI, the crash harness and the benchmarks. It speaks
 * the line protocol of server.h: one compact JSON object per line.
 * Not thread-safe: one client per thread.
 */
#ifndef CAIRN_EXEC_CLIENT_H
#define CAIRN_EXEC_CLIENT_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

struct client;

/* Connect to the cairnd socket at path, then, before anything is sent,
 * check who serves it (SO_PEERCRED): root, our own effective uid, or
 * server_uid ((uid_t)-1: no other). A socket anyone else serves may be
 * another user's stand-in for cairnd, put where cairnd's was, that would
 * read our requests and answer them: it gets nothing.
 * Returns a client the caller frees with client_close, or NULL with errno
 * set and err naming the path: ENOENT (no socket there), ECONNREFUSED
 * (nobody listening), EPERM ("PATH is served by uid N, not by root or uid
 * M: refusing to talk to it"), ENAMETOOLONG, EINVAL (empty path), EACCES,
 * ENOMEM. */
struct client *
client_connect_as (const char *path, uid_t server_uid, struct cairn_error *err);

/* client_connect_as (path, (uid_t)-1, err): served by root or ourselves. */
struct client *client_connect (const char *path, struct cairn_error *err);

/* Close the connection, drop queued responses, free. NULL ok; errno is
 * preserved. */
void client_close (struct client *c);

/* The socket, e.g. to poll it alongside other fds. Bytes already buffered by
 * client_recv are not visible there: call client_recv with timeout 0 to
 * drain them. */
int client_fd (const struct client *c);

/* Send {"topic", "matchtag", "payload"} as one line, blocking until it is
 * written. payload is borrowed; NULL leaves it out (the server reads that as
 * {}); otherwise it must be an object. matchtag must be >= 0; client_rpc
 * will not reuse it.
 * Returns 0, or -1 with errno: EINVAL, ENOMEM, EPIPE/ECONNRESET (cairnd went
 * away), or the errno of send. */
int client_send (struct client *c,
                 const char *topic,
                 int64_t matchtag,
                 const json_t *payload);

/* The next response (responses kept aside by client_rpc first, in arrival
 * order), waiting at most timeout seconds (< 0: forever; 0: only what is
 * already there). It is an object with an integer "matchtag" >= 0 and
 * either "payload" or "errnum"/"errstr" (returned as is: an error response
 * is not an error of client_recv).
 * Returns a new reference, or NULL with errno and err set:
 *   ETIMEDOUT   nothing arrived in time
 *   ECONNRESET  cairnd closed the connection (or it failed)
 *   EPROTO      a line that is not such an object (it is consumed)
 *   ENOMEM
 */
json_t *client_recv (struct client *c, double timeout, struct cairn_error *err);

/* Send a request with a fresh matchtag and wait (at most timeout seconds
 * in all, < 0 forever) for the response carrying it. Responses for other
 * matchtags that arrive meanwhile are kept, in order, for client_recv.
 * An error response with matchtag 0 also ends the wait: the server uses it
 * when it could not tell which request failed (e.g. "too many connections",
 * "request too large").
 * Returns the response's payload (new reference), or NULL with errno set:
 * for an error response, errno = its errnum and err = its errstr; otherwise
 * as client_send and client_recv. */
json_t *client_rpc (struct client *c,
                    const char *topic,
                    const json_t *payload,
                    double timeout,
                    struct cairn_error *err);

#endif /* CAIRN_EXEC_CLIENT_H */
