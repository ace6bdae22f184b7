/* jobread.c - a job folded back from its committed events (jobread.h). */
#include <errno.h>
#include <stdint.h>

#include "core/eventlog.h"
#include "core/job.h"
#include "exec/jobread.h"
#include "journal/journal.h"

struct replay {
    struct job *job;
    struct cairn_error *err;
};

static int replay_event (
    uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct replay *r = arg;
    json_t *entry = eventlog_entry_decode (line, len, r->err);
    if (!entry || job_apply (r->job, entry, r->err) < 0) {
        errprefix (r->err, "job %ju event %u", (uintmax_t)id, seq);
        json_decref (entry);
        errno = EINVAL;
        return -1;
    }
    json_decref (entry);
    return 0;
}

struct job *jobread (struct journal *j, uint64_t id, struct cairn_error *err)
{
    struct replay r = {.job = job_create (id), .err = err};
    if (!r.job) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (journal_read_job (j, id, 0, replay_event, &r, err) < 0) {
        int e = errno;
        job_destroy (r.job);
        errno = e;
        return NULL;
    }
    return r.job;
}
