/* exitfile.h - read what cairn-shim left in <statedir>/exits (and write
 * an exit record its supervisor could not).
 *
 * File names and formats are defined in shim_proto.h. Every function here
 * works relative to the exit dir's fd and refuses execids that are not
 * canonical UUIDs, so a bad id can never name a file outside the dir.
 */
#ifndef CAIRN_EXEC_EXITFILE_H
#define CAIRN_EXEC_EXITFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

/* Create <statedir>/exits (mode 0700) if needed and open it (O_DIRECTORY,
 * O_NOFOLLOW, close-on-exec). Returns the dir fd (the caller closes it), or
 * -1 with errno and err: the error of mkdir or open (ENOTDIR if "exits"
 * is not a directory or is a symlink, which is not followed; EACCES...). */
int exitfile_open_dir (const char *statedir, struct cairn_error *err);

/* Read the exit record of execid: the one in its marker, else its exit
 * file (shim_proto.h). Returns 0, sets *status to the command's wait status
 * and *error to the shim's reason for not running it (malloc'd, the caller
 * frees) or NULL. On error returns -1 with errno, *error NULL:
 *   ENOENT  no record (yet): none whole in the marker, no exit file
 *   EINVAL  execid not canonical, or the record is not an object with an
 *           integer "status" in 0..65535 and an optional string "error"
 *   ELOOP   the exit file is a symlink (not followed)
 *   ENOMEM, or the error of open/read */
int exitfile_read (int dirfd, const char *execid, int *status, char **error);

/* As exitfile_read(), and *out_size and *err_size set to the sizes the
 * shim saw its output files have when the command's process ended, or -1
 * where the record does not say (shim_proto.h; a shim without
 * --max-output). A size of 0 means there is nothing to read. EINVAL also
 * for a size that is not an integer >= 0. */
int exitfile_read_sized (int dirfd,
                         const char *execid,
                         int *status,
                         char **error,
                         long long *out_size,
                         long long *err_size);

/* exitfile_read_sized, with the record's "leftover" into *leftover (0
 * when absent; NULL: not wanted): how many processes of the command's
 * session were still there when its process ended (shim_proto.h). */
int exitfile_read_left (int dirfd,
                        const char *execid,
                        int *status,
                        char **error,
                        long long *out_size,
                        long long *err_size,
                        int *leftover);

/* Is the "about to exec" marker of execid present? Answers false only when
 * it is known to be absent (ENOENT); any other doubt (execid not canonical,
 * EACCES, EIO...) answers true with errno set, because "may have started"
 * is the answer that never runs a command twice. */
bool exitfile_started (int dirfd, const char *execid);

/* Write the exit record of execid with status (a wait status) and nothing
 * else, as its supervisor would have (shim_proto.h): for a command whose
 * supervisor died before it could. Appended to its marker in one write;
 * with no marker, an exit file written then renamed, never over an
 * existing one. Returns 0, or -1 with errno: EEXIST (a record is there,
 * or one that cannot be read: it stands), EINVAL (bad execid), or what
 * open, write or rename said. */
int exitfile_write_status (int dirfd, const char *execid, int status);

/* What the marker of execid says of the command's process (shim_proto.h):
 * its pid, and the boot clock in ns read after its start (its first line;
 * a record after it changes nothing). Returns 1 with both set; 0 when the
 * marker names no process (an empty one, or a record alone: a command
 * that died between making it and writing it, or an older shim's); -1
 * with errno: ENOENT (no marker), EINVAL (bad execid), or what open or
 * read said. */
int exitfile_marker (int dirfd,
                     const char *execid,
                     pid_t *pid,
                     unsigned long long *boot_ns);

/* Read up to max bytes of the command's output, stream "out" or "err".
 * Returns a malloc'd buffer (the caller frees) holding *len bytes plus a
 * terminating NUL (the output itself may contain NULs); *truncated is set
 * if the file holds more than max bytes. len and truncated may be NULL.
 * Returns NULL with errno: ENOENT (no such file), EINVAL (bad execid or
 * stream), ELOOP (symlink), ENOMEM, or the error of open/read. */
/* Read up to len bytes of the output file of stream ("out" or "err") from
 * offset, as it grows: for following a running command (live output).
 * Returns the bytes read (0 at the end, or past it after the shim's cap
 * cut the file back), or -1 with errno as exitfile_read_output(). */
ssize_t exitfile_read_output_at (int dirfd,
                                 const char *execid,
                                 const char *stream,
                                 uint64_t offset,
                                 char *buf,
                                 size_t len);

char *exitfile_read_output (int dirfd,
                            const char *execid,
                            const char *stream,
                            size_t max,
                            size_t *len,
                            bool *truncated);

/* Remove every file of execid: temp, output, exit file, then the marker
 * last, so that a crash half way leaves the most telling file in place.
 * Call only once the exit is journaled. Absent files are fine. Passes the
 * crash points "exec.exitfile.remove.before" and ".after". Returns 0, or
 * -1 with errno: EINVAL (bad execid) or the first unlink error (the other
 * files are still tried). */
int exitfile_remove (int dirfd, const char *execid);

#endif /* CAIRN_EXEC_EXITFILE_H */
