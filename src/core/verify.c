/* verify.c - see verify.h
 *
 * The checks keep their own small record of the job (ranks released,
 * processes and where each was introduced and ended) next to a real fold
 * through job_apply(). The fold alone would catch some faults, but would
 * describe them in its own terms ("unknown execid"); the record lets each
 * problem name the invariant it breaks and the events involved, which is
 * what a person reading `cairn verify` needs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eventlog.h"
#include "core/idset.h"
#include "core/job.h"
#include "core/verify.h"

struct vproc {
    char execid[EXECID_LEN + 1];
    char phase[16];
    struct idset *ranks; /* NULL if the intent's ranks did not decode */
    int64_t seq_intent;
    int64_t seq_spawn; /* -1 until spawned */
    int64_t seq_end;   /* -1 until it ended */
};

struct vstate {
    json_t *problems;
    int nproblems;
    int64_t seq;      /* of the event being checked */
    int seq_problems; /* problems reported for it */
    bool nomem;

    struct job *job;
    struct idset *R; /* R's ranks, once accepted */
    struct idset *released;
    int64_t seq_accept, seq_start, seq_finish, seq_final, seq_clean;
    int64_t seq_prolog_start, seq_prolog_finish;
    bool fatal;

    struct vproc *procs;
    size_t nprocs, procs_alloc;
    json_t *procidx; /* execid -> index in procs */
};

