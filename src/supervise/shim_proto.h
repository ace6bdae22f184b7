/* shim_proto.h - the contract between cairnd and cairn-shim.
 *
 * cairn-shim is a separate, libc-only program; this header is all it shares
 * with cairnd, so everything here must stay header-only and libc-only.
 * cairnd runs it once, as the node's supervisor (`cairn-shim --spawner`,
 * exec/spawner.h), and asks it for each command with the command line
 * below; the supervisor then does for that command what a lone
 * `cairn-shim ...` does for its one command (the mode kept for running a
 * command by hand), and reports what the exit codes below say through
 * spawner_proto.h. "The shim" below is either.
 *
 * Usage:
 *   CAIRN_EXECID=<uuid> cairn-shim --exitdir DIR [--cwd DIR | --home DIR]
 *                       [--max-output BYTES] [--user UID [--groups GID,...]]
 *                       [--rlimit nofile|nproc=SOFT:HARD]...
 *                       [--cgroup DIR [--cgroup-limit FILE=N]...]
 *                       -- COMMAND [ARGS]
 *
 * --home DIR, without --cwd: the command starts in DIR, or in / when it
 * (its user, with --user) cannot enter DIR; with --user its stderr then
 * says "cairn-shim: chdir DIR: <strerror>: starting in /". cairnd gives a
 * job's command without a cwd its user's home so. With neither, the
 * command starts where the shim is.
 *
 * --rlimit nofile=SOFT:HARD, nproc=SOFT:HARD (each at most once): the
 * command's RLIMIT_NOFILE or RLIMIT_NPROC, hard at most HARD (never
 * raised past the shim's own), soft at most SOFT; set after the cgroup,
 * before the drop to --user (so that the user cannot raise it again).
 * Error: "setrlimit nofile: <strerror>" (a marker: so are the next).
 *
 * --cgroup DIR: the command's own cgroup v2 directory; the shim makes it,
 * the command's process joins it (after the marker, before dropping to
 * --user; the shim stays outside), and when that process ends the shim
 * kills the rest of it (cgroup.kill, also on a relayed SIGKILL) and
 * removes it. --cgroup-limit pids.max=N or memory.max=N (each at most
 * once) is written into DIR before anything joins it. Errors: "cgroup
 * DIR: ...", "cgroup limit DIR/FILE: ...", "join cgroup DIR: ...".
 *
 * --max-output N (N > 0) keeps each output file at most N + 1 bytes on disk
 * while the command runs. Under the supervisor the command writes into
 * pipes the supervisor drains into the files, keeping the first N + 1
 * bytes (shim/cmd.c shim_cmd_pipes); a lone shim looks every 2 ms to 30 s
 * (more often while the command writes past the cap) and cuts the file
 * back to its first N + 1 bytes. A file longer than N therefore means
 * "there was more"; what is past N is lost. Without it the files grow
 * unbounded.
 *
 * --user UID (numeric) runs the command as that user; the shim itself stays
 * root, to supervise, create the marker and write the exit record. With
 * --groups (numeric gids, the primary first), as cairnd passes them after
 * its own NSS lookup (which also set HOME, USER, LOGNAME, SHELL), the shim
 * looks nothing up. Without it, before the command's process starts, the
 * shim looks UID up in /etc/passwd and
 * its groups in /etc/group, read directly (no NSS: the shim is static, and
 * NSS modules cannot be loaded into it safely), and sets HOME, USER,
 * LOGNAME and SHELL from the entry, each unless the environment has it.
 * The command's process then takes, in order: stdio, marker, cgroup, an
 * exec of `cairn-shim --drop` (shim/drop.c: from here on nothing it does
 * keeps the supervisor waiting), setgroups, setresgid, setresuid, capset
 * (to none), a check that the ids are all the user's and that setuid(0)
 * fails, then chdir (with the user's permissions) and exec (the command
 * looked up in the job's PATH, as the user); --drop appends the record
 * of its own failures to the marker. Without --user: stdio, marker,
 * cgroup, chdir, exec. UID equal
 * to the shim's own (real and effective) uid changes nothing; any other
 * UID needs a root shim. Failures (status 32512, nothing run):
 *   "--user N: the shim is not root"         no marker
 *   "no user with uid N in /etc/passwd"      no marker, no output files
 *   "user NAME: more than 65536 groups in /etc/group", "/etc/passwd: ...",
 *   "/etc/group: <strerror>"                 the same
 *   "exec cairn-shim --drop: <strerror>"     marker (so are the next ones)
 *   "setgroups NAME: <strerror>"
 *   "setresgid GID: <strerror>", "setresuid N: <strerror>",
 *   "capset N: <strerror>", "getresuid N: <strerror>",
 *   "setresuid N: the ids did not all change",
 *   "setresuid N: root could be regained"
 *   "chdir DIR: <strerror>"                  e.g. Permission denied
 *   "execvp NAME: <strerror>"                not found, or not executable
 *
 * The command's process leads a session and process group of its own
 * (setsid, its first act): cairnd and the shim signal the command's group
 * by its pid. COMMAND is looked up as execvp(3) does, in the PATH of the
 * command's own environment (the one it is given, never the shim's), or
 * in SHIM_DEFAULT_PATH when that has none, after the drop to --user: with
 * the user's permissions.
 * A UID that is not a number below 4294967295 is a usage error (exit 2).
 *
 * CAIRN_EXECID must be a canonical lowercase UUID (it becomes part of file
 * names); the shim refuses anything else. Exit codes of the shim itself:
 *   0  the exit record was written (whatever the command did)
 *   2  usage error or bad CAIRN_EXECID: nothing was written, nothing was run
 *   3  the exit record could not be written (reason on stderr); the marker
 *      tells whether the command was started
 *   4  the execid was used already (its marker or exit file exists):
 *      nothing was run and no file was touched
 *
 * Files in DIR (<statedir>/exits resolved: exitdir.h), all mode 0600:
 *   <execid>.started  the marker, created (O_EXCL) by the command's process
 *                     once its stdio is set, before it drops to --user's
 *                     ids, chdirs and execs: "the command may have run".
 *                     It holds "PID BOOTNS\n": the process's pid and
 *                     CLOCK_BOOTTIME in ns after its start, so that a
 *                     restarted cairnd finds it, a zombie too (empty if
 *                     the process died between creating and writing it).
 *                     Once the process has ended (a zombie still), the
 *                     shim appends the exit record to it, in one write:
 *                     a marker with a record is "ran, and ended so";
 *                     without one after a crash, "started, outcome
 *                     lost": never run it again. An existing marker also
 *                     makes the shim refuse to start the command again.
 *   <execid>          exit file: the record alone, written to <execid>.tmp
 *                     then renamed, for a command whose process never
 *                     made its marker (nothing started, or a failure
 *                     before it), and by older shims for every command
 *   <execid>.out      the command's stdout
 *   <execid>.err      the command's stderr
 *   <execid>.tmp      temporary for the exit file
 * A reader takes the marker's record, else the exit file's. The record
 * rides in the marker rather than in a file of its own: a create, a rename
 * and an unlink less per command, most of it on the supervisor's serial
 * path (BENCHMARKS.md, sixth pass).
 *
 * In the marker, the record starts at the first '{' (the PID line has
 * none) and is whole only with its final '\n': a reader that finds no
 * '{', or no '\n' after it, has no record there (yet). The record is one
 * line of JSON:
 *   {"status":N}                 N = the command's wait(2) status
 *   {"status":N,"out":O,"err":E} ... with --max-output: O and E are the
 *                                sizes in bytes of <execid>.out and .err
 *                                once the command's process ended (after
 *                                the last cut), so that a reader may skip
 *                                an empty one without opening it
 *   {"status":N,"error":"..."}   the shim could not run the command (exec,
 *                                chdir, --user, fork, marker or output file
 *                                failure);
 *                                N is 32512 (exit code 127), the error is
 *                                e.g. "execvp nosuchcmd: No such file or
 *                                directory". Non-ASCII bytes are written as
 *                                '?' so the record is always valid JSON.
 *
 * Signals, under the supervisor: cairnd signals the command's process
 * group through the command's pidfd (PIDFD_SIGNAL_PROCESS_GROUP; before
 * Linux 6.9, kill(-pid) while the pidfd shows the leader not yet exited),
 * and the supervisor SIGKILLs what is left of the group at its end. Under
 * a lone shim, cairnd would signal it only through its pidfd:
 *   pidfd_send_signal (pidfd, SHIM_RELAY_SIGNAL, &info, 0)
 * with info.si_code = SI_QUEUE and info.si_value.sival_int = the signal to
 * deliver (any signal, SIGKILL and SIGSTOP included). The shim sends it to
 * the command's whole process group, so SIGKILL reaches the command without
 * killing the shim. When the command's process exits, the shim SIGKILLs
 * what is left of its group before writing the exit record, so stragglers
 * cannot outlive the rank; processes that left the group (setsid, setpgid)
 * escape both. If the shim is killed, PR_SET_PDEATHSIG kills the command's
 * process (not the rest of its group). The plain signals in SHIM_PLAIN_SIGNALS
 * sent straight to the shim are relayed to the group as themselves. SIGRTMIN is
 * a libc value: cairnd and the shim must be built against the same libc.
 */
