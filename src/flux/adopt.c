/* adopt.c - see adopt.h */
#include <errno.h>
#include <stdio.h>

#include "flux/adopt.h"

int adopt_check (const json_t *data,
                 uint32_t userid,
                 const char *f58,
                 char *note,
                 size_t len)
{
    json_t *u = json_object_get (data, "userid");
    json_t *p = json_object_get (data, "privileged");

    if (!json_is_integer (u)) {
        snprintf (note, len,
                  "cairnd does not say who owns its job %s: not adopted", f58);
        errno = EPROTO;
        return -1;
    }
    if (json_integer_value (u) != (json_int_t)userid) {
        snprintf (note, len,
                  "job id conflict: cairnd's job %s belongs to uid "
                  "%" JSON_INTEGER_FORMAT
                  ", not to this job's uid %u: not adopted",
                  f58, json_integer_value (u), (unsigned)userid);
        errno = EPERM;
        return -1;
    }
    /* absent: a cairnd before the field, whose every job was privileged */
    if (json_is_false (p)) {
        snprintf (note, len,
                  "job id conflict: cairnd's job %s was started by uid %u "
                  "through cairnd's public socket, not by this module: not "
                  "adopted",
                  f58, (unsigned)userid);
        errno = EPERM;
        return -1;
    }
    return 0;
}
