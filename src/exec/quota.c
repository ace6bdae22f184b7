/* quota.c - the unprivileged clients' quotas (issue 30).
 *
 * One user's 1 MiB jobspecs filled the journal, and then every new job,
 * root's too, was refused until a purge. A user on the public socket
 * (not root or cairnd's uid: service_privileged()) now has, per uid,
 * at most limits.user-max-jobs active jobs and limits.user-max-journal-
 * bytes of journal; and all such users together at most
 * limits.users-journal-share of journal.max-size, counting what their
 * running jobs may still write, so that the rest is always there for the
 * privileged clients' jobs (a resource manager's).
 *
 * A job's bytes are its events' lines as journaled, plus QUOTA_OVERHEAD
 * each for its key and LMDB's bookkeeping; they count from its accept
 * until the job is purged (retention, or `cairn purge`), finished or not.
 * The count is kept in memory: made at startup from the journal when
 * there is a public socket (without one no user can reach cairnd; a
 * user's start would count first), reading only the start of each
 * privileged job's accept line, so that a journal of many large
 * privileged jobs is not parsed; then updated as events are staged and
 * jobs purged. A purge by another process
 * (`cairn purge` while cairnd runs) changes the number of job records,
 * and the next unprivileged start then counts again.
 *
 * Quotas checked only at a start left a running job's owner free to
 * journal without bound (issue 51: non-fatal exceptions with 1 MiB
 * notes, kills on a job of many ranks filled a 64 MiB journal in 1.5 s,
 * and cairnd exited). Every request of a user that journals is now
 * checked too (quota_check_request), with an estimate of what it will
 * stage. Its events are staged only when the turn ends, so what the
 * checks let in during a turn is promised, and counts with the journaled
 * bytes until cairnd has staged it (quota_settle): a user's many
 * requests in one turn cannot each be measured against the same count.
 *
 * Nothing here writes the journal: no crash points.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "exec/quota.h"
#include "journal/journal.h"
#include "util/hashmap.h"
#include "util/log.h"

/* per event: a 12-byte key, an 8-byte node, a 2-byte index, page slack */
#define QUOTA_OVERHEAD 32

struct quota {
    struct journal *journal;
    const struct cairn_config *cfg;
    struct hashmap *ujobs;    /* decimal id -> their jobs in the journal */
    struct hashmap *uusage;   /* decimal uid -> bytes, active jobs */
    size_t users_bytes;       /* all their jobs' bytes */
    size_t users_active;      /* all their active jobs */
    size_t njobs;             /* job records the journal should have */
    bool stale;               /* the last count failed: count again */
    struct hashmap *promised; /* decimal uid -> struct promise */
    size_t users_promised;    /* all their promised bytes */
    size_t jobs_promised;     /* all their promised jobs */
};

/* What the checks let in and cairnd has not staged yet (quota_settle) */
struct promise {
    size_t bytes;
    size_t jobs; /* starts */
};

struct ujob {
    uint32_t uid;
    size_t bytes;
};

struct uusage {
    size_t bytes;  /* of its jobs in the journal */
    size_t active; /* its active jobs */
};

static void key_of (char *buf, size_t len, uint64_t n)
{
    snprintf (buf, len, "%" PRIu64, n);
}

static void map_clear (struct hashmap *h)
{
    size_t pos = 0;
    const char *key;
    void *v;
    while ((v = hashmap_next (h, &pos, &key))) {
        hashmap_del (h, key);
        free (v);
    }
}

struct quota *quota_create (struct journal *j, const struct cairn_config *cfg)
{
    struct quota *q = calloc (1, sizeof (*q));

    if (!q || !(q->ujobs = hashmap_create ()) ||
        !(q->uusage = hashmap_create ()) ||
        !(q->promised = hashmap_create ())) {
        quota_destroy (q);
        errno = ENOMEM;
        return NULL;
    }
    q->journal = j;
    q->cfg = cfg;
    return q;
}

void quota_destroy (struct quota *q)
{
    if (!q)
        return;
    if (q->ujobs) {
        map_clear (q->ujobs);
        hashmap_destroy (q->ujobs);
    }
    if (q->uusage) {
        map_clear (q->uusage);
        hashmap_destroy (q->uusage);
    }
    if (q->promised) {
        map_clear (q->promised);
        hashmap_destroy (q->promised);
    }
    free (q);
}

static struct uusage *usage_of (struct quota *q, uint32_t uid, bool create)
{
    char key[24];
    struct uusage *u;

    key_of (key, sizeof (key), uid);
    if ((u = hashmap_get (q->uusage, key)) || !create)
        return u;
    if (!(u = calloc (1, sizeof (*u))) || hashmap_put (q->uusage, key, u) < 0) {
        free (u);
        return NULL;
    }
    return u;
}

/* uid's job ended (its clean): one active job fewer. */
static void ended (struct quota *q, uint32_t uid)
{
    struct uusage *u = usage_of (q, uid, false);
    if (u && u->active > 0)
        u->active--;
    if (q->users_active > 0)
        q->users_active--;
}

/* job id (of uid) has len more bytes in the journal. A job new to the
 * count is active. */
