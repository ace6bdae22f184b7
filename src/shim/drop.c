/* drop.c - `cairn-shim --drop ...`: the last steps of a command that runs
 * as a user (drop.h), in the command's own process, after one exec.
 *
 * Why a second exec: the supervisor starts a command with vfork, which
 * suspends the starting thread until the command's process execs or
 * exits. Once that process has taken the user's ids, its user may stop it
 * (SIGSTOP) before its exec, or make its chdir or PATH lookup hang (a dead
 * NFS mount): the supervisor's thread then waited for ever, and since the
 * answers go out in request order, so did every later start on the node,
 * root's included. So the vfork child does only root's steps (stdio, the
 * start marker, the cgroup), then execs cairn-shim itself with an empty
 * environment; the supervisor is free from that exec on, and whatever the
 * user does to the rest holds up only the user's own command.
 *
 * Here, in order: give up root for the user's ids for good (user_drop),
 * set the death signal again where the parent asked for one (a lone shim),
 * chdir with the user's permissions, and exec the command with the job's
 * environment (looked up in the job's PATH, as the user, by execvp's rules
 * as cmd.c's exec_lookup does for root's commands). A step that
 * fails appends the exit record {"status":32512,"error":"..."} to the
 * start marker on descriptor 3 and exits 127; the supervisor, which reaps
 * us, keeps that record (cmd.c). Descriptor 3 is closed at the exec: the
 * command has 0-2 and nothing else.
 *
 * What the job gave (its environment, its cwd) and the user's name come
 * in our environment, not in argv: anyone on the node reads any process's
 * argv in /proc/PID/cmdline, and a job's environment holds its owner's
 * secrets (cairn run sends its caller's whole environment; issue 51: 12
 * of 20 tries caught another user's). /proc/PID/environ is another
 * matter: only a process that may ptrace us reads it, which is root until
 * the drop, and after it too (changing our ids made us non-dumpable until
 * the exec); from the exec on it is the command's own, readable by its
 * user as any of their processes'. But until the drop we are root, and a
 * static program still reads some variables at its start (glibc's
 * tunables, GLIBC_TUNABLES and the MALLOC_* aliases, LD_LIBRARY_PATH for
 * dlopen), which are the job's user's to set. So every entry starts with
 * SHIM_DROP_ENV_MARK (drop.h), a byte that starts no name any libc looks
 * up: none of them matches, and we skip the byte here. (The other
 * way, a memfd the supervisor fills and we inherit, costs the supervisor
 * a create, a write and a descriptor per start on its serial path, and
 * the command would have to be kept from inheriting it; the mark costs
 * one copy of the environment, which the exec copies anyway.)
 *
 * argv: --drop FD PPID UID GID GROUPS -- COMMAND [ARG...]
 *   FD     the marker (3)
 *   PPID   0, or the pid our death signal watches (a lone shim)
 *   GROUPS the supplementary groups, comma-separated, or "-"
 * (numbers, and the command, which is the job's to show as in Flux; the
 * ids and groups are in /proc/PID/status anyway)
 * environment, each entry behind SHIM_DROP_ENV_MARK:
 *   NAME   the user's name (or "uid N"), for errors
 *   CWD    the working directory, or "" for none
 *   HOME   without CWD: where to start, or / if the user cannot enter
 *          it (a job without a cwd starts in its user's home); or ""
 *   ENV... the command's environment, NAME=VALUE each
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/testenv.h"
#include "supervise/shim_proto.h"
#include "shim/drop.h"

/* The uid and gid system calls, called raw: glibc's wrappers would make
 * every thread change its ids through bookkeeping that does not matter
 * here, and raw calls are what cmd.c used before; the 32-bit ids where
 * the plain calls take 16-bit ones. */
#ifdef SYS_setresuid32
#define SYS_SETGROUPS SYS_setgroups32
#define SYS_SETRESGID SYS_setresgid32
#define SYS_SETRESUID SYS_setresuid32
#define SYS_SETUID SYS_setuid32
#else
#define SYS_SETGROUPS SYS_setgroups
#define SYS_SETRESGID SYS_setresgid
#define SYS_SETRESUID SYS_setresuid
#define SYS_SETUID SYS_setuid
#endif

extern char **environ;

static int marker_fd = 3;

/* Append the record of a failure to the marker and exit 127 (SHIM_STATUS_
 * NOEXEC). The text is escaped as cmd.c's records are. */
static void __attribute__ ((noreturn, format (printf, 1, 2)))
fail (const char *fmt, ...)
{
    char why[400], rec[1024];
    size_t n = 0;
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (why, sizeof (why), fmt, ap);
    va_end (ap);
    n = (size_t)snprintf (rec, sizeof (rec), "{\"status\":%d,\"error\":\"",
                          SHIM_STATUS_NOEXEC);
    for (const unsigned char *p = (const unsigned char *)why;
         *p && n + 10 < sizeof (rec); p++) {
        if (*p == '"' || *p == '\\') {
            rec[n++] = '\\';
            rec[n++] = (char)*p;
        } else if (*p < 0x20)
            n += (size_t)snprintf (rec + n, sizeof (rec) - n, "\\u%04x", *p);
        else
            rec[n++] = *p < 0x80 ? (char)*p : '?';
    }
    rec[n++] = '"';
    rec[n++] = '}';
    rec[n++] = '\n';
    (void)!write (marker_fd, rec, n);
    _exit (127);
}

static unsigned long number (const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul (s, &end, 10);
    if (!*s || *end || errno || v >= 4294967295ul)
        fail ("cairn-shim --drop: bad %s \"%s\"", what, s);
    return v;
}

