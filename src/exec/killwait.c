/* killwait.c - kills that wait for their job's shells to start
 * (killwait.h). The held kills are few and short-lived: one list, in the
 * order they came, and a count so that the daemon's question of every job
 * it stages (killwait_holds) costs nothing while none is held.
 */
#include <errno.h>
#include <stdlib.h>

#include "exec/killwait.h"

struct held {
    struct held *next;
    struct jobentry *je;
    struct conn *conn; /* NULL once its client went away */
    int64_t matchtag;
    int signum;
};

struct killwait {
    struct killwait_ops ops;
    void *arg;
    struct held *head, **tail; /* every job's, oldest first */
    size_t n;                  /* on the list */
};

struct killwait *killwait_create (const struct killwait_ops *ops, void *arg)
{
    struct killwait *kw = calloc (1, sizeof (*kw));
    if (!kw)
        return NULL;
    kw->ops = *ops;
    kw->arg = arg;
    kw->tail = &kw->head;
    return kw;
}

void killwait_destroy (struct killwait *kw)
{
    if (!kw)
        return;
    int saved = errno;
    while (kw->head) {
        struct held *h = kw->head;
        kw->head = h->next;
        free (h);
    }
    free (kw);
    errno = saved;
}

int killwait_add (struct killwait *kw,
                  struct jobentry *je,
                  struct conn *c,
                  int64_t matchtag,
                  int signum)
{
    int n = 0;

    for (struct held *h = kw->head; h; h = h->next)
        n += h->je == je;
    if (n >= KILLWAIT_MAX) {
        errno = EAGAIN;
        return -1;
    }
    struct held *h = calloc (1, sizeof (*h));
    if (!h)
        return -1;
    h->je = je;
    h->conn = c;
    h->matchtag = matchtag;
    h->signum = signum;
    *kw->tail = h;
    kw->tail = &h->next;
    kw->n++;
    return 0;
}

bool killwait_holds (const struct killwait *kw, const struct jobentry *je)
{
    if (kw->n == 0)
        return false;
    for (const struct held *h = kw->head; h; h = h->next)
        if (h->je == je)
            return true;
    return false;
}

/* Take je's held kills off the list, in their order. */
static struct held *take (struct killwait *kw, const struct jobentry *je)
{
    struct held *mine = NULL, **mtail = &mine;
    struct held **pp = &kw->head;

    while (*pp) {
        struct held *h = *pp;
        if (h->je != je) {
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        h->next = NULL;
        *mtail = h;
        mtail = &h->next;
        kw->n--;
    }
    kw->tail = pp; /* pp ends at the last next pointer */
    return mine;
}

void killwait_run (struct killwait *kw, struct jobentry *je)
{
    struct held *h = kw->n > 0 ? take (kw, je) : NULL;

    /* taken first: a kill carried out may hold another (a new request) */
    while (h) {
        struct held *next = h->next;
        if (h->conn)
            kw->ops.kill (kw->arg, je, h->conn, h->matchtag, h->signum);
        free (h);
        h = next;
    }
}

void killwait_conn_gone (struct killwait *kw, struct conn *c)
{
    for (struct held *h = kw->head; h; h = h->next)
        if (h->conn == c)
            h->conn = NULL;
}

void killwait_drop (struct killwait *kw, const struct jobentry *je)
{
    struct held *h = kw->n > 0 ? take (kw, je) : NULL;
    while (h) {
        struct held *next = h->next;
        free (h);
        h = next;
    }
}

size_t killwait_count (const struct killwait *kw)
{
    size_t n = 0;
    for (const struct held *h = kw->head; h; h = h->next)
        n += h->conn != NULL;
    return n;
}