static void add (struct quota *q, uint64_t id, uint32_t uid, size_t len)
{
    char key[24];
    struct ujob *j;
    struct uusage *u = usage_of (q, uid, true);

    key_of (key, sizeof (key), id);
    if (!(j = hashmap_get (q->ujobs, key))) {
        if (!(j = calloc (1, sizeof (*j))) ||
            hashmap_put (q->ujobs, key, j) < 0) {
            free (j);
            log_msg (LOG_ERR, "quota: out of memory");
            return;
        }
        j->uid = uid;
        if (u)
            u->active++;
        q->users_active++;
    }
    j->bytes += len + QUOTA_OVERHEAD;
    if (u)
        u->bytes += len + QUOTA_OVERHEAD;
    q->users_bytes += len + QUOTA_OVERHEAD;
}

void quota_staged (struct quota *q,
                   const struct job *job,
                   uint32_t seq,
                   enum job_event ev,
                   size_t len)
{
    if (seq == 0)
        q->njobs++; /* its record is made with its first event */
    if (job_privileged (job))
        return;
    add (q, job_id (job), job_userid (job), len);
    if (ev == JOB_EV_CLEAN)
        ended (q, job_userid (job));
}

void quota_purged (struct quota *q, uint64_t id)
{
    char key[24];
    struct ujob *j;

    if (q->njobs > 0)
        q->njobs--;
    key_of (key, sizeof (key), id);
    if (!(j = hashmap_get (q->ujobs, key)))
        return;
    struct uusage *u = usage_of (q, j->uid, false);
    if (u) {
        u->bytes -= j->bytes < u->bytes ? j->bytes : u->bytes;
        if (u->bytes == 0 && u->active == 0) {
            char ukey[24];
            key_of (ukey, sizeof (ukey), j->uid);
            hashmap_del (q->uusage, ukey);
            free (u);
        }
    }
    q->users_bytes -= j->bytes < q->users_bytes ? j->bytes : q->users_bytes;
    hashmap_del (q->ujobs, key);
    free (j);
}

/* ---- counting from the journal ---- */

struct scan {
    struct quota *q;
    bool active;
    bool user; /* the accept says privileged: false */
    uint32_t uid;
};

/* An unprivileged job's accept line begins so (job_accept() writes
 * "privileged" first, and only when false); a privileged job's line is
 * not read further. */
static bool accept_unprivileged (const char *line, size_t len, uint32_t *uid)
{
    static const char mark[] =
        "\"name\":\"accept\",\"context\":{\"privileged\":false,\"userid\":";
    size_t n = len < 160 ? len : 160;
    char buf[161];
    char *p, *end;

    memcpy (buf, line, n);
    buf[n] = '\0';
    if (!(p = strstr (buf, mark)))
        return false;
    p += sizeof (mark) - 1;
    unsigned long v = strtoul (p, &end, 10);
    if (end == p || v > UINT32_MAX)
        return false;
    *uid = (uint32_t)v;
    return true;
}

static int
scan_event (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct scan *s = arg;
    if (seq == 0 && !(s->user = accept_unprivileged (line, len, &s->uid)))
        return 1; /* a privileged job: not counted */
    add (s->q, id, s->uid, len);
    return 0;
}

static int scan_job (const struct journal_jobinfo *info, void *arg)
{
    struct scan *s = arg;
    struct cairn_error err;

    s->user = false;
    if (journal_read_job (s->q->journal, info->id, 0, scan_event, s, &err) < 0)
        return -1;
    if (s->user && !info->active)
        ended (s->q, s->uid);
    return 0;
}

int quota_count (struct quota *q, struct cairn_error *err)
{
    struct scan s = {.q = q};
    struct journal_stats st = {0};

    q->stale = true; /* until this count is done */
    map_clear (q->ujobs);
    map_clear (q->uusage);
    q->users_bytes = 0;
    q->users_active = 0;
    if (journal_foreach_job (q->journal, false, scan_job, &s, err) < 0)
        return errprefix (err, "counting the users' jobs");
    if (journal_stats (q->journal, &st) < 0)
        return errset (err, errno, "counting the users' jobs: %s",
                       strerror (errno));
    q->njobs = st.njobs;
    q->stale = false;
    return 0;
}

/* ---- the checks ---- */

size_t quota_need (size_t nevents, size_t len)
{
    return len + nevents * QUOTA_OVERHEAD;
}

size_t quota_users_active (const struct quota *q)
{
    return q->users_active + q->jobs_promised;
}

void quota_settle (struct quota *q)
{
    map_clear (q->promised);
    q->users_promised = 0;
    q->jobs_promised = 0;
}

static void mib (char *buf, size_t len, size_t n)
{
    snprintf (buf, len, "%.1f MiB", (double)n / (1 << 20));
}

/* Count again if another process purged jobs (cairn purge), or the last
 * count failed: nothing of a user's is let in uncounted. The journal's
 * number of jobs is comparable with ours only while nothing staged is
 * unwritten: a batch pending or in flight has new jobs (or purges) in our
 * count and not yet in the journal's, and a count made from the journal
 * then would drop their bytes. Now that every request of a user is
 * checked, that would also be a full count per request while a commit
 * is in flight. */
