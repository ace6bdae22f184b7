/* keep.c - the node's keeper: `cairn-shim --keeper FD CAIRND_PID SHIM`
 * (shim.h; the wire in exec/keeper_proto.h, cairnd's side exec/keeper.c).
 *
 * Why it exists: a process's orphans go to its nearest subreaper ancestor,
 * and only a parent can read a child's wait status. When the supervisor
 * dies, its commands must go to a process that outlives cairnd and reads
 * their statuses; cairnd, restarted for an upgrade, is not one. The
 * keeper is that process: cairnd's child, the parent of every supervisor,
 * a subreaper, and so the heir of a dead supervisor's commands. For each
 * it does what the supervisor would have done at its end: kill what is
 * left of its process group, append its exit record to its marker while it
 * is a zombie, then reap it. cairnd reads the record as it reads an
 * earlier supervisor's (its pidfd, then the record).
 *
 * It also starts every supervisor, the first and each replacement, from
 * its own small descriptor table: cairnd itself forks nothing once its
 * socket, journal and pidfds exist (exec/spawner.h).
 *
 * It is small on purpose: no request of a user reaches it, it starts no
 * command, and it holds nothing but its socket, its signalfd, the exit
 * dir, a socket per live supervisor and the copies of the commands' output
 * pipes each sends (keeper_proto.h): it reads none of them while their
 * supervisor lives, and drains a dead supervisor's into their files until
 * each command's end, so that its death neither SIGPIPEs nor stalls a
 * command's writes. It outlives cairnd until every supervisor it started
 * has exited and no process it inherited is a command still running.
 *
 * Crash points (counted here, carried out on ourselves):
 * "keeper.record.before" (an inherited command a zombie, no record yet)
 * and "keeper.reap.before" (its record written, not reaped).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervise/keeper_proto.h"
#include "util/scm.h"
#include "supervise/shim_proto.h"
#include "journal/crashpoint.h"
#include "shim/outpipe.h"
#include "shim/session.h"
#include "shim/shim.h"

static int exitdir = -1;
static pid_t cairnd;
static const char *shim;
static sigset_t startmask; /* what cairnd gave us: the supervisor's */

/* The supervisors started and not reaped yet. */
static pid_t *sups;
static size_t nsups, suproom;

/* Room for one more, made before the fork: a started one is always kept. */
static bool sup_reserve (void)
{
    if (nsups == suproom) {
        size_t room = suproom ? suproom * 2 : 8;
        pid_t *n = realloc (sups, room * sizeof (*n));
        if (!n)
            return false;
        sups = n;
        suproom = room;
    }
    return true;
}

static bool sup_take (pid_t pid)
{
    for (size_t i = 0; i < nsups; i++) {
        if (sups[i] == pid) {
            sups[i] = sups[--nsups];
            return true;
        }
    }
    return false;
}

/* ---- the output pipes of the supervisors' commands ---- */

/* Copies of the read ends of the commands' output pipes (keeper_proto.h,
 * struct keeper_pipe), each with the socket of the supervisor that sent
 * it; draining once that supervisor is dead. */
struct held {
    int sock;
    int fd;
    int stream;
    bool draining;
    unsigned long long cap;
    char execid[SHIM_EXECID_LEN + 1];
};
static struct held *held;
static size_t nheld, heldroom;

/* The live supervisors' sockets to us. */
static int *ksocks;
static size_t nksocks, ksockroom;

/* Room in *v (of *room elements of size bytes) for more than n. */
static bool grow (void **v, size_t *room, size_t n, size_t size)
{
    if (n < *room)
        return true;
    size_t r = *room ? *room : 16;
    while (r <= n)
        r *= 2;
    void *nv = realloc (*v, r * size);
    if (!nv)
        return false;
    *v = nv;
    *room = r;
    return true;
}

static void held_drop (size_t i)
{
    close (held[i].fd);
    held[i] = held[--nheld];
}

/* Drain h's pipe into its command's output file, as the supervisor
 * does (outpipe.h). */
static enum outpipe_state held_drain (const struct held *h)
{
    char name[SHIM_NAME_MAX];

    snprintf (name, sizeof (name), "%s%s", h->execid,
              h->stream ? SHIM_SUFFIX_ERR : SHIM_SUFFIX_OUT);
    return outpipe_drain (h->fd, exitdir, name, h->cap);
}

/* Drain and close what we hold of execid (its command ended). */
static void held_end (const char *execid)
{
    for (size_t i = 0; i < nheld;) {
        if (strcmp (held[i].execid, execid) != 0) {
            i++;
            continue;
        }
        if (held[i].draining)
            while (held_drain (&held[i]) == OUTPIPE_MORE)
                ;
        held_drop (i);
    }
}

