/* crashtest_check.c - invariants of one job's journal and of what its
 * client was told.
 *
 * Every check reports a violation as one line that names the job, the
 * event (by its index in the job's eventlog) and what was expected, so a
 * failure can be read without opening the journal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/eventlog.h"
#include "core/idset.h"
#include "core/job.h"
#include "core/streamtype.h"
#include "core/verify.h"
#include "crashtest/crashtest.h"

/* ---- the run log ---- */

int ct_runlog_add_line (struct ct_runlog *rl, const char *line)
{
    struct ct_rlentry e = {0};
    char phase[16], what[16];
    unsigned long long job;
    int pid, code = 0;
    int n = sscanf (line, "%15s %llu %15s %39s %d %15s %d", phase, &job, e.rank,
                    e.execid, &pid, what, &code);
    if (n < 6 || (e.phase = ct_phase_parse (phase)) < 0)
        return -1;
    e.job = job;
    e.pid = pid;
    if (strcmp (what, "end") == 0) {
        if (n < 7)
            return -1;
        e.end = true;
        e.code = code;
    } else if (strcmp (what, "start") != 0)
        return -1;
    if (rl->n == rl->alloc) {
        size_t na = rl->alloc ? rl->alloc * 2 : 64;
        struct ct_rlentry *v = realloc (rl->v, na * sizeof (*v));
        if (!v)
            return -1;
        rl->v = v;
        rl->alloc = na;
    }
    rl->v[rl->n++] = e;
    return 0;
}

int ct_runlog_poll (struct ct_runlog *rl, const char *path)
{
    FILE *f = fopen (path, "r");
    char buf[512];
    int added = 0;

    if (!f)
        return -1;
    if (fseek (f, rl->offset, SEEK_SET) < 0) {
        fclose (f);
        return -1;
    }
    while (fgets (buf, sizeof (buf), f)) {
        size_t len = strlen (buf);
        if (len == 0 || buf[len - 1] != '\n') {
            /* a line still being written: read it again next time */
            break;
        }
        rl->offset += (long)len;
        buf[len - 1] = '\0';
        if (ct_runlog_add_line (rl, buf) == 0)
            added++;
    }
    fclose (f);
    return added;
}

void ct_runlog_free (struct ct_runlog *rl)
{
    if (rl) {
        free (rl->v);
        memset (rl, 0, sizeof (*rl));
    }
}

/* ---- event helpers ---- */

static const char *ev_name (const json_t *e)
{
    const char *s = json_string_value (json_object_get (e, "name"));
    return s ? s : "";
}

/* The event e is, decoded once from its name (JOB_EV_OTHER: not
 * cairn's). */
static enum job_event ev_of (const json_t *e)
{
    return job_event_of (ev_name (e));
}

static json_t *ev_ctx (const json_t *e)
{
    return json_object_get (e, "context");
}

static const char *ev_str (const json_t *e, const char *key)
{
    const char *s = json_string_value (json_object_get (ev_ctx (e), key));
    return s ? s : "";
}

static struct idset *ev_ranks (const json_t *e)
{
    return idset_decode (ev_str (e, "ranks"), NULL);
}

static char *enc (const struct idset *s)
{
    char *str = s ? idset_encode (s) : NULL;
    return str ? str : strdup ("?");
}

/* The ranks of the process execid (from its proc-intent), or NULL. */
static struct idset *proc_ranks (const json_t *events, const char *execid)
{
    size_t i;
    json_t *e;
    json_array_foreach ((json_t *)events, i, e)
    {
        if (ev_of (e) == JOB_EV_PROC_INTENT &&
            strcmp (ev_str (e, "execid"), execid) == 0)
            return ev_ranks (e);
    }
    return NULL;
}

/* ---- the journal ---- */

