/* journal.h - cairn's durable, append-only job journal (LMDB).
 *
 * One LMDB environment lives in <statedir>/journal. It holds, per job, the
 * job's RFC 18 eventlog entries (one compact JSON line each, opaque here),
 * numbered 0, 1, 2... without gaps, plus a small job record and an index of
 * the jobs that are still active.
 *
 * Writing follows the write-ahead rule (doc/design.md): journal_append(),
 * journal_set_active() and journal_purge() only add operations to an
 * in-memory batch; journal_commit() writes the whole batch in one LMDB write
 * transaction and returns once it is durable. Either all of a batch is on
 * disk or none of it is, whatever crashes when.
 *
 * Reading functions see committed data only, never the batch. Their read
 * transactions are short: one per call.
 *
 * Rules inherited from LMDB:
 * - at most one open journal per path per process (journal_open fails
 *   EBUSY on the second one);
 * - a journal may not be used across fork(): a child process must not call
 *   anything here on its parent's handle except journal_close() (which then
 *   only frees memory); reads and commits from another process fail with
 *   EINVAL. A child may open the journal itself (journal_open);
 * - a handle is not thread-safe: use it from one thread at a time (the
 *   committer thread of journal_commit_start is the journal's own).
 *
 * On-disk layout (format version 1), all named LMDB databases:
 *   "meta"    "format" -> "1"; "instance" -> UUID text made at creation;
 *             "created" -> creation time, "%.6f" epoch seconds.
 *   "events"  key: job id (uint64 big-endian) . seq (uint32 big-endian),
 *             12 bytes, so a cursor walks one job's events in order and the
 *             jobs in id order; value: one eventlog line, no newline.
 *   "jobs"    key: job id (uint64 big-endian); value: struct
 *             journal_jobrec below, in host byte order (an LMDB file is not
 *             portable across byte orders anyway).
 *   "active"  key: job id (uint64 big-endian); empty value. One entry per
 *             active job, so listing active jobs never touches finished
 *             ones.
 *   "drains"  key: rank (uint32 big-endian); value: a JSON object, the
 *             rank's last drain (journal_drain), until it is undrained.
 *             Added within format 1, as "purged".
 *   "purged"  key: job id (uint64 big-endian); empty value. Every job
 *             journal_purge() removed, so that its id is never used again
 *             (added within format 1: a writer creates it on open; for a
 *             reader of an older journal it is absent, and empty).
 *
 * Errors: LMDB's own codes never leave this module. They become
 *   MDB_MAP_FULL -> ENOSPC, MDB_NOTFOUND -> ENOENT, MDB_KEYEXIST -> EEXIST,
 *   MDB_INVALID, MDB_VERSION_MISMATCH, MDB_INCOMPATIBLE -> EPROTO (a file
 *     this build cannot read, like a journal of another format version),
 *   MDB_CORRUPTED, MDB_PAGE_NOTFOUND -> EUCLEAN (a damaged journal: restore
 *     it, upgrading cairn will not help),
 *   MDB_READERS_FULL, MDB_MAP_RESIZED -> EAGAIN, MDB_TXN_FULL -> E2BIG,
 *   MDB_BAD_VALSIZE -> EINVAL, positive codes (system errno) unchanged,
 *   anything else (MDB_PANIC...) -> EIO.
 */
#ifndef CAIRN_JOURNAL_H
#define CAIRN_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* The format version this code reads and writes. */
#define JOURNAL_FORMAT_VERSION 1

/* The "jobs" database record (24 bytes, host byte order). */
#define JOURNAL_JOBREC_VERSION 1
#define JOURNAL_JOB_ACTIVE 0x1 /* flags bit 0 */
struct journal_jobrec {
    uint32_t version; /* JOURNAL_JOBREC_VERSION */
    uint32_t flags;   /* JOURNAL_JOB_ACTIVE, other bits zero */
    uint32_t nevents; /* events stored: seqs 0 .. nevents-1 */
    uint32_t pad;     /* zero */
    double t_end;     /* t_end of journal_set_active(false), else 0 */
};

struct journal;

