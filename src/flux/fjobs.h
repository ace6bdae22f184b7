/* fjobs.h - the module's table of jobs in flight: those with a start
 * request from the job-manager, by id. The table owns its jobs: a job
 * removed, or left at the table's end, is destroyed. */
#ifndef CAIRN_FLUX_FJOBS_H
#define CAIRN_FLUX_FJOBS_H

#include <stddef.h>
#include <flux/core.h>

struct fjob;
struct fjobs;

/* An empty table, or NULL with errno ENOMEM. */
struct fjobs *fjobs_create (void);

/* Destroy every job, then the table. NULL is fine. */
void fjobs_destroy (struct fjobs *js);

/* Take job in (its id not in the table: see fjobs_find). Returns 0, or -1
 * with errno ENOMEM (the job is not taken). */
int fjobs_add (struct fjobs *js, struct fjob *job);

/* The job of id, or NULL. */
struct fjob *fjobs_find (const struct fjobs *js, flux_jobid_t id);

/* Forget job and destroy it (a job not in the table is destroyed too). */
void fjobs_remove (struct fjobs *js, struct fjob *job);

/* How many, and the i-th (0 <= i < count; the order changes with each
 * removal): for a walk that adds and removes nothing. */
size_t fjobs_count (const struct fjobs *js);
struct fjob *fjobs_nth (const struct fjobs *js, size_t i);

#endif /* CAIRN_FLUX_FJOBS_H */
