/* janitor.c - see janitor.h
 *
 * Two arrays of execids: `local`, filled by janitor_push() and touched by
 * the loop's thread alone (no lock per process), and `shared`, which
 * janitor_kick() appends the local ones to under the lock. The thread
 * swaps `shared` with its own `work` array, so that it removes files with
 * the lock released and both arrays are reused, not reallocated.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/crashpoint.h"
#include "supervise/exitfile.h"
#include "supervise/janitor.h"
#include "supervise/shim_proto.h"
#include "util/log.h"

typedef char execid_t[SHIM_EXECID_LEN + 1];

struct idlist {
    execid_t *v;
    size_t n, cap;
};

struct janitor {
    int dirfd;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct idlist shared; /* under lock */
    bool stop;            /* under lock */
    struct idlist local;  /* the loop's thread only */
    struct idlist work;   /* the janitor's thread only */
};

static int idlist_reserve (struct idlist *l, size_t more)
{
    if (l->n + more <= l->cap)
        return 0;
    size_t cap = l->cap ? l->cap : 64;
    while (cap < l->n + more)
        cap *= 2;
    execid_t *v = realloc (l->v, cap * sizeof (*v));
    if (!v)
        return -1;
    l->v = v;
    l->cap = cap;
    return 0;
}

static void idlist_remove_all (int dirfd, struct idlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        (void)exitfile_remove (dirfd, l->v[i]);
    l->n = 0;
}

static void *janitor_main (void *arg)
{
    struct janitor *j = arg;

    pthread_mutex_lock (&j->lock);
    for (;;) {
        while (j->shared.n == 0 && !j->stop)
            pthread_cond_wait (&j->cond, &j->lock);
        if (j->shared.n == 0)
            break; /* stopped, nothing left */
        struct idlist t = j->work;
        j->work = j->shared;
        j->shared = t;
        pthread_mutex_unlock (&j->lock);
        idlist_remove_all (j->dirfd, &j->work);
        pthread_mutex_lock (&j->lock);
    }
    pthread_mutex_unlock (&j->lock);
    return NULL;
}

struct janitor *janitor_create (int dirfd, struct cairn_error *err)
{
    struct janitor *j = calloc (1, sizeof (*j));
    sigset_t all, old;
    int e;

    if (!j) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init (&j->lock, NULL);
    pthread_cond_init (&j->cond, NULL);
    if ((j->dirfd = fcntl (dirfd, F_DUPFD_CLOEXEC, 0)) < 0) {
        errprintf (err, "janitor: dup: %s", strerror (errno));
        goto error;
    }
    /* every signal stays the loop's (signalfd/ev_signal there) */
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    /* CAIRN_FAULT=janitor.thread:K:ERRNO: as if the K-th had no thread */
    if (!(e = fault_only ("janitor.thread")))
        e = pthread_create (&j->thread, NULL, janitor_main, j);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    /* Without a thread (a task limit), removals stay on the caller's
     * thread, in janitor_kick, as they were before: slower, not wrong. */
    if (e != 0)
        log_msg (LOG_WARNING,
                 "no janitor thread (%s): finished commands' files are "
                 "removed by the loop",
                 strerror (e));
    j->started = e == 0;
    return j;
error:
    janitor_destroy (j);
    return NULL;
}

void janitor_push (struct janitor *j, const char *execid)
{
    if (!execid || !shim_execid_valid (execid))
        return;
    if (!j || idlist_reserve (&j->local, 1) < 0) {
        if (j)
            (void)exitfile_remove (j->dirfd, execid);
        return;
    }
    memcpy (j->local.v[j->local.n++], execid, sizeof (execid_t));
}

void janitor_kick (struct janitor *j)
{
    if (!j || j->local.n == 0)
        return;
    if (!j->started) {
        idlist_remove_all (j->dirfd, &j->local);
        return;
    }
    pthread_mutex_lock (&j->lock);
    bool behind = j->shared.n >= JANITOR_BACKLOG_MAX;
    if (!behind && idlist_reserve (&j->shared, j->local.n) == 0) {
        memcpy (j->shared.v + j->shared.n, j->local.v,
                j->local.n * sizeof (execid_t));
        j->shared.n += j->local.n;
        j->local.n = 0;
        pthread_cond_signal (&j->cond);
    }
    pthread_mutex_unlock (&j->lock);
    /* behind, or no memory to hand them over: ours to remove */
    idlist_remove_all (j->dirfd, &j->local);
}

void janitor_destroy (struct janitor *j)
{
    if (!j)
        return;
    int saved = errno;
    if (j->started) {
        pthread_mutex_lock (&j->lock);
        j->stop = true;
        pthread_cond_signal (&j->cond);
        pthread_mutex_unlock (&j->lock);
        pthread_join (j->thread, NULL);
    }
    /* the thread is gone: what it left (nothing, once started) and what
     * was pushed but never handed over */
    if (j->dirfd >= 0) {
        idlist_remove_all (j->dirfd, &j->shared);
        idlist_remove_all (j->dirfd, &j->local);
        close (j->dirfd);
    }
    pthread_mutex_destroy (&j->lock);
    pthread_cond_destroy (&j->cond);
    free (j->shared.v);
    free (j->local.v);
    free (j->work.v);
    free (j);
    errno = saved;
}
