/* crashtest_run.c - drive one case: the client side of a scenario.
 *
 * The client behaves as a job-manager would: it submits each job once,
 * follows its response stream, and when cairnd goes away it reconnects
 * and reattaches every unfinished job with `since` = the responses it
 * already has (never resubmitting a job the journal may hold: only a
 * reattach answered ENOENT, for a job that had no response yet, means
 * "cairnd never took it" and allows a new start). Requests it had sent
 * without an answer are sent again after a restart.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/streamtype.h"
#include "crashtest/crashtest_run.h"

#define MAX_GENERATIONS 16

void ct_log_tail (const char *dir, int n, char *buf, size_t len)
{
    char path[512];
    snprintf (path, sizeof (path), "%s/cairnd.log", dir);
    buf[0] = '\0';
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    char lines[8][256] = {{0}};
    int count = 0;
    char line[256];
    if (n > 8)
        n = 8;
    while (fgets (line, sizeof (line), f)) {
        line[strcspn (line, "\n")] = '\0';
        snprintf (lines[count % n], sizeof (lines[0]), "%s", line);
        count++;
    }
    fclose (f);
    for (int i = count > n ? count - n : 0; i < count; i++) {
        size_t used = strlen (buf);
        snprintf (buf + used, len - used, "%s%s", used ? " | " : "",
                  lines[i % n]);
    }
}

int ct_log_count (const char *dir, const char *needle)
{
    char path[512], line[1024];
    int n = 0;
    snprintf (path, sizeof (path), "%s/cairnd.log", dir);
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    while (fgets (line, sizeof (line), f))
        if (strstr (line, needle))
            n++;
    fclose (f);
    return n;
}

static struct ct_jobrun *job_by_id (struct ct_run *r, uint64_t id)
{
    for (int i = 0; i < r->sc->njobs; i++)
        if (r->jobs[i].job->id == id)
            return &r->jobs[i];
    return NULL;
}

/* ---- cairnd generations ---- */

static void gen_env (struct ct_run *r, char bufs[4][600], char *env[5])
{
    int k = 0;
    snprintf (bufs[k], sizeof (bufs[k]), "%s", r->tag_env);
    env[k] = bufs[k];
    k++;
    if (r->gen < CT_MAX_GENS && r->cs->crash[r->gen][0]) {
        snprintf (bufs[k], sizeof (bufs[k]), "CAIRN_CRASH_AT=%s",
                  r->cs->crash[r->gen]);
        env[k] = bufs[k];
        k++;
    }
    if (r->cs->count) {
        snprintf (bufs[k], sizeof (bufs[k]), "CAIRN_CRASH_COUNT=%s/counts.%d",
                  r->cs->dir, r->gen);
        env[k] = bufs[k];
        k++;
    }
    if (r->gen == 0 && r->cs->fault_env[0]) {
        snprintf (bufs[k], sizeof (bufs[k]), "CAIRN_FAULT=%s",
                  r->cs->fault_env);
        env[k] = bufs[k];
        k++;
    }
    env[k] = NULL;
}

/* Did the current cairnd end the way our crash makes it end? SIGKILL at a
 * crash point of its own (or ours); exit 1 when the point was in its
 * supervisor and cairnd could not recover from its loss in the middle of a
 * spawn, or in its keeper (cairnd exits when the keeper dies). (A
 * supervisor that dies at its crash point is otherwise replaced and
 * cairnd lives on: ct_supervisor_deaths counts those.) */
static bool ended_by_crash (const struct ct_run *r)
{
    int st = r->dm.status;
    const char *point = r->gen < CT_MAX_GENS ? r->cs->crash[r->gen] : "";

    if (WIFSIGNALED (st) && WTERMSIG (st) == SIGKILL &&
        (r->kill_sent || point[0]))
        return true;
    if (WIFEXITED (st) && WEXITSTATUS (st) == 0 && r->term_sent)
        return true; /* supervisor-kill-stop's SIGTERM */
    return WIFEXITED (st) && WEXITSTATUS (st) == 1 &&
           (!strncmp (point, "spawner.", 8) || strstr (point, "keeper."));
}

/* Judge how the current cairnd ended. */
static void classify_exit (struct ct_run *r)
{
    char how[64], tail[1200];
    int st = r->dm.status;

    ct_status_str (st, how, sizeof (how));
    ct_addf (r->exits, "cairnd #%d: %s", r->gen, how);
    if (ended_by_crash (r)) {
        r->kills++;
        return;
    }
    if (WIFEXITED (st) && WEXITSTATUS (st) == 75 &&
        (r->cs->fault == CT_FAULT_FSYNC || r->cs->fault == CT_FAULT_FULL))
        return;
    ct_log_tail (r->cs->dir, 3, tail, sizeof (tail));
    ct_addf (r->violations, "cairnd #%d ended unexpectedly (%s): %s", r->gen,
             how, tail);
}

