/* cmd_procs.c - `cairn procs`: the processes the journal believes are
 * running, each looked for on this machine.
 *
 * Those of jobs come from folding each job's events (job_apply). A node's
 * state dir ("role": "node", DESIGN-MULTINODE.md) has no jobs: its
 * journal's nodeprocs table has one record per process rank 0 asked it
 * for, and those are listed too, in the same columns. By default only
 * what the node still holds (not acknowledged by rank 0: starting,
 * running, or an end rank 0 has not journaled yet); with --all also the
 * acknowledged ones, which the node keeps as its account of what ran
 * there until the journal's retention purges them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/testenv.h"
#include "cli/cmd_journal.h"
#include "cli/commands.h"
#include "core/jobid.h"
#include "node/nodeproc.h"
#include "supervise/procfs.h"

static const char *const phase_names[] = {"prolog", "shell", "epilog"};

struct alive {
    const char *procroot; /* $CAIRN_PROCROOT, as cairnd reads it */
    char bootid[40];
    bool have_bootid;
    bool same_uid; /* we are the state dir's owner (cairnd's uid) */
};

/* A zombie has ended: it merely waits for a parent to reap it (its
 * supervisor, or cairnd). State after the last ')' of stat. */
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

/* Is the process recorded as execid still there: "yes", "no" or
 * "unknown". An intent has no pid yet: its process is looked for by execid,
 * and *found gets its pid if there is one. A spawned process is pid,
 * started at starttime on the boot bootid. */
static const char *alive_check (const struct alive *a,
                                const char *execid,
                                bool intent,
                                pid_t pid,
                                unsigned long long starttime,
                                const char *bootid,
                                pid_t *found)
{
    int fd;

    *found = 0;
    if (intent) {
        /* cairnd died between the intent and the spawn record: look for
         * a process carrying the execid in its environment. Only our own
         * processes can be read, so only cairnd's uid can tell. */
        if (!a->same_uid)
            return "unknown";
        pid_t found_pid = procfs_find_execid (a->procroot, execid);
        if (found_pid > 0) {
            *found = found_pid;
            return "yes";
        }
        return errno == ENOENT ? "no" : "unknown";
    }
    if (a->have_bootid && strcmp (a->bootid, bootid) != 0)
        return "no";
    if (starttime == 0 || pid <= 0)
        return "unknown";
    if (procfs_pidfd_verify (a->procroot, pid, starttime, &fd) == 0) {
        /* the pidfd pins the process: this stat is the recorded one's */
        bool zombie = is_zombie (a->procroot, pid);
        close (fd);
        return zombie ? "no" : "yes";
    }
    return errno == ESRCH ? "no" : "unknown";
}

/* Is a job's process still there? As alive_check(), or "remote" when it
 * runs on another node (multinode): its pid, start time and boot id are
 * that machine's, nothing here can check them. */
static const char *proc_alive (const struct alive *a,
                               const struct job_proc *p,
                               bool remote,
                               pid_t *found)
{
    *found = 0;
    if (remote)
        return "remote";
    return alive_check (a, p->execid, p->state == PROC_INTENT, p->pid,
                        p->starttime, p->bootid, found);
}

/* The PID column: the recorded pid, else a process found for an intent
 * ("N?"), else "-". */
static void pid_cell (pid_t pid, pid_t found, char *buf, size_t len)
{
    if (pid > 0)
        snprintf (buf, len, "%d", (int)pid);
    else if (found > 0)
        snprintf (buf, len, "%d?", (int)found);
    else
        snprintf (buf, len, "-");
}

static int procs_job (struct jcli *jc,
                      uint64_t id,
                      const struct alive *a,
                      bool json,
                      struct table *t)
{
    json_t *events = NULL;
    struct job *job = jcli_load (jc, id, &events);
    struct rv1 *r = NULL;
    char f58[JOBID_STRLEN], idbuf[24], pidbuf[24], alivebuf[128];
    int rc = -1;

    if (!job)
        return -1;
    r = jcli_rv1 (events);
    jcli_f58 (id, f58, sizeof (f58));
    snprintf (idbuf, sizeof (idbuf), "%ju", (uintmax_t)id);
    for (size_t i = 0; i < job_nprocs (job); i++) {
        const struct job_proc *p = job_proc_at (job, i);
        char *ranks;
        pid_t found;
        if (p->state == PROC_DONE)
            continue;
        const char *host = jcli_proc_host (job, p, r);
        const char *alive = proc_alive (a, p, host != NULL, &found);
        const char *state = p->state == PROC_INTENT ? "intent" : "spawned";
        if (!(ranks = idset_encode (p->ranks)))
            goto nomem;
        if (json) {
            json_t *o = json_pack ("{s:s s:I s:I s:s s:s s:s s:s s:s s:s?}",
                                   "execid", p->execid, "pid",
                                   (json_int_t)(p->pid ? p->pid : found), "job",
                                   (json_int_t)id, "f58", f58, "ranks", ranks,
                                   "phase", phase_names[p->phase], "state",
                                   state, "alive", alive, "host", host);
            free (ranks);
            if (jcli_print_json (o) < 0)
                goto done;
            continue;
        }
        pid_cell (p->pid, found, pidbuf, sizeof (pidbuf));
        if (host) /* which machine to look on */
            snprintf (alivebuf, sizeof (alivebuf), "%s (%s)", alive, host);
        else
            snprintf (alivebuf, sizeof (alivebuf), "%s", alive);
        int ta = table_add (t, p->execid, pidbuf, idbuf, ranks,
                            phase_names[p->phase], state, alivebuf);
        free (ranks);
        if (ta < 0)
            goto nomem;
    }
    rc = 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    rv1_destroy (r);
    job_destroy (job);
    json_decref (events);
    return rc;
}

