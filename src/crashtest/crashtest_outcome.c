/* crashtest_outcome.c - what really ran, how jobs ended, and whether that
 * is what the clean run did.
 *
 * The run log is the ground truth the journal is held to: a status the
 * journal records must be one a command really returned, a command may
 * start at most once, and a "lost" outcome is only acceptable when both
 * the supervisor and the keeper died before the command ended (a crash of
 * either alone, or of cairnd, never loses a status: the supervisor
 * outlives cairnd and writes the exit record, and the keeper sees a dead
 * supervisor's commands through).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "core/idset.h"
#include "core/job.h"
#include "core/streamtype.h"
#include "crashtest/crashtest.h"

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

static const char *ev_str (const json_t *e, const char *key)
{
    json_t *ctx = json_object_get (e, "context");
    const char *s = json_string_value (json_object_get (ctx, key));
    return s ? s : "";
}

static const json_t *find_intent (const json_t *events, const char *execid)
{
    size_t i;
    json_t *e;
    json_array_foreach ((json_t *)events, i, e)
    {
        if (ev_of (e) == JOB_EV_PROC_INTENT &&
            strcmp (ev_str (e, "execid"), execid) == 0)
            return e;
    }
    return NULL;
}

/* What the run log says about execid. */
struct ran {
    int starts;
    int ends;
    int code;
};

static struct ran ran_of (const struct ct_runlog *rl, const char *execid)
{
    struct ran r = {0};
    for (size_t i = 0; i < rl->n; i++) {
        if (strcmp (rl->v[i].execid, execid) != 0)
            continue;
        if (rl->v[i].end) {
            r.ends++;
            r.code = rl->v[i].code;
        } else
            r.starts++;
    }
    return r;
}

static void describe_ran (struct ran r, char *buf, size_t len)
{
    if (r.ends)
        snprintf (buf, len, "the command ended with code %d", r.code);
    else if (r.starts)
        snprintf (buf, len, "the command started and did not end by itself");
    else
        snprintf (buf, len, "the command never started");
}

static void check_once (const struct ct_check_input *in,
                        uint64_t id,
                        const json_t *events,
                        json_t *v)
{
    const struct ct_runlog *rl = in->rl;
    json_t *per_rank = json_object ();
    json_t *per_exec = json_object ();
    char key[64];

    for (size_t i = 0; i < rl->n; i++) {
        const struct ct_rlentry *e = &rl->v[i];
        if (e->job != id || e->end)
            continue;
        const json_t *intent = find_intent (events, e->execid);
        if (!intent)
            ct_addf (v,
                     "job %ju: %s on rank %s ran (execid %s) without a "
                     "journaled intent",
                     (uintmax_t)id, ct_phase_name (e->phase), e->rank,
                     e->execid);
        else if (ct_phase_parse (ev_str (intent, "phase")) != e->phase)
            ct_addf (v, "job %ju: execid %s ran as %s, journaled as %s",
                     (uintmax_t)id, e->execid, ct_phase_name (e->phase),
                     ev_str (intent, "phase"));
        snprintf (key, sizeof (key), "%s %s", ct_phase_name (e->phase),
                  e->rank);
        json_int_t n = json_integer_value (json_object_get (per_rank, key));
        json_object_set_new (per_rank, key, json_integer (n + 1));
        if (n + 1 == 2)
            ct_addf (v,
                     "job %ju: at-most-once broken: %s on rank %s started "
                     "twice (the second as execid %s)",
                     (uintmax_t)id, ct_phase_name (e->phase), e->rank,
                     e->execid);
        n = json_integer_value (json_object_get (per_exec, e->execid));
        json_object_set_new (per_exec, e->execid, json_integer (n + 1));
        if (n + 1 == 2)
            ct_addf (v, "job %ju: execid %s started twice", (uintmax_t)id,
                     e->execid);
    }
    json_decref (per_rank);
    json_decref (per_exec);
}

