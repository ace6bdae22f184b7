/* cairn-shim - run one command for cairnd and keep its exit status.
 *
 * The contract (arguments, files, signals) is in src/exec/shim_proto.h;
 * the command's own steps, its output cap and its exit record are cmd.c's.
 *
 * Why a separate process: the shim stays the command's parent when cairnd
 * dies, so the wait status is never lost (it lands in the exit record), and
 * because the shim has not reaped the command, the command's pid - which is
 * also its process group id - cannot be reused while the shim signals the
 * group. The shim is spawned once per process, so it links libc only,
 * allocates little and waits for signals with sigwaitinfo() (no
 * handlers), or sigtimedwait() when it caps the command's output files.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervise/shim_proto.h"
#include "shim/cmd.h"
#include "shim/shim.h"

/* Block what we wait for before anything else, so that a signal sent early
 * is queued and relayed once the command runs instead of killing us (our
 * launcher should already have blocked them: see shim_sigset()). SIGCHLD
 * must not be SIG_IGN, or the kernel would reap the child and lose its
 * status, so the waited-for signals get SIG_DFL. SIGPIPE stays blocked so a
 * closed stderr cannot kill the shim. Sets *waitset to what we wait for. */
static void signals_setup (sigset_t *waitset)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigset_t block;

    shim_sigset (&block);
    *waitset = block;
    sigdelset (waitset, SIGPIPE);
    if (shim_fresh) /* the supervisor did it once for all its commands */
        return;
    sigprocmask (SIG_BLOCK, &block, NULL);
    for (int sig = 1; sig < NSIG; sig++) {
        if (sigismember (waitset, sig) == 1)
            sigaction (sig, &dfl, NULL);
    }
}

static long long now_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* When to look at the output files next, and the current interval. */
struct cap_timer {
    long long due_ns;
    long long wait_ns;
};

/* The next signal; with an output cap, wake up by t->due_ns to apply it
 * (a deadline, not a timeout, so that a stream of signals cannot put the
 * cut off). Returns the signal, or -1 (EINTR, or time to check the cap). */
static int next_signal (struct shim *s,
                        const sigset_t *waitset,
                        siginfo_t *si,
                        struct cap_timer *t)
{
    long long left;
    struct timespec ts;

    if (!shim_cmd_capped (s))
        return sigwaitinfo (waitset, si);
    if ((left = t->due_ns - now_ns ()) <= 0) {
        t->wait_ns = shim_cmd_cap (s, t->wait_ns);
        t->due_ns = now_ns () + t->wait_ns;
        errno = EAGAIN;
        return -1;
    }
    ts.tv_sec = left / 1000000000LL;
    ts.tv_nsec = left % 1000000000LL;
    return sigtimedwait (waitset, si, &ts);
}

/* Relay signals until the command's process exits; return its wait status.
 */
static int supervise (struct shim *s, const sigset_t *waitset)
{
    pid_t child = shim_cmd_pid (s);
    struct cap_timer timer = {.due_ns = now_ns () + SHIM_CAP_FIRST_NS,
                              .wait_ns = SHIM_CAP_FIRST_NS};

    for (;;) {
        siginfo_t si;
        int sig = next_signal (s, waitset, &si, &timer);
        if (sig < 0)
            continue; /* EINTR (e.g. after SIGSTOP/SIGCONT of the shim) or
                       * time to check the output cap */
        if (sig == SIGCHLD) {
            siginfo_t w;
            int status;

            /* Peek first: while the leader is an unreaped zombie its pid,
             * the group id, cannot be reused, so killing the group's
             * stragglers cannot hit a stranger. */
            memset (&w, 0, sizeof (w));
            if (waitid (P_PID, child, &w, WEXITED | WNOHANG | WNOWAIT) < 0 ||
                w.si_pid != child)
                continue; /* stopped or continued, not exited */
            shim_cmd_exited (s);
            if (shim_cmd_leftover (s) > 0) /* no keeper behind us */
                (void)shim_cmd_drain (s);
            while (waitpid (child, &status, 0) < 0) {
                if (errno != EINTR)
                    return SHIM_STATUS_NOEXEC; /* cannot happen */
            }
            return status;
        }
        if (sig == SHIM_RELAY_SIGNAL) {
            if (si.si_code != SI_QUEUE)
                continue;
            sig = si.si_value.sival_int;
            if (sig <= 0 || sig >= NSIG)
                continue;
        }
        shim_cmd_relay (s, sig);
    }
}

int shim_main (int argc, char *argv[])
{
    struct shim *s;
    sigset_t waitset;
    int status, rc;

    /* cairnd's spawner starts us with PR_SET_PDEATHSIG, so that a start cut
     * short by cairnd's death dies before it can run anything (serve.c);
     * from here on we must outlive cairnd, and nothing has run yet. */
    (void)prctl (PR_SET_PDEATHSIG, 0);
    signals_setup (&waitset);
    (void)shim_cmd_init (); /* a failure shows in a --user start */
    if (!(s = shim_cmd_parse (argc, argv, getenv (SHIM_ENV_EXECID))))
        return errno == ENOMEM ? 3 : 2;
    /* Leave cairnd's session and process group: a Ctrl-C or a signal to
     * cairnd's group must not reach us. EPERM means we already lead a group
     * (cairnd's spawner calls setsid for us): fine. */
    if (!shim_fresh && setsid () < 0 && errno != EPERM)
        fprintf (stderr, "cairn-shim: setsid: %s\n", strerror (errno));
    /* With 0-2 closed, our own opens would land there and the command's
     * dup2 onto them would be a no-op that keeps O_CLOEXEC. */
    for (int fd = 0; fd < 3 && !shim_fresh; fd++) {
        if (fcntl (fd, F_GETFD) < 0 && open ("/dev/null", O_RDWR) < 0)
            return 3;
    }
    if (shim_cmd_opendir (s) < 0)
        return 3;
    if (shim_cmd_used (s))
        return 4;
    if (shim_cmd_start (s, NULL) == 0)
        status = supervise (s, &waitset);
    else
        status = SHIM_STATUS_NOEXEC;
    rc = shim_cmd_finish (s, status) < 0 ? 3 : 0;
    shim_cmd_free (s);
    return rc;
}