/* Read what supervisor socket k sent. False once it is closed (its
 * supervisor died): what it sent us is then drained. */
static bool ksock_read (int k)
{
    for (;;) {
        struct keeper_pipe m;
        int fd = -1;
        ssize_t n = scm_recv (k, &m, sizeof (m), &fd, MSG_DONTWAIT);
        if (n < 0 && errno == EAGAIN)
            return true;
        if (n <= 0) {
            if (fd >= 0)
                close (fd);
            for (size_t i = 0; i < nheld; i++)
                if (held[i].sock == k)
                    held[i].draining = true;
            return false;
        }
        m.execid[SHIM_EXECID_LEN] = '\0';
        if (n == (ssize_t)sizeof (m) && m.type == KEEPER_PIPE_PIPE &&
            fd >= 0 && (m.stream == 0 || m.stream == 1) &&
            shim_execid_valid (m.execid) &&
            grow ((void **)&held, &heldroom, nheld, sizeof (*held))) {
            held[nheld++] = (struct held){.sock = k,
                                          .fd = fd,
                                          .stream = m.stream,
                                          .cap = m.cap};
            snprintf (held[nheld - 1].execid, sizeof (held[0].execid), "%s",
                      m.execid);
            fd = -1;
        } else if (n == (ssize_t)sizeof (m) && m.type == KEEPER_PIPE_UNPIPE)
            held_end (m.execid);
        if (fd >= 0)
            close (fd);
    }
}

/* ---- the commands we inherit ---- */

int shim_start_ticks (pid_t pid, unsigned long long *ticks)
{
    char path[64], buf[1024];
    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    if (shim_read_small (AT_FDCWD, path, buf, sizeof (buf)) <= 0)
        return -1;
    char *p = strrchr (buf, ')');
    if (!p)
        return -1;
    p++;
    for (int field = 3; field < 22; field++) { /* skip to field 22 */
        p = strchr (p + 1, ' ');
        if (!p)
            return -1;
    }
    return sscanf (p, " %llu", ticks) == 1 ? 0 : -1;
}

/* Does the marker called name (an open fd's contents) name pid, started
 * at ticks, with no record yet? A marker says "PID BOOTNS\n", BOOTNS read
 * after the process started: a process that started later (its pid
 * reused) is not the one it names. */
static bool marker_names (int fd, pid_t pid, unsigned long long ticks)
{
    char buf[256];
    ssize_t n = pread (fd, buf, sizeof (buf) - 1, 0);
    long long mpid;
    unsigned long long boot_ns;
    long hz = sysconf (_SC_CLK_TCK);

    if (n <= 0)
        return false;
    buf[n] = '\0';
    if (strchr (buf, '{')) /* a record is there already: it stands */
        return false;
    if (sscanf (buf, "%lld %llu", &mpid, &boot_ns) != 2 || mpid != pid)
        return false;
    if (hz <= 0)
        return true;
    return ticks * (1000000000ull / (unsigned long long)hz) <= boot_ns;
}

/* The marker of the command whose process pid is (a zombie of ours), its
 * name into name; false if none names it. */
