/* t_procfs - procfs readers (real and fake proc trees) and exit files. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#include "supervise/exitfile.h"
#include "supervise/procfs.h"
#include "supervise/shim_proto.h"
#include "journal/crashpoint.h"

static char tmpdir[] = "/tmp/t_procfs.XXXXXX";

#define ID1 "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
#define ID2 "ffffffff-0000-4000-8000-000000000002"

/* Write len bytes to tmpdir/rel (parents must exist). */
static void put (const char *rel, const char *data, size_t len)
{
    char path[PATH_MAX];
    int fd;

    snprintf (path, sizeof (path), "%s/%s", tmpdir, rel);
    fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write (fd, data, len) != (ssize_t)len || close (fd) < 0)
        BAIL_OUT ("write %s: %s", path, strerror (errno));
}

static void mkdir_rel (const char *rel)
{
    char path[PATH_MAX];
    snprintf (path, sizeof (path), "%s/%s", tmpdir, rel);
    if (mkdir (path, 0700) < 0 && errno != EEXIST)
        BAIL_OUT ("mkdir %s: %s", path, strerror (errno));
}

static char *path_of (const char *rel)
{
    static char path[PATH_MAX];
    snprintf (path, sizeof (path), "%s/%s", tmpdir, rel);
    return path;
}

/* The lowest free fd: equal before and after means nothing leaked. */
static int next_fd (void)
{
    int fd = dup (0);
    close (fd);
    return fd;
}

/* A fake <root>/<pid>/stat with the given comm, ppid and start time. */
static void fake_proc (const char *root,
                       int pid,
                       const char *comm,
                       int ppid,
                       unsigned long long start,
                       const char *env,
                       size_t envlen)
{
    char rel[128], line[512];
    int n;

    snprintf (rel, sizeof (rel), "%s/%d", root, pid);
    mkdir_rel (rel);
    n = snprintf (line, sizeof (line),
                  "%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 "
                  "0 %llu 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 "
                  "0 0 17 1 0 0 0 0 0\n",
                  pid, comm, ppid, pid, pid, start);
    snprintf (rel, sizeof (rel), "%s/%d/stat", root, pid);
    put (rel, line, (size_t)n);
    snprintf (rel, sizeof (rel), "%s/%d/environ", root, pid);
    put (rel, env, envlen);
}

static void test_starttime (void)
{
    unsigned long long a = 0, b = 0, mine = 0;
    char buf[4096], *p;
    FILE *f;

    /* Independent parse: the 20th space-separated token after the last ')'.
     */
    f = fopen ("/proc/self/stat", "r");
    if (!f || !fgets (buf, sizeof (buf), f))
        BAIL_OUT ("/proc/self/stat");
    fclose (f);
    p = strrchr (buf, ')') + 2;
    for (int i = 3; i < 22; i++)
        p = strchr (p, ' ') + 1;
    mine = strtoull (p, NULL, 10);

    ok (procfs_starttime (NULL, getpid (), &a) == 0, "starttime of self");
    is_int (a, mine, "... matches /proc/self/stat field 22");
    ok (procfs_starttime ("/proc", getpid (), &b) == 0 && a == b,
        "explicit /proc root gives the same");

    mkdir_rel ("proc");
    fake_proc ("proc", 4242, "evil) (name ) x", 1, 987654321ULL, "", 0);
    ok (procfs_starttime (path_of ("proc"), 4242, &a) == 0,
        "comm holding \") (\" parses");
    is_int (a, 987654321ULL, "... after the last ')'");

    struct {
        const char *line;
        int err;
        const char *what;
    } bad[] = {
        {"", ESRCH, "empty stat (process vanished)"},
        {"1 noparen S 1 2 3", EINVAL, "no parentheses"},
        {"1 (a) S 1 2 3\n", EINVAL, "too few fields"},
        {"1 (a) S x 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 1\n", EINVAL,
         "non-numeric ppid"},
        {"1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x5 1\n", EINVAL,
         "non-numeric starttime"},
        {"1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
         "99999999999999999999999 1\n",
         EINVAL, "overflowing starttime"},
    };
    mkdir_rel ("proc/77");
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        put ("proc/77/stat", bad[i].line, strlen (bad[i].line));
        is_errno (procfs_starttime (path_of ("proc"), 77, &a), bad[i].err,
                  "starttime: %s", bad[i].what);
    }
    is_errno (procfs_starttime (path_of ("proc"), 78, &a), ENOENT,
              "starttime of a missing pid: ENOENT");
    is_errno (procfs_starttime (NULL, 0, &a), EINVAL, "pid 0: EINVAL");
}