void ct_check_runlog (const struct ct_check_input *in,
                      uint64_t id,
                      const json_t *events,
                      json_t *v)
{
    size_t i;
    json_t *e;
    char what[128];

    check_once (in, id, events, v);
    json_array_foreach ((json_t *)events, i, e)
    {
        const char *name = ev_name (e);
        const char *execid = ev_str (e, "execid");
        struct ran r = ran_of (in->rl, execid);
        describe_ran (r, what, sizeof (what));
        switch (job_event_of (name)) {
        case JOB_EV_PROC_EXIT: {
            json_t *ctx = json_object_get (e, "context");
            int st = (int)json_integer_value (json_object_get (ctx, "status"));
            bool error = json_object_get (ctx, "error") != NULL;
            bool ok;
            if (r.ends)
                ok = WIFEXITED (st) && WEXITSTATUS (st) == r.code;
            else if (r.starts)
                ok = WIFSIGNALED (st) || error;
            else
                ok = WIFSIGNALED (st) || error;
            if (!ok)
                ct_addf (v,
                         "job %ju: the journal says %s exited with wait "
                         "status %d, but %s (run log)",
                         (uintmax_t)id, execid, st, what);
            break;
        }
        case JOB_EV_PROC_LOST: {
            const char *note = ev_str (e, "note");
            if (in->losses_ok || json_object_get (in->killed_execids, execid) ||
                strncmp (note, "unkillable", 10) == 0)
                break;
            ct_addf (v,
                     "job %ju: needless loss of %s (\"%s\"): the supervisor "
                     "and the keeper did not both die, so its status was "
                     "recoverable; %s",
                     (uintmax_t)id, execid, note, what);
            break;
        }
        case JOB_EV_PROC_FAIL:
            if (in->fault != CT_FAULT_SPAWN)
                ct_addf (v, "job %ju: %s failed to start: %s", (uintmax_t)id,
                         execid, ev_str (e, "note"));
            break;
        default:
            break;
        }
    }
}

/* "type/severity" for an exception, with our own cancels named apart. */
static void add_sorted_unique (json_t *arr, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach (arr, i, x)
    {
        int c = strcmp (json_string_value (x), s);
        if (c == 0)
            return;
        if (c > 0) {
            json_array_insert_new (arr, i, json_string (s));
            return;
        }
    }
    json_array_append_new (arr, json_string (s));
}

static json_t *ranks_json (const struct idset *s)
{
    char *str = idset_encode (s);
    json_t *o = json_string (str ? str : "?");
    free (str);
    return o;
}

json_t *
ct_summary (uint64_t id, const json_t *events, const struct ct_runlog *rl)
{
    struct idset *released = idset_create ();
    struct idset *drained = idset_create ();
    json_t *exc = json_array (), *ran = json_array (), *acts = json_array ();
    json_t *finish = json_null ();
    int lost = 0, failed = 0, posts = 0, nexit[CT_NPHASES] = {0};
    bool pf = false, started = false, finished = false;
    json_t *phase_of = json_object ();
    char buf[160];
    size_t i;
    json_t *e;

    json_array_foreach ((json_t *)events, i, e)
    {
        const char *name = ev_name (e);
        json_t *ctx = json_object_get (e, "context");
        const char *act = NULL;
        bool post = false;
        enum job_event ev = job_event_of (name);
        switch (ev) {
        case JOB_EV_PROC_INTENT:
            json_object_set_new (
                phase_of, ev_str (e, "execid"),
                json_integer (ct_phase_parse (ev_str (e, "phase"))));
            break;
        case JOB_EV_PROLOG_FINISH:
            pf = true;
            break;
        case JOB_EV_START:
            started = true;
            break;
        case JOB_EV_FINISH:
            finished = true;
            finish = json_object_get (ctx, "status");
            break;
        case JOB_EV_PROC_EXIT: {
            json_int_t ph = json_integer_value (
                json_object_get (phase_of, ev_str (e, "execid")));
            if (ph >= 0 && ph < CT_NPHASES)
                nexit[ph]++;
            /* it ran, even if it was killed before it could log so */
            const json_t *in = find_intent (events, ev_str (e, "execid"));
            const char *rk = in ? ev_str (in, "ranks") : "";
            if (in && !json_object_get (ctx, "error")) {
                snprintf (buf, sizeof (buf), "%s.%s", ev_str (in, "phase"),
                          strspn (rk, "0123456789") == strlen (rk) ? rk
                                                                   : "all");
                add_sorted_unique (ran, buf);
            }
            break;
        }
        case JOB_EV_PROC_LOST:
            lost++;
            break;
        case JOB_EV_PROC_FAIL:
            failed++;
            break;
        case JOB_EV_EXCEPTION:
            snprintf (
                buf, sizeof (buf), "%s/%d", ev_str (e, "type"),
                (int)json_integer_value (json_object_get (ctx, "severity")));
            add_sorted_unique (exc, buf);
            if (strcmp (ev_str (e, "note"), "crashtest cancel") == 0)
                act = "cancel";
            break;
        case JOB_EV_FAIL_RANKS:
        case JOB_EV_EXPIRATION:
            act = job_event_name (ev);
            break;
        case JOB_EV_RELEASE:
        case JOB_EV_DRAIN: {
            struct idset *r = idset_decode (ev_str (e, "ranks"), NULL);
            if (r)
                idset_add (ev == JOB_EV_RELEASE ? released : drained, r);
            idset_destroy (r);
            break;
        }
        case JOB_EV_OTHER:
            /* an outside service's (once, however often sent); a stream
             * response's name (accepted, output...) is cairn's */
            if (!job_event_is_cairns (name)) {
                act = "post";
                post = true;
                posts++;
            }
            break;
        default:
            break;
        }
        if (act) {
            snprintf (buf, sizeof (buf), "%s@%s%s%s/x%d.%d.%d", act,
                      pf ? "p" : "", started ? "s" : "", finished ? "f" : "",
                      nexit[0], nexit[1], nexit[2]);
            /* a request sent again after a restart, landing in the same
             * phase, is the same request; but a post is recorded once
             * (job_post), so each one counts */
            json_t *prev = json_array_get (acts, json_array_size (acts) - 1);
            if (!prev || strcmp (json_string_value (prev), buf) != 0 || post)
                json_array_append_new (acts, json_string (buf));
        }
    }
    for (size_t k = 0; rl && k < rl->n; k++) {
        if (rl->v[k].job != id || rl->v[k].end)
            continue;
        snprintf (buf, sizeof (buf), "%s.%s", ct_phase_name (rl->v[k].phase),
                  rl->v[k].rank);
        add_sorted_unique (ran, buf);
    }
    json_t *last = json_array_get (events, json_array_size (events) - 1);
    json_t *o = json_pack (
        "{s:s s:O s:o s:o s:o s:o s:i s:i s:o}", "state",
        last && ev_of (last) == JOB_EV_CLEAN ? "clean" : "active", "finish",
        finish, "exceptions", exc, "released", ranks_json (released), "drained",
        ranks_json (drained), "ran", ran, "lost", lost, "failed-starts", failed,
        "actions", acts);
    json_object_set_new (o, "posts", json_integer (posts));
    idset_destroy (released);
    idset_destroy (drained);
    json_decref (phase_of);
    return o;
}

