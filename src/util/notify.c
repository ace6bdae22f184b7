/* notify.c - see notify.h */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/notify.h"

int notify_send (const char *state)
{
    const char *path = getenv ("NOTIFY_SOCKET");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char msg[256];
    size_t len;
    int fd, rc;

    if (!path || !*path)
        return 0;
    len = strlen (path);
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof (sa.sun_path)) {
        errno = EINVAL;
        return -1;
    }
    memcpy (sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract namespace */
    snprintf (msg, sizeof (msg), "%s\nMAINPID=%d", state, (int)getpid ());
    if ((fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    rc = sendto (fd, msg, strlen (msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                 (socklen_t)(offsetof (struct sockaddr_un, sun_path) + len));
    int e = errno;
    close (fd);
    errno = e;
    return rc < 0 ? -1 : 0;
}
