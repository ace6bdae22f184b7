/* cmd_demo.c - `cairn demo`: start a private cairnd and run four jobs that
 * show what it does (partial release, a failing rank, a tolerated prolog
 * failure, a cancel), printing every response and every prolog, shell and
 * epilog as it happens, then check that each job ended as it should.
 *
 * This file owns the temporary directory, the scripts, the config and
 * cairnd's life; cmd_demo_jobs.c runs the jobs, and is called, never
 * calls back.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_demo_jobs.h"
#include "cli/commands.h"

#define SOCKET_WAIT 10. /* seconds for cairnd to listen */

static const char prolog_sh[] =
    "# cairn demo prolog: one per rank\n"
    "PATH=/usr/bin:/bin\n"
    "D=${0%/*}\n"
    "echo \"$CAIRN_JOB_ID prolog on rank $CAIRN_RANK\" >>\"$D/trace\"\n"
    "sleep 0.2\n"
    "if [ -e \"$D/fail-rank-$CAIRN_JOB_ID-$CAIRN_RANK\" ]; then\n"
    "    echo \"$CAIRN_JOB_ID prolog on rank $CAIRN_RANK fails with exit 42"
    " (tolerable)\" >>\"$D/trace\"\n"
    "    exit 42\n"
    "fi\n";

static const char epilog_sh[] =
    "# cairn demo epilog: one per rank; rank 2 straggles\n"
    "PATH=/usr/bin:/bin\n"
    "D=${0%/*}\n"
    "echo \"$CAIRN_JOB_ID epilog on rank $CAIRN_RANK\" >>\"$D/trace\"\n"
    "if [ \"$CAIRN_RANK\" = 2 ]; then sleep 2; else sleep 0.2; fi\n";

static bool interrupted_by_user; /* cairnd's log would not help then */

static void on_signal (int sig)
{
    demo_interrupted = sig;
}

/* cairnd finds its cairn-shim by itself (next to its executable). */
static int write_config (struct demo *d)
{
    char *text = NULL;
    json_t *cfg;
    int rc = -1;

    cfg = json_pack ("{s:{s:[ss] s:b s:[i]} s:{s:[ss] s:b} s:i}", "prolog",
                     "command", "/bin/sh", "prolog.sh", "per-rank", 1,
                     "tolerable-exit-codes", 42, "epilog", "command", "/bin/sh",
                     "epilog.sh", "per-rank", 1, "release-after", 0);
    if (!cfg)
        goto done;
    /* the scripts by absolute path: perilogs run in no particular cwd */
    for (int i = 0; i < 2; i++) {
        json_t *cmd = json_object_get (
            json_object_get (cfg, i ? "epilog" : "prolog"), "command");
        char *p;
        if (asprintf (&p, "%s/%s", d->tmp, i ? "epilog.sh" : "prolog.sh") < 0)
            goto done;
        json_array_set_new (cmd, 1, json_string (p));
        free (p);
    }
    if (!(text = json_dumps (cfg, JSON_INDENT (2))))
        goto done;
    rc = demo_write_file (d->tmp, "cairn.json", text);
done:
    if (rc < 0 && !text)
        cli_error ("cannot write the config: out of memory");
    json_decref (cfg);
    free (text);
    return rc;
}

/* The cairnd next to this cairn, else the one in PATH. */
static char *find_cairnd (void)
{
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 16);

    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr (self, '/');
        if (slash) {
            strcpy (slash + 1, "cairnd");
            if (access (self, X_OK) == 0)
                return strdup (self);
        }
    }
    return strdup ("cairnd");
}

static int start_cairnd (struct demo *d, const char *cairnd, bool keep)
{
    char *cfg;

    if (asprintf (&cfg, "%s/cairn.json", d->tmp) < 0)
        return -1;
    fflush (NULL);
    d->cairnd = fork ();
    if (d->cairnd == 0) {
        /* its own process group: Ctrl-C reaches the demo only, which then
         * stops everything in order */
        setpgid (0, 0);
        int fd = open (d->log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2 (fd, STDOUT_FILENO);
            dup2 (fd, STDERR_FILENO);
        }
        execlp (cairnd, "cairnd", "-c", cfg, "--statedir", d->statedir,
                (char *)NULL);
        fprintf (stderr, "cairn demo: cannot run %s: %s\n", cairnd,
                 strerror (errno));
        _exit (127);
    }
    free (cfg);
    if (d->cairnd < 0) {
        cli_error ("fork: %s", strerror (errno));
        return -1;
    }
    double deadline = cli_monotime () + SOCKET_WAIT;
    while (!(d->c = client_connect (d->sock, NULL))) {
        int status;
        if (waitpid (d->cairnd, &status, WNOHANG) == d->cairnd) {
            d->cairnd = -1;
            cli_error ("cairnd exited before listening (see %s)",
                       keep ? d->log_path : "its log below");
            return -1;
        }
        if (cli_monotime () >= deadline || demo_interrupted) {
            cli_error ("cairnd did not listen on %s within %gs", d->sock,
                       SOCKET_WAIT);
            return -1;
        }
        nanosleep (&(struct timespec){0, 50 * 1000000}, NULL);
    }
    return 0;
}

