/* t_streamtype.c - every stream response name decodes to its type once,
 * and the kinds agree with job_post()'s list of cairn's own names. */
#include <string.h>

#include "core/job.h"
#include "core/streamtype.h"
#include "tap.h"

static void test_own_names (void)
{
    for (int t = 0; t < STREAM_EVENT; t++) {
        const char *name = stream_type_name ((enum stream_type)t);
        struct stream_resp r = stream_resp_of (name);
        ok (name != NULL && r.type == (enum stream_type)t &&
                r.event == JOB_EV_OTHER,
            "%s decodes to its own type", name ? name : "(null)");
        ok (job_event_of (name) == JOB_EV_OTHER, "%s is no job event", name);
    }
    ok (stream_type_name (STREAM_EVENT) == NULL &&
            stream_type_name (STREAM_POSTED) == NULL,
        "events and posted ones have no name of the stream's");
}

static void test_events (void)
{
    int rfc32 = 0, bad_decode = 0, bad_kind = 0;
    for (int ev = 0; ev < JOB_EV_COUNT; ev++) {
        const char *name = job_event_name ((enum job_event)ev);
        struct stream_resp r = stream_resp_of (name);
        if (!(r.type == STREAM_EVENT && r.event == (enum job_event)ev))
            bad_decode++;
        if (stream_resp_kind (r) != STREAM_KIND_EVENT ||
            !stream_resp_counts (r) || !job_event_is_cairns (name))
            bad_kind++;
        rfc32 += stream_resp_is_rfc32 (r);
    }
    is_int (bad_decode, 0, "every job event decodes to itself");
    is_int (bad_kind, 0, "every job event: an event, counted, cairn's");
    ok (rfc32 == 4, "four of the events are RFC 32's responses");
    ok (stream_resp_is_rfc32 (stream_resp_of ("start")) &&
            stream_resp_is_rfc32 (stream_resp_of ("finish")) &&
            stream_resp_is_rfc32 (stream_resp_of ("release")) &&
            stream_resp_is_rfc32 (stream_resp_of ("exception")),
        "start, finish, release, exception are RFC 32's");
    ok (job_event_name (JOB_EV_OTHER) == NULL, "JOB_EV_OTHER has no name");
}

static void test_kinds (void)
{
    struct stream_resp r;

    r = stream_resp_of ("accepted");
    ok (stream_resp_kind (r) == STREAM_KIND_OPENING &&
            !stream_resp_counts (r) && job_event_is_cairns ("accepted"),
        "accepted: an opening, not counted, cairn's");
    r = stream_resp_of ("reattached");
    ok (stream_resp_kind (r) == STREAM_KIND_OPENING && !stream_resp_counts (r),
        "reattached: an opening, not counted");
    r = stream_resp_of ("output");
    ok (stream_resp_kind (r) == STREAM_KIND_NOTICE && !stream_resp_counts (r) &&
            job_event_is_cairns ("output"),
        "output: a notice, not counted");
    r = stream_resp_of ("kill");
    ok (stream_resp_kind (r) == STREAM_KIND_NOTICE &&
            job_event_is_cairns ("kill"),
        "kill: a notice");
    r = stream_resp_of ("site.checked");
    ok (r.type == STREAM_POSTED && r.event == JOB_EV_OTHER &&
            stream_resp_kind (r) == STREAM_KIND_POSTED &&
            stream_resp_counts (r) && !stream_resp_is_rfc32 (r) &&
            !job_event_is_cairns ("site.checked"),
        "an outside name: posted, counted, not cairn's");
    r = stream_resp_of (NULL);
    ok (r.type == STREAM_POSTED, "NULL decodes as posted");
}

int main (void)
{
    plan (NO_PLAN);
    test_own_names ();
    test_events ();
    test_kinds ();
    return done_testing ();
}
