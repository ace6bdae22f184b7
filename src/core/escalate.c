/* escalate.c - the kill escalation's schedule (escalate.h). */
#include "core/escalate.h"

/* job-exec's cap on the interval between a shell's direct kills. */
#define ESC_MAX_INTERVAL 300.

/* Direct kills begin this many kill-timeouts after the term signal. */
#define ESC_SHELL_AFTER 5

double escalate_interval (const struct exec_config *x, int nshell_kills)
{
    double t = x->kill_timeout;
    for (int i = 0; i < nshell_kills; i++) {
        t *= 2;
        if (t > ESC_MAX_INTERVAL)
            return ESC_MAX_INTERVAL;
    }
    return t;
}

double escalate_give_up_after (const struct exec_config *x)
{
    if (x->max_kill_timeout > 0)
        return x->max_kill_timeout;
    double total = x->kill_timeout * ESC_SHELL_AFTER;
    double t = x->kill_timeout;
    for (int i = 1; i < x->max_kill_count; i++) {
        total += t;
        t *= 2;
        if (t > ESC_MAX_INTERVAL)
            t = ESC_MAX_INTERVAL;
    }
    return total;
}

bool escalate_spent (const struct exec_config *x, const struct esc_signals *sig)
{
    return x->max_kill_timeout <= 0 && sig->nshell_kills >= x->max_kill_count;
}

static struct esc_step shell_next (const struct exec_config *x,
                                   const struct esc_signals *sig)
{
    double kt = x->kill_timeout;
    struct esc_step s;

    if (escalate_spent (x, sig))
        return (struct esc_step){sig->t_signal, ESC_GIVE_UP};
    if (sig->nshell_kills == 0) {
        double shell_at = sig->t_term + ESC_SHELL_AFTER * kt;
        double kill_at = sig->t_signal + kt;
        /* half an interval's slack: five sums of kt and 5 x kt may differ
         * in the last bit */
        if (kill_at < shell_at - kt / 2)
            s = (struct esc_step){kill_at, ESC_KILL};
        else
            s = (struct esc_step){shell_at, ESC_KILL_SHELL};
    } else {
        s = (struct esc_step){sig->t_signal +
                                  escalate_interval (x, sig->nshell_kills),
                              ESC_KILL_SHELL};
    }
    if (x->max_kill_timeout > 0 && sig->t_term + x->max_kill_timeout <= s.due)
        s = (struct esc_step){sig->t_term + x->max_kill_timeout, ESC_GIVE_UP};
    return s;
}

struct esc_step escalate_next (const struct exec_config *x,
                               bool shell,
                               double kill_timeout,
                               const struct esc_signals *sig)
{
    if (shell)
        return shell_next (x, sig);
    return (struct esc_step){sig->t_signal + kill_timeout,
                             sig->nkills >= x->max_kill_count ? ESC_GIVE_UP
                                                              : ESC_KILL};
}