static int recount (struct quota *q, struct cairn_error *err)
{
    struct journal_stats st = {0};
    struct cairn_error cerr;

    if (!q->stale &&
        (journal_pending (q->journal) > 0 || journal_committing (q->journal)))
        return 0;
    if (!q->stale &&
        (journal_stats (q->journal, &st) < 0 || st.njobs == q->njobs))
        return 0;
    log_msg (LOG_INFO,
             "quota: counting the users' jobs again (%zu job records, "
             "%zu expected)",
             st.njobs, q->njobs);
    if (quota_count (q, &cerr) < 0) {
        log_msg (LOG_ERR, "quota: %s", cerr.text);
        return errset (err, errno, "%s", cerr.text);
    }
    return 0;
}

/* The byte limits for uid, need more bytes for `what` ("this one": a new
 * job, counted as a promised job; "this request"). Promised, if within
 * them. */
static int check_bytes (struct quota *q,
                        uid_t uid,
                        size_t need,
                        bool job,
                        const char *what,
                        struct cairn_error *err)
{
    char key[24], have[32], lim[32];
    struct uusage *u = usage_of (q, (uint32_t)uid, false);
    struct promise *p;

    key_of (key, sizeof (key), (uint32_t)uid);
    p = hashmap_get (q->promised, key);
    size_t bytes = (u ? u->bytes : 0) + (p ? p->bytes : 0);
    if (bytes + need > q->cfg->user_max_journal_bytes) {
        mib (have, sizeof (have), bytes);
        mib (lim, sizeof (lim), q->cfg->user_max_journal_bytes);
        return errset (err, EDQUOT,
                       "uid %u's jobs hold %s of the journal, and %s "
                       "needs %zu bytes more: limits.user-max-journal-bytes "
                       "is %s (finished jobs count until purged)",
                       (unsigned)uid, have, what, need, lim);
    }
    /* all users together, with what their running jobs may still write
     * (as quota_journal_full() reserves it) */
    size_t nactive = quota_users_active (q);
    size_t per_job = 3 * q->cfg->job.output_max_bytes + (64 << 10);
    size_t users = q->users_bytes + q->users_promised + nactive * per_job;
    size_t share = (size_t)(q->cfg->users_journal_share *
                            (double)q->cfg->journal_max_size);
    if (users + need > share) {
        mib (have, sizeof (have), users);
        mib (lim, sizeof (lim), share);
        return errset (err, EDQUOT,
                       "the users' jobs hold %s of the journal (with room "
                       "for those still running), and their share is %s "
                       "(limits.users-journal-share %.2f of journal.max-size): "
                       "the rest is kept for root's and cairnd's uid's jobs",
                       have, lim, q->cfg->users_journal_share);
    }
    if (!p) {
        if (!(p = calloc (1, sizeof (*p))) ||
            hashmap_put (q->promised, key, p) < 0) {
            free (p);
            return errset (err, ENOMEM, "out of memory");
        }
    }
    p->bytes += need;
    p->jobs += job;
    q->users_promised += need;
    q->jobs_promised += job;
    return 0;
}

int quota_check (struct quota *q,
                 uid_t uid,
                 size_t need,
                 struct cairn_error *err)
{
    char key[24];

    if (recount (q, err) < 0)
        return -1;
    key_of (key, sizeof (key), (uint32_t)uid);
    struct uusage *u = usage_of (q, (uint32_t)uid, false);
    struct promise *p = hashmap_get (q->promised, key);
    size_t active = (u ? u->active : 0) + (p ? p->jobs : 0);
    if (active >= (size_t)q->cfg->user_max_jobs)
        return errset (err, EDQUOT,
                       "uid %u has %zu active jobs, the most "
                       "limits.user-max-jobs (%d) allows",
                       (unsigned)uid, active, q->cfg->user_max_jobs);
    return check_bytes (q, uid, need, true, "this one", err);
}

int quota_check_request (struct quota *q,
                         uid_t uid,
                         size_t need,
                         struct cairn_error *err)
{
    if (recount (q, err) < 0)
        return -1;
    return check_bytes (q, uid, need, false, "this request", err);
}

/* Refuse new jobs before the map is full, so that the jobs already running
 * can always journal their way to the end: the last 10% (at least 1 MiB)
 * of the largest map, plus each active job's output cap and 64 KiB for
 * its events, are kept for them. */
bool quota_journal_full (const struct quota *q, size_t active_jobs)
{
    struct journal_stats st;
    if (journal_stats (q->journal, &st) < 0 || st.max_map_size == 0)
        return false;
    size_t reserve = st.max_map_size / 10;
    if (reserve < (1 << 20))
        reserve = 1 << 20;
    /* ... plus what the jobs already accepted may still write: their
     * output up to the cap of each phase, and their events */
    size_t per_job = 3 * q->cfg->job.output_max_bytes + (64 << 10);
    reserve += active_jobs * per_job;
    /* live pages, not the high-water mark: after a purge LMDB reuses the
     * freed pages, so new jobs may come in again */
    return st.data_used + reserve >= st.max_map_size;
}