static void problem (struct vstate *vs, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void problem (struct vstate *vs, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    json_t *o;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (!(o = json_pack ("{s:I s:s}", "seq", (json_int_t)vs->seq, "problem",
                         text)) ||
        json_array_append_new (vs->problems, o) < 0) {
        vs->nomem = true;
        return;
    }
    vs->nproblems++;
    vs->seq_problems++;
}

/* The ranks of ctx[key] as a set, or NULL (the fold reports why). */
static struct idset *ctx_ranks (json_t *ctx, const char *key)
{
    const char *s = json_string_value (json_object_get (ctx, key));
    return s && strcmp (s, "all") != 0 ? idset_decode (s, NULL) : NULL;
}

static char *encode (struct vstate *vs, const struct idset *s)
{
    char *str = idset_encode (s);
    if (!str)
        vs->nomem = true;
    return str;
}

static struct vproc *proc_get (struct vstate *vs, json_t *ctx)
{
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    json_t *i = execid ? json_object_get (vs->procidx, execid) : NULL;
    return i ? &vs->procs[json_integer_value (i)] : NULL;
}

/* ---- checks, one per event name ---- */

typedef void (*check_f) (struct vstate *vs, const char *name, json_t *ctx);

static void check_accept (struct vstate *vs, const char *name, json_t *ctx)
{
    if (vs->seq_accept >= 0)
        problem (vs, "second accept (the first is at seq %jd)",
                 (intmax_t)vs->seq_accept);
}

static void
check_prolog_start (struct vstate *vs, const char *name, json_t *ctx)
{
    if (vs->seq_prolog_start < 0)
        vs->seq_prolog_start = vs->seq;
}

static void
check_prolog_finish (struct vstate *vs, const char *name, json_t *ctx)
{
    json_int_t status = json_integer_value (json_object_get (ctx, "status"));

    if (vs->seq_prolog_start < 0)
        problem (vs, "prolog-finish without prolog-start");
    else if (status != 0 && !vs->fatal)
        problem (vs,
                 "prolog-finish reports a failed prolog (status %jd) but no "
                 "fatal exception came before it",
                 (intmax_t)status);
    if (vs->seq_prolog_finish < 0)
        vs->seq_prolog_finish = vs->seq;
}

static void check_start (struct vstate *vs, const char *name, json_t *ctx)
{
    if (vs->seq_start >= 0)
        problem (vs, "second start (the first is at seq %jd)",
                 (intmax_t)vs->seq_start);
    else if (vs->seq_prolog_start >= 0 && vs->seq_prolog_finish < 0)
        problem (vs, "start before prolog-finish (prolog-start is at seq %jd)",
                 (intmax_t)vs->seq_prolog_start);
    if (vs->seq_start < 0)
        vs->seq_start = vs->seq;
}

static void check_finish (struct vstate *vs, const char *name, json_t *ctx)
{
    if (vs->seq_finish >= 0)
        problem (vs, "second finish (the first is at seq %jd)",
                 (intmax_t)vs->seq_finish);
    else if (vs->seq_start < 0)
        problem (vs, "finish before start");
    else if (vs->seq_final >= 0)
        problem (vs, "finish after the final release (seq %jd)",
                 (intmax_t)vs->seq_final);
    if (vs->seq_finish < 0)
        vs->seq_finish = vs->seq;
}

static void check_exception (struct vstate *vs, const char *name, json_t *ctx)
{
    json_t *sev = json_object_get (ctx, "severity");
    if (json_is_integer (sev) && json_integer_value (sev) == 0)
        vs->fatal = true;
}

/* ranks must be a subset of R; says so with what (e.g. "released"). */
static bool
in_R (struct vstate *vs, const struct idset *ranks, const char *what)
{
    if (idset_is_subset (ranks, vs->R))
        return true;
    struct idset *out = idset_copy (ranks);
    char *os = NULL, *rs = NULL;
    if (out && idset_subtract (out, vs->R) == 0 && (os = encode (vs, out)) &&
        (rs = encode (vs, vs->R)))
        problem (vs, "%s rank(s) %s not in R (ranks %s)", what, os, rs);
    else
        vs->nomem = true;
    idset_destroy (out);
    free (os);
    free (rs);
    return false;
}

/* Report the first process not ended that works for one of ranks. */
static void check_no_live_proc (struct vstate *vs, const struct idset *ranks)
{
    for (size_t i = 0; i < vs->nprocs; i++) {
        struct vproc *p = &vs->procs[i];
        struct idset *both;
        char *bs;

        if (p->seq_end >= 0 || !p->ranks)
            continue;
        if (!(both = idset_intersect (p->ranks, ranks))) {
            vs->nomem = true;
            return;
        }
        if (!idset_empty (both) && (bs = encode (vs, both))) {
            problem (vs,
                     "rank(s) %s released while process %s (%s, intent at "
                     "seq %jd) has not ended",
                     bs, p->execid, p->phase, (intmax_t)p->seq_intent);
            free (bs);
            idset_destroy (both);
            return;
        }
        idset_destroy (both);
    }
}

static void check_release (struct vstate *vs, const char *name, json_t *ctx)
{
    struct idset *ranks = ctx_ranks (ctx, "ranks");
    struct idset *twice = NULL;
    char *ts = NULL;

    if (vs->seq_final >= 0)
        problem (vs, "release after the final release (seq %jd)",
                 (intmax_t)vs->seq_final);
    if (ranks) {
        if (!(twice = idset_intersect (ranks, vs->released)))
            vs->nomem = true;
        else if (!idset_empty (twice) && (ts = encode (vs, twice)))
            problem (vs, "rank(s) %s released twice", ts);
        if (in_R (vs, ranks, "released"))
            check_no_live_proc (vs, ranks);
        if (idset_add (vs->released, ranks) < 0)
            vs->nomem = true;
    }
    if (json_is_true (json_object_get (ctx, "final")) && vs->seq_final < 0)
        vs->seq_final = vs->seq;
    idset_destroy (ranks);
    idset_destroy (twice);
    free (ts);
}

static void check_drain (struct vstate *vs, const char *name, json_t *ctx)
{
    struct idset *ranks = ctx_ranks (ctx, "ranks");
    if (ranks)
        (void)in_R (vs, ranks, "drained");
    idset_destroy (ranks);
}

static void check_clean (struct vstate *vs, const char *name, json_t *ctx)
{
    vs->seq_clean = vs->seq;
}

static void check_proc_intent (struct vstate *vs, const char *name, json_t *ctx)
{
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    const char *phase = json_string_value (json_object_get (ctx, "phase"));
    struct vproc *p;

    if (!execid || strlen (execid) != EXECID_LEN)
        return; /* the fold says what is wrong */
    if ((p = proc_get (vs, ctx))) {
        problem (vs,
                 "proc-intent for execid %s, which seq %jd introduced "
                 "already",
                 execid, (intmax_t)p->seq_intent);
        return;
    }
    if (vs->nprocs == vs->procs_alloc) {
        size_t n = vs->procs_alloc ? vs->procs_alloc * 2 : 8;
        struct vproc *np = realloc (vs->procs, n * sizeof (*np));
        if (!np) {
            vs->nomem = true;
            return;
        }
        vs->procs = np;
        vs->procs_alloc = n;
    }
    p = &vs->procs[vs->nprocs];
    memset (p, 0, sizeof (*p));
    memcpy (p->execid, execid, EXECID_LEN + 1);
    snprintf (p->phase, sizeof (p->phase), "%s", phase ? phase : "?");
    p->ranks = ctx_ranks (ctx, "ranks");
    p->seq_intent = vs->seq;
    p->seq_spawn = p->seq_end = -1;
    if (json_object_set_new (vs->procidx, execid, json_integer (vs->nprocs)) <
        0) {
        idset_destroy (p->ranks);
        vs->nomem = true;
        return;
    }
    vs->nprocs++;
}

/* proc-spawn, proc-unstarted, proc-signal and the three ends. */
static void check_proc (struct vstate *vs, const char *name, json_t *ctx)
{
    const char *execid = json_string_value (json_object_get (ctx, "execid"));
    struct vproc *p = proc_get (vs, ctx);

    if (!p) {
        problem (vs, "%s for execid %s with no proc-intent", name,
                 execid ? execid : "(none)");
        return;
    }
    switch (job_event_of (name)) {
    case JOB_EV_PROC_SPAWN:
        if (p->seq_spawn >= 0)
            problem (vs, "process %s spawned twice (first at seq %jd)",
                     p->execid, (intmax_t)p->seq_spawn);
        else if (p->seq_end >= 0)
            problem (vs, "proc-spawn for process %s after it ended (seq %jd)",
                     p->execid, (intmax_t)p->seq_end);
        else
            p->seq_spawn = vs->seq;
        break;
    case JOB_EV_PROC_UNSTARTED:
        if (p->seq_spawn < 0 || p->seq_end >= 0)
            problem (vs, "proc-unstarted for process %s that is not running",
                     p->execid);
        else
            p->seq_spawn = -1; /* an intent again: its next spawn is fine */
        break;
    case JOB_EV_PROC_SIGNAL:
        if (p->seq_end >= 0)
            problem (vs, "proc-signal for process %s after it ended (seq %jd)",
                     p->execid, (intmax_t)p->seq_end);
        break;
    default: /* proc-exit, proc-lost, proc-fail */
        if (p->seq_end >= 0)
            problem (vs, "process %s ended twice (first at seq %jd)", p->execid,
                     (intmax_t)p->seq_end);
        else
            p->seq_end = vs->seq;
        break;
    }
}

/* The events not named here have no check of their own. */
static const check_f checks[JOB_EV_COUNT] = {
    [JOB_EV_ACCEPT] = check_accept,
    [JOB_EV_PROLOG_START] = check_prolog_start,
    [JOB_EV_PROLOG_FINISH] = check_prolog_finish,
    [JOB_EV_START] = check_start,
    [JOB_EV_FINISH] = check_finish,
    [JOB_EV_EXCEPTION] = check_exception,
    [JOB_EV_RELEASE] = check_release,
    [JOB_EV_DRAIN] = check_drain,
    [JOB_EV_CLEAN] = check_clean,
    [JOB_EV_PROC_INTENT] = check_proc_intent,
    [JOB_EV_PROC_SPAWN] = check_proc,
    [JOB_EV_PROC_UNSTARTED] = check_proc,
    [JOB_EV_PROC_SIGNAL] = check_proc,
    [JOB_EV_PROC_EXIT] = check_proc,
    [JOB_EV_PROC_LOST] = check_proc,
    [JOB_EV_PROC_FAIL] = check_proc,
};

static void check_event (struct vstate *vs,
                         enum job_event ev,
                         const char *name,
                         json_t *ctx)
{
    if (ev != JOB_EV_OTHER && checks[ev])
        checks[ev](vs, name, ctx);
}

/* What a clean job must have, reported at its clean event. */
static void check_end (struct vstate *vs)
{
    if (vs->seq_clean < 0)
        return;
    vs->seq = vs->seq_clean;
    if (!idset_is_subset (vs->R, vs->released)) {
        struct idset *left = idset_copy (vs->R);
        char *ls = NULL;
        if (left && idset_subtract (left, vs->released) == 0 &&
            (ls = encode (vs, left)))
            problem (vs, "clean, but rank(s) %s were never released", ls);
        idset_destroy (left);
        free (ls);
    }
    if (vs->seq_final < 0)
        problem (vs, "clean without a final release");
    if (vs->seq_start >= 0 && vs->seq_finish < 0)
        problem (vs, "clean, but the job started (seq %jd) and never finished",
                 (intmax_t)vs->seq_start);
    for (size_t i = 0; i < vs->nprocs; i++) {
        struct vproc *p = &vs->procs[i];
        if (p->seq_end < 0)
            problem (vs,
                     "clean, but process %s (%s, intent at seq %jd) never "
                     "ended",
                     p->execid, p->phase, (intmax_t)p->seq_intent);
    }
}

/* Element i of events: its entry and sequence number. A wrapper without a
 * usable seq gets *seq = -1. */
static const json_t *element (
    uint64_t id, const json_t *events, size_t i, int64_t *seq, bool *wrong_id)
{
    const json_t *el = json_array_get (events, i);
    const json_t *entry = json_object_get (el, "event");
    const json_t *jid = json_object_get (el, "id");

    *wrong_id = false;
    if (!entry) {
        *seq = (int64_t)i;
        return el;
    }
    json_t *s = json_object_get (el, "seq");
    *seq = json_is_integer (s) && json_integer_value (s) >= 0
               ? json_integer_value (s)
               : -1;
    if (jid &&
        (!json_is_integer (jid) || (uint64_t)json_integer_value (jid) != id))
        *wrong_id = true;
    return entry;
}

static void vstate_free (struct vstate *vs)
{
    for (size_t i = 0; i < vs->nprocs; i++)
        idset_destroy (vs->procs[i].ranks);
    free (vs->procs);
    json_decref (vs->procidx);
    idset_destroy (vs->R);
    idset_destroy (vs->released);
    job_destroy (vs->job);
}

/* Sequence numbers: 0, 1, 2... as read. Returns false for an event that
 * cannot be placed in the job's history (its seq repeats or goes back):
 * folding it again would report its consequences as more faults. */
static bool check_seq (struct vstate *vs, int64_t seq, int64_t *prev, size_t i)
{
    if (seq < 0) {
        vs->seq = ++*prev; /* assume it is in its place */
        problem (vs, "element %zu of the list has no valid seq", i);
        return true;
    }
    vs->seq = seq;
    if (seq <= *prev) {
        problem (vs, "seq %jd repeats or goes back (it follows seq %jd)",
                 (intmax_t)seq, (intmax_t)*prev);
        return false;
    }
    if (seq > *prev + 1) {
        if (*prev < 0)
            problem (vs,
                     "gap: the first event has seq %jd (%jd event(s) "
                     "missing before it)",
                     (intmax_t)seq, (intmax_t)seq);
        else
            problem (vs,
                     "gap: seq %jd follows seq %jd (%jd event(s) "
                     "missing)",
                     (intmax_t)seq, (intmax_t)*prev,
                     (intmax_t)(seq - *prev - 1));
    }
    *prev = seq;
    return true;
}

int verify_job (uint64_t id, const json_t *events, json_t *problems)
{
    struct vstate vs = {.problems = problems,
                        .seq_accept = -1,
                        .seq_start = -1,
                        .seq_finish = -1,
                        .seq_final = -1,
                        .seq_clean = -1,
                        .seq_prolog_start = -1,
                        .seq_prolog_finish = -1};
    int64_t prev = -1;

    if (!json_is_array (events) || !json_is_array (problems)) {
        errno = EINVAL;
        return -1;
    }
    if (!(vs.job = job_create (id)) || !(vs.released = idset_create ()) ||
        !(vs.procidx = json_object ()))
        goto nomem;
    for (size_t i = 0; i < json_array_size (events) && !vs.nomem; i++) {
        struct cairn_error err = {{0}};
        const char *name;
        json_t *ctx;
        bool wrong_id;
        int64_t seq;
        const json_t *entry = element (id, events, i, &seq, &wrong_id);

        vs.seq_problems = 0;
        if (!check_seq (&vs, seq, &prev, i))
            continue;
        if (wrong_id)
            problem (&vs, "event of another job in the list of job %ju",
                     (uintmax_t)id);
        if (eventlog_entry_parse (entry, NULL, &name, &ctx) < 0) {
            problem (&vs, "malformed event (not an RFC 18 entry)");
            continue;
        }
        enum job_event ev = job_event_of (name);
        /* a node's late report is the one record after clean (job.h) */
        if (vs.seq_clean >= 0 && ev != JOB_EV_PROC_LATE) {
            problem (&vs, "%s after clean (seq %jd): clean must be last", name,
                     (intmax_t)vs.seq_clean);
            continue;
        }
        if (vs.seq_accept < 0 && ev != JOB_EV_ACCEPT) {
            problem (&vs,
                     "first event is %s, not accept: nothing can be "
                     "checked",
                     name);
            break;
        }
        check_event (&vs, ev, name, ctx);
        if (job_apply (vs.job, entry, &err) < 0) {
            if (vs.seq_problems == 0)
                problem (&vs, "job_apply refuses %s: %s", name, err.text);
            if (vs.seq_accept < 0)
                break; /* no R, no fold: nothing more to say */
        } else if (vs.seq_accept < 0 && ev == JOB_EV_ACCEPT) {
            vs.seq_accept = vs.seq;
            if (!(vs.R = idset_copy (job_ranks (vs.job))))
                goto nomem;
        }
    }
    if (!vs.nomem)
        check_end (&vs);
    if (vs.nomem)
        goto nomem;
    vstate_free (&vs);
    return vs.nproblems;
nomem:
    vstate_free (&vs);
    errno = ENOMEM;
    return -1;
}

int verify_record (uint32_t nevents,
                   bool active,
                   const json_t *events,
                   json_t *problems)
{
    struct vstate vs = {.problems = problems, .seq = -1};
    size_t n = json_array_size (events);
    const char *name = NULL;
    bool clean = false;

    if (!json_is_array (events) || !json_is_array (problems)) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < n && !clean; i++) {
        const json_t *el = json_array_get (events, i);
        const json_t *entry = json_object_get (el, "event");
        if (eventlog_entry_parse (entry ? entry : el, NULL, &name, NULL) == 0 &&
            strcmp (name, "clean") == 0)
            clean = true;
    }
    if (nevents != n)
        problem (&vs, "the job record counts %u events, but %zu were read",
                 (unsigned)nevents, n);
    if (active && clean)
        problem (&vs, "the job record marks the job active, but it has a "
                      "clean event");
    else if (!active && !clean)
        problem (&vs, "the job record marks the job done, but it has no "
                      "clean event");
    if (vs.nomem) {
        errno = ENOMEM;
        return -1;
    }
    return vs.nproblems;
}
