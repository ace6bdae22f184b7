/* creply.h - who waits for which reply from cairnd: a table of matchtag
 * -> callback, as libflux's rpc.c registers a handler per request, so that
 * a reply reaches the one that asked and nobody else (cconn.h's
 * cconn_rpc).
 *
 * Pure code, no I/O: the connection (cconn.c) owns one, adds an entry for
 * each request it sends for a caller and hands each message it reads to
 * creply_dispatch(). Matchtags are handed out in ascending order by the
 * connection, so the table is a sorted array and a lookup a bisection.
 */
#ifndef CAIRN_FLUX_CREPLY_H
#define CAIRN_FLUX_CREPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct creply;

/* A reply: the whole message ({"matchtag", "payload"} or {"matchtag",
 * "errnum", "errstr"}), borrowed for the call. */
typedef void (*creply_f) (const json_t *msg, void *arg);

/* Flags of an entry. */
enum {
    /* Many replies (a `start` stream): the entry stays until removed.
     * Without it, the first reply removes the entry before cb runs. */
    CREPLY_STREAMING = 1,
};

/* An empty table, or NULL with errno ENOMEM. */
struct creply *creply_create (void);

/* Free the table. NULL is fine. The callbacks are not called. */
void creply_destroy (struct creply *t);

/* Wait for replies to matchtag (> 0, above every matchtag the table ever
 * held): cb (msg, arg) is called for each, or none is (cb NULL: the reply
 * is taken and dropped, for a request nobody needs the answer to).
 * Returns 0, or -1 with errno EINVAL (a matchtag not above the last one)
 * or ENOMEM. */
int creply_add (
    struct creply *t, int64_t matchtag, int flags, creply_f cb, void *arg);

/* Stop waiting for matchtag. A matchtag the table does not hold (answered
 * already, cleared) is fine. */
void creply_remove (struct creply *t, int64_t matchtag);

/* Forget every entry (the connection that would answer is gone); the
 * callbacks are not called. */
void creply_clear (struct creply *t);

/* A message from cairnd with this matchtag: call its entry's callback
 * and return true, or return false if nobody waits for it. The callback
 * may add and remove entries, its own included. */
bool creply_dispatch (struct creply *t, int64_t matchtag, const json_t *msg);

/* How many entries wait. */
size_t creply_count (const struct creply *t);

#endif /* CAIRN_FLUX_CREPLY_H */
