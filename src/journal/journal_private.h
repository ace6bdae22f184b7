/* journal_private.h - what journal.c, journal_read.c and journal_write.c
 * share. Not for use outside src/journal.
 */
#ifndef CAIRN_JOURNAL_PRIVATE_H
#define CAIRN_JOURNAL_PRIVATE_H

#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "journal/journal.h"

#define JOURNAL_KEY_JOB 8    /* job id, big-endian */
#define JOURNAL_KEY_EVENT 12 /* job id, then seq, big-endian */

enum jop_type {
    JOP_APPEND,
    JOP_SET_ACTIVE,
    JOP_PURGE,
    JOP_DRAIN,
    JOP_NODEPROC, /* key: buf[off .. off+EXECID), record after it */
};

/* One batched operation. An append's line is buf[off .. off+len) of the
 * batch: offsets, not pointers, so the buffer may move when it grows. */
struct jop {
    uint64_t id;
    size_t off;
    size_t len;
    double t_end;
    uint32_t seq;
    uint8_t type;
    bool active;
};

/* A job the batch mentions. Two views of it:
 * - the batch view, what the job will be once the batch is committed, which
 *   journal_append/set_active/purge validate against;
 * - the commit view, rebuilt by every commit attempt from the write
 *   transaction, so the job record is written once per job per commit. */
struct jjob {
    uint64_t id;
    uint32_t slot; /* index in the hash slots, kept for O(1) clearing */
    /* batch view */
    uint32_t next_seq;
    bool exists;
    bool active;
    /* commit view */
    bool c_loaded;
    bool c_exists;
    bool c_dirty;
    struct journal_jobrec c_rec;
};

struct jbatch {
    struct jop *ops;
    size_t nops, ops_cap;
    char *buf; /* append lines, back to back */
    size_t buf_len, buf_cap;
    struct jjob *jobs; /* dense, in order of first mention */
    size_t njobs, jobs_cap;
    uint32_t *slots; /* open addressing: 0 empty, else jobs index + 1 */
    size_t slots_cap;
};

struct journal {
    MDB_env *env;
    MDB_dbi dbi_meta, dbi_events, dbi_jobs, dbi_active;
    MDB_dbi dbi_purged; /* valid when has_purged */
    bool has_purged;    /* false: a read-only journal from before it */
    MDB_dbi dbi_drains; /* valid when has_drains */
    bool has_drains;
    MDB_dbi dbi_nodeprocs; /* valid when has_nodeprocs */
    bool has_nodeprocs;
    char *path;         /* <statedir>/journal */
    char instance[40];
    pid_t pid; /* the process that opened it */
    unsigned
        fork_gen; /* journal.c's fork count at the open (journal_check_pid) */
    dev_t dev;
    ino_t ino;
    struct journal *next; /* the open-journal registry */
    bool readonly;
    bool nosync;
    size_t max_map_size;
    size_t page_size;
    MDB_txn *spare_rtxn; /* a reset read txn kept for reuse (MDB_NOTLS) */
    int nreaders;        /* read txns of this handle now active */
    struct jbatch batch;
    /* The asynchronous commit (journal_async.c): the batch the committer
     * thread writes while batch fills. in_flight is the caller's thread's
     * alone: set by journal_commit_start, cleared by journal_commit_finish;
     * the committer never reads or writes flight's batch view. */
    struct jbatch flight;
    bool in_flight;
    struct jcommitter *committer; /* NULL until the first async commit */
};

/* journal_commit_batch's results besides 0 and -1: grow the map, then
 * try again; the map must change, so the caller's thread must commit
 * (async only). */
#define JOURNAL_COMMIT_MAP_FULL 1
#define JOURNAL_COMMIT_ON_CALLER 2

/* One attempt at writing batch b in one write txn. On the committer
 * thread (async), anything that would change the map (a full map, one
 * grown by another process) is left to the caller's thread:
 * JOURNAL_COMMIT_ON_CALLER. Returns 0, JOURNAL_COMMIT_MAP_FULL (not
 * async), JOURNAL_COMMIT_ON_CALLER (async only), or -1 with errno and err;
 * in every case but 0 the journal is unchanged. */
int journal_commit_batch (struct journal *j,
                          struct jbatch *b,
                          bool async,
                          struct cairn_error *err);

/* Write b synchronously, growing the map as needed; b is emptied on
 * success. Returns 0, or -1 with errno and err. */
int journal_commit_sync (struct journal *j,
                         struct jbatch *b,
                         struct cairn_error *err);

/* The checks of a commit, async or not: 1 (go on), 0 (nothing to
 * commit), or -1 with errno and err: EINVAL (no journal, or another
 * process's handle), EBUSY (a commit in flight), EROFS. */
int journal_commit_check (struct journal *j, struct cairn_error *err);

/* Empty b, keeping its memory. */
void journal_batch_clear (struct jbatch *b);

/* Stop and free the committer thread (journal_close), after waiting for
 * a commit in flight. */
void journal_committer_free (struct journal *j);

/* Map an LMDB return code (or a positive errno) to an errno value. */
int journal_errno (int rc);

/* Set errno = journal_errno (rc) and err to "<fmt>: <reason>". Returns -1. */
int journal_err (struct cairn_error *err, int rc, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* 0, or EINVAL if called in another process than the one that opened j:
 * a child forked since (fork() runs pthread_atfork handlers; a child that
 * skips them, of vfork, posix_spawn or _Fork, must exec or exit without
 * touching the journal). No system call: the check is on every read and
 * commit. */
int journal_check_pid (const struct journal *j);

/* Begin a transaction, adopting a map grown by another process
 * (MDB_MAP_RESIZED) when that is safe. Returns an MDB code. */
int journal_txn_begin (struct journal *j, unsigned int flags, MDB_txn **txnp);

/* Get a read txn (reusing the spare one) / give it back. Begin returns an
 * MDB code or EINVAL (wrong process). */
int journal_rtxn_begin (struct journal *j, MDB_txn **txnp);
void journal_rtxn_end (struct journal *j, MDB_txn *txn);

/* Read job id's record. Returns 0, MDB_NOTFOUND, MDB_CORRUPTED (wrong size
 * or version) or another MDB code. */
int journal_jobrec_get (struct journal *j,
                        MDB_txn *txn,
                        uint64_t id,
                        struct journal_jobrec *rec);

/* Free the batch's memory (journal_close). */
void journal_batch_free (struct jbatch *b);

static inline void journal_put_be64 (unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
}

static inline void journal_put_be32 (unsigned char *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
}

static inline uint64_t journal_get_be64 (const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline uint32_t journal_get_be32 (const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline void journal_info_from_rec (uint64_t id,
                                          const struct journal_jobrec *rec,
                                          struct journal_jobinfo *info)
{
    info->id = id;
    info->active = (rec->flags & JOURNAL_JOB_ACTIVE) != 0;
    info->nevents = rec->nevents;
    info->t_end = rec->t_end;
}

#endif /* CAIRN_JOURNAL_PRIVATE_H */
