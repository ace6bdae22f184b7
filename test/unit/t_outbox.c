/* t_outbox.c - the write-ahead rule's bookkeeping (journal/outbox.h).
 *
 * A staging function stands for the journal: it records what was staged,
 * or fails. The tests check O1 (a failed staging queues nothing, and the
 * effect never runs), O2/O3 (nothing runs before outbox_run; what was
 * taken is gone from the outbox), O4 (lanes in order, FIFO in a lane) and
 * that effects queued while a batch runs wait for the next one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "journal/outbox.h"
#include "journal/crashpoint.h"

static char staged[256];
static char ran[256];
static int fail_errno; /* the next staging fails with it, when not 0 */

static int stage (void *arg)
{
    if (fail_errno) {
        errno = fail_errno;
        fail_errno = 0;
        return -1;
    }
    strncat (staged, arg, sizeof (staged) - strlen (staged) - 1);
    return 0;
}

static struct outbox *again_ob;

static void effect (void *arg, const char *key, int op, json_t *data)
{
    char buf[64];
    snprintf (buf, sizeof (buf), "%s%d%s", key, op,
              data ? json_string_value (data) : "");
    strncat (ran, buf, sizeof (ran) - strlen (ran) - 1);
    if (again_ob && strcmp (key, "again") == 0) {
        struct outbox_effect e = {.fn = effect, .key = "later", .op = 9};
        outbox_after (again_ob, OUTBOX_JOBS, &e);
    }
}

static void reset (void)
{
    staged[0] = ran[0] = '\0';
}

static void test_fail_closed (void)
{
    struct outbox *ob = outbox_create ();
    struct outbox_effect e = {
        .fn = effect, .key = "a", .op = 1, .data = json_string ("!")};

    reset ();
    fail_errno = ENOSPC;
    is_errno (outbox_put (ob, OUTBOX_NODE, stage, "A", &e), ENOSPC,
              "O1: a failed staging fails the put with its errno");
    ok (!outbox_busy (ob), "O1: and queues nothing");
    outbox_run (outbox_take (ob));
    is_str (ran, "", "O1: the effect never runs");
    is_str (staged, "", "O1: nothing was staged");
    outbox_destroy (ob);
}

static void test_order (void)
{
    struct outbox *ob = outbox_create ();
    struct outbox_effect e;

    reset ();
    e = (struct outbox_effect){.fn = effect, .key = "r", .op = 1};
    ok (outbox_after (ob, OUTBOX_REMOTE, &e) == 0, "O2: an after effect");
    e = (struct outbox_effect){.fn = effect, .key = "n", .op = 2};
    ok (outbox_put (ob, OUTBOX_NODE, stage, "N", &e) == 0, "a node record");
    e = (struct outbox_effect){
        .fn = effect, .key = "j", .op = 3, .data = json_string ("x")};
    ok (outbox_put (ob, OUTBOX_JOBS, stage, "J", &e) == 0, "a job's events");
    ok (outbox_put (ob, OUTBOX_NODE, stage, "R", NULL) == 0,
        "a record with no effect");
    e = (struct outbox_effect){.fn = effect, .key = "m", .op = 4};
    ok (outbox_put (ob, OUTBOX_NODE, stage, "M", &e) == 0, "another node one");
    is_str (staged, "NJRM", "each record staged at its put");
    is_str (ran, "", "O3: nothing runs before the batch is run");
    ok (outbox_busy (ob), "the outbox is busy");
    struct outbox_batch *b = outbox_take (ob);
    ok (!outbox_busy (ob), "O3: taken, the outbox is empty");
    outbox_run (b);
    is_str (ran, "j3xn2m4r1", "O4: jobs, node, remote; FIFO in a lane");
    outbox_destroy (ob);
}

static void test_queued_while_running (void)
{
    struct outbox *ob = outbox_create ();
    struct outbox_effect e = {.fn = effect, .key = "again", .op = 0};

    reset ();
    again_ob = ob;
    outbox_after (ob, OUTBOX_JOBS, &e);
    outbox_run (outbox_take (ob));
    is_str (ran, "again0", "an effect ran");
    ok (outbox_busy (ob), "what it queued waits for the next commit");
    outbox_run (outbox_take (ob));
    is_str (ran, "again0later9", "and runs with the next batch");
    again_ob = NULL;
    /* unrun effects' data is dropped with the outbox: the sanitizer
     * build's leak check fails the program if it is not */
    e = (struct outbox_effect){
        .fn = effect, .key = "x", .data = json_string ("leak?")};
    outbox_after (ob, OUTBOX_JOBS, &e);
    outbox_destroy (ob);
}

static void test_fault (void)
{
    struct outbox *ob = outbox_create ();
    struct outbox_effect e = {.fn = effect, .key = "f", .op = 1};

    reset ();
    setenv ("CAIRN_FAULT", "outbox.stage:2:12", 1); /* 12: ENOMEM */
    crashpoint_init ();
    ok (outbox_put (ob, OUTBOX_NODE, stage, "1", &e) == 0, "fault: 1st put");
    is_errno (outbox_put (ob, OUTBOX_NODE, stage, "2", &e), ENOMEM,
              "fault: CAIRN_FAULT fails the 2nd put before staging");
    ok (outbox_put (ob, OUTBOX_NODE, stage, "3", &e) == 0, "fault: 3rd put");
    is_str (staged, "13", "fault: the 2nd record was not staged");
    outbox_run (outbox_take (ob));
    is_str (ran, "f1f1", "fault: only the staged ones' effects ran");
    unsetenv ("CAIRN_FAULT");
    outbox_destroy (ob);
}

int main (void)
{
    plan (NO_PLAN);
    test_fail_closed ();
    test_order ();
    test_queued_while_running ();
    test_fault ();
    done_testing ();
}
