/* journal.c - opening and closing the journal, LMDB plumbing, stats.
 *
 * Environment flags, and why:
 * - no MDB_NOSYNC, MDB_NOMETASYNC, MDB_MAPASYNC or MDB_WRITEMAP by default:
 *   each commit writes its pages with write(2) and fsyncs data and meta
 *   page, which is what "durable before acting" needs. MDB_WRITEMAP could be
 *   as durable but lets a stray pointer write scribble on the file, and
 *   NOMETASYNC can lose the last commit on a power cut. opts.nosync is for
 *   benchmarks only.
 * - MDB_NOTLS: a read txn belongs to its MDB_txn object instead of the
 *   calling thread. That is what lets a journal_foreach_job() callback call
 *   journal_read_job() (two read txns in one thread, which the default TLS
 *   mode refuses with MDB_BAD_RSLOT), and lets us keep one reset read txn
 *   around and renew it, instead of a malloc and free per read.
 */
#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "core/error.h"
#include "journal/journal_private.h"

#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)
#define DEFAULT_MAP_SIZE (64 * MiB)
#define DEFAULT_MAX_MAP_SIZE (4 * GiB)
#define JOURNAL_MAXDBS 8 /* 7 in use; room for a later format */

/* Journals open in this process, to refuse a second MDB_env on one path:
 * LMDB's fcntl locks would be dropped when either env closes its fd. */
static struct journal *open_journals;

int journal_errno (int rc)
{
    switch (rc) {
    case MDB_SUCCESS:
        return 0;
    case MDB_MAP_FULL:
        return ENOSPC;
    case MDB_NOTFOUND:
        return ENOENT;
    case MDB_KEYEXIST:
        return EEXIST;
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_INCOMPATIBLE:
        return EPROTO;
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
        return EUCLEAN;
    case MDB_READERS_FULL:
    case MDB_MAP_RESIZED:
        return EAGAIN;
    case MDB_TXN_FULL:
        return E2BIG;
    case MDB_BAD_VALSIZE:
        return EINVAL;
    default:
        return rc > 0 ? rc : EIO;
    }
}

int journal_err (struct cairn_error *err, int rc, const char *fmt, ...)
{
    if (err) {
        char msg[sizeof (err->text)];
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (msg, sizeof (msg), fmt, ap);
        va_end (ap);
        /* mdb_strerror's text for MDB_CORRUPTED ("Located page was wrong
         * type") misleads when it is our own check that failed. */
        errprintf (err, "%s: %s", msg,
                   rc == MDB_CORRUPTED ? "journal data is corrupted"
                                       : mdb_strerror (rc));
    }
    errno = journal_errno (rc);
    return -1;
}

/* Counts the forks this process is the child of: a journal opened at
 * another count is its parent's. */
static unsigned fork_gen;
static pthread_once_t fork_gen_once = PTHREAD_ONCE_INIT;

static void fork_gen_bump (void)
{
    fork_gen++;
}

static void fork_gen_watch (void)
{
    (void)pthread_atfork (NULL, NULL, fork_gen_bump);
}

int journal_check_pid (const struct journal *j)
{
    return j->fork_gen == fork_gen ? 0 : EINVAL;
}

int journal_txn_begin (struct journal *j, unsigned int flags, MDB_txn **txnp)
{
    int rc = mdb_txn_begin (j->env, NULL, flags, txnp);
    /* Another process (a writer, while we are the read-only CLI) grew the
     * map past ours. Adopting its size is only allowed with no txn of ours
     * active; the spare one is reset, but drop it to be safe. */
    if (rc == MDB_MAP_RESIZED && j->nreaders == 0) {
        if (j->spare_rtxn) {
            mdb_txn_abort (j->spare_rtxn);
            j->spare_rtxn = NULL;
        }
        if ((rc = mdb_env_set_mapsize (j->env, 0)) == 0)
            rc = mdb_txn_begin (j->env, NULL, flags, txnp);
    }
    return rc;
}

