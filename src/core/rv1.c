/* rv1.c - resource set R, version 1 (RFC 20).
 *
 * R comes from outside (a resource manager, a user's file), so decoding
 * never allocates by the value of a number it reads: idsets are stored as
 * runs, the index below has one record per run rather than per rank, and
 * the rank count is checked against RV1_MAX_RANKS before anything is sized
 * by it. A nodelist is decoded one hostlist at a time (each is capped by
 * the hostlist code) and refused as soon as it holds more hosts than R has
 * ranks; its hosts are gathered in one list indexed by rank position.
 *
 * Lookups by rank binary-search the runs of all R_lite entries, sorted by
 * their first rank. Each run also records the position of its first rank
 * among all ranks, which gives a rank's shell index and so its host.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostlist.h"
#include "core/rv1.h"

struct entry {
    struct idset *ranks;
    struct idset *cores;
    struct idset *gpus; // NULL when the entry has no "gpu"
    const json_t *obj;  // the R_lite entry, borrowed from R
};

struct run {
    uint32_t lo;
    uint32_t hi;
    size_t entry; // index into entries
    size_t index; // position of lo among all ranks, ascending
};

struct rv1 {
    json_t *R;
    struct entry *entries;
    size_t nentries;
    struct run *runs;
    size_t nruns;
    struct idset *ranks;
    size_t nranks;
    struct hostlist *hosts; // the whole nodelist: host i is rank index i
    struct idset *empty;    // returned for ranks without gpus
    double starttime;
    double expiration;
};

void rv1_destroy (struct rv1 *r)
{
    if (r) {
        int saved = errno;
        for (size_t i = 0; i < r->nentries; i++) {
            idset_destroy (r->entries[i].ranks);
            idset_destroy (r->entries[i].cores);
            idset_destroy (r->entries[i].gpus);
        }
        free (r->entries);
        free (r->runs);
        hostlist_destroy (r->hosts);
        idset_destroy (r->ranks);
        idset_destroy (r->empty);
        json_decref (r->R);
        free (r);
        errno = saved;
    }
}

/* Decode the idset string at key of o into *ids (NULL when an optional
 * key is absent); path names o in messages.
 */
static int idset_field (const json_t *o,
                        const char *path,
                        const char *key,
                        bool required,
                        struct idset **ids,
                        struct cairn_error *err)
{
    json_t *val = json_object_get (o, key);

    *ids = NULL;
    if (!val) {
        if (required)
            return errset (err, EINVAL, "R: %s.%s: missing", path, key);
        return 0;
    }
    if (!json_is_string (val))
        return errset (err, EINVAL, "R: %s.%s: not a string", path, key);
    if (!(*ids = idset_decode (json_string_value (val), err)))
        return errprefix (err, "R: %s.%s", path, key);
    return 0;
}

static int decode_entry (struct entry *e,
                         const json_t *obj,
                         size_t i,
                         struct cairn_error *err)
{
    char path[64];
    const json_t *children;

    snprintf (path, sizeof (path), "execution.R_lite[%zu]", i);
    e->obj = obj;
    if (!json_is_object (obj))
        return errset (err, EINVAL, "R: %s: not an object", path);
    if (idset_field (obj, path, "rank", true, &e->ranks, err) < 0)
        return -1;
    if (idset_empty (e->ranks))
        return errset (err, EINVAL, "R: %s.rank: empty", path);
    if (!(children = json_object_get (obj, "children")))
        return errset (err, EINVAL, "R: %s.children: missing", path);
    if (!json_is_object (children))
        return errset (err, EINVAL, "R: %s.children: not an object", path);
    snprintf (path, sizeof (path), "execution.R_lite[%zu].children", i);
    if (idset_field (children, path, "core", true, &e->cores, err) < 0 ||
        idset_field (children, path, "gpu", false, &e->gpus, err) < 0)
        return -1;
    return 0;
}

