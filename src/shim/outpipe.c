/* outpipe.c - a command's output pipe into its file (outpipe.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/outpipe.h"

/* Pipefuls read per call at most. */
#define OUTPIPE_ROUNDS 4

/* Append buf (len bytes) to the file, as far as the cap leaves room. */
static void keep (int dirfd,
                  const char *name,
                  unsigned long long cap,
                  const char *buf,
                  size_t len)
{
    struct stat st;
    int fd = openat (dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return;
    if (cap > 0) {
        unsigned long long have = 0, room;
        if (fstat (fd, &st) == 0)
            have = (unsigned long long)st.st_size;
        room = have < cap + 1 ? cap + 1 - have : 0;
        if (len > room)
            len = (size_t)room;
    }
    while (len > 0) {
        ssize_t n = write (fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        buf += n;
        len -= (size_t)n;
    }
    close (fd);
}

enum outpipe_state
outpipe_drain (int fd, int dirfd, const char *name, unsigned long long cap)
{
    char buf[65536];

    for (int round = 0; round < OUTPIPE_ROUNDS;) {
        ssize_t n = read (fd, buf, sizeof (buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN ? OUTPIPE_EMPTY : OUTPIPE_END;
        if (n == 0)
            return OUTPIPE_END;
        keep (dirfd, name, cap, buf, (size_t)n);
        round++;
    }
    return OUTPIPE_MORE;
}
