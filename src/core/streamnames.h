/* streamnames.h - the names a `start` stream uses besides the job's
 * events (cairn-protocol(7)), listed once: the stream's opening and its
 * live notices. A table only, so that both the job (which refuses them as
 * a posted event's name, job_post) and the stream's decoder
 * (streamtype.h) read it without depending on each other. */
#ifndef CAIRN_STREAMNAMES_H
#define CAIRN_STREAMNAMES_H

enum stream_kind {
    STREAM_KIND_OPENING, /* the stream's first response */
    STREAM_KIND_NOTICE,  /* a live notice: not journaled, never resent */
    STREAM_KIND_EVENT,   /* one of the job's events (enum job_event) */
    STREAM_KIND_POSTED,  /* an outside service's event (job_post) */
};

/* X (enum, name, kind) */
#define STREAM_NAMES(X)                                                        \
    X (STREAM_ACCEPTED, "accepted", STREAM_KIND_OPENING)                       \
    X (STREAM_REATTACHED, "reattached", STREAM_KIND_OPENING)                   \
    X (STREAM_OUTPUT, "output", STREAM_KIND_NOTICE)                            \
    X (STREAM_KILL, "kill", STREAM_KIND_NOTICE)

#endif /* CAIRN_STREAMNAMES_H */