int journal_rtxn_begin (struct journal *j, MDB_txn **txnp)
{
    MDB_txn *txn = NULL;
    int rc;

    if ((rc = journal_check_pid (j)))
        return rc;
    if (j->spare_rtxn) {
        txn = j->spare_rtxn;
        j->spare_rtxn = NULL;
        if ((rc = mdb_txn_renew (txn))) {
            mdb_txn_abort (txn);
            txn = NULL;
            if (rc != MDB_MAP_RESIZED)
                return rc;
        }
    }
    if (!txn && (rc = journal_txn_begin (j, MDB_RDONLY, &txn)))
        return rc;
    j->nreaders++;
    *txnp = txn;
    return 0;
}

void journal_rtxn_end (struct journal *j, MDB_txn *txn)
{
    j->nreaders--;
    if (!j->spare_rtxn) {
        mdb_txn_reset (txn);
        j->spare_rtxn = txn;
    } else
        mdb_txn_abort (txn);
}

int journal_jobrec_get (struct journal *j,
                        MDB_txn *txn,
                        uint64_t id,
                        struct journal_jobrec *rec)
{
    unsigned char kbuf[JOURNAL_KEY_JOB];
    MDB_val k = {sizeof (kbuf), kbuf}, v;
    int rc;

    journal_put_be64 (kbuf, id);
    if ((rc = mdb_get (txn, j->dbi_jobs, &k, &v)))
        return rc;
    if (v.mv_size != sizeof (*rec))
        return MDB_CORRUPTED;
    memcpy (rec, v.mv_data, sizeof (*rec)); /* LMDB values are unaligned */
    if (rec->version != JOURNAL_JOBREC_VERSION)
        return MDB_CORRUPTED;
    return 0;
}

static int
meta_get (struct journal *j, MDB_txn *txn, const char *key, MDB_val *v)
{
    MDB_val k = {strlen (key), (void *)key};
    return mdb_get (txn, j->dbi_meta, &k, v);
}

static int
meta_put (struct journal *j, MDB_txn *txn, const char *key, const char *val)
{
    MDB_val k = {strlen (key), (void *)key};
    MDB_val v = {strlen (val), (void *)val};
    return mdb_put (txn, j->dbi_meta, &k, &v, MDB_NOOVERWRITE);
}

/* Write format, instance and creation time into a new journal. */
static int
meta_create (struct journal *j, MDB_txn *txn, struct cairn_error *err)
{
    uuid_t uu;
    char created[64];
    struct timespec ts;
    int rc;

    uuid_generate (uu);
    uuid_unparse_lower (uu, j->instance);
    clock_gettime (CLOCK_REALTIME, &ts);
    snprintf (created, sizeof (created), "%.6f", ts.tv_sec + ts.tv_nsec / 1e9);
    if ((rc = meta_put (j, txn, "format", "1")) ||
        (rc = meta_put (j, txn, "instance", j->instance)) ||
        (rc = meta_put (j, txn, "created", created)))
        return journal_err (err, rc, "journal at %s: initializing", j->path);
    return 0;
}

/* Check the format version and load the instance id. */
static int meta_check (struct journal *j,
                       MDB_txn *txn,
                       const MDB_val *fmt,
                       struct cairn_error *err)
{
    const char *s = fmt->mv_data;
    bool digits = fmt->mv_size > 0 && fmt->mv_size <= 10;
    char want[16];
    int n = snprintf (want, sizeof (want), "%d", JOURNAL_FORMAT_VERSION);
    MDB_val v;
    int rc;

    for (size_t i = 0; digits && i < fmt->mv_size; i++)
        digits = s[i] >= '0' && s[i] <= '9';
    if (fmt->mv_size != (size_t)n || memcmp (s, want, n) != 0)
        return errset (err, EPROTO,
                       "journal at %s has format version %.*s; "
                       "this cairn reads version %d",
                       j->path, digits ? (int)fmt->mv_size : 9,
                       digits ? s : "(garbled)", JOURNAL_FORMAT_VERSION);
    if ((rc = meta_get (j, txn, "instance", &v)) || v.mv_size != 36)
        return errset (err, EUCLEAN, "journal at %s has no valid instance id",
                       j->path);
    memcpy (j->instance, v.mv_data, 36);
    j->instance[36] = '\0';
    return 0;
}

