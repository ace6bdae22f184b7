/* instance.c - see instance.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "flux/instance.h"

static char *lookup (flux_t *h)
{
    flux_future_t *f = flux_kvs_lookup (h, NULL, 0, INSTANCE_KVS_KEY);
    const char *s = NULL;
    char *copy = NULL;

    if (f && flux_kvs_lookup_get (f, &s) == 0 && s && *s)
        copy = strdup (s);
    else if (f && errno != ENOENT)
        flux_log_error (h, "cairn-exec: kvs lookup %s", INSTANCE_KVS_KEY);
    flux_future_destroy (f);
    return copy;
}

/* Commit uuid; with FLUX_KVS_SYNC (a checkpoint) where the content store
 * has a backing store, plainly where it has none (nothing persists). */
static int store (flux_t *h, const char *uuid)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    int rc = -1;

    if (!txn || flux_kvs_txn_put (txn, 0, INSTANCE_KVS_KEY, uuid) < 0)
        goto done;
    int flags[] = {FLUX_KVS_SYNC, 0};
    for (int i = 0; i < 2 && rc < 0; i++) {
        flux_future_t *f = flux_kvs_commit (h, NULL, flags[i], txn);
        rc = f && flux_future_get (f, NULL) == 0 ? 0 : -1;
        int e = errno;
        flux_future_destroy (f);
        errno = e;
        if (rc < 0 && errno != ENOSYS)
            break;
    }
done:
    if (rc < 0)
        flux_log_error (h, "cairn-exec: kvs commit %s", INSTANCE_KVS_KEY);
    flux_kvs_txn_destroy (txn);
    return rc;
}

/* "HOST local-uri[ job ID]" of this broker, or NULL (ENOMEM). */
static char *describe (flux_t *h)
{
    char host[256] = "?", *n = NULL;
    const char *uri = flux_attr_get (h, "local-uri");
    const char *jobid = flux_attr_get (h, "jobid");

    (void)gethostname (host, sizeof (host) - 1);
    if (asprintf (&n, "%s %s%s%s", host, uri ? uri : "?", jobid ? " job " : "",
                  jobid ? jobid : "") < 0) {
        errno = ENOMEM;
        return NULL;
    }
    return n;
}

flux_future_t *instance_wait (flux_t *h)
{
    return flux_kvs_lookup (h, NULL, FLUX_KVS_WAITCREATE, INSTANCE_KVS_KEY);
}

json_t *instance_bind_payload (flux_t *h, const char *uuid)
{
    char *n;
    json_t *p;

    if (!uuid || !*uuid) {
        errno = EPROTO;
        return NULL;
    }
    if (!(n = describe (h)))
        return NULL;
    p = json_pack ("{s:s s:s}", "instance", uuid, "name", n);
    free (n);
    if (!p)
        errno = ENOMEM;
    return p;
}

int instance_identity (flux_t *h, char **uuid)
{
    char *u = lookup (h);

    if (!u) {
        uuid_t bin;
        char text[37];
        uuid_generate (bin);
        uuid_unparse_lower (bin, text);
        if (store (h, text) < 0)
            return -1;
        if (!(u = strdup (text))) {
            errno = ENOMEM;
            return -1;
        }
    }
    *uuid = u;
    return 0;
}
