/* cairn.c - the `cairn` command's entry: the global options and the
 * subcommand table (commands.h); what the subcommands share is cli.c's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

/* The subcommands, in the order `cairn --help` lists them. One a line, so
 * that adding one is a one-line change. */
// clang-format off
static const struct cli_command *const commands[] = {
    &cli_cmd_run,
    &cli_cmd_attach,
    &cli_cmd_cancel,
    &cli_cmd_kill,
    &cli_cmd_post,
    &cli_cmd_drain,
    &cli_cmd_undrain,
    &cli_cmd_list,
    &cli_cmd_demo,
    &cli_cmd_jobs,
    &cli_cmd_show,
    &cli_cmd_eventlog,
    &cli_cmd_ranks,
    &cli_cmd_procs,
    &cli_cmd_verify,
    &cli_cmd_dump,
    &cli_cmd_export,
    &cli_cmd_stats,
    &cli_cmd_purge,
};
// clang-format on
#define NCOMMANDS (sizeof (commands) / sizeof (commands[0]))

static void usage_main (FILE *f)
{
    fprintf (f, "Usage: cairn [--statedir DIR] [-c CONFIG] COMMAND [ARGS]\n"
                "\n"
                "Run jobs through cairnd, the crash-safe job execution "
                "service.\n"
                "\n"
                "Commands:\n");
    int w = 0;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        int n = strlen (commands[i]->name);
        w = n > w ? n : w;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf (f, "  %-*s  %s\n", w, commands[i]->name,
                 commands[i]->description);
    fprintf (f, "\nOptions:\n%s", cli_common_options_help);
    fprintf (f, "      --version       print the version\n"
                "\n"
                "Run 'cairn COMMAND --help' for a command's options.\n");
}

static const struct cli_command *command_find (const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp (commands[i]->name, name) == 0)
            return commands[i];
    }
    return NULL;
}

int main (int argc, char **argv)
{
    enum { OPT_VERSION = 0x2000 };
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        {"version", no_argument, NULL, OPT_VERSION},
        {0},
    };
    struct cli cli = {.prog = "cairn"};
    int opt;

    /* '+': stop at the subcommand, whose options are its own. */
    while ((opt = getopt_long (argc, argv, "+" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        switch (opt) {
        case CLI_OPT_STATEDIR:
            cli.statedir_opt = optarg;
            break;
        case 'c':
            cli.config_path = optarg;
            break;
        case 'h':
            usage_main (stdout);
            return 0;
        case OPT_VERSION:
            printf ("cairn %s\n", CAIRN_VERSION);
            return 0;
        default:
            usage_main (stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage_main (stderr);
        return 2;
    }
    const struct cli_command *cmd = command_find (argv[optind]);
    if (!cmd) {
        fprintf (stderr, "cairn: unknown command '%s'\n\n", argv[optind]);
        usage_main (stderr);
        return 2;
    }
    cli_set_command (&cli, cmd);
    /* A job's output may be piped: write each progress line as it comes. */
    setvbuf (stdout, NULL, _IOLBF, 0);
    argc -= optind;
    argv += optind;
    optind = 0; /* glibc: full reinitialization for the subcommand */
    return cli.cmd->fn (&cli, argc, argv);
}