/* Start cairnd generations until one listens. Returns 0 with r->c
 * connected, or -1 (a violation says why). */
static int daemon_up (struct ct_run *r)
{
    struct cairn_error err = {{0}};
    char bufs[4][600];
    char *env[5];

    for (;;) {
        if (r->gen >= MAX_GENERATIONS) {
            ct_addf (r->violations,
                     "gave up after %d cairnd starts (restart loop)", r->gen);
            return -1;
        }
        gen_env (r, bufs, env);
        r->kill_sent = false;
        r->term_sent = false;
        if (ct_daemon_start (&r->dm, r->cs->cairnd, r->cs->dir, env, &err) <
            0) {
            ct_addf (r->violations, "cannot start cairnd: %s", err.text);
            return -1;
        }
        double until = ct_mono () + 15;
        while (!r->c && ct_mono () < until) {
            if (ct_daemon_reap (&r->dm, 0))
                break;
            if (!(r->c = client_connect (r->sockpath, NULL)))
                ct_sleep (0.003);
        }
        if (r->c) {
            /* the crash points passed so far are the restart's own */
            char path[600];
            struct stat st;
            snprintf (path, sizeof (path), "%s/counts.%d", r->cs->dir, r->gen);
            if (r->gen < CT_MAX_GENS * 2 && stat (path, &st) == 0)
                r->ready_off[r->gen] = (long)st.st_size;
            return 0;
        }
        if (!r->dm.exited) {
            ct_addf (r->violations, "cairnd #%d did not listen within 15 s",
                     r->gen);
            kill (r->dm.pid, SIGKILL);
            ct_daemon_reap (&r->dm, 5);
            return -1;
        }
        classify_exit (r);
        r->gen++;
        ct_sleep (r->sc->restart_delay);
    }
}

static int send_start (struct ct_run *r, struct ct_jobrun *j, bool reattach)
{
    json_t *p;
    const struct ct_job *job = j->job;

    if (reattach)
        p = json_pack ("{s:I s:b s:i}", "id", (json_int_t)job->id, "reattach",
                       1, "since", j->nresp);
    else {
        if (j->t_submit == 0) {
            j->t_submit = ct_mono ();
            j->expiration =
                job->time_limit > 0 ? ct_wall () + job->time_limit : 0;
            if (r->t_first_submit == 0)
                r->t_first_submit = j->t_submit;
        }
        p = json_pack ("{s:I s:i s:o s:o}", "id", (json_int_t)job->id, "userid",
                       (int)getuid (), "jobspec",
                       ct_job_jobspec (job, r->cs->dir), "R",
                       ct_job_R (job, j->expiration));
    }
    if (!p)
        return -1;
    j->tag = r->next_tag++;
    j->reattaching = reattach;
    j->stream++;
    j->state = JOB_SUBMITTED;
    int rc = r->c ? client_send (r->c, "start", j->tag, p) : -1;
    json_decref (p);
    return rc;
}

/* After a restart: follow every unfinished job again, resend what had no
 * answer. */
static void reattach_all (struct ct_run *r)
{
    for (int i = 0; i < r->sc->njobs; i++) {
        struct ct_jobrun *j = &r->jobs[i];
        if (j->state != JOB_SUBMITTED)
            continue;
        (void)send_start (r, j, true);
        for (int a = 0; a < j->job->nactions; a++)
            j->act[a].sent = false;
    }
}

/* cairnd is gone (or going): reap it, judge it, start the next one. why:
 * what the client saw, or NULL. */
static int daemon_down (struct ct_run *r, const char *why)
{
    client_close (r->c);
    r->c = NULL;
    if (!ct_daemon_reap (&r->dm, 10)) {
        ct_addf (r->violations,
                 "cairnd #%d closed its socket but did not exit (client: %s)",
                 r->gen, why ? why : "-");
        kill (r->dm.pid, SIGKILL);
        ct_daemon_reap (&r->dm, 5);
    }
    classify_exit (r);
    r->gen++;
    double until = ct_mono () + r->sc->restart_delay;
    while (ct_mono () < until) { /* keep reading the run log meanwhile */
        (void)ct_runlog_poll (&r->rl, r->runlog_path);
        ct_sleep (0.005);
    }
    if (daemon_up (r) < 0)
        return -1;
    reattach_all (r);
    return 0;
}

/* ---- responses ---- */