static void check_fold (uint64_t id, const json_t *events, json_t *v)
{
    struct job *job = job_create (id);
    struct cairn_error err = {{0}};
    size_t i;
    json_t *e;

    if (!job)
        return;
    json_array_foreach ((json_t *)events, i, e)
    {
        if (job_apply (job, e, &err) < 0) {
            ct_addf (v, "job %ju: the fold rejects event %zu (%s): %s",
                     (uintmax_t)id, i, ev_name (e), err.text);
            job_destroy (job);
            return;
        }
    }
    if (job_state (job) != JOB_DONE)
        ct_addf (
            v, "job %ju never reached clean (state %s, last event %s)",
            (uintmax_t)id, job_state_name (job_state (job)),
            ev_name (json_array_get (events, json_array_size (events) - 1)));
    else if (!idset_equal (job_released (job), job_ranks (job))) {
        char *a = enc (job_released (job)), *b = enc (job_ranks (job));
        ct_addf (v, "job %ju: released ranks %s, but R has %s", (uintmax_t)id,
                 a, b);
        free (a);
        free (b);
    }
    for (size_t k = 0; k < job_nprocs (job); k++) {
        const struct job_proc *p = job_proc_at (job, k);
        if (p->state != PROC_DONE)
            ct_addf (v, "job %ju: process %s never ended in the journal",
                     (uintmax_t)id, p->execid);
    }
    job_destroy (job);
}

static void check_releases (uint64_t id, const json_t *events, json_t *v)
{
    struct idset *seen = idset_create ();
    ssize_t finish = -1, final = -1, clean = -1, start = -1;
    int nstart = 0, nfinish = 0, nfinal = 0;
    size_t i;
    json_t *e;

    json_array_foreach ((json_t *)events, i, e)
    {
        switch (ev_of (e)) {
        case JOB_EV_START:
            nstart++;
            start = (ssize_t)i;
            break;
        case JOB_EV_FINISH:
            nfinish++;
            finish = (ssize_t)i;
            break;
        case JOB_EV_CLEAN:
            clean = (ssize_t)i;
            break;
        case JOB_EV_RELEASE: {
            struct idset *r = ev_ranks (e);
            struct idset *both = r ? idset_intersect (r, seen) : NULL;
            if (!r)
                ct_addf (v, "job %ju: release %zu has bad ranks '%s'",
                         (uintmax_t)id, i, ev_str (e, "ranks"));
            else if (both && !idset_empty (both)) {
                char *s = enc (both);
                ct_addf (v, "job %ju: rank(s) %s released twice (event %zu)",
                         (uintmax_t)id, s, i);
                free (s);
            }
            if (final >= 0)
                ct_addf (v, "job %ju: release %zu after the final release",
                         (uintmax_t)id, i);
            if (json_is_true (json_object_get (ev_ctx (e), "final"))) {
                nfinal++;
                final = (ssize_t)i;
            }
            if (r)
                idset_add (seen, r);
            idset_destroy (r);
            idset_destroy (both);
            break;
        }
        default:
            break;
        }
    }
    if (nstart > 1 || nfinish > 1)
        ct_addf (v, "job %ju: %d start and %d finish events", (uintmax_t)id,
                 nstart, nfinish);
    if (nfinal != 1)
        ct_addf (v, "job %ju: %d final releases in the journal", (uintmax_t)id,
                 nfinal);
    if (finish >= 0 && final >= 0 && final < finish)
        ct_addf (v, "job %ju: final release (event %zd) before finish (%zd)",
                 (uintmax_t)id, final, finish);
    if (start >= 0 && finish >= 0 && finish < start)
        ct_addf (v, "job %ju: finish before start", (uintmax_t)id);
    if (clean >= 0 && final > clean)
        ct_addf (v, "job %ju: final release after clean", (uintmax_t)id);
    idset_destroy (seen);
}

/* Is some event after index `after` an ev and, if ranks is given,
 * covering those ranks? */
static bool later (const json_t *events,
                   size_t after,
                   enum job_event ev,
                   const struct idset *ranks)
{
    for (size_t i = after + 1; i < json_array_size (events); i++) {
        json_t *e = json_array_get (events, i);
        if (ev_of (e) != ev)
            continue;
        if (!ranks)
            return true;
        struct idset *r = ev_ranks (e);
        bool cover = r && idset_is_subset (ranks, r);
        idset_destroy (r);
        if (cover)
            return true;
    }
    return false;
}

