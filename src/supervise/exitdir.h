/* exitdir.h - where cairn-shim leaves its files, and when their absence
 * can be believed.
 *
 * Every command leaves its start marker, output and exit record in the exit
 * dir (shim_proto.h), and cairnd deletes them once the end is journaled.
 * Created and deleted by the thousand, such files made a disk file system
 * slower the more jobs a node had run (BENCHMARKS.md, "Soak"); on a tmpfs
 * they cost the same on the millionth job as on the first. So by default
 * <statedir>/exits is a symlink to <run-dir>/<journal instance>, a private
 * directory on a tmpfs (cairn.conf(5) "run-dir"); "statedir" keeps a plain
 * directory there instead. People, tests and the crash harness look at
 * <statedir>/exits either way; cairnd and the shims use the resolved path.
 *
 * At most once across a reboot. A missing start marker is what lets a
 * restarted cairnd start an intent again ("it never ran"). A tmpfs empties
 * at a reboot, and a disk keeps no file that was not synced, so that
 * inference holds only within the boot that wrote the dir. The dir holds
 * "boot", the boot id it was sealed under; a cairnd that finds none, or
 * another, opens it untrusted: a process whose outcome no exit record holds
 * is then lost, never started again (procs_look.c). exitdir_seal() writes
 * the current boot id once the restart's decisions are committed.
 *
 * Crash points: "exitdir.link.before" (making <statedir>/exits),
 * "exitdir.gc.remove" (before removing an abandoned dir), and those of
 * exitdir_seal(). A crash at any of them leaves nothing a restart cannot
 * redo: the link is made again, a half-removed empty dir is removed again.
 *
 * Switching run-dir keeps the dir in use while it still holds a process's
 * files (cairnd logs it): the new place is taken at a start that finds it
 * empty, so no live process's status is left behind.
 */
#ifndef CAIRN_EXEC_EXITDIR_H
#define CAIRN_EXEC_EXITDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/error.h"

struct exitdir {
    int fd;       /* O_DIRECTORY, close-on-exec */
    char *path;   /* the real directory (no symlink), for the shims */
    bool trusted; /* sealed under this boot: a missing marker means "never
                     started" */
    bool tmpfs;   /* on a tmpfs (cairn stats) */
};

/* The default run dir for uid: /run/cairn when uid is 0 and /run is a
 * tmpfs of root's that no one else may write; else $XDG_RUNTIME_DIR/cairn
 * when that is a tmpfs; else /dev/shm/cairn-<uid> when /dev/shm is one,
 * but for root when something other than a closed directory of root's is
 * there already (another user made it first, which would keep cairnd from
 * starting) and /run is root's: then /run/cairn, on a disk; else
 * "statedir". Written to buf (len >= 64). */
const char *exitdir_default_run_dir (uid_t uid, char *buf, size_t len);

/* Set up and open the exit dir of statedir (the state dir itself is
 * checked already): run_dir NULL = the default above, "statedir" = a
 * directory <statedir>/exits, else an absolute path under which
 * <instance> (the journal's) is made, mode 0700, and <statedir>/exits
 * points there. Every directory above a run dir must pass
 * dir_check_trusted() (dircheck.h) before it is made; a run dir must be a
 * directory owned by uid or root and writable by no one else; the
 * instance dir must be uid's and 0700.
 * bootid is the current boot id. Fills xd (exitdir_close frees it).
 * Returns 0, or -1 with errno and err naming the path: ENOTDIR, EPERM
 * (wrong owner or mode, "... is writable by others"), ENAMETOOLONG, or the
 * error of mkdir, symlink, open. */
int exitdir_open (const char *statedir,
                  const char *run_dir,
                  const char *instance,
                  const char *bootid,
                  uid_t uid,
                  struct exitdir *xd,
                  struct cairn_error *err);

/* Wait until no start that an earlier cairnd asked for is half done. The
 * supervisor (shim/serve.c) holds the dir's shared flock from the check
 * that its cairnd is still there until the command has exec'd (its marker
 * written) or its exit record says why it could not; this takes the lock
 * exclusively once. From then on a missing marker stays missing: an
 * earlier supervisor whose cairnd is gone starts nothing. Call it before
 * judging any intent. With wait false it does not block: -1 with errno
 * EWOULDBLOCK when a start is under way (err not set). Returns 0, or -1
 * with errno and err (flock's error). */
int exitdir_settle (struct exitdir *xd, bool wait, struct cairn_error *err);

/* Record that the dir's files were all written under bootid (its "boot"
 * file, written then renamed) and trust it from now on. Call once the
 * restart's judgements are committed. Crash points "exitdir.seal.before",
 * ".after". Returns 0, or -1 with errno and err (the dir stays untrusted,
 * which is safe: the next start is as careful as this one). */
int exitdir_seal (struct exitdir *xd,
                  const char *bootid,
                  struct cairn_error *err);

/* For whoever throws a state dir away (tests, benchmarks; cairnd never
 * calls it): remove the run dir that <statedir>/exits leads to, with all
 * it holds, if that dir names statedir as its owner (its "statedir" file
 * names the same directory). Nothing else: not an exits that is a plain
 * directory, missing or another's, nor the state dir itself. Best effort:
 * what cannot be removed stays. Preserves errno. */
void exitdir_discard (const char *statedir);

/* Close and free what xd holds; accepts a zeroed or closed one. */
void exitdir_close (struct exitdir *xd);

#endif /* CAIRN_EXEC_EXITDIR_H */
