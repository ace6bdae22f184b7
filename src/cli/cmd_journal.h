/* cmd_journal.h - what the journal-reading subcommands of `cairn` share
 * (jobs in cmd_jobs.c, with its fields in cmd_jobs_view.c and its -o
 * formats in cmd_jobs_format.c; show in cmd_show.c; eventlog in
 * cmd_eventlog.c; ranks in cmd_journal.c; procs in cmd_procs.c; verify,
 * dump, stats, purge in cmd_verify.c; the helpers in cmd_jutil.c, which
 * call none of the others).
 *
 * These commands read the journal directly, never through cairnd: they
 * work while cairnd runs (LMDB readers never block its writer, and every
 * read here is one short read transaction) and on a copied or stopped
 * state dir alike. Failures are printed with cli_error() naming the state
 * dir, and the command returns 1.
 *
 * But for a user who may not read the journal (a root cairnd's state dir
 * is 0700), jobs, show, eventlog and ranks ask cairnd instead, through the
 * socket cli_public_socket() finds (cmd_jremote.c): jcli_open_view()
 * decides, and jcli_read(), jcli_events(), jcli_load() and jcli_job_info()
 * read from either. cairnd answers them from the same journal.
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
#include "core/rv1.h"
#include "journal/journal.h"

struct table; /* aligned columns, below */

/* An open journal and where it lives; or, for a view read through cairnd
 * (jcli_open_view), the connection. */
