/* service_views.c - what `cairn jobs`, `cairn show` and `cairn eventlog`
 * ask of cairnd when their user cannot read its journal: the users of a
 * root cairnd's public socket, whose state directory stays 0700
 * (SECURITY.md, cairn-protocol(7)).
 *
 *   jobs        a summary of each job, for everyone, as `flux jobs` shows
 *               every user's jobs; a job's command and working directory
 *               only to its owner, root and the service uid (and the
 *               Flux instance's owner on its instance's jobs: trust.h
 *               T5), the others get its name;
 *   job-events  one job's events as journaled, its jobspec (environment)
 *               and output among them: service.c lets only the job's
 *               owner, root and the service uid through.
 *
 * Both read committed events from the journal, in short read
 * transactions, like `cairn` itself does, so that what a user sees through
 * the socket is what root sees in the journal. Both bound what one request
 * costs cairnd's loop, since anyone may send them: jobs summarizes the
 * active jobs and at most JOBS_MAX_DONE finished ones (the newest),
 * decodes only the events a summary needs, and does it a slice of each
 * loop turn at a time; job-events answers about JOB_EVENTS_MAX_BYTES at a
 * time and the client asks for the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/eventlog.h"
#include "core/hostlist.h"
#include "core/job.h"
#include "core/jobtimes.h"
#include "core/rv1.h"
#include "exec/jobtable.h"
#include "exec/service_views.h"
#include "exec/trust.h"
#include "journal/journal.h"
#include "server/server.h"

#define JOBS_MAX_DONE 1000
#define JOBS_MAX_IDS 1000
#define JOB_EVENTS_MAX_BYTES (1024 * 1024)

/* A line of jobsviews, first come first served, one job each in turn. */
struct jobsview;

struct viewq {
    struct jobsview *head;
    struct jobsview **tail;
};

/* The privileged clients' requests (a resource manager's, root's) before
 * the users': however many users ask, theirs go as fast as alone. */
struct views {
    struct ev_loop *loop;
    struct journal *journal;   /* lent: read only */
    struct jobtable *jobs;     /* lent: an active job's state and ranks */
    const struct trust *trust; /* lent: who may see a job's command */
    ev_idle w;
    struct viewq privileged;
    struct viewq users;
};

/* ---- jobs ---- */

/* What one pass over a job's events finds (the fields of `cairn jobs`). */
struct summary {
    json_t *accept; /* the first accept's context */
    struct jobtimes jt;
    struct idset *drained;
    uint32_t nevents;
    char last[65]; /* the last event's name and time */
    double t_last;
};

/* The time and name of a journaled line without decoding it. Lines are
 * eventlog_entry_encode()'s, {"timestamp":T,"name":"N",...}, and a name
 * holds no quote. Returns 0, or -1 when the line does not begin so (it is
 * decoded then). */
static int
line_head (const char *line, size_t len, double *t, char *name, size_t size)
{
    static const char ts[] = "{\"timestamp\":";
    static const char nm[] = ",\"name\":\"";
    const char *end = line + len, *p, *q;
    char num[64], *e;

    if (len < sizeof (ts) - 1 || memcmp (line, ts, sizeof (ts) - 1) != 0)
        return -1;
    p = line + sizeof (ts) - 1;
    if (!(q = memchr (p, ',', end - p)) || q - p >= (ptrdiff_t)sizeof (num))
        return -1;
    memcpy (num, p, q - p);
    num[q - p] = '\0';
    *t = strtod (num, &e);
    if (e == num || *e != '\0')
        return -1;
    if (end - q < (ptrdiff_t)sizeof (nm) - 1 ||
        memcmp (q, nm, sizeof (nm) - 1) != 0)
        return -1;
    p = q + sizeof (nm) - 1;
    if (!(q = memchr (p, '"', end - p)) || q - p >= (ptrdiff_t)size ||
        memchr (p, '\\', q - p))
        return -1;
    memcpy (name, p, q - p);
    name[q - p] = '\0';
    return 0;
}

