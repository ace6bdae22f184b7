/* jobwatch.h - following the responses to one `start` request: what
 * `cairn run` and `cairn attach` (cmd_run.c) and the demo's jobs
 * (cmd_demo_jobs.c) learn of a job from its stream (cairn-protocol(7)).
 *
 * Each response is decoded once (jobwatch_decode: its type becomes a
 * struct stream_resp), then taken in (jobwatch_update) or described
 * (jobwatch_describe); the job's exit code comes from what was taken in
 * (jobwatch_exit_code). Nothing here reads or writes a socket.
 */
#ifndef CAIRN_CLI_JOBWATCH_H
#define CAIRN_CLI_JOBWATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/streamtype.h"

/* What the responses to one `start` request said so far. */
struct jobwatch {
    uint64_t id;
    int64_t matchtag;
    bool events;         /* the stream asked for "events" (set it after
                            jobwatch_init): then nresp counts start and the
                            progress events too */
    int nresp;           /* release/exception/finish responses seen: the
                            `since` of a reattach (start is not counted,
                            nor accepted and reattached) */
    bool accepted;       /* cairnd has the job: an `accepted` (events
                            only) or a `reattached` response came */
    bool started;        /* a `start` response came */
    bool finished;       /* a `finish` response came */
    int status;          /* its wait status */
    bool fatal;          /* a severity-0 exception came */
    char fatal_type[32]; /* the type of the first one */
    bool final;          /* the final release came: the stream is over */
    json_t *releases;    /* the ranks of each release, in order (strings) */
    json_t *exceptions;  /* the data of each exception, in order */
};

/* Set up jw for job id (zeroes it). Returns 0, or -1 with errno = ENOMEM.
 * Free with jobwatch_clear(). */
int jobwatch_init (struct jobwatch *jw, uint64_t id, int64_t matchtag);
void jobwatch_clear (struct jobwatch *jw);

/* One response payload of a `start` stream, decoded once: what follows
 * switches on sr and never compares the name again. */
struct jobwatch_resp {
    struct stream_resp sr; /* its type (stream_resp_of) */
    const char *name;      /* the type as sent, for printing (borrowed) */
    json_t *data;          /* its data object (borrowed), or NULL */
};

/* Decode payload into r. Returns 0, or -1 with errno = EPROTO and a
 * message in err when it has no "type" string or its "data" is not an
 * object. r borrows from payload. */
int jobwatch_decode (const json_t *payload,
                     struct jobwatch_resp *r,
                     struct cairn_error *err);

/* Take one decoded response of the job's stream into jw. Returns 0, or -1
 * with errno = EPROTO and a message in err when a response of the exec
 * protocol lacks what its type carries (jw is unchanged then). */
int jobwatch_update (struct jobwatch *jw,
                     const struct jobwatch_resp *r,
                     struct cairn_error *err);

/* Describe a decoded response in one human line (no newline), e.g.
 * "exception prolog (severity 2): note" or "finish status 768 (exit 3)". */
void jobwatch_describe (const struct jobwatch_resp *r, char *buf, size_t len);

/* The exit code a shell would give the job: WEXITSTATUS of the finish
 * status, 128 + signal for a signaled one; 1 when the job never finished,
 * or got a fatal exception and its status says success. */
int jobwatch_exit_code (const struct jobwatch *jw);

#endif /* CAIRN_CLI_JOBWATCH_H */
