/* bind.c - one Flux instance per cairnd (bind.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "exec/bind.h"
#include "exec/jobtable.h"
#include "server/server.h"

/* One bound connection. A few at most (the rank-0 module; its reconnects
 * overlap the old connection's close only briefly): a list. */
struct binding {
    uint64_t conn;
    char *uuid, *name;
    struct binding *next;
};

struct bindings {
    struct binding *head;
    struct jobtable *jobs; /* their instances count as served too */
};

static void binding_free (struct binding *b)
{
    if (b) {
        free (b->uuid);
        free (b->name);
        free (b);
    }
}

static bool valid (const char *s, size_t max)
{
    size_t n = s ? strlen (s) : 0;
    return n > 0 && n <= max;
}

/* Who else is served: a binding of another connection to another
 * instance, or an active job of another instance. */
static int others (struct bindings *bs,
                   uint64_t conn,
                   const char *uuid,
                   const char *name,
                   struct cairn_error *err)
{
    for (struct binding *b = bs->head; b; b = b->next) {
        if (b->conn != conn && strcmp (b->uuid, uuid) != 0)
            return errset (err, EBUSY,
                           "bind: cairnd serves Flux instance %s (%.48s, "
                           "connected); refused %s (%.48s): one instance "
                           "per cairnd, see cairn-exec(8)",
                           b->uuid, b->name, uuid, name);
    }
    size_t pos = 0;
    struct jobentry *je;
    while ((je = jobtable_next (bs->jobs, &pos))) {
        const char *inst = job_instance (je->job);
        if (inst && strcmp (inst, uuid) != 0)
            return errset (err, EBUSY,
                           "bind: cairnd serves Flux instance %s (its job "
                           "%ju is active); refused %s (%.48s): one instance "
                           "per cairnd, see cairn-exec(8)",
                           inst, (uintmax_t)job_id (je->job), uuid, name);
    }
    return 0;
}

int bind_conn (struct bindings *bs,
               struct conn *c,
               const char *uuid,
               const char *name,
               struct cairn_error *err)
{
    struct binding *b;

    if (!valid (uuid, BIND_UUID_MAX) || !valid (name, BIND_NAME_MAX))
        return errset (err, EINVAL,
                       "bind: \"instance\" must be a string of 1 to %d "
                       "bytes and \"name\" one of 1 to %d",
                       BIND_UUID_MAX, BIND_NAME_MAX);
    if (others (bs, conn_id (c), uuid, name, err) < 0)
        return -1;
    if (!(b = calloc (1, sizeof (*b))) || !(b->uuid = strdup (uuid)) ||
        !(b->name = strdup (name))) {
        binding_free (b);
        return errset (err, ENOMEM, "bind: out of memory");
    }
    bind_conn_gone (bs, c); /* bound again: the new one replaces it */
    b->conn = conn_id (c);
    b->next = bs->head;
    bs->head = b;
    return 0;
}

int bind_check_start (struct bindings *bs,
                      struct conn *c,
                      const char *instance,
                      struct cairn_error *err)
{
    if (!instance)
        return 0;
    for (struct binding *b = bs->head; b; b = b->next) {
        if (b->conn != conn_id (c))
            continue;
        if (strcmp (b->uuid, instance) == 0)
            return 0;
        return errset (err, EBUSY,
                       "start: the job is Flux instance %s's, this "
                       "connection is bound to instance %s",
                       instance, b->uuid);
    }
    return errset (err, EBUSY,
                   "start: the job is Flux instance %s's and this connection "
                   "is bound to no instance (send bind first)",
                   instance);
}

void bind_conn_gone (struct bindings *bs, struct conn *c)
{
    uint64_t id = conn_id (c);
    for (struct binding **pp = &bs->head; *pp;) {
        struct binding *b = *pp;
        if (b->conn == id) {
            *pp = b->next;
            binding_free (b);
        } else
            pp = &b->next;
    }
}

int bind_check_undrain (struct bindings *bs,
                        struct conn *c,
                        struct cairn_error *err)
{
    const struct binding *served = NULL;
    for (const struct binding *b = bs->head; b; b = b->next) {
        if (b->conn == conn_id (c))
            return 0;
        served = b;
    }
    if (!served)
        return 0;
    return errset (err, EBUSY,
                   "undrain: cairnd serves Flux instance %s (%.48s), whose "
                   "drain list is the one: undrain there (flux resource "
                   "undrain RANKS), and cairnd follows (cairn-exec(8))",
                   served->uuid, served->name);
}

json_t *bind_describe (struct bindings *bs)
{
    struct binding *b = bs->head;
    return b ? json_pack ("{s:s s:s}", "uuid", b->uuid, "name", b->name) : NULL;
}

struct bindings *bind_create (struct jobtable *jobs)
{
    struct bindings *bs = calloc (1, sizeof (*bs));
    if (bs)
        bs->jobs = jobs;
    return bs;
}

void bind_destroy (struct bindings *bs)
{
    if (!bs)
        return;
    int saved = errno;
    while (bs->head) {
        struct binding *b = bs->head;
        bs->head = b->next;
        binding_free (b);
    }
    free (bs);
    errno = saved;
}