struct journal_opts {
    size_t map_size;     /* initial map size; 0 = 64 MiB */
    size_t max_map_size; /* grow the map up to this on MDB_MAP_FULL;
                          * 0 = 4 GiB (or map_size if larger) */
    bool nosync;         /* MDB_NOSYNC: benchmark-only switch, never the
                          * default: a commit is then not durable */
    bool readonly;       /* MDB_RDONLY for the inspection CLI; writes fail
                          * EROFS */
};

struct journal_jobinfo {
    uint64_t id;
    bool active;
    uint32_t nevents; /* events stored; the next seq to append */
    double t_end;     /* timestamp passed to journal_set_active(false), or 0 */
};

struct journal_stats {
    size_t map_size;     /* current size of the memory map, bytes */
    size_t map_used;     /* bytes of the map in use (last page + 1): a high
                          * water mark, it does not shrink after a purge */
    size_t data_used;    /* bytes in live pages of the journal's databases:
                          * what a purge frees comes off this */
    size_t max_map_size; /* the map never grows beyond this */
    size_t njobs;        /* job records */
    size_t nactive;      /* active jobs */
    size_t nevents;      /* events, all jobs */
    size_t page_size;    /* LMDB page size */
};

/* Open (creating if needed) the journal of the state directory statedir.
 * opts may be NULL for the defaults. The directory statedir must exist;
 * <statedir>/journal is created with mode 0700 if missing (not when
 * readonly). A new journal gets format version 1, a fresh instance UUID and
 * its creation time, all in its first commit. Stale reader slots left by
 * dead processes are cleared (mdb_reader_check).
 *
 * The map is never shrunk: an existing journal keeps the larger of its
 * stored map size and opts->map_size.
 *
 * Returns a handle to free with journal_close(), or NULL with errno and a
 * message naming the path in err:
 *   ENOENT   statedir does not exist; or readonly and there is no journal
 *   ENOTDIR  statedir or <statedir>/journal is not a directory
 *   EPROTO   the journal has another format version ("journal at DIR has
 *            format version N; this cairn reads version 1"), or is not an
 *            LMDB file this build can read
 *   EACCES   permission denied
 *   EBUSY    this process already has this journal open
 *   EINVAL   opts->map_size > opts->max_map_size (both non-zero)
 *   EUCLEAN, EIO, ENOMEM ...
 */
struct journal *journal_open (const char *statedir,
                              const struct journal_opts *opts,
                              struct cairn_error *err);

/* Close the journal, discarding any uncommitted batch. Accepts NULL;
 * preserves errno. */
void journal_close (struct journal *j);

/* The journal's instance UUID (36 characters), set when the journal was
 * created and never changed. Owned by j, valid until journal_close(). */
const char *journal_instance (const struct journal *j);

/* Batching. "Many appends, one durable commit" is the only way to write.
 * These functions validate against the committed data plus the batch so
 * far, so a bad call fails here, not at commit time. None of them touches
 * the disk except to read a job's committed record the first time a batch
 * mentions the job.
 */

/* Add event seq of job id, the line of len bytes (copied; opaque, need not
 * be NUL-terminated). seq must be the job's next sequence number: its
 * committed nevents plus the events already batched for it, so a job's
 * events are gap-free and in order.
 * The first event of a job that has no record creates the record, marked
 * active: a job is active from its first event until
 * journal_set_active(false), so a restart can never overlook it.
 * Returns 0, or -1 with errno:
 *   EINVAL     seq is not the next one, or line is NULL with len > 0
 *   EOVERFLOW  the job already has UINT32_MAX events
 *   EROFS      the journal is read-only
 *   ENOMEM, or a read error (EIO...)
 */
int journal_append (
    struct journal *j, uint64_t id, uint32_t seq, const char *line, size_t len);

/* Mark job id active (creating its record, with no events, if it has
 * none) or done. Marking it done records t_end (stored as given);
 * marking it active again resets t_end to 0. Events are kept either way.
 * Returns 0, or -1 with errno: ENOENT (active false and no such job),
 * EROFS, ENOMEM, or a read error.
 */
int journal_set_active (struct journal *j,
                        uint64_t id,
                        bool active,
                        double t_end);

/* Delete job id's events and record (for retention). The job must be
 * done. Returns 0, or -1 with errno: EBUSY (the job is active), ENOENT
 * (no such job), EROFS, ENOMEM, or a read error.
 */