/* Give up root for uid, gid and groups, for good: groups first, then the
 * gids, then the uids (the first two need the privilege the third gives
 * up); then every capability explicitly (leaving root clears them only
 * without the securebits that say otherwise); then check that the change
 * took and that root cannot be had back. */
static void user_drop (
    uid_t uid, gid_t gid, const char *name, const gid_t *groups, int ngroups)
{
    struct __user_cap_header_struct hdr = {.version =
                                               _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];
    uid_t ru, eu, su;
    gid_t rg, eg, sg;

    memset (none, 0, sizeof (none));
    if (syscall (SYS_SETGROUPS, (long)ngroups, groups) < 0)
        fail ("setgroups %s: %s", name, strerror (errno));
    if (syscall (SYS_SETRESGID, (long)gid, (long)gid, (long)gid) < 0)
        fail ("setresgid %u: %s", (unsigned)gid, strerror (errno));
    if (syscall (SYS_SETRESUID, (long)uid, (long)uid, (long)uid) < 0)
        fail ("setresuid %u: %s", (unsigned)uid, strerror (errno));
    if (syscall (SYS_capset, &hdr, none) < 0)
        fail ("capset %u: %s", (unsigned)uid, strerror (errno));
    if (getresuid (&ru, &eu, &su) < 0 || getresgid (&rg, &eg, &sg) < 0)
        fail ("getresuid %u: %s", (unsigned)uid, strerror (errno));
    if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid ||
        sg != gid)
        fail ("setresuid %u: the ids did not all change", (unsigned)uid);
    if (uid != 0 && syscall (SYS_SETUID, 0L) == 0)
        fail ("setresuid %u: root could be regained", (unsigned)uid);
}

/* "-" or "G1,G2,...": into groups (NGROUPS_MAX of room). */
static int groups_parse (const char *s, gid_t *groups)
{
    int n = 0;
    if (strcmp (s, "-") == 0)
        return 0;
    for (const char *p = s; *p;) {
        char *end;
        errno = 0;
        unsigned long g = strtoul (p, &end, 10);
        if (end == p || errno || g >= 4294967295ul || n >= NGROUPS_MAX ||
            (*end && *end != ','))
            fail ("cairn-shim --drop: bad groups \"%.64s\"", s);
        groups[n++] = (gid_t)g;
        p = *end ? end + 1 : end;
    }
    return n;
}

int shim_drop_main (int argc, char *argv[])
{
    static gid_t groups[NGROUPS_MAX];
    size_t nenv = 0;

    if (argc < 9 || strcmp (argv[7], "--") != 0)
        fail ("cairn-shim --drop: usage");
    marker_fd = (int)number (argv[2], "descriptor");
    pid_t ppid = (pid_t)number (argv[3], "parent pid");
    uid_t uid = (uid_t)number (argv[4], "uid");
    gid_t gid = (gid_t)number (argv[5], "gid");
    int ngroups = groups_parse (argv[6], groups);
    char **cmd = argv + 8;
    /* Our environment, past each entry's mark: only the pointers move,
     * the strings stay as the exec left them. */
    for (; environ[nenv]; nenv++) {
        if (environ[nenv][0] != SHIM_DROP_ENV_MARK)
            fail ("cairn-shim --drop: environment entry %zu unmarked", nenv);
        environ[nenv]++;
    }
    if (nenv < 3)
        fail ("cairn-shim --drop: no name, cwd and home in the environment");
    const char *name = environ[0];
    const char *cwd = environ[1];
    const char *home = environ[2];
    char **env = environ + 3;

    user_drop (uid, gid, name, groups, ngroups);
    /* Changing ids cleared a death signal: a lone shim's command dies with
     * it, so set it again, and go if the shim died before it was set. */
    if (ppid > 0 &&
        (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != ppid))
        _exit (127);
    /* A test's stand-in for the user's SIGSTOP in this window (cairn-shim(8),
     * ENVIRONMENT): it stops only the user's own command. */
    for (char **e = env; *e; e++)
        if (strcmp (*e, TESTENV_STOP_AT_DROP "=1") == 0)
            raise (SIGSTOP);
    if (*cwd && chdir (cwd) < 0)
        fail ("chdir %s: %s", cwd, strerror (errno));
    /* No cwd: the user's home, as the user, else / with a word on the
     * command's stderr, as login(1) and Slurm say it. */
    if (!*cwd && *home && chdir (home) < 0) {
        dprintf (2, "cairn-shim: chdir %s: %s: starting in /\n", home,
                 strerror (errno));
        if (chdir ("/") < 0)
            fail ("chdir /: %s", strerror (errno));
    }
    if (fcntl (marker_fd, F_SETFD, FD_CLOEXEC) < 0)
        fail ("cairn-shim --drop: descriptor %d: %s", marker_fd,
              strerror (errno));
    /* execvpe looks the command up in our own environment's PATH: make
     * that the job's, or SHIM_DEFAULT_PATH when it has none, as cmd.c
     * does for root's commands; the command gets env alone. */
    static char path[PATH_MAX + 8] = "PATH=" SHIM_DEFAULT_PATH;
    char *lookup[] = {path, NULL};
    for (char **e = env; *e; e++)
        if (strncmp (*e, "PATH=", 5) == 0)
            snprintf (path, sizeof (path), "%s", *e);
    environ = lookup;
    execvpe (cmd[0], cmd, env);
    fail ("execvp %s: %s", cmd[0], strerror (errno));
}
