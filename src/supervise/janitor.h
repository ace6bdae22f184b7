/* janitor.h - remove finished commands' exit-dir files off the loop thread.
 *
 * Once a process's end is committed, its files in the exit dir (marker
 * with its exit record, output, temp) are redundant and go (design.md W8).
 * Five unlinkat calls per process were a fifth of cairnd's loop thread
 * under load (issue 35); nothing waits on them, so a thread of their own
 * does them, in the order they were asked for.
 *
 * A removal that happens later than before is as safe as one a crash took
 * away, which could always happen between the commit and the unlink: a
 * restart sweeps what no live process owns (reconcile_sweep_exits), and
 * nothing in a running cairnd looks at the files of an ended process (an
 * execid is never started again once its end is committed).
 *
 * Threads: janitor_push() and janitor_kick() belong to one thread (the
 * loop); the janitor's own thread only removes files. It blocks every
 * signal, so the loop keeps receiving them, and it is created after the
 * keeper's fork (cairnd forks nothing later). Crash points: those of
 * exitfile_remove(), now passed on the janitor's thread (a crash point
 * kills the whole process from any thread).
 */
#ifndef CAIRN_SUPERVISE_JANITOR_H
#define CAIRN_SUPERVISE_JANITOR_H

#include "core/error.h"

struct janitor;

/* Start a janitor removing files under the exit dir dirfd (dup'ed: the
 * caller keeps its own). Returns NULL with errno and err: ENOMEM, or the
 * error of dup. A thread that cannot be created (EAGAIN: a task limit) is
 * logged, and janitor_kick() then removes on the caller's thread. */
struct janitor *janitor_create (int dirfd, struct cairn_error *err);

/* Queue the removal of every file of execid (exitfile_remove). Call only
 * once its end is committed. The removal waits for janitor_kick() (or
 * janitor_destroy()). A non-canonical execid is dropped, as
 * exitfile_remove() refuses it. Never fails: without memory to queue it,
 * the files are removed at once, on the caller's thread. */
void janitor_push (struct janitor *j, const char *execid);

/* Hand what was pushed since the last kick to the janitor's thread and
 * wake it: once per loop turn, after the turn's effects, so that a turn
 * costs one wake-up at most. If the janitor is far behind (a backlog of
 * JANITOR_BACKLOG_MAX), the caller removes this batch itself instead:
 * memory stays bounded, and a loop that outruns the janitor is slowed to
 * its pace rather than the files piling up. */
void janitor_kick (struct janitor *j);
#define JANITOR_BACKLOG_MAX 16384

/* Remove everything still queued, pushed or handed over, stop the thread
 * and free j. Accepts NULL; preserves errno. */
void janitor_destroy (struct janitor *j);

#endif /* CAIRN_SUPERVISE_JANITOR_H */