static void test_bootid (void)
{
    char buf[64], small[8];

    ok (procfs_bootid (NULL, buf, sizeof (buf)) == 0 && uuid_is_canonical (buf),
        "real boot id is a canonical uuid");
    put ("boot_id", "abcd-1234\n", 10);
    ok (procfs_bootid (path_of ("boot_id"), buf, sizeof (buf)) == 0,
        "fake boot id read");
    is_str (buf, "abcd-1234", "... without its newline");
    is_errno (procfs_bootid (path_of ("boot_id"), small, sizeof (small)),
              ERANGE, "buffer too small: ERANGE");
    put ("boot_id", "\n", 1);
    is_errno (procfs_bootid (path_of ("boot_id"), buf, sizeof (buf)), EINVAL,
              "empty boot id: EINVAL");
    is_errno (procfs_bootid (path_of ("nonexistent"), buf, sizeof (buf)),
              ENOENT, "missing file: ENOENT");
}

static void test_find_execid_fake (void)
{
    static const char env1[] = "A=1\0" SHIM_ENV_EXECID "=" ID1 "\0B=2";
    static const char env_suffix[] = SHIM_ENV_EXECID "=" ID1 "x\0";
    static const char env_prefix[] = "X" SHIM_ENV_EXECID "=" ID1 "\0";
    static const char env_last[] = "A=1\0" SHIM_ENV_EXECID "=" ID2;
    char *root = strdup (path_of ("fp"));

    mkdir_rel ("fp");
    mkdir_rel ("fp/self"); /* not a pid: skipped */
    /* The shim (parent not a match), its child forked in the same clock
     * tick, and a grandchild. 90 is older but is not a match. */
    fake_proc ("fp", 100, "cairn-shim", 1, 500, env1, sizeof (env1));
    fake_proc ("fp", 101, "sh", 100, 500, env1, sizeof (env1));
    fake_proc ("fp", 104, "sleep", 101, 600, env1, sizeof (env1));
    fake_proc ("fp", 90, "x", 1, 10, env_suffix, sizeof (env_suffix));
    fake_proc ("fp", 91, "y", 1, 10, env_prefix, sizeof (env_prefix));
    fake_proc ("fp", 105, "z", 1, 700, env_last, sizeof (env_last) - 1);

    is_int (procfs_find_execid (root, ID1), 100,
            "finds the shim, not its children nor near misses");
    is_int (procfs_find_execid (root, ID2), 105,
            "matches a last entry with no terminating NUL");
    put ("fp/100/environ", "A=1", 3);
    is_int (procfs_find_execid (root, ID1), 101,
            "shim gone: the oldest remaining root");

    /* Two roots in the same tick: the one named cairn-shim. */
    fake_proc ("fp", 100, "cairn-shim", 1, 500, env1, sizeof (env1));
    fake_proc ("fp", 99, "orphan", 1, 500, env1, sizeof (env1));
    is_int (procfs_find_execid (root, ID1), 100,
            "tie on start time: the one named cairn-shim");

    is_errno (procfs_find_execid (root, "ffffffff-0000-4000-8000-00000000dead"),
              ENOENT, "no match: ENOENT");
    is_errno (procfs_find_execid (root, "not-a-uuid"), EINVAL,
              "bad execid: EINVAL");
    is_errno (procfs_find_execid (path_of ("nonexistent"), ID1), ENOENT,
              "missing proc root: ENOENT");
    free (root);
}

/* Make the fake process root/pid a zombie. */
static void fake_zombie (const char *root, int pid)
{
    char rel[128], path[PATH_MAX], line[512];
    FILE *f;

    snprintf (rel, sizeof (rel), "%s/%d/stat", root, pid);
    snprintf (path, sizeof (path), "%s/%s", tmpdir, rel);
    if (!(f = fopen (path, "r")) || !fgets (line, sizeof (line), f))
        BAIL_OUT ("read %s", path);
    fclose (f);
    char *st = strstr (line, ") S ");
    if (!st)
        BAIL_OUT ("no state in %s", path);
    st[2] = 'Z';
    put (rel, line, strlen (line));
}

