/* cairn.c - the `cairn` command: global options, the subcommand table and
 * the helpers the subcommands share (see cli.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/config.h"
#include "core/jobid.h"
#include "core/signame.h"
#include "util/statedir.h"

#include "cli/cmd_journal.h" /* the journal-reading subcommands */

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

static const char common_options_help[] =
    "      --statedir DIR  cairnd's state directory (default: "
    "$CAIRN_STATEDIR,\n"
    "                      the config file's statedir, " STATEDIR_SYSTEM
    " for root,\n"
    "                      $XDG_STATE_HOME/cairn, ~/.local/state/cairn)\n"
    "  -c, --config FILE   take the state directory from cairnd's config "
    "file\n"
    "  -h, --help          show this help\n";

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
    fprintf (f, "\nOptions:\n%s", common_options_help);
    fprintf (f, "      --version       print the version\n"
                "\n"
                "Run 'cairn COMMAND --help' for a command's options.\n");
}

static void usage_cmd (FILE *f, const struct cli_command *cmd)
{
    fprintf (f, "Usage: cairn %s %s\n\n%s\n\nOptions:\n%s%s", cmd->name,
             cmd->usage, cmd->description, common_options_help,
             cmd->options ? cmd->options : "");
}

/* The running subcommand's name, for cli_error(): set once, before the
 * subcommand runs, so that helpers with no struct cli at hand (the journal
 * readers, the demo) name it too. NULL before dispatch. */
static const char *running_cmd;

static bool quiet;

bool cli_set_quiet (bool q)
{
    bool was = quiet;
    quiet = q;
    return was;
}

void cli_error (const char *fmt, ...)
{
    va_list ap;

    if (quiet)
        return;
    fflush (stdout); /* keep the order of stdout and stderr lines */
    if (running_cmd)
        fprintf (stderr, "cairn %s: ", running_cmd);
    else
        fputs ("cairn: ", stderr);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
}

void cli_usage_error (struct cli *cli, const char *fmt, ...)
{
    va_list ap;

    fflush (stdout);
    fprintf (stderr, "cairn %s: ", cli->cmd->name);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\nUsage: cairn %s %s\nTry 'cairn %s --help'.\n",
             cli->cmd->name, cli->cmd->usage, cli->cmd->name);
    exit (2);
}

void cli_common_option (struct cli *cli, int opt, const char *arg)
{
    switch (opt) {
    case CLI_OPT_STATEDIR:
        cli->statedir_opt = arg;
        return;
    case 'c':
        cli->config_path = arg;
        return;
    case 'h':
        usage_cmd (stdout, cli->cmd);
        exit (0);
    default: /* getopt already said what was wrong */
        fprintf (stderr, "Usage: cairn %s %s\nTry 'cairn %s --help'.\n",
                 cli->cmd->name, cli->cmd->usage, cli->cmd->name);
        exit (2);
    }
}

/* The "statedir" and "public-socket" of the -c file, or NULL (malloc'd
 * into *dir and *sock; sock may be NULL). The daemon validates the whole
 * file; a client reads it strictly too, so that a typo is reported the
 * same way wherever the file is used. */
static int config_read (const char *path, char **dir, char **sock)
{
    struct cairn_config cfg;
    struct cairn_error err = {{0}};
    json_error_t jerr;
    json_t *o;

    *dir = NULL;
    if (sock)
        *sock = NULL;
    if (!(o = json_load_file (path, 0, &jerr))) {
        cli_error ("%s: %s", path, jerr.text);
        return -1;
    }
    config_init (&cfg);
    if (config_parse (&cfg, o, &err) < 0) {
        cli_error ("%s: %s", path, err.text);
        json_decref (o);
        return -1;
    }
    json_decref (o);
    if ((cfg.statedir && !(*dir = strdup (cfg.statedir))) ||
        (sock && cfg.public_socket && !(*sock = strdup (cfg.public_socket)))) {
        cli_error ("%s: out of memory", path);
        free (*dir);
        *dir = NULL;
        config_free (&cfg);
        return -1;
    }
    config_free (&cfg);
    return 0;
}

char *cli_statedir (struct cli *cli)
{
    struct cairn_error err = {{0}};
    char *cfg_dir = NULL;
    char *dir;

    if (cli->config_path && config_read (cli->config_path, &cfg_dir, NULL) < 0)
        return NULL;
    if (!(dir = statedir_resolve (cli->statedir_opt, cfg_dir, &err)))
        cli_error ("%s", err.text);
    free (cfg_dir);
    return dir;
}

static bool is_socket (const char *path)
{
    struct stat sb;
    return stat (path, &sb) == 0 && S_ISSOCK (sb.st_mode);
}

char *cli_public_socket (struct cli *cli, int why)
{
    const char *env = getenv ("CAIRN_SOCKET");
    const char *envdir = getenv ("CAIRN_STATEDIR");
    char *dir = NULL, *sock = NULL;
    int e = errno;

    if (cli->config_path && config_read (cli->config_path, &dir, &sock) < 0)
        goto none;
    /* a state dir that is not there is a reason to look elsewhere only
     * when nobody named it: a typo in --statedir is reported as one */
    if (why != EACCES &&
        (why != ENOENT || cli->statedir_opt || (envdir && *envdir) || dir))
        goto none;
    free (dir);
    if (env && *env) {
        free (sock);
        return strdup (env);
    }
    if (sock)
        return sock;
    if (is_socket (CAIRN_PUBLIC_SOCKET))
        return strdup (CAIRN_PUBLIC_SOCKET);
none:
    free (dir);
    free (sock);
    errno = e;
    return NULL;
}

