/* cmd_journal.c - `cairn ranks` and `cairn procs`: what the journal says
 * about ranks and processes, by folding each job's events exactly as
 * cairnd's replay does (job_apply).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd_journal.h"
#include "core/eventlog.h"
#include "core/jobid.h"
#include "exec/procfs.h"

/* ---- ranks ---- */

static const char *const phase_names[] = {"prolog", "shell", "epilog"};

/* The last process of phase working for rank, or NULL. */
static const struct job_proc *
rank_proc (const struct job *job, uint32_t rank, enum proc_phase phase)
{
    const struct job_proc *found = NULL;
    for (size_t i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        if (p->phase == phase && idset_test (p->ranks, rank))
            found = p;
    }
    return found;
}

static const char *proc_state_word (const struct job_proc *p)
{
    if (p->state == PROC_INTENT)
        return "starting";
    if (p->state == PROC_RUNNING)
        return p->terminating ? "terminating" : "running";
    return p->lost ? "lost" : p->error ? "not-started" : "exited";
}

/* The process's outcome; with pid, the pid of its shim too. */
static void
proc_cell (const struct job_proc *p, bool pid, char *buf, size_t len)
{
    char st[64];
    if (!p) {
        snprintf (buf, len, "-");
        return;
    }
    if (p->state != PROC_DONE || p->lost || p->error)
        snprintf (st, sizeof (st), "%s", proc_state_word (p));
    else
        jcli_status (p->status, st, sizeof (st));
    /* the pid journaled is the cairn-shim's that supervises the command,
     * not the command's own: say so */
    if (pid && p->pid > 0)
        snprintf (buf, len, "%s%s shim pid %d", p->timed_out ? "timeout, " : "",
                  st, (int)p->pid);
    else
        snprintf (buf, len, "%s%s", p->timed_out ? "timeout, " : "", st);
}

static json_t *proc_json (const struct job_proc *p)
{
    if (!p)
        return json_null ();
    json_t *o = json_pack ("{s:s s:s s:i s:b}", "execid", p->execid, "state",
                           proc_state_word (p), "pid", (int)p->pid, "timed_out",
                           p->timed_out);
    if (o && p->state == PROC_DONE && !p->lost && !p->error)
        json_object_set_new (o, "status", json_integer (p->status));
    if (o && p->note)
        json_object_set_new (o, "note", json_string (p->note));
    return o;
}

/* The reason of the last drain event naming rank, or NULL. */
static const char *drain_reason (const json_t *events, uint32_t rank)
{
    const char *reason = NULL;
    size_t i;
    json_t *w;

    json_array_foreach (events, i, w)
    {
        const char *name, *r, *s;
        json_t *ctx;
        struct idset *ranks;
        if (eventlog_entry_parse (json_object_get (w, "event"), NULL, &name,
                                  &ctx) < 0 ||
            strcmp (name, "drain") != 0 ||
            json_unpack (ctx, "{s:s s:s}", "ranks", &r, "reason", &s) < 0 ||
            !(ranks = idset_decode (r, NULL)))
            continue;
        if (idset_test (ranks, rank))
            reason = s;
        idset_destroy (ranks);
    }
    return reason;
}

char *jcli_drain_hosts (const json_t *ctx, const struct rv1 *r)
{
    const char *hosts = json_string_value (json_object_get (ctx, "hosts"));
    const char *ranks = json_string_value (json_object_get (ctx, "ranks"));
    struct idset *set;
    char *s;

    if (hosts) /* cairnd names them since drains have "hosts" */
        return strdup (hosts);
    if (!ranks || !r || !(set = idset_decode (ranks, NULL)))
        return strdup ("");
    s = jcli_hosts (r, set, false);
    idset_destroy (set);
    return s || errno == ENOMEM ? s : strdup ("");
}

json_t *jcli_rank_json (const struct job *job,
                        const json_t *events,
                        const struct rv1 *r,
                        uint32_t rank)
{
    bool drained = idset_test (job_drained (job), rank);
    const char *host = r ? rv1_hostname (r, rank) : NULL;

    return json_pack (
        "{s:I s:s? s:o s:o s:o s:b s:s? s:b}", "rank", (json_int_t)rank, "host",
        host, phase_names[0], proc_json (rank_proc (job, rank, PHASE_PROLOG)),
        phase_names[1], proc_json (rank_proc (job, rank, PHASE_SHELL)),
        phase_names[2], proc_json (rank_proc (job, rank, PHASE_EPILOG)),
        "drained", drained, "drain_reason",
        drained ? drain_reason (events, rank) : NULL, "released",
        idset_test (job_released (job), rank));
}

