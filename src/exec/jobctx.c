/* jobctx.c - the job state machine's view of the world (jobctx.h). */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <uuid/uuid.h>

#include "core/job.h"
#include "exec/jobctx.h"

#define JOBCTX_IDPOOL 64 /* execids per getrandom() */

struct jobctx {
    uid_t uid;
    struct jobctx_ops ops;
    void *arg;
    /* random bytes for execids (new_execid), the first idpool_left ids'
     * worth unused */
    unsigned char idpool[16 * JOBCTX_IDPOOL];
    size_t idpool_left;
};

struct jobctx *
jobctx_create (uid_t uid, const struct jobctx_ops *ops, void *arg)
{
    struct jobctx *x = calloc (1, sizeof (*x));
    if (!x)
        return NULL;
    x->uid = uid;
    x->ops = *ops;
    x->arg = arg;
    return x;
}

void jobctx_destroy (struct jobctx *x)
{
    int saved = errno;
    free (x);
    errno = saved;
}

double jobctx_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A random (version 4) UUID. libuuid's uuid_generate_random() makes four
 * more system calls per id to mix its own generator in, and cairnd makes
 * an id per process it starts: the bytes come from getrandom(), a pool of
 * JOBCTX_IDPOOL ids per call. cairnd forks no child that makes ids. */
static void new_execid (char buf[EXECID_LEN + 1], void *arg)
{
    struct jobctx *x = arg;
    uuid_t u;

    if (x->idpool_left == 0) {
        ssize_t n = getrandom (x->idpool, sizeof (x->idpool), 0);
        x->idpool_left = n == (ssize_t)sizeof (x->idpool) ? JOBCTX_IDPOOL : 0;
    }
    if (x->idpool_left > 0) {
        unsigned char *b = x->idpool + --x->idpool_left * sizeof (u);
        memcpy (u, b, sizeof (u));
        memset (b, 0, sizeof (u)); /* an id's bytes serve once */
        u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
        u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    } else
        uuid_generate_random (u);
    uuid_unparse_lower (u, buf);
}

static bool user_known (uint32_t uid, void *arg)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    return getpwuid_r ((uid_t)uid, &pw, buf, sizeof (buf), &res) == 0 && res;
}

static bool client_away (uint64_t id, void *arg)
{
    struct jobctx *x = arg;
    return x->ops.client_away (x->arg, id);
}

void jobctx_fill (struct jobctx *x, struct job_ctx *ctx)
{
    ctx->now = jobctx_now ();
    ctx->owner_uid = x->uid;
    ctx->multiuser = x->uid == 0;
    ctx->user_known = user_known;
    ctx->new_execid = new_execid;
    ctx->client_away = client_away;
    ctx->arg = x;
}
