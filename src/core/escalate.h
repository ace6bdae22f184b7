/* escalate.h - the kill escalation's schedule: pure, no I/O.
 *
 * A process cairn stops (a cancel, a fatal exception, a time limit, a
 * prolog's or epilog's timeout) gets its term signal at t_term. A job
 * shell then follows Flux job-exec's schedule (flux-core's job-exec.c;
 * its figures are what flux-core's t2406 checks):
 *   1. the kill signal every kill-timeout ("kill": job-exec's
 *      flux_job_kill, which the shell hands to its tasks);
 *   2. at 5 x kill-timeout, the kill signal to the shell itself
 *      ("kill-shell"), and again after 2, 4, 8 ... x kill-timeout, at most
 *      300 s apart;
 *   3. given up (the process is lost, its ranks drained, the job goes on)
 *      with the max-kill-count-th kill of step 2, or, when max-kill-timeout
 *      is set, that long after t_term whatever the count.
 * A prolog or epilog gets the kill signal every kill-timeout of its own
 * ([prolog]/[epilog] kill-timeout) and is given up one interval after the
 * max-kill-count-th.
 *
 * Each step is decided from journaled facts (the process's proc-signal
 * events), so a restarted cairnd goes on with the same schedule; kills
 * overdue after a downtime come one per step, not in a burst. */
#ifndef CAIRN_ESCALATE_H
#define CAIRN_ESCALATE_H

#include <stdbool.h>

#include "core/config.h"

/* What the schedule reads of a process: the journaled facts of its
 * signals (job.h's struct job_proc keeps them; the caller copies them in,
 * so the schedule knows nothing of jobs and job.c may call it freely). */
struct esc_signals {
    double t_term;    /* first termination signal: the schedule's start */
    double t_signal;  /* last termination signal */
    int nkills;       /* kill-signal deliveries, of either kind */
    int nshell_kills; /* of them, a shell's direct kills ("kill-shell") */
};

enum esc_action {
    ESC_KILL,       /* the kill signal ("kill") */
    ESC_KILL_SHELL, /* the kill signal to the shell ("kill-shell") */
    ESC_GIVE_UP,    /* lost: unkillable */
};

struct esc_step {
    double due; /* epoch seconds */
    enum esc_action action;
};

/* The next step for a terminating process whose signals so far are s: a
 * job shell (shell true) under x, or a prolog or epilog with its
 * kill_timeout. */
struct esc_step escalate_next (const struct exec_config *x,
                               bool shell,
                               double kill_timeout,
                               const struct esc_signals *s);

/* After a process's last kill-shell (its signals s): is it given up at
 * once (the max-kill-count-th, with no max-kill-timeout)? */
bool escalate_spent (const struct exec_config *x, const struct esc_signals *s);

/* The interval before a shell's next direct kill after nshell_kills of
 * them: job-exec's per-job kill_timeout stat. */
double escalate_interval (const struct exec_config *x, int nshell_kills);

/* job-exec's effective-max-kill-timeout: max-kill-timeout when set, else
 * its estimate 5 x kill-timeout plus kill-timeout doubling (capped at
 * 300 s) max-kill-count - 1 times. It is job-exec's own figure (sdexec's
 * stop timer is set from it); with max-kill-count above 2 the give-up in
 * step 3 comes later than it, in job-exec as here. */
double escalate_give_up_after (const struct exec_config *x);

#endif /* CAIRN_ESCALATE_H */