/* cairnd's `since` (cairn-protocol(7), "Reattach") counts every response
 * but `reattached` and `start` (a client that first reattached never got a
 * `start` to count). */
static bool counts_for_since (struct stream_resp r)
{
    return r.type != STREAM_REATTACHED &&
           !(r.type == STREAM_EVENT && r.event == JOB_EV_START);
}

static void
on_job_response (struct ct_run *r, struct ct_jobrun *j, json_t *resp)
{
    json_t *payload = json_object_get (resp, "payload");
    json_t *errnum = json_object_get (resp, "errnum");
    const char *errstr = json_string_value (json_object_get (resp, "errstr"));
    uint64_t id = j->job->id;

    if (errnum) {
        int e = (int)json_integer_value (errnum);
        if (j->reattaching && e == ENOENT && j->nresp == 0) {
            (void)send_start (r, j, false); /* it never got in */
            return;
        }
        if (j->reattaching && e == ENOENT && j->saw_full &&
            r->cs->fault == CT_FAULT_FULL) {
            /* a refusal (never journaled) cut short by the crash between
             * its exception and its final release */
            char key[24];
            snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
            json_object_set_new (r->refused, key,
                                 json_string ("journal full (refused, its "
                                              "final release lost in the "
                                              "crash)"));
            j->state = JOB_REFUSED;
            return;
        }
        if (r->cs->fault == CT_FAULT_FULL && !j->reattaching) {
            char key[24];
            snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
            json_object_set_new (r->refused, key,
                                 json_string (errstr ? errstr : "?"));
            j->state = JOB_REFUSED;
            return;
        }
        ct_addf (r->violations, "job %ju: %s answered error %d: %s",
                 (uintmax_t)id, j->reattaching ? "reattach" : "start", e,
                 errstr ? errstr : "");
        j->state = JOB_REFUSED;
        return;
    }
    const char *type = json_string_value (json_object_get (payload, "type"));
    json_t *data = json_object_get (payload, "data");
    if (!type) {
        ct_addf (r->violations, "job %ju: response without a type",
                 (uintmax_t)id);
        return;
    }
    json_array_append_new (
        j->transcript,
        json_pack ("{s:i s:b s:s s:O s:i}", "stream", j->stream, "reattach",
                   j->reattaching, "type", type, "data",
                   data ? data : json_null (), "gen", r->gen));
    struct stream_resp rt = stream_resp_of (type); /* decoded once, here */
    if (!counts_for_since (rt))
        return;
    j->nresp++;
    enum job_event ev = rt.type == STREAM_EVENT ? rt.event : JOB_EV_OTHER;
    const char *note = json_string_value (json_object_get (data, "note"));
    if (ev == JOB_EV_EXCEPTION && note && strstr (note, "full"))
        j->saw_full = true;
    if (ev == JOB_EV_RELEASE &&
        json_is_true (json_object_get (data, "final")) &&
        j->state == JOB_SUBMITTED) {
        j->state = JOB_FINAL;
        r->t_last_final = ct_mono ();
        /* journal full: once cairnd has refused a job, kill it once, so
         * that a restart with a full journal is tried too */
        if (r->cs->fault == CT_FAULT_FULL && j->saw_full && !r->full_killed) {
            r->full_killed = true;
            r->kill_sent = true;
            kill (r->dm.pid, SIGKILL);
        }
    }
}

static void on_response (struct ct_run *r, json_t *resp)
{
    int64_t tag = json_integer_value (json_object_get (resp, "matchtag"));
    for (int i = 0; i < r->sc->njobs; i++) {
        struct ct_jobrun *j = &r->jobs[i];
        if (j->tag == tag) {
            on_job_response (r, j, resp);
            return;
        }
        for (int a = 0; a < j->job->nactions; a++) {
            struct ct_actstate *as = &j->act[a];
            if (as->tag != tag || !as->sent)
                continue;
            json_t *errnum = json_object_get (resp, "errnum");
            const char *s =
                json_string_value (json_object_get (resp, "errstr"));
            if (errnum)
                snprintf (as->result, sizeof (as->result), "error %d: %s",
                          (int)json_integer_value (errnum), s ? s : "");
            else
                snprintf (as->result, sizeof (as->result), "ok");
            as->sent = false;
            as->done = true;
            return;
        }
    }
    /* an answer to an older stream or request: harmless */
}

/* ---- what the client does on its own ---- */

