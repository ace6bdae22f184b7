/* mnodes.c - fake nodes for the multinode benchmark (b_multinode.c).
 *
 * Many nodes in one process, speaking the protocol of DESIGN-MULTINODE.md
 * to a real rank-0 cairnd as the rank-0 cairn-exec module does: one
 * connection holds the node-relay stream and carries the nodes' REPORTs as
 * node-report requests (noderelay.c). Every node-exec is answered at once,
 * as a node whose command ends at once would: a `running` REPORT, then an
 * `ended` one with status 0 and empty output, both with the fields a node
 * cairnd puts in them (node.c report()). A node-exec for an execid not yet
 * acknowledged (the heartbeat) is answered from memory with its end, as a
 * node answers from its journal; node-ack makes the nodes forget it.
 *
 * A second connection carries the jobs' `start` requests. One loop serves
 * both, without blocking on either, and counts every line and byte that
 * crosses the relay connection: rank 0's share of the overlay traffic.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench.h"
#include "util/hashmap.h"

/* ---- a line connection to cairnd that counts what crosses it ---- */

/* Non-blocking both ways, so that one loop can serve the relay and the
 * jobs' connection without either waiting on the other. */
struct lconn {
    int fd;
    char *in;
    size_t in_off, in_len, in_cap; /* unread: [in_off, in_len) */
    char *out;
    size_t out_off, out_len, out_cap; /* unsent: [out_off, out_len) */
    int64_t lines_in, lines_out;
    int64_t bytes_in, bytes_out;
};

static void lconn_destroy (struct lconn *c)
{
    if (!c)
        return;
    int saved = errno;
    if (c->fd >= 0)
        close (c->fd);
    free (c->in);
    free (c->out);
    free (c);
    errno = saved;
}