static void test_zombie_unsupervised (void)
{
    char *root = strdup (path_of ("zp"));

    mkdir_rel ("zp");
    fake_proc ("zp", 1, "init", 0, 1, "", 0);
    fake_proc ("zp", 200, "cairn-shim", 1, 100, "", 0);
    fake_proc ("zp", 201, "sh", 200, 200, "", 0);
    fake_proc ("zp", 202, "sh", 1, 200, "", 0);
    fake_proc ("zp", 203, "sh", 1, 200, "", 0);
    fake_proc ("zp", 204, "sh", 999, 200, "", 0);
    fake_zombie ("zp", 201);
    fake_zombie ("zp", 202);
    fake_zombie ("zp", 204);
    is_int (procfs_zombie_unsupervised (root, 201), 0,
            "a zombie of a cairn-shim: its supervisor will see it through");
    is_int (procfs_zombie_unsupervised (root, 202), 1,
            "a zombie of init: no exit file will come");
    is_int (procfs_zombie_unsupervised (root, 203), 0,
            "running under init: not ended");
    is_int (procfs_zombie_unsupervised (root, 204), 1,
            "a zombie whose parent is gone: no exit file will come");
    is_errno (procfs_zombie_unsupervised (root, 205), ENOENT,
              "no such process: ENOENT");
    free (root);
}

static void test_find_execid_real (void)
{
    char *argv[] = {"sleep", "30", NULL};
    char *envp[] = {SHIM_ENV_EXECID "=" ID1, NULL};
    pid_t pid;

    if (posix_spawn (&pid, "/bin/sleep", NULL, NULL, argv, envp) != 0)
        BAIL_OUT ("posix_spawn sleep");
    /* posix_spawn returns once the child's exec has released the old
     * memory, before its new environ is set up: give it a moment. */
    pid_t found = -1;
    for (int i = 0; i < 200 && found != pid; i++) {
        if ((found = procfs_find_execid (NULL, ID1)) != pid)
            usleep (10000);
    }
    is_int (found, pid, "finds a live child by its CAIRN_EXECID");
    is_errno (procfs_find_execid (NULL, ID2), ENOENT,
              "a different execid is not found");
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    is_errno (procfs_find_execid (NULL, ID1), ENOENT,
              "not found once the child is gone");
}

static void test_pidfd_verify (void)
{
    unsigned long long start;
    char *argv[] = {"true", NULL};
    int pidfd = -1, before;
    pid_t pid;

    if (procfs_starttime (NULL, getpid (), &start) < 0)
        BAIL_OUT ("starttime self");
    ok (procfs_pidfd_verify (NULL, getpid (), start, &pidfd) == 0 && pidfd >= 0,
        "pidfd_verify self with the right start time");
    close (pidfd);

    before = next_fd ();
    is_errno (procfs_pidfd_verify (NULL, getpid (), start + 1, &pidfd), ESRCH,
              "wrong start time (pid reused): ESRCH");
    is_int (next_fd (), before, "... and no fd leaked");
    is_errno (procfs_pidfd_verify (path_of ("proc"), getpid (), start, &pidfd),
              ESRCH, "no stat entry for the pid: ESRCH");
    is_int (next_fd (), before, "... and no fd leaked");

    if (posix_spawn (&pid, "/bin/true", NULL, NULL, argv, NULL) != 0)
        BAIL_OUT ("posix_spawn true");
    waitpid (pid, NULL, 0);
    is_errno (procfs_pidfd_verify (NULL, pid, start, &pidfd), ESRCH,
              "reaped pid: ESRCH");
    is_errno (procfs_pidfd_verify (NULL, -1, start, &pidfd), EINVAL,
              "pid -1: EINVAL");
}

static void test_uuid (void)
{
    struct {
        const char *s;
        bool want;
    } t[] = {
        {"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", true},
        {"00000000-0000-0000-0000-000000000000", true},
        {"0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D", false},
        {"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4", false},
        {"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d0", false},
        {"0a1b2c3d4e5f-4a6b-8c7d-9e0f1a2b3c4d-", false},
        {"0a1b2c3g-4e5f-4a6b-8c7d-9e0f1a2b3c4d", false},
        {"../../../../etc/passwd-aaaa-aaaaaaaa", false},
        {"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c/d", false},
        {"", false},
        {NULL, false},
    };
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++)
        ok (uuid_is_canonical (t[i].s) == t[i].want, "uuid %s: %s",
            t[i].s ? t[i].s : "(null)", t[i].want ? "canonical" : "rejected");
}

