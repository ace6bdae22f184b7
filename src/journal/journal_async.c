/* journal_async.c - the committer thread (journal.h, "Asynchronous
 * commit").
 *
 * Two batches: j->batch, which the caller fills, and j->flight, which the
 * committer writes. journal_commit_start swaps them (so both keep their
 * memory from commit to commit), journal_commit_finish empties flight.
 * The committer touches flight's ops, lines and commit view only; the
 * batch view of flight (what each job will be) is read by the caller's
 * thread while it fills the next batch (journal_write.c, batch_job).
 *
 * Handover under c->lock: `work` is set by start and cleared by the
 * committer, `ended` set by the committer and cleared by finish. done()
 * runs under the lock, so that once finish has returned no done() call is
 * left running.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "journal/journal_private.h"

struct jcommitter {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool work;  /* flight is the committer's to write */
    bool ended; /* its commit ended: rc, errnum and err say how */
    bool quit;
    int rc;
    int errnum;
    struct cairn_error err;
    journal_done_f done;
    void *arg;
};

static void *committer_main (void *arg)
{
    struct journal *j = arg;
    struct jcommitter *c = j->committer;

    pthread_mutex_lock (&c->lock);
    for (;;) {
        while (!c->work && !c->quit)
            pthread_cond_wait (&c->cond, &c->lock);
        if (!c->work)
            break;
        pthread_mutex_unlock (&c->lock);
        struct cairn_error err = {.text = ""};
        int rc = journal_commit_batch (j, &j->flight, true, &err);
        int errnum = errno;
        pthread_mutex_lock (&c->lock);
        c->rc = rc;
        c->errnum = errnum;
        c->err = err;
        c->work = false;
        c->ended = true;
        pthread_cond_broadcast (&c->cond);
        if (c->done)
            c->done (c->arg);
    }
    pthread_mutex_unlock (&c->lock);
    return NULL;
}

/* The thread runs with every signal blocked: the caller's loop takes
 * them (signalfd, ev_signal), never a thread that writes the journal. */
static int committer_create (struct journal *j, struct cairn_error *err)
{
    struct jcommitter *c = calloc (1, sizeof (*c));
    sigset_t all, old;
    int e;

    if (!c)
        return errset (err, ENOMEM, "journal: out of memory");
    pthread_mutex_init (&c->lock, NULL);
    pthread_cond_init (&c->cond, NULL);
    j->committer = c;
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    e = pthread_create (&c->thread, NULL, committer_main, j);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (e != 0) {
        j->committer = NULL;
        pthread_cond_destroy (&c->cond);
        pthread_mutex_destroy (&c->lock);
        free (c);
        return errset (err, e, "journal at %s: committer thread: %s", j->path,
                       strerror (e));
    }
    return 0;
}

void journal_committer_free (struct journal *j)
{
    struct jcommitter *c = j->committer;

    if (!c)
        return;
    /* in a forked child the thread is not there to join (journal.h) */
    if (journal_check_pid (j) == 0) {
        pthread_mutex_lock (&c->lock);
        c->quit = true;
        c->done = NULL; /* a commit still in flight wakes nobody */
        pthread_cond_broadcast (&c->cond);
        pthread_mutex_unlock (&c->lock);
        pthread_join (c->thread, NULL);
        pthread_cond_destroy (&c->cond);
        pthread_mutex_destroy (&c->lock);
    }
    j->committer = NULL;
    j->in_flight = false;
    free (c);
}

int journal_commit_start (struct journal *j,
                          journal_done_f done,
                          void *arg,
                          struct cairn_error *err)
{
    int rc = journal_commit_check (j, err);
    if (rc <= 0)
        return rc;
    if (!j->committer && committer_create (j, err) < 0)
        return -1;
    struct jbatch empty = j->flight;
    j->flight = j->batch;
    j->batch = empty;
    j->in_flight = true;

    struct jcommitter *c = j->committer;
    pthread_mutex_lock (&c->lock);
    c->done = done;
    c->arg = arg;
    c->ended = false;
    c->work = true;
    pthread_cond_broadcast (&c->cond);
    pthread_mutex_unlock (&c->lock);
    return 0;
}

bool journal_committing (const struct journal *j)
{
    return j && j->in_flight;
}

int journal_commit_finish (struct journal *j, struct cairn_error *err)
{
    struct jcommitter *c;
    int rc, errnum;

    if (!j || !j->in_flight)
        return 0;
    c = j->committer;
    pthread_mutex_lock (&c->lock);
    while (!c->ended)
        pthread_cond_wait (&c->cond, &c->lock);
    c->ended = false;
    rc = c->rc;
    errnum = c->errnum;
    if (err)
        *err = c->err;
    pthread_mutex_unlock (&c->lock);

    if (rc == JOURNAL_COMMIT_ON_CALLER)
        rc = journal_commit_sync (j, &j->flight, err);
    else if (rc < 0)
        errno = errnum;
    journal_batch_clear (&j->flight); /* written, or dropped */
    j->in_flight = false;
    return rc < 0 ? -1 : 0;
}
