/* cli.h - what the files of the `cairn` command share.
 *
 * `cairn [--statedir DIR] [-c CONFIG] SUBCOMMAND [ARGS]`: cairn.c parses the
 * global options, finds SUBCOMMAND in its table and calls it. Each
 * subcommand lives in its own src/cli/cmd_*.c (the build globs them).
 *
 * Adding a subcommand "foo":
 *   1. in src/cli/cmd_foo.c write the function and its table entry:
 *
 *        static int cmd_foo (struct cli *cli, int argc, char **argv)
 *        {
 *            static const struct option longopts[] = {
 *                {"bar", required_argument, NULL, 'b'},
 *                CLI_COMMON_LONGOPTS,
 *                {0},
 *            };
 *            int opt;
 *            while ((opt = getopt_long (argc, argv, "b:" CLI_COMMON_SHORTOPTS,
 *                                       longopts, NULL)) != -1) {
 *                switch (opt) {
 *                case 'b': ...; break;
 *                default: cli_common_option (cli, opt, optarg);
 *                }
 *            }
 *            ...                       // argv[optind..] are the operands
 *            return 0;                 // the process's exit code
 *        }
 *        const struct cli_command cli_cmd_foo = {
 *            "foo", cmd_foo, "[--bar X] JOBID", "Do foo to a job.",
 *            "  --bar X   what bar means\n",
 *        };
 *
 *   2. declare `extern const struct cli_command cli_cmd_foo;` below;
 *   3. add `&cli_cmd_foo` to the commands[] table in cairn.c.
 *
 * The function gets argv[0] = the subcommand's name, and getopt's state
 * already reset. cli_common_option() handles --statedir, -c/--config and
 * -h/--help (and getopt's '?' by printing usage and exiting 2), so those
 * options work after the subcommand too. Report failures with cli_error()
 * ("cairn foo: <what>: <why>": it names the subcommand, so the message
 * does not) and return 1; usage errors: cli_usage_error(), which exits 2.
 */
#ifndef CAIRN_CLI_H
#define CAIRN_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/streamtype.h"
#include "client/client.h"

struct cli;

struct cli_command {
    const char *name;
    /* Returns the process's exit code. */
    int (*fn) (struct cli *cli, int argc, char **argv);
    const char *usage;       /* what follows "cairn NAME " */
    const char *description; /* one line, for `cairn --help` */
    const char *options;     /* option descriptions for `cairn NAME --help`
                                (lines ending in '\n'), or NULL */
};

/* The state the global options leave, for the subcommands. */
struct cli {
    const char *prog;              /* "cairn" */
    const char *statedir_opt;      /* --statedir, or NULL */
    const char *config_path;       /* -c, or NULL */
    const struct cli_command *cmd; /* the running subcommand */
};

/* The subcommands (one per cmd_*.c entry). */
extern const struct cli_command cli_cmd_run;
extern const struct cli_command cli_cmd_attach;
extern const struct cli_command cli_cmd_cancel;
extern const struct cli_command cli_cmd_kill;
extern const struct cli_command cli_cmd_post;
extern const struct cli_command cli_cmd_drain;
extern const struct cli_command cli_cmd_undrain;
extern const struct cli_command cli_cmd_list;
extern const struct cli_command cli_cmd_demo;

/* Options every subcommand accepts; put them in its getopt tables. */
enum { CLI_OPT_STATEDIR = 0x1000 };
// clang-format off
#define CLI_COMMON_SHORTOPTS "c:h"
#define CLI_COMMON_LONGOPTS                                                    \
    {"statedir", required_argument, NULL, CLI_OPT_STATEDIR},                   \
    {"config", required_argument, NULL, 'c'},                                  \
    {"help", no_argument, NULL, 'h'}
// clang-format on

/* Handle an option that the subcommand's own switch did not: a common
 * option is stored in cli (or --help prints the subcommand's usage and
 * exits 0); anything else ('?', ':' or an unhandled character) prints a
 * usage hint on stderr and exits 2. */
void cli_common_option (struct cli *cli, int opt, const char *arg);

/* Print "cairn NAME: " fmt "\n" on stderr, NAME the running subcommand's
 * ("cairn: " before one is known). fmt should not name the subcommand or
 * the request's topic again. */
