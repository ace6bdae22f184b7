/* outbox.c - journal, then act (outbox.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/outbox.h"
#include "journal/crashpoint.h"

struct item {
    outbox_fn fn;
    void *arg;
    int op;
    json_t *data;
    char key[64];
};

struct lane {
    struct item *items;
    size_t n, cap;
};

struct outbox_batch {
    struct lane lanes[OUTBOX_NLANES];
};

struct outbox {
    struct outbox_batch *cur; /* NULL until something is queued */
};

struct outbox *outbox_create (void)
{
    return calloc (1, sizeof (struct outbox));
}

static void batch_free (struct outbox_batch *b)
{
    if (!b)
        return;
    for (int l = 0; l < OUTBOX_NLANES; l++) {
        for (size_t i = 0; i < b->lanes[l].n; i++)
            json_decref (b->lanes[l].items[i].data);
        free (b->lanes[l].items);
    }
    free (b);
}

void outbox_destroy (struct outbox *ob)
{
    if (ob) {
        batch_free (ob->cur);
        free (ob);
    }
}

/* Room for one more item in lane: its slot, not counted yet. */
static struct item *reserve (struct outbox *ob, enum outbox_lane lane)
{
    if (!ob->cur && !(ob->cur = calloc (1, sizeof (*ob->cur))))
        return NULL;
    struct lane *ln = &ob->cur->lanes[lane];
    if (ln->n == ln->cap) {
        size_t cap = ln->cap ? ln->cap * 2 : 16;
        struct item *it = realloc (ln->items, cap * sizeof (*it));
        if (!it)
            return NULL;
        ln->items = it;
        ln->cap = cap;
    }
    return &ln->items[ln->n];
}

static void place (struct outbox *ob,
                   enum outbox_lane lane,
                   struct item *slot,
                   const struct outbox_effect *e)
{
    slot->fn = e->fn;
    slot->arg = e->arg;
    slot->op = e->op;
    slot->data = e->data;
    snprintf (slot->key, sizeof (slot->key), "%s", e->key ? e->key : "");
    ob->cur->lanes[lane].n++;
}

int outbox_put (struct outbox *ob,
                enum outbox_lane lane,
                outbox_stage_fn stage,
                void *stage_arg,
                const struct outbox_effect *e)
{
    struct item *slot = NULL;
    int errnum;

    if (e && e->fn && !(slot = reserve (ob, lane))) {
        errnum = ENOMEM;
        goto fail;
    }
    if ((errnum = fault_only ("outbox.stage")))
        goto fail;
    if (stage (stage_arg) < 0) {
        errnum = errno ? errno : EIO;
        goto fail;
    }
    if (slot)
        place (ob, lane, slot, e);
    else if (e)
        json_decref (e->data);
    return 0;
fail:
    if (e)
        json_decref (e->data);
    errno = errnum;
    return -1;
}

int outbox_after (struct outbox *ob,
                  enum outbox_lane lane,
                  const struct outbox_effect *e)
{
    struct item *slot = reserve (ob, lane);
    if (!slot) {
        json_decref (e->data);
        errno = ENOMEM;
        return -1;
    }
    place (ob, lane, slot, e);
    return 0;
}

bool outbox_busy (const struct outbox *ob)
{
    if (!ob->cur)
        return false;
    for (int l = 0; l < OUTBOX_NLANES; l++)
        if (ob->cur->lanes[l].n > 0)
            return true;
    return false;
}

struct outbox_batch *outbox_take (struct outbox *ob)
{
    struct outbox_batch *b = ob->cur;
    ob->cur = NULL;
    return b;
}

void outbox_run (struct outbox_batch *b)
{
    if (!b)
        return;
    for (int l = 0; l < OUTBOX_NLANES; l++) {
        struct lane *ln = &b->lanes[l];
        for (size_t i = 0; i < ln->n; i++) {
            struct item *it = &ln->items[i];
            it->fn (it->arg, it->key, it->op, it->data);
            json_decref (it->data);
            it->data = NULL;
        }
    }
    batch_free (b);
}

void outbox_drop (struct outbox_batch *b)
{
    if (b)
        batch_free (b);
}
