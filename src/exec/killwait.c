/* killwait.c - kills that wait for their job's shells to start
 * (daemon_private.h). The held kills are few and short-lived: a list per
 * job, and the jobs that hold any on a list of cairnd's, so that a
 * connection's end looks at those jobs only, never at all of them.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/job.h"
#include "exec/daemon_private.h"

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
    if (!je->kills) {
        je->kills_next = je->d->kill_jobs;
        je->d->kill_jobs = je;
    }
    *tail = k; /* carried out in the order they came */
    return 0;
}

/* Take je's held kills, and je off cairnd's list. */
static struct killwait *take (struct jobentry *je)
{
    struct killwait *k = je->kills;
    struct jobentry **pp = &je->d->kill_jobs;

    if (!k)
        return NULL;
    while (*pp && *pp != je)
        pp = &(*pp)->kills_next;
    if (*pp)
        *pp = je->kills_next;
    je->kills = NULL;
    je->kills_next = NULL;
    return k;
}

void killwait_run (struct jobentry *je)
{
    if (!je->kills || job_shells_starting (je->job))
        return;
    struct killwait *k = take (je);
    while (k) {
        struct killwait *next = k->next;
        if (k->conn)
            service_kill (je->d, je, k->conn, k->matchtag, k->signum);
        free (k);
        k = next;
    }
}

void killwait_conn_gone (struct cairnd *d, struct conn *c)
{
    for (struct jobentry *je = d->kill_jobs; je; je = je->kills_next)
        for (struct killwait *k = je->kills; k; k = k->next)
            if (k->conn == c)
                k->conn = NULL;
}

void killwait_drop (struct jobentry *je)
{
    struct killwait *k = take (je);
    while (k) {
        struct killwait *next = k->next;
        free (k);
        k = next;
    }
}

size_t killwait_count (const struct cairnd *d)
{
    size_t n = 0;
    for (const struct jobentry *je = d->kill_jobs; je; je = je->kills_next)
        for (const struct killwait *k = je->kills; k; k = k->next)
            n += k->conn != NULL;
    return n;
}