static int run_cmp (const void *a, const void *b)
{
    const struct run *x = a;
    const struct run *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Decode R_lite into entries, then index their runs. */
static int
decode_r_lite (struct rv1 *r, const json_t *R_lite, struct cairn_error *err)
{
    size_t nruns = 0;

    if (!R_lite)
        return errset (err, EINVAL, "R: execution.R_lite: missing");
    if (!json_is_array (R_lite) || json_array_size (R_lite) == 0)
        return errset (err, EINVAL,
                       "R: execution.R_lite: not a non-empty array");
    if (!(r->entries = calloc (json_array_size (R_lite), sizeof (*r->entries))))
        return -1;
    for (size_t i = 0; i < json_array_size (R_lite); i++) {
        struct entry *e = &r->entries[i];
        r->nentries++;
        if (decode_entry (e, json_array_get (R_lite, i), i, err) < 0)
            return -1;
        /* Each entry is at most ~2^32 ranks, so the sum cannot wrap. */
        r->nranks += idset_count (e->ranks);
        if (r->nranks > RV1_MAX_RANKS)
            return errset (err, EINVAL,
                           "R: execution.R_lite[%zu].rank: too many ranks"
                           " (the limit is %u)",
                           i, RV1_MAX_RANKS);
        nruns += idset_range_count (e->ranks);
    }
    if (!(r->runs = calloc (nruns, sizeof (*r->runs))))
        return -1;
    for (size_t i = 0; i < r->nentries; i++) {
        size_t n = idset_range_count (r->entries[i].ranks);
        for (size_t k = 0; k < n; k++) {
            struct run *run = &r->runs[r->nruns++];
            idset_range_get (r->entries[i].ranks, k, &run->lo, &run->hi);
            run->entry = i;
        }
    }
    qsort (r->runs, r->nruns, sizeof (*r->runs), run_cmp);
    /* Sorted by lo, runs overlap only if a run starts at or before the end
     * of the one before it (earlier runs are disjoint, so the one before
     * ends last).
     */
    size_t index = 0;
    for (size_t i = 0; i < r->nruns; i++) {
        struct run *run = &r->runs[i];
        if (i > 0 && run->lo <= r->runs[i - 1].hi) {
            size_t a = run->entry;
            size_t b = r->runs[i - 1].entry;
            return errset (err, EINVAL,
                           "R: execution.R_lite[%zu].rank: rank %u is also in"
                           " R_lite[%zu]",
                           a > b ? a : b, run->lo, a > b ? b : a);
        }
        run->index = index;
        index += (size_t)(run->hi - run->lo) + 1;
        if (idset_range_set (r->ranks, run->lo, run->hi) < 0)
            return -1;
    }
    return 0;
}

static int
decode_nodelist (struct rv1 *r, const json_t *nodelist, struct cairn_error *err)
{
    size_t total;

    if (!nodelist)
        return errset (err, EINVAL, "R: execution.nodelist: missing");
    if (!json_is_array (nodelist))
        return errset (err, EINVAL, "R: execution.nodelist: not an array");
    if (!(r->hosts = hostlist_create ()))
        return -1;
    for (size_t i = 0; i < json_array_size (nodelist); i++) {
        const json_t *s = json_array_get (nodelist, i);
        struct hostlist *hl;
        if (!json_is_string (s))
            return errset (err, EINVAL,
                           "R: execution.nodelist[%zu]: not a string", i);
        /* Decode at most the hosts still expected, so that a short string
         * naming a million hosts costs nothing for a small R. */
        size_t room = r->nranks - hostlist_count (r->hosts);
        if (!(hl = hostlist_decode_max (json_string_value (s), room, err))) {
            if (errno == E2BIG && room < HOSTLIST_MAX_HOSTS)
                return errset (err, EINVAL,
                               "R: execution.nodelist: more hosts than the %zu"
                               " ranks",
                               r->nranks);
            if (errno == E2BIG)
                errno = EINVAL; // past the hostlist limit itself
            return errprefix (err, "R: execution.nodelist[%zu]", i);
        }
        for (size_t k = 0; k < hostlist_count (hl); k++) {
            if (hostlist_append (r->hosts, hostlist_nth (hl, k)) < 0) {
                hostlist_destroy (hl);
                return -1;
            }
        }
        hostlist_destroy (hl);
    }
    if ((total = hostlist_count (r->hosts)) != r->nranks)
        return errset (err, EINVAL,
                       "R: execution.nodelist: %zu hosts for %zu ranks", total,
                       r->nranks);
    return 0;
}

static int time_field (const json_t *exec,
                       const char *key,
                       double *t,
                       struct cairn_error *err)
{
    json_t *val = json_object_get (exec, key);

    *t = 0.;
    if (!val)
        return 0;
    if (!json_is_number (val))
        return errset (err, EINVAL, "R: execution.%s: not a number", key);
    if (!(json_number_value (val) >= 0))
        return errset (err, EINVAL, "R: execution.%s: must be >= 0", key);
    *t = json_number_value (val);
    return 0;
}

struct rv1 *rv1_decode (const json_t *R, struct cairn_error *err)
{
    struct rv1 *r;
    const json_t *version;
    const json_t *exec;

    if (!json_is_object (R)) {
        errset (err, EINVAL, "R: not an object");
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r))) || !(r->ranks = idset_create ()) ||
        !(r->empty = idset_create ()))
        goto nomem;
    r->R = json_incref ((json_t *)R);
    if (!(version = json_object_get (R, "version"))) {
        errset (err, EINVAL, "R: version: missing");
        goto error;
    }
    if (!json_is_integer (version) || json_integer_value (version) != 1) {
        errset (err, EINVAL, "R: version: must be 1");
        goto error;
    }
    if (!(exec = json_object_get (R, "execution"))) {
        errset (err, EINVAL, "R: execution: missing");
        goto error;
    }
    if (!json_is_object (exec)) {
        errset (err, EINVAL, "R: execution: not an object");
        goto error;
    }
    errno = 0;
    if (decode_r_lite (r, json_object_get (exec, "R_lite"), err) < 0 ||
        decode_nodelist (r, json_object_get (exec, "nodelist"), err) < 0 ||
        time_field (exec, "starttime", &r->starttime, err) < 0 ||
        time_field (exec, "expiration", &r->expiration, err) < 0) {
        if (errno == ENOMEM)
            goto nomem;
        goto error;
    }
    return r;
