/* exitfile.c - see exitfile.h
 *
 * The exit dir is written by shims that may be killed at any instant, and
 * read by a cairnd that may be recovering from a crash: treat its contents
 * as untrusted input. No symlinks are followed, only regular files are read
 * (O_NONBLOCK so a FIFO planted there cannot hang the reader), and reads
 * are bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervise/exitfile.h"
#include "supervise/shim_proto.h"
#include "journal/crashpoint.h"

/* A marker (a PID line and a record) or an exit file is short; anything
 * longer is not one. */
#define EXITFILE_MAX 8192

int exitfile_open_dir (const char *statedir, struct cairn_error *err)
{
    char path[PATH_MAX];
    int fd;

    if (!statedir)
        return errset (err, EINVAL, "exit dir: no state directory");
    if (snprintf (path, sizeof (path), "%s/exits", statedir) >=
        (int)sizeof (path))
        return errset (err, ENAMETOOLONG, "exit dir %s/exits: %s", statedir,
                       strerror (ENAMETOOLONG));
    if (mkdir (path, 0700) < 0 && errno != EEXIST)
        return errprintf (err, "mkdir %s: %s", path, strerror (errno));
    fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errprintf (err, "open %s: %s", path, strerror (errno));
    return fd;
}

/* Build "<execid><suffix>" into name; EINVAL for a non-canonical execid. */
static int
make_name (char *name, size_t size, const char *execid, const char *suffix)
{
    if (!shim_execid_valid (execid)) {
        errno = EINVAL;
        return -1;
    }
    snprintf (name, size, "%s%s", execid, suffix);
    return 0;
}