#ifndef CAIRN_SHIM_PROTO_H
#define CAIRN_SHIM_PROTO_H

/* Where COMMAND is looked up when its environment has no PATH. */
#define SHIM_DEFAULT_PATH "/usr/bin:/bin"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define SHIM_RELAY_SIGNAL (SIGRTMIN + 4)

/* Signals the shim relays to the group as themselves. */
#define SHIM_PLAIN_SIGNALS                                                     \
    SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT

#define SHIM_ENV_EXECID "CAIRN_EXECID"

#define SHIM_SUFFIX_STARTED ".started"
#define SHIM_SUFFIX_OUT ".out"
#define SHIM_SUFFIX_ERR ".err"
#define SHIM_SUFFIX_TMP ".tmp"

/* Length of a canonical UUID, and room for "<uuid>.started\0". */
#define SHIM_EXECID_LEN 36
#define SHIM_NAME_MAX (SHIM_EXECID_LEN + 16)

/* Wait status the exit record reports when the command could not be run. */
#define SHIM_STATUS_NOEXEC (127 << 8)

/* Fill set with the signals the shim waits for (SIGCHLD, the relay signal,
 * the plain ones) plus SIGPIPE, which it keeps blocked. The launcher spawns
 * the shim with these already blocked, so that none can kill it before it
 * blocks them itself. The command starts with an empty mask. */
