/* b_journal.c - events per second through cairn's journal API against raw
 * LMDB puts of the same bytes, in the same batches, both durable.
 *
 * The events are those of a real job (sample.c), job after job: each
 * job's events are appended in order and the job is marked done after its
 * last one, as cairnd does. The raw baseline puts the same lines under the
 * same 12-byte keys into one LMDB database, one write transaction per
 * batch. What cairn adds per batch: the job record and active-index
 * updates, and its own bookkeeping.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "journal/journal.h"

static const int batches[] = {1, 10, 100};
#define NBATCH (sizeof (batches) / sizeof (batches[0]))

static int cairn_rate (const struct bench_opts *o,
                       char **lines,
                       size_t nlines,
                       int batch,
                       double *rate,
                       struct cairn_error *err)
{
    char *dir = bench_mkdtemp (o, "journal", err);
    struct journal *j = NULL;
    struct journal_opts jo = {.map_size = (size_t)256 << 20};
    uint64_t id = 1;
    uint32_t seq = 0;
    int rc = -1;

    if (!dir || !(j = journal_open (dir, &jo, err)))
        goto out;
    double t0 = bench_now ();
    for (int c = 0; c < o->commits; c++) {
        for (int e = 0; e < batch; e++) {
            if (journal_append (j, id, seq, lines[seq], strlen (lines[seq])) <
                0) {
                errset (err, errno, "journal_append: %s", strerror (errno));
                goto out;
            }
            if (++seq == nlines) {
                if (journal_set_active (j, id, false, (double)time (NULL)) <
                    0) {
                    errset (err, errno, "journal_set_active: %s",
                            strerror (errno));
                    goto out;
                }
                id++;
                seq = 0;
            }
        }
        if (journal_commit (j, err) < 0)
            goto out;
    }
    *rate = (double)o->commits * batch / (bench_now () - t0);
    rc = 0;
out:
    journal_close (j);
    bench_rmrf (dir);
    free (dir);
    return rc;
}

static int mdb_fail (struct cairn_error *err, const char *what, int rc)
{
    return errset (err, rc > 0 ? rc : EIO, "lmdb %s: %s", what,
                   mdb_strerror (rc));
}

static void make_key (unsigned char *k, uint64_t id, uint32_t seq)
{
    for (int i = 0; i < 8; i++)
        k[i] = (unsigned char)(id >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        k[8 + i] = (unsigned char)(seq >> (24 - 8 * i));
}

static int raw_rate (const struct bench_opts *o,
                     char **lines,
                     size_t nlines,
                     int batch,
                     double *rate,
                     struct cairn_error *err)
{
    char *dir = bench_mkdtemp (o, "lmdb", err);
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    uint64_t id = 1;
    uint32_t seq = 0;
    int rc = -1, e;

    if (!dir)
        return -1;
    if ((e = mdb_env_create (&env)) || (e = mdb_env_set_maxdbs (env, 4)) ||
        (e = mdb_env_set_mapsize (env, (size_t)256 << 20)) ||
        (e = mdb_env_open (env, dir, 0, 0600))) {
        mdb_fail (err, "open", e);
        goto out;
    }
    if ((e = mdb_txn_begin (env, NULL, 0, &txn)) ||
        (e = mdb_dbi_open (txn, "events", MDB_CREATE, &dbi)) ||
        (e = mdb_txn_commit (txn))) {
        txn = NULL;
        mdb_fail (err, "dbi", e);
        goto out;
    }
    txn = NULL;
    double t0 = bench_now ();
    for (int c = 0; c < o->commits; c++) {
        if ((e = mdb_txn_begin (env, NULL, 0, &txn))) {
            mdb_fail (err, "begin", e);
            goto out;
        }
        for (int b = 0; b < batch; b++) {
            unsigned char k[12];
            make_key (k, id, seq);
            MDB_val key = {sizeof (k), k};
            MDB_val val = {strlen (lines[seq]), lines[seq]};
            if ((e = mdb_put (txn, dbi, &key, &val, 0))) {
                mdb_fail (err, "put", e);
                goto out;
            }
            if (++seq == nlines) {
                id++;
                seq = 0;
            }
        }
        e = mdb_txn_commit (txn);
        txn = NULL;
        if (e) {
            mdb_fail (err, "commit", e);
            goto out;
        }
    }
    *rate = (double)o->commits * batch / (bench_now () - t0);
    rc = 0;
out:
    if (txn)
        mdb_txn_abort (txn);
    if (env)
        mdb_env_close (env);
    bench_rmrf (dir);
    free (dir);
    return rc;
}

struct report *bench_journal (const struct bench_opts *o,
                              struct cairn_error *err)
{
    int n = o->reps;
    double cr[NBATCH][BENCH_MAX_REPS], rr[NBATCH][BENCH_MAX_REPS];
    double q[NBATCH][BENCH_MAX_REPS], fs[BENCH_MAX_REPS], q1[BENCH_MAX_REPS];
    char **lines = NULL, name[128];
    char *dir = NULL;
    size_t nlines, bytes = 0;
    struct report *r = report_create ("journal", o);

    if (!r) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (sample_job (o, o->ranks, &lines, &nlines, err) < 0 ||
        !(dir = bench_mkdtemp (o, "fsync", err)))
        goto error;
    for (size_t i = 0; i < nlines; i++)
        bytes += strlen (lines[i]);
    report_param (r, "commits", json_integer (o->commits));
    for (int i = 0; i < n; i++) {
        if (raw_fsync_rate (dir, 0.5, &fs[i], err) < 0)
            goto error;
        for (size_t b = 0; b < NBATCH; b++) {
            if (cairn_rate (o, lines, nlines, batches[b], &cr[b][i], err) < 0 ||
                raw_rate (o, lines, nlines, batches[b], &rr[b][i], err) < 0)
                goto error;
            q[b][i] = cr[b][i] / rr[b][i];
        }
        q1[i] = cr[0][i] / fs[i];
    }
    report_add (r, "raw: write 4 KiB + fdatasync", "syncs/s", fs, n);
    for (size_t b = 0; b < NBATCH; b++) {
        snprintf (name, sizeof (name), "cairn journal, batch %d", batches[b]);
        report_add (r, name, "events/s", cr[b], n);
        snprintf (name, sizeof (name), "raw LMDB puts, batch %d", batches[b]);
        report_add (r, name, "events/s", rr[b], n);
    }
    for (size_t b = 0; b < NBATCH; b++) {
        snprintf (name, sizeof (name), "cairn / raw LMDB, batch %d",
                  batches[b]);
        report_ratio (r, name, q[b], n, NULL, 0);
    }
    report_ratio (r, "cairn commits / fdatasync rate, batch 1", q1, n, NULL, 0);
    report_note (r,
                 "events: the %zu events of a real %d-rank job with prolog"
                 " and epilog, %zu bytes on average (the first, with R, the"
                 " jobspec and the config: %zu)",
                 nlines, o->ranks, bytes / nlines, strlen (lines[0]));
    sample_free (lines);
    bench_rmrf (dir);
    free (dir);
    return r;
error:
    sample_free (lines);
    bench_rmrf (dir);
    free (dir);
    report_destroy (r);
    return NULL;
}