/* Open the named databases, creating a new journal's contents. */
static int journal_init (struct journal *j, struct cairn_error *err)
{
    static const char *names[] = {"meta", "events", "jobs", "active"};
    MDB_dbi *dbis[] = {&j->dbi_meta, &j->dbi_events, &j->dbi_jobs,
                       &j->dbi_active};
    unsigned int flags = j->readonly ? 0 : MDB_CREATE;
    MDB_txn *txn;
    MDB_stat st;
    MDB_val fmt;
    int rc;

    if ((rc = journal_txn_begin (j, j->readonly ? MDB_RDONLY : 0, &txn)))
        return journal_err (err, rc, "journal at %s", j->path);
    for (int i = 0; i < 4; i++) {
        if ((rc = mdb_dbi_open (txn, names[i], flags, dbis[i]))) {
            if (rc == MDB_NOTFOUND)
                errset (err, EPROTO,
                        "journal at %s has no \"%s\" database "
                        "(not a cairn journal?)",
                        j->path, names[i]);
            else
                journal_err (err, rc, "journal at %s: database %s", j->path,
                             names[i]);
            goto error;
        }
    }
    if ((rc = meta_get (j, txn, "format", &fmt)) == 0) {
        if (meta_check (j, txn, &fmt, err) < 0)
            goto error;
    } else if (rc != MDB_NOTFOUND) {
        journal_err (err, rc, "journal at %s: reading format", j->path);
        goto error;
    } else {
        /* No format: a new journal, unless something else lives here: the
         * main database lists the named ones, so it must hold only ours. */
        MDB_dbi main_dbi;
        if (j->readonly || mdb_dbi_open (txn, NULL, 0, &main_dbi) ||
            mdb_stat (txn, main_dbi, &st) || st.ms_entries != 4 ||
            mdb_stat (txn, j->dbi_meta, &st) || st.ms_entries > 0 ||
            mdb_stat (txn, j->dbi_events, &st) || st.ms_entries > 0) {
            errset (err, EPROTO, "journal at %s has no format version",
                    j->path);
            goto error;
        }
        if (meta_create (j, txn, err) < 0)
            goto error;
    }
    /* "purged" came after the first journals of format 1: created when a
     * writer opens one, absent (nothing purged yet) for a reader */
    rc = mdb_dbi_open (txn, "purged", flags, &j->dbi_purged);
    if (rc && !(rc == MDB_NOTFOUND && j->readonly)) {
        journal_err (err, rc, "journal at %s: database purged", j->path);
        goto error;
    }
    j->has_purged = rc == 0;
    rc = mdb_dbi_open (txn, "drains", flags, &j->dbi_drains);
    if (rc && !(rc == MDB_NOTFOUND && j->readonly)) {
        journal_err (err, rc, "journal at %s: database drains", j->path);
        goto error;
    }
    j->has_drains = rc == 0;
    /* "nodeprocs": a node-role cairnd's processes (issue 15), likewise */
    rc = mdb_dbi_open (txn, "nodeprocs", flags, &j->dbi_nodeprocs);
    if (rc && !(rc == MDB_NOTFOUND && j->readonly)) {
        journal_err (err, rc, "journal at %s: database nodeprocs", j->path);
        goto error;
    }
    j->has_nodeprocs = rc == 0;
    if ((rc = mdb_txn_commit (txn)))
        return journal_err (err, rc, "journal at %s: initializing", j->path);
    return 0;
error:
    mdb_txn_abort (txn);
    return -1;
}

static size_t round_up (size_t n, size_t unit)
{
    return (n + unit - 1) / unit * unit;
}

static int journal_setup_env (struct journal *j,
                              size_t map_size,
                              bool exists,
                              struct cairn_error *err)
{
    unsigned int flags = MDB_NOTLS;
    MDB_envinfo info;
    MDB_stat st;
    int dead;
    int rc;

