/* scale_purge.c - the journal as finished jobs pile up, and `cairn purge`
 * of them all.
 *
 * Finished jobs are written straight into a state dir's journal
 * (sample_fill_journal: a real job's events, no sync), and the journal's
 * size is read at each power of ten on the way: its growth per job should
 * not depend on how many are there. cairnd is then started once on it
 * (finished jobs must cost a restart nothing), and the journal copied.
 *
 * The purge's reference is the least any purge of these jobs must do,
 * done with LMDB directly on the copy: list the jobs (a cursor over the
 * job records), then per job delete its events (a cursor range), its
 * record, and add its id to the purged table, as journal_purge() does,
 * 256 jobs per durable transaction, as `cairn purge` commits. What cairn
 * adds is its CLI: the job list as JSON objects, the journal's batch, its
 * per-job checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "journal/journal.h"
#include "scale.h"

extern char **environ;

#define PURGE_JOBS_PER_TXN 256 /* as cmd_verify.c's PURGE_BATCH */

static int mdb_fail (struct cairn_error *err, const char *what, int rc)
{
    return errset (err, rc > 0 ? rc : EIO, "lmdb %s: %s", what,
                   mdb_strerror (rc));
}

static void put_be64 (unsigned char *k, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        k[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint64_t get_be64 (const unsigned char *k)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | k[i];
    return v;
}

/* ---- the journal's size ---- */

struct jsize {
    double map_used;  /* bytes: LMDB's high water mark */
    double data_used; /* bytes in live pages */
    double disk;      /* bytes allocated to data.mdb */
};

static int
journal_size (const char *statedir, struct jsize *js, struct cairn_error *err)
{
    struct journal_opts jo = {.readonly = true};
    struct journal_stats st;
    struct stat sb;
    char path[4096];
    struct journal *j = journal_open (statedir, &jo, err);

    if (!j)
        return -1;
    int rc = journal_stats (j, &st);
    journal_close (j);
    if (rc < 0)
        return errset (err, errno, "journal_stats: %s", strerror (errno));
    snprintf (path, sizeof (path), "%s/journal/data.mdb", statedir);
    if (stat (path, &sb) < 0)
        return errset (err, errno, "%s: %s", path, strerror (errno));
    js->map_used = (double)st.map_used;
    js->data_used = (double)st.data_used;
    js->disk = (double)sb.st_blocks * 512;
    return 0;
}

/* Is there room under dir for `bytes` more? ENOSPC with the figures if
 * not: a full disk would fail everyone's work on this machine. */
static int room (const char *dir, double bytes, struct cairn_error *err)
{
    struct statvfs vf;
    if (statvfs (dir, &vf) < 0)
        return errset (err, errno, "statvfs %s: %s", dir, strerror (errno));
    double avail = (double)vf.f_bavail * vf.f_frsize;
    if (avail < bytes)
        return errset (err, ENOSPC,
                       "purge: %.1f GiB needed under %s (the journal and its"
                       " copy), %.1f GiB free; use --scale-finished",
                       bytes / 1073741824.0, dir, avail / 1073741824.0);
    return 0;
}

/* ---- copying the journal ---- */

static int copy_file (const char *from, const char *to, struct cairn_error *err)
{
    int in = open (from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
    struct stat sb;

    if (in < 0 || fstat (in, &sb) < 0) {
        errset (err, errno, "%s: %s", from, strerror (errno));
        goto out;
    }
    if ((out = open (to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
        errset (err, errno, "%s: %s", to, strerror (errno));
        goto out;
    }
    for (off_t left = sb.st_size; left > 0;) {
        ssize_t n = copy_file_range (in, NULL, out, NULL, (size_t)left, 0);
        if (n <= 0) {
            errset (err, n < 0 ? errno : EIO, "copy %s: %s", from,
                    strerror (n < 0 ? errno : EIO));
            goto out;
        }
        left -= n;
    }
    rc = 0;
out:
    if (in >= 0)
        close (in);
    if (out >= 0)
        close (out);
    return rc;
}

/* ---- the raw purge ---- */

struct rawdb {
    MDB_env *env;
    MDB_dbi events, jobs, purged;
};

static int raw_open (const char *dir, struct rawdb *db, struct cairn_error *err)
{
    MDB_txn *txn;
    int e;

    if ((e = mdb_env_create (&db->env)) ||
        (e = mdb_env_set_maxdbs (db->env, 16)) ||
        (e = mdb_env_set_mapsize (db->env, (size_t)64 << 30)) ||
        (e = mdb_env_open (db->env, dir, 0, 0600)))
        return mdb_fail (err, "open", e);
    if ((e = mdb_txn_begin (db->env, NULL, 0, &txn)))
        return mdb_fail (err, "begin", e);
    if ((e = mdb_dbi_open (txn, "events", 0, &db->events)) ||
        (e = mdb_dbi_open (txn, "jobs", 0, &db->jobs)) ||
        (e = mdb_dbi_open (txn, "purged", MDB_CREATE, &db->purged))) {
        mdb_txn_abort (txn);
        return mdb_fail (err, "dbi", e);
    }
    if ((e = mdb_txn_commit (txn)))
        return mdb_fail (err, "commit", e);
    return 0;
}

/* Every job id, from the job records. *ids is malloc'd. */
static int
raw_list (struct rawdb *db, uint64_t **ids, size_t *n, struct cairn_error *err)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    size_t cap = 1024;
    int e;

    *n = 0;
    if (!(*ids = malloc (cap * sizeof (**ids))))
        return errset (err, ENOMEM, "out of memory");
    if ((e = mdb_txn_begin (db->env, NULL, MDB_RDONLY, &txn)))
        return mdb_fail (err, "begin", e);
    if ((e = mdb_cursor_open (txn, db->jobs, &cur))) {
        mdb_txn_abort (txn);
        return mdb_fail (err, "cursor", e);
    }
    for (e = mdb_cursor_get (cur, &k, &v, MDB_FIRST); e == 0;
         e = mdb_cursor_get (cur, &k, &v, MDB_NEXT)) {
        const struct journal_jobrec *rec = v.mv_data;
        if (k.mv_size != 8 || v.mv_size < sizeof (*rec) ||
            (rec->flags & JOURNAL_JOB_ACTIVE))
            continue; /* purge takes finished jobs only */
        if (*n == cap) {
            uint64_t *p = realloc (*ids, 2 * cap * sizeof (*p));
            if (!p) {
                e = ENOMEM;
                break;
            }
            *ids = p;
            cap *= 2;
        }
        (*ids)[(*n)++] = get_be64 (k.mv_data);
    }
    mdb_cursor_close (cur);
    mdb_txn_abort (txn);
    if (e != MDB_NOTFOUND)
        return mdb_fail (err, "list", e);
    return 0;
}

/* Purge job id in txn through cur (on the events database). */
static int
raw_purge_job (struct rawdb *db, MDB_txn *txn, MDB_cursor *cur, uint64_t id)
{
    unsigned char kb[12] = {0}, ib[8];
    MDB_val k = {sizeof (kb), kb}, v;
    MDB_val ik = {sizeof (ib), ib}, empty = {0, NULL};
    int e;

    put_be64 (kb, id);
    e = mdb_cursor_get (cur, &k, &v, MDB_SET_RANGE);
    while (e == 0 && k.mv_size == 12 && get_be64 (k.mv_data) == id) {
        if ((e = mdb_cursor_del (cur, 0)))
            return e;
        e = mdb_cursor_get (cur, &k, &v, MDB_NEXT); /* the one after */
    }
    if (e && e != MDB_NOTFOUND)
        return e;
    put_be64 (ib, id);
    if ((e = mdb_del (txn, db->jobs, &ik, NULL)))
        return e;
    return mdb_put (txn, db->purged, &ik, &empty, 0);
}

static int raw_purge (const char *dir,
                      double *seconds,
                      size_t *njobs,
                      struct cairn_error *err)
{
    struct rawdb db = {0};
    uint64_t *ids = NULL;
    size_t n = 0;
    int rc = -1, e;

    double t0 = bench_now ();
    if (raw_open (dir, &db, err) < 0 || raw_list (&db, &ids, &n, err) < 0)
        goto out;
    for (size_t i = 0; i < n; i += PURGE_JOBS_PER_TXN) {
        MDB_txn *txn;
        MDB_cursor *cur;
        if ((e = mdb_txn_begin (db.env, NULL, 0, &txn))) {
            mdb_fail (err, "begin", e);
            goto out;
        }
        if ((e = mdb_cursor_open (txn, db.events, &cur))) {
            mdb_txn_abort (txn);
            mdb_fail (err, "cursor", e);
            goto out;
        }
        for (size_t k = i; k < n && k < i + PURGE_JOBS_PER_TXN && !e; k++)
            e = raw_purge_job (&db, txn, cur, ids[k]);
        mdb_cursor_close (cur);
        if (e) {
            mdb_txn_abort (txn);
            mdb_fail (err, "purge", e);
            goto out;
        }
        if ((e = mdb_txn_commit (txn))) {
            mdb_fail (err, "commit", e);
            goto out;
        }
    }
    *seconds = bench_now () - t0;
    *njobs = n;
    rc = 0;
out:
    free (ids);
    if (db.env)
        mdb_env_close (db.env);
    return rc;
}

/* ---- cairn purge ---- */

/* Run `cairn purge --older-than 0 --json` on statedir, its output into
 * out. Sets *seconds and *purged (from its JSON answer). */
static int cairn_purge (const struct bench_opts *o,
                        const char *statedir,
                        const char *out,
                        double *seconds,
                        long *purged,
                        struct cairn_error *err)
{
    char prog[4096];
    char *argv[] = {prog,     "purge",      "--older-than",   "0",
                    "--json", "--statedir", (char *)statedir, NULL};
    posix_spawn_file_actions_t fa;
    json_t *res;
    pid_t pid;
    int status, e;

    snprintf (prog, sizeof (prog), "%s/cairn", o->bindir);
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen (&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                      0600);
    double t0 = bench_now ();
    e = posix_spawn (&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    if (e != 0)
        return errset (err, e, "spawn %s: %s", prog, strerror (e));
    while (waitpid (pid, &status, 0) < 0) {
        if (errno != EINTR)
            return errset (err, errno, "waitpid: %s", strerror (errno));
    }
    *seconds = bench_now () - t0;
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        return errset (err, EIO, "%s purge failed (wait status %d)", prog,
                       status);
    if (!(res = json_load_file (out, 0, NULL)))
        return errset (err, EPROTO, "%s purge: no JSON answer in %s", prog,
                       out);
    *purged = (long)json_integer_value (json_object_get (res, "purged"));
    json_decref (res);
    return 0;
}

/* ---- the curve ---- */

#define MAX_CHECKS 12

struct check {
    long jobs;
    struct jsize size;
};

/* Fill statedir's journal with `finished` jobs, its size read at 1000,
 * 10^4, ... and at the end. Sets *nc and *rate (jobs written per s). */
static int fill (const struct bench_opts *o,
                 const char *statedir,
                 long finished,
                 char **lines,
                 size_t nlines,
                 struct check *c,
                 int *nc,
                 double *rate,
                 struct cairn_error *err)
{
    long done = 0, next = 1000;
    double t = 0;

    *nc = 0;
    while (done < finished && *nc < MAX_CHECKS) {
        long to = next < finished ? next : finished;
        double t0 = bench_now ();
        if (sample_fill_journal (statedir, lines, nlines, (uint64_t)done + 1,
                                 to - done, err) < 0)
            return -1;
        t += bench_now () - t0;
        done = to;
        c[*nc].jobs = done;
        if (journal_size (statedir, &c[*nc].size, err) < 0)
            return -1;
        /* the journal and its copy, for all the jobs, with a margin */
        if (*nc == 0 &&
            room (o->dir, 2.2 * c[0].size.disk / done * finished, err) < 0)
            return -1;
        (*nc)++;
        next *= 10;
    }
    *rate = done / t;
    return 0;
}

int scale_purge (const struct bench_opts *o,
                 long finished,
                 struct report *r,
                 struct plot *p,
                 struct cairn_error *err)
{
    struct bd *d = bd_create (
        o, "scale-purge", "{\"journal\": {\"max-size\": \"64G\"}}", false, err);
    struct check c[MAX_CHECKS];
    struct jsize after;
    char **lines = NULL, *copy = NULL, *dst = NULL, *src = NULL, *out = NULL;
    char name[128], title[160];
    size_t nlines, nraw = 0;
    double rate, t_restart, t_copy, t_raw, t_cairn, v, q;
    double x[MAX_CHECKS], mb[MAX_CHECKS], db[MAX_CHECKS];
    long purged = 0;
    int nc = 0, rc = -1;

    if (!d || sample_job (o, o->ranks, &lines, &nlines, err) < 0 ||
        fill (o, d->statedir, finished, lines, nlines, c, &nc, &rate, err) < 0)
        goto out;
    fprintf (stderr,
             "cairn-bench: scale: %ld finished jobs written (%.0f"
             " MiB)\n",
             finished, c[nc - 1].size.disk / 1048576.0);
    if (bd_start (d, &t_restart, err) < 0)
        goto out;
    if (bd_stop (d, SIGTERM) < 0) {
        errset (err, errno, "stop cairnd: %s", strerror (errno));
        goto out;
    }
    if (!(copy = bench_mkdtemp (o, "scale-lmdb", err)))
        goto out;
    if (asprintf (&src, "%s/journal/data.mdb", d->statedir) < 0 ||
        asprintf (&dst, "%s/data.mdb", copy) < 0 ||
        asprintf (&out, "%s/purge.json", d->root) < 0) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    double t0 = bench_now ();
    if (copy_file (src, dst, err) < 0)
        goto out;
    t_copy = bench_now () - t0;
    /* the raw purge on the copy first, then cairn's on the original:
     * both files were just read, so both start from the page cache */
    if (raw_purge (copy, &t_raw, &nraw, err) < 0 ||
        cairn_purge (o, d->statedir, out, &t_cairn, &purged, err) < 0 ||
        journal_size (d->statedir, &after, err) < 0)
        goto out;
    if (purged != finished || (long)nraw != finished) {
        errset (err, EIO, "purge: cairn purged %ld, raw %zu, of %ld jobs",
                purged, nraw, finished);
        goto out;
    }
    for (int i = 0; i < nc; i++) {
        x[i] = (double)c[i].jobs;
        mb[i] = c[i].size.map_used / c[i].jobs;
        db[i] = c[i].size.data_used / c[i].jobs;
        v = c[i].size.map_used / 1048576.0;
        snprintf (name, sizeof (name), "journal, %ld finished jobs", c[i].jobs);
        report_add (r, name, "MiB", &v, 1);
        snprintf (name, sizeof (name), "  map used per job, %ld", c[i].jobs);
        report_add (r, name, "bytes", &mb[i], 1);
        snprintf (name, sizeof (name), "  data per job, %ld", c[i].jobs);
        report_add (r, name, "bytes", &db[i], 1);
    }
    snprintf (name, sizeof (name), "restart, %ld finished jobs, none live",
              finished);
    report_add (r, name, "s", &t_restart, 1);
    snprintf (name, sizeof (name), "cairn purge --older-than 0, %ld jobs",
              finished);
    report_add (r, name, "s", &t_cairn, 1);
    snprintf (name, sizeof (name), "raw LMDB: the same deletes, %ld jobs",
              finished);
    report_add (r, name, "s", &t_raw, 1);
    v = t_cairn / finished * 1e6;
    report_add (r, "cairn purge per job", "us", &v, 1);
    v = t_raw / finished * 1e6;
    report_add (r, "raw LMDB purge per job", "us", &v, 1);
    v = after.data_used / 1048576.0;
    report_add (r, "journal data after the purge", "MiB", &v, 1);
    q = t_cairn / t_raw;
    report_ratio (r, "cairn purge / raw LMDB deletes", &q, 1, NULL, 0);
    v = mb[nc - 1] / mb[0];
    snprintf (name, sizeof (name), "map used per job, %ld / %ld",
              c[nc - 1].jobs, c[0].jobs);
    report_ratio (r, name, &v, 1, NULL, 0);
    report_note (r,
                 "purge: finished jobs of %zu events each (a real %d-rank"
                 " perilog job), written at %.0f jobs/s without sync; raw:"
                 " list the job records, then per job delete its events and"
                 " record and add it to the purged table, %d jobs per durable"
                 " LMDB transaction, on a copy of the same journal (copied in"
                 " %.1f s); measured once",
                 nlines, o->ranks, rate, PURGE_JOBS_PER_TXN, t_copy);
    snprintf (title, sizeof (title),
              "journal per finished job (purge of %ld: %.3g s, %.2fx raw)",
              finished, t_cairn, q);
    if (p && (plot_panel (p, title, "finished jobs", "bytes per job", true,
                          false) < 0 ||
              plot_curve (p, "map used", x, mb, nc, false) < 0 ||
              plot_curve (p, "data in live pages", x, db, nc, false) < 0)) {
        errset (err, ENOMEM, "out of memory");
        goto out;
    }
    rc = 0;
out:
    if (d)
        (void)bd_stop (d, SIGKILL);
    bench_rmrf (copy);
    free (copy);
    free (src);
    free (dst);
    free (out);
    sample_free (lines);
    bd_destroy (d);
    return rc;
}