static void send_action (struct ct_run *r, struct ct_jobrun *j, int a)
{
    const struct ct_action *act = &j->job->actions[a];
    struct ct_actstate *as = &j->act[a];
    json_int_t id = (json_int_t)j->job->id;
    const char *topic;
    json_t *p;

    if (as->wall_first == 0)
        as->wall_first = ct_wall ();
    switch (act->kind) {
    case CT_ACT_CANCEL:
        topic = "exception";
        p = json_pack ("{s:I s:s s:i s:s}", "id", id, "type", "cancel",
                       "severity", 0, "note", "crashtest cancel");
        break;
    case CT_ACT_FAIL_RANKS:
        topic = "fail-ranks";
        p = json_pack ("{s:I s:s s:s}", "id", id, "ranks", act->ranks, "note",
                       "crashtest fail-ranks");
        break;
    case CT_ACT_UNDRAIN: /* sent again after a crash: "not drained" */
        topic = "undrain";
        p = json_pack ("{s:s}", "ranks", act->ranks);
        break;
    case CT_ACT_RESUME: /* sent again after a crash: recorded once */
    case CT_ACT_READY:
        topic = "resume";
        p = json_pack ("{s:I s:b}", "id", id, "ready",
                       act->kind == CT_ACT_READY);
        break;
    case CT_ACT_POST: /* sent again after a crash: recorded once */
        topic = "post";
        p = json_pack ("{s:I s:s s:{s:s}}", "id", id, "name", act->ranks,
                       "context", "by", "crashtest");
        break;
    default:
        topic = "expiration";
        p = json_pack ("{s:I s:f}", "id", id, "expiration",
                       as->wall_first + act->expiration);
        break;
    }
    as->tag = r->next_tag++;
    as->sent = true;
    as->attempts++;
    (void)client_send (r->c, topic, as->tag, p);
    json_decref (p);
}

static double action_due (const struct ct_jobrun *j, int a)
{
    const struct ct_action *act = &j->job->actions[a];
    double trig = act->on < 0 ? j->t_submit : j->trig[act->on];
    return trig > 0 ? trig + act->after : 0;
}

/* Kill the supervisor of the targeted command as soon as the command
 * starts: cairnd must take the command over and lose nothing. */
static void supervisor_kill (struct ct_run *r, const struct ct_rlentry *e)
{
    char want[64], comm[64] = "", path[64];
    snprintf (want, sizeof (want), "%s %ju %s", ct_phase_name (e->phase),
              (uintmax_t)e->job, e->rank);
    if (r->target_done || e->end || strcmp (want, r->cs->target) != 0)
        return;
    r->target_done = true;
    pid_t sup = ct_proc_ppid (e->pid);
    snprintf (path, sizeof (path), "/proc/%d/comm", (int)sup);
    FILE *f = sup > 1 ? fopen (path, "r") : NULL;
    if (f) {
        if (!fgets (comm, sizeof (comm), f))
            comm[0] = '\0';
        fclose (f);
    }
    comm[strcspn (comm, "\n")] = '\0';
    /* held: cairnd cannot handle the death until the command has likely
     * ended too (what a busy or paused cairnd meets) */
    if (r->cs->fault == CT_FAULT_SUPHELD && r->dm.pid > 0 &&
        kill (r->dm.pid, SIGSTOP) == 0)
        r->cont_due = ct_mono () + 1.5;
    if (strcmp (comm, "cairn-shim") != 0 || kill (sup, SIGKILL) < 0) {
        ct_addf (r->diverged,
                 "the supervisor of %s (pid %d) was gone before the kill", want,
                 (int)sup);
        return;
    }
    r->supervisor_killed = true;
    /* stop: a graceful stop (an upgrade's restart) right after the death */
    if (r->cs->fault == CT_FAULT_SUPSTOP && r->dm.pid > 0 &&
        kill (r->dm.pid, SIGTERM) == 0)
        r->term_sent = true;
}

static void poll_runlog (struct ct_run *r)
{
    size_t before = r->rl.n;
    if (ct_runlog_poll (&r->rl, r->runlog_path) <= 0)
        return;
    for (size_t i = before; i < r->rl.n; i++) {
        const struct ct_rlentry *e = &r->rl.v[i];
        struct ct_jobrun *j = job_by_id (r, e->job);
        if (j && !e->end && j->trig[e->phase] == 0)
            j->trig[e->phase] = ct_mono ();
        if (r->cs->fault == CT_FAULT_SUPKILL ||
            r->cs->fault == CT_FAULT_SUPHELD ||
            r->cs->fault == CT_FAULT_SUPSTOP)
            supervisor_kill (r, e);
    }
}

static bool all_done (struct ct_run *r)
{
    for (int i = 0; i < r->sc->njobs; i++)
        if (r->jobs[i].state < JOB_FINAL)
            return false;
    return true;
}

