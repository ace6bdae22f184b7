/* service_views.h - the read-only views of cairnd's jobs for the users who
 * cannot read its journal (service_views.c; cairn-protocol(7), "jobs" and
 * "job-events"). service.c's handlers table says who may send them.
 */
#ifndef CAIRN_EXEC_SERVICE_VIEWS_H
#define CAIRN_EXEC_SERVICE_VIEWS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct cairnd;
struct conn;

/* jobs {all?, ids?}: a summary of each job, what `cairn jobs` prints.
 * Everyone may ask; a job's command and working directory go only to its
 * owner, root and cairnd's own uid (the others get its name). Answers
 * {"jobs": [...]} with "missing" (ids) or "truncated" (all), or EPROTO,
 * EINVAL, ENOMEM, or the errno of a journal read. */
void req_jobs (struct cairnd *d,
               struct conn *c,
               int64_t matchtag,
               json_t *payload);

/* job-events {id, from?}: the job's events as journaled, from seq `from`
 * on, about a MiB at a time. For the owner, root and cairnd's uid only
 * (checked before the call). Answers {"id", "from", "events", "nevents",
 * "active"}, or EPROTO, ENOENT, ENOMEM, or the errno of a journal read. */
void req_job_events (struct cairnd *d,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload);

/* A jobs request's summaries are made a slice at a time, from an idle
 * watcher (service_views.c). c went away: its requests are dropped. */
void views_conn_gone (struct cairnd *d, struct conn *c);
/* The jobs requests still being answered (stats' "views-waiting"). */
size_t views_pending (const struct cairnd *d);
/* At the end: drop them all, unanswered. */
void views_destroy (struct cairnd *d);

#endif /* CAIRN_EXEC_SERVICE_VIEWS_H */
