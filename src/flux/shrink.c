/* shrink.c - see shrink.h */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/idset.h"
#include "core/rv1.h"
#include "flux/shrink.h"

flux_future_t *shrink_commit (flux_t *h,
                              flux_jobid_t id,
                              const json_t *R,
                              const char *ranks,
                              char *errbuf,
                              size_t errlen)
{
    struct cairn_error err = {{0}};
    struct rv1 *r = NULL;
    struct idset *keep = NULL;
    json_t *small = NULL;
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    char key[128];

    if (!(keep = idset_decode (ranks, &err)) || !(r = rv1_decode (R, &err)) ||
        !(small = rv1_fragment (r, keep, &err))) {
        snprintf (errbuf, errlen, "cannot shrink R to %s: %s", ranks,
                  err.text[0] ? err.text : strerror (errno));
        goto done;
    }
    /* the scheduler's own part (Fluxion's JGF) stays as it allocated it:
     * a scheduler re-allocating the job after a restart finds all of it,
     * as the job-manager frees all of it */
    json_t *sched = json_object_get (R, "scheduling");
    if (sched && json_object_set (small, "scheduling", sched) < 0) {
        snprintf (errbuf, errlen, "out of memory");
        goto done;
    }
    if (flux_job_kvs_key (key, sizeof (key), id, "R") < 0 ||
        !(txn = flux_kvs_txn_create ()) ||
        flux_kvs_txn_pack (txn, 0, key, "O", small) < 0 ||
        !(f = flux_kvs_commit (h, NULL, 0, txn)))
        snprintf (errbuf, errlen, "cannot write the job's R: %s",
                  strerror (errno));
done:
    flux_kvs_txn_destroy (txn);
    json_decref (small);
    rv1_destroy (r);
    idset_destroy (keep);
    return f;
}
