/* crashtest_case.c - one case from start to verdict: set up its
 * directory, drive it (crashtest_run.c), then collect what it left (the
 * journal, the run log, processes, exit records) and check it.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/eventlog.h"
#include "core/idset.h"
#include "crashtest/crashtest_run.h"
#include "journal/journal.h"

struct load {
    struct journal *j;
    json_t *events;
    json_t *cur;
    struct cairn_error *err;
};

static int
load_event (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct load *l = arg;
    json_t *e = eventlog_entry_decode (line, len, l->err);
    if (!e) {
        errno = EINVAL;
        return -1;
    }
    json_array_append_new (l->cur, e);
    return 0;
}

static int load_job (const struct journal_jobinfo *info, void *arg)
{
    struct load *l = arg;
    char key[24];
    snprintf (key, sizeof (key), "%ju", (uintmax_t)info->id);
    l->cur = json_array ();
    json_object_set_new (l->events, key, l->cur);
    return journal_read_job (l->j, info->id, 0, load_event, l, l->err);
}

static int drained_rank (uint32_t rank, const char *rec, size_t len, void *arg)
{
    return idset_set (arg, rank);
}

/* Every job's events, read-only, once cairnd is stopped. Jobs still
 * marked active are listed in `active`, the drains table's ranks in
 * *drained (malloc'd idset string). */
static json_t *
load_journal (const char *statedir, json_t *active, char **drained, json_t *v)
{
    struct cairn_error err = {{0}};
    struct journal_opts opts = {.readonly = true};
    struct journal *j = journal_open (statedir, &opts, &err);
    struct load l = {.j = j, .events = json_object (), .err = &err};
    if (!j) {
        ct_addf (v, "cannot open the journal: %s", err.text);
        return l.events;
    }
    if (journal_foreach_job (j, false, load_job, &l, &err) < 0)
        ct_addf (v, "cannot read the journal: %s", err.text);
    struct idset *dr = idset_create ();
    if (!dr || journal_foreach_drain (j, drained_rank, dr, &err) < 0)
        ct_addf (v, "cannot read the drains: %s", err.text);
    *drained = dr ? idset_encode (dr) : NULL;
    idset_destroy (dr);
    struct journal_jobinfo info;
    const char *key;
    json_t *x;
    json_object_foreach (l.events, key, x)
    {
        if (journal_job_info (j, strtoull (key, NULL, 10), &info) == 0 &&
            info.active)
            json_array_append_new (active, json_string (key));
    }
    journal_close (j);
    return l.events;
}

