/* reportq.c - see reportq.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flux/cairnsvc.h"
#include "flux/reportq.h"

/* A REPORT for rank 0, kept until rank 0 has it. */
struct report {
    struct reportq *q;
    json_t *report;
    flux_future_t *f; /* cairn.node-report in flight, else NULL: waiting */
    struct report *prev, *next;
};

struct reportq {
    flux_t *h;
    uint32_t rank;
    struct report *head, *tail; /* oldest first */
    size_t nreports;
    size_t ndropped;      /* past REPORTQ_MAX, in all */
    double failed_logged; /* when a failure was last logged */
    struct report *probe; /* the one tried after a failure, in flight */
    bool failing;         /* rank 0 did not take the last one sent */
    flux_watcher_t *timer;
};

static void report_send (struct report *r);

static void report_unlink (struct report *r)
{
    struct reportq *q = r->q;

    if (r->prev)
        r->prev->next = r->next;
    else
        q->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q->tail = r->prev;
}

static void report_remove (struct report *r)
{
    struct reportq *q = r->q;

    report_unlink (r);
    if (q->probe == r)
        q->probe = NULL;
    q->nreports--;
    flux_future_destroy (r->f);
    json_decref (r->report);
    free (r);
}

static void report_append (struct reportq *q, struct report *r)
{
    r->prev = q->tail;
    r->next = NULL;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
}

/* An error that rank 0 would give again for the same report. */
static bool refused_for_good (int errnum)
{
    return errnum == EPROTO || errnum == EINVAL || errnum == ENOENT ||
           errnum == EPERM || errnum == EEXIST;
}

static void retry_arm (struct reportq *q)
{
    if (q->probe || flux_watcher_is_active (q->timer))
        return;
    flux_timer_watcher_reset (q->timer, REPORTQ_RETRY, 0);
    flux_watcher_start (q->timer);
}

/* Send every report that waits. */
static void reports_flush (struct reportq *q)
{
    struct report *r = q->head;
    while (r) {
        struct report *next = r->next; /* r may go */
        if (!r->f)
            report_send (r);
        r = next;
    }
}

/* r's RPC failed (why: borrowed from r->f, or NULL). */
static void report_failed (struct report *r, int errnum, const char *why)
{
    struct reportq *q = r->q;
    const char *execid = json_string_value (json_object_get (r->report,
                                                             "execid"));

    if (!why)
        why = strerror (errnum);
    if (refused_for_good (errnum)) {
        flux_log (q->h, LOG_ERR, "rank 0 refused a report (execid %s): %s; "
                  "dropped (this node's cairnd keeps it until acknowledged)",
                  execid ? execid : "?", why);
        report_remove (r);
        if (q->failing)
            retry_arm (q);
        return;
    }
    /* once when rank 0 stops taking them, then at most once a minute */
    double now = flux_reactor_now (flux_get_reactor (q->h));
    if (!q->failing || now - q->failed_logged >= 60) {
        flux_log (q->h, q->failing ? LOG_DEBUG : LOG_INFO,
                  "cairn.node-report to rank 0: %s; %zu report(s) kept, "
                  "trying again every %gs", why, q->nreports,
                  REPORTQ_RETRY);
        q->failed_logged = now;
    }
    q->failing = true;
    flux_future_destroy (r->f); /* why is gone with it */
    r->f = NULL;
    if (q->probe == r) { /* to the back: no one report holds the others */
        q->probe = NULL;
        report_unlink (r);
        report_append (q, r);
    }
    retry_arm (q);
}

static void report_cb (flux_future_t *f, void *arg)
{
    struct report *r = arg;
    struct reportq *q = r->q;

    if (flux_rpc_get (f, NULL) < 0) {
        int e = errno;
        report_failed (r, e, flux_future_error_string (f));
        return;
    }
    report_remove (r);
    if (q->failing) {
        flux_log (q->h, LOG_INFO, "rank 0 takes reports again (%zu more "
                                  "kept, sent now)", q->nreports);
        q->failing = false;
        flux_watcher_stop (q->timer);
        reports_flush (q);
    }
}

static void report_send (struct report *r)
{
    struct reportq *q = r->q;

    if (!(r->f = flux_rpc_pack (q->h, CAIRNSVC_NAME ".node-report", 0, 0,
                                "{s:I s:O}", "rank", (json_int_t)q->rank,
                                "report", r->report)) ||
        flux_future_then (r->f, -1, report_cb, r) < 0)
        report_failed (r, errno, NULL);
}

/* Try the oldest report that waits. */
static void timer_cb (flux_reactor_t *rr,
                      flux_watcher_t *w,
                      int revents,
                      void *arg)
{
    struct reportq *q = arg;

    for (struct report *r = q->head; r; r = r->next) {
        if (!r->f) {
            q->probe = r;
            report_send (r);
            return;
        }
    }
}

void reportq_add (struct reportq *q, json_t *report)
{
    struct report *r;

    if (q->nreports >= REPORTQ_MAX) {
        if (q->ndropped++ % 1000 == 0)
            flux_log (q->h, LOG_WARNING, "%d reports kept for rank 0: "
                      "dropping the oldest (%zu so far; this node's cairnd "
                      "keeps them until acknowledged)", REPORTQ_MAX,
                      q->ndropped);
        struct report *old = q->head;
        while (old && old->f) /* rather one that waits: no RPC to drop */
            old = old->next;
        report_remove (old ? old : q->head);
    }
    if (!(r = calloc (1, sizeof (*r)))) {
        flux_log_error (q->h, "report for rank 0 dropped");
        return;
    }
    r->q = q;
    r->report = json_incref (report);
    report_append (q, r);
    q->nreports++;
    if (q->failing)
        retry_arm (q); /* waits for the next try */
    else
        report_send (r);
}

void reportq_restart (struct reportq *q)
{
    struct report *r = q->head;
    while (r) {
        struct report *next = r->next;
        if (!r->f)
            report_remove (r);
        r = next;
    }
    q->failing = false; /* what comes now is tried at once */
    flux_watcher_stop (q->timer);
}

struct reportq *reportq_create (flux_t *h, uint32_t rank)
{
    struct reportq *q = calloc (1, sizeof (*q));

    if (!q)
        return NULL;
    q->h = h;
    q->rank = rank;
    if (!(q->timer = flux_timer_watcher_create (flux_get_reactor (h), 0, 0,
                                                timer_cb, q))) {
        free (q);
        errno = ENOMEM;
        return NULL;
    }
    return q;
}

void reportq_destroy (struct reportq *q)
{
    if (!q)
        return;
    int saved = errno;
    flux_watcher_destroy (q->timer);
    while (q->head)
        report_remove (q->head);
    free (q);
    errno = saved;
}