static bool marker_find (pid_t pid, char *name, size_t len)
{
    unsigned long long ticks = 0;
    bool found = false;
    struct dirent *e;
    DIR *dir;
    int fd;

    if (exitdir < 0 || shim_start_ticks (pid, &ticks) < 0)
        return false;
    if ((fd = openat (exitdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return false;
    if (!(dir = fdopendir (fd))) {
        close (fd);
        return false;
    }
    while (!found && (e = readdir (dir))) {
        size_t l = strlen (e->d_name);
        if (l != SHIM_EXECID_LEN + strlen (SHIM_SUFFIX_STARTED) ||
            strcmp (e->d_name + SHIM_EXECID_LEN, SHIM_SUFFIX_STARTED) != 0)
            continue;
        int m = openat (exitdir, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (m < 0)
            continue;
        if (marker_names (m, pid, ticks)) {
            snprintf (name, len, "%s", e->d_name);
            found = true;
        }
        close (m);
    }
    closedir (dir);
    return found;
}

/* A command of a dead supervisor ended: what the supervisor would have
 * done (serve.c cmds_reap). While it is a zombie its pid, its group's id,
 * cannot be reused: the group's stragglers can be killed safely. */
static void inherited_end (pid_t pid, int status, const char *marker)
{
    char rec[80];
    int left = shim_session_left (pid, 0), n;

    /* Processes of its session left (cmd.h shim_cmd_exited): the record
     * says how many first, then they are killed, as the supervisor does. */
    if (left > 0)
        n = snprintf (rec, sizeof (rec), "{\"status\":%d,\"leftover\":%d}\n",
                      status, left);
    else {
        n = snprintf (rec, sizeof (rec), "{\"status\":%d}\n", status);
        (void)kill (-pid, SIGKILL);
    }
    /* its last output into its files before its record */
    char execid[SHIM_EXECID_LEN + 1];
    snprintf (execid, sizeof (execid), "%.*s", SHIM_EXECID_LEN, marker);
    held_end (execid);
    CRASHPOINT ("keeper.record.before");
    /* A record that cannot be written leaves the outcome lost, which
     * cairnd says (its marker and no record, the process gone). */
    (void)shim_record_append (exitdir, marker, rec, (size_t)n);
    if (left > 0) {
        CRASHPOINT ("keeper.session.kill");
        (void)shim_session_drain (pid, SHIM_DRAIN_TRIES);
    }
    CRASHPOINT ("keeper.reap.before");
}

/* Every child that has ended: a supervisor (reaped), a command we
 * inherited (seen through), or a process that left its command and came
 * to us (reaped). */
static void children_reap (void)
{
    for (;;) {
        siginfo_t si = {0};
        char marker[SHIM_NAME_MAX];

        if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
            si.si_pid == 0)
            return;
        bool sup = sup_take (si.si_pid);
        if (!sup && marker_find (si.si_pid, marker, sizeof (marker)))
            inherited_end (si.si_pid, shim_wait_status (&si), marker);
        else if (!sup && shim_session_leader (si.si_pid) &&
                 shim_session_left (si.si_pid, 0) > 0) {
            /* A command whose record its supervisor wrote before it died
             * killing what the session left (serve.c): finish that. (Or
             * a job's process that left its session, came to us and
             * ended: what its own session left is the job's too.) */
            CRASHPOINT ("keeper.session.kill");
            (void)shim_session_drain (si.si_pid, SHIM_DRAIN_TRIES);
        }
        while (waitpid (si.si_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

/* cairnd is gone: done once no supervisor is left and no child of ours is
 * a command (one with a marker and no record). A process that only left
 * a command (a daemon) keeps nothing of ours: it goes to init. */
static bool keeping (void)
{
    char path[64], buf[65536], name[SHIM_NAME_MAX];
    if (nsups > 0)
        return true;
    snprintf (path, sizeof (path), "/proc/self/task/%d/children",
              (int)getpid ());
    if (shim_read_small (AT_FDCWD, path, buf, sizeof (buf)) <= 0)
        return false;
    for (char *p = buf, *end;; p = end) {
        long v = strtol (p, &end, 10);
        if (end == p)
            break;
        if (v > 0 && marker_find ((pid_t)v, name, sizeof (name)))
            return true;
    }
    return false;
}

/* ---- cairnd's requests ---- */

/* The forked child: become `SHIM --spawner 3 CAIRND 4` with sock on 3
 * and its socket to us (ksock) on 4, with the signal mask cairnd gave
 * us. */
static void __attribute__ ((noreturn))
supervisor_exec (int sock, int ksock, int errfd, pid_t keeper)
{
    char pidarg[24];
    char *av[] = {(char *)"cairn-shim", (char *)"--spawner", (char *)"3",
                  pidarg, (char *)"4", NULL};
    extern char **environ;

    snprintf (pidarg, sizeof (pidarg), "%d", (int)cairnd);
    (void)sigprocmask (SIG_SETMASK, &startmask, NULL);
    scm_child_exec (shim, av, environ, sock, ksock, errfd, keeper);
}

/* Start a supervisor on sock; its pid, or 0 and *err. */
static pid_t supervisor_start (int sock, int *pidfd, int *err)
{
    int ep[2], kp[2] = {-1, -1}, e = 0;
    pid_t keeper = getpid (), pid;
    ssize_t n;

    *pidfd = -1;
    if (pipe2 (ep, O_CLOEXEC) < 0) {
        *err = errno;
        return 0;
    }
    if (!sup_reserve () ||
        !grow ((void **)&ksocks, &ksockroom, nksocks, sizeof (*ksocks))) {
        *err = ENOMEM;
        goto out;
    }
    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, kp) < 0 ||
        (pid = fork ()) < 0) {
        *err = errno;
        goto out;
    }
    if (pid == 0)
        supervisor_exec (sock, kp[1], ep[1], keeper);
    close (ep[1]);
    ep[1] = -1;
    close (kp[1]);
    kp[1] = -1;
    ksocks[nksocks++] = kp[0]; /* until it closes: its supervisor's death */
    kp[0] = -1;
    sups[nsups++] = pid;
    while ((n = read (ep[0], &e, sizeof (e))) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof (e)) {
        *err = e;
        goto out; /* it exits 127: reaped as a supervisor */
    }
    if ((*pidfd = (int)syscall (SYS_pidfd_open, pid, 0)) < 0) {
        *err = errno;
        (void)kill (pid, SIGKILL);
        goto out;
    }
    close (ep[0]);
    /* A test's crash point or fault is one event: a replacement must not
     * die at it again (ours were read at our start). */
    unsetenv ("CAIRN_CRASH_AT");
    unsetenv ("CAIRN_FAULT");
    return pid;
out:
    close (ep[0]);
    if (ep[1] >= 0)
        close (ep[1]);
    for (int i = 0; i < 2; i++)
        if (kp[i] >= 0)
            close (kp[i]);
    return 0;
}

/* One request of cairnd's, answered. False when cairnd is gone. */
static bool request_serve (int sock)
{
    struct keeper_msg m, r = {0};
    int fd, pidfd = -1;

    if (scm_recv (sock, &m, sizeof (m), &fd, 0) != (ssize_t)sizeof (m)) {
        if (fd >= 0) /* gone (0), or broken */
            close (fd);
        return false;
    }
    r.type = m.type;
    if (m.type == KEEPER_MSG_EXITDIR && fd >= 0) {
        if (exitdir >= 0)
            close (exitdir);
        exitdir = fd;
        fd = -1;
    } else if (m.type == KEEPER_MSG_SUPERVISE && fd >= 0)
        r.pid = supervisor_start (fd, &pidfd, &r.errnum);
    else
        r.errnum = EPROTO;
    if (fd >= 0)
        close (fd);
    (void)scm_send (sock, &r, sizeof (r), pidfd, 0);
    if (pidfd >= 0)
        close (pidfd);
    return true;
}

void shim_keep (int sock, pid_t cairnd_pid, const char *shim_path)
{
    sigset_t all;
    int sigfd;
    bool gone = false;

    cairnd = cairnd_pid;
    shim = shim_path;
    /* cairnd set our death signal before the exec: from here on we
     * outlive it, unless it is gone already. */
    (void)prctl (PR_SET_PDEATHSIG, 0);
    if (getppid () != cairnd)
        _exit (0);
    crashpoint_init ();
    /* Nothing of cairnd's stdio: a pipe of its (a test's, a terminal's)
     * must not stay open for as long as we live. */
    int nul = open ("/dev/null", O_RDWR);
    if (nul < 0 || dup2 (nul, 0) < 0 || dup2 (nul, 1) < 0 || dup2 (nul, 2) < 0)
        _exit (1);
    if (nul > 2)
        close (nul);
    /* Only SIGKILL ends us: nothing of a terminal's, nothing sent to
     * cairnd's group (we leave it), nothing a site's pkill of TERM. */
    sigfillset (&all);
    if (sigprocmask (SIG_SETMASK, &all, &startmask) < 0 || setsid () < 0 ||
        prctl (PR_SET_CHILD_SUBREAPER, 1) < 0 ||
        fcntl (sock, F_SETFD, FD_CLOEXEC) < 0)
        _exit (1);
    sigemptyset (&all);
    sigaddset (&all, SIGCHLD);
    if ((sigfd = signalfd (-1, &all, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        _exit (1);
    struct pollfd *pf = NULL;
    size_t pfroom = 0;
    for (;;) {
        /* signals, cairnd, each supervisor's socket, each pipe being
         * drained (a dead supervisor's) */
        size_t n = 2 + nksocks + nheld;
        if (!grow ((void **)&pf, &pfroom, n, sizeof (*pf)))
            _exit (1);
        pf[0] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        pf[1] = (struct pollfd){.fd = gone ? -1 : sock, .events = POLLIN};
        for (size_t i = 0; i < nksocks; i++)
            pf[2 + i] = (struct pollfd){.fd = ksocks[i], .events = POLLIN};
        for (size_t i = 0; i < nheld; i++)
            pf[2 + nksocks + i] = (struct pollfd){
                .fd = held[i].draining ? held[i].fd : -1, .events = POLLIN};
        if (gone && !keeping ())
            _exit (0);
        if (poll (pf, n, -1) < 0 && errno != EINTR)
            _exit (1);
        /* output first: an inherited command's last words go into its
         * files before its record (inherited_end drains the rest) */
        size_t nk = nksocks;
        for (size_t i = nheld; i-- > 0;) {
            if (pf[2 + nk + i].revents &&
                held_drain (&held[i]) == OUTPIPE_END)
                held_drop (i);
        }
        for (size_t i = nk; i-- > 0;)
            if (pf[2 + i].revents && !ksock_read (ksocks[i])) {
                close (ksocks[i]);
                ksocks[i] = ksocks[--nksocks];
            }
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo ssi;
            while (read (sigfd, &ssi, sizeof (ssi)) > 0)
                ;
            children_reap ();
        }
        if (!gone && pf[1].revents && !request_serve (sock)) {
            gone = true;
            close (sock);
        }
    }
}
