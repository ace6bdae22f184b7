/* journal_write.c - the batch and its commit.
 *
 * The daemon batches a loop turn's events and commits once per turn, so
 * the batch's arrays are kept between commits and only grow: a steady
 * state allocates nothing.
 *
 * Validation happens twice. At batch time, against the committed record
 * read once per job per batch plus what the batch already holds, so that a
 * caller's mistake fails at the call that made it. At commit time, inside
 * the write txn, because that is the truth: a seq already stored is refused
 * by the put itself (MDB_NOOVERWRITE, or MDB_APPEND, which refuses any key
 * not above the last one), never overwritten.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "journal/crashpoint.h"
#include "journal/journal_private.h"

void journal_batch_free (struct jbatch *b)
{
    free (b->ops);
    free (b->buf);
    free (b->jobs);
    free (b->slots);
    memset (b, 0, sizeof (*b));
}

void journal_batch_clear (struct jbatch *b)
{
    for (size_t i = 0; i < b->njobs; i++)
        b->slots[b->jobs[i].slot] = 0;
    b->njobs = 0;
    b->nops = 0;
    b->buf_len = 0;
}

static size_t slot_hash (uint64_t id, size_t cap)
{
    id *= 0x9e3779b97f4a7c15ULL; /* Fibonacci hashing: job ids are dense */
    return (size_t)(id ^ (id >> 32)) & (cap - 1);
}

static struct jjob *batch_find (struct jbatch *b, uint64_t id)
{
    if (b->slots_cap == 0)
        return NULL;
    for (size_t i = slot_hash (id, b->slots_cap);;
         i = (i + 1) & (b->slots_cap - 1)) {
        if (b->slots[i] == 0)
            return NULL;
        if (b->jobs[b->slots[i] - 1].id == id)
            return &b->jobs[b->slots[i] - 1];
    }
}

static void slot_insert (struct jbatch *b, size_t index)
{
    size_t i = slot_hash (b->jobs[index].id, b->slots_cap);
    while (b->slots[i] != 0)
        i = (i + 1) & (b->slots_cap - 1);
    b->slots[i] = (uint32_t)index + 1;
    b->jobs[index].slot = (uint32_t)i;
}

/* Make room for one more job; the hash stays at most half full. */
static int batch_reserve_job (struct jbatch *b)
{
    if (b->njobs == b->jobs_cap) {
        size_t cap = b->jobs_cap ? b->jobs_cap * 2 : 32;
        struct jjob *p;
        if (cap > UINT32_MAX / 4 ||
            !(p = realloc (b->jobs, cap * sizeof (*p)))) {
            errno = ENOMEM;
            return -1;
        }
        b->jobs = p;
        b->jobs_cap = cap;
    }
    if ((b->njobs + 1) * 2 > b->slots_cap) {
        size_t cap = b->slots_cap ? b->slots_cap * 2 : 64;
        uint32_t *p = calloc (cap, sizeof (*p));
        if (!p)
            return -1;
        free (b->slots);
        b->slots = p;
        b->slots_cap = cap;
        for (size_t i = 0; i < b->njobs; i++)
            slot_insert (b, i);
    }
    return 0;
}

/* The batch's entry for job id, made from the committed record the first
 * time the batch mentions the job. */
static struct jjob *batch_job (struct journal *j, uint64_t id)
{
    struct jbatch *b = &j->batch;
    struct journal_jobrec rec;
    struct jjob *jb;
    MDB_txn *txn;
    int rc;

