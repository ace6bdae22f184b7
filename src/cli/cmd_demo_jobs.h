/* cmd_demo_jobs.h - the four jobs of `cairn demo` (cmd_demo_jobs.c:
 * submit, follow, check), for the command (cmd_demo.c: files, cairnd's
 * life, cleanup), which owns the struct demo and calls down here.
 */
#ifndef CAIRN_CLI_CMD_DEMO_JOBS_H
#define CAIRN_CLI_CMD_DEMO_JOBS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "cli/jobwatch.h"

#define DEMO_NJOBS 4

struct demo {
    char *tmp, *statedir, *sock, *trace_path, *log_path;
    pid_t cairnd;
    struct client *c;
    int trace_fd; /* <tmp>/trace, read as the scripts append to it */
    char tbuf[4096];
    size_t tlen;
    double t0;
    double t_cancel_at; /* 0 = not yet known */
    bool cancel_sent;
    bool color;                     /* stdout is a terminal */
    struct jobwatch jw[DEMO_NJOBS]; /* .releases NULL: not submitted */
};

/* The signal that interrupted the demo (SIGINT...), 0 if none: set by
 * cmd_demo.c's handler, read by the jobs' loops. */
extern volatile sig_atomic_t demo_interrupted;

/* Print one line: time since d->t0, the job's label, the text. */
void demo_say (struct demo *d, const char *label, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Write text to dir/name. Returns 0, or -1 after printing why. */
int demo_write_file (const char *dir, const char *name, const char *text);

/* Send job i's start request. Returns 0, or -1 after printing why. */
int demo_submit (struct demo *d, int i);

/* Print responses and trace lines until every submitted job had its final
 * release (or a timeout, an error, an interruption: -1 after printing
 * why). */
int demo_follow (struct demo *d);

/* Cancel the jobs that are still on and wait a little for them. */
void demo_cancel_rest (struct demo *d);

/* Print each job's outcome. Returns 0 if every job ended as expected. */
int demo_summary (struct demo *d);

#endif /* CAIRN_CLI_CMD_DEMO_JOBS_H */
