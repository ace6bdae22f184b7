/* t_adopt.c - the Flux module adopts cairnd's job of a Flux job's id only
 * if it is that job's: the owner the job-manager gave, submitted by a
 * privileged client (issue 30: a user's job squatting a Flux job's id was
 * followed, and ended the Flux job with the user's status and output). */
#include <errno.h>
#include <string.h>

#include "flux/adopt.h"
#include "tap.h"

static int check (const char *data, uint32_t userid, char *note)
{
    json_t *o = json_loads (data, 0, NULL);
    int rc = adopt_check (o, userid, "ƒ2", note, 256);
    int e = errno;
    json_decref (o);
    errno = e;
    return rc;
}

int main (void)
{
    char note[256];

    plan (NO_PLAN);
    is_int (check ("{\"userid\": 1000, \"privileged\": true}", 1000, note), 0,
            "a privileged job of the same owner is adopted");
    is_int (check ("{\"userid\": 1000}", 1000, note), 0,
            "without \"privileged\" (a record before the field): adopted");

    note[0] = 0;
    is_errno (check ("{\"userid\": 1001, \"privileged\": false}", 1001, note),
              EPERM, "a user's job (privileged false), same uid: refused");
    is_str (note,
            "job id conflict: cairnd's job ƒ2 was started by uid 1001 "
            "through cairnd's public socket, not by this module: not adopted",
            "the note names the conflict");

    is_errno (check ("{\"userid\": 1001, \"privileged\": true}", 1000, note),
              EPERM, "another owner: refused");
    is_str (note,
            "job id conflict: cairnd's job ƒ2 belongs to uid 1001, not to "
            "this job's uid 1000: not adopted",
            "the note names both uids");

    is_errno (check ("{\"userid\": 1001, \"privileged\": false}", 1000, note),
              EPERM, "another owner's user job: refused");
    like (note, "belongs to uid 1001", "the owner comes first");

    is_errno (check ("{}", 1000, note), EPROTO,
              "no owner said (an older cairnd): refused");
    is_str (note, "cairnd does not say who owns its job ƒ2: not adopted",
            "and says so");
    is_errno (adopt_check (NULL, 0, "ƒ2", note, sizeof (note)), EPROTO,
              "no data at all: refused");
    return done_testing ();
}
