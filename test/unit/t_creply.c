/* t_creply.c - cairnd's replies reach the request that asked
 * (src/flux/creply.h), and nobody else. */
#include "tap.h"
#include "flux/creply.h"

struct seen {
    int calls;
    const json_t *last;
};

static void count_cb (const json_t *msg, void *arg)
{
    struct seen *s = arg;
    s->calls++;
    s->last = msg;
}

/* A callback that removes another entry and adds one, mid-dispatch. */
struct churn {
    struct creply *t;
    int64_t victim, added;
    struct seen *added_seen;
};

static void churn_cb (const json_t *msg, void *arg)
{
    struct churn *c = arg;
    creply_remove (c->t, c->victim);
    (void)creply_add (c->t, c->added, 0, count_cb, c->added_seen);
}

int main (void)
{
    plan (NO_PLAN);
    struct creply *t = creply_create ();
    struct seen a = {0}, b = {0}, s = {0}, d = {0};
    json_t *msg = json_pack ("{s:I}", "matchtag", (json_int_t)1);

    if (!t || !msg)
        BAIL_OUT ("out of memory");
    ok (creply_add (t, 1, 0, count_cb, &a) == 0, "add 1");
    ok (creply_add (t, 2, CREPLY_STREAMING, count_cb, &s) == 0,
        "add 2, streaming");
    ok (creply_add (t, 5, 0, count_cb, &b) == 0, "add 5 (gaps are fine)");
    is_errno (creply_add (t, 4, 0, count_cb, &b), EINVAL,
              "a matchtag below the last is refused");
    is_errno (creply_add (t, 5, 0, count_cb, &b), EINVAL,
              "the same matchtag twice is refused");
    is_errno (creply_add (t, 0, 0, count_cb, &b), EINVAL,
              "matchtag 0 (none) is refused");
    is_int (creply_count (t), 3, "three wait");

    ok (!creply_dispatch (t, 3, msg), "a matchtag nobody waits for: false");
    is_int (a.calls + b.calls + s.calls, 0, "... and nobody is called");

    ok (creply_dispatch (t, 1, msg), "1's reply is taken");
    is_int (a.calls, 1, "by 1's callback");
    ok (a.last == msg, "which gets the message");
    is_int (b.calls + s.calls, 0, "and by no other");
    ok (!creply_dispatch (t, 1, msg), "a second reply to 1 is nobody's");
    is_int (a.calls, 1, "1's callback ran once");

    for (int i = 0; i < 3; i++)
        ok (creply_dispatch (t, 2, msg), "stream reply %d taken", i + 1);
    is_int (s.calls, 3, "a stream gets every reply");
    creply_remove (t, 2);
    ok (!creply_dispatch (t, 2, msg), "a removed stream gets no more");
    creply_remove (t, 2); /* fine twice */
    creply_remove (t, 99);
    is_int (creply_count (t), 1, "5 is left");

    /* a callback that changes the table */
    struct churn c = {t, 5, 7, &d};
    ok (creply_add (t, 6, 0, churn_cb, &c) == 0, "add 6, which churns");
    ok (creply_dispatch (t, 6, msg), "6 taken");
    ok (!creply_dispatch (t, 5, msg), "5, removed by 6's callback, is gone");
    is_int (b.calls, 0, "5's callback never ran");
    ok (creply_dispatch (t, 7, msg), "7, added by 6's callback, is there");
    is_int (d.calls, 1, "and called");

    /* nobody's callback: taken and dropped */
    ok (creply_add (t, 8, 0, NULL, NULL) == 0, "add 8 with no callback");
    ok (creply_dispatch (t, 8, msg), "its reply is taken");
    is_int (creply_count (t), 0, "and the table is empty");

    /* many, out of order */
    struct seen many[100] = {{0}};
    for (int i = 0; i < 100; i++)
        if (creply_add (t, 100 + i, 0, count_cb, &many[i]) < 0)
            BAIL_OUT ("add %d: %s", 100 + i, strerror (errno));
    int wrong = 0;
    for (int i = 99; i >= 0; i -= 2)
        wrong += !creply_dispatch (t, 100 + i, msg) || many[i].calls != 1;
    is_int (wrong, 0, "every other of 100 found by its matchtag");
    is_int (creply_count (t), 50, "50 left");
    creply_clear (t);
    is_int (creply_count (t), 0, "cleared");
    ok (!creply_dispatch (t, 100, msg), "nothing waits after a clear");
    ok (creply_add (t, 300, 0, count_cb, &a) == 0,
        "new matchtags still go in after a clear");
    is_errno (creply_add (t, 150, 0, count_cb, &a), EINVAL, "but not old ones");

    creply_destroy (t);
    creply_destroy (NULL);
    json_decref (msg);
    return done_testing ();
}
