/* main.c - cairn-shim's entry: a shim, or with --spawner cairnd's spawner
 * (shim.h). */
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"

int main (int argc, char *argv[])
{
    if (argc == 3 && strcmp (argv[1], "--spawner") == 0) {
        char *end;
        long fd = strtol (argv[2], &end, 10);
        if (*end || fd < 3 || fd > 1023)
            return 2;
        shim_serve ((int)fd);
    }
    return shim_main (argc, argv);
}
