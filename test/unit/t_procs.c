/* t_procs - the supervision client (procs.h) below cairnd: the real
 * cairn-shim as the supervisor, a fake owner that records what it is
 * told, on an event loop of the test's own.
 *
 * What it checks: a start asked for without waiting is answered, and its
 * end told, through the owner's ops; a waited-for start, a signal and
 * its end; one watcher per process; the judgement of a process no one
 * watched, before and after the exit dir is sealed; a supervisor that
 * dies while a command runs is replaced, the command is seen through by
 * the keeper and its end still told, and the next start goes through the
 * new supervisor.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "tap.h"

#include "procs/procs_private.h" /* the supervisor's pid, to kill it */
#include "supervise/exitfile.h"
#include "supervise/procfs.h"
#include "supervise/spawner.h"

/* What the owner was told. */
struct owner {
    struct procs *p;
    int answered;
    enum procs_answer answer;
    struct procs_started st;
    char err[256];
    int ended;
    int shim_status;
    bool rec;       /* the supervisor sent the exit record along */
    int rec_status; /* ... with this status */
    char execid[EXECID_LEN + 1];
};

static void owner_ended (void *arg,
                         const char *execid,
                         int shim_status,
                         const struct procs_exit *rec)
{
    struct owner *o = arg;
    o->ended++;
    o->shim_status = shim_status;
    o->rec = rec != NULL;
    if (rec)
        o->rec_status = rec->status;
    snprintf (o->execid, sizeof (o->execid), "%s", execid);
}

/* As cairnd does: a process started is watched. */
static void owner_answered (void *arg,
                            const char *execid,
                            enum procs_answer answer,
                            struct procs_started *st,
                            const struct cairn_error *err);

static const struct procs_owner_ops ops = {.ended = owner_ended,
                                           .answered = owner_answered};

static void owner_answered (void *arg,
                            const char *execid,
                            enum procs_answer answer,
                            struct procs_started *st,
                            const struct cairn_error *err)
{
    struct owner *o = arg;
    o->answered++;
    o->answer = answer;
    o->st = *st;
    snprintf (o->err, sizeof (o->err), "%s", err->text);
    if (answer == PROCS_STARTED && st->pid > 0 &&
        procs_watch (o->p, execid, st->pid, st->pidfd, o, &ops) == 0)
        procs_watch_started (o->p, execid, st);
}

static void new_execid (char *buf)
{
    uuid_t u;
    uuid_generate (u);
    uuid_unparse_lower (u, buf);
}

/* Run the loop until *count reaches want, for at most 10 s. */
static bool run_until (struct ev_loop *loop, const int *count, int want)
{
    for (int i = 0; i < 1000 && *count < want; i++) {
        ev_run (loop, EVRUN_NOWAIT);
        if (*count < want)
            usleep (10000);
    }
    return *count >= want;
}

static char **args (const char *script)
{
    static char *argv[4];
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = (char *)script;
    argv[3] = NULL;
    return argv;
}

static int status_of (struct procs *p, const char *execid)
{
    int status = -1;
    char *error = NULL;
    if (exitfile_read (procs_exitdir (p), execid, &status, &error) < 0)
        return -1;
    free (error);
    return status;
}

static void test_bad_shim (void)
{
    struct cairn_error err = {{0}};
    struct procs *p = procs_create ("/nonexistent/cairn-shim", &err);
    is_errno_ptr (p, ENOENT, "procs_create: a missing shim fails ENOENT");
    like (err.text,
          "cairn-shim not found or not executable at /nonexistent/cairn-shim",
          "and says where it looked");
}

