/* cairn-flux-housekeeping - give a rank back to Flux's scheduler when
 * cairnd's epilog on it is done: the partial release of cairn-exec.so.
 *
 * Flux frees a job's ranks one by one only through housekeeping
 * (job-manager/housekeeping.c): after the job's `free` event the
 * job-manager runs [job-manager.housekeeping] command on every rank of the
 * job, and with release-after = "0" returns each rank to the scheduler as
 * soon as the command exits there. cairn-exec.so, seeing this program as
 * that command, sends the job's final release to the job-manager when the
 * shells are done instead of when the last epilog is; the epilog itself is
 * cairnd's and goes on. On each rank this program then stands for the
 * epilog: it reattaches to the job in cairnd and exits when cairnd has
 * released its rank, so the rank goes back to Flux at that moment and not
 * before.
 *
 * Environment (set by the job-manager's housekeeping): FLUX_JOB_ID, the
 * job's id in decimal; FLUX_URI, this rank's broker.
 *
 * - A drain of this rank in cairnd's stream (a failed or lost epilog) is
 *   sent to resource.drain, and the answer awaited, before the exit: Flux
 *   must see the rank drained before it is free, or the scheduler could
 *   hand it out in between. cairn-exec.so sends the same drain; a second
 *   one with mode "update" changes nothing.
 * - cairnd not there (restarting): retried every second, for ever. The
 *   rank stays out of the scheduler meanwhile, which is the point; `flux
 *   housekeeping kill` ends the wait.
 * - A job cairnd does not know (ENOENT): nothing of it runs here; exit 0.
 * - This host's cairnd is a node (multinode, ENOSYS for `start`): the
 *   job's stream comes from rank 0's cairnd through rank 0's
 *   cairn-exec.so instead (`cairn.start`); rank 0's cairnd or broker
 *   away is retried every second, like a local cairnd.
 *
 * Exit: 0 when the rank is released; 1 when it was released drained (Flux
 * logs a housekeeping failure naming the rank); 2 on bad usage or an error
 * that retrying cannot fix.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flux/core.h>
#include <flux/idset.h>
#include <jansson.h>

#include "client/client.h"
#include "util/statedir.h"

#define PROG "cairn-flux-housekeeping"

enum outcome { WAIT_AGAIN, RELEASED, RELEASED_DRAINED, FATAL, NODE };

struct hk {
    flux_t *h;
    uint32_t rank;
    uint64_t id;
    const char *sock;
    bool drained;
    int rank0_errno; /* the last error of rank 0's relay, said once */
};

static void usage (FILE *f)
{
    fprintf (f, "Usage: " PROG " [statedir=DIR | --statedir DIR] "
                "[socket=PATH]  (%%r in DIR, PATH: the rank)\n"
                "Run by Flux's housekeeping on each rank of a finished job\n"
                "(FLUX_JOB_ID, FLUX_URI): exits once cairnd's epilog on this\n"
                "rank is done. See cairn-exec(8).\n");
}

/* Does the idset string (or "all") hold rank? */
static bool has_rank (const char *ranks, uint32_t rank)
{
    if (!ranks)
        return false;
    if (!strcmp (ranks, "all"))
        return true;
    struct idset *ids = idset_decode (ranks);
    bool yes = ids && idset_test (ids, rank);
    idset_destroy (ids);
    return yes;
}

/* Drain this rank in Flux, waiting for the answer. */
static int drain (struct hk *hk, const char *reason)
{
    char target[16];
    snprintf (target, sizeof (target), "%" PRIu32, hk->rank);
    flux_future_t *f = flux_rpc_pack (hk->h, "resource.drain", 0, 0,
                                      "{s:s s:s s:s}", "targets", target,
                                      "reason", reason, "mode", "update");
    int rc = f ? flux_future_get (f, NULL) : -1;
    if (rc < 0)
        fprintf (stderr, PROG ": job %" PRIu64 ": drain rank %s: %s\n",
                 hk->id, target, future_strerror (f, errno));
    flux_future_destroy (f);
    return rc;
}

/* One response of cairnd's stream for the job. */
static enum outcome on_response (struct hk *hk, json_t *msg)
{
    json_t *payload = json_object_get (msg, "payload");
    const char *type = NULL, *ranks = NULL, *reason = "drained by cairn";
    json_t *data = NULL;
    int final = 0;

    if (!payload) {
        int errnum = (int)json_integer_value (json_object_get (msg, "errnum"));
        const char *errstr =
            json_string_value (json_object_get (msg, "errstr"));
        if (errnum == ENOENT)
            return RELEASED; /* cairnd never had it: nothing runs here */
        if (errnum == ENOSYS)
            return NODE; /* this host's cairnd is a node: ask rank 0's */
        fprintf (stderr, PROG ": job %" PRIu64 ": cairnd: %s\n", hk->id,
                 errstr ? errstr : strerror (errnum));
        return FATAL;
    }
    if (json_unpack (payload, "{s:s s?o}", "type", &type, "data", &data) < 0)
        return WAIT_AGAIN;
    if (!strcmp (type, "drain")) {
        (void)json_unpack (data, "{s:s s?s}", "ranks", &ranks, "reason",
                           &reason);
        if (has_rank (ranks, hk->rank) && drain (hk, reason) == 0)
            hk->drained = true;
    } else if (!strcmp (type, "release")) {
        (void)json_unpack (data, "{s:s s?b}", "ranks", &ranks, "final",
                           &final);
        if (has_rank (ranks, hk->rank) || final)
            return hk->drained ? RELEASED_DRAINED : RELEASED;
    }
    return WAIT_AGAIN;
}

/* Reattach to the job and follow its stream until this rank is released,
 * or the connection ends (WAIT_AGAIN). */
