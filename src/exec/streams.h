/* streams.h - the clients that follow jobs: each `start` stream (or
 * reattach) of a job, until the job is forgotten or its connection goes.
 *
 * A stream is on two lists, its job's (je->subs, read by whoever tells the
 * job's streams something) and its connection's, so that a disconnect
 * costs its own streams, not a walk of every job. This room alone adds
 * and frees them; how many ask for output is told to its ops' watch.
 */
#ifndef CAIRN_STREAMS_H
#define CAIRN_STREAMS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn;     /* server/server.h */
struct jobentry; /* exec/jobtable.h: its subs are this room's */
struct connsubs; /* a connection's streams (streams.c) */
struct streams;

/* A client waiting for a job's responses. */
struct sub {
    struct sub *next, **pprev;   /* on je->subs */
    struct sub *cnext, **cpprev; /* on its connection's list */
    struct connsubs *cs;
    struct jobentry *je;
    struct conn *conn;
    int64_t matchtag;
    bool reattached; /* a reattach stream: never gets `start` (RFC 32) */
    bool events;     /* asked for progress events (job_event_is_progress) */
    json_t *sent;    /* asked for output: rank -> {stdout, stderr} file
                        offsets sent (output.c); NULL if not */
};

struct streams_ops {
    /* delta more streams (or fewer, delta < 0) ask for output. */
    void (*watch) (void *arg, int delta);
};

/* No streams yet. NULL with errno ENOMEM. */
struct streams *streams_create (const struct streams_ops *ops, void *arg);

/* Every stream must be gone (with its job or connection). NULL is fine;
 * errno is kept. */
void streams_destroy (struct streams *st);

/* c follows je from now on (request matchtag): a reattach or the job's own
 * start; events: it asked for progress events; sent: its output offsets
 * if it asked for output (taken), or NULL. Out of memory: logged, and the
 * stream is not followed. */
void streams_add (struct streams *st,
                  struct jobentry *je,
                  struct conn *c,
                  int64_t matchtag,
                  bool reattached,
                  bool events,
                  json_t *sent);

/* je is forgotten: its streams end (nothing is sent). */
void streams_drop_job (struct streams *st, struct jobentry *je);

/* c went away: its streams end. */
void streams_conn_gone (struct streams *st, struct conn *c);

/* Does c hold a stream (a job's events it follows)? */
bool streams_conn_busy (const struct streams *st, struct conn *c);

/* Walk the connections that hold streams: *pos starts at 0; each call
 * gives the first of the next connection's streams (walk on by cnext), or
 * NULL at the end. No stream may be added or freed while walking. */
struct sub *streams_next_conn (struct streams *st, size_t *pos);

#endif /* CAIRN_STREAMS_H */
