/* t_msgread.c - fixed-size messages read many at a time, each with the
 * descriptor that rode with it: a pidfd handed to the wrong message would
 * let cairnd signal the wrong process. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervise/msgread.h"
#include "tap.h"
#include "util/scm.h"

struct m {
    int idx;
    char pad[60];
};

static int sv[2];

static void pair (void)
{
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
}

static void unpair (void)
{
    close (sv[0]);
    close (sv[1]);
}

/* A descriptor that names message idx: a pipe whose inode we note. */
static ino_t ino_of[1000];

static int fd_for (int idx)
{
    int p[2];
    struct stat st;
    if (pipe (p) < 0 || fstat (p[0], &st) < 0)
        BAIL_OUT ("pipe: %s", strerror (errno));
    close (p[1]);
    ino_of[idx] = st.st_ino;
    return p[0];
}

/* Send message idx, with a descriptor when with_fd; bytes from..to of it
 * (the descriptor with the first byte sent, as serve_out.c does). */
static void send_part (int idx, bool with_fd, size_t from, size_t to)
{
    struct m m = {.idx = idx};
    int fd = with_fd ? fd_for (idx) : -1;
    if (scm_send (sv[1], (char *)&m + from, to - from, fd, 0) !=
        (ssize_t)(to - from))
        BAIL_OUT ("send: %s", strerror (errno));
    if (fd >= 0)
        close (fd);
}

static void send_msg (int idx, bool with_fd)
{
    send_part (idx, with_fd, 0, sizeof (struct m));
}

/* Read n messages: each in order, its descriptor the one sent with it. */
static int read_all (struct msgread *r, int n, int (*has_fd) (int))
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        struct m m;
        int fd;
        struct stat st;
        int rc = msgread_next (r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT);
        /* the EAGAIN of a read that found the socket empty comes once,
         * then the watch (here: the retry) calls again */
        if (rc < 0 && errno == EAGAIN)
            rc = msgread_next (r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT);
        if (rc < 0) {
            diag ("message %d: %s", i, strerror (errno));
            return n - i + bad;
        }
        bool want = has_fd (i);
        if (m.idx != i || (fd >= 0) != want ||
            (fd >= 0 && (fstat (fd, &st) < 0 || st.st_ino != ino_of[i]))) {
            if (bad++ < 5)
                diag ("message %d: idx %d, fd %d (wanted %s)", i, m.idx, fd,
                      want ? "its own" : "none");
        }
        if (fd >= 0) {
            int fl = fcntl (fd, F_GETFD);
            if (!(fl & FD_CLOEXEC) && bad++ < 5)
                diag ("message %d: descriptor not close-on-exec", i);
            close (fd);
        }
    }
    return bad;
}

static int every_fifth (int i)
{
    return i % 5 == 3;
}

static int all (int i)
{
    return 1;
}

static int none (int i)
{
    return 0;
}

static void test_many (void)
{
    struct msgread r;
    struct m m;
    int fd;

    pair ();
    msgread_init (&r);
    for (int i = 0; i < 10; i++)
        send_msg (i, every_fifth (i));
    is_int (read_all (&r, 10, every_fifth), 0,
            "10 messages, a descriptor on 3 and 8: each its own");
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT),
              EAGAIN, "then EAGAIN");

    /* The read of message 9 came back short, with no descriptor: the
     * socket was empty then, and the EAGAIN above took no read. So one
     * sent now is not seen by the next call either, only by the one after
     * it, as a level-triggered watch would call again. */
    send_msg (10, false);
    send_msg (11, false);
    ok (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT) == 0 &&
            m.idx == 10 && fd == -1,
        "after an EAGAIN without a read, the next call reads: message 10");
    ok (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT) == 0 &&
            m.idx == 11,
        "and message 11 from the same read");
    send_msg (12, false);
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT),
              EAGAIN,
              "the read of 10 and 11 emptied the socket: EAGAIN without a "
              "read, message 12 waiting");
    ok (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT) == 0 &&
            m.idx == 12,
        "the next call reads message 12");
    send_msg (13, false);
    ok (msgread_next (&r, sv[0], &m, sizeof (m), &fd, 0) == 0 && m.idx == 13,
        "a blocking call reads whatever the last read found: message 13");

    /* more than one read's worth (64 messages of 64 bytes a read); no
     * more than the socket takes unread */
    for (int i = 0; i < 120; i++)
        send_msg (i, every_fifth (i));
    is_int (read_all (&r, 120, every_fifth), 0,
            "120 messages (two reads), every fifth with a descriptor: each its "
            "own");
    for (int i = 0; i < 120; i++)
        send_msg (i, true);
    is_int (read_all (&r, 120, all), 0,
            "120 messages, each with a descriptor: each its own");
    for (int i = 0; i < 120; i++)
        send_msg (i, false);
    is_int (read_all (&r, 120, none), 0, "120 messages with none: none");
    unpair ();
}

/* Is the next message idx, with the descriptor sent with it? */
static bool next_with_own (struct msgread *r, int idx)
{
    struct m m;
    struct stat st;
    int fd;
    bool good =
        msgread_next (r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT) == 0 &&
        m.idx == idx && fd >= 0 && fstat (fd, &st) == 0 &&
        st.st_ino == ino_of[idx];
    if (fd >= 0)
        close (fd);
    return good;
}

/* A message torn by a short send: its descriptor came with its first
 * part, the rest comes later. */
static void test_torn (void)
{
    struct msgread r;
    struct m m;
    int fd;

    pair ();
    msgread_init (&r);
    send_msg (0, false);
    send_part (1, true, 0, 10);
    ok (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT) == 0 &&
            m.idx == 0,
        "torn: message 0");
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT),
              EAGAIN, "torn: EAGAIN while the rest is missing");
    send_part (1, false, 10, sizeof (struct m));
    send_msg (2, true);
    ok (next_with_own (&r, 1),
        "torn: completed, with the descriptor of its first part");
    ok (next_with_own (&r, 2), "torn: the next message has its own");

    /* a descriptor with the rest of a message, read apart from its first
     * part, breaks the protocol */
    send_part (3, false, 0, 10);
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT),
              EAGAIN, "descriptor mid-message: the first part is kept");
    send_part (3, true, 10, sizeof (struct m));
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, MSG_DONTWAIT),
              EPROTO, "descriptor mid-message: EPROTO");
    unpair ();
}

static void test_eof (void)
{
    struct msgread r;
    struct m m;
    int fd;

    pair ();
    msgread_init (&r);
    send_msg (0, false);
    send_part (1, true, 0, 20);
    close (sv[1]);
    ok (msgread_next (&r, sv[0], &m, sizeof (m), &fd, 0) == 0 && m.idx == 0,
        "eof: the whole message before it is read");
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, 0), EPIPE,
              "eof inside a message: EPIPE");
    is_errno (msgread_next (&r, sv[0], &m, sizeof (m), &fd, 0), EPIPE,
              "eof: EPIPE again");
    is_errno (msgread_next (&r, sv[0], &m, 0, &fd, 0), EINVAL,
              "size 0: EINVAL");
    close (sv[0]);
}

int main (void)
{
    plan (NO_PLAN);
    test_many ();
    test_torn ();
    test_eof ();
    return done_testing ();
}