/* A process is a failed epilog per its end event. */
/* Did the process's end (proc-exit or proc-fail) fail? An epilog's that
 * did drains its rank, and so does a per-rank prolog's (a node's health
 * check, job_decide.c, proc_ended). */
static bool failed_end (const json_t *e)
{
    switch (ev_of (e)) {
    case JOB_EV_PROC_FAIL:
        return true;
    case JOB_EV_PROC_EXIT:
        return json_integer_value (json_object_get (ev_ctx (e), "status")) != 0;
    default:
        return false;
    }
}

/* Did the prolog process execid, ending at event `end`, hang or die the
 * way that drains its node (job_decide.c, proc_ended): cairn signalled it
 * for a timeout, had to kill it, or it died of a signal cairn did not
 * send? */
static bool prolog_hung (const json_t *events, size_t end, const char *execid)
{
    bool terminating = false;
    for (size_t k = 0; k < end; k++) {
        json_t *p = json_array_get (events, k);
        const char *reason = ev_str (p, "reason");
        if (ev_of (p) != JOB_EV_PROC_SIGNAL ||
            strcmp (ev_str (p, "execid"), execid) != 0)
            continue;
        if (strcmp (reason, "timeout") == 0 ||
            json_is_true (json_object_get (ev_ctx (p), "kill")))
            return true;
        if (strcmp (reason, "request") != 0)
            terminating = true;
    }
    json_t *e = json_array_get (events, end);
    json_t *st = json_object_get (ev_ctx (e), "status");
    int status = (int)json_integer_value (st);
    return ev_of (e) == JOB_EV_PROC_EXIT && st && WIFSIGNALED (status) &&
           !terminating;
}

static void check_losses (uint64_t id, const json_t *events, json_t *v)
{
    struct idset *explained = idset_create ();
    json_t *phase_of = json_object ();
    size_t i;
    json_t *e;

    json_array_foreach ((json_t *)events, i, e)
    {
        enum job_event ev = ev_of (e);
        const char *execid = ev_str (e, "execid");
        if (ev == JOB_EV_PROC_INTENT) /* its phase decoded once, here */
            json_object_set_new (
                phase_of, execid,
                json_integer (ct_phase_parse (ev_str (e, "phase"))));
        bool lost = ev == JOB_EV_PROC_LOST;
        json_t *jph = json_object_get (phase_of, execid);
        int ph = jph ? (int)json_integer_value (jph) : -1;
        bool epilog = ph == CT_EPILOG;
        bool prolog_failed = ph == CT_PROLOG && failed_end (e);
        bool hung = ph == CT_PROLOG &&
                    (ev == JOB_EV_PROC_EXIT || ev == JOB_EV_PROC_FAIL) &&
                    prolog_hung (events, i, execid);
        if (lost || hung || prolog_failed || (epilog && failed_end (e))) {
            struct idset *r = proc_ranks (events, execid);
            if (r)
                idset_add (explained, r);
            if (lost && r &&
                (!later (events, i, JOB_EV_DRAIN, r) ||
                 !later (events, i, JOB_EV_EXCEPTION, NULL))) {
                char *s = enc (r);
                ct_addf (v,
                         "job %ju: process %s (ranks %s) was lost (event "
                         "%zu) without a later exception and drain",
                         (uintmax_t)id, execid, s, i);
                free (s);
            }
            idset_destroy (r);
        } else if (ev == JOB_EV_TOLERATE) {
            struct idset *r = ev_ranks (e);
            if (r)
                idset_add (explained, r);
            idset_destroy (r);
        } else if (ev == JOB_EV_DRAIN) {
            struct idset *r = ev_ranks (e);
            if (!r || !idset_is_subset (r, explained)) {
                ct_addf (v,
                         "job %ju: drain of %s (event %zu) without a lost "
                         "process, failed or hung prolog, failed epilog or "
                         "tolerated failure: %s",
                         (uintmax_t)id, ev_str (e, "ranks"), i,
                         ev_str (e, "reason"));
            }
            idset_destroy (r);
        } else if (ev == JOB_EV_PROC_SIGNAL) {
            /* signals go only to processes known to run; an intent whose
             * shim ended before starting the command (proc-unstarted) is
             * an intent again, spawned anew */
            bool spawned = false, ended = false;
            for (size_t k = 0; k < i; k++) {
                json_t *p = json_array_get (events, k);
                const char *pname = ev_name (p);
                if (strcmp (ev_str (p, "execid"), execid) != 0)
                    continue;
                switch (job_event_of (pname)) {
                case JOB_EV_PROC_SPAWN:
                    spawned = true;
                    break;
                case JOB_EV_PROC_UNSTARTED:
                    spawned = false;
                    break;
                case JOB_EV_PROC_SIGNAL:
                case JOB_EV_PROC_INTENT:
                    break;
                default:
                    /* any other proc- name, the table's or not */
                    if (strncmp (pname, "proc-", 5) == 0)
                        ended = true;
                    break;
                }
            }
            if (!spawned || ended)
                ct_addf (v,
                         "job %ju: signal (event %zu) for process %s that "
                         "%s",
                         (uintmax_t)id, i, execid,
                         ended ? "had ended" : "was never spawned");
        }
    }
    idset_destroy (explained);
    json_decref (phase_of);
}

