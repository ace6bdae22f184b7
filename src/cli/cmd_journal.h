/* cmd_journal.h - what the journal-reading subcommands of `cairn` share
 * (jobs, eventlog, ranks, procs in cmd_journal.c; verify, dump, stats,
 * purge in cmd_verify.c; the helpers in cmd_jutil.c).
 *
 * These commands read the journal directly, never through cairnd: they
 * work while cairnd runs (LMDB readers never block its writer, and every
 * read here is one short read transaction) and on a copied or stopped
 * state dir alike. Failures are printed with cli_error() naming the state
 * dir, and the command returns 1.
 */
#ifndef CAIRN_CLI_CMD_JOURNAL_H
#define CAIRN_CLI_CMD_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "cli/cli.h"
#include "core/idset.h"
#include "core/job.h"
#include "journal/journal.h"

extern const struct cli_command cli_cmd_jobs;
extern const struct cli_command cli_cmd_eventlog;
extern const struct cli_command cli_cmd_ranks;
extern const struct cli_command cli_cmd_procs;
extern const struct cli_command cli_cmd_verify;
extern const struct cli_command cli_cmd_dump;
extern const struct cli_command cli_cmd_export;
extern const struct cli_command cli_cmd_stats;
extern const struct cli_command cli_cmd_purge;

/* An open journal and where it lives. */
struct jcli {
    struct cli *cli;
    char *statedir; /* resolved, malloc'd */
    struct journal *j;
};

/* Resolve the state dir and open its journal, read-only unless writable
 * (purge). Never creates anything. Returns 0, or -1 after printing why
 * (NAME: the subcommand's, as cli_error() prints it):
 *   "cairn NAME: state dir DIR: <strerror>"         (missing, unreadable)
 *   "cairn NAME: no journal in DIR (is this a cairn state dir?)"
 *   "cairn NAME: journal at DIR/journal has format version N; ..." (EPROTO)
 *   "cairn NAME: journal at DIR/journal: Permission denied" ...
 * Free with jcli_close(). */
int jcli_open (struct jcli *jc, struct cli *cli, bool writable);
void jcli_close (struct jcli *jc);

/* The jobs of the journal in id order, all or only the active index's, as
 * [{"id", "active", "nevents", "t-end"}] (new reference), read in one
 * short transaction (each job is then read on its own). Returns NULL after
 * printing why. jcli_list_id() is the id of element i; jcli_list_add()
 * appends info's element to the array arg (0, or -1 with errno ENOMEM). */
json_t *jcli_job_list (struct jcli *jc, bool active_only);
uint64_t jcli_list_id (const json_t *a, size_t i);
int jcli_list_add (const struct journal_jobinfo *info, void *arg);

/* Print "cairn NAME: no job ID (F58) in the journal of DIR". */
void jcli_no_job (struct jcli *jc, uint64_t id);

/* Job id's events from seq `from` on, as an array of {"seq": N, "event":
 * ENTRY} (new reference). A line that is not a valid RFC 18 entry becomes
 * {"seq": N, "event": "<the line>"}, and *bad (if non-NULL) is set.
 * Returns NULL after printing why: unknown job (jcli_no_job) or a read
 * error. */
json_t *jcli_events (struct jcli *jc, uint64_t id, uint32_t from, bool *bad);

/* Fold the events (as jcli_events returns them) into a new job. Returns
 * it (caller destroys), or NULL with "seq N: why" in err. */
struct job *
jcli_fold (uint64_t id, const json_t *events, struct cairn_error *err);

/* Read and fold job id. Returns the job, or NULL after printing why
 * ("cairn NAME: job ID in DIR: seq N: why (run cairn verify)"). If
 * events is non-NULL it gets the events (new reference). */
struct job *jcli_load (struct jcli *jc, uint64_t id, json_t **events);

/* The name and timestamp of the last event of events ("" / 0 if none). */
const char *jcli_last_event (const json_t *events, double *t);

/* Parse the JOBID operands argv[0..argc) into a malloc'd array. Returns
 * the count (0 with *ids NULL if argc is 0), or -1 after printing why. */
int jcli_parse_ids (struct cli *cli, int argc, char **argv, uint64_t **ids);

/* Wall clock, epoch seconds. */
double jcli_now (void);

/* A short age: "0.4s", "42s", "17m", "5h", "3d". */
void jcli_age (double seconds, char *buf, size_t len);

/* "F58" text of id (UTF-8 "ƒ" prefix). */
void jcli_f58 (uint64_t id, char *buf, size_t len);

/* The RFC 22 text of s, or "-" when empty (malloc'd; NULL = ENOMEM). */
char *jcli_ranks (const struct idset *s);

/* Describe a wait status like the shell would think of it: "exit 3",
 * "signal 9 (SIGKILL)". */
void jcli_status (int status, char *buf, size_t len);

/* Aligned columns for people. Cells are copied. The last column is not
 * padded. */
struct table;
struct table *table_create (int ncols, const char *const *headers);
void table_destroy (struct table *t);
/* Add a row of ncols strings (NULL prints "-"). Returns 0 or -1 ENOMEM. */
int table_add (struct table *t, ...);
void table_print (const struct table *t, FILE *f);

/* Print o as one compact JSON line on stdout (steals o). Returns 0, or -1
 * (o NULL: out of memory, printed). */
int jcli_print_json (json_t *o);

#endif /* CAIRN_CLI_CMD_JOURNAL_H */