void cli_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* While quiet, cli_error() prints nothing: for reads whose failure is not
 * the command's (cmd_run_reasons.c). Returns what it was before. */
bool cli_set_quiet (bool quiet);

/* Print "cairn NAME: " fmt, then a pointer to --help, on stderr and exit
 * 2. */
void cli_usage_error (struct cli *cli, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));

/* The state directory (statedir_resolve() with --statedir, and with the
 * "statedir" of the -c config file when one was given). Returns a malloc'd
 * path, or NULL with the reason already printed by cli_error(). */
char *cli_statedir (struct cli *cli);

/* Where `cairn` looks for a root cairnd's public socket (cairn.conf(5)
 * public-socket) when nothing else names one: a file in /run itself, not
 * in a directory of its own, so that no directory's mode (such as that of
 * cairnd's run dir, /run/cairn, 0700) can close it to users. */
#ifndef CAIRN_PUBLIC_SOCKET
#define CAIRN_PUBLIC_SOCKET "/run/cairn.sock"
#endif

/* Connect to cairnd: the socket $CAIRN_SOCKET names, else the one in the
 * state directory; when that one cannot be reached because the state
 * directory is closed to this user (EACCES), or is not there (ENOENT) and
 * was not asked for (no --statedir, $CAIRN_STATEDIR or config statedir),
 * the public socket that cli_public_socket() finds, if any. Returns the
 * client (caller closes), or NULL after printing
 * "cairn NAME: cannot connect to cairnd at PATH: <why>[ (is cairnd
 * running?)]".
 * If path_out is non-NULL it gets the path of the socket connected to, or
 * last tried (malloc'd, caller frees), when there is one. */
struct client *cli_connect (struct cli *cli, char **path_out);

/* Connect to the socket at path (client_connect_as), trusting root, this
 * user and the owner of the state directory (cli_statedir(), if it is
 * there): whose cairnd the user named. Prints nothing. Returns the client,
 * or NULL with errno and err (EPERM: served by someone else). */
struct client *
cli_client_connect (struct cli *cli, const char *path, struct cairn_error *err);

/* A public socket for a user for whom the state directory failed with
 * errno why (EACCES or ENOENT, as cli_connect() says): $CAIRN_SOCKET, else
 * the -c file's public-socket, else CAIRN_PUBLIC_SOCKET if there is a
 * socket there. Returns a malloc'd path, or NULL (none, or why says not to
 * look: then errno is left as it was). Prints nothing but the -c file's
 * errors. */
char *cli_public_socket (struct cli *cli, int why);

/* Parse a job id operand (decimal or F58). Returns 0, or -1 after printing
 * "cairn NAME: <why>". */
int cli_parse_jobid (struct cli *cli, const char *s, uint64_t *id);

/* Send one request and wait for its response (at most CLI_RPC_TIMEOUT
 * seconds). Returns the payload (new reference), or NULL after printing
 * "cairn NAME: <why>" (NAME: the subcommand's, not the topic). */
#define CLI_RPC_TIMEOUT 60.
json_t *cli_rpc (struct cli *cli,
                 struct client *c,
                 const char *topic,
                 const json_t *payload);

/* Seconds on the monotonic clock. */
double cli_monotime (void);

/* Following the responses to one `start` request (cmd_run.c; the demo uses
 * it too). */
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

/* Describe a wait status: "exit 3", "killed by SIGKILL". */
void cli_wait_status_str (int status, char *buf, size_t len);

/* The exit code a shell would give the job: WEXITSTATUS of the finish
 * status, 128 + signal for a signaled one; 1 when the job never finished,
 * or got a fatal exception and its status says success. */
int jobwatch_exit_code (const struct jobwatch *jw);

/* A fresh job id: milliseconds since 2020-01-01 in the high bits, the pid
 * and random bits in the low 20; for a caller other than root, in the
 * users' range (JOBID_USER_MIN up, jobid.h), its low 20 bits all random.
 * Returns 0, or -1 with errno set. */
int cli_jobid_generate (uint64_t *id);

#endif /* CAIRN_CLI_H */
