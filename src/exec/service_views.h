/* service_views.h - the read-only views of cairnd's jobs for the users who
 * cannot read its journal (service_views.c; cairn-protocol(7), "jobs" and
 * "job-events"). The service (service.h) dispatches them; its handlers
 * table says who may send them.
 *
 * Lent the loop (the idle watcher that makes a jobs request's summaries a
 * slice at a time), the journal (read only, in short read transactions),
 * the jobs in memory (an active job's state and ranks) and whom cairnd
 * trusts (who may see a job's command); it owns the jobs requests being
 * answered, and nothing else.
 */
#ifndef CAIRN_EXEC_SERVICE_VIEWS_H
#define CAIRN_EXEC_SERVICE_VIEWS_H

#include <ev.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct conn;     /* server/server.h */
struct journal;  /* journal/journal.h */
struct jobtable; /* exec/jobtable.h */
struct trust;    /* exec/trust.h */
struct views;

/* No request yet; its idle watcher runs on loop while one waits. NULL
 * with errno ENOMEM. */
struct views *views_create (struct ev_loop *loop,
                            struct journal *journal,
                            struct jobtable *jobs,
                            const struct trust *trust);

/* At the end: the requests still waiting are dropped, unanswered, and the
 * watcher stops. NULL is fine; errno is kept. */
void views_destroy (struct views *v);

/* jobs {all?, ids?}: a summary of each job, what `cairn jobs` prints.
 * Everyone may ask; a job's command and working directory go only to its
 * owner, root and cairnd's own uid (the others get its name). Answers
 * {"jobs": [...]} with "missing" (ids) or "truncated" (all), or EPROTO,
 * EINVAL, EAGAIN (a user with VIEWS_USER_MAX requests waiting), ENOMEM,
 * or the errno of a journal read. */
void views_req_jobs (struct views *v,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);

/* job-events {id, from?}: the job's events as journaled, from seq `from`
 * on, about a MiB at a time. For the owner, root and cairnd's uid only
 * (checked before the call). Answers {"id", "from", "events", "nevents",
 * "active"}, or EPROTO, ENOENT, ENOMEM, or the errno of a journal read. */
void views_req_job_events (struct views *v,
                           struct conn *c,
                           int64_t matchtag,
                           json_t *payload);

/* A jobs request's summaries are made a slice at a time, from an idle
 * watcher. c went away: its requests are dropped. */
void views_conn_gone (struct views *v, struct conn *c);

/* The jobs requests still being answered (stats' "views-waiting"). 0 for
 * NULL. */
size_t views_pending (const struct views *v);

#endif /* CAIRN_EXEC_SERVICE_VIEWS_H */