/* Do what is due; return seconds until something else is. */
static double tick (struct ct_run *r)
{
    double now = ct_mono (), next = 0.010;

    if (r->cont_due > 0 && now >= r->cont_due) {
        r->cont_due = 0;
        if (r->dm.pid > 0)
            kill (r->dm.pid, SIGCONT);
    }

    if (r->cs->kind == CT_RANDOM && r->next_kill < r->cs->nkills &&
        !r->kill_sent) {
        double due = r->t0 + r->cs->kills[r->next_kill];
        if (now >= due) {
            r->next_kill++;
            r->kill_sent = true;
            kill (r->dm.pid, SIGKILL);
        } else if (due - now < next)
            next = due - now;
    }
    for (int i = 0; i < r->sc->njobs; i++) {
        struct ct_jobrun *j = &r->jobs[i];
        if (j->state == JOB_UNSUBMITTED) {
            bool prev_done = i == 0 || r->jobs[i - 1].state >= JOB_FINAL;
            double due = r->t0 + j->job->submit_after;
            if (r->sc->sequential && !prev_done)
                continue;
            if (now >= due)
                (void)send_start (r, j, false);
            else if (due - now < next)
                next = due - now;
            continue;
        }
        for (int a = 0; a < j->job->nactions; a++) {
            struct ct_actstate *as = &j->act[a];
            double due = action_due (j, a);
            if (as->done || as->sent || due == 0)
                continue;
            if (j->state != JOB_SUBMITTED) {
                snprintf (as->result, sizeof (as->result),
                          "not sent: the job had ended");
                as->done = true;
            } else if (now >= due)
                send_action (r, j, a);
            else if (due - now < next)
                next = due - now;
        }
    }
    return next;
}

static int stop_daemon (struct ct_run *r)
{
    char how[64], tail[1200];
    client_close (r->c);
    r->c = NULL;
    if (r->dm.pid <= 0)
        return 0;
    if (!r->dm.exited)
        kill (r->dm.pid, SIGTERM);
    if (!ct_daemon_reap (&r->dm, 10)) {
        ct_addf (r->violations, "cairnd #%d ignored SIGTERM for 10 s", r->gen);
        kill (r->dm.pid, SIGKILL);
        ct_daemon_reap (&r->dm, 5);
        return -1;
    }
    if (ended_by_crash (r)) {
        /* our crash came after the last response: the next cairnd must
         * find nothing left to do, and stop cleanly */
        classify_exit (r);
        r->gen++;
        ct_sleep (r->sc->restart_delay);
        if (daemon_up (r) < 0)
            return -1;
        return stop_daemon (r);
    }
    ct_status_str (r->dm.status, how, sizeof (how));
    ct_addf (r->exits, "cairnd #%d: %s (SIGTERM)", r->gen, how);
    if (!WIFEXITED (r->dm.status) || WEXITSTATUS (r->dm.status) != 0) {
        ct_log_tail (r->cs->dir, 3, tail, sizeof (tail));
        ct_addf (r->violations, "cairnd #%d stopped with %s on SIGTERM: %s",
                 r->gen, how, tail);
    }
    return 0;
}

int ct_run_drive (struct ct_run *r)
{
    struct cairn_error err = {{0}};

    if (daemon_up (r) < 0)
        return -1;
    r->t0 = ct_mono ();
    double deadline = r->t0 + r->sc->timeout;
    for (;;) {
        poll_runlog (r);
        if (all_done (r))
            break;
        if (ct_mono () > deadline) {
            r->stuck = true;
            for (int i = 0; i < r->sc->njobs; i++)
                if (r->jobs[i].state < JOB_FINAL)
                    ct_addf (r->violations,
                             "stuck: job %ju had no final release after "
                             "%.0f s",
                             (uintmax_t)r->jobs[i].job->id, r->sc->timeout);
            break;
        }
        double wait = tick (r);
        if (!r->c) { /* cairnd died under a kill before tick() */
            if (daemon_down (r, NULL) < 0)
                return -1;
            continue;
        }
        json_t *resp = client_recv (r->c, wait, &err);
        while (resp) {
            on_response (r, resp);
            json_decref (resp);
            resp = client_recv (r->c, 0, &err);
        }
        if (errno == ECONNRESET) {
            if (daemon_down (r, err.text) < 0)
                return -1;
        } else if (errno == EPROTO) {
            ct_addf (r->violations, "client: %s", err.text);
        } else if (errno != ETIMEDOUT) {
            ct_addf (r->violations, "client: %s", err.text);
            break;
        }
    }
    return stop_daemon (r);
}
