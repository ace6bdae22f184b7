/* output.c - live output: a job's shells' stdout and stderr sent to
 * the streams that asked for it (`"output": true`, cairn-protocol(7)).
 *
 * Output is not a state change, so nothing here is journaled or waits for
 * a commit: a shell's output files (the shim's, in the exit dir) are read
 * as they grow, every OUTPUT_INTERVAL, and sent as `output` responses; when
 * the shell ends, its `log` events (the journaled copy, cairn-journal(5))
 * bring the rest. Each stream keeps, per rank and stream, the file offset
 * it has been sent up to (`sent`); a client that reattaches gives its own
 * offsets back (`output-offsets`), so it gets neither a byte twice nor one
 * missing, whatever restarted in between (bytes beyond the output cap are
 * cut on disk and journaled nowhere: they are lost for everyone).
 *
 * The kill escalation's steps are told live the same way (`kill`
 * notices): a committed proc-signal is the record, the notice only what a
 * client logs and counts (job-exec's per-job kill stats).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escalate.h"
#include "core/eventlog.h"
#include "core/utf8.h"
#include "core/job.h"
#include "exec/jobtable.h"
#include "exec/output.h"
#include "exec/streams.h"
#include "procs/procs.h"
#include "server/server.h"
#include "supervise/exitfile.h"
#include "util/log.h"

#define OUTPUT_INTERVAL 0.1
#define OUTPUT_CHUNK 65536 /* most bytes read per file per turn */

struct output {
    struct ev_loop *loop;
    struct streams *streams;
    struct procs *procs;
    const struct cairn_config *cfg;
    ev_timer timer; /* live output, while nwatch > 0 */
    int nwatch;     /* streams that asked for output */
};

/* sent[rank][stream]: the file offset sent up to (0 when absent). */
static json_int_t sent_get (json_t *sent, uint32_t rank, const char *stream)
{
    char key[16];
    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    return json_integer_value (
        json_object_get (json_object_get (sent, key), stream));
}

static void
sent_set (json_t *sent, uint32_t rank, const char *stream, json_int_t end)
{
    char key[16];
    json_t *r;

    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    if (!(r = json_object_get (sent, key)) &&
        (!(r = json_object ()) || json_object_set_new (sent, key, r) < 0))
        return;
    json_object_set_new (r, stream, json_integer (end));
}

static void send_chunk (struct conn *c,
                        int64_t matchtag,
                        uint64_t id,
                        uint32_t rank,
                        const char *stream,
                        json_t *data,
                        json_int_t end)
{
    json_t *r =
        json_pack ("{s:I s:s s:{s:I s:s s:o s:I}}", "id", (json_int_t)id,
                   "type", "output", "data", "rank", (json_int_t)rank, "stream",
                   stream, "data", data, "end", end);
    if (r && conn_respond (c, matchtag, r) < 0)
        log_msg (LOG_DEBUG, "job %ju: output to client %ju: %s", (uintmax_t)id,
                 (uintmax_t)conn_id (c), strerror (errno));
    json_decref (r);
}

void output_send_log (struct conn *c,
                      int64_t matchtag,
                      uint64_t id,
                      json_t *sent,
                      const json_t *entry)
{
    const char *stream = NULL, *phase = NULL, *data = NULL;
    json_t *ctx;
    json_int_t rank = 0;
    json_t *whole;
    size_t len, used;

    if (eventlog_entry_parse (entry, NULL, NULL, &ctx) < 0 ||
        json_unpack (ctx, "{s:s s:I s:s s:s}", "stream", &stream, "rank", &rank,
                     "phase", &phase, "data", &data) < 0 ||
        strcmp (phase, "shell") != 0 || rank < 0 || rank > UINT32_MAX)
        return;
    if (strcmp (stream, "stdout") != 0 && strcmp (stream, "stderr") != 0)
        return; /* cairn's own notes */
    json_int_t at = sent_get (sent, (uint32_t)rank, stream);
    json_t *bytes = json_object_get (ctx, "bytes");
    len = strlen (data);
    if (bytes) {
        /* bytes that were not UTF-8 were replaced: the data no longer
         * lines up with the file's offsets, so it goes whole or not at
         * all (a client that followed the shell live has it already) */
        json_int_t n = json_integer_value (bytes);
        if (at == 0 && (whole = json_string (data)))
            send_chunk (c, matchtag, id, (uint32_t)rank, stream, whole, n);
        if (at < n)
            sent_set (sent, (uint32_t)rank, stream, n);
        return;
    }
    if (at < 0 || at >= (json_int_t)len)
        return;
    json_t *s = utf8_string (data + at, len - (size_t)at, true, &used, NULL);
    if (s)
        send_chunk (c, matchtag, id, (uint32_t)rank, stream, s,
                    (json_int_t)len);
    sent_set (sent, (uint32_t)rank, stream, (json_int_t)len);
}

