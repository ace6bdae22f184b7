/* cmd.c - one command under cairn-shim's supervision (cmd.h; the
 * contract is exec/shim_proto.h).
 *
 * The command's process is made with vfork and takes its own steps up to
 * the exec (stdio, start marker, cgroup, chdir); the supervising process
 * drains the command's output pipes into its files (a lone shim cuts the
 * files the command writes, by name), kills what is left of the command's
 * group and cgroup once it has exited, and writes its exit file. With
 * --user the supervising process stays root, so that it can create the
 * start marker and write the exit file in a root-only directory; the
 * command's process, after its root steps, execs `cairn-shim --drop`
 * (drop.c), which gives root up, chdirs and execs the command: nothing
 * the user can do to a process of theirs (stop it, hang its chdir) keeps
 * the vfork, and so the supervisor, waiting.
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
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervise/shim_proto.h"
#include "journal/crashpoint.h"
#include "shim/cmd.h"
#include "shim/drop.h"
#include "shim/outpipe.h"
#include "shim/session.h"
#include "shim/userdb.h"

/* What the command's process failed to do before exec. It shares our
 * memory until its exec or _exit (vfork), and writes the step into our
 * struct report before an _exit; a report still zero once vfork returns
 * means the exec succeeded. In the order the steps are taken (STEP_DROP
 * only with --user, STEP_CHDIR and STEP_EXEC only without: drop.c takes
 * them then, and reports in the marker itself). */
enum step {
    STEP_STDIO = 1,
    STEP_MARKER,
    STEP_CGROUP, /* joining --cgroup */
    STEP_NOFILE, /* --rlimit nofile */
    STEP_NPROC,  /* --rlimit nproc */
    STEP_DROP,   /* exec of cairn-shim --drop */
    STEP_CHDIR,
    STEP_EXEC,
};

struct report {
    int step;
    int errnum;
};

struct shim {
    const char *exitdir;
    const char *cwd;
    const char *home; /* --home: without --cwd, start there, or in / */
    const char *execid;
    char **argv;
    bool as_user;        /* --user given and not the shim's own uid */
    uid_t uid;           /* --user */
    gid_t gid;           /* the user's primary group */
    const char *user;    /* the user's name */
    const gid_t *groups; /* the user's groups, ngroups of them */
    int ngroups;
    const char *cgroup;    /* --cgroup: the command's own cgroup v2 directory */
    const char *limits[2]; /* --cgroup-limit FILE=N: pids.max, memory.max */
    int nlimits;
    struct rlimit rlim[2]; /* --rlimit nofile=S:H, nproc=S:H: caps */
    bool rlim_set[2];
    int cgfd;        /* its cgroup.procs, open from before the vfork
                        until it returns, else -1 */
    int dirfd;       /* --exitdir, or -1 */
    bool dirfd_kept; /* dirfd is the supervisor's kept one: not ours */
    unsigned long long max_output; /* 0: no cap */
    long long out_size, err_size;  /* at the end, for the exit record; -1 */
    int pipe_rd[2];                /* the supervisor's end of the command's
                                    * stdout and stderr pipes, or -1 (a lone
                                    * shim's command writes its files) */
    int pipe_wr[2];                /* the command's ends, until its start */
    bool piped;                    /* shim_cmd_pipes: output through them */
    pid_t child;                   /* the command's process, or 0 */
    bool marked;                   /* it got past making its marker: the
                                      record goes there (shim_proto.h) */
    int leftover;                  /* processes of its session still there
                                      at its end (shim_cmd_exited) */
    bool drained;                  /* shim_cmd_drain done */
    char **envp;                   /* the command's environment, or NULL:
                                    * environ as it is at the exec */
    char **sh_argv;                /* /bin/sh, the file, argv[1...]: for a
                                    * file without #! (exec_lookup) */
    gid_t *given;                  /* --groups, allocated */
    char **envp_own;               /* envp with the user's variables added,
                                    * and those variables: allocated */
    char *env_own[4];
    char *pwbuf;        /* the user's passwd entry, allocated */
    gid_t *pwgroups;    /* the user's groups from /etc/group */
    char user_name[32]; /* "uid N", with --groups */
    char **drop_argv;   /* --user: `cairn-shim --drop ...` (drop.c) */
    char *drop_groups;  /* ... its GROUPS */
    char drop_nums[4][24];
    char **drop_envp;  /* ... its environment: the name, the cwd, then the
                        * command's, each after SHIM_DROP_ENV_MARK */
    char *drop_envbuf; /* ... its strings */
    char error[400];   /* why the command could not run, or "" */
    bool wrote;        /* write_exitfile wrote a record without "error" */
    int wrote_status;  /* ... with this status */
    char name_out[SHIM_NAME_MAX];
    char name_err[SHIM_NAME_MAX];
    char name_started[SHIM_NAME_MAX];
    char name_tmp[SHIM_NAME_MAX];
};

_Thread_local pid_t shim_kill_at_drop;
bool shim_fresh;
struct rlimit shim_nofile = {RLIM_INFINITY, RLIM_INFINITY};

/* Our own executable, for `cairn-shim --drop` (shim_cmd_init). */
static int self_exe = -1;

/* Say in s->error why the command cannot run. Returns -1. */
static int __attribute__ ((format (printf, 2, 3)))
shim_errorf (struct shim *s, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (s->error, sizeof (s->error), fmt, ap);
    va_end (ap);
    return -1;
}

static int usage (const char *why)
{
    fprintf (stderr,
             "cairn-shim: %s\n"
             "Usage: CAIRN_EXECID=UUID cairn-shim --exitdir DIR"
             " [--cwd DIR | --home DIR]"
             " [--max-output BYTES] [--user UID [--groups GID,...]]"
             " [--rlimit nofile|nproc=SOFT:HARD]..."
             " [--cgroup DIR [--cgroup-limit FILE=N]...]"
             " -- COMMAND [ARGS...]\n",
             why);
    return -1;
}

/* --groups G,G,...: the user's groups as cairnd resolved them (through
 * NSS, which this static program cannot use: userdb.h), the primary one
 * first. Then --user needs no lookup here. */
