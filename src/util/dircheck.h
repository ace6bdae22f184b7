/* dircheck.h - can another user change a directory cairnd uses?
 *
 * cairnd, as root, keeps its state, its exit records and its public socket
 * in directories. Whoever can write a directory can rename what is in it
 * and put something of their own in its place (a socket that answers for
 * cairnd, a run dir whose files it trusts), or take the name first so
 * that cairnd cannot start. So a directory cairnd uses, and every
 * directory above it, must belong to root or to cairnd's uid, and be
 * writable by no one else; a directory with the sticky bit (/tmp,
 * /dev/shm) may be, since others cannot rename or remove an entry of ours
 * there.
 */
#ifndef CAIRN_EXEC_DIRCHECK_H
#define CAIRN_EXEC_DIRCHECK_H

#include <sys/types.h>

#include "core/error.h"

/* Check path, a directory, and every directory above it, following any
 * symlink on the way (the real path is checked, from "/" down): each must
 * be owned by root or by uid, and writable by its group or by others only
 * if it has the sticky bit. Returns 0, or -1 with errno and err naming
 * the directory:
 *   EPERM   "DIR: owned by uid N, expected root or uid M" ("expected
 *           root" when uid is 0),
 *           "DIR: mode 0777: writable by others without the sticky bit"
 *   ENOTDIR "PATH: not a directory"
 *   ENAMETOOLONG, or the errno of realpath or stat: "PATH: <strerror>"
 */
int dir_check_trusted (const char *path, uid_t uid, struct cairn_error *err);

/* dir_check_trusted() on the directory that holds file (its path up to the
 * last '/'; "." when it has none). Same returns. */
int dir_check_parent (const char *file, uid_t uid, struct cairn_error *err);

#endif /* CAIRN_EXEC_DIRCHECK_H */
