/* commands.h - the subcommands of `cairn`, one struct cli_command each
 * (cli.h says how to write one): what cairn.c's table lists. Each is
 * defined in its cmd_*.c, which includes this header so that the compiler
 * holds the definition to its declaration.
 */
#ifndef CAIRN_CLI_COMMANDS_H
#define CAIRN_CLI_COMMANDS_H

#include "cli/cli.h"

/* through cairnd (cmd_run.c, cmd_ctl.c, cmd_drain.c, cmd_demo.c) */
extern const struct cli_command cli_cmd_run;
extern const struct cli_command cli_cmd_attach;
extern const struct cli_command cli_cmd_cancel;
extern const struct cli_command cli_cmd_kill;
extern const struct cli_command cli_cmd_post;
extern const struct cli_command cli_cmd_drain;
extern const struct cli_command cli_cmd_undrain;
extern const struct cli_command cli_cmd_list;
extern const struct cli_command cli_cmd_demo;

/* reading the journal (cmd_journal.h) */
extern const struct cli_command cli_cmd_jobs;
extern const struct cli_command cli_cmd_show;
extern const struct cli_command cli_cmd_eventlog;
extern const struct cli_command cli_cmd_ranks;
extern const struct cli_command cli_cmd_procs;
extern const struct cli_command cli_cmd_verify;
extern const struct cli_command cli_cmd_dump;
extern const struct cli_command cli_cmd_export;
extern const struct cli_command cli_cmd_stats;
extern const struct cli_command cli_cmd_purge;

#endif /* CAIRN_CLI_COMMANDS_H */