void ct_compare (uint64_t id,
                 const json_t *ref,
                 const json_t *got,
                 json_t *violations,
                 json_t *diverged)
{
    static const char *fields[] = {"state",    "finish",  "exceptions",
                                   "released", "drained", "ran"};
    char diff[900] = "";
    json_int_t rp = json_integer_value (json_object_get (ref, "posts"));
    json_int_t gp = json_integer_value (json_object_get (got, "posts"));

    /* the client posts until answered: more than the clean run's is a post
     * recorded twice, whatever else happened */
    if (gp > rp)
        ct_addf (violations,
                 "job %ju: %d posted events in the journal, %d in the clean "
                 "run: a post sent again was recorded again",
                 (uintmax_t)id, (int)gp, (int)rp);
    for (size_t i = 0; i < sizeof (fields) / sizeof (fields[0]); i++) {
        json_t *a = json_object_get (ref, fields[i]);
        json_t *b = json_object_get (got, fields[i]);
        if (json_equal (a, b) || (!a && !b))
            continue;
        char *sa = json_dumps (a, JSON_COMPACT | JSON_ENCODE_ANY);
        char *sb = json_dumps (b, JSON_COMPACT | JSON_ENCODE_ANY);
        size_t used = strlen (diff);
        snprintf (diff + used, sizeof (diff) - used,
                  "%s%s: clean run %s, "
                  "this run %s",
                  used ? "; " : "", fields[i], sa ? sa : "null",
                  sb ? sb : "null");
        free (sa);
        free (sb);
    }
    if (!diff[0])
        return;
    json_int_t lost = json_integer_value (json_object_get (got, "lost"));
    json_int_t failed =
        json_integer_value (json_object_get (got, "failed-starts"));
    if (lost > 0 || failed > 0) {
        ct_addf (diverged,
                 "job %ju differs from the clean run, explained by %d lost "
                 "and %d failed processes: %s",
                 (uintmax_t)id, (int)lost, (int)failed, diff);
        return;
    }
    json_t *ra = json_object_get (ref, "actions");
    json_t *ga = json_object_get (got, "actions");
    if (!json_equal (ra, ga)) {
        char *sa = json_dumps (ra, JSON_COMPACT);
        char *sb = json_dumps (ga, JSON_COMPACT);
        ct_addf (diverged,
                 "job %ju differs from the clean run because the client's "
                 "requests landed in other phases (clean run %s, this run "
                 "%s): %s",
                 (uintmax_t)id, sa ? sa : "", sb ? sb : "", diff);
        free (sa);
        free (sb);
        return;
    }
    ct_addf (violations, "job %ju ended unlike the clean run: %s",
             (uintmax_t)id, diff);
}