static void test_async (struct procs *p, struct ev_loop *loop)
{
    struct owner o = {.p = p};
    struct procs_started st;
    struct cairn_error err = {{0}};
    char execid[EXECID_LEN + 1];

    new_execid (execid);
    json_t *env = json_pack ("{s:s}", "CAIRN_EXECID", execid);
    int rc = procs_start (p, execid, args ("exit 3"), env, "/", 1024, -1, true,
                          &o, &ops, &st, &err);
    json_decref (env);
    is_int (rc, 0, "async start: asked for (%s)", err.text);
    ok (st.pending && procs_asked (p) == 1, "async start: pending, one asked");
    procs_send (p);
    ok (run_until (loop, &o.answered, 1), "async start: answered");
    is_int (o.answer, PROCS_STARTED, "async start: started");
    ok (o.st.pid > 0, "async start: with a pid (%d)", (int)o.st.pid);
    is_int ((int)procs_asked (p), 0, "async start: nothing asked any more");
    ok (run_until (loop, &o.ended, 1), "async start: its end is told");
    is_str (o.execid, execid, "async start: the end names its execid");
    is_int (o.shim_status, 0, "async start: its supervisor saw it through");
    int status = status_of (p, execid);
    ok (WIFEXITED (status) && WEXITSTATUS (status) == 3,
        "async start: its exit record says exit 3 (status %d)", status);
    ok (o.rec && o.rec_status == status,
        "async start: the supervisor sent the record along, the same status");
    ok (!procs_watched (p, execid), "async start: no longer watched");
}

static void test_sync_signal (struct procs *p, struct ev_loop *loop)
{
    struct owner o = {.p = p};
    struct procs_started st;
    struct cairn_error err = {{0}};
    char execid[EXECID_LEN + 1];

    new_execid (execid);
    json_t *env = json_pack ("{s:s}", "CAIRN_EXECID", execid);
    int rc = procs_start (p, execid, args ("exec sleep 30"), env, "/", 1024, -1,
                          false, &o, &ops, &st, &err);
    json_decref (env);
    is_int (rc, 0, "sync start: started (%s)", err.text);
    ok (!st.pending && st.pid > 0, "sync start: a pid at once");
    is_int (procs_watch (p, execid, st.pid, st.pidfd, &o, &ops), 0,
            "sync start: watched");
    procs_watch_started (p, execid, &st);
    ok (procs_watched (p, execid) && procs_count (p) == 1,
        "sync start: one process watched");
    int dup_fd = pidfd_open (st.pid, 0);
    is_errno (procs_watch (p, execid, st.pid, dup_fd, &o, &ops), EEXIST,
              "a second watch of one process fails EEXIST");
    close (dup_fd);
    procs_signal (p, execid, SIGTERM, false);
    ok (run_until (loop, &o.ended, 1), "signal: its end is told");
    int status = status_of (p, execid);
    ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGTERM,
        "signal: its exit record says SIGTERM (status %d)", status);
    ok (o.rec && o.rec_status == status,
        "signal: the record sent along says the same");
    is_int ((int)procs_count (p), 0, "signal: nothing watched any more");
    procs_signal (p, execid, SIGTERM, false); /* ended: nothing to do */
    ok (1, "signal: a process no longer watched is left alone");
}

static void test_look (struct procs *p)
{
    struct proc_look look;
    struct cairn_error err = {{0}};
    char execid[EXECID_LEN + 1];

    new_execid (execid);
    is_int (procs_look (p, execid, false, 0, 0, NULL, &look, &err), 0,
            "look: an intent no one started");
    is_int (look.verdict, LOOK_LOST,
            "look: in a dir not sealed under this boot, it is lost");
    like (look.why, "its start marker cannot be told",
          "look: and says why not started again");
    ok (!procs_trusted (p), "a new exit dir is not trusted");
    is_int (procs_seal (p, &err), 0, "seal (%s)", err.text);
    ok (procs_trusted (p), "sealed: trusted");
    is_int (procs_look (p, execid, false, 0, 0, NULL, &look, &err), 0,
            "look: again, sealed");
    is_int (look.verdict, LOOK_UNSTARTED, "look: never started: start it");
}

