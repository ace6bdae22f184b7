/* cmd_run_reasons.h - why a job failed, as `cairn run` tells it on stderr.
 *
 * The stream's responses say that a job failed, not why on which rank: a
 * spawn error (chdir, execvp), a lost process, a prolog's exit are in the
 * journal only. After a failed job `cairn run` reads them there (the
 * journal-reading commands' way, cmd_journal.h) and prints one line per
 * cause, identical causes on several ranks on one line:
 *
 *   cairn run: exception prolog (severity 0): prolog failed on rank 2: exit 1
 *   cairn run: shell on ranks 0-1: chdir /nonexistent: No such file ...
 *   cairn run: epilog on rank 3: timed out
 */
#ifndef CAIRN_CLI_CMD_RUN_REASONS_H
#define CAIRN_CLI_CMD_RUN_REASONS_H

#include <stdint.h>

#include "cli/cli.h"

/* The most cause lines printed; the rest are counted in a last line that
 * names `cairn ranks`. */
#define RUN_REASONS_MAX 10

/* Print job id's causes of failure to stderr (cli_error). Prints nothing
 * when the journal cannot be read (a state dir the user may not read):
 * the stream's own lines have said what they could. */
void run_print_reasons (struct cli *cli, uint64_t id);

#endif /* CAIRN_CLI_RUN_REASONS_H */
