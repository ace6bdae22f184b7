/* t_streams.c - the clients that follow jobs (streams.h), alone: jobs are
 * bare entries, connections are fakes whose id is their index (this file's
 * conn_id stands in for the server's), and the output watch is a counter.
 * Before streams were a room (issue 52) they were daemon.c's, tested only
 * through a whole cairnd. */
#include <stdio.h>
#include <string.h>

#include "tap.h"

#include "exec/jobtable.h"
#include "exec/streams.h"
#include "server/server.h"

/* Fake connections: the server's conn_id is the only thing streams read. */
static char conns_[4];
#define CONN(i) ((struct conn *)&conns_[i])
uint64_t conn_id (const struct conn *c)
{
    return (uint64_t)((const char *)c - conns_) + 100;
}

static int watching; /* streams that asked for output, as told */

static void fake_watch (void *arg, int delta)
{
    watching += delta;
}

static const struct streams_ops ops = {.watch = fake_watch};

static int count (const struct jobentry *je)
{
    int n = 0;
    for (const struct sub *s = je->subs; s; s = s->next)
        n++;
    return n;
}

static int count_conns (struct streams *st, int *nsubs)
{
    size_t pos = 0;
    struct sub *head;
    int n = 0;
    *nsubs = 0;
    while ((head = streams_next_conn (st, &pos))) {
        n++;
        for (struct sub *s = head; s; s = s->cnext)
            (*nsubs)++;
    }
    return n;
}

int main (void)
{
    struct jobentry a = {.key = "1"}, b = {.key = "2"};
    struct streams *st = streams_create (&ops, NULL);
    int nsubs;

    ok (st != NULL, "created");
    ok (!streams_conn_busy (st, CONN (0)), "no stream: a connection is idle");
    streams_add (st, &a, CONN (0), 1, false, true, NULL);
    streams_add (st, &a, CONN (1), 2, true, false, json_object ());
    streams_add (st, &b, CONN (1), 3, false, false, json_object ());
    is_int (count (&a), 2, "two streams follow a");
    is_int (count (&b), 1, "one follows b");
    ok (a.subs && a.subs->matchtag == 2 && a.subs->reattached &&
            !a.subs->events && a.subs->sent && a.subs->je == &a,
        "the newest first, as it was asked for");
    is_int (watching, 2, "two asked for output: the watch was told");
    ok (streams_conn_busy (st, CONN (0)) && streams_conn_busy (st, CONN (1)) &&
            !streams_conn_busy (st, CONN (2)),
        "connections with streams are busy, others not");
    is_int (count_conns (st, &nsubs), 2, "two connections walked");
    is_int (nsubs, 3, "and their three streams");

    streams_conn_gone (st, CONN (1));
    is_int (count (&a), 1, "conn gone: a keeps the other connection's");
    ok (b.subs == NULL, "conn gone: b has none");
    is_int (watching, 0, "conn gone: its output streams unwatched");
    ok (!streams_conn_busy (st, CONN (1)), "conn gone: not busy");
    is_int (count_conns (st, &nsubs), 1, "conn gone: one connection left");

    streams_add (st, &b, CONN (0), 4, false, true, NULL);
    streams_drop_job (st, &a);
    ok (a.subs == NULL, "job dropped: its streams end");
    ok (b.subs && b.subs->matchtag == 4, "job dropped: another's stays");
    ok (streams_conn_busy (st, CONN (0)),
        "job dropped: the connection still follows another job");
    streams_drop_job (st, &b);
    ok (!streams_conn_busy (st, CONN (0)),
        "the last stream gone: the connection is idle");
    is_int (count_conns (st, &nsubs), 0, "none walked");
    streams_destroy (st);
    return done_testing ();
}