static int parse_groups (struct shim *s, const char *arg)
{
    const char *p = arg;
    int n = 0;
    size_t max = 1;

    for (const char *q = arg; *q; q++)
        max += *q == ',';
    if (max > NGROUPS_MAX)
        return -1;
    free (s->given);
    if (!(s->given = malloc (max * sizeof (gid_t))))
        return -1;

    while (*p) {
        char *end;
        unsigned long long g;
        if (!(*p >= '0' && *p <= '9') || n == NGROUPS_MAX)
            return -1;
        errno = 0;
        g = strtoull (p, &end, 10);
        if (errno || g >= (gid_t)-1 || (*end && *end != ','))
            return -1;
        s->given[n++] = (gid_t)g;
        p = *end ? end + 1 : end;
    }
    if (n == 0)
        return -1;
    s->groups = s->given;
    s->ngroups = n;
    s->gid = s->given[0];
    return 0;
}

/* What --rlimit may cap, in the order of s->rlim. */
static const struct {
    const char *name;
    int resource;
} rlimits[2] = {{"nofile", RLIMIT_NOFILE}, {"nproc", RLIMIT_NPROC}};

/* --rlimit nofile=S:H or nproc=S:H (numbers, S <= H): at most these,
 * whatever the shim has. */
static int rlimit_parse (struct shim *s, const char *arg)
{
    for (size_t r = 0; r < 2; r++) {
        size_t n = strlen (rlimits[r].name);
        unsigned long long soft, hard;
        char *end;
        if (strncmp (arg, rlimits[r].name, n) != 0 || arg[n] != '=' ||
            !(arg[n + 1] >= '0' && arg[n + 1] <= '9'))
            continue;
        errno = 0;
        soft = strtoull (arg + n + 1, &end, 10);
        if (errno || *end != ':' || !(end[1] >= '0' && end[1] <= '9'))
            return -1;
        hard = strtoull (end + 1, &end, 10);
        if (errno || *end || soft > hard || hard >= RLIM_INFINITY)
            return -1;
        s->rlim[r].rlim_cur = (rlim_t)soft;
        s->rlim[r].rlim_max = (rlim_t)hard;
        s->rlim_set[r] = true;
        return 0;
    }
    return -1;
}

/* --cgroup-limit pids.max=N or memory.max=N (N digits, > 0): the only
 * files it may write, so that no argument names another. */
static int limit_parse (struct shim *s, const char *arg)
{
    static const char *const files[] = {"pids.max=", "memory.max="};
    for (size_t f = 0; f < 2; f++) {
        size_t n = strlen (files[f]);
        const char *v = arg + n;
        if (strncmp (arg, files[f], n) != 0 || !*v || *v == '0' ||
            strspn (v, "0123456789") != strlen (v) || strlen (v) > 20)
            continue;
        if (s->nlimits == 2)
            return -1;
        s->limits[s->nlimits++] = arg;
        return 0;
    }
    return -1;
}

static int parse_args (struct shim *s, int argc, char *argv[])
{
    int i = 1;

    while (i < argc) {
        if (!strcmp (argv[i], "--")) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            return usage ("missing argument or command");
        if (!strcmp (argv[i], "--exitdir"))
            s->exitdir = argv[i + 1];
        else if (!strcmp (argv[i], "--cwd"))
            s->cwd = argv[i + 1];
        else if (!strcmp (argv[i], "--home"))
            s->home = argv[i + 1];
        else if (!strcmp (argv[i], "--max-output")) {
            char *end;
            errno = 0;
            s->max_output = strtoull (argv[i + 1], &end, 10);
            if (errno || end == argv[i + 1] || *end || argv[i + 1][0] == '-' ||
                s->max_output == 0 || s->max_output >= (1ULL << 62))
                return usage ("--max-output must be a number of bytes > 0");
        } else if (!strcmp (argv[i], "--user")) {
            char *end;
            unsigned long long uid;
            errno = 0;
            uid = strtoull (argv[i + 1], &end, 10);
            /* (uid_t)-1 is no uid: it means "unchanged" to setresuid. */
            if (errno || end == argv[i + 1] || *end ||
                !(argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') ||
                uid >= (uid_t)-1)
                return usage ("--user must be a numeric uid");
            s->as_user = true;
            s->uid = (uid_t)uid;
        } else if (!strcmp (argv[i], "--cgroup")) {
            if (argv[i + 1][0] != '/')
                return usage ("--cgroup must be an absolute path");
            s->cgroup = argv[i + 1];
        } else if (!strcmp (argv[i], "--cgroup-limit")) {
            if (limit_parse (s, argv[i + 1]) < 0)
                return usage ("--cgroup-limit must be pids.max=N or "
                              "memory.max=N, N a number > 0");
        } else if (!strcmp (argv[i], "--rlimit")) {
            if (rlimit_parse (s, argv[i + 1]) < 0)
                return usage ("--rlimit must be nofile=SOFT:HARD or "
                              "nproc=SOFT:HARD, SOFT <= HARD");
        } else if (!strcmp (argv[i], "--groups")) {
            if (parse_groups (s, argv[i + 1]) < 0)
                return usage ("--groups must be numeric gids, comma "
                              "separated, the primary one first");
        } else
            return usage ("unknown option");
        i += 2;
    }
    if (!s->exitdir || !s->exitdir[0])
        return usage ("--exitdir is required");
    if (i >= argc)
        return usage ("no command given");
    s->argv = &argv[i];

    if (!shim_execid_valid (s->execid))
        return usage ("CAIRN_EXECID must be a canonical lowercase UUID");
    snprintf (s->name_out, SHIM_NAME_MAX, "%s" SHIM_SUFFIX_OUT, s->execid);
    snprintf (s->name_err, SHIM_NAME_MAX, "%s" SHIM_SUFFIX_ERR, s->execid);
    snprintf (s->name_started, SHIM_NAME_MAX, "%s" SHIM_SUFFIX_STARTED,
              s->execid);
    snprintf (s->name_tmp, SHIM_NAME_MAX, "%s" SHIM_SUFFIX_TMP, s->execid);
    return 0;
}
void shim_signals_default (void)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};

    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        /* An all-zero kernel sigaction is SIG_DFL whatever the
         * architecture's layout of the struct. */
        if (sigaction (sig, &dfl, NULL) < 0 && errno == EINVAL) {
            unsigned long ksa[8] = {0};
            syscall (SYS_rt_sigaction, sig, ksa, NULL, NSIG / 8);
        }
    }
}

