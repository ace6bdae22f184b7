/* killwait.c - kills that wait for their job's shells to start
 * (daemon_private.h). The held kills are few and short-lived: a list per
 * job, and a count in cairnd so that a connection's end looks at the jobs
 * only while some are held.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/job.h"
#include "exec/daemon_private.h"
#include "util/hashmap.h"

struct killwait {
    struct killwait *next;
    struct conn *conn; /* NULL once its client went away */
    int64_t matchtag;
    int signum;
};

int killwait_add (struct jobentry *je,
                  struct conn *c,
                  int64_t matchtag,
                  int signum)
{
    struct killwait **tail = &je->kills;
    int n = 0;

    for (; *tail; tail = &(*tail)->next)
        n++;
    if (n >= KILLWAIT_MAX) {
        errno = EAGAIN;
        return -1;
    }
    struct killwait *k = calloc (1, sizeof (*k));
    if (!k)
        return -1;
    k->conn = c;
    k->matchtag = matchtag;
    k->signum = signum;
    *tail = k; /* carried out in the order they came */
    je->d->nkillwait++;
    return 0;
}

void killwait_run (struct jobentry *je)
{
    if (!je->kills || job_shells_starting (je->job))
        return;
    struct killwait *k = je->kills;
    je->kills = NULL;
    while (k) {
        struct killwait *next = k->next;
        if (k->conn)
            service_kill (je->d, je, k->conn, k->matchtag, k->signum);
        je->d->nkillwait--;
        free (k);
        k = next;
    }
}

void killwait_conn_gone (struct cairnd *d, struct conn *c)
{
    size_t pos = 0;
    struct jobentry *je;

    if (d->nkillwait == 0 || !d->jobs)
        return;
    while ((je = hashmap_next (d->jobs, &pos, NULL)))
        for (struct killwait *k = je->kills; k; k = k->next)
            if (k->conn == c)
                k->conn = NULL;
}

void killwait_drop (struct jobentry *je)
{
    while (je->kills) {
        struct killwait *k = je->kills;
        je->kills = k->next;
        je->d->nkillwait--;
        free (k);
    }
}