static enum outcome follow (struct hk *hk, struct client *c)
{
    struct cairn_error err = {{0}};
    json_t *p = json_pack ("{s:I s:b s:b}", "id", (json_int_t)hk->id,
                           "reattach", 1, "events", 1);
    enum outcome o = WAIT_AGAIN;

    if (!p || client_send (c, "start", 1, p) < 0) {
        json_decref (p);
        return WAIT_AGAIN;
    }
    json_decref (p);
    while (o == WAIT_AGAIN) {
        json_t *msg = client_recv (c, -1, &err);
        if (!msg)
            return WAIT_AGAIN; /* cairnd went away: reconnect */
        if (json_integer_value (json_object_get (msg, "matchtag")) == 1)
            o = on_response (hk, msg);
        json_decref (msg);
    }
    return o;
}

/* The same through Flux: rank 0's cairn-exec.so relays the job's stream
 * from the rank-0 cairnd (`cairn.start`, noderelay.h), for a host whose
 * cairnd is a node (DESIGN-MULTINODE.md). */
static enum outcome follow_rank0 (struct hk *hk)
{
    flux_future_t *f = flux_rpc_pack (
        hk->h, "cairn.start", 0, FLUX_RPC_STREAMING, "{s:I s:b s:b}", "id",
        (json_int_t)hk->id, "reattach", 1, "events", 1);
    enum outcome o = WAIT_AGAIN;
    const char *s;

    while (f && o == WAIT_AGAIN) {
        json_t *msg;
        if (flux_rpc_get (f, &s) < 0) {
            int e = errno;
            if (e == ENOENT) {
                o = RELEASED;
                break;
            }
            if (e == ENODATA) /* the stream ended before our release */
                break;
            if (e != hk->rank0_errno)
                fprintf (stderr, PROG ": job %" PRIu64 ": rank 0: %s\n", hk->id,
                         future_strerror (f, e));
            hk->rank0_errno = e;
            if (e != ENOTCONN && e != EHOSTUNREACH && e != ENOSYS)
                o = FATAL;
            break; /* rank 0's cairnd or broker restarting: again */
        }
        if (!(msg = json_pack ("{s:o}", "payload",
                               s ? json_loads (s, 0, NULL) : json_null ())))
            break;
        o = on_response (hk, msg);
        json_decref (msg);
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    return o;
}

int main (int argc, char *argv[])
{
    const char *opt = NULL, *sopt = NULL, *jobid = getenv ("FLUX_JOB_ID");
    struct cairn_error err = {{0}};
    struct hk hk = {0};
    char *dir = NULL, *end = NULL;
    bool said = false;

    for (int i = 1; i < argc; i++) {
        if (!strncmp (argv[i], "statedir=", 9))
            opt = argv[i] + 9;
        else if (!strncmp (argv[i], "socket=", 7))
            sopt = argv[i] + 7;
        else if (!strcmp (argv[i], "--statedir") && i + 1 < argc)
            opt = argv[++i];
        else if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            usage (stdout);
            return 0;
        } else {
            fprintf (stderr, PROG ": unknown argument '%s'\n", argv[i]);
            usage (stderr);
            return 2;
        }
    }
    errno = 0;
    if (!jobid || !*jobid ||
        ((void)(hk.id = strtoull (jobid, &end, 10)), errno || *end)) {
        fprintf (stderr, PROG ": FLUX_JOB_ID is not a decimal job id (%s);"
                         " run by Flux's housekeeping only\n",
                 jobid ? jobid : "unset");
        return 2;
    }
    if (!(hk.h = flux_open (NULL, 0)) || flux_get_rank (hk.h, &hk.rank) < 0) {
        fprintf (stderr, PROG ": cannot reach this rank's broker: %s\n",
                 strerror (errno));
        return 2;
    }
    uid_t owner = (uid_t)-1; /* served by root or by us */
    if (sopt) { /* cairnd's public-socket: a system instance's (not root) */
        if (!(hk.sock = statedir_expand_rank (sopt, hk.rank))) {
            fprintf (stderr, PROG ": out of memory\n");
            return 2;
        }
    } else {
        char *expanded = opt ? statedir_expand_rank (opt, hk.rank) : NULL;
        if (opt && !expanded) {
            fprintf (stderr, PROG ": out of memory\n");
            return 2;
        }
        dir = statedir_resolve (expanded, NULL, &err);
        free (expanded);
        if (!dir || !(hk.sock = statedir_socket (dir))) {
            fprintf (stderr, PROG ": cairnd's state directory: %s\n",
                     err.text[0] ? err.text : strerror (errno));
            return 2;
        }
        /* served by root, by us, or by the state dir's owner (cairnd's) */
        struct stat sb;
        owner = stat (dir, &sb) == 0 ? sb.st_uid : (uid_t)-1;
        free (dir);
    }
    bool node = false;
    for (;;) {
        struct client *c =
            node ? NULL : client_connect_as (hk.sock, owner, &err);
        enum outcome o = WAIT_AGAIN;
        if (node)
            o = follow_rank0 (&hk);
        else if (c) {
            o = follow (&hk, c);
            client_close (c);
            if (o == NODE) {
                node = true;
                continue;
            }
        } else if (!said) {
            fprintf (stderr, PROG ": job %" PRIu64 " rank %" PRIu32
                             ": %s; retrying every second\n",
                     hk.id, hk.rank, err.text);
            said = true;
        }
        if (o != WAIT_AGAIN) {
            flux_close (hk.h);
            free ((char *)hk.sock);
            return o == RELEASED ? 0 : o == RELEASED_DRAINED ? 1 : 2;
        }
        sleep (1);
    }
}