/* In the command's process: leave why in the shim's memory (vfork) and go.
 * volatile: the compiler must not drop a store to memory this process
 * never reads again. */
static void __attribute__ ((noreturn))
child_fail (volatile struct report *r, enum step step)
{
    r->errnum = errno;
    r->step = step;
    _exit (127);
}

/* The command's process's fds, set up by start(), and where it reports. */
struct child_fds {
    int out, err, null;
    volatile struct report *rep; /* in the shim's frame (vfork) */
    pid_t shim;
};

/* Digits of v at the end of buf[0..len), which is where they start. */
static char *put_ull (char *end, unsigned long long v)
{
    do
        *--end = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    return end;
}

/* The marker's content (shim_proto.h): "PID BOOTNS\n", our pid and the
 * boot clock now, after our start. Best effort: an empty marker still
 * says "may have run". No stdio: we are a vfork child. */
static void marker_write (int fd)
{
    struct timespec ts;
    char buf[64], *end = buf + sizeof (buf), *p;

    if (clock_gettime (CLOCK_BOOTTIME, &ts) < 0)
        return;
    *--end = '\n';
    p = put_ull (end, (unsigned long long)ts.tv_sec * 1000000000ull +
                          (unsigned long long)ts.tv_nsec);
    *--p = ' ';
    p = put_ull (p, (unsigned long long)getpid ());
    (void)!write (fd, p, (size_t)(buf + sizeof (buf) - p));
}

/* The command's own PATH: envp's, not ours (which is cairnd's), or
 * SHIM_DEFAULT_PATH if it has none. No allocation: a vfork child. */
static const char *env_path (char **envp)
{
    for (; envp && *envp; envp++)
        if (strncmp (*envp, "PATH=", 5) == 0)
            return *envp + 5;
    return SHIM_DEFAULT_PATH;
}

/* A file the kernel would not exec (no #!, ENOEXEC): run it with
 * /bin/sh, as execvp does. sh_argv was made before the vfork. */
static void exec_script (struct shim *s, char *file, char **envp)
{
    if (!s->sh_argv)
        return;
    s->sh_argv[1] = file;
    execve (s->sh_argv[0], s->sh_argv, envp);
    errno = ENOEXEC;
}

/* execvpe, but looking argv[0] up in the command's own PATH (env_path),
 * not in ours, and as the command's user (after the drop, the kernel
 * checks every directory and file with the user's permissions). The
 * rules are execvp's: a name with a '/' is not looked up; an empty
 * element is the working directory; EACCES from any element wins over a
 * later ENOENT; an error other than "not here" ends the search. In the
 * command's process, between vfork and exec: system calls and the stack
 * only. Returns only on failure, errno set. */
static void exec_lookup (struct shim *s, char **envp)
{
    char *file = s->argv[0], buf[PATH_MAX];
    size_t flen = strlen (file);
    bool eacces = false;
    const char *p, *end;

    if (flen == 0) {
        errno = ENOENT;
        return;
    }
    if (strchr (file, '/')) {
        execve (file, s->argv, envp);
        if (errno == ENOEXEC)
            exec_script (s, file, envp);
        return;
    }
    for (p = env_path (envp);; p = end + 1) {
        size_t dlen;
        end = strchrnul (p, ':');
        dlen = (size_t)(end - p);
        if (dlen + 1 + flen + 1 > sizeof (buf))
            errno = ENAMETOOLONG;
        else {
            memcpy (buf, p, dlen);
            if (dlen > 0)
                buf[dlen++] = '/';
            memcpy (buf + dlen, file, flen + 1);
            execve (buf, s->argv, envp);
        }
        switch (errno) {
        case EACCES:
            eacces = true;
            break;
        case ENOENT:
        case ENOTDIR:
        case ENAMETOOLONG:
        case ELOOP:
        case ESTALE:
        case ENODEV:
        case ETIMEDOUT:
            break;
        case ENOEXEC:
            exec_script (s, buf, envp);
            return;
        default:
            return;
        }
        if (*end == '\0')
            break;
    }
    errno = eacces ? EACCES : ENOENT;
}

/* In the command's process, between vfork and exec. vfork, not fork: it
 * skips copying the shim's page tables and the copy-on-write faults that
 * follow (measurably cheaper per spawn). This is safe here because the
 * child only makes system calls, never returns from spawn_child(), never
 * runs a signal handler (the shim installs none) and ends in exec or
 * _exit; the errno and stack memory it shares with the suspended parent
 * are not relied on, but for the report it leaves on failure. */