static inline void shim_sigset (sigset_t *set)
{
    const int sigs[] = {SIGCHLD, SIGPIPE, SHIM_PLAIN_SIGNALS};

    sigemptyset (set);
    sigaddset (set, SHIM_RELAY_SIGNAL);
    for (size_t i = 0; i < sizeof (sigs) / sizeof (sigs[0]); i++)
        sigaddset (set, sigs[i]);
}

/* The wait(2) status of an exited process, from what waitid says of it
 * (cairnd on a pidfd, the supervisor on its children). */
static inline int shim_wait_status (const siginfo_t *si)
{
    if (si->si_code == CLD_EXITED)
        return (si->si_status & 0xff) << 8;
    if (si->si_code == CLD_DUMPED)
        return (si->si_status & 0x7f) | 0x80;
    return si->si_status & 0x7f; /* CLD_KILLED */
}

/* True if s is 36 characters of lowercase hex and dashes, 8-4-4-4-12.
 * Shared by the shim and cairnd (see uuid_is_canonical() in procfs.h). */
static inline bool shim_execid_valid (const char *s)
{
    if (!s || strnlen (s, SHIM_EXECID_LEN + 1) != SHIM_EXECID_LEN)
        return false;
    for (int i = 0; i < SHIM_EXECID_LEN; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

/* Read at most len - 1 bytes of the small file path (relative to dirfd;
 * AT_FDCWD for an absolute path; a symlink is not followed) into buf,
 * NUL-terminated. Returns the bytes read, or -1 with errno. */
static inline ssize_t
shim_read_small (int dirfd, const char *path, char *buf, size_t len)
{
    int fd = openat (dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n;
    int e;

    if (fd < 0)
        return -1;
    while ((n = read (fd, buf, len - 1)) < 0 && errno == EINTR)
        ;
    e = errno;
    close (fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    return n;
}

/* Append the exit record buf[0..len) (its final '\n' included) to the
 * marker called name in dirfd, in one write: a reader takes it only whole.
 * Returns 0, or -1 with errno (ENOENT: no marker; a short write is EIO and
 * leaves no whole record there). */
static inline int
shim_record_append (int dirfd, const char *name, const char *buf, size_t len)
{
    int fd = openat (dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n;
    int e;

    if (fd < 0)
        return -1;
    while ((n = write (fd, buf, len)) < 0 && errno == EINTR)
        ;
    e = n < 0 ? errno : EIO;
    if (close (fd) < 0 && n == (ssize_t)len)
        return -1;
    if (n != (ssize_t)len) {
        errno = e;
        return -1;
    }
    return 0;
}

/* Write the exit file called name in dirfd with buf[0..len): to tmp first,
 * then renamed into place, never over an existing one, so that a reader
 * sees no file or a whole one. Returns 0, or -1 with errno (EEXIST: there
 * is one already, and it stands); tmp is gone either way. */
static inline int shim_exitfile_put (
    int dirfd, const char *name, const char *tmp, const char *buf, size_t len)
{
    size_t off = 0;
    int e, fd = openat (dirfd, tmp,
                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                        0600);
    if (fd < 0)
        return -1;
    while (off < len) {
        ssize_t n = write (fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            e = n < 0 ? errno : EIO;
            close (fd);
            goto error;
        }
        off += (size_t)n;
    }
    if (close (fd) < 0 ||
        renameat2 (dirfd, tmp, dirfd, name, RENAME_NOREPLACE) < 0) {
        e = errno;
        goto error;
    }
    return 0;
error:
    unlinkat (dirfd, tmp, 0);
    errno = e;
    return -1;
}

#endif /* CAIRN_SHIM_PROTO_H */