    if ((jb = batch_find (b, id)))
        return jb;
    if (batch_reserve_job (b) < 0)
        return NULL;
    /* a batch being committed holds what the job will be once it is on
     * disk: that, not the disk, is where this batch starts from */
    const struct jjob *f = j->in_flight ? batch_find (&j->flight, id) : NULL;
    if (f) {
        jb = &b->jobs[b->njobs];
        memset (jb, 0, sizeof (*jb));
        jb->id = id;
        jb->exists = f->exists;
        jb->active = f->active;
        jb->next_seq = f->next_seq;
        slot_insert (b, b->njobs++);
        return jb;
    }
    if ((rc = journal_rtxn_begin (j, &txn)))
        goto error;
    rc = journal_jobrec_get (j, txn, id, &rec);
    journal_rtxn_end (j, txn);
    if (rc && rc != MDB_NOTFOUND)
        goto error;
    jb = &b->jobs[b->njobs];
    memset (jb, 0, sizeof (*jb));
    jb->id = id;
    if (rc == 0) {
        jb->exists = true;
        jb->active = (rec.flags & JOURNAL_JOB_ACTIVE) != 0;
        jb->next_seq = rec.nevents;
    }
    slot_insert (b, b->njobs++);
    return jb;
error:
    errno = journal_errno (rc);
    return NULL;
}

static struct jop *batch_push (struct jbatch *b)
{
    if (b->nops == b->ops_cap) {
        size_t cap = b->ops_cap ? b->ops_cap * 2 : 256;
        struct jop *p = realloc (b->ops, cap * sizeof (*p));
        if (!p)
            return NULL;
        b->ops = p;
        b->ops_cap = cap;
    }
    struct jop *op = &b->ops[b->nops];
    memset (op, 0, sizeof (*op));
    return op;
}

static int batch_writable (struct journal *j)
{
    if (j->readonly) {
        errno = EROFS;
        return -1;
    }
    return 0;
}

/* Copy len bytes into the batch's buffer; their offset in *off. */
static int batch_copy (struct jbatch *b, const char *s, size_t len, size_t *off)
{
    if (len > b->buf_cap - b->buf_len) {
        size_t cap = b->buf_cap ? b->buf_cap : 4096;
        while (cap - b->buf_len < len) {
            if (cap > SIZE_MAX / 2) {
                errno = ENOMEM;
                return -1;
            }
            cap *= 2;
        }
        char *p = realloc (b->buf, cap);
        if (!p)
            return -1;
        b->buf = p;
        b->buf_cap = cap;
    }
    if (len > 0)
        memcpy (b->buf + b->buf_len, s, len);
    *off = b->buf_len;
    b->buf_len += len;
    return 0;
}

int journal_drain (struct journal *j, uint32_t rank, const char *record)
{
    struct jop *op;
    size_t off = 0, len = record ? strlen (record) : 0;

    if (!j || (record && len == 0)) {
        errno = EINVAL;
        return -1;
    }
    if (batch_writable (j) < 0)
        return -1;
    if (!j->has_drains) {
        errno = EROFS;
        return -1;
    }
    if (!(op = batch_push (&j->batch)) ||
        batch_copy (&j->batch, record, len, &off) < 0)
        return -1;
    op->type = JOP_DRAIN;
    op->seq = rank;
    op->active = record != NULL; /* drained, or undrained */
    op->off = off;
    op->len = len;
    j->batch.nops++;
    return 0;
}

int journal_nodeproc (struct journal *j, const char *execid, const char *record)
{
    struct jop *op;
    size_t off = 0, off2 = 0, len = record ? strlen (record) : 0;

    if (!j || !execid || strlen (execid) != JOURNAL_EXECID_LEN ||
        (record && len == 0)) {
        errno = EINVAL;
        return -1;
    }
    if (batch_writable (j) < 0)
        return -1;
    if (!j->has_nodeprocs) {
        errno = EROFS;
        return -1;
    }
    if (!(op = batch_push (&j->batch)) ||
        batch_copy (&j->batch, execid, JOURNAL_EXECID_LEN, &off) < 0 ||
        batch_copy (&j->batch, record, len, &off2) < 0)
        return -1;
    op->type = JOP_NODEPROC;
    op->active = record != NULL; /* put, or delete */
    op->off = off;
    op->len = len;
    j->batch.nops++;
    return 0;
}

int journal_append (
    struct journal *j, uint64_t id, uint32_t seq, const char *line, size_t len)
{
    struct jbatch *b;
    struct jjob *jb;
    struct jop *op;