static void __attribute__ ((noreturn))
child_run (struct shim *s, const struct child_fds *f)
{
    sigset_t empty;
    int fd;

    /* A session and group of its own, led by the command: it can signal
     * neither its supervisor nor another command through a group or
     * session it shares with them, and no job's terminal, job control or
     * SIGHUP reaches another. A vfork child leads no group yet, so setsid
     * cannot fail; cairnd and the supervisor signal the group by its pid. */
    setsid ();
    /* Under a lone shim, the command dies with the shim: nobody else would
     * record what it does. Under the supervisor (shim_fresh) it outlives
     * it: cairnd, a subreaper, inherits it and sees it through. Either way,
     * a command whose supervisor died before this point never runs. */
    if (!shim_fresh)
        prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () != f->shim)
        _exit (127);
    /* A fresh process: default dispositions (ignored signals would survive
     * exec) and nothing blocked, whatever the shim was started with (a
     * supervisor's commands have them already: shim_fresh). */
    if (!shim_fresh)
        shim_signals_default ();
    sigemptyset (&empty);
    sigprocmask (SIG_SETMASK, &empty, NULL);
    if (shim_nofile.rlim_cur != RLIM_INFINITY)
        (void)setrlimit (RLIMIT_NOFILE, &shim_nofile);
    if (dup2 (f->null, 0) < 0 || dup2 (f->out, 1) < 0 || dup2 (f->err, 2) < 0)
        child_fail (f->rep, STEP_STDIO);
    /* The "the command may have run" promise. O_EXCL: an execid runs at
     * most once. Made before the user's ids are taken (the exit dir is
     * root's) and so before the chdir too, with or without --user: a
     * chdir that fails leaves a marker, but also an exit file that says
     * why nothing ran. */
    fd = openat (s->dirfd, s->name_started,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        child_fail (f->rep, STEP_MARKER);
    marker_write (fd);
    if (!s->as_user)
        close (fd);
    if (shim_kill_at_drop > 0) /* crash point "shim.drop.before" */
        kill (shim_kill_at_drop, SIGKILL);
    /* Into its own cgroup while still root (the shim stays outside it, so
     * that cgroup.kill spares the shim): what it starts stays there,
     * whatever session or group it makes. */
    if (s->cgfd >= 0 && write (s->cgfd, "0\n", 2) != 2)
        child_fail (f->rep, STEP_CGROUP);
    /* --rlimit: lowered while root, so that the user cannot raise them
     * again (a hard limit is raised by privilege only); never raised past
     * ours. An RLIMIT_NPROC the user is over already fails the command's
     * exec after the drop (EAGAIN), as a login would. */
    for (int r = 0; r < 2; r++) {
        struct rlimit rl;
        if (!s->rlim_set[r])
            continue;
        if (getrlimit (rlimits[r].resource, &rl) < 0)
            child_fail (f->rep, STEP_NOFILE + r);
        if (rl.rlim_max > s->rlim[r].rlim_max)
            rl.rlim_max = s->rlim[r].rlim_max;
        rl.rlim_cur = s->rlim[r].rlim_cur < rl.rlim_max ? s->rlim[r].rlim_cur
                                                        : rl.rlim_max;
        if (setrlimit (rlimits[r].resource, &rl) < 0)
            child_fail (f->rep, STEP_NOFILE + r);
    }
    /* The rest as the user, in drop.c, past an exec that frees our vfork:
     * the marker on 3 (where it reports a failure), the job's data in an
     * environment no libc reads (drop.c says why). */
    if (s->as_user) {
        if (dup2 (fd, 3) < 0)
            child_fail (f->rep, STEP_DROP);
        syscall (SYS_execveat, self_exe, "", s->drop_argv, s->drop_envp,
                 AT_EMPTY_PATH);
        child_fail (f->rep, STEP_DROP);
    }
    if (s->cwd && chdir (s->cwd) < 0)
        child_fail (f->rep, STEP_CHDIR);
    /* No cwd: --home, or / when it cannot be entered (a home that is not
     * there, or not mounted: root enters any other), as login(1) does. */
    if (!s->cwd && s->home && chdir (s->home) < 0 && chdir ("/") < 0)
        child_fail (f->rep, STEP_CHDIR);
    exec_lookup (s, s->envp ? s->envp : environ);
    child_fail (f->rep, STEP_EXEC);
}

/* vfork in a frame of its own: nothing of start() lives across it. */
static pid_t __attribute__ ((noinline))
spawn_child (struct shim *s, const struct child_fds *f)
{
    pid_t pid = vfork ();
    if (pid == 0)
        child_run (s, f);
    return pid;
}

/* O_APPEND: once the cap cuts a file back (cap_output), the command's
 * next write lands at the cut, not past it in a sparse file, without our
 * holding the descriptor it writes through. */
static int open_output (struct shim *s, const char *name)
{
    int fd = openat (
        s->dirfd, name,
        O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        shim_errorf (s, "open %s: %s", name, strerror (errno));
    return fd;
}

/* Under the supervisor the command writes into pipes, never into a file
 * of ours (SECURITY.md, "Output"): a descriptor of a file on the run dir
 * lets its holder allocate blocks that no size shows (fallocate with
 * FALLOC_FL_KEEP_SIZE) and write as fast as it likes between two looks,
 * and so fill the file system every other command needs for its marker,
 * its output and its exit record. A pipe holds 64 KiB at most; the
 * supervisor (serve.c) drains it into the file, keeping at most the cap.
 * The files are still made empty by start(); the write ends go to the
 * command's 1 and 2, the read ends stay with us, non-blocking. */
int shim_cmd_pipes (struct shim *s)
{
    s->piped = true;
    for (int i = 0; i < 2; i++) {
        int p[2];
        if (pipe2 (p, O_CLOEXEC) < 0)
            return shim_errorf (s, "pipe: %s", strerror (errno));
        s->pipe_rd[i] = p[0];
        s->pipe_wr[i] = p[1];
        if (fcntl (p[0], F_SETFL, O_NONBLOCK) < 0)
            return shim_errorf (s, "pipe: %s", strerror (errno));
    }
    return 0;
}

static void close_fds (const int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fds[i] >= 0)
            close (fds[i]);
    }
}

/* Where --user is looked up (see userdb.h), and room for an entry. */
#define SHIM_PASSWD "/etc/passwd"
#define SHIM_GROUP "/etc/group"
#define SHIM_PASSWD_BUF 65536

/* Resolve --user before the vfork (the lookup reads files and allocates,
 * which a vfork child may not do), from /etc/passwd and /etc/group read
 * directly, not through NSS (userdb.h says why). The groups land in an
 * array of the kernel's maximum, which setgroups could not take more than
 * anyway (the unused part of it is never touched). HOME, USER, LOGNAME
 * and SHELL are set in our environment, which the command inherits, each
 * unless cairnd set it already. Returns 0, or -1 with s->error set: then
 * nothing may run. */
/* Has envp NAME? */
static bool env_has (char **envp, const char *name)
{
    size_t n = strlen (name);
    for (; *envp; envp++)
        if (!strncmp (*envp, name, n) && (*envp)[n] == '=')
            return true;
    return false;
}

/* The user's variables (n of them, at most 4) added to the command's own
 * environment s->envp, each unless it has it: a copy the command keeps. */
static int user_env_add (struct shim *s, const char *const env[][2], size_t n)
{
    size_t count = 0, k = 0;

    while (s->envp[count])
        count++;
    if (!(s->envp_own = calloc (count + n + 1, sizeof (char *))))
        return shim_errorf (s, "out of memory");
    memcpy (s->envp_own, s->envp, count * sizeof (char *));
    for (size_t i = 0; i < n && k < 4; i++) {
        if (!env[i][1] || env_has (s->envp, env[i][0]))
            continue;
        size_t len = strlen (env[i][0]) + strlen (env[i][1]) + 2;
        if (!(s->env_own[k] = malloc (len)))
            return shim_errorf (s, "out of memory");
        snprintf (s->env_own[k], len, "%s=%s", env[i][0], env[i][1]);
        s->envp_own[count++] = s->env_own[k++];
    }
    s->envp = s->envp_own;
    return 0;
}