void ct_check_journal (uint64_t id, const json_t *events, json_t *violations)
{
    if (json_array_size (events) == 0) {
        ct_addf (violations, "job %ju has no events", (uintmax_t)id);
        return;
    }
    if (ev_of (json_array_get (events, 0)) != JOB_EV_ACCEPT)
        ct_addf (violations, "job %ju: first event is %s, not accept",
                 (uintmax_t)id, ev_name (json_array_get (events, 0)));
    check_fold (id, events, violations);
    check_releases (id, events, violations);
    check_losses (id, events, violations);

    /* the project's own checker (cairn verify) must agree */
    json_t *problems = json_array ();
    if (problems && verify_job (id, events, problems) > 0) {
        size_t i;
        json_t *p;
        json_array_foreach (problems, i, p)
        {
            ct_addf (violations, "job %ju: verify: event %d: %s", (uintmax_t)id,
                     (int)json_integer_value (json_object_get (p, "seq")),
                     json_string_value (json_object_get (p, "problem")));
        }
    }
    json_decref (problems);
}

/* ---- the client's transcript ---- */

/* Does the response the client got (r, data) say what the journal's
 * response event e says? Only the fields RFC 32 defines are compared. */
static bool
same_response (const json_t *e, struct stream_resp r, const json_t *d)
{
    json_t *c = ev_ctx (e);
    if (r.type != STREAM_EVENT || ev_of (e) != r.event)
        return false;
    switch (r.event) {
    case JOB_EV_RELEASE:
        return json_equal (json_object_get (c, "ranks"),
                           json_object_get (d, "ranks")) &&
               json_is_true (json_object_get (c, "final")) ==
                   json_is_true (json_object_get (d, "final"));
    case JOB_EV_FINISH:
        return json_equal (json_object_get (c, "status"),
                           json_object_get (d, "status"));
    case JOB_EV_EXCEPTION:
        return json_equal (json_object_get (c, "type"),
                           json_object_get (d, "type")) &&
               json_equal (json_object_get (c, "severity"),
                           json_object_get (d, "severity")) &&
               json_equal (json_object_get (c, "note"),
                           json_object_get (d, "note"));
    default:
        return true;
    }
}