struct jcli {
    struct cli *cli;
    char *statedir; /* resolved, malloc'd; NULL through cairnd */
    struct journal *j;
    struct client *c; /* through cairnd: connected to sockpath */
    char *sockpath;
    uint64_t last_id; /* the job of the last job-events answer, */
    bool last_active; /* and whether it was active then */
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

/* For the views (jobs, show, eventlog, ranks): open the journal read-only
 * as jcli_open() does; but when that fails with EACCES, or ENOENT for a
 * state dir nobody named, and cli_public_socket() names a socket, connect
 * to cairnd there instead (jc->c). Returns 0, or -1 after printing why:
 * jcli_open()'s message, or "cairn NAME: cannot read the journal of DIR
 * (why) nor connect to cairnd at SOCKET: why". Free with jcli_close(). */
int jcli_open_view (struct jcli *jc, struct cli *cli);

/* journal_read_job() on either: through cairnd, job-events requests (a
 * MiB or so each) until the events committed when asked are read; a line
 * cairnd could not send (not UTF-8) comes as "". Returns 0, or -1 with
 * errno and err: ENOENT (no such job), EPERM (another user's job: err
 * is cairnd's "job-events: permission denied: job N belongs to uid U"),
 * EPROTO (a malformed answer), the callback's errno, a read or connection
 * error. */
int jcli_read (struct jcli *jc,
               uint64_t id,
               uint32_t from,
               journal_event_f cb,
               void *arg,
               struct cairn_error *err);

/* Print why jcli_read() failed (errno and err as it left them):
 * jcli_no_job() for ENOENT, else "cairn NAME: DIR: job ID: why" (through
 * cairnd, its message alone). */
void jcli_read_error (struct jcli *jc, uint64_t id, struct cairn_error *err);

/* journal_job_info() on either; through cairnd only for the job that
 * jcli_read() read last (else ENOENT), and only its active flag. */
int jcli_job_info (struct jcli *jc, uint64_t id, struct journal_jobinfo *info);

/* `cairn jobs` through cairnd (jc->c): the "jobs" request for the active
 * jobs, all with all, or the nids ids, each answered as the object of
 * jcli_job_summary() (its keys in that order; another user's job has its
 * name as command and "" as cwd). Ids cairnd does not know are appended
 * to *missing (an array, new reference) and how many finished jobs cairnd
 * left out to *truncated. Returns an array (new reference), or NULL after
 * printing why. */
json_t *jcli_remote_jobs (struct jcli *jc,
                          bool all,
                          const uint64_t *ids,
                          int nids,
                          double now,
                          json_t **missing,
                          int64_t *truncated);

/* The jobs of the journal in id order, all or only the active index's, as
 * [{"id", "active", "nevents", "t-end"}] (new reference; never printed, so
 * its keys are not the CLI's JSON: cmd_verify.c reads "t-end"), read in one
 * short transaction (each job is then read on its own). Returns NULL after
 * printing why. jcli_list_id() is the id of element i; jcli_list_add()
 * appends info's element to the array arg (0, or -1 with errno ENOMEM). */
json_t *jcli_job_list (struct jcli *jc, bool active_only);
uint64_t jcli_list_id (const json_t *a, size_t i);
int jcli_list_add (const struct journal_jobinfo *info, void *arg);

/* Print "cairn NAME: no job ID (F58) in the journal of DIR" ("known to
 * cairnd at SOCKET" through cairnd). */
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

/* Parse the options of a command whose only own one is --json (usage
 * errors exit); optind is then at its first operand. Returns the flag. */
bool jcli_json_option (struct cli *cli, int argc, char **argv);

/* The arguments of a command that takes [--json] JOBID (ranks, show):
 * parse them (usage errors exit), open the journal (or cairnd,
 * jcli_open_view) and load the job.
 * Returns the job (and *events, *json, *id), or NULL after printing why;
 * the caller closes jc and frees job and *events either way. */
struct job *jcli_one_job (struct jcli *jc,
                          struct cli *cli,
                          int argc,
                          char **argv,
                          bool *json,
                          uint64_t *id,
                          json_t **events);

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

/* A duration for people: "4.2s", "3m07s", "2h05m", "3d04h"; "-" when
 * negative or not finite. */
void jcli_duration (double seconds, char *buf, size_t len);

/* An epoch time for people, local: "2026-05-01 10:00:00.123 +0200". */
void jcli_time (double t, char *buf, size_t len);

/* The user name of uid from the user database, or the uid in decimal
 * when it has none. */
void jcli_username (uint32_t uid, char *buf, size_t len);

/* A command (an array of strings) as a shell would read it: words joined
 * by spaces, single-quoted when they hold anything but letters, digits and
 * @%+=:,./_- ("sh -c 'exit 3'"). Returns a malloc'd string ("" for no
 * command), or NULL with errno ENOMEM. */
char *jcli_command (const json_t *argv);

/* R of the job's accept event (the first of events), decoded; NULL when
 * there is none or it does not decode. Caller destroys. */
struct rv1 *jcli_rv1 (const json_t *events);

/* The hosts of ranks in rank order, each rank's from R's nodelist, as RFC
 * 29 hostlist text ("node[0-3]"; "" for no ranks); with unique, a host
 * comes once. Returns a malloc'd string, or NULL with errno ENOENT (a rank
 * not in r) or ENOMEM. */
char *jcli_hosts (const struct rv1 *r, const struct idset *ranks, bool unique);

/* "F58" text of id (UTF-8 "ƒ" prefix). */
void jcli_f58 (uint64_t id, char *buf, size_t len);

/* Describe a wait status like the shell would think of it: "exit 3",
 * "killed by SIGKILL"; "unknown" when negative. */
void jcli_status (int status, char *buf, size_t len);

/* The exit code a shell would give for a wait status: the exit status,
 * 128+N for signal N, 1 otherwise; -1 when status is negative (unknown). */
int jcli_exit_code (int status);

/* ---- the fields of a job (cmd_jobs_view.c) ---- */

/* The keys of jcli_job_summary()'s object, in its order, NULL-terminated:
 * the fields of `cairn jobs --json` and of -o FORMAT. */
extern const char *const jcli_summary_keys[];

/* Job id summed up from its events and their fold (job NULL: they do not
 * fold, the state is "invalid"), at time now, as a new object with the
 * keys of jcli_summary_keys (cairn(1), jobs). active is the journal
 * record's flag. Returns NULL with errno ENOMEM. */
json_t *jcli_job_summary (uint64_t id,
                          const json_t *events,
                          const struct job *job,
                          bool active,
                          double now);

/* ---- ranks (cmd_journal.c; `cairn show` and procs use them too) ---- */

/* Where p runs or ran: NULL when on cairnd's own host; else (multinode:
 * job_proc_node() >= 0) the host of the node that runs it as that node
 * named itself (proc-spawn's "host"), or before any such report its rank's
 * host in r, or "?" (r NULL or without a nodelist). Points into job or r. */
const char *jcli_proc_host (const struct job *job,
                            const struct job_proc *p,
                            const struct rv1 *r);

/* Rank's object of `cairn ranks --json`: {"rank", "host", "prolog",
 * "shell", "epilog", "drained", "drain_reason", "released"}, each process
 * {"execid", "state", "pid", "timed_out", "host", "status"?, "note"?}
 * with "host" as jcli_proc_host() says (null: here). r (may be NULL)
 * gives the hosts. New reference, or NULL (ENOMEM). */
json_t *jcli_rank_json (const struct job *job,
                        const json_t *events,
                        const struct rv1 *r,
                        uint32_t rank);

/* Whether the rank tables of job have a NODE column: the job ran under
 * a multinode config (its accept's snapshot), so some of its ranks may
 * have run on other nodes. One-host jobs' tables are as they always were.
 */
bool jcli_rank_has_node (const struct job *job);

/* A table for jcli_rank_row(): RANK HOST [NODE] PROLOG SHELL EPILOG
 * DRAINED RELEASED [NOTE] (NODE when jcli_rank_has_node(), NOTE with
 * detail). NULL with errno ENOMEM. */
struct table *jcli_rank_table (const struct job *job, bool detail);

/* Add rank's row to t (made by jcli_rank_table() with the same detail):
 * RANK HOST [NODE] PROLOG SHELL EPILOG DRAINED RELEASED, then with detail
 * each process's shim pid and a NOTE column (the drain's reason), as
 * `cairn ranks` shows them. NODE is where the rank's processes ran: the
 * node's host (jcli_proc_host), "local" for cairnd's own, "-" if none
 * was started. Returns 0, or -1 with errno ENOMEM. */
int jcli_rank_row (struct table *t,
                   const struct job *job,
                   const json_t *events,
                   const struct rv1 *r,
                   uint32_t rank,
                   bool detail);

/* The hosts of a drain event's context: its "hosts" when it has them, else
 * its ranks' hosts from r. malloc'd ("" when unknown), NULL on ENOMEM. */
char *jcli_drain_hosts (const json_t *ctx, const struct rv1 *r);

/* ---- -o FORMAT (cmd_jobs_format.c) ---- */

/* A format like `flux jobs -o`: text with {field} placeholders, each
 * optionally {field:WIDTH}, {field:<WIDTH} (left-aligned, the default) or
 * {field:>WIDTH}, and .MAX to cut the value to MAX characters
 * ({command:<20.20}); {{ and }} are literal braces. */
struct jfmt;

/* Parse text; field names must be among keys (NULL-terminated). Returns the
 * format (free with jfmt_destroy), or NULL with errno EINVAL and the reason
 * in err ("unknown field 'foo'", "unmatched '{'"), or ENOMEM. */
struct jfmt *jfmt_create (const char *text,
                          const char *const *keys,
                          struct cairn_error *err);
void jfmt_destroy (struct jfmt *f);

/* Print the header (each field's name in capitals, with its width) or
 * o's line: strings as they are, numbers in decimal, null as nothing. */
void jfmt_print_header (const struct jfmt *f, FILE *out);
void jfmt_print (const struct jfmt *f, const json_t *o, FILE *out);

/* Aligned columns for people. Cells are copied. The last column is not
 * padded. */
struct table;
struct table *table_create (int ncols, const char *const *headers);
void table_destroy (struct table *t);
/* Add a row of ncols strings (NULL or "" prints "-"; control characters
 * print as '?', keeping a row on one line). Returns 0 or -1 ENOMEM. */
int table_add (struct table *t, ...);
/* Cut the last column's cells so that every row fits in width characters
 * (0: no limit), keeping at least 10 of them; a cut cell ends in "…". */
void table_set_width (struct table *t, size_t width);
/* Print the header row or not (by default it is). */
void table_set_header (struct table *t, bool header);
void table_print (const struct table *t, FILE *f);

/* The display width of UTF-8 text (one column per character), and the
 * byte length of its first n characters. */
size_t jcli_width (const char *s);
size_t jcli_prefix (const char *s, size_t n);

/* Print o as one compact JSON line on stdout (steals o). Returns 0, or -1
 * (o NULL: out of memory, printed). */
int jcli_print_json (json_t *o);

#endif /* CAIRN_CLI_CMD_JOURNAL_H */