    if (j->readonly)
        flags |= MDB_RDONLY;
    if (j->nosync)
        flags |= MDB_NOSYNC;
    if ((rc = mdb_env_create (&j->env)))
        return journal_err (err, rc, "journal at %s", j->path);
    if ((rc = mdb_env_set_maxdbs (j->env, JOURNAL_MAXDBS)))
        goto error;
    /* An existing journal is opened at its stored map size (LMDB would
     * otherwise shrink the map to whatever we ask, down to the used size);
     * the inspection CLI never picks a size of its own. */
    if (!exists && !j->readonly &&
        (rc = mdb_env_set_mapsize (j->env, map_size)))
        goto error;
    if ((rc = mdb_env_open (j->env, j->path, flags, 0600)))
        goto error;
    /* Free reader slots of processes that died holding them (a killed
     * cairnd or CLI): they would pin old pages forever. */
    if ((rc = mdb_reader_check (j->env, &dead)))
        goto error;
    if ((rc = mdb_env_info (j->env, &info)) ||
        (rc = mdb_env_stat (j->env, &st)))
        goto error;
    j->page_size = st.ms_psize;
    if (!j->readonly && info.me_mapsize < map_size &&
        (rc = mdb_env_set_mapsize (j->env, map_size)))
        goto error;
    return 0;
error:
    return journal_err (err, rc, "journal at %s", j->path);
}

static int journal_opts_check (const struct journal_opts *opts,
                               size_t *map_size,
                               size_t *max_map_size,
                               struct cairn_error *err)
{
    size_t page = (size_t)sysconf (_SC_PAGESIZE);
    size_t map = opts->map_size ? opts->map_size : DEFAULT_MAP_SIZE;
    size_t max = opts->max_map_size;

    if (max == 0)
        max = map > DEFAULT_MAX_MAP_SIZE ? map : DEFAULT_MAX_MAP_SIZE;
    if (map > max)
        return errset (err, EINVAL,
                       "journal map size %zu is above its maximum %zu", map,
                       max);
    *map_size = round_up (map, page);
    *max_map_size = round_up (max, page);
    return 0;
}

struct journal *journal_open (const char *statedir,
                              const struct journal_opts *opts,
                              struct cairn_error *err)
{
    struct journal_opts defaults = {0};
    struct journal *j = NULL;
    size_t map_size = 0;
    struct stat sb;
    char *data = NULL;
    bool exists;

    if (!opts)
        opts = &defaults;
    if (!statedir || !*statedir) {
        errset (err, EINVAL, "journal: no state directory given");
        return NULL;
    }
    if (!(j = calloc (1, sizeof (*j)))) {
        errset (err, ENOMEM, "journal: out of memory");
        return NULL;
    }
    j->readonly = opts->readonly;
    j->nosync = opts->nosync;
    j->pid = getpid ();
    (void)pthread_once (&fork_gen_once, fork_gen_watch);
    j->fork_gen = fork_gen;
    if (journal_opts_check (opts, &map_size, &j->max_map_size, err) < 0)
        goto error;
    if (stat (statedir, &sb) < 0) {
        errprintf (err, "state directory %s: %s", statedir, strerror (errno));
        goto error;
    }
    if (!S_ISDIR (sb.st_mode)) {
        errset (err, ENOTDIR, "state directory %s is not a directory",
                statedir);
        goto error;
    }
    if (asprintf (&j->path, "%s/journal", statedir) < 0) {
        j->path = NULL;
        errset (err, ENOMEM, "journal: out of memory");
        goto error;
    }
    if (asprintf (&data, "%s/data.mdb", j->path) < 0) {
        data = NULL;
        errset (err, ENOMEM, "journal: out of memory");
        goto error;
    }
    if (!j->readonly && mkdir (j->path, 0700) < 0 && errno != EEXIST) {
        errprintf (err, "cannot create journal directory %s: %s", j->path,
                   strerror (errno));
        goto error;
    }
    if (stat (j->path, &sb) < 0) {
        if (errno == ENOENT)
            errprintf (err, "no journal at %s", j->path);
        else
            errprintf (err, "journal at %s: %s", j->path, strerror (errno));
        goto error;
    }
    if (!S_ISDIR (sb.st_mode)) {
        errset (err, ENOTDIR, "journal at %s is not a directory", j->path);
        goto error;
    }
    j->dev = sb.st_dev;
    j->ino = sb.st_ino;
    for (struct journal *o = open_journals; o; o = o->next) {
        if (o->pid == j->pid && o->dev == j->dev && o->ino == j->ino) {
            errset (err, EBUSY, "journal at %s is already open in this process",
                    j->path);
            goto error;
        }
    }
    exists = stat (data, &sb) == 0 && sb.st_size > 0;
    if (j->readonly && !exists) {
        errset (err, ENOENT, "no journal at %s", j->path);
        goto error;
    }
    if (journal_setup_env (j, map_size, exists, err) < 0 ||
        journal_init (j, err) < 0)
        goto error;
    free (data);
    j->next = open_journals;
    open_journals = j;
    return j;
error:
    free (data);
    journal_close (j);
    return NULL;
}