static void
connect_error (const char *path, int e, const struct cairn_error *err)
{
    if (e == EPERM && err->text[0]) /* who serves it: say so */
        cli_error ("cannot connect to cairnd: %s", err->text);
    else
        cli_error ("cannot connect to cairnd at %s: %s%s", path, strerror (e),
                   e == ENOENT || e == ECONNREFUSED ? " (is cairnd running?)"
                                                    : "");
}

struct client *
cli_client_connect (struct cli *cli, const char *path, struct cairn_error *err)
{
    bool was = cli_set_quiet (true);
    char *dir = cli_statedir (cli);
    uid_t owner = (uid_t)-1;
    struct stat sb;

    cli_set_quiet (was);
    /* the state dir named (or the default one) says whose cairnd is meant */
    if (dir && stat (dir, &sb) == 0)
        owner = sb.st_uid;
    free (dir);
    return client_connect_as (path, owner, err);
}

struct client *cli_connect (struct cli *cli, char **path_out)
{
    struct client *c = NULL;
    char *dir = NULL, *path = NULL, *pub = NULL;
    struct cairn_error err = {{0}};
    int e;

    if (path_out)
        *path_out = NULL;
    /* $CAIRN_SOCKET: a multi-user cairnd's public socket (cairn.conf(5)
     * public-socket), for users who cannot enter its state dir */
    const char *env = getenv ("CAIRN_SOCKET");
    if (env && *env)
        path = strdup (env);
    else {
        /* no state dir (HOME unset): a public socket may still do */
        bool was = cli_set_quiet (true);
        dir = cli_statedir (cli);
        e = errno;
        cli_set_quiet (was);
        if (!dir && !(pub = cli_public_socket (cli, e == ENOENT ? e : 0))) {
            free (cli_statedir (cli)); /* say why */
            return NULL;
        }
        path = dir ? statedir_socket (dir) : pub;
        free (dir);
        pub = NULL;
    }
    if (!path) {
        cli_error ("%s", strerror (errno));
        return NULL;
    }
    if (!(c = cli_client_connect (cli, path, &err))) {
        e = errno;
        /* the state dir's socket is closed to this user, or there is no
         * cairnd of its own: a root cairnd's public socket */
        if (!(env && *env) && (e == EACCES || e == ENOENT) &&
            (pub = cli_public_socket (cli, e)) && strcmp (pub, path) != 0) {
            free (path);
            path = pub;
            pub = NULL;
            err.text[0] = '\0';
            if (!(c = cli_client_connect (cli, path, &err)))
                e = errno;
        }
        if (!c)
            connect_error (path, e, &err);
    }
    free (pub);
    if (path_out)
        *path_out = path;
    else
        free (path);
    return c;
}

int cli_parse_jobid (struct cli *cli, const char *s, uint64_t *id)
{
    struct cairn_error err = {{0}};

    if (jobid_parse (s, id, &err) < 0) {
        cli_error ("%s", err.text);
        return -1;
    }
    return 0;
}

json_t *cli_rpc (struct cli *cli,
                 struct client *c,
                 const char *topic,
                 const json_t *payload)
{
    struct cairn_error err = {{0}};
    json_t *resp;

    if (!(resp = client_rpc (c, topic, payload, CLI_RPC_TIMEOUT, &err)))
        cli_error ("%s", err.text);
    return resp;
}

double cli_monotime (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_wait_status_str (int status, char *buf, size_t len)
{
    if (WIFEXITED (status))
        snprintf (buf, len, "exit %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status)) {
        const char *name = signame_str (WTERMSIG (status));
        if (name)
            snprintf (buf, len, "killed by %s%s", name,
                      WCOREDUMP (status) ? ", core dumped" : "");
        else
            snprintf (buf, len, "killed by signal %d", WTERMSIG (status));
    } else
        snprintf (buf, len, "status 0x%x", (unsigned)status);
}

/* 2020-01-01T00:00:00Z */
#define JOBID_EPOCH 1577836800LL

int cli_jobid_generate (uint64_t *id)
{
    struct timespec ts;
    uint32_t rnd;

    if (clock_gettime (CLOCK_REALTIME, &ts) < 0)
        return -1;
    /* GRND_NONBLOCK: never wait for the entropy pool at boot; the clock's
     * nanoseconds are random enough for this. */
    if (getrandom (&rnd, sizeof (rnd), GRND_NONBLOCK) != sizeof (rnd))
        rnd = (uint32_t)ts.tv_nsec;
    uint64_t ms = (uint64_t)(ts.tv_sec - JOBID_EPOCH) * 1000 +
                  (uint64_t)ts.tv_nsec / 1000000;
    if (getuid () != 0) {
        /* a user's id (jobid.h): cairnd refuses the others from users.
         * All 20 low bits random: another user who would take this id
         * first, to stall the job, must guess them. */
        *id = JOBID_USER_MIN | (((ms << 20) | (rnd & 0xfffff)) &
                                (JOBID_USER_MAX ^ JOBID_USER_MIN));
        return 0;
    }
    uint64_t low = ((uint64_t)(getpid () & 0x3ff) << 10) | (rnd & 0x3ff);
    *id = (ms << 20) | low;
    return 0;
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
    if (!(cli.cmd = command_find (argv[optind]))) {
        fprintf (stderr, "cairn: unknown command '%s'\n\n", argv[optind]);
        usage_main (stderr);
        return 2;
    }
    running_cmd = cli.cmd->name;
    /* A job's output may be piped: write each progress line as it comes. */
    setvbuf (stdout, NULL, _IOLBF, 0);
    argc -= optind;
    argv += optind;
    optind = 0; /* glibc: full reinitialization for the subcommand */
    return cli.cmd->fn (&cli, argc, argv);
}