static void cmdline (pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf (path, sizeof (path), "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen (path, "r");
    size_t n = f ? fread (buf, 1, len - 1, f) : 0;
    if (f)
        fclose (f);
    buf[n] = '\0';
    for (size_t i = 0; i + 1 < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
}

/* No process of the scenario may outlive its jobs. The exception: the
 * command of a shim we killed has nobody left to stop it (the job drained
 * its ranks for that reason); it is killed here, not reported. */
static void check_leftovers (struct ct_run *r)
{
    double until = ct_mono () + 1.0;
    json_t *pids;
    for (;;) {
        ct_daemon_reap (NULL, 0);
        pids = ct_proc_scan (r->cs->dir);
        size_t i, n = 0;
        json_t *p;
        json_array_foreach (pids, i, p)
        {
            char execid[64];
            pid_t pid = (pid_t)json_integer_value (p);
            if (!ct_proc_getenv (pid, "CAIRN_EXECID", execid,
                                 sizeof (execid)) ||
                !json_object_get (r->killed, execid))
                n++;
        }
        if (n == 0 || ct_mono () >= until)
            break;
        json_decref (pids);
        ct_sleep (0.02);
    }
    size_t i;
    json_t *p;
    json_array_foreach (pids, i, p)
    {
        char cmd[256], execid[64];
        pid_t pid = (pid_t)json_integer_value (p);
        cmdline (pid, cmd, sizeof (cmd));
        bool orphan =
            ct_proc_getenv (pid, "CAIRN_EXECID", execid, sizeof (execid)) &&
            json_object_get (r->killed, execid);
        if (!r->stuck && !orphan)
            ct_addf (r->violations, "process %d (%s) was left running",
                     (int)pid, cmd);
        kill (pid, SIGKILL);
    }
    json_decref (pids);
    ct_daemon_reap (NULL, 0.05);
}

static void check_exitfiles (struct ct_run *r)
{
    char path[512], names[400] = "";
    int n = 0;
    snprintf (path, sizeof (path), "%s/s/exits", r->cs->dir);
    DIR *d = opendir (path);
    struct dirent *ent;
    if (!d)
        return;
    while ((ent = readdir (d))) {
        /* a process's files start with its execid; "boot" and
         * "statedir" belong to the dir (exitdir.h) */
        if (ent->d_name[0] == '.' || strlen (ent->d_name) < 36)
            continue;
        if (n++ < 3) {
            size_t used = strlen (names);
            snprintf (names + used, sizeof (names) - used, "%s%s",
                      used ? ", " : "", ent->d_name);
        }
    }
    closedir (d);
    if (n > 0)
        ct_addf (r->violations,
                 "%d files left in the exit directory after every job was "
                 "clean (%s)",
                 n, names);
}

/* Crash point passes per generation: all of them, and those before the
 * generation listened (its restart: replay, reconcile, first commit). */
static json_t *load_counts (const struct ct_run *r, bool startup)
{
    json_t *all = json_array ();
    char path[600], line[160];
    for (int g = 0; g <= r->gen; g++) {
        json_t *o = json_object ();
        long limit =
            g < CT_MAX_GENS * 2 && r->ready_off[g] > 0 ? r->ready_off[g] : -1;
        snprintf (path, sizeof (path), "%s/counts.%d", r->cs->dir, g);
        FILE *f = fopen (path, "r");
        while (f && fgets (line, sizeof (line), f)) {
            if (startup && limit >= 0 && ftell (f) > limit)
                break;
            line[strcspn (line, "\n")] = '\0';
            if (!line[0])
                continue;
            json_int_t n = json_integer_value (json_object_get (o, line));
            json_object_set_new (o, line, json_integer (n + 1));
        }
        if (f)
            fclose (f);
        json_array_append_new (all, o);
    }
    return all;
}

static const char *kind_name (enum ct_kind k)
{
    static const char *names[] = {"reference", "crash", "random", "fault"};
    return names[k];
}

static bool reached (struct ct_run *r)
{
    const struct ct_case *cs = r->cs;
    int want = 0;
    switch (cs->kind) {
    case CT_CRASH:
        for (int g = 0; g < CT_MAX_GENS; g++)
            if (cs->crash[g][0])
                want++;
        /* a supervisor dying at its point is a crash cairnd outlives */
        return r->kills + ct_log_count (cs->dir, CT_SUPERVISOR_DIED) >= want;
    case CT_RANDOM:
        return r->kills > 0;
    case CT_FAULT:
        if (cs->fault == CT_FAULT_SUPKILL || cs->fault == CT_FAULT_SUPHELD ||
            cs->fault == CT_FAULT_SUPSTOP)
            return r->supervisor_killed;
        for (size_t i = 0; i < json_array_size (r->exits); i++)
            if (strstr (json_string_value (json_array_get (r->exits, i)),
                        "exit 75"))
                return true;
        return cs->fault == CT_FAULT_SPAWN || cs->fault == CT_FAULT_FULL;
    default:
        return true;
    }
}

/* Did an undrain action of the run go unanswered, or come too early
 * ("rank 1 is not drained")? Then the drains table may differ from the
 * clean run's for that reason alone. */
static bool undrain_refused (const struct ct_run *r)
{
    for (int i = 0; i < r->sc->njobs; i++) {
        const struct ct_jobrun *j = &r->jobs[i];
        for (int a = 0; a < j->job->nactions; a++)
            if (j->job->actions[a].kind == CT_ACT_UNDRAIN &&
                strcmp (j->act[a].result, "ok") != 0)
                return true;
    }
    return false;
}

json_t *ct_case_run (const struct ct_case *cs)
{
    struct ct_run r = {.cs = cs, .sc = cs->sc, .next_tag = 1};
    struct cairn_error err = {{0}};
    json_t *events = NULL, *active = json_array ();
    json_t *transcripts = json_object (), *jobs = json_object ();
    char statedir[300], *drained = NULL;
    double t_begin = ct_mono ();

    (void)prctl (PR_SET_CHILD_SUBREAPER, 1);
    r.violations = json_array ();
    r.diverged = json_array ();
    r.exits = json_array ();
    r.killed = json_object ();
    r.refused = json_object ();
    snprintf (statedir, sizeof (statedir), "%s/s", cs->dir);
    snprintf (r.sockpath, sizeof (r.sockpath), "%s/cairn.sock", statedir);
    snprintf (r.runlog_path, sizeof (r.runlog_path), "%s/runlog", cs->dir);
    snprintf (r.tag_env, sizeof (r.tag_env), "CRASHTEST_CASE=%s", cs->dir);
    r.jobs = calloc (cs->sc->njobs, sizeof (*r.jobs));
    for (int i = 0; r.jobs && i < cs->sc->njobs; i++) {
        r.jobs[i].job = &cs->sc->jobs[i];
        r.jobs[i].transcript = json_array ();
    }
    if (!r.jobs) {
        ct_addf (r.violations, "out of memory");
        goto result;
    }
    if (ct_scenario_setup (cs->sc, cs->dir, &err) < 0) {
        ct_addf (r.violations, "setup: %s", err.text);
        goto result;
    }
    bool drove = ct_run_drive (&r) == 0;
    if (!drove && r.dm.pid > 0 && !r.dm.exited) {
        kill (r.dm.pid, SIGKILL);
        ct_daemon_reap (&r.dm, 5);
    }
    (void)ct_runlog_poll (&r.rl, r.runlog_path);
    check_leftovers (&r);
    events = load_journal (statedir, active, &drained, r.violations);
    if (json_array_size (active) > 0 && !r.stuck && drove)
        ct_addf (r.violations, "%zu jobs still marked active in the journal",
                 json_array_size (active));
    if (!r.stuck && drove)
        check_exitfiles (&r);
    for (int i = 0; i < cs->sc->njobs; i++) {
        char key[24];
        snprintf (key, sizeof (key), "%ju", (uintmax_t)r.jobs[i].job->id);
        json_object_set (transcripts, key, r.jobs[i].transcript);
    }
    struct ct_check_input in = {
        .sc = cs->sc,
        .kind = cs->kind,
        .fault = cs->fault,
        .ref = cs->ref,
        .events = events,
        .transcripts = transcripts,
        .refused = r.refused,
        .rl = &r.rl,
        .killed_execids = r.killed,
        .losses_ok = strstr (cs->crash[0], "keeper.") != NULL,
        .drained = drained ? drained : "",
        .undrain_refused = undrain_refused (&r)};
    if (drove || json_object_size (events) > 0)
        ct_check (&in, r.violations, r.diverged, jobs);
result:;
    json_t *res = json_pack (
        "{s:s s:s s:s s:b s:i s:i s:O s:O s:O s:O s:o s:o s:f s:f s:O}",
        "label", cs->label, "repro", cs->repro, "kind", kind_name (cs->kind),
        "reached", reached (&r), "kills", r.kills, "generations", r.gen + 1,
        "violations", r.violations, "diverged", r.diverged, "jobs", jobs,
        "exits", r.exits, "counts", load_counts (&r, false), "startup-counts",
        load_counts (&r, true), "elapsed", ct_mono () - t_begin, "duration",
        r.t_last_final > r.t_first_submit ? r.t_last_final - r.t_first_submit
                                          : 0.,
        "transcripts", transcripts);
    if (res)
        json_object_set_new (res, "drained",
                             json_string (drained ? drained : ""));
    free (drained);
    for (int i = 0; r.jobs && i < cs->sc->njobs; i++)
        json_decref (r.jobs[i].transcript);
    free (r.jobs);
    ct_runlog_free (&r.rl);
    json_decref (events);
    json_decref (active);
    json_decref (transcripts);
    json_decref (jobs);
    json_decref (r.violations);
    json_decref (r.diverged);
    json_decref (r.exits);
    json_decref (r.killed);
    json_decref (r.refused);
    return res;
}
