/* serve_out.c - the supervisor's ordered stream of messages to cairnd
 * (serve_out.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/scm.h"
#include "shim/serve_out.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int sock = -1, wakefd = -1;
static bool dropped;

/* Messages the socket could not take yet, oldest first; off is how much
 * of the front one went already. */
struct outmsg {
    struct spawner_msg m;
    int fd;
};
static struct outmsg *q;
static size_t q_head, q_n, q_room, q_off;

/* The places of the requests not answered in the stream yet: a ring from
 * seq `posted` (the next STARTED to go) to `reserved`, indexed by
 * seq % room (room a power of two). */
struct place {
    bool answered, none; /* none: no STARTED (cairnd gone) */
    bool has_ended;      /* an ENDED waits for this STARTED */
    struct spawner_msg m, ended;
    int fd;
};
static struct place *ring;
static uint64_t posted, reserved;
static size_t room;

void out_init (int s, int w)
{
    sock = s;
    wakefd = w;
}

/* Send what is left of o from off without blocking: the pidfd rides with
 * its first byte. Returns the bytes sent, or -1 with errno (EAGAIN: the
 * socket is full). */
static ssize_t msg_try (const struct outmsg *o, size_t off)
{
    return scm_send (sock, (const char *)&o->m + off, sizeof (o->m) - off,
                     off == 0 ? o->fd : -1, MSG_DONTWAIT);
}

/* Under lock. */
static void drop_locked (void)
{
    for (size_t i = q_head; i < q_n; i++) {
        if (q[i].fd >= 0)
            close (q[i].fd);
    }
    q_head = q_n = q_off = 0;
}

/* Under lock: send what waits, in order, as far as the socket takes it. */
static void flush_locked (void)
{
    while (q_head < q_n) {
        struct outmsg *o = &q[q_head];
        ssize_t n = msg_try (o, q_off);
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) { /* cairnd is gone */
            drop_locked ();
            return;
        }
        q_off += (size_t)n;
        if (o->fd >= 0) { /* passed with the first byte */
            close (o->fd);
            o->fd = -1;
        }
        if (q_off < sizeof (o->m))
            continue;
        q_off = 0;
        q_head++;
    }
    q_head = q_n = 0;
}

/* Under lock: queue m (fd ours to close, or -1) after what waits. */
static void post_locked (const struct spawner_msg *m, int fd)
{
    if (dropped) {
        if (fd >= 0)
            close (fd);
        return;
    }
    if (q_n == q_room) {
        size_t r = q_room ? q_room * 2 : 64;
        struct outmsg *n = realloc (q, r * sizeof (*n));
        if (!n)
            _exit (1); /* the keeper sees our commands through */
        q = n;
        q_room = r;
    }
    q[q_n++] = (struct outmsg){.m = *m, .fd = fd};
}

/* Under lock: the answers that can go now, in order. */
static void advance_locked (void)
{
    while (posted < reserved) {
        struct place *p = &ring[posted & (room - 1)];
        if (!p->answered)
            break;
        if (!p->none)
            post_locked (&p->m, p->fd);
        if (p->has_ended)
            post_locked (&p->ended, -1);
        memset (p, 0, sizeof (*p));
        posted++;
    }
}

/* Under lock: after a worker's or the main thread's post, flush; a worker
 * that leaves messages waiting wakes the main thread to poll for them. */
static void send_locked (void)
{
    flush_locked ();
    if (q_head < q_n && wakefd >= 0) {
        uint64_t one = 1;
        (void)!write (wakefd, &one, sizeof (one));
    }
}

uint64_t out_reserve (void)
{
    pthread_mutex_lock (&lock);
    if (reserved - posted == room) { /* full: double, keeping seq % room */
        size_t r = room ? room * 2 : 64;
        struct place *n = calloc (r, sizeof (*n));
        if (!n)
            _exit (1);
        for (uint64_t s = posted; s < reserved; s++)
            n[s & (r - 1)] = ring[s & (room - 1)];
        free (ring);
        ring = n;
        room = r;
    }
    uint64_t seq = reserved++;
    pthread_mutex_unlock (&lock);
    return seq;
}

void out_started (uint64_t seq, const struct spawner_msg *m, int fd)
{
    pthread_mutex_lock (&lock);
    struct place *p = &ring[seq & (room - 1)];
    p->answered = true;
    if (m) {
        p->m = *m;
        p->fd = fd;
    } else
        p->none = true;
    advance_locked ();
    send_locked ();
    pthread_mutex_unlock (&lock);
}

void out_ended (uint64_t seq, const struct spawner_msg *m)
{
    pthread_mutex_lock (&lock);
    if (seq < posted)
        post_locked (m, -1);
    else {
        struct place *p = &ring[seq & (room - 1)];
        p->has_ended = true;
        p->ended = *m;
    }
    send_locked ();
    pthread_mutex_unlock (&lock);
}

void out_flush (void)
{
    pthread_mutex_lock (&lock);
    flush_locked ();
    pthread_mutex_unlock (&lock);
}

bool out_waiting (void)
{
    pthread_mutex_lock (&lock);
    bool w = q_head < q_n;
    pthread_mutex_unlock (&lock);
    return w;
}

void out_drop (void)
{
    pthread_mutex_lock (&lock);
    dropped = true;
    drop_locked ();
    pthread_mutex_unlock (&lock);
}
