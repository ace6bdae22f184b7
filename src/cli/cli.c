/* cli.c - what the subcommands of `cairn` share (cli.h): their messages
 * and usage, the state directory and the config file, the connection to
 * cairnd, job ids. cairn.c, the entry, only dispatches; each subcommand
 * calls down here, and nothing here knows any subcommand.
 */
#include <errno.h>
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

const char cli_common_options_help[] =
    "      --statedir DIR  cairnd's state directory (default: "
    "$CAIRN_STATEDIR,\n"
    "                      the config file's statedir, " STATEDIR_SYSTEM
    " for root,\n"
    "                      $XDG_STATE_HOME/cairn, ~/.local/state/cairn)\n"
    "  -c, --config FILE   take the state directory from cairnd's config "
    "file\n"
    "  -h, --help          show this help\n";

static void usage_cmd (FILE *f, const struct cli_command *cmd)
{
    fprintf (f, "Usage: cairn %s %s\n\n%s\n\nOptions:\n%s%s", cmd->name,
             cmd->usage, cmd->description, cli_common_options_help,
             cmd->options ? cmd->options : "");
}

/* The running subcommand's name, for cli_error(): set once, before the
 * subcommand runs, so that helpers with no struct cli at hand (the journal
 * readers, the demo) name it too. NULL before dispatch. */
static const char *running_cmd;

void cli_set_command (struct cli *cli, const struct cli_command *cmd)
{
    cli->cmd = cmd;
    running_cmd = cmd->name;
}

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