/* ---- a node's records ---- */

struct nodeprocs {
    json_t *recs; /* each record's object, with its "execid" added */
    const char *statedir;
    bool bad; /* a record was not a JSON object (reported) */
};

/* journal_foreach_nodeproc() callback: keep the record for after the
 * read transaction (the checks read /proc, which may take a while). */
static int
nodeproc_add (const char *execid, const char *rec, size_t len, void *arg)
{
    struct nodeprocs *np = arg;
    json_t *o = json_loadb (rec, len, 0, NULL);

    if (!json_is_object (o)) {
        cli_error ("%s: nodeprocs record %s is not a JSON object", np->statedir,
                   execid);
        np->bad = true;
        json_decref (o);
        return 0;
    }
    if (json_object_set_new (o, "execid", json_string (execid)) < 0 ||
        json_array_append_new (np->recs, o) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static json_int_t rec_int (const json_t *rec, const char *key)
{
    return json_integer_value (json_object_get (rec, key));
}

static const char *rec_str (const json_t *rec, const char *key)
{
    const char *s = json_string_value (json_object_get (rec, key));
    return s ? s : "";
}

/* A record's state, decoded once (nodeproc.h); NODEPROC_UNKNOWN for one
 * no node writes: shown as it is, never looked for. */
static enum nodeproc_state rec_state (const json_t *rec)
{
    enum nodeproc_state st;
    if (nodeproc_state_of (rec_str (rec, "state"), &st) < 0)
        return NODEPROC_UNKNOWN;
    return st;
}

/* Does some record belong to job id? */
static bool nodeprocs_have_job (const json_t *recs, uint64_t id)
{
    size_t i;
    json_t *rec;
    json_array_foreach (recs, i, rec)
    {
        if ((uint64_t)rec_int (rec, "id") == id)
            return true;
    }
    return false;
}

/* Is rec listed: not acknowledged unless all, of a wanted job if any? */
static bool
nodeproc_listed (const json_t *rec, bool all, const uint64_t *want, int nwant)
{
    if (!all && json_is_true (json_object_get (rec, "acked")))
        return false;
    for (int i = 0; i < nwant; i++)
        if ((uint64_t)rec_int (rec, "id") == want[i])
            return true;
    return nwant == 0;
}

/* One record's object of `cairn procs --json`: a job process's keys
 * ("alive" null for an end, "host" null: here), then "status" (an end
 * with one), "error" (if recorded), "acked" and "t_acked". */
static json_t *nodeproc_json (const json_t *rec,
                              const char *alive,
                              pid_t found,
                              const char *ranks)
{
    json_int_t id = rec_int (rec, "id"), pid = rec_int (rec, "pid");
    char f58[JOBID_STRLEN];
    json_t *v, *o;

    jcli_f58 ((uint64_t)id, f58, sizeof (f58));
    o = json_pack ("{s:s s:I s:I s:s s:s s:s s:s s:s? s:n}", "execid",
                   rec_str (rec, "execid"), "pid", pid > 0 ? pid : found, "job",
                   id, "f58", f58, "ranks", ranks, "phase",
                   rec_str (rec, "phase"), "state", rec_str (rec, "state"),
                   "alive", alive, "host");
    if (o && (v = json_object_get (rec, "status")) &&
        rec_state (rec) == NODEPROC_ENDED)
        json_object_set (o, "status", v);
    if (o && (v = json_object_get (rec, "error")))
        json_object_set (o, "error", v);
    if (o)
        json_object_set_new (
            o, "acked",
            json_boolean (json_is_true (json_object_get (rec, "acked"))));
    if (o && (v = json_object_get (rec, "t_acked")))
        json_object_set (o, "t_acked", v);
    return o;
}

static int procs_node (const json_t *recs,
                       const struct alive *a,
                       bool all,
                       const uint64_t *want,
                       int nwant,
                       bool json,
                       struct table *t)
{
    size_t i;
    json_t *rec;

    json_array_foreach (recs, i, rec)
    {
        enum nodeproc_state state = rec_state (rec);
        const char *alive = NULL; /* an end: nothing to look for */
        pid_t pid = (pid_t)rec_int (rec, "pid"), found = 0;
        char idbuf[24], ranks[24], pidbuf[24];

        if (!nodeproc_listed (rec, all, want, nwant))
            continue;
        if (state == NODEPROC_INTENT || state == NODEPROC_RUNNING)
            alive = alive_check (a, rec_str (rec, "execid"),
                                 state == NODEPROC_INTENT, pid,
                                 (unsigned long long)rec_int (rec, "starttime"),
                                 rec_str (rec, "bootid"), &found);
        snprintf (ranks, sizeof (ranks), "%jd",
                  (intmax_t)rec_int (rec, "rank"));
        if (json) {
            if (jcli_print_json (nodeproc_json (rec, alive, found, ranks)) < 0)
                return -1;
            continue;
        }
        snprintf (idbuf, sizeof (idbuf), "%ju", (uintmax_t)rec_int (rec, "id"));
        pid_cell (pid, found, pidbuf, sizeof (pidbuf));
        if (table_add (t, rec_str (rec, "execid"), pidbuf, idbuf, ranks,
                       rec_str (rec, "phase"), rec_str (rec, "state"),
                       alive ? alive : "-") < 0) {
            cli_error ("out of memory");
            return -1;
        }
    }
    return 0;
}

static int cmd_procs (struct cli *cli, int argc, char **argv)
{
    enum { OPT_JSON = 0x100 };
    static const struct option longopts[] = {
        {"all", no_argument, NULL, 'a'},
        {"json", no_argument, NULL, OPT_JSON},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    static const char *const headers[] = {"EXECID", "PID",   "JOB",  "RANKS",
                                          "PHASE",  "STATE", "ALIVE"};
    struct alive a = {.procroot = getenv (TESTENV_PROCROOT)};
    struct cairn_error err = {{0}};
    struct nodeprocs np = {0};
    struct jcli jc = {0};
    struct table *t = NULL;
    json_t *ids = NULL;
    uint64_t *want = NULL;
    bool json = false, all = false;
    int opt, rc = 1, nwant;
    struct stat sb;

    while ((opt = getopt_long (argc, argv, "a" CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        switch (opt) {
        case 'a':
            all = true;
            break;
        case OPT_JSON:
            json = true;
            break;
        default:
            cli_common_option (cli, opt, optarg);
        }
    }
    if ((nwant = jcli_parse_ids (cli, argc - optind, argv + optind, &want)) < 0)
        return 1;
    if (jcli_open (&jc, cli, false) < 0)
        goto done;
    a.have_bootid = procfs_bootid (getenv (TESTENV_BOOTID_FILE), a.bootid,
                                   sizeof (a.bootid)) == 0;
    a.same_uid = stat (jc.statedir, &sb) == 0 && sb.st_uid == geteuid ();
    np.statedir = jc.statedir;
    if (!(np.recs = json_array ()))
        goto nomem;
    if (journal_foreach_nodeproc (jc.j, nodeproc_add, &np, &err) < 0) {
        cli_error ("%s: nodeprocs: %s", jc.statedir,
                   err.text[0] ? err.text : strerror (errno));
        goto done;
    }
    if (nwant > 0) {
        if (!(ids = json_array ()))
            goto nomem;
        for (int i = 0; i < nwant; i++) {
            struct journal_jobinfo info;
            /* a node's job: it has records here, and no events */
            if (nodeprocs_have_job (np.recs, want[i]) &&
                journal_job_info (jc.j, want[i], &info) < 0 && errno == ENOENT)
                continue;
            if (json_array_append_new (
                    ids, json_pack ("{s:I}", "id", (json_int_t)want[i])) < 0)
                goto nomem;
        }
    } else if (!(ids = jcli_job_list (&jc, true)))
        goto done;
    if (!json && !(t = table_create (7, headers)))
        goto nomem;
    for (size_t i = 0; i < json_array_size (ids); i++) {
        if (procs_job (&jc, jcli_list_id (ids, i), &a, json, t) < 0)
            goto done;
    }
    if (procs_node (np.recs, &a, all, want, nwant, json, t) < 0)
        goto done;
    if (t)
        table_print (t, stdout);
    rc = np.bad ? 1 : 0;
    goto done;
nomem:
    cli_error ("out of memory");
done:
    table_destroy (t);
    json_decref (ids);
    json_decref (np.recs);
    free (want);
    jcli_close (&jc);
    return rc;
}

const struct cli_command cli_cmd_procs = {
    "procs",
    cmd_procs,
    "[-a] [--json] [JOBID...]",
    "List the processes the journal believes are running, and check them.",
    "  -a, --all           on a node, also the processes rank 0 has\n"
    "                      acknowledged (what ran here)\n"
    "      --json          one JSON object per process, one a line\n"
    "ALIVE says whether the recorded process still exists (pidfd and\n"
    "start time check): yes, no, or unknown when it cannot be told; remote\n"
    "(HOST) for a process on another node (multinode), not checked from "
    "here.\n"
    "On a node's state dir (\"role\": \"node\") the processes rank 0 asked "
    "for\n"
    "are listed too, with STATE intent, running, ended, failed or lost "
    "(ALIVE\n"
    "- for an end): those rank 0 has not acknowledged, all with -a.\n",
};