int journal_purge (struct journal *j, uint64_t id);

/* Record rank as drained, with record (a JSON object, text), replacing
 * what was there; record NULL undrains it. Batched like the others.
 * Returns 0, or -1 with errno: EINVAL (empty record), EROFS, ENOMEM. */
int journal_drain (struct journal *j, uint32_t rank, const char *record);

/* Call cb for each drained rank in rank order, committed only, in one
 * read transaction; cb returns 0 to go on, 1 to stop, -1 (errno) to
 * fail. Returns 0, or -1 with errno and err. */
typedef int (*journal_drain_f) (uint32_t rank,
                                const char *record,
                                size_t len,
                                void *arg);
int journal_foreach_drain (struct journal *j,
                           journal_drain_f cb,
                           void *arg,
                           struct cairn_error *err);

/* The nodeprocs table of a node-role cairnd (cairnd(8), issue 15): one
 * record (a JSON object, NUL-terminated, non-empty) per process it was
 * asked to run, keyed by execid (JOURNAL_EXECID_LEN characters). Batched
 * like the rest: record NULL deletes. EINVAL for a bad execid or an
 * empty record; EROFS on a read-only journal. */
#define JOURNAL_EXECID_LEN 36
int journal_nodeproc (struct journal *j, const char *execid, const char *record);

/* Each committed nodeprocs record, in execid order: cb gets the execid
 * (NUL-terminated) and the record (not NUL-terminated); a non-zero return
 * stops the walk (negative: an error with errno). Nothing (0) when the
 * journal has no such table. Returns 0, or -1 with err. */
typedef int (*journal_nodeproc_f) (const char *execid,
                                   const char *record,
                                   size_t len,
                                   void *arg);
int journal_foreach_nodeproc (struct journal *j,
                              journal_nodeproc_f cb,
                              void *arg,
                              struct cairn_error *err);

/* Was job id purged (its id used, its events gone)? Committed purges
 * only. Returns 1 or 0, or -1 with errno (a read error). */
int journal_purged (struct journal *j, uint64_t id);

/* Fill info with job id's record as the batch would leave it: the next
 * seq to append (nevents), and whether it is active (t_end is 0). For
 * appending to a job that is done (a late record, remote.c) in a batch
 * that may already hold events of it. Returns 0, or -1 with errno:
 * ENOENT (no such job, or purged in the batch), EROFS, ENOMEM, or a read
 * error. */
int journal_job_batched (struct journal *j,
                         uint64_t id,
                         struct journal_jobinfo *info);

/* The number of batched operations (appends, set_active and purge calls)
 * waiting for journal_commit(). */
size_t journal_pending (const struct journal *j);

/* Write the batch in one LMDB write transaction and return once it is
 * durable (unless opts.nosync). On success the batch is emptied (its
 * memory is kept for the next one). With nothing pending: no-op, 0
 * (EBUSY while an asynchronous commit is in flight, below).
 *
 * When the map is full, the map is grown (doubled, capped at max_map_size)
 * and the transaction retried. On failure nothing of the batch is visible
 * in the journal and the batch is KEPT: the caller may retry the commit or
 * journal_discard() it. Returns 0, or -1 with errno and a message in err:
 *   ENOSPC  the batch does not fit even in a map of max_map_size
 *   EEXIST  an appended seq is already in the journal (a bug: history is
 *           never overwritten)
 *   EBUSY   the map must grow but a read of this handle is in progress
 *           (journal_commit called from a read callback)
 *   EROFS   read-only journal with a batch (cannot happen via this API)
 *   EBUSY   an asynchronous commit is in flight (journal_commit_finish)
 *   EIO, E2BIG ... or an errno injected by CAIRN_FAULT=journal.commit:K
 * Crash points: "journal.commit.before" just before the LMDB commit,
 * "journal.commit.after" right after it succeeds.
 */
int journal_commit (struct journal *j, struct cairn_error *err);

/* Drop the batch. */
void journal_discard (struct journal *j);