static void test_supervisor_death (struct procs *p, struct ev_loop *loop)
{
    struct owner o = {.p = p}, o2 = {.p = p};
    struct procs_started st;
    struct cairn_error err = {{0}};
    char execid[EXECID_LEN + 1], execid2[EXECID_LEN + 1];

    new_execid (execid);
    json_t *env = json_pack ("{s:s}", "CAIRN_EXECID", execid);
    int rc = procs_start (p, execid, args ("sleep 1; exit 7"), env, "/", 1024,
                          -1, false, &o, &ops, &st, &err);
    json_decref (env);
    is_int (rc, 0, "death: a command started (%s)", err.text);
    ok (procs_watch (p, execid, st.pid, st.pidfd, &o, &ops) == 0,
        "death: watched");
    procs_watch_started (p, execid, &st);
    pid_t old = spawner_pid (p->spawner);
    ok (kill (old, SIGKILL) == 0, "death: the supervisor (pid %d) killed",
        (int)old);
    for (int i = 0; i < 500 && spawner_pid (p->spawner) == old; i++) {
        ev_run (loop, EVRUN_NOWAIT);
        usleep (10000);
    }
    ok (spawner_pid (p->spawner) != old, "death: a new supervisor (pid %d)",
        (int)spawner_pid (p->spawner));
    ok (procs_watched (p, execid), "death: the command is still watched");
    ok (run_until (loop, &o.ended, 1), "death: its end is still told");
    is_int (o.shim_status, -1, "death: not our supervisor's child any more");
    ok (!o.rec, "death: no record sent along: the keeper's is on disk");
    int status = status_of (p, execid);
    ok (WIFEXITED (status) && WEXITSTATUS (status) == 7,
        "death: the keeper wrote its exit record: exit 7 (status %d)", status);

    uint64_t before = procs_nspawned (p);
    new_execid (execid2);
    env = json_pack ("{s:s}", "CAIRN_EXECID", execid2);
    rc = procs_start (p, execid2, args ("exit 0"), env, "/", 1024, -1, true,
                      &o2, &ops, &st, &err);
    json_decref (env);
    procs_send (p);
    ok (rc == 0 && run_until (loop, &o2.ended, 1),
        "death: the next start goes through the new supervisor");
    ok (o2.answer == PROCS_STARTED && procs_nspawned (p) == before + 1,
        "death: counted as started");
}

int main (void)
{
    const char *bdir = getenv ("CAIRN_BUILD_DIR");
    char shim[PATH_MAX], tmp[] = "/tmp/t_procs.XXXXXX", bootid[40];
    struct cairn_error err = {{0}};

    plan (NO_PLAN);
    if (!bdir)
        BAIL_OUT ("CAIRN_BUILD_DIR is not set");
    snprintf (shim, sizeof (shim), "%s/cairn-shim", bdir);
    /* orphans of a killed supervisor come here, as to cairnd */
    (void)prctl (PR_SET_CHILD_SUBREAPER, 1);
    signal (SIGPIPE, SIG_IGN);
    if (!mkdtemp (tmp))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    if (procfs_bootid (NULL, bootid, sizeof (bootid)) < 0)
        BAIL_OUT ("boot id: %s", strerror (errno));

    test_bad_shim ();

    struct procs *p = procs_create (shim, &err);
    if (!p)
        BAIL_OUT ("procs_create: %s", err.text);
    struct ev_loop *loop = ev_loop_new (EVFLAG_AUTO);
    is_int (procs_open (p, tmp, "statedir",
                        "0a6d2a76-4d53-4d0e-9f44-3b4f3c1a2b3c", bootid, NULL,
                        &err),
            0, "procs_open (%s)", err.text);
    procs_attach (p, loop, false);

    test_look (p);
    test_async (p, loop);
    test_sync_signal (p, loop);
    test_supervisor_death (p, loop);

    procs_destroy (p);
    ev_loop_destroy (loop);
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", tmp);
    (void)!system (cmd);
    return done_testing ();
}