static bool says_why (const char *s)
{
    static const char *words[] = {"journal", "space", "full", "disk"};
    for (size_t i = 0; i < sizeof (words) / sizeof (words[0]); i++)
        if (strcasestr (s, words[i]))
            return true;
    return false;
}

static void check_refused (const struct ct_check_input *in,
                           uint64_t id,
                           const char *why,
                           const json_t *events,
                           json_t *v)
{
    if (events && json_array_size (events) > 0)
        ct_addf (v, "job %ju was refused (\"%s\") but is in the journal",
                 (uintmax_t)id, why);
    for (size_t i = 0; i < in->rl->n; i++)
        if (in->rl->v[i].job == id) {
            ct_addf (v, "job %ju was refused but ran %s", (uintmax_t)id,
                     ct_phase_name (in->rl->v[i].phase));
            break;
        }
    if (!says_why (why))
        ct_addf (v,
                 "job %ju: the refusal \"%s\" does not say the journal is "
                 "full",
                 (uintmax_t)id, why);
}

/* A failed spawn must be told: an exception after it that says so, or
 * that names its ranks (a rank already written off by fail-ranks is
 * reported under that reason). */
static void check_failed_start (uint64_t id, const json_t *events, json_t *v)
{
    size_t i;
    json_t *e;
    json_array_foreach ((json_t *)events, i, e)
    {
        if (ev_of (e) != JOB_EV_PROC_FAIL)
            continue;
        const json_t *intent = find_intent (events, ev_str (e, "execid"));
        struct idset *ranks =
            intent ? idset_decode (ev_str (intent, "ranks"), NULL) : NULL;
        bool told = false;
        for (size_t k = i + 1; k < json_array_size (events) && !told; k++) {
            json_t *x = json_array_get (events, k);
            if (ev_of (x) != JOB_EV_EXCEPTION)
                continue;
            struct idset *xr = idset_decode (ev_str (x, "ranks"), NULL);
            told = strstr (ev_str (x, "note"), "failed to start") ||
                   (ranks && xr && idset_is_subset (ranks, xr));
            idset_destroy (xr);
        }
        idset_destroy (ranks);
        if (!told)
            ct_addf (v,
                     "job %ju: %s failed to start (event %zu) and no "
                     "exception says so",
                     (uintmax_t)id, ev_str (e, "execid"), i);
    }
}

/* cairnd may refuse a job without journaling it (its journal is full):
 * the stream is then a fatal exception and the final release, nothing
 * else. Returns the exception's note, or NULL. */
static const char *refusal_note (const json_t *tr)
{
    const json_t *got[3];
    struct stream_resp r[3];
    size_t n = 0, i;
    json_t *t;
    json_array_foreach ((json_t *)tr, i, t)
    {
        const char *type = json_string_value (json_object_get (t, "type"));
        struct stream_resp rt = stream_resp_of (type);
        if (type && rt.type != STREAM_REATTACHED) {
            if (n == 2)
                return NULL;
            r[n] = rt;
            got[n++] = t;
        }
    }
    if (n != 2)
        return NULL;
    json_t *d0 = json_object_get (got[0], "data");
    json_t *d1 = json_object_get (got[1], "data");
    if (r[0].type != STREAM_EVENT || r[0].event != JOB_EV_EXCEPTION ||
        json_integer_value (json_object_get (d0, "severity")) != 0 ||
        r[1].type != STREAM_EVENT || r[1].event != JOB_EV_RELEASE ||
        !json_is_true (json_object_get (d1, "final")))
        return NULL;
    const char *note = json_string_value (json_object_get (d0, "note"));
    return note ? note : "";
}

/* The journal's drains table ends as in the clean run: every drain a job
 * made, minus what the client undrained, each once. A lost or failed
 * process (an injected fault, a shim the crash took) drains its rank: a
 * difference is then explained, as is an undrain that came too early. */