/* Asynchronous commit: the batch written by the journal's committer
 * thread (started on first use) while the caller goes on, so that the
 * fdatasync's wait and LMDB's work leave the caller's thread (cairnd's
 * loop, doc/design.md "The write-ahead rule").
 *
 * journal_commit_start() hands the batch over and returns at once; an
 * empty batch takes its place, and journal_append() and the others
 * validate against what the journal will be once the batch in flight is
 * written. When that commit has ended, durable or failed, done (arg) is
 * called ON THE COMMITTER THREAD, with the journal's lock held: it must
 * only wake the caller (ev_async_send) and touch nothing of the journal.
 * The caller then calls journal_commit_finish() for the result, and only
 * after a 0 from it may act on what the batch held (the write-ahead
 * rule). One commit at a time: while one is in flight, a second start and
 * journal_commit() fail EBUSY. Reads see committed data only: nothing of
 * the batch in flight before it is on disk. Crash points and the
 * journal.commit fault are those of journal_commit(), passed on the
 * committer thread.
 *
 * journal_commit_start returns 0 (in flight; with nothing pending, 0 and
 * nothing in flight: done is not called), or -1 with errno and err:
 *   EBUSY   a commit is in flight
 *   EROFS   read-only journal with a batch
 *   EINVAL  j is NULL, or opened by another process
 *   EAGAIN, ENOMEM  the committer thread could not be started
 */
typedef void (*journal_done_f) (void *arg);
int journal_commit_start (struct journal *j,
                          journal_done_f done,
                          void *arg,
                          struct cairn_error *err);

/* Is a commit in flight (started and not finished)? */
bool journal_committing (const struct journal *j);

/* Wait for the commit in flight to end and return its result; the batch
 * in flight is then gone, written or dropped. A batch the committer could
 * not write without changing the map (full, or grown by another process)
 * is written here, on the caller's thread, growing the map as
 * journal_commit() does. Nothing in flight: 0. Returns 0, or -1 with
 * errno and err as journal_commit(); unlike journal_commit(), a failed
 * batch is not kept, and the open batch was validated against it: drop
 * that too (journal_discard) or close the journal. */
int journal_commit_finish (struct journal *j, struct cairn_error *err);

/* Reading. Each call runs one short read transaction; it never blocks the
 * writer and sees committed data only. Callbacks run inside that
 * transaction: the line pointer is valid only during the call. Callbacks may
 * call the reading functions (nesting is allowed) and batch writes, but
 * should not commit (see EBUSY above).
 */

/* Return 0 to continue, 1 to stop, -1 (with errno set) to stop and make the
 * caller fail with that errno. */
typedef int (*journal_event_f) (
    uint64_t id, uint32_t seq, const char *line, size_t len, void *arg);

/* Call cb for each event of job id from seq from_seq on, in seq order.
 * from_seq at or beyond the job's end calls nothing and succeeds.
 * Returns 0 (also when cb stopped with 1), or -1 with errno and a message
 * in err: ENOENT (no such job), the callback's errno, or a read error.
 */
int journal_read_job (struct journal *j,
                      uint64_t id,
                      uint32_t from_seq,
                      journal_event_f cb,
                      void *arg,
                      struct cairn_error *err);

/* Fill info with job id's committed record.
 * Returns 0, or -1 with errno ENOENT (no such job) or a read error. */
int journal_job_info (struct journal *j,
                      uint64_t id,
                      struct journal_jobinfo *info);

/* Return 0 to continue, 1 to stop, -1 (errno set) to fail. */
typedef int (*journal_job_f) (const struct journal_jobinfo *info, void *arg);

/* Call cb for each job in id order: all jobs, or with active_only only the
 * active ones (walking only the "active" index, never finished jobs).
 * Returns 0, or -1 with errno and a message in err: the callback's errno,
 * EUCLEAN (an active entry without a job record), or a read error.
 */
int journal_foreach_job (struct journal *j,
                         bool active_only,
                         journal_job_f cb,
                         void *arg,
                         struct cairn_error *err);

/* Every job, newest (highest id) first, as journal_foreach_job does
 * otherwise: for "the last N jobs" without walking them all. */
int journal_foreach_job_newest (struct journal *j,
                                journal_job_f cb,
                                void *arg,
                                struct cairn_error *err);

/* Fill st with the journal's sizes and counts (committed data).
 * Returns 0, or -1 with errno (a read error). */
int journal_stats (struct journal *j, struct journal_stats *st);

#endif /* CAIRN_JOURNAL_H */