static void test_exitfile (void)
{
    struct cairn_error err = {{0}};
    char *error = NULL;
    struct stat st;
    int dfd, status = -1;

    dfd = exitfile_open_dir (tmpdir, &err);
    ok (dfd >= 0, "exitfile_open_dir creates exits/");
    ok (stat (path_of ("exits"), &st) == 0 && (st.st_mode & 0777) == 0700,
        "... with mode 0700");
    int again = exitfile_open_dir (tmpdir, &err);
    ok (again >= 0, "exitfile_open_dir of an existing dir");
    close (again);
    is_errno (exitfile_open_dir (path_of ("nonexistent"), &err), ENOENT,
              "missing statedir: ENOENT");
    like (err.text, "mkdir ", "... and the message says what failed");
    mkdir_rel ("link");
    if (symlink ("/tmp", path_of ("link/exits")) < 0)
        BAIL_OUT ("symlink");
    is_errno (exitfile_open_dir (path_of ("link"), &err), ENOTDIR,
              "exits/ as a symlink: refused (ENOTDIR)");
    like (err.text, "link/exits", "... and names the path");

    /* the start marker names its process: "PID BOOTNS\n" */
    pid_t mpid = 0;
    unsigned long long mns = 0;
    is_errno (exitfile_marker (dfd, ID1, &mpid, &mns), ENOENT,
              "no marker: ENOENT");
    is_errno (exitfile_marker (dfd, "nope", &mpid, &mns), EINVAL,
              "marker of a bad execid: EINVAL");
    put ("exits/" ID1 ".started", "", 0);
    is_int (exitfile_marker (dfd, ID1, &mpid, &mns), 0,
            "an empty marker names no process");
    put ("exits/" ID1 ".started", "123 x\n", 6);
    is_int (exitfile_marker (dfd, ID1, &mpid, &mns), 0,
            "a marker that is not PID BOOTNS names no process");
    put ("exits/" ID1 ".started", "4242 987654321\n", 15);
    ok (exitfile_marker (dfd, ID1, &mpid, &mns) == 1 && mpid == 4242 &&
            mns == 987654321ull,
        "PID BOOTNS read back");
    unlinkat (dfd, ID1 ".started", 0);

    /* the exit record rides in the marker, after its PID line */
    put ("exits/" ID1 ".started", "4242 987654321\n", 15);
    is_errno (exitfile_read (dfd, ID1, &status, &error), ENOENT,
              "a marker without a record: ENOENT");
    put ("exits/" ID1 ".started",
         "4242 987654321\n{\"status\":256,\"out\":3,\"err\":0}\n", 46);
    long long rosz = -2, resz = -2;
    ok (exitfile_read_sized (dfd, ID1, &status, &error, &rosz, &resz) == 0 &&
            status == 256 && rosz == 3 && resz == 0 && error == NULL,
        "the marker's record: status 256, sizes 3 and 0");
    ok (exitfile_marker (dfd, ID1, &mpid, &mns) == 1 && mpid == 4242 &&
            mns == 987654321ull,
        "... and the PID line still names the process");
    put ("exits/" ID1 ".started", "4242 987654321\n{\"status\":25", 27);
    is_errno (exitfile_read (dfd, ID1, &status, &error), ENOENT,
              "a record without its final newline is none (yet): ENOENT");
    put ("exits/" ID1, "{\"status\":512}\n", 15);
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 512,
        "... and the exit file answers then");
    unlinkat (dfd, ID1, 0);
    put ("exits/" ID1 ".started", "4242 987654321\n{\"status\":\"x\"}\n", 30);
    is_errno (exitfile_read (dfd, ID1, &status, &error), EINVAL,
              "a whole record that is not one: EINVAL");
    put ("exits/" ID1 ".started", "{\"status\":9}\n", 13);
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 9,
        "a record in an empty marker (no PID line) reads");
    is_int (exitfile_marker (dfd, ID1, &mpid, &mns), 0,
            "... and names no process");

    /* cairnd writes the record of a command it took over: into its marker */
    put ("exits/" ID1 ".started", "4242 987654321\n", 15);
    is_int (exitfile_write_status (dfd, ID1, 15), 0,
            "write status 15 into a marker");
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 15 &&
            exitfile_marker (dfd, ID1, &mpid, &mns) == 1 && mpid == 4242,
        "... reads back, the PID line kept");
    ok (faccessat (dfd, ID1, F_OK, 0) < 0 && errno == ENOENT,
        "... and no exit file was made");
    is_errno (exitfile_write_status (dfd, ID1, 0), EEXIST,
              "a record already in the marker stands: EEXIST");
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 15,
        "... unchanged");
    put ("exits/" ID1 ".started", "4242 987654321\n{\"status\":\"x\"}\n", 30);
    is_errno (exitfile_write_status (dfd, ID1, 0), EEXIST,
              "a record that cannot be read stands too: EEXIST");
    unlinkat (dfd, ID1 ".started", 0);

    /* the exit file cairnd writes for a command it took over */
    is_errno (exitfile_write_status (dfd, "nope", 0), EINVAL,
              "write for a bad execid: EINVAL");
    is_int (exitfile_write_status (dfd, ID1, 9), 0,
            "write status 9 (no marker: an exit file)");
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 9 &&
            error == NULL,
        "... reads back as status 9");
    is_errno (exitfile_write_status (dfd, ID1, 0), EEXIST,
              "an exit file already there stands: EEXIST");
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 9,
        "... and is unchanged");
    ok (faccessat (dfd, ID1 ".tmp", F_OK, 0) < 0 && errno == ENOENT,
        "... and no temporary file is left");
    unlinkat (dfd, ID1, 0);

    is_errno (exitfile_read (dfd, ID1, &status, &error), ENOENT,
              "no exit file: ENOENT");
    put ("exits/" ID1, "{\"status\":768}\n", 15);
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 768 &&
            error == NULL,
        "reads status 768, no error");
    const char *with_error =
        "{\"status\":32512,\"error\":\"execvp x: \\\"q\\\"\"}";
    put ("exits/" ID1, with_error, strlen (with_error));
    ok (exitfile_read (dfd, ID1, &status, &error) == 0 && status == 32512,
        "reads a status with an error");
    is_str (error, "execvp x: \"q\"", "... and the unescaped error");
    free (error);

    long long osz = 7, esz = 7;
    put ("exits/" ID1, "{\"status\":0}", 12);
    ok (exitfile_read_sized (dfd, ID1, &status, NULL, &osz, &esz) == 0 &&
            osz == -1 && esz == -1,
        "no sizes in the exit file: both -1");
    const char *sized = "{\"status\":256,\"out\":0,\"err\":12}";
    put ("exits/" ID1, sized, strlen (sized));
    ok (exitfile_read_sized (dfd, ID1, &status, NULL, &osz, &esz) == 0 &&
            status == 256 && osz == 0 && esz == 12,
        "reads the output sizes");

    const char *bad[] = {
        "",
        "not json",
        "{}",
        "[1]",
        "{\"status\":\"1\"}",
        "{\"status\":-1}",
        "{\"status\":70000}",
        "{\"status\":1.5}",
        "{\"status\":1,\"error\":3}",
        "{\"status\":1} trailing",
        "{\"status\":0,\"out\":-1,\"err\":0}",
        "{\"status\":0,\"out\":0,\"err\":\"0\"}",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        put ("exits/" ID1, bad[i], strlen (bad[i]));
        error = (char *)"unset";
        is_errno (exitfile_read (dfd, ID1, &status, &error), EINVAL,
                  "malformed exit file '%s': EINVAL", bad[i]);
        ok (error == NULL, "... and *error is NULL");
    }
    char big[10000];
    memset (big, ' ', sizeof (big));
    memcpy (big, "{\"status\":0}", 12);
    put ("exits/" ID1, big, sizeof (big));
    is_errno (exitfile_read (dfd, ID1, &status, NULL), EINVAL,
              "oversized exit file: EINVAL");
    unlink (path_of ("exits/" ID1));
    if (symlink ("../target", path_of ("exits/" ID1)) < 0)
        BAIL_OUT ("symlink");
    put ("target", "{\"status\":0}", 12);
    is_errno (exitfile_read (dfd, ID1, &status, NULL), ELOOP,
              "symlinked exit file is not followed: ELOOP");
    unlink (path_of ("exits/" ID1));
    mkdir_rel ("exits/" ID1);
    is_errno (exitfile_read (dfd, ID1, &status, NULL), EINVAL,
              "a directory as exit file: EINVAL");
    rmdir (path_of ("exits/" ID1));
    is_errno (exitfile_read (dfd, "../target", &status, NULL), EINVAL,
              "non-uuid execid: EINVAL");

    ok (!exitfile_started (dfd, ID1), "no marker: not started");
    put ("exits/" ID1 ".started", "", 0);
    ok (exitfile_started (dfd, ID1), "marker: started");
    errno = 0;
    ok (exitfile_started (dfd, "bogus") && errno == EINVAL,
        "bad execid: 'maybe started' (true) with EINVAL");

    /* read_output */
    size_t len = 0;
    bool trunc = false;
    char *s;
    put ("exits/" ID1 ".out", "0123456789abcdef", 16);
    s = exitfile_read_output (dfd, ID1, "out", 10, &len, &trunc);
    ok (s && len == 10 && trunc && !strcmp (s, "0123456789"),
        "output cut at max, truncated");
    free (s);
    s = exitfile_read_output (dfd, ID1, "out", 16, &len, &trunc);
    ok (s && len == 16 && !trunc, "output of exactly max: not truncated");
    free (s);
    s = exitfile_read_output (dfd, ID1, "out", 1 << 20, &len, &trunc);
    ok (s && len == 16 && !trunc && !strcmp (s, "0123456789abcdef"),
        "output shorter than max: whole");
    free (s);
    s = exitfile_read_output (dfd, ID1, "out", 0, &len, &trunc);
    ok (s && len == 0 && trunc && s[0] == '\0', "max 0: empty, truncated");
    free (s);
    put ("exits/" ID1 ".err", "", 0);
    s = exitfile_read_output (dfd, ID1, "err", 0, &len, &trunc);
    ok (s && len == 0 && !trunc, "empty stderr, max 0: not truncated");
    free (s);
    is_errno_ptr (exitfile_read_output (dfd, ID2, "out", 10, &len, &trunc),
                  ENOENT, "no output file: ENOENT");
    is_errno_ptr (exitfile_read_output (dfd, ID1, "in", 10, &len, &trunc),
                  EINVAL, "bad stream: EINVAL");
    is_errno_ptr (exitfile_read_output (dfd, "x", "out", 10, &len, &trunc),
                  EINVAL, "bad execid: EINVAL");

    /* remove, with its crash points counted */
    put ("exits/" ID1, "{\"status\":0}", 12);
    put ("exits/" ID1 ".started", "1 2\n{\"status\":0}\n", 17);
    put ("exits/" ID1 ".tmp", "", 0);
    setenv ("CAIRN_CRASH_COUNT", path_of ("points"), 1);
    crashpoint_init ();
    ok (exitfile_remove (dfd, ID1) == 0, "exitfile_remove");
    ok (access (path_of ("exits/" ID1), F_OK) < 0 &&
            access (path_of ("exits/" ID1 ".started"), F_OK) < 0 &&
            access (path_of ("exits/" ID1 ".out"), F_OK) < 0 &&
            access (path_of ("exits/" ID1 ".err"), F_OK) < 0 &&
            access (path_of ("exits/" ID1 ".tmp"), F_OK) < 0,
        "... removed all five files");
    ok (exitfile_remove (dfd, ID1) == 0, "removing again is fine");
    is_errno (exitfile_remove (dfd, "../x"), EINVAL,
              "remove with a bad execid: EINVAL");
    unsetenv ("CAIRN_CRASH_COUNT");
    char points[256] = "";
    FILE *f = fopen (path_of ("points"), "r");
    if (f) {
        size_t n = fread (points, 1, sizeof (points) - 1, f);
        points[n] = '\0';
        fclose (f);
    }
    is_str (points,
            "exec.exitfile.remove.before\nexec.exitfile.remove.after\n"
            "exec.exitfile.remove.before\nexec.exitfile.remove.after\n",
            "crash points passed around each removal");
    close (dfd);
}

int main (void)
{
    plan (NO_PLAN);
    if (!mkdtemp (tmpdir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));

    test_starttime ();
    test_bootid ();
    test_find_execid_fake ();
    test_zombie_unsupervised ();
    test_find_execid_real ();
    test_pidfd_verify ();
    test_uuid ();
    test_exitfile ();

    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", tmpdir);
    if (system (cmd) != 0)
        diag ("could not remove %s", tmpdir);
    return done_testing ();
}
