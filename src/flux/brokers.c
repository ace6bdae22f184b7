/* brokers.c - see brokers.h */
#include <errno.h>
#include <stdlib.h>

#include "flux/brokers.h"

#define RETRY 0.5   /* seconds between two asks of one broker */
#define TIMEOUT 5.0 /* an ask not answered by then counts as a failure */

struct ask {
    struct brokers_wait *w;
    uint32_t rank;
    flux_future_t *f;
    flux_watcher_t *timer;
    bool done;
};

struct brokers_wait {
    flux_t *h;
    brokers_up_f cb;
    void *arg;
    struct ask *asks;
    size_t n, left;
    flux_watcher_t *fire; /* cb from the reactor, never from the call */
};

static void send_ask (struct ask *a);

static void answered (flux_future_t *f, void *arg)
{
    struct ask *a = arg;
    struct brokers_wait *w = a->w;

    a->f = NULL;
    if (flux_future_get (f, NULL) < 0) {
        flux_future_destroy (f);
        flux_timer_watcher_reset (a->timer, RETRY, 0);
        flux_watcher_start (a->timer);
        return;
    }
    flux_future_destroy (f);
    a->done = true;
    if (--w->left == 0)
        flux_watcher_start (w->fire);
}

static void
retry_cb (flux_reactor_t *r, flux_watcher_t *t, int revents, void *arg)
{
    send_ask (arg);
}

static void send_ask (struct ask *a)
{
    flux_future_t *f = flux_rpc_pack (a->w->h, "attr.get", a->rank, 0, "{s:s}",
                                      "name", "rank");
    if (!f || flux_future_then (f, TIMEOUT, answered, a) < 0) {
        flux_future_destroy (f);
        flux_timer_watcher_reset (a->timer, RETRY, 0);
        flux_watcher_start (a->timer);
        return;
    }
    a->f = f;
}

static void
fire_cb (flux_reactor_t *r, flux_watcher_t *t, int revents, void *arg)
{
    struct brokers_wait *w = arg;
    flux_watcher_stop (t);
    w->cb (w->arg);
}

struct brokers_wait *
brokers_wait (flux_t *h, const struct idset *ranks, brokers_up_f cb, void *arg)
{
    flux_reactor_t *r = flux_get_reactor (h);
    struct brokers_wait *w = calloc (1, sizeof (*w));

    if (!w)
        return NULL;
    w->h = h;
    w->cb = cb;
    w->arg = arg;
    w->n = w->left = idset_count (ranks);
    if (!(w->fire = flux_timer_watcher_create (r, 0, 0, fire_cb, w)) ||
        (w->n && !(w->asks = calloc (w->n, sizeof (*w->asks)))))
        goto error;
    size_t i = 0;
    for (uint32_t rank = idset_first (ranks); rank != IDSET_INVALID_ID;
         rank = idset_next (ranks, rank)) {
        struct ask *a = &w->asks[i++];
        a->w = w;
        a->rank = rank;
        if (!(a->timer = flux_timer_watcher_create (r, 0, 0, retry_cb, a)))
            goto error;
    }
    for (i = 0; i < w->n; i++)
        send_ask (&w->asks[i]);
    if (w->n == 0)
        flux_watcher_start (w->fire);
    return w;
error:
    brokers_wait_destroy (w);
    errno = ENOMEM;
    return NULL;
}

void brokers_wait_destroy (struct brokers_wait *w)
{
    if (!w)
        return;
    int saved = errno;
    for (size_t i = 0; i < w->n && w->asks; i++) {
        flux_future_destroy (w->asks[i].f);
        flux_watcher_destroy (w->asks[i].timer);
    }
    free (w->asks);
    flux_watcher_destroy (w->fire);
    free (w);
    errno = saved;
}
