/* fversion.c - see fversion.h */
#include <stdio.h>
#include <string.h>

#include "flux/fversion.h"

int fversion_check (const char *built,
                    const char *running,
                    char *buf,
                    size_t len)
{
    if (built && running && strcmp (built, running) == 0)
        return 0;
    snprintf (buf, len,
              "cairn-exec.so was built for flux-core %s, but this broker "
              "runs flux-core %s: rebuild cairn against the running "
              "flux-core (README, \"Flux versions\"); not loading",
              built ? built : "(unknown)", running ? running : "(unknown)");
    return -1;
}