static int user_prepare (struct shim *s)
{
    struct passwd pw;
    char *buf; /* the passwd entry's strings: s->user */
    gid_t *groups;
    int e;

    if (!s->as_user)
        return 0;
    if (s->uid == getuid () && s->uid == geteuid ()) {
        s->as_user = false; /* already that user: nothing to drop */
        return 0;
    }
    /* Never run a command as someone the shim cannot fully become. */
    if (geteuid () != 0)
        return shim_errorf (s, "--user %u: the shim is not root",
                            (unsigned)s->uid);
    if (s->groups) { /* --groups: cairnd looked the user up */
        snprintf (s->user_name, sizeof (s->user_name), "uid %u",
                  (unsigned)s->uid);
        s->user = s->user_name;
        return 0;
    }
    /* Per command (the supervisor's workers look users up at once), and
     * kept with it: s->user and s->groups point into them. */
    if (!(s->pwbuf = buf = malloc (SHIM_PASSWD_BUF)) ||
        !(s->pwgroups = groups = malloc (NGROUPS_MAX * sizeof (gid_t))))
        return shim_errorf (s, "out of memory");
    e = userdb_passwd (SHIM_PASSWD, s->uid, &pw, buf, SHIM_PASSWD_BUF);
    if (e == ENOENT)
        return shim_errorf (s, "no user with uid %u in %s", (unsigned)s->uid,
                            SHIM_PASSWD);
    if (e)
        return shim_errorf (s, "%s: %s", SHIM_PASSWD, strerror (e));
    e = userdb_groups (SHIM_GROUP, &pw, groups, NGROUPS_MAX, &s->ngroups);
    if (e == E2BIG)
        return shim_errorf (s, "user %s: more than %d groups in %s", pw.pw_name,
                            NGROUPS_MAX, SHIM_GROUP);
    if (e)
        return shim_errorf (s, "%s: %s", SHIM_GROUP, strerror (e));
    s->groups = groups;
    s->gid = pw.pw_gid;
    s->user = pw.pw_name;

    const char *env[][2] = {
        {"HOME", pw.pw_dir},
        {"USER", pw.pw_name},
        {"LOGNAME", pw.pw_name},
        /* An empty shell field means /bin/sh (passwd(5)). */
        {"SHELL", pw.pw_shell && pw.pw_shell[0] ? pw.pw_shell : "/bin/sh"},
    };
    if (s->envp)
        return user_env_add (s, env, sizeof (env) / sizeof (env[0]));
    for (size_t i = 0; i < sizeof (env) / sizeof (env[0]); i++) {
        if (env[i][1] && setenv (env[i][0], env[i][1], 0) < 0)
            return shim_errorf (s, "setenv %s: %s", env[i][0],
                                strerror (errno));
    }
    return 0;
}

/* One entry of the drop's environment at *p: SHIM_DROP_ENV_MARK, then
 * str; *p moves past it. Returns the entry. */
static char *drop_env_put (char **p, const char *str)
{
    char *e = *p;
    *p += sprintf (e, "%c%s", SHIM_DROP_ENV_MARK, str) + 1;
    return e;
}

/* --user: how `cairn-shim --drop` (drop.c) is started, built before the
 * vfork (the child may not allocate). Its argv: the marker on 3, the
 * death signal's parent (a lone shim's command dies with it), the ids,
 * then the command; nothing else of the job's, as anyone may read an argv.
 * Its environment: the user's name, the cwd, the home, then the
 * command's environment, each entry behind SHIM_DROP_ENV_MARK. */
static int drop_prepare (struct shim *s, pid_t shim)
{
    char **env = s->envp ? s->envp : environ;
    size_t nenv = 0, nargv = 0, glen = 2, k = 0, elen = 0;
    const char *cwd = s->cwd ? s->cwd : "";
    const char *home = !s->cwd && s->home ? s->home : "";

    if (!s->as_user)
        return 0;
    if (self_exe < 0)
        return shim_errorf (s, "--user: cannot find cairn-shim itself: %s",
                            strerror (EBADF));
    for (; env[nenv]; nenv++)
        elen += strlen (env[nenv]) + 2;
    elen += strlen (s->user) + strlen (cwd) + strlen (home) + 6;
    while (s->argv[nargv])
        nargv++;
    for (int i = 0; i < s->ngroups; i++)
        glen += 11;
    if (!(s->drop_groups = malloc (glen)) ||
        !(s->drop_argv = calloc (8 + nargv + 1, sizeof (char *))) ||
        !(s->drop_envp = calloc (3 + nenv + 1, sizeof (char *))) ||
        !(s->drop_envbuf = malloc (elen)))
        return shim_errorf (s, "out of memory");
    char *g = s->drop_groups;
    *g = '\0';
    for (int i = 0; i < s->ngroups; i++)
        g += sprintf (g, "%s%u", i ? "," : "", (unsigned)s->groups[i]);
    if (s->ngroups == 0)
        strcpy (s->drop_groups, "-");
    snprintf (s->drop_nums[0], 24, "%d", shim_fresh ? 0 : (int)shim);
    snprintf (s->drop_nums[1], 24, "%u", (unsigned)s->uid);
    snprintf (s->drop_nums[2], 24, "%u", (unsigned)s->gid);
    char **av = s->drop_argv;
    av[k++] = (char *)"cairn-shim";
    av[k++] = (char *)"--drop";
    av[k++] = (char *)"3";
    av[k++] = s->drop_nums[0];
    av[k++] = s->drop_nums[1];
    av[k++] = s->drop_nums[2];
    av[k++] = s->drop_groups;
    av[k++] = (char *)"--";
    for (size_t i = 0; i < nargv; i++)
        av[k++] = s->argv[i];
    av[k] = NULL;
    char *p = s->drop_envbuf, **ev = s->drop_envp;
    *ev++ = drop_env_put (&p, s->user);
    *ev++ = drop_env_put (&p, cwd);
    *ev++ = drop_env_put (&p, home);
    for (size_t i = 0; i < nenv; i++)
        *ev++ = drop_env_put (&p, env[i]);
    *ev = NULL;
    return 0;
}

