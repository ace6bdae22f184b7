/* streams.c - the clients that follow jobs (streams.h): a map by
 * connection id of each connection's streams, and each job's list in its
 * entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/jobtable.h"
#include "exec/streams.h"
#include "server/server.h"
#include "util/hashmap.h"
#include "util/log.h"

/* The streams of one connection (keyed by conn_id). */
struct connsubs {
    struct sub *head;
    char key[24];
};

struct streams {
    struct streams_ops ops;
    void *arg;
    struct hashmap *conns; /* conn_id -> connsubs (with streams only) */
};

struct streams *streams_create (const struct streams_ops *ops, void *arg)
{
    struct streams *st = calloc (1, sizeof (*st));
    if (!st || !(st->conns = hashmap_create ())) {
        free (st);
        errno = ENOMEM;
        return NULL;
    }
    st->ops = *ops;
    st->arg = arg;
    return st;
}

void streams_destroy (struct streams *st)
{
    if (!st)
        return;
    int saved = errno;
    hashmap_destroy (st->conns); /* empty: every sub went with its job */
    free (st);
    errno = saved;
}

/* Take s off both its lists and free it; a connection left without
 * streams is dropped from the map. */
static void sub_free (struct streams *st, struct sub *s)
{
    struct connsubs *cs = s->cs;

    *s->pprev = s->next;
    if (s->next)
        s->next->pprev = s->pprev;
    *s->cpprev = s->cnext;
    if (s->cnext)
        s->cnext->cpprev = s->cpprev;
    if (s->sent) {
        json_decref (s->sent);
        st->ops.watch (st->arg, -1);
    }
    free (s);
    if (!cs->head) {
        hashmap_del (st->conns, cs->key);
        free (cs);
    }
}

void streams_add (struct streams *st,
                  struct jobentry *je,
                  struct conn *c,
                  int64_t matchtag,
                  bool reattached,
                  bool events,
                  json_t *sent)
{
    char key[24];
    struct connsubs *cs;
    struct sub *s;

    snprintf (key, sizeof (key), "%ju", (uintmax_t)conn_id (c));
    if (!(cs = hashmap_get (st->conns, key))) {
        if (!(cs = calloc (1, sizeof (*cs))))
            goto nomem;
        memcpy (cs->key, key, sizeof (key));
        if (hashmap_put (st->conns, cs->key, cs) < 0) {
            free (cs);
            goto nomem;
        }
    }
    if (!(s = calloc (1, sizeof (*s)))) {
        if (!cs->head) {
            hashmap_del (st->conns, cs->key);
            free (cs);
        }
        goto nomem;
    }
    if ((s->sent = sent))
        st->ops.watch (st->arg, 1);
    s->je = je;
    s->conn = c;
    s->matchtag = matchtag;
    s->reattached = reattached;
    s->events = events;
    s->cs = cs;
    s->next = je->subs;
    s->pprev = &je->subs;
    if (je->subs)
        je->subs->pprev = &s->next;
    je->subs = s;
    s->cnext = cs->head;
    s->cpprev = &cs->head;
    if (cs->head)
        cs->head->cpprev = &s->cnext;
    cs->head = s;
    return;
nomem:
    json_decref (sent);
    log_msg (LOG_ERR, "out of memory adding a subscriber");
}

void streams_drop_job (struct streams *st, struct jobentry *je)
{
    while (je->subs)
        sub_free (st, je->subs);
}

void streams_conn_gone (struct streams *st, struct conn *c)
{
    char key[24];
    struct connsubs *cs;
    snprintf (key, sizeof (key), "%ju", (uintmax_t)conn_id (c));
    /* the last sub_free frees cs and removes the key */
    while ((cs = hashmap_get (st->conns, key)))
        sub_free (st, cs->head);
}

bool streams_conn_busy (const struct streams *st, struct conn *c)
{
    char key[24];
    snprintf (key, sizeof (key), "%ju", (uintmax_t)conn_id (c));
    return hashmap_get (st->conns, key) != NULL;
}

struct sub *streams_next_conn (struct streams *st, size_t *pos)
{
    struct connsubs *cs = hashmap_next (st->conns, pos, NULL);
    return cs ? cs->head : NULL;
}
