/* streamtype.c - a stream response's type, decoded once (streamtype.h). */
#include <string.h>

#include "core/streamtype.h"

static const struct {
    const char *name;
    enum stream_kind kind;
} names[] = {
#define STREAM_TYPE_ROW(e, name, kind) [e] = {name, kind},
    STREAM_NAMES (STREAM_TYPE_ROW)
#undef STREAM_TYPE_ROW
};

#define NNAMES (sizeof (names) / sizeof (names[0]))

struct stream_resp stream_resp_of (const char *name)
{
    struct stream_resp r = {STREAM_POSTED, JOB_EV_OTHER};

    if (!name)
        return r;
    for (size_t i = 0; i < NNAMES; i++) {
        if (strcmp (name, names[i].name) == 0) {
            r.type = (enum stream_type)i;
            return r;
        }
    }
    r.event = job_event_of (name);
    if (r.event != JOB_EV_OTHER)
        r.type = STREAM_EVENT;
    return r;
}

enum stream_kind stream_resp_kind (struct stream_resp r)
{
    if (r.type == STREAM_EVENT)
        return STREAM_KIND_EVENT;
    if (r.type == STREAM_POSTED || r.type >= NNAMES)
        return STREAM_KIND_POSTED;
    return names[r.type].kind;
}

const char *stream_type_name (enum stream_type type)
{
    return type < NNAMES ? names[type].name : NULL;
}

bool stream_resp_is_rfc32 (struct stream_resp r)
{
    if (r.type != STREAM_EVENT)
        return false;
    switch (r.event) {
    case JOB_EV_START:
    case JOB_EV_RELEASE:
    case JOB_EV_EXCEPTION:
    case JOB_EV_FINISH:
        return true;
    default:
        return false;
    }
}

bool stream_resp_counts (struct stream_resp r)
{
    enum stream_kind k = stream_resp_kind (r);
    return k == STREAM_KIND_EVENT || k == STREAM_KIND_POSTED;
}
