/* t_nodereplay - the node role's process records as a restarted node
 * reads them back (node_reconcile), on a real journal and a fake
 * supervisor (fakeprocs.h), without a daemon.
 *
 * A record's "state" is decoded once, where it is replayed
 * (nodeproc.h): each state a node writes is taken, anything else
 * refused with EINVAL, so a journal no node wrote never starts
 * anything. And a record moved by the table is journaled as it was,
 * byte for byte, with only its state changed: the journal's format
 * does not depend on the enum.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

#include "fakeprocs.h"
#include "jtmp.h"

#include "journal/outbox.h"
#include "node/node.h"

#define EXECID "00000000-0000-4000-8000-000000000001"

static void ack (void *arg, struct conn *c, int64_t matchtag, json_t *payload)
{
    (void)arg, (void)c, (void)matchtag;
    json_decref (payload);
}

static __attribute__ ((noreturn)) void journal_failed (void *arg,
                                                       const char *why)
{
    (void)arg;
    BAIL_OUT ("journal failed: %s", why);
}

static int may_exec (void *arg,
                     uid_t sender,
                     const json_t *payload,
                     struct cairn_error *err)
{
    (void)arg, (void)sender, (void)payload;
    return errset (err, EPERM, "not here");
}

static const struct node_ops ops = {
    .ack = ack, .journal_failed = journal_failed, .may_exec = may_exec};

struct world {
    char *dir;
    struct journal *j;
    struct outbox *ob;
    struct procs *procs;
    struct node *n;
};

/* A journal whose nodeprocs table holds rec (a JSON text) for EXECID,
 * and a node over it, not reconciled yet. */
static void world_open (struct world *w, const char *rec)
{
    struct cairn_error err = {{0}};
    w->dir = tmpdir_create_as ("t_nodereplay");
    w->j = xopen (w->dir, NULL);
    if (journal_nodeproc (w->j, EXECID, rec) < 0 ||
        journal_commit (w->j, &err) < 0)
        BAIL_OUT ("cannot write the record: %s", err.text);
    if (!(w->ob = outbox_create ()) ||
        !(w->procs = procs_create ("cairn-shim", &err)) ||
        !(w->n = node_create (w->j, w->ob, w->procs, "boot", &ops, NULL)))
        BAIL_OUT ("cannot set up the node");
}

static void world_close (struct world *w)
{
    node_destroy (w->n);
    outbox_destroy (w->ob);
    procs_destroy (w->procs);
    journal_close (w->j);
    tmpdir_destroy (w->dir);
}

static int rec_cb (const char *execid, const char *rec, size_t len, void *arg)
{
    char **out = arg;
    if (strcmp (execid, EXECID) == 0 && !(*out = strndup (rec, len)))
        BAIL_OUT ("out of memory");
    return 0;
}

/* EXECID's committed record (caller frees), or NULL. */
static char *committed (struct world *w)
{
    struct cairn_error err = {{0}};
    char *rec = NULL;
    if (journal_foreach_nodeproc (w->j, rec_cb, &rec, &err) < 0)
        BAIL_OUT ("cannot read the nodeprocs table: %s", err.text);
    return rec;
}

#define REC(state)                                                             \
    "{\"id\":7,\"phase\":\"shell\",\"rank\":1,\"argv\":[\"/bin/true\"],"       \
    "\"env\":{},\"max-output\":4096,\"state\":" state ",\"pid\":40000,"        \
    "\"starttime\":0,\"bootid\":\"boot\"}"

static void test_taken (void)
{
    static const char *const states[] = {"\"intent\"", "\"running\"",
                                         "\"ended\"", "\"failed\"", "\"lost\""};
    for (size_t i = 0; i < sizeof (states) / sizeof (states[0]); i++) {
        struct cairn_error err = {{0}};
        struct world w;
        char rec[512];
        snprintf (rec, sizeof (rec), REC ("%s"), states[i]);
        world_open (&w, rec);
        is_int (node_reconcile (w.n, &err), 0, "a record %s is replayed",
                states[i]);
        if (err.text[0])
            diag ("  %s", err.text);
        is_int (node_nprocs (w.n), 1, "and held");
        world_close (&w);
    }
}

static void test_refused (void)
{
    static const char *const states[] = {
        "\"unknown\"", /* a report's, never a record's */
        "\"bogus\"",   "\"Intent\"", "\"\"", "1", "null",
    };
    for (size_t i = 0; i < sizeof (states) / sizeof (states[0]); i++) {
        struct cairn_error err = {{0}};
        struct world w;
        char rec[512];
        snprintf (rec, sizeof (rec), REC ("%s"), states[i]);
        world_open (&w, rec);
        is_errno (node_reconcile (w.n, &err), EINVAL,
                  "a record in state %s is refused (EINVAL)", states[i]);
        like (err.text, "replaying the nodeprocs table", "and says so");
        is_int (fake_nstarts_of (EXECID), 0, "nothing started");
        world_close (&w);
    }
    struct cairn_error err = {{0}};
    struct world w;
    world_open (&w, "{\"id\":7,\"phase\":\"shell\"}");
    is_errno (node_reconcile (w.n, &err), EINVAL,
              "a record without a state is refused (EINVAL)");
    world_close (&w);
}

/* A running record whose process never started (the fake's procs_look
 * says so) goes back to intent: journaled as it was, the state's value
 * alone changed, then started once its commit is done. */
static void test_bytes (void)
{
    struct cairn_error err = {{0}};
    struct world w;
    char *got;

    world_open (&w, REC ("\"running\""));
    is_int (node_reconcile (w.n, &err), 0, "a running record is replayed");
    if (journal_commit (w.j, &err) < 0)
        BAIL_OUT ("commit: %s", err.text);
    got = committed (&w);
    is_str (got, REC ("\"intent\""),
            "back to intent: the same bytes, but for its state");
    free (got);
    is_int (fake_nstarts_of (EXECID), 0, "not started before the commit");
    outbox_run (outbox_take (w.ob));
    is_int (fake_nstarts_of (EXECID), 1, "started once it is committed");
    if (journal_commit (w.j, &err) < 0)
        BAIL_OUT ("commit: %s", err.text);
    got = committed (&w);
    is_str (got, REC ("\"running\""),
            "running again: its pid, starttime and bootid in their places");
    free (got);
    world_close (&w);
}

int main (void)
{
    plan (NO_PLAN);
    test_taken ();
    test_refused ();
    test_bytes ();
    return done_testing ();
}
