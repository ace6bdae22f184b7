/* cairnd - the crash-safe job execution service. See cairnd(8). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "exec/daemon.h"
#include "util/log.h"
#include "util/statedir.h"

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: cairnd [-c FILE] [--statedir DIR] [-v]\n"
             "       cairnd --check [-c FILE]\n"
             "Run jobs handed over by a resource manager, journaling every\n"
             "step before taking it. Runs in the foreground; SIGTERM stops it\n"
             "and leaves running jobs to the next start.\n"
             "  -c, --config FILE   JSON configuration (see cairn.conf(5))\n"
             "  -s, --statedir DIR  journal, socket and exit records\n"
             "      --check         check the configuration (and the prolog\n"
             "                      and epilog it names), then exit\n"
             "  -v, --verbose       log debug messages\n"
             "  -V, --version       print the version\n"
             "  -h, --help          show this help\n");
}

static int load_config (const char *path,
                        struct cairn_config *cfg,
                        struct cairn_error *err)
{
    json_error_t jerr;
    json_t *o = json_load_file (path, JSON_REJECT_DUPLICATES, &jerr);
    if (!o && jerr.line < 1) /* not a syntax error: jansson's own words */
        return errset (err, EINVAL, "%s", jerr.text);
    if (!o)
        return errset (err, EINVAL, "%s:%d: %s", path, jerr.line, jerr.text);
    int rc = config_parse (cfg, o, err);
    json_decref (o);
    if (rc < 0)
        return errprefix (err, "%s", path);
    return 0;
}

/* A configured prolog or epilog must be there to run: refusing to start is
 * better than failing every job's prolog (a fatal exception each) or
 * skipping every epilog's cleanup. The file may still change later; a
 * missing one then fails at spawn, with the cause in the job's note. */
static int
check_command (const char *key, char *const *argv, struct cairn_error *err)
{
    struct stat st;

    if (!argv)
        return 0;
    if (argv[0][0] != '/')
        return errset (err, EINVAL, "%s: %s: not an absolute path", key,
                       argv[0]);
    if (stat (argv[0], &st) < 0)
        return errset (err, errno, "%s: %s: %s", key, argv[0],
                       strerror (errno));
    if (!S_ISREG (st.st_mode))
        return errset (err, EINVAL, "%s: %s: not a regular file", key, argv[0]);
    if (access (argv[0], X_OK) < 0)
        return errset (err, errno, "%s: %s: not executable (%s)", key, argv[0],
                       strerror (errno));
    return 0;
}

static int check_commands (const char *path,
                           const struct cairn_config *cfg,
                           struct cairn_error *err)
{
    if (check_command ("prolog.command", cfg->job.prolog.command, err) < 0 ||
        check_command ("epilog.command", cfg->job.epilog.command, err) < 0)
        return path ? errprefix (err, "%s", path) : -1;
    return 0;
}

int main (int argc, char *argv[])
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"statedir", required_argument, NULL, 's'},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {"check", no_argument, NULL, 'C'},
        {NULL, 0, NULL, 0},
    };
    const char *config_path = NULL, *statedir_opt = NULL;
    struct cairn_config cfg;
    struct cairn_error err = {{0}};
    int c;
    bool check_only = false;

    while ((c = getopt_long (argc, argv, "c:s:vVh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config_path = optarg;
            break;
        case 's':
            statedir_opt = optarg;
            break;
        case 'v':
            log_set_level (LOG_DEBUG);
            break;
        case 'V':
            printf ("cairnd %s\n", CAIRN_VERSION);
            return 0;
        case 'h':
            usage (stdout);
            return 0;
        case 'C':
            check_only = true;
            break;
        default:
            usage (stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage (stderr);
        return 2;
    }
    config_init (&cfg);
    if ((config_path && load_config (config_path, &cfg, &err) < 0) ||
        check_commands (config_path, &cfg, &err) < 0) {
        fprintf (stderr, "cairnd: %s\n", err.text);
        config_free (&cfg);
        return 1;
    }
    if (check_only) {
        printf ("cairnd: %s: ok\n", config_path ? config_path : "defaults");
        config_free (&cfg);
        return 0;
    }
    char *statedir = statedir_resolve (statedir_opt, cfg.statedir, &err);
    if (!statedir) {
        fprintf (stderr, "cairnd: %s\n", err.text);
        return 1;
    }
    struct cairnd *d = cairnd_create (&cfg, statedir, &err);
    if (!d) {
        fprintf (stderr, "cairnd: %s\n", err.text);
        free (statedir);
        config_free (&cfg);
        return 1;
    }
    int rc = cairnd_run (d);
    cairnd_destroy (d);
    free (statedir);
    config_free (&cfg);
    return rc;
}