nomem:
    errset (err, ENOMEM, "R: out of memory");
error:
    rv1_destroy (r);
    return NULL;
}

const json_t *rv1_json (const struct rv1 *r)
{
    return r ? r->R : NULL;
}

const struct idset *rv1_ranks (const struct rv1 *r)
{
    return r ? r->ranks : NULL;
}

size_t rv1_nranks (const struct rv1 *r)
{
    return r ? r->nranks : 0;
}

double rv1_starttime (const struct rv1 *r)
{
    return r ? r->starttime : 0.;
}

double rv1_expiration (const struct rv1 *r)
{
    return r ? r->expiration : 0.;
}

static const struct run *find_run (const struct rv1 *r, uint32_t rank)
{
    size_t lo = 0;
    size_t hi = r ? r->nruns : 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct run *run = &r->runs[mid];
        if (rank < run->lo)
            hi = mid;
        else if (rank > run->hi)
            lo = mid + 1;
        else
            return run;
    }
    errno = ENOENT;
    return NULL;
}

const struct idset *rv1_cores (const struct rv1 *r, uint32_t rank)
{
    const struct run *run = find_run (r, rank);
    return run ? r->entries[run->entry].cores : NULL;
}

const struct idset *rv1_gpus (const struct rv1 *r, uint32_t rank)
{
    const struct run *run = find_run (r, rank);
    if (!run)
        return NULL;
    return r->entries[run->entry].gpus ? r->entries[run->entry].gpus : r->empty;
}

