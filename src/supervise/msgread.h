/* msgread.h - fixed-size messages off a SOCK_STREAM Unix socket, many per
 * recvmsg, each with the descriptor (SCM_RIGHTS) that rode with it.
 *
 * The sender sends each message with its own sendmsg, a descriptor (at
 * most one) with the message's first byte (serve_out.c). The kernel never
 * reads past the bytes of a send that carried descriptors: a recvmsg
 * stops right after them (unix_stream_read_generic). So the descriptor a
 * read brings belongs to the message holding the read's last byte, and
 * a read of many messages hands it to the last one. A message torn
 * across sends (a short non-blocking send) is completed by reads of its
 * own remainder, never mixed with the next message's bytes.
 *
 * One reader per socket; not thread-safe.
 */
#ifndef CAIRN_SUPERVISE_MSGREAD_H
#define CAIRN_SUPERVISE_MSGREAD_H

#include <stdbool.h>
#include <stddef.h>

#define MSGREAD_BUF 4096 /* bytes read at most per recvmsg */

struct msgread {
    unsigned char buf[MSGREAD_BUF];
    size_t head, len; /* unread bytes: buf[head .. len) */
    int fd;           /* the descriptor of the message holding buf[len-1] */
    bool drained;     /* the last MSG_DONTWAIT read emptied the socket */
};

/* An empty reader. */
void msgread_init (struct msgread *r);

/* Close the descriptors of what was read and not taken; r is empty. */
void msgread_reset (struct msgread *r);

/* The next message of size bytes (1 .. MSGREAD_BUF, the same on every
 * call) from sock into msg, and into *fd its descriptor (close-on-exec;
 * the caller's) or -1. flags: 0 (block until a whole message is there)
 * or MSG_DONTWAIT. Returns 0, or -1 with errno:
 *   EAGAIN  MSG_DONTWAIT and no whole message yet (a part is kept). When
 *           the last read came back short of what it asked, with no
 *           descriptor, the socket was empty then: this EAGAIN comes
 *           without another read, once, the next call reads again. A
 *           caller draining the socket on a level-triggered watch (libev's
 *           ev_io) thus saves the read that would say EAGAIN, and is woken
 *           again for anything sent since.
 *   EPIPE   end of file, before or inside a message
 *   EPROTO  a descriptor came with the middle of a message
 *   the errno of recvmsg (EINTR retried). */
int msgread_next (
    struct msgread *r, int sock, void *msg, size_t size, int *fd, int flags);

#endif /* CAIRN_SUPERVISE_MSGREAD_H */
