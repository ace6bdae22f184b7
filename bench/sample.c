/* sample.c - realistic journal contents, taken from a real job.
 *
 * The journal benchmark and the "100k finished jobs" restart need event
 * lines of the sizes cairnd really writes. Rather than keep a copy that
 * would drift from the code, run one job through a scratch cairnd and read
 * its eventlog back.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "journal/journal.h"

struct lines {
    char **v;
    size_t n;
};

static int
collect (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct lines *l = arg;
    char **v = realloc (l->v, (l->n + 2) * sizeof (*v));
    if (!v)
        return -1;
    l->v = v;
    if (!(v[l->n] = strndup (line, len)))
        return -1;
    v[++l->n] = NULL;
    return 0;
}

void sample_free (char **lines)
{
    if (!lines)
        return;
    for (char **p = lines; *p; p++)
        free (*p);
    free (lines);
}

int sample_job (const struct bench_opts *o,
                int nranks,
                char ***lines,
                size_t *n,
                struct cairn_error *err)
{
    struct lines l = {0};
    struct client *c = NULL;
    struct journal *j = NULL;
    struct submit_result res;
    struct submit s = {.njobs = 1,
                       .nranks = nranks,
                       .inflight = 1,
                       .argv = bench_true_argv,
                       .id0 = 1};
    struct bd *d = bd_create (o, "sample", BENCH_PERILOG_CONFIG, false, err);
    int rc = -1;

    if (!d || bd_start (d, NULL, err) < 0)
        goto out;
    if (!(c = client_connect (d->sock, err)) ||
        bench_submit (c, &s, &res, err) < 0)
        goto out;
    client_close (c);
    c = NULL;
    if (bd_stop (d, SIGTERM) < 0) {
        errset (err, errno, "stopping cairnd: %s", strerror (errno));
        goto out;
    }
    struct journal_opts jo = {.readonly = true};
    if (!(j = journal_open (d->statedir, &jo, err)) ||
        journal_read_job (j, 1, 0, collect, &l, err) < 0)
        goto out;
    if (l.n == 0) {
        errset (err, ENOENT, "the sample job left no events");
        goto out;
    }
    *lines = l.v;
    *n = l.n;
    l.v = NULL;
    rc = 0;
out:
    journal_close (j);
    client_close (c);
    bd_destroy (d);
    sample_free (l.v);
    return rc;
}

int sample_fill_journal (const char *statedir,
                         char **lines,
                         size_t n,
                         uint64_t id0,
                         long njobs,
                         struct cairn_error *err)
{
    struct journal_opts jo = {.nosync = true,
                              .map_size = (size_t)1 << 30,
                              .max_map_size = (size_t)64 << 30};
    struct journal *j = journal_open (statedir, &jo, err);
    double now = (double)time (NULL);

    if (!j)
        return -1;
    for (long k = 0; k < njobs; k++) {
        uint64_t id = id0 + (uint64_t)k;
        for (size_t i = 0; i < n; i++) {
            if (journal_append (j, id, (uint32_t)i, lines[i],
                                strlen (lines[i])) < 0) {
                errset (err, errno, "journal_append: %s", strerror (errno));
                goto error;
            }
        }
        if (journal_set_active (j, id, false, now) < 0) {
            errset (err, errno, "journal_set_active: %s", strerror (errno));
            goto error;
        }
        if ((k + 1) % 200 == 0 || k + 1 == njobs) {
            if (journal_commit (j, err) < 0)
                goto error;
        }
    }
    journal_close (j);
    return 0;
error:
    journal_close (j);
    return -1;
}