int rv1_rank_index (const struct rv1 *r, uint32_t rank)
{
    const struct run *run = find_run (r, rank);
    return run ? (int)(run->index + (rank - run->lo)) : -1;
}

const char *rv1_hostname (const struct rv1 *r, uint32_t rank)
{
    const struct run *run = find_run (r, rank);

    if (!run)
        return NULL;
    return hostlist_nth (r->hosts, run->index + (rank - run->lo));
}

/* R_lite restricted to ranks: entries keep their keys, "rank" is narrowed,
 * entries left without ranks are dropped.
 */
static json_t *fragment_r_lite (const struct rv1 *r, const struct idset *ranks)
{
    json_t *a = json_array ();

    if (!a)
        return NULL;
    for (size_t i = 0; i < r->nentries; i++) {
        struct idset *both = idset_intersect (r->entries[i].ranks, ranks);
        char *s = NULL;
        json_t *e = NULL;
        if (!both)
            goto error;
        if (idset_empty (both)) {
            idset_destroy (both);
            continue;
        }
        if (!(s = idset_encode (both)) ||
            !(e = json_deep_copy (r->entries[i].obj)) ||
            json_object_set_new (e, "rank", json_string (s)) < 0 ||
            json_array_append_new (a, e) < 0) {
            idset_destroy (both);
            free (s);
            goto error;
        }
        idset_destroy (both);
        free (s);
    }
    return a;
error:
    json_decref (a);
    return NULL;
}

/* Close the hostlist being built into a nodelist string. */
static int nodelist_flush (json_t *a, struct hostlist **hl)
{
    char *s;
    int rc = -1;

    if (hostlist_count (*hl) == 0)
        return 0;
    if ((s = hostlist_encode (*hl)) &&
        json_array_append_new (a, json_string (s)) == 0) {
        hostlist_destroy (*hl);
        *hl = hostlist_create ();
        rc = *hl ? 0 : -1;
    }
    free (s);
    return rc;
}

/* The hosts of ranks, in rank order, as a nodelist: one compressed
 * hostlist, split where it would exceed what hostlist_decode() accepts so
 * that the fragment always decodes again.
 */
static json_t *fragment_nodelist (const struct rv1 *r,
                                  const struct idset *ranks)
{
    struct hostlist *hl = hostlist_create ();
    size_t n = idset_range_count (ranks);
    size_t bytes = 0;
    json_t *a = json_array ();

    if (!hl || !a)
        goto error;
    for (size_t k = 0; k < n; k++) {
        uint32_t lo, hi;
        idset_range_get (ranks, k, &lo, &hi);
        for (uint64_t id = lo; id <= hi; id++) {
            const char *host = rv1_hostname (r, (uint32_t)id);
            size_t size = strlen (host) + 1;
            if (hostlist_count (hl) == HOSTLIST_MAX_HOSTS ||
                bytes + size > HOSTLIST_MAX_BYTES) {
                if (nodelist_flush (a, &hl) < 0)
                    goto error;
                bytes = 0;
            }
            if (hostlist_append (hl, host) < 0)
                goto error;
            bytes += size;
        }
    }
    if (nodelist_flush (a, &hl) < 0)
        goto error;
    hostlist_destroy (hl);
    return a;
error:
    hostlist_destroy (hl);
    json_decref (a);
    return NULL;
}

json_t *rv1_fragment (const struct rv1 *r,
                      const struct idset *ranks,
                      struct cairn_error *err)
{
    json_t *out = NULL;
    json_t *exec = NULL;
    json_t *R_lite = NULL;
    json_t *nodelist = NULL;
    const char *key;
    json_t *val;

