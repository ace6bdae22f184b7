/* journal_read.c - walking committed events and jobs.
 *
 * Each call is one read txn, held only while the walk and its callbacks
 * run: LMDB keeps every page a reader can see, so a reader parked for long
 * would make the file grow under a busy writer.
 */
#include <errno.h>
#include <lmdb.h>
#include <string.h>

#include "core/error.h"
#include "journal/journal_private.h"

int journal_read_job (struct journal *j,
                      uint64_t id,
                      uint32_t from_seq,
                      journal_event_f cb,
                      void *arg,
                      struct cairn_error *err)
{
    unsigned char kbuf[JOURNAL_KEY_EVENT];
    MDB_val k = {sizeof (kbuf), kbuf}, v;
    struct journal_jobrec rec;
    MDB_cursor *cur = NULL;
    MDB_txn *txn;
    int rc;

    if (!j || !cb)
        return errset (err, EINVAL, "journal: read: invalid argument");
    if ((rc = journal_rtxn_begin (j, &txn)))
        return journal_err (err, rc, "journal at %s: read", j->path);
    if ((rc = journal_jobrec_get (j, txn, id, &rec))) {
        if (rc == MDB_NOTFOUND)
            errset (err, ENOENT, "journal: job %ju is not in the journal",
                    (uintmax_t)id);
        else
            journal_err (err, rc, "journal at %s: job %ju", j->path,
                         (uintmax_t)id);
        goto done;
    }
    if ((rc = mdb_cursor_open (txn, j->dbi_events, &cur)))
        goto error;
    journal_put_be64 (kbuf, id);
    journal_put_be32 (kbuf + 8, from_seq);
    rc = mdb_cursor_get (cur, &k, &v, MDB_SET_RANGE);
    while (rc == 0) {
        if (k.mv_size != JOURNAL_KEY_EVENT) {
            rc = MDB_CORRUPTED;
            goto error;
        }
        if (journal_get_be64 (k.mv_data) != id)
            break;
        uint32_t seq = journal_get_be32 ((unsigned char *)k.mv_data + 8);
        int r = cb (id, seq, v.mv_data, v.mv_size, arg);
        if (r < 0) {
            errprintf (err, "journal: reading job %ju, event %u: %s",
                       (uintmax_t)id, seq, strerror (errno));
            goto done;
        }
        if (r > 0)
            break;
        rc = mdb_cursor_get (cur, &k, &v, MDB_NEXT);
    }
    if (rc && rc != MDB_NOTFOUND)
        goto error;
    mdb_cursor_close (cur);
    journal_rtxn_end (j, txn);
    return 0;
error:
    journal_err (err, rc, "journal at %s: reading job %ju", j->path,
                 (uintmax_t)id);
done : {
    int saved = errno;
    if (cur)
        mdb_cursor_close (cur);
    journal_rtxn_end (j, txn);
    errno = saved;
    return -1;
}
}

int journal_job_info (struct journal *j,
                      uint64_t id,
                      struct journal_jobinfo *info)
{
    struct journal_jobrec rec;
    MDB_txn *txn;
    int rc;

    if (!j || !info) {
        errno = EINVAL;
        return -1;
    }
    if ((rc = journal_rtxn_begin (j, &txn)) == 0) {
        rc = journal_jobrec_get (j, txn, id, &rec);
        journal_rtxn_end (j, txn);
    }
    if (rc) {
        errno = journal_errno (rc);
        return -1;
    }
    journal_info_from_rec (id, &rec, info);
    return 0;
}

int journal_purged (struct journal *j, uint64_t id)
{
    unsigned char kbuf[JOURNAL_KEY_JOB];
    MDB_val k = {sizeof (kbuf), kbuf}, v;
    MDB_txn *txn;
    int rc;

    if (!j) {
        errno = EINVAL;
        return -1;
    }
    if (!j->has_purged)
        return 0;
    journal_put_be64 (kbuf, id);
    if ((rc = journal_rtxn_begin (j, &txn)) == 0) {
        rc = mdb_get (txn, j->dbi_purged, &k, &v);
        journal_rtxn_end (j, txn);
    }
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc) {
        errno = journal_errno (rc);
        return -1;
    }
    return 1;
}

/* Walk one of the small tables (drains, nodeprocs) in key order: each
 * entry whose key is klen bytes goes to cb (key, value); cb's non-zero
 * return stops the walk, negative as an error with errno. */
typedef int (*kv_f) (const MDB_val *k, const MDB_val *v, void *arg);
static int foreach_kv (struct journal *j,
                       bool has,
                       MDB_dbi dbi,
                       const char *name,
                       size_t klen,
                       kv_f cb,
                       void *arg,
                       struct cairn_error *err)
{
    MDB_txn *txn;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc, stop = 0;

