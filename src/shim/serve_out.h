/* serve_out.h - the supervisor's messages to cairnd: one ordered stream
 * (exec/spawner_proto.h), written to by several threads.
 *
 * Each request read off the socket takes the next place in the stream
 * (out_reserve); its STARTED goes out in that place, whichever worker
 * answers first (out_started), so cairnd sees the answers in the order of
 * its requests. A command's ENDED never goes before its STARTED: one that
 * comes first waits with it (out_ended). Other ENDED messages go out as
 * they come.
 *
 * We never block on the socket: cairnd may be blocked sending us a request
 * while its own socket is full of our messages, and each would wait on the
 * other for ever. What the socket cannot take yet waits here, in order,
 * each message with its pidfd (or -1) until sent; the main thread polls
 * for POLLOUT while out_waiting() and calls out_flush(). A worker that
 * leaves messages waiting writes to the wake fd, so that the main thread
 * looks again.
 *
 * All calls are thread-safe (one lock).
 */
#ifndef CAIRN_SHIM_SERVE_OUT_H
#define CAIRN_SHIM_SERVE_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "supervise/spawner_proto.h"

/* The socket to cairnd, and an eventfd the main thread polls. */
void out_init (int sock, int wakefd);

/* The next place in the stream, for a request just read (main thread). */
uint64_t out_reserve (void);

/* The answer of the request at seq: m with fd (ours to close, or -1), or
 * m NULL for no answer (cairnd is gone). */
void out_started (uint64_t seq, const struct spawner_msg *m, int fd);

/* The ENDED of the command whose request took seq: now, or right after its
 * STARTED if that has not gone yet. */
void out_ended (uint64_t seq, const struct spawner_msg *m);

/* Send what waits, as far as the socket takes it. */
void out_flush (void);

/* True while messages wait for the socket. */
bool out_waiting (void);

/* cairnd is gone: drop what waits (the exit records say it all), and
 * every message from now on. */
void out_drop (void);

#endif /* CAIRN_SHIM_SERVE_OUT_H */