    if (!r || !ranks || idset_empty (ranks)) {
        errset (err, EINVAL, "R fragment: no ranks");
        return NULL;
    }
    if (!idset_is_subset (ranks, r->ranks)) {
        struct idset *extra = idset_copy (ranks);
        char *s = NULL;
        if (extra && idset_subtract (extra, r->ranks) == 0)
            s = idset_encode (extra);
        errset (err, EINVAL, "R fragment: ranks %s not in R", s ? s : "?");
        free (s);
        idset_destroy (extra);
        return NULL;
    }
    if (!(R_lite = fragment_r_lite (r, ranks)) ||
        !(nodelist = fragment_nodelist (r, ranks)) || !(out = json_object ()) ||
        !(exec = json_object ()))
        goto nomem;
    /* Copy key by key to keep the order of R, replacing what changes. */
    json_object_foreach (json_object_get (r->R, "execution"), key, val)
    {
        json_t *copy;
        if (!strcmp (key, "R_lite"))
            copy = json_incref (R_lite);
        else if (!strcmp (key, "nodelist"))
            copy = json_incref (nodelist);
        else
            copy = json_deep_copy (val);
        if (json_object_set_new (exec, key, copy) < 0)
            goto nomem;
    }
    json_object_foreach (r->R, key, val)
    {
        json_t *copy;
        if (!strcmp (key, "scheduling"))
            continue;
        if (!strcmp (key, "execution"))
            copy = json_incref (exec);
        else
            copy = json_deep_copy (val);
        if (json_object_set_new (out, key, copy) < 0)
            goto nomem;
    }
    json_decref (exec);
    json_decref (R_lite);
    json_decref (nodelist);
    return out;
nomem:
    json_decref (out);
    json_decref (exec);
    json_decref (R_lite);
    json_decref (nodelist);
    errset (err, ENOMEM, "R fragment: out of memory");
    return NULL;
}

json_t *rv1_create (uint32_t nranks,
                    uint32_t cores_per_rank,
                    const char *hostname,
                    double expiration)
{
    struct hostlist *check = NULL;
    struct idset *ids = NULL;
    char *ranks_s = NULL;
    char *cores_s = NULL;
    json_t *nodelist = NULL;
    json_t *R = NULL;

    if (nranks == 0 || nranks > RV1_MAX_RANKS || cores_per_rank == 0 ||
        !hostname || !(expiration >= 0) || !isfinite (expiration)) {
        errno = EINVAL;
        return NULL;
    }
    /* hostlist_append() accepts exactly one valid host name. */
    if (!(check = hostlist_create ()))
        return NULL;
    if (hostlist_append (check, hostname) < 0)
        goto error;
    if (!(ids = idset_create ()) || idset_range_set (ids, 0, nranks - 1) < 0 ||
        !(ranks_s = idset_encode (ids)))
        goto nomem;
    idset_destroy (ids);
    if (!(ids = idset_create ()) ||
        idset_range_set (ids, 0, cores_per_rank - 1) < 0 ||
        !(cores_s = idset_encode (ids)) || !(nodelist = json_array ()))
        goto nomem;
    for (uint32_t i = 0; i < nranks; i++) {
        if (json_array_append_new (nodelist, json_string (hostname)) < 0)
            goto nomem;
    }
    if (!(R = json_pack ("{s:i s:{s:[{s:s s:{s:s}}] s:O s:f s:f}}", "version",
                         1, "execution", "R_lite", "rank", ranks_s, "children",
                         "core", cores_s, "nodelist", nodelist, "starttime", 0.,
                         "expiration", expiration)))
        goto nomem;
    json_decref (nodelist);
    idset_destroy (ids);
    free (ranks_s);
    free (cores_s);
    hostlist_destroy (check);
    return R;
nomem:
    errno = ENOMEM;
error:
    json_decref (nodelist);
    idset_destroy (ids);
    free (ranks_s);
    free (cores_s);
    hostlist_destroy (check);
    return NULL;
}