static void check_drains (const struct ct_check_input *in,
                          const json_t *jobs,
                          json_t *violations,
                          json_t *diverged)
{
    const char *refdr =
        in->ref ? json_string_value (json_object_get (in->ref, "drained"))
                : NULL;
    bool explained = in->undrain_refused || in->fault != CT_FAULT_NONE;
    const char *k;
    json_t *sum;

    if (!refdr || !in->drained || strcmp (refdr, in->drained) == 0)
        return;
    json_object_foreach ((json_t *)jobs, k, sum)
    {
        if (json_integer_value (json_object_get (sum, "lost")) > 0 ||
            json_integer_value (json_object_get (sum, "failed-starts")) > 0)
            explained = true;
    }
    ct_addf (explained ? diverged : violations,
             "the journal's drains table holds ranks \"%s\", the clean "
             "run's \"%s\"%s",
             in->drained, refdr,
             explained ? " (a lost process, a fault or an early undrain)" : "");
}

/* What may make a job end unlike its scenario's expected outcome, as it
 * may make it end unlike the clean run (ct_compare): a process lost or
 * not started, or the client's requests landing in other phases than in
 * the clean run (ref, NULL for the clean run itself). NULL if nothing. */
static const char *unexpected_why (const json_t *ref, const json_t *got)
{
    if (json_integer_value (json_object_get (got, "lost")) > 0 ||
        json_integer_value (json_object_get (got, "failed-starts")) > 0)
        return "lost or failed processes";
    if (ref && !json_equal (json_object_get (ref, "actions"),
                            json_object_get (got, "actions")))
        return "the client's requests landing in other phases";
    return NULL;
}

void ct_check (const struct ct_check_input *in,
               json_t *violations,
               json_t *diverged,
               json_t *jobs)
{
    char key[24];
    const json_t *refjobs = in->ref ? json_object_get (in->ref, "jobs") : NULL;

    for (int i = 0; i < in->sc->njobs; i++) {
        uint64_t id = in->sc->jobs[i].id;
        snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
        json_t *events = json_object_get (in->events, key);
        json_t *tr = json_object_get (in->transcripts, key);
        const char *why =
            json_string_value (json_object_get (in->refused, key));
        if (!why && !events && tr)
            why = refusal_note (tr);
        if (why) {
            check_refused (in, id, why, events, violations);
            const json_t *rj = refjobs ? json_object_get (refjobs, key) : NULL;
            if (rj && !json_object_get (rj, "refused") &&
                in->fault != CT_FAULT_FULL)
                ct_addf (violations,
                         "job %ju was refused (\"%s\"); the clean run ran it",
                         (uintmax_t)id, why);
            json_object_set_new (jobs, key,
                                 json_pack ("{s:s}", "refused", why));
            continue;
        }
        if (!events) {
            ct_addf (violations,
                     "job %ju is not in the journal (the client "
                     "got %zu responses)",
                     (uintmax_t)id, json_array_size (tr));
            continue;
        }
        ct_check_journal (id, events, violations);
        json_t *empty = json_array ();
        ct_check_transcript (id, events, tr ? tr : empty, violations);
        json_decref (empty);
        ct_check_runlog (in, id, events, violations);
        json_t *sum = ct_summary (id, events, in->rl);
        json_object_set_new (jobs, key, sum);
        bool failed =
            json_integer_value (json_object_get (sum, "failed-starts")) > 0;
        if (in->fault == CT_FAULT_SPAWN && failed)
            check_failed_start (id, events, violations);
        else if (refjobs && json_object_get (refjobs, key))
            ct_compare (id, json_object_get (refjobs, key), sum, violations,
                        diverged);
        ct_expect_check (
            id, in->sc->jobs[i].expect, sum,
            unexpected_why (refjobs ? json_object_get (refjobs, key) : NULL,
                            sum),
            violations, diverged);
    }
    const char *k;
    json_t *x;
    json_object_foreach (in->events, k, x)
    {
        if (!json_object_get (jobs, k))
            ct_addf (violations,
                     "the journal has job %s, which the client "
                     "never submitted",
                     k);
    }
    for (size_t n = 0; n < in->rl->n; n++) {
        snprintf (key, sizeof (key), "%ju", (uintmax_t)in->rl->v[n].job);
        if (!json_object_get (jobs, key) &&
            !json_object_get (in->events, key)) {
            ct_addf (violations, "the run log has commands of unknown job %s",
                     key);
            break;
        }
    }
    check_drains (in, jobs, violations, diverged);
}