/* The events a summary reads; the others (processes, output...) are only
 * counted, not decoded. */
static bool summary_reads (enum job_event ev)
{
    switch (ev) {
    case JOB_EV_ACCEPT:
    case JOB_EV_START:
    case JOB_EV_FINISH:
    case JOB_EV_CLEAN:
    case JOB_EV_EXCEPTION:
    case JOB_EV_EXPIRATION:
    case JOB_EV_DRAIN:
        return true;
    default:
        return false;
    }
}

/* An event (ev, named name) of the job: into its summary. */
static int summary_event (struct summary *s,
                          double t,
                          enum job_event ev,
                          const char *name,
                          json_t *ctx)
{
    if (ev == JOB_EV_ACCEPT && !s->accept)
        s->accept = json_incref (ctx);
    jobtimes_event (&s->jt, t, name, ctx);
    if (ev == JOB_EV_DRAIN) {
        const char *ranks = NULL;
        struct idset *set;
        if (json_unpack (ctx, "{s:s}", "ranks", &ranks) == 0 &&
            (set = idset_decode (ranks, NULL))) {
            int rc = idset_add (s->drained, set);
            idset_destroy (set);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

static int
summary_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct summary *s = arg;
    char name[sizeof (s->last)];
    const char *n;
    double t;
    json_t *entry, *ctx;
    int rc = 0;

    s->nevents++;
    if (line_head (line, len, &t, name, sizeof (name)) == 0 &&
        !summary_reads (job_event_of (name))) {
        snprintf (s->last, sizeof (s->last), "%s", name);
        s->t_last = t;
        return 0;
    }
    if (!(entry = eventlog_entry_decode (line, len, NULL))) {
        s->last[0] = '\0'; /* as `cairn jobs` says of a malformed one */
        s->t_last = 0;
        return errno == ENOMEM ? -1 : 0;
    }
    if (eventlog_entry_parse (entry, &t, &n, &ctx) == 0) {
        snprintf (s->last, sizeof (s->last), "%s", n);
        s->t_last = t;
        rc = summary_event (s, t, job_event_of (n), n, ctx);
    }
    json_decref (entry);
    return rc;
}

/* The state of a job cairnd does not hold (finished): what its events
 * say. */
static const char *summary_state (const struct summary *s)
{
    return s->jt.t_clean > 0    ? "done"
           : s->jt.t_finish > 0 ? "cleanup"
           : s->jt.t_start > 0  ? "run"
                                : "prolog";
}

static json_t *ranks_string (const struct idset *s)
{
    char *str = s ? idset_encode (s) : strdup ("");
    json_t *o = str ? json_string (str) : NULL;
    free (str);
    return o;
}

/* R's hosts, each once, as one hostlist ("" when R has none). */
static json_t *hosts_string (const struct rv1 *r)
{
    struct hostlist *hl = hostlist_create ();
    json_t *seen = json_object (), *o = NULL;
    const struct idset *ranks = r ? rv1_ranks (r) : NULL;
    char *s = NULL;

    if (!hl || !seen)
        goto done;
    for (uint32_t rk = ranks ? idset_first (ranks) : IDSET_INVALID_ID;
         rk != IDSET_INVALID_ID; rk = idset_next (ranks, rk)) {
        const char *h = rv1_hostname (r, rk);
        if (!h || json_object_get (seen, h))
            continue;
        if (json_object_set_new (seen, h, json_true ()) < 0 ||
            hostlist_append (hl, h) < 0)
            goto done;
    }
    if ((s = hostlist_encode (hl)))
        o = json_string (s);
done:
    free (s);
    json_decref (seen);
    hostlist_destroy (hl);
    return o;
}

/* The job's name, as Flux names a job: attributes.system.job.name, else
 * the last part of its command's first word. */
static json_t *job_name (const json_t *jobspec, const json_t *command)
{
    const char *name = json_string_value (json_object_get (
        json_object_get (
            json_object_get (json_object_get (jobspec, "attributes"), "system"),
            "job"),
        "name"));
    const char *arg0 = json_string_value (json_array_get (command, 0));

    if (!name && arg0) {
        const char *slash = strrchr (arg0, '/');
        name = slash && slash[1] ? slash + 1 : arg0;
    }
    return json_string (name ? name : "");
}

static int set (json_t *o, const char *key, json_t *v)
{
    return json_object_set_new (o, key, v);
}

/* The summary of job id as the "jobs" response lists it. may_see: the
 * sender may see the job's command and cwd (its owner or privileged). */
static json_t *summary_json (
    struct views *v, uint64_t id, bool active, struct summary *s, uid_t sender)
{
    const json_t *jobspec = json_object_get (s->accept, "jobspec");
    const json_t *R = json_object_get (s->accept, "R");
    json_t *uid = json_object_get (s->accept, "userid");
    const json_t *command = json_object_get (
        json_array_get (json_object_get (jobspec, "tasks"), 0), "command");
    const char *cwd = json_string_value (json_object_get (
        json_object_get (json_object_get (jobspec, "attributes"), "system"),
        "cwd"));
    struct rv1 *r = json_is_object (R) ? rv1_decode (R, NULL) : NULL;
    struct jobentry *je = jobtable_get (v->jobs, id);
    const struct job *job = je ? je->job : NULL;
    const struct idset *ranks = job ? job_ranks (job)
                                : r ? rv1_ranks (r)
                                    : NULL;
    bool may_see =
        (trust_privileged (v->trust, sender) &&
         trust_owner_job (v->trust, sender, trust_shell_uid (s->accept))) ||
        (json_is_integer (uid) &&
         json_integer_value (uid) == (json_int_t)sender);
    double expiration = s->jt.have_expiration ? s->jt.expiration
                        : r                   ? rv1_expiration (r)
                                              : 0;
    json_t *o = json_object ();
    int rc = 0;

    if (!o)
        goto done;
    rc |= set (o, "id", json_integer ((json_int_t)id));
    rc |= set (o, "userid",
               json_is_integer (uid) ? json_incref (uid) : json_null ());
    rc |= set (o, "state",
               json_string (job ? job_state_name (job_state (job))
                                : summary_state (s)));
    rc |= set (o, "result", json_string (jobtimes_result (&s->jt)));
    rc |= set (o, "waitstatus",
               s->jt.finished ? json_integer (s->jt.status) : json_null ());
    rc |= set (o, "active", json_boolean (active));
    rc |= set (o, "nranks",
               json_integer (ranks ? (json_int_t)idset_count (ranks) : 0));
    rc |= set (o, "ranks", ranks_string (ranks));
    /* a finished job released all its ranks */
    rc |= set (o, "released", ranks_string (job ? job_released (job) : ranks));
    rc |=
        set (o, "drained", ranks_string (job ? job_drained (job) : s->drained));
    rc |= set (o, "nodelist", hosts_string (r));
    rc |= set (o, "name", job_name (jobspec, command));
    if (may_see) {
        rc |= set (o, "command",
                   json_is_array (command) ? json_deep_copy (command)
                                           : json_array ());
        rc |= set (o, "cwd", json_string (cwd ? cwd : ""));
    }
    rc |= set (o, "expiration", json_real (expiration));
    rc |= set (o, "t_accept", json_real (s->jt.t_accept));
    rc |= set (o, "t_start", json_real (s->jt.t_start));
    rc |= set (o, "t_finish", json_real (s->jt.t_finish));
    rc |= set (o, "t_clean", json_real (s->jt.t_clean));
    rc |= set (o, "nevents", json_integer (s->nevents));
    rc |= set (o, "last_event", json_string (s->last));
    rc |= set (o, "t_last", json_real (s->t_last));
    if (rc != 0) {
        json_decref (o);
        o = NULL;
    }
done:
    rv1_destroy (r);
    return o;
}

/* Summarize job id into the array jobs. Returns 0 (a job gone meanwhile
 * is left out), or -1 with errno and err. */
static int jobs_add (struct views *v,
                     json_t *jobs,
                     uint64_t id,
                     bool active,
                     uid_t sender,
                     struct cairn_error *err)
{
    struct summary s = {.drained = idset_create ()};
    json_t *o = NULL;
    int rc = -1;

    if (!s.drained) {
        errset (err, ENOMEM, "out of memory");
        return -1;
    }
    if (journal_read_job (v->journal, id, 0, summary_cb, &s, err) < 0) {
        if (errno == ENOENT)
            rc = 0;
        goto done;
    }
    if (!(o = summary_json (v, id, active, &s, sender)) ||
        json_array_append_new (jobs, o) < 0) {
        errset (err, ENOMEM, "out of memory");
        goto done;
    }
    rc = 0;
done:
    json_decref (s.accept);
    idset_destroy (s.drained);
    return rc;
}

struct joblist {
    struct journal_jobinfo *v;
    size_t n, size;
    size_t ndone;
};

static int joblist_cb (const struct journal_jobinfo *info, void *arg)
{
    struct joblist *l = arg;
    if (l->n == l->size) {
        size_t size = l->size ? 2 * l->size : 64;
        struct journal_jobinfo *v = realloc (l->v, size * sizeof (*v));
        if (!v)
            return -1;
        l->v = v;
        l->size = size;
    }
    l->v[l->n++] = *info;
    return 0;
}

/* Finished jobs only, newest first, until JOBS_MAX_DONE of them. */
static int donelist_cb (const struct journal_jobinfo *info, void *arg)
{
    struct joblist *l = arg;
    if (info->active)
        return 0;
    if (joblist_cb (info, arg) < 0)
        return -1;
    return ++l->ndone == JOBS_MAX_DONE ? 1 : 0;
}

static int by_id (const void *a, const void *b)
{
    uint64_t x = ((const struct journal_jobinfo *)a)->id;
    uint64_t y = ((const struct journal_jobinfo *)b)->id;
    return x < y ? -1 : x > y;
}

/* The payload's ids: an array of at most JOBS_MAX_IDS integers >= 0.
 * Returns 0, or -1 after the error response. */
static int jobs_ids (struct conn *c, int64_t matchtag, const json_t *ids)
{
    size_t i;
    json_t *v;

    if (!json_is_array (ids)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "ids: must be an array of job ids");
        return -1;
    }
    json_array_foreach (ids, i, v)
    {
        if (!json_is_integer (v) || json_integer_value (v) < 0) {
            conn_respond_error (c, matchtag, EPROTO,
                                "ids: must be an array of job ids");
            return -1;
        }
    }
    if (json_array_size (ids) > JOBS_MAX_IDS) {
        conn_respond_error (c, matchtag, EINVAL,
                            "ids: at most %d jobs, not %zu", JOBS_MAX_IDS,
                            json_array_size (ids));
        return -1;
    }
    return 0;
}

/* ---- jobs, a slice at a time ----
 *
 * A summary reads and decodes a job's accept (its jobspec, environment
 * and all) and more: 1,200 jobs cost 160 ms. Made in one go, a `jobs`
 * request held the loop that long, and one uid's 32 connections asking
 * in turn slowed root's start from 0.03 s to 0.75 s (issue 51). The
 * request now lists its jobs at once (the journal's indexes, cheap), and
 * summarizes them from an idle watcher, at most VIEWS_SLICE_NS of it per
 * loop turn for all the requests together, a job of each in turn (the
 * privileged clients' first): the loop's own work (I/O, commits, root's
 * other requests) runs between slices, and the answer, one response as
 * before, is sent when the last job is summarized. A job purged
 * meanwhile is left out, as one purged between the listing and its
 * summary always was. */

#define VIEWS_SLICE_NS 1000000LL /* of summaries per loop turn */
/* A user's jobs requests answered at once: each holds its summaries made
 * so far (up to a MiB or so), and a user that does not wait for its
 * answers must not make cairnd hold ever more of them. */
#define VIEWS_USER_MAX 8

struct jobsview {
    struct jobsview *next;
    struct conn *c; /* NULL once it went away */
    int64_t matchtag;
    uid_t sender;
    struct joblist l; /* the jobs to summarize */
    size_t at;        /* the next one's index in l */
    json_t *jobs;
    json_t *missing; /* ids not found (an ids request), or NULL */
    bool truncated;  /* an all request: say how many were left out */
    json_int_t skip;
};

static void viewq_push (struct viewq *q, struct jobsview *jv)
{
    jv->next = NULL;
    *q->tail = jv;
    q->tail = &jv->next;
}

static struct jobsview *viewq_pop (struct viewq *q)
{
    struct jobsview *jv = q->head;
    if (jv && !(q->head = jv->next))
        q->tail = &q->head;
    return jv;
}

static long long mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void jobsview_free (struct jobsview *jv)
{
    if (jv) {
        free (jv->l.v);
        json_decref (jv->jobs);
        json_decref (jv->missing);
        free (jv);
    }
}

/* Answer jv's request: its summaries, or an error (errnum, err). */
static void jobsview_respond (struct jobsview *jv,
                              int errnum,
                              const struct cairn_error *err)
{
    json_t *r = NULL;

    if (!jv->c)
        return;
    if (errnum == 0 &&
        (!(r = json_pack ("{s:O}", "jobs", jv->jobs)) ||
         (jv->missing && json_object_set (r, "missing", jv->missing) < 0) ||
         (jv->truncated &&
          json_object_set_new (r, "truncated", json_integer (jv->skip)) < 0)))
        errnum = ENOMEM;
    if (errnum == ENOMEM)
        conn_respond_error (jv->c, jv->matchtag, ENOMEM, "jobs: out of memory");
    else if (errnum != 0)
        conn_respond_error (
            jv->c, jv->matchtag, errnum, "jobs: cannot read the journal: %s",
            err && err->text[0] ? err->text : strerror (errnum));
    else
        conn_respond (jv->c, jv->matchtag, r);
    json_decref (r);
}

/* Summarize jv's next job. 1 when it has no more, 0 while it has, -1
 * with errno and err. A job purged meanwhile is left out; whether it is
 * active is read again (it may have ended since the list was made). */
static int
jobsview_step (struct views *v, struct jobsview *jv, struct cairn_error *err)
{
    struct journal_jobinfo info;
    uint64_t id;

    if (jv->at == jv->l.n)
        return 1;
    id = jv->l.v[jv->at++].id;
    if (journal_job_info (v->journal, id, &info) < 0)
        return errno == ENOENT ? 0
                               : errset (err, errno, "%s", strerror (errno));
    if (jobs_add (v, jv->jobs, id, info.active, jv->sender, err) < 0)
        return -1;
    return jv->at == jv->l.n ? 1 : 0;
}

static void views_cb (struct ev_loop *loop, ev_idle *w, int revents)
{
    struct views *v = w->data;
    long long until = mono_ns () + VIEWS_SLICE_NS;

    if (!v->privileged.head && !v->users.head) {
        ev_idle_stop (loop, w);
        return;
    }
    do {
        struct viewq *q = v->privileged.head ? &v->privileged : &v->users;
        struct jobsview *jv = viewq_pop (q);
        struct cairn_error err = {{0}};
        int rc = jv->c ? jobsview_step (v, jv, &err) : 1;

        if (rc != 0) {
            jobsview_respond (jv, rc < 0 ? (errno ? errno : EIO) : 0, &err);
            jobsview_free (jv);
        } else
            viewq_push (q, jv); /* to the end of its line */
    } while ((v->privileged.head || v->users.head) && mono_ns () < until);
    if (!v->privileged.head && !v->users.head)
        ev_idle_stop (loop, w);
}

struct views *views_create (struct ev_loop *loop,
                            struct journal *journal,
                            struct jobtable *jobs,
                            const struct trust *trust)
{
    struct views *v = calloc (1, sizeof (*v));

    if (!v)
        return NULL;
    v->loop = loop;
    v->journal = journal;
    v->jobs = jobs;
    v->trust = trust;
    ev_idle_init (&v->w, views_cb);
    v->w.data = v;
    v->privileged.tail = &v->privileged.head;
    v->users.tail = &v->users.head;
    return v;
}

/* Queue jv (taken) for views_cb. */
static void views_add (struct views *v, struct jobsview *jv, bool privileged)
{
    viewq_push (privileged ? &v->privileged : &v->users, jv);
    ev_idle_start (v->loop, &v->w);
}

static void viewq_conn_gone (struct viewq *q, struct conn *c)
{
    for (struct jobsview *jv = q->head; jv; jv = jv->next)
        if (jv->c == c)
            jv->c = NULL;
}

void views_conn_gone (struct views *v, struct conn *c)
{
    if (v) {
        viewq_conn_gone (&v->privileged, c);
        viewq_conn_gone (&v->users, c);
    }
}

/* Requests of q still to answer: all (uid -1), or uid's. */
static size_t viewq_count (const struct viewq *q, long long uid)
{
    size_t n = 0;
    for (const struct jobsview *jv = q->head; jv; jv = jv->next)
        n += jv->c != NULL && (uid < 0 || jv->sender == (uid_t)uid);
    return n;
}

size_t views_pending (const struct views *v)
{
    return v ? viewq_count (&v->privileged, -1) + viewq_count (&v->users, -1)
             : 0;
}

void views_destroy (struct views *v)
{
    struct jobsview *jv;

    if (!v)
        return;
    int saved = errno;
    ev_idle_stop (v->loop, &v->w);
    while ((jv = viewq_pop (&v->privileged)))
        jobsview_free (jv);
    while ((jv = viewq_pop (&v->users)))
        jobsview_free (jv);
    free (v);
    errno = saved;
}

void views_req_jobs (struct views *v,
                     struct conn *c,
                     int64_t matchtag,
                     json_t *payload)
{
    json_t *all = json_object_get (payload, "all");
    json_t *ids = json_object_get (payload, "ids");
    struct jobsview *jv = NULL;
    struct cairn_error err = {{0}};
    struct journal_jobinfo info;
    size_t i;
    json_t *idv;

    if (all && !json_is_boolean (all)) {
        conn_respond_error (c, matchtag, EPROTO, "all: must be true or false");
        return;
    }
    if (ids && jobs_ids (c, matchtag, ids) < 0)
        return;
    if (!trust_privileged (v->trust, conn_uid (c)) &&
        viewq_count (&v->users, conn_uid (c)) >= VIEWS_USER_MAX) {
        conn_respond_error (c, matchtag, EAGAIN,
                            "jobs: uid %u has %d jobs requests being answered "
                            "already: wait for their answers",
                            (unsigned)conn_uid (c), VIEWS_USER_MAX);
        return;
    }
    if (!(jv = calloc (1, sizeof (*jv))) || !(jv->jobs = json_array ()) ||
        (ids && !(jv->missing = json_array ())))
        goto nomem;
    jv->c = c;
    jv->matchtag = matchtag;
    jv->sender = conn_uid (c);
    if (ids) {
        json_array_foreach (ids, i, idv)
        {
            uint64_t id = (uint64_t)json_integer_value (idv);
            if (journal_job_info (v->journal, id, &info) < 0) {
                if (errno != ENOENT)
                    goto readerr;
                if (json_array_append (jv->missing, idv) < 0)
                    goto nomem;
                continue;
            }
            if (joblist_cb (&info, &jv->l) < 0)
                goto nomem;
        }
    } else {
        /* Every active job, and of the finished ones the newest only (ids
         * grow with time), walked from the newest end: anyone may ask, and
         * a journal can hold a million finished jobs. */
        struct journal_stats st;
        if (journal_foreach_job (v->journal, true, joblist_cb, &jv->l, &err) <
            0)
            goto readerr;
        if (json_is_true (all)) {
            if (journal_foreach_job_newest (v->journal, donelist_cb, &jv->l,
                                            &err) < 0 ||
                journal_stats (v->journal, &st) < 0)
                goto readerr;
            if (st.njobs - st.nactive > jv->l.ndone)
                jv->skip = (json_int_t)(st.njobs - st.nactive - jv->l.ndone);
            jv->truncated = true;
            qsort (jv->l.v, jv->l.n, sizeof (*jv->l.v), by_id);
        }
    }
    if (jv->l.n == 0) {
        jobsview_respond (jv, 0, NULL);
        jobsview_free (jv);
        return;
    }
    views_add (v, jv, trust_privileged (v->trust, jv->sender));
    return;
readerr:
    if (errno == ENOMEM)
        goto nomem;
    conn_respond_error (c, matchtag, errno, "jobs: cannot read the journal: %s",
                        err.text[0] ? err.text : strerror (errno));
    jobsview_free (jv);
    return;
nomem:
    conn_respond_error (c, matchtag, ENOMEM, "jobs: out of memory");
    jobsview_free (jv);
}

/* ---- job-events ---- */

struct page {
    json_t *events;
    size_t bytes;
};

static int
page_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct page *p = arg;
    json_t *s;

    if (p->bytes > 0 && p->bytes + len > JOB_EVENTS_MAX_BYTES)
        return 1; /* the rest in the next request */
    /* a line that is not UTF-8 (a damaged journal) is sent as null */
    if (!(s = json_stringn (line, len)))
        s = json_null ();
    if (json_array_append_new (p->events, s) < 0) {
        errno = ENOMEM;
        return -1;
    }
    p->bytes += len;
    return 0;
}

