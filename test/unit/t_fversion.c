/* t_fversion.c - the module loads only into the flux-core it was built
 * for (src/flux/fversion.h). */
#include "tap.h"
#include "flux/fversion.h"

int main (void)
{
    char buf[512] = "";

    plan (NO_PLAN);
    ok (fversion_check ("0.88.0-59-g4a5e79f56", "0.88.0-59-g4a5e79f56", buf,
                        sizeof (buf)) == 0,
        "the same flux-core: loads");
    ok (fversion_check ("0.88.0-59-g4a5e79f56", "0.89.0", buf,
                        sizeof (buf)) < 0,
        "another flux-core: refused");
    is_str (buf,
            "cairn-exec.so was built for flux-core 0.88.0-59-g4a5e79f56, but "
            "this broker runs flux-core 0.89.0: rebuild cairn against the "
            "running flux-core (README, \"Flux versions\"); not loading",
            "... naming both versions");
    ok (fversion_check ("0.88.0", NULL, buf, sizeof (buf)) < 0,
        "an unknown running version: refused");
    return done_testing ();
}