/* Send sub what its rank's shell wrote since the last time. */
static void tail_proc (struct output *o,
                       struct jobentry *je,
                       struct sub *s,
                       const struct job_proc *p,
                       bool final,
                       char *buf)
{
    static const char *const streams[][2] = {{"out", "stdout"},
                                             {"err", "stderr"}};
    for (int i = 0; i < 2; i++) {
        const char *stream = streams[i][1];
        json_int_t off = sent_get (s->sent, p->rank, stream);
        /* past the cap the shim cuts the file back (and a writer without
         * O_APPEND leaves a hole): nothing there is the job's to show */
        json_int_t cap = (json_int_t)o->cfg->job.output_max_bytes;
        size_t want = off >= cap                 ? 0
                      : cap - off < OUTPUT_CHUNK ? (size_t)(cap - off)
                                                 : OUTPUT_CHUNK;
        if (want == 0)
            continue;
        ssize_t n =
            exitfile_read_output_at (procs_exitdir (o->procs), p->execid,
                                     streams[i][0], (uint64_t)off, buf, want);
        if (n <= 0)
            continue;
        size_t used;
        json_t *str = utf8_string (buf, (size_t)n, final, &used, NULL);
        if (!str || used == 0) {
            json_decref (str);
            continue;
        }
        send_chunk (s->conn, s->matchtag, job_id (je->job), p->rank, stream,
                    str, off + (json_int_t)used);
        sent_set (s->sent, p->rank, stream, off + (json_int_t)used);
    }
}

/* Every stream that asked for output, through the connections that have
 * streams: the work grows with those, not with the jobs cairnd runs. */
static void output_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
    struct output *o = w->data;
    size_t pos = 0;
    struct sub *head;
    char *buf = malloc (OUTPUT_CHUNK);

    if (!buf)
        return;
    while ((head = streams_next_conn (o->streams, &pos))) {
        for (struct sub *s = head; s; s = s->cnext) {
            if (!s->sent)
                continue;
            for (size_t i = 0; i < job_nprocs (s->je->job); i++) {
                const struct job_proc *p = job_proc_at (s->je->job, i);
                if (p->phase == PHASE_SHELL && p->state == PROC_RUNNING)
                    tail_proc (o, s->je, s, p, false, buf);
            }
        }
    }
    free (buf);
}

void output_flush (struct output *o,
                   struct jobentry *je,
                   const struct job_proc *p)
{
    char *buf;

    if (p->phase != PHASE_SHELL || !je->subs || o->nwatch == 0 ||
        !(buf = malloc (OUTPUT_CHUNK)))
        return;
    for (struct sub *s = je->subs; s; s = s->next)
        if (s->sent)
            tail_proc (o, je, s, p, true, buf);
    free (buf);
}

void output_log_event (struct jobentry *je, const json_t *entry)
{
    for (struct sub *s = je->subs; s; s = s->next)
        if (s->sent)
            output_send_log (s->conn, s->matchtag, job_id (je->job), s->sent,
                             entry);
}

void output_watch (struct output *o, int delta)
{
    o->nwatch += delta;
    if (o->nwatch > 0 && !ev_is_active (&o->timer)) {
        ev_timer_init (&o->timer, output_cb, OUTPUT_INTERVAL, OUTPUT_INTERVAL);
        o->timer.data = o;
        ev_timer_start (o->loop, &o->timer);
    } else if (o->nwatch <= 0 && ev_is_active (&o->timer))
        ev_timer_stop (o->loop, &o->timer);
}

bool output_wanted (const struct output *o)
{
    return o->nwatch > 0;
}

struct output *output_create (struct ev_loop *loop,
                              struct streams *streams,
                              struct procs *procs,
                              const struct cairn_config *cfg)
{
    struct output *o = calloc (1, sizeof (*o));
    if (!o)
        return NULL;
    o->loop = loop;
    o->streams = streams;
    o->procs = procs;
    o->cfg = cfg;
    ev_timer_init (&o->timer, output_cb, OUTPUT_INTERVAL, OUTPUT_INTERVAL);
    o->timer.data = o;
    return o;
}

void output_destroy (struct output *o)
{
    if (!o)
        return;
    int saved = errno;
    ev_timer_stop (o->loop, &o->timer);
    free (o);
    errno = saved;
}

void output_kill_notice (struct jobentry *je,
                         const struct job_proc *p,
                         const json_t *ctx)
{
    const char *reason = json_string_value (json_object_get (ctx, "reason"));
    json_t *r = NULL;

    if (p->phase != PHASE_SHELL || !reason ||
        (strcmp (reason, "kill") != 0 && strcmp (reason, "kill-shell") != 0))
        return;
    for (struct sub *s = je->subs; s; s = s->next) {
        if (!s->events)
            continue;
        if (!r && !(r = json_pack (
                        "{s:I s:s s:{s:I s:s s:O s:i s:i s:f}}", "id",
                        (json_int_t)job_id (je->job), "type", "kill", "data",
                        "rank", (json_int_t)p->rank, "reason", reason, "signum",
                        json_object_get (ctx, "signum"), "kill_count",
                        p->nkills - p->nshell_kills, "kill_shell_count",
                        p->nshell_kills, "kill_timeout",
                        escalate_interval (&job_config (je->job)->exec,
                                           p->nshell_kills))))
            return;
        if (conn_respond (s->conn, s->matchtag, r) < 0)
            log_msg (LOG_DEBUG, "job %s: kill notice to client %ju: %s",
                     je->name, (uintmax_t)conn_id (s->conn), strerror (errno));
    }
    json_decref (r);
}