/* Put what the command's process reported into s->error. */
static void report_error (struct shim *s, const struct report *r)
{
    const char *why = strerror (r->errnum);

    switch (r->step) {
    case STEP_STDIO:
        shim_errorf (s, "dup2 stdio: %s", why);
        break;
    case STEP_MARKER:
        shim_errorf (s, "create %s: %s", s->name_started, why);
        break;
    case STEP_CGROUP:
        shim_errorf (s, "join cgroup %s: %s", s->cgroup, why);
        break;
    case STEP_NOFILE:
    case STEP_NPROC:
        shim_errorf (s, "setrlimit %s: %s", rlimits[r->step - STEP_NOFILE].name,
                     why);
        break;
    case STEP_DROP:
        shim_errorf (s, "exec cairn-shim --drop: %s", why);
        break;
    case STEP_CHDIR:
        shim_errorf (s, "chdir %s: %s", s->cwd ? s->cwd : "/", why);
        break;
    case STEP_EXEC:
        shim_errorf (s, "execvp %s: %s", s->argv[0], why);
        break;
    default: /* not from our child */
        break;
    }
}

/* --cgroup: make the command's cgroup (EEXIST is fine: a directory left
 * by a shim of the same execid that died before it could remove it) and
 * open its cgroup.procs for the command's process to join. */
static int cgroup_prepare (struct shim *s)
{
    char path[4096];
    if (!s->cgroup)
        return 0;
    if (mkdir (s->cgroup, 0755) < 0 && errno != EEXIST)
        return shim_errorf (s, "cgroup %s: %s", s->cgroup, strerror (errno));
    /* Before any process joins: its limits hold from its first fork. */
    for (int i = 0; i < s->nlimits; i++) {
        const char *eq = strchr (s->limits[i], '=');
        int fd;
        snprintf (path, sizeof (path), "%s/%.*s", s->cgroup,
                  (int)(eq - s->limits[i]), s->limits[i]);
        if ((fd = open (path, O_WRONLY | O_CLOEXEC)) < 0 ||
            write (fd, eq + 1, strlen (eq + 1)) < 0) {
            int e = errno;
            if (fd >= 0)
                close (fd);
            return shim_errorf (s, "cgroup limit %s: %s", path, strerror (e));
        }
        close (fd);
    }
    snprintf (path, sizeof (path), "%s/cgroup.procs", s->cgroup);
    if ((s->cgfd = open (path, O_WRONLY | O_CLOEXEC)) < 0)
        return shim_errorf (s, "cgroup %s: %s", path, strerror (errno));
    return 0;
}

/* Kill everything in the command's cgroup, whatever session or process
 * group it made for itself. */
static void cgroup_kill (const struct shim *s)
{
    char path[4096];
    int fd;
    if (!s->cgroup)
        return;
    snprintf (path, sizeof (path), "%s/cgroup.kill", s->cgroup);
    if ((fd = open (path, O_WRONLY | O_CLOEXEC)) >= 0) {
        (void)!write (fd, "1\n", 2);
        close (fd);
    }
}

/* Once the command's process has exited: kill what is left in its cgroup,
 * wait (at most 2 s) until the cgroup is empty, and remove it. */
static void cgroup_remove (struct shim *s)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    if (!s->cgroup)
        return;
    if (s->cgfd >= 0)
        close (s->cgfd);
    s->cgfd = -1;
    for (int i = 0; i < 400; i++) {
        cgroup_kill (s);
        if (rmdir (s->cgroup) == 0 || errno == ENOENT)
            return;
        if (errno != EBUSY)
            break;
        nanosleep (&ts, NULL);
    }
    fprintf (stderr, "cairn-shim: cannot remove cgroup %s: %s\n", s->cgroup,
             strerror (errno));
}

/* The argv of /bin/sh for a command file without #! (exec_script): made
 * here, as the vfork child may not allocate; it fills in the file. */
static int script_prepare (struct shim *s)
{
    size_t n = 0;

    while (s->argv[n])
        n++;
    if (!(s->sh_argv = calloc (n + 2, sizeof (char *))))
        return shim_errorf (s, "out of memory");
    s->sh_argv[0] = "/bin/sh";
    for (size_t i = 1; i < n; i++)
        s->sh_argv[i + 1] = s->argv[i];
    return 0;
}

/* Start the command. Returns 0 if a child was created (s->error says if it
 * failed before exec), -1 with s->error set if nothing was started. */
