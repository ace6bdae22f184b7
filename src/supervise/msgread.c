/* msgread.c - see msgread.h */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervise/msgread.h"
#include "util/scm.h"

void msgread_init (struct msgread *r)
{
    r->head = r->len = 0;
    r->fd = -1;
    r->drained = false;
}

void msgread_reset (struct msgread *r)
{
    if (r->fd >= 0)
        close (r->fd);
    msgread_init (r);
}

int msgread_next (
    struct msgread *r, int sock, void *msg, size_t size, int *fd, int flags)
{
    *fd = -1;
    if (size == 0 || size > sizeof (r->buf)) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        size_t avail = r->len - r->head;
        if (avail >= size) {
            memcpy (msg, r->buf + r->head, size);
            r->head += size;
            if (r->head == r->len) { /* the last byte read: its descriptor */
                *fd = r->fd;
                r->head = r->len = 0; /* drained stays */
                r->fd = -1;
            }
            return 0;
        }
        if (r->drained && (flags & MSG_DONTWAIT)) {
            r->drained = false;
            errno = EAGAIN;
            return -1;
        }
        r->drained = false;
        if (r->head > 0) {
            memmove (r->buf, r->buf + r->head, avail);
            r->head = 0;
            r->len = avail;
        }
        /* a part of a message is completed alone: what comes after it
         * belongs to other sends, with their own descriptors */
        size_t want = avail > 0 ? size - avail : sizeof (r->buf) / size * size;
        int got;
        ssize_t n = scm_recv (sock, r->buf + r->len, want, &got, flags);
        if (n < 0)
            return -1;
        if (n == 0) {
            msgread_reset (r);
            errno = EPIPE;
            return -1;
        }
        if (got >= 0 && avail > 0) {
            /* the rest of a message never carries one: its first byte
             * did */
            close (got);
            msgread_reset (r);
            errno = EPROTO;
            return -1;
        }
        if (got >= 0)
            r->fd = got;
        /* short of what was asked, no descriptor to stop it: the kernel
         * took everything queued (unix_stream_read_generic) */
        r->drained = (flags & MSG_DONTWAIT) && got < 0 && (size_t)n < want;
        r->len += (size_t)n;
    }
}
