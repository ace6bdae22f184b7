/* cconn.h - cairn-exec's connection to cairnd, driven by the broker's
 * reactor.
 *
 * cairnd speaks one JSON object per line on its unix socket
 * (cairn-protocol(7)). The connection never blocks the broker: writes are
 * queued and flushed as the socket takes them. When cairnd is not there, or
 * goes away, the connection retries on its own (0.1 s, doubling to 2 s) and
 * says so through ops->state, so that the caller can reattach its jobs:
 * cairnd keeps working while nobody is connected.
 */
#ifndef CAIRN_FLUX_CCONN_H
#define CAIRN_FLUX_CCONN_H

#include <stdbool.h>
#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/creply.h"

struct cconn;

struct cconn_ops {
    /* One message from cairnd that no cconn_rpc() waits for:
     * {"matchtag", "payload"} or {"matchtag", "errnum", "errstr"}.
     * Borrowed for the call. NULL: such messages are dropped. */
    void (*message) (struct cconn *cc, const json_t *msg, void *arg);
    /* Connected (up = true) or lost (false); lost is also reported when a
     * queued request could not be written whole. */
    void (*state) (struct cconn *cc, bool up, void *arg);
};

/* Start connecting to the socket at path (copied). Returns the connection
 * (not yet up: wait for ops->state), or NULL with errno ENOMEM or
 * ENAMETOOLONG (path longer than a unix socket address). */
struct cconn *cconn_create (flux_t *h,
                            const char *path,
                            const struct cconn_ops *ops,
                            void *arg);

/* Before the connection is up, send topic with payload (copied) as its
 * first request: it is up only once cairnd answers that without an error.
 * An error answer is logged (again only when its text changes), and the
 * connection closed and tried again after CCONN_REFUSED_RETRY seconds.
 * Set it before the first connect (right after cconn_create). Returns 0,
 * or -1 with errno ENOMEM. */
#define CCONN_REFUSED_RETRY 10.0
int cconn_set_hello (struct cconn *cc,
                     const char *topic,
                     const json_t *payload);

/* Hold off the first connect (call right after cconn_create, before the
 * reactor runs) until cconn_release: for a hello that is not known yet. */
void cconn_hold (struct cconn *cc);
void cconn_release (struct cconn *cc);

/* Queue a request whose replies go to cb (msg, arg) and to nobody else,
 * as with libflux's flux_rpc (creply.h): once, or with CREPLY_STREAMING
 * each until cconn_rpc_cancel(). cb NULL: the replies are dropped (a
 * request whose answer nobody needs). When the connection is lost, every
 * request's wait ends with it, silently (ops->state says so). Returns the
 * request's matchtag (> 0, unique for the connection's lifetime), or -1
 * with errno ENOTCONN (not up: nothing queued), ENOMEM. There is no other
 * way to send: whoever asks names who gets the answer. */
int64_t cconn_rpc (struct cconn *cc,
                   const char *topic,
                   const json_t *payload,
                   int flags,
                   creply_f cb,
                   void *arg);

/* Stop routing replies of matchtag (0, or one no longer waited for, is
 * fine). */
void cconn_rpc_cancel (struct cconn *cc, int64_t matchtag);

bool cconn_up (const struct cconn *cc);
/* Why the last connect failed (an errno), 0 while up or before a try. */
int cconn_last_errno (const struct cconn *cc);
const char *cconn_path (const struct cconn *cc);

/* One message from cairnd, taken apart: what is missing is 0 or NULL.
 * errstr and payload are borrowed from the message. */
struct cconn_msg {
    json_int_t matchtag;
    json_int_t errnum;
    const char *errstr;
    json_t *payload;
};
void cconn_msg_split (const json_t *msg, struct cconn_msg *m);

/* Close and free. NULL is fine. */
void cconn_destroy (struct cconn *cc);

#endif /* CAIRN_FLUX_CCONN_H */
