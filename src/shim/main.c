/* main.c - cairn-shim's entry: a shim; with --spawner cairnd's supervisor;
 * with --keeper the node's keeper (shim.h). */
#include <stdlib.h>
#include <string.h>

#include "shim/drop.h"
#include "shim/shim.h"

/* A number in [min, max], or -1. */
static long number (const char *s, long min, long max)
{
    char *end;
    long v = strtol (s, &end, 10);
    return *s && !*end && v >= min && v <= max ? v : -1;
}

int main (int argc, char *argv[])
{
    if ((argc == 4 || argc == 5) && strcmp (argv[1], "--spawner") == 0) {
        long fd = number (argv[2], 3, 1023),
             pid = number (argv[3], 1, 1L << 30),
             kfd = argc == 5 ? number (argv[4], 3, 1023) : -2;
        if (fd < 0 || pid < 0 || kfd == -1)
            return 2;
        shim_serve ((int)fd, (pid_t)pid, kfd < 0 ? -1 : (int)kfd);
    }
    if (argc >= 2 && strcmp (argv[1], "--drop") == 0)
        return shim_drop_main (argc, argv);
    if (argc == 5 && strcmp (argv[1], "--keeper") == 0) {
        long fd = number (argv[2], 3, 1023),
             pid = number (argv[3], 1, 1L << 30);
        if (fd < 0 || pid < 0 || argv[4][0] != '/')
            return 2;
        shim_keep ((int)fd, (pid_t)pid, argv[4]);
    }
    return shim_main (argc, argv);
}
