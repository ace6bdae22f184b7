/* guest.c - see guest.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "flux/guest.h"

struct chain {
    flux_t *h;
    flux_jobid_t id;
    bool reattach;
    char ns[64];
    char key[64];
};

static struct chain *chain_create (flux_t *h, flux_jobid_t id, bool reattach)
{
    struct chain *c = calloc (1, sizeof (*c));
    if (!c)
        return NULL;
    c->h = h;
    c->id = id;
    c->reattach = reattach;
    if (flux_job_kvs_namespace (c->ns, sizeof (c->ns), id) < 0 ||
        flux_job_kvs_key (c->key, sizeof (c->key), id, "guest") < 0) {
        free (c);
        return NULL;
    }
    return c;
}

/* Chain f -> step on success and on failure alike (the step decides what
 * an error means). Returns the composite future, or NULL. */
static flux_future_t *
then_always (flux_future_t *f, flux_continuation_f step, struct chain *c)
{
    flux_future_t *next = flux_future_and_then (f, step, c);
    if (!next || !flux_future_or_then (f, step, c))
        return NULL;
    return next;
}

/* The last future of a chain owns the chain's state. */
static flux_future_t *chain_own (flux_future_t *last, struct chain *c)
{
    if (flux_future_aux_set (last, "cairn::chain", c, free) < 0) {
        flux_future_destroy (last);
        free (c);
        return NULL;
    }
    return last;
}

flux_future_t *guest_post (flux_t *h,
                           flux_jobid_t id,
                           const char *name,
                           const json_t *context)
{
    char ns[64], *line = NULL;
    json_t *entry;
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    double now = flux_reactor_now (flux_get_reactor (h));

    if (flux_job_kvs_namespace (ns, sizeof (ns), id) < 0)
        return NULL;
    entry = context ? json_pack ("{s:f s:s s:O}", "timestamp", now, "name",
                                 name, "context", context)
                    : json_pack ("{s:f s:s}", "timestamp", now, "name", name);
    if (!entry || !(line = json_dumps (entry, JSON_COMPACT)))
        goto nomem;
    size_t n = strlen (line);
    char *nl = realloc (line, n + 2);
    if (!nl)
        goto nomem;
    line = nl;
    memcpy (line + n, "\n", 2);
    if (!(txn = flux_kvs_txn_create ()) ||
        flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "exec.eventlog", line) < 0)
        goto done;
    f = flux_kvs_commit (h, ns, 0, txn);
    goto done;
nomem:
    errno = ENOMEM;
done:
    flux_kvs_txn_destroy (txn);
    free (line);
    json_decref (entry);
    return f;
}

/* ---- guest_create: namespace, then init, then symlink ---- */

static void link_step (flux_future_t *prev, void *arg)
{
    struct chain *c = arg;
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    flux_future_t *f = NULL;

    if (txn && flux_kvs_txn_symlink (txn, 0, c->key, c->ns, ".") == 0)
        f = flux_kvs_commit (c->h, NULL, 0, txn);
    flux_kvs_txn_destroy (txn);
    if (!f) {
        flux_future_continue_error (prev, errno, "cannot link job.<id>.guest");
        flux_future_destroy (prev);
        return;
    }
    flux_future_continue (prev, f);
    flux_future_destroy (prev);
}

static void init_step (flux_future_t *prev, void *arg)
{
    struct chain *c = arg;
    flux_future_t *f;

    if (flux_future_get (prev, NULL) < 0 && errno != EEXIST) {
        flux_future_continue_error (prev, errno, NULL);
        flux_future_destroy (prev);
        return;
    }
    f = guest_post (c->h, c->id, c->reattach ? "reattach" : "init", NULL);
    if (!f) {
        flux_future_continue_error (prev, errno, NULL);
        flux_future_destroy (prev);
        return;
    }
    flux_future_continue (prev, f);
    flux_future_destroy (prev);
}

flux_future_t *guest_create (flux_t *h,
                             flux_jobid_t id,
                             uint32_t userid,
                             bool reattach)
{
    struct chain *c = chain_create (h, id, reattach);
    flux_future_t *f, *f2, *f3;

    if (!c)
        return NULL;
    if (!(f = flux_kvs_namespace_create (h, c->ns, userid, 0)))
        goto error;
    /* EEXIST (a namespace left live by a reload) is adopted: init_step
     * runs on either outcome and lets EEXIST through */
    if (!(f2 = then_always (f, init_step, c))) {
        flux_future_destroy (f);
        goto error;
    }
    if (!(f3 = flux_future_and_then (f2, link_step, c))) {
        flux_future_destroy (f2);
        goto error;
    }
    return chain_own (f3, c);
error:
    free (c);
    return NULL;
}

/* ---- guest_finish: done, copy, remove ---- */

/* Steps of guest_finish log their error and go on: the job must be
 * released whatever happened; the last step's outcome is the future's. */
static void step_log (struct chain *c, flux_future_t *prev, const char *what)
{
    if (flux_future_get (prev, NULL) < 0)
        flux_log (c->h, LOG_ERR, "job %ju: %s: %s", (uintmax_t)c->id, what,
                  strerror (errno));
}

/* Go on with f (NULL: fail the chain with errno), done with prev. */
static void step_next (flux_future_t *prev, flux_future_t *f)
{
    if (f)
        flux_future_continue (prev, f);
    else
        flux_future_continue_error (prev, errno, NULL);
    flux_future_destroy (prev);
}

static void finish_remove (flux_future_t *prev, void *arg)
{
    struct chain *c = arg;

    step_log (c, prev, "graft of the guest namespace");
    step_next (prev, flux_kvs_namespace_remove (c->h, c->ns));
}

static void finish_copy (flux_future_t *prev, void *arg)
{
    struct chain *c = arg;

    step_log (c, prev, "exec.eventlog done");
    step_next (prev, flux_kvs_copy (c->h, c->ns, ".", NULL, c->key, 0));
}

flux_future_t *guest_finish (flux_t *h, flux_jobid_t id)
{
    struct chain *c = chain_create (h, id, false);
    flux_future_t *f, *f2, *f3;

    if (!c)
        return NULL;
    if (!(f = guest_post (h, id, "done", NULL)))
        goto error;
    if (!(f2 = then_always (f, finish_copy, c))) {
        flux_future_destroy (f);
        goto error;
    }
    if (!(f3 = then_always (f2, finish_remove, c))) {
        flux_future_destroy (f2);
        goto error;
    }
    return chain_own (f3, c);
error:
    free (c);
    return NULL;
}