int jcli_rank_row (struct table *t,
                   const struct job *job,
                   const json_t *events,
                   const struct rv1 *r,
                   uint32_t rank,
                   bool detail)
{
    bool drained = idset_test (job_drained (job), rank);
    const char *host = r ? rv1_hostname (r, rank) : NULL;
    char rs[16], c[3][96];

    snprintf (rs, sizeof (rs), "%u", (unsigned)rank);
    for (int ph = 0; ph < 3; ph++)
        proc_cell (rank_proc (job, rank, (enum proc_phase)ph), detail, c[ph],
                   sizeof (c[ph]));
    const char *dr = drained ? "yes" : "no";
    const char *rel = idset_test (job_released (job), rank) ? "yes" : "no";
    if (detail)
        return table_add (t, rs, host, c[0], c[1], c[2], dr, rel,
                          drained ? drain_reason (events, rank) : NULL);
    return table_add (t, rs, host, c[0], c[1], c[2], dr, rel);
}

static int cmd_ranks (struct cli *cli, int argc, char **argv)
{
    static const char *const headers[] = {"RANK",     "HOST",   "PROLOG",
                                          "SHELL",    "EPILOG", "DRAINED",
                                          "RELEASED", "NOTE"};
    struct jcli jc = {0};
    struct job *job = NULL;
    struct rv1 *r = NULL;
    json_t *events = NULL;
    struct table *t = NULL;
    bool json;
    uint64_t id;
    int rc = 1;

    if (!(job = jcli_one_job (&jc, cli, argc, argv, &json, &id, &events)))
        goto done;
    r = jcli_rv1 (events);
    if (!json && !(t = table_create (8, headers)))
        goto nomem;
    const struct idset *all = job_ranks (job);
    for (uint32_t rk = idset_first (all); rk != IDSET_INVALID_ID;
         rk = idset_next (all, rk)) {
        if (json) {
            if (jcli_print_json (jcli_rank_json (job, events, r, rk)) < 0)
                goto done;
        } else if (jcli_rank_row (t, job, events, r, rk, true) < 0)
            goto nomem;
    }
    if (t)
        table_print (t, stdout);
    rc = 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    table_destroy (t);
    rv1_destroy (r);
    job_destroy (job);
    json_decref (events);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_ranks = {
    "ranks",
    cmd_ranks,
    "[--json] JOBID",
    "Show each rank of a job: its host, processes, drained, released.",
    "      --json          one JSON object per rank, one a line\n"
    "A process's pid (\"shim pid\", \"pid\" with --json) is its cairn-shim's, "
    "the\n"
    "supervisor that runs the command, not the command's own.\n",
};

/* ---- procs ---- */

struct alive {
    const char *procroot; /* $CAIRN_PROCROOT, as cairnd reads it */
    char bootid[40];
    bool have_bootid;
    bool same_uid; /* we are the state dir's owner (cairnd's uid) */
};

/* A zombie has ended: it merely waits for a parent to reap it (its shim's
 * parent, cairnd, may be gone). State after the last ')' of stat. */
static bool is_zombie (const char *procroot, pid_t pid)
{
    char path[128], buf[512];
    FILE *f;
    size_t n;

    snprintf (path, sizeof (path), "%s/%d/stat", procroot ? procroot : "/proc",
              (int)pid);
    if (!(f = fopen (path, "r")))
        return false;
    n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    char *p = strrchr (buf, ')');
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Is the process the journal records still there? "yes", "no" or
 * "unknown"; for an intent, *found gets the pid of its shim if found. */
static const char *
proc_alive (const struct alive *a, const struct job_proc *p, pid_t *found)
{
    int fd;

    *found = 0;
    if (p->state == PROC_INTENT) {
        /* cairnd died between the intent and the spawn record: look for
         * a shim carrying the execid, as its reconciler does. Only our
         * own processes can be read, so only cairnd's uid can tell. */
        if (!a->same_uid)
            return "unknown";
        pid_t pid = procfs_find_execid (a->procroot, p->execid);
        if (pid > 0) {
            *found = pid;
            return "yes";
        }
        return errno == ENOENT ? "no" : "unknown";
    }
    if (a->have_bootid && strcmp (a->bootid, p->bootid) != 0)
        return "no";
    if (p->starttime == 0)
        return "unknown";
    if (procfs_pidfd_verify (a->procroot, p->pid, p->starttime, &fd) == 0) {
        /* the pidfd pins the process: this stat is the recorded one's */
        bool zombie = is_zombie (a->procroot, p->pid);
        close (fd);
        return zombie ? "no" : "yes";
    }
    return errno == ESRCH ? "no" : "unknown";
}

static int procs_job (struct jcli *jc,
                      uint64_t id,
                      const struct alive *a,
                      bool json,
                      struct table *t)
{
    struct job *job = jcli_load (jc, id, NULL);
    char f58[JOBID_STRLEN], idbuf[24], pidbuf[24];
    int rc = -1;

    if (!job)
        return -1;
    jcli_f58 (id, f58, sizeof (f58));
    snprintf (idbuf, sizeof (idbuf), "%ju", (uintmax_t)id);
    for (size_t i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        char *ranks;
        pid_t found;
        if (p->state == PROC_DONE)
            continue;
        const char *alive = proc_alive (a, p, &found);
        const char *state = p->state == PROC_INTENT ? "intent" : "spawned";
        if (!(ranks = idset_encode (p->ranks)))
            goto nomem;
        if (json) {
            json_t *o = json_pack (
                "{s:s s:I s:I s:s s:s s:s s:s s:s}", "execid", p->execid, "pid",
                (json_int_t)(p->pid ? p->pid : found), "job", (json_int_t)id,
                "f58", f58, "ranks", ranks, "phase", phase_names[p->phase],
                "state", state, "alive", alive);
            free (ranks);
            if (jcli_print_json (o) < 0)
                goto done;
            continue;
        }
        if (p->pid > 0)
            snprintf (pidbuf, sizeof (pidbuf), "%d", (int)p->pid);
        else if (found > 0)
            snprintf (pidbuf, sizeof (pidbuf), "%d?", (int)found);
        else
            snprintf (pidbuf, sizeof (pidbuf), "-");
        int r = table_add (t, p->execid, pidbuf, idbuf, ranks,
                           phase_names[p->phase], state, alive);
        free (ranks);
        if (r < 0)
            goto nomem;
    }
    rc = 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    job_destroy (job);
    return rc;
}

static int cmd_procs (struct cli *cli, int argc, char **argv)
{
    enum { OPT_JSON = 0x100 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    static const char *const headers[] = {"EXECID", "PID",   "JOB",  "RANKS",
                                          "PHASE",  "STATE", "ALIVE"};
    struct alive a = {.procroot = getenv ("CAIRN_PROCROOT")};
    struct jcli jc = {0};
    struct table *t = NULL;
    json_t *ids = NULL;
    uint64_t *want = NULL;
    bool json = false;
    int opt, rc = 1, nwant;
    struct stat sb;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == OPT_JSON)
            json = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    if ((nwant = jcli_parse_ids (cli, argc - optind, argv + optind, &want)) < 0)
        return 1;
    if (jcli_open (&jc, cli, false) < 0)
        goto done;
    a.have_bootid = procfs_bootid (getenv ("CAIRN_BOOTID_FILE"), a.bootid,
                                   sizeof (a.bootid)) == 0;
    a.same_uid = stat (jc.statedir, &sb) == 0 && sb.st_uid == geteuid ();
    if (nwant > 0) {
        if (!(ids = json_array ()))
            goto nomem;
        for (int i = 0; i < nwant; i++)
            json_array_append_new (
                ids, json_pack ("{s:I}", "id", (json_int_t)want[i]));
    } else if (!(ids = jcli_job_list (&jc, true)))
        goto done;
    if (!json && !(t = table_create (7, headers)))
        goto nomem;
    for (size_t i = 0; i < json_array_size (ids); i++) {
        if (procs_job (&jc, jcli_list_id (ids, i), &a, json, t) < 0)
            goto done;
    }
    if (t)
        table_print (t, stdout);
    rc = 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    table_destroy (t);
    json_decref (ids);
    free (want);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_procs = {
    "procs",
    cmd_procs,
    "[--json] [JOBID...]",
    "List the processes the journal believes are running, and check them.",
    "      --json          one JSON object per process, one a line\n"
    "ALIVE says whether the recorded cairn-shim still exists (pidfd and\n"
    "start time check): yes, no, or unknown when it cannot be told.\n",
};
