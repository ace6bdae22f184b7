/* t_crashpoint.c - CAIRN_CRASH_AT as crashpoint.h reads it: one point or
 * a list of them, each counted on its own, the first reached is due. */
#include <stdlib.h>

#include "tap.h"
#include "journal/crashpoint.h"

static void with_spec (const char *spec)
{
    setenv ("CAIRN_CRASH_AT", spec, 1);
    crashpoint_init ();
}

int main (void)
{
    plan (NO_PLAN);

    with_spec ("a.b:2");
    ok (!crashpoint_due ("a.b"), "one point: its first pass is not due");
    ok (!crashpoint_due ("other"), "one point: another name is never due");
    ok (crashpoint_due ("a.b"), "one point: its second pass is due");
    ok (!crashpoint_due ("a.b"), "one point: its third pass is not");

    /* the supervisor's point, then cairnd's: each process has its own */
    with_spec ("supervisor.x:1,exec.y:2");
    ok (!crashpoint_due ("exec.y"), "list: exec.y's first pass is not due");
    ok (crashpoint_due ("supervisor.x"), "list: supervisor.x:1 is due");
    ok (crashpoint_due ("exec.y"), "list: exec.y:2 is due, counted apart");

    with_spec ("a:1,,b:1");
    ok (crashpoint_due ("a") && crashpoint_due ("b"),
        "an empty item is skipped");

    with_spec ("a:1,b");
    ok (!crashpoint_due ("a"), "a malformed item: the whole list is ignored");

    with_spec ("a:1,b:1,c:1,d:1,e:1");
    ok (!crashpoint_due ("a"), "more than 4 points: the list is ignored");

    unsetenv ("CAIRN_CRASH_AT");
    crashpoint_init ();
    ok (!crashpoint_active, "no spec: crash points cost a branch");
    return done_testing ();
}
