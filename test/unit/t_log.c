/* t_log.c - log_msg: one line, one write (a SIGKILL between the writes
 * of a line left a torn line in the log, issue 36). stderr is pointed at
 * a SOCK_SEQPACKET socket, where every write(2) is one packet: a line in
 * three writes shows as three packets. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "tap.h"

static int sv[2], saved_stderr;

/* The packets log_msg wrote since the last call, in buf; how many. */
static int packets (char *buf, size_t len, size_t *last_len)
{
    int n = 0;
    ssize_t r;
    *last_len = 0;
    while ((r = recv (sv[0], buf, len, MSG_DONTWAIT)) > 0) {
        n++;
        *last_len = (size_t)r;
    }
    return n;
}

int main (void)
{
    static char buf[2 * LOG_LINE_MAX], big[3 * LOG_LINE_MAX];
    size_t len;

    plan (NO_PLAN);
    if (socketpair (AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0 ||
        (saved_stderr = dup (2)) < 0 || dup2 (sv[1], 2) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));

    log_set_level (LOG_INFO);
    errno = EAGAIN;
    log_msg (LOG_ERR, "job %s: exit of %d", "42", 7);
    int err = errno;
    int n = packets (buf, sizeof (buf), &len);
    dup2 (saved_stderr, 2);
    is_int (n, 1, "a line is one write");
    buf[len] = '\0';
    like (buf, " cairnd error: job 42: exit of 7\n",
          "... prefix, message, newline");
    ok (len > 0 && buf[len - 1] == '\n', "... ending in its newline");
    is_int (err, EAGAIN, "errno kept");

    dup2 (sv[1], 2);
    log_msg (LOG_DEBUG, "dropped below the level");
    n = packets (buf, sizeof (buf), &len);
    dup2 (saved_stderr, 2);
    is_int (n, 0, "a message above the level is dropped");

    memset (big, 'x', sizeof (big) - 1);
    dup2 (sv[1], 2);
    log_msg (LOG_WARNING, "%s", big);
    n = packets (buf, sizeof (buf), &len);
    dup2 (saved_stderr, 2);
    is_int (n, 1, "a long line is one write too");
    is_int ((int)len, LOG_LINE_MAX, "... cut at LOG_LINE_MAX");
    ok (len >= 4 && memcmp (buf + len - 4, "...\n", 4) == 0,
        "... ending in \"...\" and its newline");

    /* under systemd: stderr is the journal's stream, which stamps lines
     * itself; a stale JOURNAL_STREAM (another stream's) changes nothing */
    struct stat st;
    char js[64];
    if (fstat (sv[1], &st) < 0)
        BAIL_OUT ("fstat: %s", strerror (errno));
    snprintf (js, sizeof (js), "%llu:%llu", (unsigned long long)st.st_dev,
              (unsigned long long)st.st_ino);
    setenv ("JOURNAL_STREAM", js, 1);
    dup2 (sv[1], 2);
    log_msg (LOG_WARNING, "node %d is silent", 3);
    n = packets (buf, sizeof (buf), &len);
    dup2 (saved_stderr, 2);
    buf[n == 1 ? len : 0] = '\0';
    is_str (buf, "<4>warning: node 3 is silent\n",
            "to the journal: its priority prefix, no stamp of ours");
    setenv ("JOURNAL_STREAM", "1:2", 1);
    dup2 (sv[1], 2);
    log_msg (LOG_INFO, "elsewhere");
    n = packets (buf, sizeof (buf), &len);
    dup2 (saved_stderr, 2);
    buf[n == 1 ? len : 0] = '\0';
    like (buf, " cairnd info: elsewhere\n",
          "another stream's JOURNAL_STREAM: our own stamp");
    unsetenv ("JOURNAL_STREAM");
    close (sv[0]);
    close (sv[1]);
    return done_testing ();
}
