/* streamtype.h - the types of a `start` stream's responses, named once.
 *
 * A stream (cairn-protocol(7)) carries four kinds of response, told apart
 * by their "type" string: the stream's opening (accepted, reattached), a
 * live notice (output, kill: never journaled, never resent), one of the
 * job's own events (start, finish, release, exception: RFC 32's; and the
 * progress events a stream asks for: prolog-start, drain, hold, ...),
 * or an event an outside service posted (any other name).
 *
 * Whoever reads a response decodes its type once, here, and switches on
 * the result: the name is compared nowhere else. Pure code, no I/O. */
#ifndef CAIRN_STREAMTYPE_H
#define CAIRN_STREAMTYPE_H

#include <stdbool.h>

#include "core/job.h"
#include "core/streamnames.h"

/* clang-format off */
enum stream_type {
#define STREAM_TYPE_ENUM(e, name, kind) e,
    STREAM_NAMES (STREAM_TYPE_ENUM)
#undef STREAM_TYPE_ENUM
    STREAM_EVENT,  /* .event says which */
    STREAM_POSTED, /* a name cairn does not use */
    STREAM_TYPE_COUNT,
};
/* clang-format on */

/* A response's type, decoded. */
struct stream_resp {
    enum stream_type type;
    enum job_event event; /* STREAM_EVENT: the event; else JOB_EV_OTHER */
};

/* Decode a response's "type" string (NULL: STREAM_POSTED, as any name
 * cairn does not know). */
struct stream_resp stream_resp_of (const char *name);

/* The kind of a decoded response. */
enum stream_kind stream_resp_kind (struct stream_resp r);

/* The name of one of STREAM_NAMES' types; NULL for STREAM_EVENT and
 * STREAM_POSTED, whose name is the event's (job_event_name). */
const char *stream_type_name (enum stream_type type);

/* Is r one of RFC 32's responses (start, release, exception, finish),
 * which every stream gets, rather than a progress event or notice that a
 * stream gets only when it asked for them? */
bool stream_resp_is_rfc32 (struct stream_resp r);

/* Does a reattach's `since` count r? Not the stream's opening nor a live
 * notice: every journaled event, posted ones included. */
bool stream_resp_counts (struct stream_resp r);

#endif /* CAIRN_STREAMTYPE_H */
