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

/* Append one RFC 18 entry to exec.eventlog in txn. */
static int append_entry (flux_kvs_txn_t *txn,
                         double now,
                         const char *name,
                         const json_t *context)
{
    json_t *entry =
        context ? json_pack ("{s:f s:s s:O}", "timestamp", now, "name", name,
                             "context", context)
                : json_pack ("{s:f s:s}", "timestamp", now, "name", name);
    char *line = entry ? json_dumps (entry, JSON_COMPACT) : NULL;
    int rc = -1;

    json_decref (entry);
    if (!line) {
        errno = ENOMEM;
        return -1;
    }
    size_t n = strlen (line);
    char *nl = realloc (line, n + 2);
    if (!nl) {
        free (line);
        errno = ENOMEM;
        return -1;
    }
    line = nl;
    memcpy (line + n, "\n", 2);
    rc = flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "exec.eventlog", line);
    free (line);
    return rc;
}

/* Append the entries named names[0..n-1] (context: NULL for all but the
 * last, which gets context) in one commit, so that they stay together
 * and in order. */
static flux_future_t *post_entries (flux_t *h,
                                    flux_jobid_t id,
                                    const char **names,
                                    size_t n,
                                    const json_t *context)
{
    char ns[64];
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    double now = flux_reactor_now (flux_get_reactor (h));

    if (flux_job_kvs_namespace (ns, sizeof (ns), id) < 0 ||
        !(txn = flux_kvs_txn_create ()))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (append_entry (txn, now, names[i], i + 1 == n ? context : NULL) < 0)
            goto done;
    f = flux_kvs_commit (h, ns, 0, txn);
done:
    flux_kvs_txn_destroy (txn);
    return f;
}

flux_future_t *
guest_post (flux_t *h, flux_jobid_t id, const char *name, const json_t *context)
{
    return post_entries (h, id, &name, 1, context);
}

/* ---- guest_create: namespace, then init and symlink at once ---- */

static flux_future_t *link_commit (struct chain *c)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    flux_future_t *f = NULL;

    if (txn && flux_kvs_txn_symlink (txn, 0, c->key, c->ns, ".") == 0)
        f = flux_kvs_commit (c->h, NULL, 0, txn);
    flux_kvs_txn_destroy (txn);
    return f;
}

/* The namespace exists: its first entries and the primary namespace's
 * symlink to it are two commits to two namespaces, sent together; the
 * step is done when both are (a wait-all future fails if either does). */
static void init_step (flux_future_t *prev, void *arg)
{
    struct chain *c = arg;
    flux_future_t *all = NULL, *f;

    if (flux_future_get (prev, NULL) < 0 && errno != EEXIST)
        goto error;
    /* a fresh start: `starting` too, as job-exec posts it before it
     * launches the shells (cairnd launches them after its prolog) */
    static const char *fresh[] = {"init", "starting"};
    static const char *again[] = {"reattach"};
    if (!(all = flux_future_wait_all_create ()))
        goto error;
    flux_future_set_flux (all, c->h);
    f = c->reattach ? post_entries (c->h, c->id, again, 1, NULL)
                    : post_entries (c->h, c->id, fresh, 2, NULL);
    if (!f || flux_future_push (all, "init", f) < 0) {
        flux_future_destroy (f);
        goto error;
    }
    if (!(f = link_commit (c)) || flux_future_push (all, "link", f) < 0) {
        flux_future_destroy (f);
        goto error;
    }
    flux_future_continue (prev, all);
    flux_future_destroy (prev);
    return;
error:
    flux_future_destroy (all);
    flux_future_continue_error (prev, errno, NULL);
    flux_future_destroy (prev);
}

flux_future_t *guest_create (flux_t *h,
                             flux_jobid_t id,
                             uint32_t userid,
                             bool reattach)
{
    struct chain *c = chain_create (h, id, reattach);
    flux_future_t *f, *f2;

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
    return chain_own (f2, c);
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