static void
describe_resp (const char *type, const json_t *d, char *buf, size_t len)
{
    char *s = json_dumps (d, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (buf, len, "%s %s", type, s ? s : "");
    free (s);
}

static void check_streams (uint64_t id, const json_t *transcript, json_t *v)
{
    int cur = -1, pos = 0;
    bool reattach = false;
    size_t i;
    json_t *t;

    json_array_foreach ((json_t *)transcript, i, t)
    {
        int stream = (int)json_integer_value (json_object_get (t, "stream"));
        const char *type = json_string_value (json_object_get (t, "type"));
        struct stream_resp r = stream_resp_of (type);
        bool reattached = r.type == STREAM_REATTACHED;
        if (stream != cur) {
            cur = stream;
            pos = 0;
            reattach = json_is_true (json_object_get (t, "reattach"));
        }
        if (reattached && (!reattach || pos != 0))
            ct_addf (v,
                     "job %ju: RFC 32: 'reattached' at position %d of %s "
                     "stream %d",
                     (uintmax_t)id, pos, reattach ? "reattach" : "start",
                     stream);
        if (reattach && pos == 0 && !reattached)
            ct_addf (v,
                     "job %ju: RFC 32: reattach stream %d begins with "
                     "'%s', not 'reattached'",
                     (uintmax_t)id, stream, type);
        if (reattach && r.type == STREAM_EVENT && r.event == JOB_EV_START)
            ct_addf (v,
                     "job %ju: RFC 32: 'start' sent on reattach stream %d "
                     "(only 'reattached' may be)",
                     (uintmax_t)id, stream);
        pos++;
    }
}

void ct_check_transcript (uint64_t id,
                          const json_t *events,
                          const json_t *transcript,
                          json_t *violations)
{
    json_t *J = json_array ();
    size_t i, j = 0, nfinal = 0;
    json_t *e, *t;
    bool finish_seen = false, reported = false;
    char got[512], want[512];

    json_array_foreach ((json_t *)events, i, e)
    {
        if (job_event_is_response (ev_name (e)))
            json_array_append (J, e);
    }
    check_streams (id, transcript, violations);
    /* What the client got, in order, must be the journal's responses in
     * order, each once; only a 'start' may be missing (a reattach never
     * resends it). */
    size_t k = 0;
    json_array_foreach ((json_t *)transcript, i, t)
    {
        const char *type = json_string_value (json_object_get (t, "type"));
        struct stream_resp r = stream_resp_of (type);
        json_t *d = json_object_get (t, "data");
        if (r.type == STREAM_REATTACHED)
            continue;
        k++;
        if (nfinal > 0 && !reported) {
            describe_resp (type, d, got, sizeof (got));
            ct_addf (violations,
                     "job %ju: response %zu (%s) after the final "
                     "release",
                     (uintmax_t)id, k, got);
            reported = true;
        }
        enum job_event rev = r.type == STREAM_EVENT ? r.event : JOB_EV_OTHER;
        if (rev == JOB_EV_FINISH)
            finish_seen = true;
        if (rev == JOB_EV_RELEASE &&
            json_is_true (json_object_get (d, "final"))) {
            nfinal++;
            if (!finish_seen && reported == false) {
                for (size_t x = 0; x < json_array_size (J); x++)
                    if (ev_of (json_array_get (J, x)) == JOB_EV_FINISH) {
                        ct_addf (violations,
                                 "job %ju: final release before finish in "
                                 "the client's stream",
                                 (uintmax_t)id);
                        reported = true;
                        break;
                    }
            }
        }
        while (j < json_array_size (J) &&
               !same_response (json_array_get (J, j), r, d) &&
               ev_of (json_array_get (J, j)) == JOB_EV_START)
            j++;
        if (j >= json_array_size (J) ||
            !same_response (json_array_get (J, j), r, d)) {
            describe_resp (type, d, got, sizeof (got));
            if (j < json_array_size (J)) {
                json_t *je = json_array_get (J, j);
                describe_resp (ev_name (je), ev_ctx (je), want, sizeof (want));
            } else
                snprintf (want, sizeof (want), "nothing more");
            ct_addf (violations,
                     "job %ju: client response %zu is '%s' but the journal "
                     "has '%s' there (response %zu of %zu): duplicate, "
                     "reordered or contradicted",
                     (uintmax_t)id, k, got, want, j + 1, json_array_size (J));
            json_decref (J);
            return;
        }
        j++;
    }
    if (nfinal != 1)
        ct_addf (violations, "job %ju: the client got %zu final releases",
                 (uintmax_t)id, nfinal);
    if (j < json_array_size (J)) {
        json_t *je = json_array_get (J, j);
        describe_resp (ev_name (je), ev_ctx (je), want, sizeof (want));
        ct_addf (violations,
                 "job %ju: the client never got journal response %zu of %zu "
                 "(%s)",
                 (uintmax_t)id, j + 1, json_array_size (J), want);
    }
    json_decref (J);
}