void views_req_job_events (struct views *v,
                           struct conn *c,
                           int64_t matchtag,
                           json_t *payload)
{
    json_t *o = json_object_get (payload, "id");
    json_t *f = json_object_get (payload, "from");
    struct page p = {.events = json_array ()};
    struct journal_jobinfo info;
    struct cairn_error err = {{0}};
    json_int_t from = 0;
    uint64_t id;

    if (!o) {
        conn_respond_error (c, matchtag, EPROTO, "id: missing");
        goto done;
    }
    if (!json_is_integer (o) || json_integer_value (o) < 0) {
        conn_respond_error (c, matchtag, EPROTO,
                            "id: must be a non-negative integer");
        goto done;
    }
    id = (uint64_t)json_integer_value (o);
    if (f && (!json_is_integer (f) || (from = json_integer_value (f)) < 0 ||
              from > UINT32_MAX)) {
        conn_respond_error (c, matchtag, EPROTO,
                            "from: must be an integer from 0 to %u",
                            (unsigned)UINT32_MAX);
        goto done;
    }
    if (!p.events) {
        conn_respond_error (c, matchtag, ENOMEM, "job-events: out of memory");
        goto done;
    }
    if (journal_job_info (v->journal, id, &info) < 0) {
        if (errno == ENOENT)
            conn_respond_error (c, matchtag, ENOENT, "job %ju not found",
                                (uintmax_t)id);
        else
            conn_respond_error (c, matchtag, errno,
                                "job %ju: cannot read the journal: %s",
                                (uintmax_t)id, strerror (errno));
        goto done;
    }
    /* info and the events are read between two commits of this loop: the
     * events counted are the events read */
    if (journal_read_job (v->journal, id, (uint32_t)from, page_cb, &p, &err) <
        0) {
        conn_respond_error (c, matchtag, errno,
                            "job %ju: cannot read the journal: %s",
                            (uintmax_t)id, err.text);
        goto done;
    }
    json_t *r = json_pack ("{s:I s:I s:O s:I s:b}", "id", (json_int_t)id,
                           "from", from, "events", p.events, "nevents",
                           (json_int_t)info.nevents, "active", info.active);
    if (!r) {
        conn_respond_error (c, matchtag, ENOMEM, "job-events: out of memory");
        goto done;
    }
    conn_respond (c, matchtag, r);
    json_decref (r);
done:
    json_decref (p.events);
}
