/* jobtable.c - the daemon's active jobs in memory (jobtable.h): a map by
 * decimal id, the dirty list threaded through the entries (no allocation
 * per turn), and one ev_timer per entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/job.h"
#include "core/jobid.h"
#include "exec/jobctx.h"
#include "exec/jobtable.h"
#include "util/hashmap.h"

struct jobtable {
    struct ev_loop *loop;
    struct jobtable_ops ops;
    void *arg;
    struct hashmap *map;    /* key -> jobentry */
    struct jobentry *dirty; /* jobs with events to stage this turn */
};

struct jobtable *jobtable_create (struct ev_loop *loop,
                                  const struct jobtable_ops *ops,
                                  void *arg)
{
    struct jobtable *t = calloc (1, sizeof (*t));
    if (!t || !(t->map = hashmap_create ())) {
        free (t);
        errno = ENOMEM;
        return NULL;
    }
    t->loop = loop;
    t->ops = *ops;
    t->arg = arg;
    return t;
}

void jobtable_destroy (struct jobtable *t)
{
    if (!t)
        return;
    int saved = errno;
    size_t pos = 0;
    struct jobentry *je;
    while ((je = hashmap_next (t->map, &pos, NULL))) {
        je->dirty = false; /* its events go with it: the daemon is going */
        jobtable_remove (je);
    }
    hashmap_destroy (t->map);
    free (t);
    errno = saved;
}

struct jobentry *jobtable_get (struct jobtable *t, uint64_t id)
{
    char key[24];
    snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
    return hashmap_get (t->map, key);
}

static void timer_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct jobentry *je = w->data;
    je->table->ops.due (je->table->arg, je);
}

struct jobentry *jobtable_add (struct jobtable *t, struct job *job)
{
    struct jobentry *je = calloc (1, sizeof (*je));
    if (!je || !(je->pending = json_array ()))
        goto error;
    je->table = t;
    je->job = job;
    snprintf (je->key, sizeof (je->key), "%ju", (uintmax_t)job_id (job));
    char f58[JOBID_STRLEN];
    if (jobid_encode_f58 (job_id (job), f58, sizeof (f58)) < 0)
        f58[0] = '\0';
    snprintf (je->name, sizeof (je->name), "%s (%s)", je->key, f58);
    ev_timer_init (&je->timer, timer_cb, 0, 0);
    je->timer.data = je;
    if (hashmap_put (t->map, je->key, je) < 0)
        goto error;
    return je;
error:
    if (je)
        json_decref (je->pending);
    free (je);
    errno = ENOMEM;
    return NULL;
}

void jobtable_remove (struct jobentry *je)
{
    struct jobtable *t = je->table;
    t->ops.forget (t->arg, je);
    ev_timer_stop (t->loop, &je->timer);
    hashmap_del (t->map, je->key);
    json_decref (je->pending);
    job_destroy (je->job);
    free (je);
}

size_t jobtable_count (const struct jobtable *t)
{
    return hashmap_count (t->map);
}

struct jobentry *jobtable_next (struct jobtable *t, size_t *pos)
{
    return hashmap_next (t->map, pos, NULL);
}

void jobtable_dirty (struct jobentry *je)
{
    if (!je->dirty && json_array_size (je->pending) > 0) {
        je->dirty = true;
        je->dirty_next = je->table->dirty;
        je->table->dirty = je;
    }
}

struct jobentry *jobtable_dirty_first (const struct jobtable *t)
{
    return t->dirty;
}

struct jobentry *jobtable_dirty_take (struct jobtable *t)
{
    struct jobentry *je = t->dirty;
    if (je) {
        t->dirty = je->dirty_next;
        je->dirty = false;
        je->dirty_next = NULL;
    }
    return je;
}

void jobtable_rearm (struct jobentry *je)
{
    struct ev_loop *loop = je->table->loop;
    double deadline = job_next_deadline (je->job);
    ev_timer_stop (loop, &je->timer);
    if (deadline > 0) {
        double delay = deadline - jobctx_now (); /* the jobs' clock */
        /* a hair late rather than early: an early wake-up decides nothing */
        ev_timer_set (&je->timer, (delay > 0 ? delay : 0) + 0.001, 0);
        ev_timer_start (loop, &je->timer);
    }
}

uint32_t jobtable_acted (const struct jobentry *je)
{
    return job_nevents (je->job) - (uint32_t)json_array_size (je->pending) -
           (uint32_t)je->unacted;
}