    if (!has)
        return 0;
    if ((rc = journal_rtxn_begin (j, &txn)))
        return journal_err (err, rc, "journal at %s: %s", j->path, name);
    rc = mdb_cursor_open (txn, dbi, &cur);
    for (int op = MDB_FIRST; rc == 0 && !stop; op = MDB_NEXT) {
        if ((rc = mdb_cursor_get (cur, &k, &v, op)))
            break;
        if (k.mv_size != klen)
            continue;
        if ((stop = cb (&k, &v, arg)) < 0) {
            int e = errno;
            mdb_cursor_close (cur);
            journal_rtxn_end (j, txn);
            return errset (err, e, "%s: %s", name, strerror (e));
        }
    }
    if (cur)
        mdb_cursor_close (cur);
    journal_rtxn_end (j, txn);
    if (rc && rc != MDB_NOTFOUND)
        return journal_err (err, rc, "journal at %s: %s", j->path, name);
    return 0;
}

struct drain_walk {
    journal_drain_f cb;
    void *arg;
};

static int drain_entry (const MDB_val *k, const MDB_val *v, void *arg)
{
    struct drain_walk *w = arg;
    return w->cb (journal_get_be32 (k->mv_data), v->mv_data, v->mv_size,
                  w->arg);
}

int journal_foreach_drain (struct journal *j,
                           journal_drain_f cb,
                           void *arg,
                           struct cairn_error *err)
{
    struct drain_walk w = {.cb = cb, .arg = arg};
    if (!j || !cb) {
        errno = EINVAL;
        return -1;
    }
    return foreach_kv (j, j->has_drains, j->dbi_drains, "drains", 4,
                       drain_entry, &w, err);
}

struct nodeproc_walk {
    journal_nodeproc_f cb;
    void *arg;
};

static int nodeproc_entry (const MDB_val *k, const MDB_val *v, void *arg)
{
    struct nodeproc_walk *w = arg;
    char execid[JOURNAL_EXECID_LEN + 1];
    memcpy (execid, k->mv_data, JOURNAL_EXECID_LEN);
    execid[JOURNAL_EXECID_LEN] = '\0';
    return w->cb (execid, v->mv_data, v->mv_size, w->arg);
}

int journal_foreach_nodeproc (struct journal *j,
                              journal_nodeproc_f cb,
                              void *arg,
                              struct cairn_error *err)
{
    struct nodeproc_walk w = {.cb = cb, .arg = arg};
    if (!j || !cb) {
        errno = EINVAL;
        return -1;
    }
    return foreach_kv (j, j->has_nodeprocs, j->dbi_nodeprocs, "nodeprocs",
                       JOURNAL_EXECID_LEN, nodeproc_entry, &w, err);
}

static int foreach_job (struct journal *j,
                        bool active_only,
                        bool newest_first,
                        journal_job_f cb,
                        void *arg,
                        struct cairn_error *err)
{
    struct journal_jobinfo info;
    struct journal_jobrec rec;
    MDB_cursor *cur = NULL;
    MDB_txn *txn;
    MDB_val k, v;
    uint64_t id = 0;
    int rc;

    if (!j || !cb)
        return errset (err, EINVAL, "journal: foreach: invalid argument");
    if ((rc = journal_rtxn_begin (j, &txn)))
        return journal_err (err, rc, "journal at %s: read", j->path);
    if ((rc = mdb_cursor_open (txn, active_only ? j->dbi_active : j->dbi_jobs,
                               &cur)))
        goto error;
    rc = mdb_cursor_get (cur, &k, &v, newest_first ? MDB_LAST : MDB_FIRST);
    while (rc == 0) {
        if (k.mv_size != JOURNAL_KEY_JOB) {
            rc = MDB_CORRUPTED;
            goto error;
        }
        id = journal_get_be64 (k.mv_data);
        if (active_only) {
            if ((rc = journal_jobrec_get (j, txn, id, &rec))) {
                if (rc != MDB_NOTFOUND)
                    goto error;
                errset (err, EUCLEAN,
                        "journal at %s: job %ju is in the active index but "
                        "has no record",
                        j->path, (uintmax_t)id);
                goto done;
            }
        } else {
            if (v.mv_size != sizeof (rec)) {
                rc = MDB_CORRUPTED;
                goto error;
            }
            memcpy (&rec, v.mv_data, sizeof (rec));
        }
        journal_info_from_rec (id, &rec, &info);
        int r = cb (&info, arg);
        if (r < 0) {
            errprintf (err, "journal: at job %ju: %s", (uintmax_t)id,
                       strerror (errno));
            goto done;
        }
        if (r > 0)
            break;
        rc = mdb_cursor_get (cur, &k, &v, newest_first ? MDB_PREV : MDB_NEXT);
    }
    if (rc && rc != MDB_NOTFOUND)
        goto error;
    mdb_cursor_close (cur);
    journal_rtxn_end (j, txn);
    return 0;
error:
    journal_err (err, rc, "journal at %s: listing jobs (at job %ju)", j->path,
                 (uintmax_t)id);
done : {
    int saved = errno;
    if (cur)
        mdb_cursor_close (cur);
    journal_rtxn_end (j, txn);
    errno = saved;
    return -1;
}
}

int journal_foreach_job (struct journal *j,
                         bool active_only,
                         journal_job_f cb,
                         void *arg,
                         struct cairn_error *err)
{
    return foreach_job (j, active_only, false, cb, arg, err);
}

int journal_foreach_job_newest (struct journal *j,
                                journal_job_f cb,
                                void *arg,
                                struct cairn_error *err)
{
    return foreach_job (j, false, true, cb, arg, err);
}