/* Read at most max bytes of a regular file, NUL-terminated. */
static char *
read_at (int dirfd, const char *name, size_t max, size_t *lenp, bool *truncp)
{
    size_t len = 0, cap;
    char *buf = NULL, *tmp, extra;
    struct stat st;
    ssize_t n;
    int fd, saved;

    fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat (fd, &st) < 0)
        goto error;
    if (!S_ISREG (st.st_mode)) {
        errno = EINVAL;
        goto error;
    }
    /* What fstat saw is what we return: a snapshot, as of now, of a file
     * that may still grow (output read while its command runs), without
     * a read only to be told EOF (every file cairnd collects, most of
     * them empty). */
    cap = (size_t)st.st_size < max ? (size_t)st.st_size : max;
    if (!(buf = malloc (cap + 1)))
        goto error;
    for (;;) {
        if (len == cap) {
            if (cap == max || len == (size_t)st.st_size)
                break;
            cap = cap > max / 2 ? max : cap * 2 + 4096;
            if (cap > max)
                cap = max;
            if (!(tmp = realloc (buf, cap + 1)))
                goto error;
            buf = tmp;
        }
        n = read (fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto error;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    if (truncp) {
        *truncp = false;
        if (len == max) {
            while ((n = read (fd, &extra, 1)) < 0 && errno == EINTR)
                ;
            *truncp = n > 0;
        }
    }
    close (fd);
    if (lenp)
        *lenp = len;
    return buf;
error:
    saved = errno;
    free (buf);
    close (fd);
    errno = saved;
    return NULL;
}

int exitfile_read (int dirfd, const char *execid, int *status, char **error)
{
    return exitfile_read_sized (dirfd, execid, status, error, NULL, NULL);
}

/* Parse a record (shim_proto.h) of len bytes at rec. Returns 0, or -1
 * with errno EINVAL or ENOMEM. */
static int record_parse (const char *rec,
                         size_t len,
                         int *status,
                         char **error,
                         long long *out_size,
                         long long *err_size,
                         int *leftover)
{
    const char *msg = NULL;
    json_int_t st, osz = -1, esz = -1, left = 0;
    json_t *o = NULL;

    if (!(o = json_loadb (rec, len, 0, NULL)) ||
        json_unpack (o, "{s:I s?:s s?:I s?:I s?:I}", "status", &st, "error",
                     &msg, "out", &osz, "err", &esz, "leftover", &left) < 0 ||
        st < 0 || st > 0xffff || (json_object_get (o, "out") && osz < 0) ||
        (json_object_get (o, "err") && esz < 0) || left < 0 || left > INT_MAX) {
        json_decref (o);
        errno = EINVAL;
        return -1;
    }
    if (error && msg && !(*error = strdup (msg))) {
        json_decref (o);
        errno = ENOMEM;
        return -1;
    }
    *status = (int)st;
    if (out_size)
        *out_size = osz;
    if (err_size)
        *err_size = esz;
    if (leftover)
        *leftover = (int)left;
    json_decref (o);
    return 0;
}

/* The whole record in a marker's content buf[0..len): from its first '{'
 * to its final '\n' (shim_proto.h). Returns where it starts, with *rlen,
 * or NULL when there is none (yet). */
static const char *marker_record (const char *buf, size_t len, size_t *rlen)
{
    const char *p = len > 0 ? memchr (buf, '{', len) : NULL;

    if (!p || buf[len - 1] != '\n')
        return NULL;
    *rlen = (size_t)(buf + len - p);
    return p;
}

int exitfile_read_sized (int dirfd,
                         const char *execid,
                         int *status,
                         char **error,
                         long long *out_size,
                         long long *err_size)
{
    return exitfile_read_left (dirfd, execid, status, error, out_size, err_size,
                               NULL);
}

int exitfile_read_left (int dirfd,
                        const char *execid,
                        int *status,
                        char **error,
                        long long *out_size,
                        long long *err_size,
                        int *leftover)
{
    char name[SHIM_NAME_MAX];
    const char *rec;
    bool truncated;
    char *buf;
    size_t len, rlen;
    int rc;

    if (error)
        *error = NULL;
    /* The marker's record: where every command that started has it. */
    if (make_name (name, sizeof (name), execid, SHIM_SUFFIX_STARTED) < 0)
        return -1;
    if ((buf = read_at (dirfd, name, EXITFILE_MAX, &len, &truncated))) {
        if ((rec = marker_record (buf, len, &rlen))) {
            rc = truncated ? (errno = EINVAL, -1)
                           : record_parse (rec, rlen, status, error, out_size,
                                           err_size, leftover);
            free (buf);
            return rc;
        }
        free (buf);
    }
    /* Else the exit file: a command that never made its marker. */
    make_name (name, sizeof (name), execid, "");
    if (!(buf = read_at (dirfd, name, EXITFILE_MAX, &len, &truncated)))
        return -1;
    rc = truncated ? (errno = EINVAL, -1)
                   : record_parse (buf, len, status, error, out_size, err_size,
                                   leftover);
    free (buf);
    return rc;
}

bool exitfile_started (int dirfd, const char *execid)
{
    char name[SHIM_NAME_MAX];
    struct stat st;

    if (make_name (name, sizeof (name), execid, SHIM_SUFFIX_STARTED) < 0)
        return true;
    if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return true;
    return errno != ENOENT;
}

int exitfile_marker (int dirfd,
                     const char *execid,
                     pid_t *pid,
                     unsigned long long *boot_ns)
{
    char name[SHIM_NAME_MAX], *buf, *end;
    unsigned long long p, ns;

    if (make_name (name, sizeof (name), execid, SHIM_SUFFIX_STARTED) < 0 ||
        !(buf = read_at (dirfd, name, 64, NULL, NULL)))
        return -1;
    errno = 0;
    p = strtoull (buf, &end, 10);
    bool ok = end != buf && *end == ' ' && p > 0 && p <= INT_MAX;
    if (ok) {
        char *num = end + 1;
        ns = strtoull (num, &end, 10);
        ok = end != num && *end == '\n' && errno == 0;
    }
    free (buf);
    if (!ok)
        return 0;
    *pid = (pid_t)p;
    *boot_ns = ns;
    return 1;
}

int exitfile_write_status (int dirfd, const char *execid, int status)
{
    char marker[SHIM_NAME_MAX], name[SHIM_NAME_MAX], tmp[SHIM_NAME_MAX];
    char buf[32];
    int n, st;

    if (make_name (marker, sizeof (marker), execid, SHIM_SUFFIX_STARTED) < 0)
        return -1;
    make_name (name, sizeof (name), execid, "");
    make_name (tmp, sizeof (tmp), execid, SHIM_SUFFIX_TMP);
    /* A record already there (its supervisor's) is the truth, and so is
     * one we cannot read: never a second one. */
    if (exitfile_read (dirfd, execid, &st, NULL) == 0 || errno != ENOENT) {
        errno = EEXIST;
        return -1;
    }
    n = snprintf (buf, sizeof (buf), "{\"status\":%d}\n", status & 0xffff);
    /* Into the marker, as its supervisor would have; an exit file for a
     * command that never made one. */
    if (shim_record_append (dirfd, marker, buf, (size_t)n) == 0)
        return 0;
    if (errno != ENOENT)
        return -1;
    return shim_exitfile_put (dirfd, name, tmp, buf, (size_t)n);
}

/* The name of an output file of stream "out" or "err"; EINVAL else. */
static int
output_name (char *name, size_t size, const char *execid, const char *stream)
{
    if (stream && !strcmp (stream, "out"))
        return make_name (name, size, execid, SHIM_SUFFIX_OUT);
    if (stream && !strcmp (stream, "err"))
        return make_name (name, size, execid, SHIM_SUFFIX_ERR);
    errno = EINVAL;
    return -1;
}

char *exitfile_read_output (int dirfd,
                            const char *execid,
                            const char *stream,
                            size_t max,
                            size_t *len,
                            bool *truncated)
{
    char name[SHIM_NAME_MAX];

    if (output_name (name, sizeof (name), execid, stream) < 0)
        return NULL;
    return read_at (dirfd, name, max, len, truncated);
}

ssize_t exitfile_read_output_at (int dirfd,
                                 const char *execid,
                                 const char *stream,
                                 uint64_t offset,
                                 char *buf,
                                 size_t len)
{
    char name[SHIM_NAME_MAX];
    ssize_t n;
    int fd, saved;

    if (output_name (name, sizeof (name), execid, stream) < 0)
        return -1;
    fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while ((n = pread (fd, buf, len, (off_t)offset)) < 0 && errno == EINTR)
        ;
    saved = errno;
    close (fd);
    errno = saved;
    return n;
}

int exitfile_remove (int dirfd, const char *execid)
{
    /* The marker goes last: until then a crash leaves a record that the
     * command ran, and its status. */
    static const char *const suffixes[] = {
        SHIM_SUFFIX_TMP,     SHIM_SUFFIX_OUT, SHIM_SUFFIX_ERR, "",
        SHIM_SUFFIX_STARTED,
    };
    char name[SHIM_NAME_MAX];
    int first = 0;

    if (!shim_execid_valid (execid)) {
        errno = EINVAL;
        return -1;
    }
    CRASHPOINT ("exec.exitfile.remove.before");
    for (size_t i = 0; i < sizeof (suffixes) / sizeof (suffixes[0]); i++) {
        make_name (name, sizeof (name), execid, suffixes[i]);
        if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT && !first)
            first = errno;
    }
    CRASHPOINT ("exec.exitfile.remove.after");
    if (first) {
        errno = first;
        return -1;
    }
    return 0;
}
