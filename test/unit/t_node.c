/* t_node - cairnd in the node role (src/node) on a fake supervisor
 * (fakeprocs.h): the real daemon, journal and socket, with rank 0 played
 * by the test through the client library, one loop turn at a time.
 *
 * What it checks: a node-exec's record is committed before its process
 * is asked for (the fake reads the journal at the start), and answered
 * once it runs; a node-exec sent again is a query, never a second start;
 * an end reaches node-watch with its status; node-ack marks the
 * record, and the process is never started again after it; node-signal
 * reaches a running process, and an unknown one is ENOENT.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "tap.h"

#include "fakedaemon.h"

#include "journal/journal.h"

static struct fake_daemon fd;
static struct cairnd *d;
static struct client *cl;

static void new_execid (char *buf)
{
    uuid_t u;
    uuid_generate (u);
    uuid_unparse_lower (u, buf);
}

struct rec_find {
    const char *execid;
    json_t *rec; /* the committed record, or NULL */
};

static int rec_cb (const char *execid, const char *rec, size_t len, void *arg)
{
    struct rec_find *f = arg;
    if (!strcmp (execid, f->execid))
        f->rec = json_loadb (rec, len, 0, NULL);
    return 0;
}

/* The state of execid's committed record ("" if none), and whether it
 * is acknowledged. */
static const char *committed_state (const char *execid, bool *acked)
{
    static char state[32];
    struct rec_find f = {.execid = execid};
    struct cairn_error err;
    state[0] = '\0';
    if (acked)
        *acked = false;
    if (journal_foreach_nodeproc (cairnd_journal (d), rec_cb, &f, &err) == 0 &&
        f.rec) {
        snprintf (state, sizeof (state), "%s",
                  json_string_value (json_object_get (f.rec, "state")));
        if (acked)
            *acked = json_is_true (json_object_get (f.rec, "acked"));
        json_decref (f.rec);
    }
    return state;
}

static int starts_ok, starts_bad;
static void check_intent (const char *execid, void *arg)
{
    (void)arg;
    if (!strcmp (committed_state (execid, NULL), "intent"))
        starts_ok++;
    else
        starts_bad++;
}

/* Turn cairnd's loop until a response with matchtag comes (at most 2 s):
 * its payload, or its error as {"errnum", "errstr"}; NULL if none. */
static json_t *wait_response (int64_t matchtag)
{
    struct cairn_error err;
    for (int i = 0; i < 200; i++) {
        json_t *r;
        ev_run (cairnd_loop (d), EVRUN_NOWAIT);
        while ((r = client_recv (cl, 0, &err))) {
            json_int_t mt = -1;
            json_t *p = NULL;
            (void)json_unpack (r, "{s:I s?o}", "matchtag", &mt, "payload", &p);
            if (mt == matchtag) {
                json_t *out = p ? json_incref (p) : json_incref (r);
                json_decref (r);
                return out;
            }
            json_decref (r);
        }
        usleep (10000);
    }
    return NULL;
}

static const char *str (const json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : "";
}

static int64_t node_exec (const char *execid, int64_t mt)
{
    json_t *p = json_pack ("{s:s s:I s:s s:I s:[s] s:{} s:n s:I}", "execid",
                           execid, "id", (json_int_t)7, "phase", "shell",
                           "rank", (json_int_t)1, "argv", "/bin/true", "env",
                           "cwd", "max-output", (json_int_t)4096);
    if (!p || client_send (cl, "node-exec", mt, p) < 0)
        BAIL_OUT ("node-exec: %s", strerror (errno));
    json_decref (p);
    return mt;
}

int main (void)
{
    char e1[EXECID_LEN + 1], e2[EXECID_LEN + 1];
    json_t *r;

    plan (NO_PLAN);
    fake_daemon_start (&fd, json_pack ("{s:s}", "role", "node"));
    d = fd.d;
    cl = fd.cl;
    ok (cairnd_is_node (d) && fake_procs != NULL,
        "a node-role cairnd on the fake supervisor");
    fake_on_start = check_intent;

    /* rank 0 watches the ends */
    if (client_send (cl, "node-watch", 1, NULL) < 0)
        BAIL_OUT ("node-watch: %s", strerror (errno));

    new_execid (e1);
    r = wait_response (node_exec (e1, 10));
    is_str (str (r, "state"), "running", "node-exec: answered once running");
    ok (json_integer_value (json_object_get (r, "pid")) > 0,
        "node-exec: with its pid");
    json_decref (r);
    is_int (fake_nstarts_of (e1), 1, "node-exec: asked for once");
    ok (starts_ok == 1 && starts_bad == 0,
        "node-exec: its intent was on disk before the start");
    is_str (committed_state (e1, NULL), "running", "node-exec: pid on disk");

    r = wait_response (node_exec (e1, 11));
    is_str (str (r, "state"), "running", "again: a query, answered");
    json_decref (r);
    is_int (fake_nstarts_of (e1), 1, "again: never a second start");

    is_int (fake_end (e1, 5 << 8), 0, "the process ends: exit 5");
    r = wait_response (1);
    is_str (str (r, "execid"), e1, "node-watch: its end is pushed");
    is_str (str (r, "state"), "ended", "node-watch: as ended");
    is_int ((int)json_integer_value (json_object_get (r, "status")), 5 << 8,
            "node-watch: with its status");
    json_decref (r);

    json_t *p = json_pack ("{s:[s]}", "execids", e1);
    client_send (cl, "node-ack", 12, p);
    json_decref (p);
    r = wait_response (12);
    ok (r != NULL && !json_object_get (r, "errnum"), "node-ack: answered");
    json_decref (r);
    bool acked = false;
    committed_state (e1, &acked);
    ok (acked, "node-ack: the record is marked on disk");
    r = wait_response (node_exec (e1, 13));
    is_str (str (r, "state"), "ended",
            "after the ack: node-exec is answered from the record");
    json_decref (r);
    is_int (fake_nstarts_of (e1), 1, "after the ack: never started again");

    new_execid (e2);
    r = wait_response (node_exec (e2, 20));
    json_decref (r);
    p = json_pack ("{s:s s:i}", "execid", e2, "signum", SIGTERM);
    client_send (cl, "node-signal", 21, p);
    json_decref (p);
    r = wait_response (21);
    ok (r != NULL && !json_object_get (r, "errnum"), "node-signal: answered");
    json_decref (r);
    is_int (fake_signal_of (e2), SIGTERM, "node-signal: SIGTERM sent");
    p = json_pack ("{s:s s:i}", "execid", e1, "signum", SIGTERM);
    client_send (cl, "node-signal", 22, p);
    json_decref (p);
    r = wait_response (22);
    is_int ((int)json_integer_value (json_object_get (r, "errnum")), ENOENT,
            "node-signal of one not running: ENOENT");
    like (str (r, "errstr"), "is not running here", "and says so");
    json_decref (r);
    is_int (starts_bad, 0, "every start after its intent's commit");

    fake_daemon_stop (&fd);
    return done_testing ();
}