void journal_close (struct journal *j)
{
    if (!j)
        return;
    int saved = errno;
    for (struct journal **p = &open_journals; *p; p = &(*p)->next) {
        if (*p == j) {
            *p = j->next;
            break;
        }
    }
    /* a commit in flight ends first: its batch is written or dropped */
    journal_committer_free (j);
    /* In a forked child the env is not ours to touch (LMDB caveat): only
     * free our memory. */
    if (j->env && journal_check_pid (j) == 0) {
        if (j->spare_rtxn)
            mdb_txn_abort (j->spare_rtxn);
        /* nosync: leave a complete file behind on a clean close. */
        if (j->nosync && !j->readonly)
            (void)mdb_env_sync (j->env, 1);
        mdb_env_close (j->env);
    }
    journal_batch_free (&j->batch);
    journal_batch_free (&j->flight);
    free (j->path);
    free (j);
    errno = saved;
}

const char *journal_instance (const struct journal *j)
{
    return j ? j->instance : NULL;
}

/* The main DB (names of the others) has dbi 1 in LMDB. */
#define MAIN_DBI_HANDLE 1

static size_t db_pages (const MDB_stat *st)
{
    return st->ms_branch_pages + st->ms_leaf_pages + st->ms_overflow_pages;
}

int journal_stats (struct journal *j, struct journal_stats *st)
{
    MDB_txn *txn;
    MDB_envinfo info;
    MDB_stat ev, jobs, act, meta, main;
    int rc;

    if (!j || !st) {
        errno = EINVAL;
        return -1;
    }
    if ((rc = journal_rtxn_begin (j, &txn)))
        goto error;
    if (!(rc = mdb_stat (txn, j->dbi_events, &ev)) &&
        !(rc = mdb_stat (txn, j->dbi_jobs, &jobs)) &&
        !(rc = mdb_stat (txn, j->dbi_active, &act)) &&
        !(rc = mdb_stat (txn, j->dbi_meta, &meta)) &&
        !(rc = mdb_stat (txn, MAIN_DBI_HANDLE, &main)))
        rc = mdb_env_info (j->env, &info);
    journal_rtxn_end (j, txn);
    if (rc)
        goto error;
    st->map_size = info.me_mapsize;
    st->map_used = (info.me_last_pgno + 1) * j->page_size;
    st->data_used = (db_pages (&ev) + db_pages (&jobs) + db_pages (&act)
                     + db_pages (&meta) + db_pages (&main) + 2 /* meta pages */)
                    * j->page_size;
    st->max_map_size = j->max_map_size;
    st->njobs = jobs.ms_entries;
    st->nactive = act.ms_entries;
    st->nevents = ev.ms_entries;
    st->page_size = j->page_size;
    return 0;
error:
    errno = journal_errno (rc);
    return -1;
}
