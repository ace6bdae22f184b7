/* cairnd - the crash-safe job execution service. See cairnd(8). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "exec/daemon.h"
#include "exec/log.h"
#include "exec/statedir.h"

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: cairnd [-c FILE] [--statedir DIR] [-v]\n"
             "Run jobs handed over by a resource manager, journaling every\n"
             "step before taking it. Runs in the foreground; SIGTERM stops it\n"
             "and leaves running jobs to the next start.\n"
             "  -c, --config FILE   JSON configuration (see cairn.conf(5))\n"
             "  -s, --statedir DIR  journal, socket and exit files\n"
             "  -v, --verbose       log debug messages\n"
             "  -V, --version       print the version\n");
}

static int load_config (const char *path,
                        struct cairn_config *cfg,
                        struct cairn_error *err)
{
    json_error_t jerr;
    json_t *o = json_load_file (path, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        return errset (err, EINVAL, "%s:%d: %s", path, jerr.line, jerr.text);
    int rc = config_parse (cfg, o, err);
    json_decref (o);
    if (rc < 0)
        return errprefix (err, "%s", path);
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
        {NULL, 0, NULL, 0},
    };
    const char *config_path = NULL, *statedir_opt = NULL;
    struct cairn_config cfg;
    struct cairn_error err = {{0}};
    int c;

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
    if (config_path && load_config (config_path, &cfg, &err) < 0) {
        fprintf (stderr, "cairnd: %s\n", err.text);
        return 1;
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