static int stop_cairnd (struct demo *d)
{
    int status = 0;

    if (d->cairnd <= 0)
        return 0;
    kill (d->cairnd, SIGTERM);
    double deadline = cli_monotime () + 10.;
    pid_t r;
    while ((r = waitpid (d->cairnd, &status, WNOHANG)) == 0 ||
           (r < 0 && errno == EINTR)) {
        if (cli_monotime () >= deadline) {
            cli_error ("cairnd did not stop within 10s; killing it");
            kill (d->cairnd, SIGKILL);
            waitpid (d->cairnd, &status, 0);
            break;
        }
        nanosleep (&(struct timespec){0, 20 * 1000000}, NULL);
    }
    d->cairnd = -1;
    if (r < 0) {
        cli_error ("waitpid: %s", strerror (errno));
        return -1;
    }
    if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
        return 0;
    char ws[48];
    cli_wait_status_str (status, ws, sizeof (ws));
    cli_error ("cairnd ended with %s", ws);
    return -1;
}

static int
rm_entry (const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    if (remove (path) < 0)
        cli_error ("cannot remove %s: %s", path, strerror (errno));
    return 0;
}

static void print_log (struct demo *d)
{
    char line[1024];
    FILE *f = fopen (d->log_path, "r");

    if (!f)
        return;
    fprintf (stderr, "--- cairnd's log (%s) ---\n", d->log_path);
    while (fgets (line, sizeof (line), f))
        fputs (line, stderr);
    fprintf (stderr, "---\n");
    fclose (f);
}

static int cmd_demo (struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"keep", no_argument, NULL, 'k'},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    struct demo d = {.cairnd = -1, .trace_fd = -1};
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART */
    const char *tmpdir = getenv ("TMPDIR");
    char *cairnd = NULL;
    bool keep = false;
    int rc = -1, opt;

    while ((opt = getopt_long (argc, argv, "k" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == 'k')
            keep = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    if (optind < argc)
        cli_usage_error (cli, "unexpected '%s'", argv[optind]);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGHUP, &sa, NULL);
    d.t0 = cli_monotime ();
    d.color = isatty (STDOUT_FILENO) && !getenv ("NO_COLOR");
    if (asprintf (&d.tmp, "%s/cairn-demo.XXXXXX",
                  tmpdir && *tmpdir ? tmpdir : "/tmp") < 0 ||
        !mkdtemp (d.tmp)) {
        cli_error ("cannot make a temporary directory: %s", strerror (errno));
        free (d.tmp);
        return 1;
    }
    if (asprintf (&d.statedir, "%s/state", d.tmp) < 0 ||
        asprintf (&d.sock, "%s/cairn.sock", d.statedir) < 0 ||
        asprintf (&d.trace_path, "%s/trace", d.tmp) < 0 ||
        asprintf (&d.log_path, "%s/cairnd.log", d.tmp) < 0 ||
        !(cairnd = find_cairnd ())) {
        cli_error ("out of memory");
        goto done;
    }
    if (demo_write_file (d.tmp, "prolog.sh", prolog_sh) < 0 ||
        demo_write_file (d.tmp, "epilog.sh", epilog_sh) < 0 ||
        demo_write_file (d.tmp, "trace", "") < 0 || write_config (&d) < 0)
        goto done;
    if ((d.trace_fd = open (d.trace_path, O_RDONLY | O_CLOEXEC)) < 0) {
        cli_error ("%s: %s", d.trace_path, strerror (errno));
        goto done;
    }
    printf ("cairn demo: starting %s in %s\n"
            "  prolog and epilog run per rank (the epilog of rank 2 takes "
            "2s),\n"
            "  ranks are released as their epilogs end, prolog exit 42 is "
            "tolerable.\n"
            "  -> request sent, <- response received, indented: what the "
            "processes say\n\n",
            cairnd, d.tmp);
    if (start_cairnd (&d, cairnd, keep) < 0)
        goto done;
    d.t0 = cli_monotime ();
    demo_say (&d, "cairnd", "listening on %s (pid %d)", d.sock, (int)d.cairnd);
    for (int i = 0; i < DEMO_NJOBS; i++) {
        if (demo_submit (&d, i) < 0)
            goto done;
    }
    if (demo_follow (&d) < 0)
        goto done;
    rc = 0;
done:
    if (rc < 0) {
        interrupted_by_user = demo_interrupted != 0;
        demo_cancel_rest (&d);
    }
    client_close (d.c);
    d.c = NULL;
    if (stop_cairnd (&d) < 0)
        rc = -1;
    if (d.jw[0].releases && demo_summary (&d) < 0)
        rc = -1;
    if (rc < 0 && !keep && !interrupted_by_user)
        print_log (&d);
    if (d.trace_fd >= 0)
        close (d.trace_fd);
    if (keep)
        printf ("Kept %s (cairnd's state, log and trace).\n", d.tmp);
    else
        nftw (d.tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    for (int i = 0; i < DEMO_NJOBS; i++)
        jobwatch_clear (&d.jw[i]);
    free (d.tmp);
    free (d.statedir);
    free (d.sock);
    free (d.trace_path);
    free (d.log_path);
    free (cairnd);
    return rc < 0 ? 1 : 0;
}

const struct cli_command cli_cmd_demo = {
    "demo",
    cmd_demo,
    "[--keep]",
    "Start a private cairnd and show four jobs running through it.",
    "      --keep          keep the temporary state dir and print its path\n",
};