    if (!j || (!line && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    b = &j->batch;
    if (batch_writable (j) < 0 || !(jb = batch_job (j, id)))
        return -1;
    if (seq != jb->next_seq) {
        errno = EINVAL;
        return -1;
    }
    if (seq == UINT32_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    size_t off;
    if (!(op = batch_push (b)) || batch_copy (b, line, len, &off) < 0)
        return -1;
    op->type = JOP_APPEND;
    op->id = id;
    op->seq = seq;
    op->off = off;
    op->len = len;
    b->nops++;
    jb->next_seq++;
    if (!jb->exists) {
        jb->exists = true;
        jb->active = true;
    }
    return 0;
}

int journal_job_batched (struct journal *j,
                         uint64_t id,
                         struct journal_jobinfo *info)
{
    struct jjob *jb;

    if (!j || !info) {
        errno = EINVAL;
        return -1;
    }
    if (batch_writable (j) < 0 || !(jb = batch_job (j, id)))
        return -1;
    if (!jb->exists) {
        errno = ENOENT;
        return -1;
    }
    *info = (struct journal_jobinfo){
        .id = id, .active = jb->active, .nevents = jb->next_seq};
    return 0;
}

int journal_set_active (struct journal *j,
                        uint64_t id,
                        bool active,
                        double t_end)
{
    struct jjob *jb;
    struct jop *op;

    if (!j) {
        errno = EINVAL;
        return -1;
    }
    if (batch_writable (j) < 0 || !(jb = batch_job (j, id)))
        return -1;
    if (!active && !jb->exists) {
        errno = ENOENT;
        return -1;
    }
    if (!(op = batch_push (&j->batch)))
        return -1;
    op->type = JOP_SET_ACTIVE;
    op->id = id;
    op->active = active;
    op->t_end = t_end;
    j->batch.nops++;
    jb->exists = true;
    jb->active = active;
    return 0;
}

int journal_purge (struct journal *j, uint64_t id)
{
    struct jjob *jb;
    struct jop *op;

    if (!j) {
        errno = EINVAL;
        return -1;
    }
    if (batch_writable (j) < 0 || !(jb = batch_job (j, id)))
        return -1;
    if (!jb->exists || jb->active) {
        errno = jb->exists ? EBUSY : ENOENT;
        return -1;
    }
    if (!(op = batch_push (&j->batch)))
        return -1;
    op->type = JOP_PURGE;
    op->id = id;
    j->batch.nops++;
    jb->exists = false;
    jb->next_seq = 0;
    return 0;
}

size_t journal_pending (const struct journal *j)
{
    return j ? j->batch.nops : 0;
}

void journal_discard (struct journal *j)
{
    if (j)
        journal_batch_clear (&j->batch);
}

/* Commit state of one attempt: the txn, an events cursor and the largest
 * events key, below which MDB_APPEND cannot be used. */
struct commit {
    struct journal *j;
    struct jbatch *b;
    MDB_txn *txn;
    MDB_cursor *cur;
    unsigned char last[JOURNAL_KEY_EVENT];
    bool have_last;
};

/* Load the commit view of jb from the write txn, once per attempt. */
static int commit_load (struct commit *c, struct jjob *jb)
{
    int rc;

    if (jb->c_loaded)
        return 0;
    rc = journal_jobrec_get (c->j, c->txn, jb->id, &jb->c_rec);
    if (rc && rc != MDB_NOTFOUND)
        return rc;
    jb->c_exists = rc == 0;
    jb->c_loaded = true;
    jb->c_dirty = false;
    return 0;
}

static int active_put (struct commit *c, uint64_t id, bool active)
{
    unsigned char kbuf[JOURNAL_KEY_JOB];
    MDB_val k = {sizeof (kbuf), kbuf}, v = {0, NULL};
    int rc;

    journal_put_be64 (kbuf, id);
    if (active)
        return mdb_put (c->txn, c->j->dbi_active, &k, &v, 0);
    rc = mdb_del (c->txn, c->j->dbi_active, &k, NULL);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

static void jobrec_init (struct jjob *jb, bool active)
{
    memset (&jb->c_rec, 0, sizeof (jb->c_rec));
    jb->c_rec.version = JOURNAL_JOBREC_VERSION;
    jb->c_rec.flags = active ? JOURNAL_JOB_ACTIVE : 0;
    jb->c_exists = true;
}

static int apply_append (struct commit *c,
                         const struct jop *op,
                         struct jjob *jb,
                         struct cairn_error *err)
{
    struct journal_jobrec *rec = &jb->c_rec;
    unsigned char kbuf[JOURNAL_KEY_EVENT];
    MDB_val k = {sizeof (kbuf), kbuf};
    MDB_val v = {op->len, c->b->buf + op->off};
    unsigned int flags = MDB_NOOVERWRITE;
    int rc;

    if (!jb->c_exists) {
        jobrec_init (jb, true);
        if ((rc = active_put (c, op->id, true)))
            return rc;
    }
    if (op->seq > rec->nevents) {
        errset (err, EINVAL, "journal: job %ju has %u events, cannot append %u",
                (uintmax_t)op->id, rec->nevents, op->seq);
        return EINVAL;
    }
    journal_put_be64 (kbuf, op->id);
    journal_put_be32 (kbuf + 8, op->seq);
    if (!c->have_last || memcmp (kbuf, c->last, sizeof (kbuf)) > 0) {
        flags = MDB_APPEND;
        memcpy (c->last, kbuf, sizeof (kbuf));
        c->have_last = true;
    }
    if ((rc = mdb_cursor_put (c->cur, &k, &v, flags))) {
        if (rc == MDB_KEYEXIST)
            journal_err (err, rc, "journal: job %ju event %u",
                         (uintmax_t)op->id, op->seq);
        return rc;
    }
    if (op->seq != rec->nevents) {
        errset (err, EUCLEAN,
                "journal: job %ju record says %u events, "
                "but event %u was missing",
                (uintmax_t)op->id, rec->nevents, op->seq);
        return EUCLEAN;
    }
    rec->nevents = op->seq + 1;
    jb->c_dirty = true;
    return 0;
}

static int apply_set_active (struct commit *c,
                             const struct jop *op,
                             struct jjob *jb,
                             struct cairn_error *err)
{
    int rc;

    if (!jb->c_exists) {
        if (!op->active) {
            errset (err, ENOENT, "journal: job %ju does not exist",
                    (uintmax_t)op->id);
            return ENOENT;
        }
        jobrec_init (jb, true);
    }
    if (op->active) {
        jb->c_rec.flags |= JOURNAL_JOB_ACTIVE;
        jb->c_rec.t_end = 0;
    } else {
        jb->c_rec.flags &= ~JOURNAL_JOB_ACTIVE;
        jb->c_rec.t_end = op->t_end;
    }
    if ((rc = active_put (c, op->id, op->active)))
        return rc;
    jb->c_dirty = true;
    return 0;
}

static int apply_purge (struct commit *c,
                        const struct jop *op,
                        struct jjob *jb,
                        struct cairn_error *err)
{
    unsigned char kbuf[JOURNAL_KEY_EVENT];
    MDB_val k = {sizeof (kbuf), kbuf}, v;
    int rc;

    if (!jb->c_exists || (jb->c_rec.flags & JOURNAL_JOB_ACTIVE)) {
        int e = jb->c_exists ? EBUSY : ENOENT;
        errset (err, e, "journal: cannot purge job %ju: %s", (uintmax_t)op->id,
                jb->c_exists ? "it is active" : "no such job");
        return e;
    }
    journal_put_be64 (kbuf, op->id);
    journal_put_be32 (kbuf + 8, 0);
    rc = mdb_cursor_get (c->cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && k.mv_size == JOURNAL_KEY_EVENT &&
           journal_get_be64 (k.mv_data) == op->id) {
        /* After a delete the cursor rests on the next item, which
         * MDB_NEXT then returns rather than skips. */
        if ((rc = mdb_cursor_del (c->cur, 0)))
            return rc;
        rc = mdb_cursor_get (c->cur, &k, &v, MDB_NEXT);
    }
    if (rc && rc != MDB_NOTFOUND)
        return rc;
    /* the id stays used (journal_purged): 8 bytes of key, no value */
    unsigned char idk[JOURNAL_KEY_JOB];
    MDB_val pk = {sizeof (idk), idk}, pv = {0, NULL};
    journal_put_be64 (idk, op->id);
    if (c->j->has_purged &&
        (rc = mdb_put (c->txn, c->j->dbi_purged, &pk, &pv, 0)))
        return rc;
    jb->c_exists = false;
    jb->c_dirty = true;
    return 0;
}

static int apply_drain (struct commit *c, const struct jop *op)
{
    unsigned char kbuf[4];
    MDB_val k = {sizeof (kbuf), kbuf};
    MDB_val v = {op->len, c->b->buf + op->off};
    int rc;

    journal_put_be32 (kbuf, op->seq);
    if (op->active)
        return mdb_put (c->txn, c->j->dbi_drains, &k, &v, 0);
    rc = mdb_del (c->txn, c->j->dbi_drains, &k, NULL);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

static int apply_nodeproc (struct commit *c, const struct jop *op)
{
    char *base = c->b->buf + op->off;
    MDB_val k = {JOURNAL_EXECID_LEN, base};
    MDB_val v = {op->len, base + JOURNAL_EXECID_LEN};
    int rc;

    if (op->active)
        return mdb_put (c->txn, c->j->dbi_nodeprocs, &k, &v, 0);
    rc = mdb_del (c->txn, c->j->dbi_nodeprocs, &k, NULL);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Write the touched job records, once each. */
static int commit_records (struct commit *c)
{
    struct jbatch *b = c->b;
    unsigned char kbuf[JOURNAL_KEY_JOB];
    MDB_val k = {sizeof (kbuf), kbuf}, v;
    int rc;

    for (size_t i = 0; i < b->njobs; i++) {
        struct jjob *jb = &b->jobs[i];
        if (!jb->c_loaded || !jb->c_dirty)
            continue;
        journal_put_be64 (kbuf, jb->id);
        if (jb->c_exists) {
            v.mv_size = sizeof (jb->c_rec);
            v.mv_data = &jb->c_rec;
            rc = mdb_put (c->txn, c->j->dbi_jobs, &k, &v, 0);
        } else if ((rc = mdb_del (c->txn, c->j->dbi_jobs, &k, NULL)) ==
                   MDB_NOTFOUND)
            rc = 0;
        if (rc)
            return rc;
    }
    return 0;
}

static int commit_ops (struct commit *c, struct cairn_error *err)
{
    struct jbatch *b = c->b;
    MDB_val k, v;
    int rc;

    for (size_t i = 0; i < b->njobs; i++)
        b->jobs[i].c_loaded = false;
    if ((rc = mdb_cursor_open (c->txn, c->j->dbi_events, &c->cur)))
        return rc;
    if ((rc = mdb_cursor_get (c->cur, &k, &v, MDB_LAST)) == 0 &&
        k.mv_size == JOURNAL_KEY_EVENT) {
        memcpy (c->last, k.mv_data, JOURNAL_KEY_EVENT);
        c->have_last = true;
    } else if (rc && rc != MDB_NOTFOUND)
        return rc;
    for (size_t i = 0; i < b->nops; i++) {
        const struct jop *op = &b->ops[i];
        if (op->type == JOP_DRAIN || op->type == JOP_NODEPROC) {
            /* not a job's */
            if ((rc = op->type == JOP_DRAIN ? apply_drain (c, op)
                                            : apply_nodeproc (c, op)))
                return rc;
            continue;
        }
        struct jjob *jb = batch_find (b, op->id);
        if (!jb)
            return EIO; /* cannot happen: every op's job is in the table */
        if ((rc = commit_load (c, jb)))
            return rc;
        if (op->type == JOP_APPEND)
            rc = apply_append (c, op, jb, err);
        else if (op->type == JOP_SET_ACTIVE)
            rc = apply_set_active (c, op, jb, err);
        else
            rc = apply_purge (c, op, jb, err);
        if (rc)
            return rc;
    }
    return commit_records (c);
}

int journal_commit_batch (struct journal *j,
                          struct jbatch *b,
                          bool async,
                          struct cairn_error *err)
{
    struct commit c = {.j = j, .b = b};
    int rc, e;

    if (err)
        err->text[0] = '\0';
    /* journal_txn_begin may adopt a map another process grew, which only
     * the thread that reads may do */
    rc = async ? mdb_txn_begin (j->env, NULL, 0, &c.txn)
               : journal_txn_begin (j, 0, &c.txn);
    if (rc == MDB_MAP_RESIZED && async)
        return JOURNAL_COMMIT_ON_CALLER;
    if (rc)
        return journal_err (err, rc, "journal at %s: commit", j->path);
    rc = commit_ops (&c, err);
    if (c.cur)
        mdb_cursor_close (c.cur);
    if (rc == 0 && (e = fault_inject ("journal.commit"))) {
        mdb_txn_abort (c.txn);
        return errset (err, e, "journal at %s: commit: %s (injected fault)",
                       j->path, strerror (e));
    }
    if (rc) {
        mdb_txn_abort (c.txn);
        if (rc == MDB_MAP_FULL)
            return async ? JOURNAL_COMMIT_ON_CALLER : JOURNAL_COMMIT_MAP_FULL;
        if (err && err->text[0]) { /* an apply_* message */
            errno = journal_errno (rc);
            return -1;
        }
        return journal_err (err, rc, "journal at %s: commit", j->path);
    }
    CRASHPOINT ("journal.commit.before");
    if ((rc = mdb_txn_commit (c.txn))) { /* frees the txn, also on error */
        if (rc == MDB_MAP_FULL)
            return async ? JOURNAL_COMMIT_ON_CALLER : JOURNAL_COMMIT_MAP_FULL;
        return journal_err (err, rc, "journal at %s: commit", j->path);
    }
    CRASHPOINT ("journal.commit.after");
    return 0;
}

/* Double the map, up to max_map_size. */
static int journal_grow (struct journal *j, struct cairn_error *err)
{
    MDB_envinfo info;
    size_t size;
    int rc;

    if ((rc = mdb_env_info (j->env, &info)))
        return journal_err (err, rc, "journal at %s", j->path);
    if (info.me_mapsize >= j->max_map_size)
        return errset (err, ENOSPC,
                       "journal at %s is full: the map reached its maximum "
                       "size of %zu bytes",
                       j->path, j->max_map_size);
    /* mdb_env_set_mapsize() is only safe with no txn active in this
     * process; a read callback that commits would break that. */
    if (j->nreaders > 0)
        return errset (err, EBUSY,
                       "journal at %s is full and cannot grow while a read "
                       "is in progress",
                       j->path);
    if (j->spare_rtxn) {
        mdb_txn_abort (j->spare_rtxn);
        j->spare_rtxn = NULL;
    }
    size = info.me_mapsize > j->max_map_size / 2 ? j->max_map_size
                                                 : info.me_mapsize * 2;
    if ((rc = mdb_env_set_mapsize (j->env, size)))
        return journal_err (err, rc, "journal at %s: growing the map to %zu",
                            j->path, size);
    return 0;
}

int journal_commit_sync (struct journal *j,
                         struct jbatch *b,
                         struct cairn_error *err)
{
    int rc;

    while ((rc = journal_commit_batch (j, b, false, err)) ==
           JOURNAL_COMMIT_MAP_FULL) {
        if (journal_grow (j, err) < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    journal_batch_clear (b);
    return 0;
}

/* The checks of a commit, async or not. */
int journal_commit_check (struct journal *j, struct cairn_error *err)
{
    if (!j)
        return errset (err, EINVAL, "journal: commit: no journal");
    if (j->in_flight)
        return errset (err, EBUSY,
                       "journal at %s: a commit is in flight: finish it first",
                       j->path);
    if (j->batch.nops == 0)
        return 0;
    if (j->readonly)
        return errset (err, EROFS, "journal at %s is read-only", j->path);
    if (journal_check_pid (j))
        return errset (err, EINVAL,
                       "journal at %s was opened by another process", j->path);
    return 1;
}

int journal_commit (struct journal *j, struct cairn_error *err)
{
    int rc = journal_commit_check (j, err);
    if (rc <= 0)
        return rc;
    return journal_commit_sync (j, &j->batch, err);
}