static struct lconn *lconn_connect (const char *path, struct cairn_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct lconn *c = calloc (1, sizeof (*c));

    if (!c) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    if (strlen (path) >= sizeof (sa.sun_path)) {
        errset (err, ENAMETOOLONG, "%s: path too long", path);
        free (c);
        return NULL;
    }
    strcpy (sa.sun_path, path);
    if ((c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        connect (c->fd, (struct sockaddr *)&sa, sizeof (sa)) < 0 ||
        fcntl (c->fd, F_SETFL, O_NONBLOCK) < 0) {
        errset (err, errno, "connect %s: %s", path, strerror (errno));
        lconn_destroy (c);
        return NULL;
    }
    return c;
}

static int grow (char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 65536;
    while (n < need)
        n *= 2;
    char *p = realloc (*buf, n);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Queue the request {"topic", "matchtag", "payload"} (payload stolen). */
static int lconn_queue (struct lconn *c,
                        const char *topic,
                        int64_t matchtag,
                        json_t *payload_new)
{
    json_t *o = json_pack ("{s:s s:I s:o}", "topic", topic, "matchtag",
                           (json_int_t)matchtag, "payload", payload_new);
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    size_t len = s ? strlen (s) : 0;

    json_decref (o);
    if (!s || grow (&c->out, &c->out_cap, c->out_len + len + 1) < 0) {
        free (s);
        errno = ENOMEM;
        return -1;
    }
    memcpy (c->out + c->out_len, s, len);
    c->out[c->out_len + len] = '\n';
    c->out_len += len + 1;
    c->lines_out++;
    c->bytes_out += (int64_t)len + 1;
    free (s);
    return 0;
}

/* Send what the socket takes now. 0, or -1 with errno. */
static int lconn_flush (struct lconn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send (c->fd, c->out + c->out_off, c->out_len - c->out_off,
                          MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return -1;
        }
        c->out_off += (size_t)n;
    }
    c->out_off = c->out_len = 0;
    return 0;
}

/* Read what is there. 0, or -1 with errno (ECONNRESET: cairnd closed). */
static int lconn_fill (struct lconn *c)
{
    for (;;) {
        if (c->in_off > 0 && c->in_off == c->in_len)
            c->in_off = c->in_len = 0;
        if (grow (&c->in, &c->in_cap, c->in_len + 65536) < 0) {
            errno = ENOMEM;
            return -1;
        }
        ssize_t n = recv (c->fd, c->in + c->in_len, c->in_cap - c->in_len,
                          MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        c->in_len += (size_t)n;
    }
}

/* The next complete line, parsed: 1 (*msg set), 0 (none yet), or -1 with
 * errno EPROTO (not JSON). */
static int lconn_next (struct lconn *c, json_t **msg)
{
    char *start = c->in + c->in_off;
    char *nl = memchr (start, '\n', c->in_len - c->in_off);

    if (!nl) {
        if (c->in_off > 0) { /* keep the partial line at the front */
            memmove (c->in, start, c->in_len - c->in_off);
            c->in_len -= c->in_off;
            c->in_off = 0;
        }
        return 0;
    }
    size_t len = (size_t)(nl - start);
    c->in_off += len + 1;
    c->lines_in++;
    c->bytes_in += (int64_t)len + 1;
    if (!(*msg = json_loadb (start, len, 0, NULL))) {
        errno = EPROTO;
        return -1;
    }
    return 1;
}

/* ---- the fake nodes ---- */

struct mnodes {
    struct lconn *jobs;
    struct lconn *relay;   /* NULL: no nodes (a one-host cairnd) */
    int64_t relay_mt;      /* of the node-relay stream: 1 */
    int64_t next_mt;       /* of our next node-report */
    struct hashmap *procs; /* execid -> rank + 1, until acknowledged */
    struct mnodes_counts rc;
    char fail[256]; /* the first error answer to a report, if any */
    /* the job in progress */
    int64_t job_mt;
    bool job_final;
    bool job_failed;
    double t_final;
};

/* A node's REPORT of execid, as a node cairnd sends it (node.c report()):
 * the spawn record, and for the end the exit status and output. */
static int
send_report (struct mnodes *m, uint32_t rank, const char *execid, bool ended)
{
    char host[32], bootid[48];
    snprintf (host, sizeof (host), "node%u", (unsigned)rank);
    snprintf (bootid, sizeof (bootid), "b0071d00-0000-4000-8000-%012u",
              (unsigned)rank);
    json_t *r = json_pack ("{s:s s:s s:s s:i s:I s:s}", "execid", execid,
                           "host", host, "state", ended ? "ended" : "running",
                           "pid", 100000 + (int)(rank % 100000), "starttime",
                           (json_int_t)12345678, "bootid", bootid);
    if (r && ended &&
        json_object_update_new (r, json_pack ("{s:i s:s s:s s:b s:b}", "status",
                                              0, "stdout", "", "stderr", "",
                                              "stdout-truncated", 0,
                                              "stderr-truncated", 0)) < 0) {
        json_decref (r);
        r = NULL;
    }
    json_t *p =
        r ? json_pack ("{s:I s:o}", "rank", (json_int_t)rank, "report", r)
          : NULL;
    if (!p || lconn_queue (m->relay, "node-report", m->next_mt++, p) < 0)
        return -1;
    m->rc.reports++;
    return 0;
}

/* One message on the relay connection: a node-relay message, or the
 * answer to one of our reports. */
static int
relay_message (struct mnodes *m, json_t *msg, struct cairn_error *err)
{
    json_int_t mt = -1, rank = -1;
    json_t *payload = NULL, *q = NULL;
    const char *topic = NULL, *errstr = NULL;

    (void)json_unpack (msg, "{s:I s?o s?s}", "matchtag", &mt, "payload",
                       &payload, "errstr", &errstr);
    if (mt != m->relay_mt) {
        m->rc.answers++;
        if (!payload && !m->fail[0])
            snprintf (m->fail, sizeof (m->fail), "node-report refused: %s",
                      errstr ? errstr : "?");
        return 0;
    }
    if (!payload)
        return errset (err, EPROTO, "cairnd ended the node relay: %s",
                       errstr ? errstr : "?");
    if (json_unpack (payload, "{s:I s:s s:o}", "rank", &rank, "topic", &topic,
                     "payload", &q) < 0 ||
        rank < 0 || rank > UINT32_MAX)
        return errset (err, EPROTO, "malformed node-relay message");
    if (!strcmp (topic, "node-exec")) {
        const char *execid = json_string_value (json_object_get (q, "execid"));
        if (!execid)
            return errset (err, EPROTO, "node-exec without an execid");
        m->rc.exec++;
        if (hashmap_get (m->procs, execid)) {
            /* asked again (the heartbeat): it ended, not yet acknowledged */
            m->rc.reask++;
            return send_report (m, (uint32_t)rank, execid, true) < 0
                       ? errset (err, ENOMEM, "out of memory")
                       : 0;
        }
        if (hashmap_put (m->procs, execid, (void *)(uintptr_t)(rank + 1)) < 0 ||
            send_report (m, (uint32_t)rank, execid, false) < 0 ||
            send_report (m, (uint32_t)rank, execid, true) < 0)
            return errset (err, ENOMEM, "out of memory");
    } else if (!strcmp (topic, "node-ack")) {
        size_t i;
        json_t *x;
        m->rc.ack++;
        json_array_foreach (json_object_get (q, "execids"), i, x)
        {
            if (json_string_value (x) &&
                hashmap_get (m->procs, json_string_value (x))) {
                hashmap_del (m->procs, json_string_value (x));
                m->rc.acked++;
            }
        }
    } else if (!strcmp (topic, "node-signal"))
        m->rc.signal++; /* the process has ended already */
    else
        return errset (err, EPROTO, "unknown node-relay topic '%s'", topic);
    return 0;
}

/* One response on the jobs' connection. */
static int job_message (struct mnodes *m, json_t *msg, struct cairn_error *err)
{
    json_int_t mt = -1;
    json_t *payload = NULL;
    const char *errstr = NULL, *type;

    (void)json_unpack (msg, "{s:I s?o s?s}", "matchtag", &mt, "payload",
                       &payload, "errstr", &errstr);
    if (mt != m->job_mt)
        return 0;
    if (!payload)
        return errset (err, EPROTO, "cairnd refused the job: %s",
                       errstr ? errstr : "?");
    if (!(type = json_string_value (json_object_get (payload, "type"))))
        return 0;
    json_t *data = json_object_get (payload, "data");
    if (!strcmp (type, "exception") ||
        (!strcmp (type, "finish") &&
         json_integer_value (json_object_get (data, "status")) != 0))
        m->job_failed = true;
    if (!strcmp (type, "release") &&
        json_is_true (json_object_get (data, "final"))) {
        m->job_final = true;
        m->t_final = bench_now ();
    }
    return 0;
}

static int drain (struct mnodes *m,
                  struct lconn *c,
                  int (*fn) (struct mnodes *, json_t *, struct cairn_error *),
                  int *nmsg,
                  struct cairn_error *err)
{
    json_t *msg;
    int r;

    if (lconn_fill (c) < 0) {
        if (c == m->relay && errno == ECONNRESET)
            return errset (err, errno,
                           "cairnd closed the relay connection (it drops a"
                           " client that falls 16 MiB behind)");
        return errset (err, errno, "%s connection: %s",
                       c == m->relay ? "relay" : "jobs", strerror (errno));
    }
    while ((r = lconn_next (c, &msg)) == 1) {
        int rc = fn (m, msg, err);
        json_decref (msg);
        if (rc < 0)
            return -1;
        (*nmsg)++;
    }
    return r < 0 ? errset (err, EPROTO, "a line from cairnd is not JSON") : 0;
}

static bool settled (const struct mnodes *m)
{
    return m->job_final && (!m->relay || (hashmap_count (m->procs) == 0 &&
                                          m->rc.answers == m->rc.reports));
}

/* Serve both connections until the job is over (settled). */
static int serve (struct mnodes *m, double stall, struct cairn_error *err)
{
    double t_heard = bench_now ();

    while (!settled (m)) {
        struct pollfd pfd[2];
        int n = 0, nmsg = 0;
        struct lconn *cs[2] = {m->jobs, m->relay};
        for (int i = 0; i < 2; i++) {
            if (!cs[i])
                continue;
            if (lconn_flush (cs[i]) < 0)
                return errset (err, errno, "send: %s", strerror (errno));
            pfd[n].fd = cs[i]->fd;
            pfd[n].events =
                POLLIN | (cs[i]->out_off < cs[i]->out_len ? POLLOUT : 0);
            n++;
        }
        if (poll (pfd, n, 1000) < 0 && errno != EINTR)
            return errset (err, errno, "poll: %s", strerror (errno));
        if (drain (m, m->jobs, job_message, &nmsg, err) < 0 ||
            (m->relay && drain (m, m->relay, relay_message, &nmsg, err) < 0))
            return -1;
        if (nmsg > 0)
            t_heard = bench_now ();
        else if (bench_now () - t_heard > stall)
            return errset (err, ETIMEDOUT,
                           "nothing from cairnd for %.0f s: final release %s,"
                           " %zu process(es) not acknowledged, %lld of %lld"
                           " reports answered",
                           stall, m->job_final ? "seen" : "not seen",
                           m->procs ? hashmap_count (m->procs) : 0,
                           (long long)m->rc.answers, (long long)m->rc.reports);
    }
    return 0;
}

/* ---- the interface ---- */

void mnodes_destroy (struct mnodes *m)
{
    if (!m)
        return;
    int saved = errno;
    lconn_destroy (m->jobs);
    lconn_destroy (m->relay);
    hashmap_destroy (m->procs);
    free (m);
    errno = saved;
}

struct mnodes *
mnodes_create (const char *sock, bool relay, struct cairn_error *err)
{
    struct mnodes *m = calloc (1, sizeof (*m));
    json_t *none = NULL;

    if (!m || !(m->procs = hashmap_create ())) {
        errset (err, ENOMEM, "out of memory");
        goto error;
    }
    m->relay_mt = 1;
    m->next_mt = 2;
    if (!(m->jobs = lconn_connect (sock, err)))
        goto error;
    if (relay) {
        if (!(m->relay = lconn_connect (sock, err)))
            goto error;
        if (!(none = json_object ()) ||
            lconn_queue (m->relay, "node-relay", m->relay_mt, none) < 0) {
            errset (err, ENOMEM, "out of memory");
            goto error;
        }
    }
    return m;
error:
    mnodes_destroy (m);
    return NULL;
}

int mnodes_job (struct mnodes *m,
                const json_t *start,
                int64_t mt,
                double stall,
                double *wall,
                bool *failed,
                struct cairn_error *err)
{
    m->job_mt = mt;
    m->job_final = m->job_failed = false;
    double t0 = bench_now ();
    if (lconn_queue (m->jobs, "start", mt, json_incref ((json_t *)start)) < 0)
        return errset (err, ENOMEM, "out of memory");
    if (serve (m, stall, err) < 0)
        return -1;
    if (m->fail[0])
        return errset (err, EIO, "%s", m->fail);
    *wall = m->t_final - t0;
    *failed = m->job_failed;
    return 0;
}

void mnodes_counts (const struct mnodes *m, struct mnodes_counts *c)
{
    *c = m->rc;
    if (m->relay) {
        c->lines_in = m->relay->lines_in;
        c->lines_out = m->relay->lines_out;
        c->bytes_in = m->relay->bytes_in;
        c->bytes_out = m->relay->bytes_out;
    }
}