static int start (struct shim *s)
{
    volatile struct report r = {0, 0};
    struct child_fds f = {.out = -1, .err = -1, .null = 0, .rep = &r};
    int nul = -1;
    int rc = -1;

    f.shim = getpid ();
    if (user_prepare (s) < 0 || drop_prepare (s, f.shim) < 0 ||
        cgroup_prepare (s) < 0 || script_prepare (s) < 0)
        goto done;
    if (s->piped) { /* shim_cmd_pipes */
        f.out = s->pipe_wr[0];
        f.err = s->pipe_wr[1];
        s->pipe_wr[0] = s->pipe_wr[1] = -1; /* closed below, as files were */
        int fd;
        if ((fd = open_output (s, s->name_out)) < 0)
            goto done;
        close (fd);
        if ((fd = open_output (s, s->name_err)) < 0)
            goto done;
        close (fd);
    } else if ((f.out = open_output (s, s->name_out)) < 0 ||
               (f.err = open_output (s, s->name_err)) < 0)
        goto done;
    /* The supervisor has /dev/null on 0 already (shim_fresh). */
    if (!shim_fresh &&
        (f.null = nul = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        shim_errorf (s, "open /dev/null: %s", strerror (errno));
        goto done;
    }
    if ((s->child = spawn_child (s, &f)) < 0) {
        s->child = 0;
        shim_errorf (s, "vfork: %s", strerror (errno));
        goto done;
    }
    /* No setpgid (child, child) here: vfork resumes us only after the
     * child's exec or _exit, and its own setsid was its first act, so the
     * group exists before any signal can be relayed to it. Resumed, we
     * read what it left in r if it did not get to the exec. */
    if (r.step) {
        struct report copy = {.step = r.step, .errnum = r.errnum};
        report_error (s, &copy);
    }
    /* Its marker is there unless it failed before it or at it (EEXIST:
     * another's), or was killed before (write_exitfile finds none). */
    s->marked = r.step == 0 || r.step > STEP_MARKER;
    /* Its process joined its cgroup before the exec: nothing per command
     * stays open here, so a node's live commands are not bounded by our
     * descriptor limit. */
    if (s->cgfd >= 0) {
        close (s->cgfd);
        s->cgfd = -1;
    }
    rc = 0;
done:
    close_fds ((int[]){nul, f.err, f.out}, 3);
    return rc;
}

/* Keep at most max_output + 1 bytes of an output file on disk: cairnd
 * journals at most max_output, and the extra byte tells it that there was
 * more. Found by name in the exit dir: we hold no descriptor per command
 * (a node's live commands would be bounded by half our descriptor limit);
 * the command writes with O_APPEND (open_output), so after the cut its
 * next write lands at the cut. Returns true if the file had gone past the
 * cap; *size is then what is left (-1: no file, or it could not be
 * looked at or cut: let the reader look). */
static bool cap_output (const struct shim *s, const char *name, long long *size)
{
    off_t keep = (off_t)s->max_output + 1;
    struct stat st;
    int fd;

    *size = -1;
    if (s->dirfd < 0 || fstatat (s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return false;
    if (st.st_size <= keep) {
        *size = (long long)st.st_size;
        return false;
    }
    if ((fd = openat (s->dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) >=
        0) {
        if (ftruncate (fd, keep) == 0)
            *size = (long long)keep;
        close (fd);
    }
    return true;
}

/* How long to wait before looking at the output files again: short while
 * the command writes past the cap (so a runaway writer fills little disk
 * between looks), then doubling up to half a minute, so that a quiet
 * command costs a handful of wake-ups. */
#define CAP_WAIT_MIN_NS (2LL * 1000 * 1000)
#define CAP_WAIT_MAX_NS (30LL * 1000 * 1000 * 1000)

/* Cut both files; the sizes left go to s->out_size and s->err_size. */
static long long cap_outputs (struct shim *s, long long wait_ns)
{
    bool over = cap_output (s, s->name_out, &s->out_size);
    if (cap_output (s, s->name_err, &s->err_size))
        over = true;
    if (over)
        return wait_ns / 4 > CAP_WAIT_MIN_NS ? wait_ns / 4 : CAP_WAIT_MIN_NS;
    return wait_ns * 2 < CAP_WAIT_MAX_NS ? wait_ns * 2 : CAP_WAIT_MAX_NS;
}
/* JSON string body: escape '"', '\' and control characters; bytes above
 * 0x7f become '?' so the file is valid JSON whatever the error holds. */
static size_t json_escape (char *out, size_t size, const char *in)
{
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        if (n + 7 > size)
            break;
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20)
            n += snprintf (out + n, size - n, "\\u%04x", *p);
        else
            out[n++] = *p < 0x80 ? (char)*p : '?';
    }
    out[n] = '\0';
    return n;
}

/* Does the marker hold a record already (the start of one, at least)? */
static bool marker_has_record (const struct shim *s)
{
    char buf[512];
    return shim_read_small (s->dirfd, s->name_started, buf, sizeof (buf)) >
               0 &&
           strchr (buf, '{') != NULL;
}

/* The exit record: into the marker if the command's process made it,
 * else (or if that fails) the exit file. No fsync: a reboot changes the
 * boot id and cairnd then treats everything as lost anyway. A test can
 * make it fail (crashpoint.h). */
static int write_exitfile (struct shim *s, int status)
{
    char buf[4096];
    size_t len;

    len = (size_t)snprintf (buf, sizeof (buf), "{\"status\":%d", status);
    if (s->out_size >= 0 && s->err_size >= 0)
        len += (size_t)snprintf (buf + len, sizeof (buf) - len,
                                 ",\"out\":%lld,\"err\":%lld", s->out_size,
                                 s->err_size);
    if (s->leftover > 0)
        len += (size_t)snprintf (buf + len, sizeof (buf) - len,
                                 ",\"leftover\":%d", s->leftover);
    if (s->error[0]) {
        len +=
            (size_t)snprintf (buf + len, sizeof (buf) - len, ",\"error\":\"");
        len += json_escape (buf + len, sizeof (buf) - len - 4, s->error);
        buf[len++] = '"';
    }
    buf[len++] = '}';
    buf[len++] = '\n';

    if ((errno = fault_inject ("shim.exitfile.write")))
        goto error;
    /* cairn-shim --drop wrote the record of its failure: it stands. */
    if (s->as_user && s->marked && !s->error[0] && marker_has_record (s))
        return 0;
    /* A short append leaves no whole record in the marker: the exit file
     * then says it. */
    if ((s->marked &&
         shim_record_append (s->dirfd, s->name_started, buf, len) == 0) ||
        shim_exitfile_put (s->dirfd, s->execid, s->name_tmp, buf, len) == 0) {
        s->wrote = !s->error[0];
        s->wrote_status = status;
        return 0;
    }
error:
    fprintf (stderr, "cairn-shim: %s/%s: %s\n", s->exitdir, s->execid,
             strerror (errno));
    return -1;
}

/* An execid runs at most once. If it has a marker or an exit file, someone
 * (a confused cairnd) is starting it again: touch nothing, so the first
 * run's output and status survive. The marker's O_EXCL in the child still
 * settles a race between two shims of the same execid. */
static bool already_used (struct shim *s)
{
    const char *names[] = {s->name_started, s->execid};
    struct stat st;

    for (int i = 0; i < 2; i++) {
        const char *why = "exists: execid already used";
        if (fstatat (s->dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT)
                continue;
            why = strerror (errno);
        }
        fprintf (stderr, "cairn-shim: %s/%s: %s\n", s->exitdir, names[i], why);
        return true;
    }
    return false;
}

/* ---- the calls of cmd.h ---- */

int shim_cmd_init (void)
{
    int fd;
    if (self_exe >= 0 ||
        (fd = open ("/proc/self/exe", O_PATH | O_CLOEXEC)) < 0)
        return self_exe < 0 ? -1 : 0;
    /* off 3, where the command's process puts the marker for --drop */
    self_exe = fd > 3 ? fd : fcntl (fd, F_DUPFD_CLOEXEC, 4);
    if (self_exe != fd)
        close (fd);
    return self_exe < 0 ? -1 : 0;
}

struct shim *shim_cmd_parse (int argc, char *argv[], const char *execid)
{
    struct shim *s = calloc (1, sizeof (*s));

    if (!s)
        return NULL;
    s->dirfd = s->cgfd = -1;
    s->out_size = s->err_size = -1;
    s->pipe_rd[0] = s->pipe_rd[1] = s->pipe_wr[0] = s->pipe_wr[1] = -1;
    s->execid = execid;
    if (parse_args (s, argc, argv) < 0) {
        shim_cmd_free (s);
        errno = EINVAL;
        return NULL;
    }
    return s;
}

/* The supervisor's exit dir, opened for its first command and kept: every
 * command cairnd asks it for has the same one (one journal, one dir), and
 * an open and a close per command are a measurable part of a spawn. One
 * per thread: each worker's start holds the dir's shared flock through its
 * own open file description (serve.c), which another's unlock must not
 * release. */
static _Thread_local struct {
    char *path;
    int fd;
} kept_dir = {NULL, -1};

int shim_cmd_opendir (struct shim *s)
{
    if (kept_dir.path && strcmp (kept_dir.path, s->exitdir) == 0) {
        s->dirfd = kept_dir.fd;
        s->dirfd_kept = true;
        return 0;
    }
    s->dirfd =
        open (s->exitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s->dirfd < 0) {
        fprintf (stderr, "cairn-shim: %s: %s\n", s->exitdir, strerror (errno));
        return -1;
    }
    if (shim_fresh && !kept_dir.path && (kept_dir.path = strdup (s->exitdir))) {
        kept_dir.fd = s->dirfd;
        s->dirfd_kept = true;
    }
    return 0;
}

int shim_cmd_dirfd (const struct shim *s)
{
    return s->dirfd;
}

bool shim_cmd_used (struct shim *s)
{
    return already_used (s);
}

int shim_cmd_start (struct shim *s, char **envp)
{
    s->envp = envp;
    return start (s);
}

pid_t shim_cmd_pid (const struct shim *s)
{
    return s->child;
}

void shim_cmd_relay (struct shim *s, int sig)
{
    /* The leader may have left its group (setpgid): reach it anyway. */
    if (kill (-s->child, sig) < 0 && errno == ESRCH)
        kill (s->child, sig);
    if (sig == SIGKILL)
        cgroup_kill (s);
}

bool shim_cmd_capped (const struct shim *s)
{
    return s->max_output > 0 && !s->piped;
}

unsigned long long shim_cmd_max_output (const struct shim *s)
{
    return s->max_output;
}

int shim_cmd_pipe (const struct shim *s, int stream)
{
    return stream == 0 || stream == 1 ? s->pipe_rd[stream] : -1;
}

int shim_cmd_pipe_drain (struct shim *s, int stream)
{
    int fd = shim_cmd_pipe (s, stream);

    if (fd < 0)
        return OUTPIPE_END;
    return outpipe_drain (fd, s->dirfd, stream ? s->name_err : s->name_out,
                          s->max_output);
}

void shim_cmd_pipe_close (struct shim *s, int stream)
{
    if ((stream == 0 || stream == 1) && s->pipe_rd[stream] >= 0) {
        close (s->pipe_rd[stream]);
        s->pipe_rd[stream] = -1;
    }
}

long long shim_cmd_cap (struct shim *s, long long wait_ns)
{
    return cap_outputs (s, wait_ns);
}

void shim_cmd_exited (struct shim *s)
{
    /* the supervisor's parent is the keeper; a shim run by hand looks
     * through /proc */
    int n = s->child > 0 && (!shim_fresh || shim_session_maybe (s->child))
                ? shim_session_left (s->child, 0)
                : 0;
    s->leftover = n > 0 ? n : 0;
    if (s->leftover > 0) /* the record says so first: shim_cmd_drain */
        return;
    kill (-s->child, SIGKILL);
    cgroup_kill (s); /* also what left the group */
}

int shim_cmd_leftover (const struct shim *s)
{
    return s->leftover;
}

bool shim_cmd_record (const struct shim *s,
                      int *status,
                      long long *out_size,
                      long long *err_size,
                      int *leftover)
{
    if (!s->wrote)
        return false;
    bool sized = s->out_size >= 0 && s->err_size >= 0; /* as written */
    *status = s->wrote_status;
    *out_size = sized ? s->out_size : -1;
    *err_size = sized ? s->err_size : -1;
    *leftover = s->leftover > 0 ? s->leftover : 0;
    return true;
}

int shim_cmd_drain (struct shim *s)
{
    int left = 0;
    if (s->child > 0)
        left = shim_session_drain (s->child, SHIM_DRAIN_TRIES);
    cgroup_remove (s); /* also what left the session */
    s->drained = true;
    if (left > 0)
        fprintf (stderr,
                 "cairn-shim: %s: %d process(es) of its session survived "
                 "SIGKILL\n",
                 s->execid, left);
    return left > 0 ? left : 0;
}

int shim_cmd_finish (struct shim *s, int status)
{
    if (s->child > 0 && s->max_output > 0) /* the group is gone: a last cut */
        (void)cap_outputs (s, SHIM_CAP_FIRST_NS);
    /* With processes left, the record goes first (their number must not
     * be lost to our death between their kill and the record: the keeper
     * would find none) and shim_cmd_drain kills them after it. */
    if (s->leftover == 0 || s->drained)
        cgroup_remove (s);
    return write_exitfile (s, status);
}

void shim_cmd_free (struct shim *s)
{
    if (!s)
        return;
    close_fds ((int[]){s->dirfd_kept ? -1 : s->dirfd, s->cgfd, s->pipe_rd[0],
                       s->pipe_rd[1], s->pipe_wr[0], s->pipe_wr[1]},
               6);
    free (s->given);
    free (s->drop_argv);
    free (s->drop_groups);
    free (s->drop_envp);
    free (s->drop_envbuf);
    free (s->pwbuf);
    free (s->pwgroups);
    free (s->envp_own);
    free (s->sh_argv);
    for (size_t i = 0; i < 4; i++)
        free (s->env_own[i]);
    free (s);
}
