/* cairnsvc.c - see cairnsvc.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/streamtype.h"
#include "flux/cairnsvc.h"

/* A Flux request waiting on cairnd's answer. */
struct fwd {
    struct cairnsvc *svc;
    int64_t matchtag;
    const flux_msg_t *msg;
    bool stream; /* a job's stream: until its final release */
    struct fwd *next;
};

struct cairnsvc {
    flux_t *h;
    struct cconn *cc;
    char *notconn;
    struct fwd *fwds; /* newest first */
};

int cairnsvc_register (flux_t *h)
{
    const char *name = flux_aux_get (h, "flux::name");
    flux_future_t *f;
    int rc;

    if (name && !strcmp (name, CAIRNSVC_NAME))
        return 0;
    if (!(f = flux_service_register (h, CAIRNSVC_NAME)))
        return -1;
    rc = flux_future_get (f, NULL);
    flux_future_destroy (f);
    return rc;
}

struct cairnsvc *cairnsvc_create (flux_t *h,
                                  struct cconn *cc,
                                  uint32_t rank,
                                  const char *statedir)
{
    struct cairnsvc *svc = calloc (1, sizeof (*svc));

    if (!svc)
        return NULL;
    svc->h = h;
    svc->cc = cc;
    if (asprintf (&svc->notconn, "no cairnd connected on rank %u (%s)",
                  (unsigned)rank, statedir) < 0) {
        free (svc);
        errno = ENOMEM;
        return NULL;
    }
    return svc;
}

static void respond_error (flux_t *h,
                           const flux_msg_t *msg,
                           int errnum,
                           const char *errstr)
{
    if (flux_respond_error (h, msg, errnum, errstr) < 0)
        flux_log_error (h, "cairn: respond");
}

/* Answer every waiting request with errnum and errstr. */
static void fail_all (struct cairnsvc *svc, int errnum, const char *errstr)
{
    while (svc->fwds) {
        struct fwd *w = svc->fwds;
        svc->fwds = w->next;
        /* a lost connection forgot it already; an unload does it here */
        cconn_rpc_cancel (svc->cc, w->matchtag);
        respond_error (svc->h, w->msg, errnum, errstr);
        flux_msg_decref (w->msg);
        free (w);
    }
}

void cairnsvc_destroy (struct cairnsvc *svc)
{
    if (!svc)
        return;
    int saved = errno;
    fail_all (svc, ENOSYS, "cairn: module unloading");
    free (svc->notconn);
    free (svc);
    errno = saved;
}

void cairnsvc_fail_all (struct cairnsvc *svc)
{
    fail_all (svc, ENOTCONN, svc->notconn);
}

const char *cairnsvc_notconn (const struct cairnsvc *svc)
{
    return svc->notconn;
}

int cairnsvc_request (const flux_msg_t *msg,
                      const char **name,
                      json_t **payload)
{
    const char *topic;

    if (flux_request_unpack (msg, &topic, "o", payload) < 0 ||
        strncmp (topic, CAIRNSVC_NAME ".", strlen (CAIRNSVC_NAME) + 1) != 0) {
        errno = EPROTO;
        return -1;
    }
    *name = topic + strlen (CAIRNSVC_NAME) + 1;
    return 0;
}

static void fwd_cb (const json_t *msg, void *arg);

static void forward (struct cairnsvc *svc,
                     const flux_msg_t *msg,
                     const char *name,
                     const json_t *payload,
                     bool stream)
{
    struct fwd *w;

    if (!cconn_up (svc->cc)) {
        respond_error (svc->h, msg, ENOTCONN, svc->notconn);
        return;
    }
    if (!(w = calloc (1, sizeof (*w)))) {
        respond_error (svc->h, msg, ENOMEM, NULL);
        return;
    }
    w->svc = svc;
    w->matchtag = cconn_rpc (svc->cc, name, payload,
                             stream ? CREPLY_STREAMING : 0, fwd_cb, w);
    if (w->matchtag < 0) {
        int e = errno;
        respond_error (svc->h, msg, e, e == ENOTCONN ? svc->notconn : NULL);
        free (w);
        return;
    }
    w->msg = flux_msg_incref (msg);
    w->stream = stream;
    w->next = svc->fwds;
    svc->fwds = w;
}

void cairnsvc_forward (struct cairnsvc *svc,
                       const flux_msg_t *msg,
                       const char *name,
                       const json_t *payload)
{
    forward (svc, msg, name, payload, false);
}

void cairnsvc_forward_stream (struct cairnsvc *svc,
                              const flux_msg_t *msg,
                              const char *name,
                              const json_t *payload)
{
    forward (svc, msg, name, payload, true);
}

/* Is this response of a job's stream its last (the final release)? */
static bool stream_end (const json_t *payload)
{
    const char *type = NULL;
    int final = 0;
    (void)json_unpack ((json_t *)payload, "{s?s s?{s?b}}", "type", &type,
                       "data", "final", &final);
    struct stream_resp r = stream_resp_of (type);
    return r.type == STREAM_EVENT && r.event == JOB_EV_RELEASE && final;
}

/* Forget w: out of the list, its wait for cairnd ended, freed. */
static void fwd_done (struct fwd *w)
{
    struct cairnsvc *svc = w->svc;

    for (struct fwd **pp = &svc->fwds; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    cconn_rpc_cancel (svc->cc, w->matchtag);
    flux_msg_decref (w->msg);
    free (w);
}

/* cairnd's answer to a forwarded request (arg: its fwd). */
static void fwd_cb (const json_t *msg, void *arg)
{
    struct fwd *w = arg;
    struct cairnsvc *svc = w->svc;
    struct cconn_msg m;

    cconn_msg_split (msg, &m);
    if (w->stream && m.errnum == 0 && json_is_object (m.payload)) {
        if (flux_respond_pack (svc->h, w->msg, "O", m.payload) < 0)
            flux_log_error (svc->h, "cairn: respond");
        if (!stream_end (m.payload))
            return;
        respond_error (svc->h, w->msg, ENODATA, NULL);
        fwd_done (w);
        return;
    }
    if (m.errnum != 0)
        respond_error (svc->h, w->msg, m.errnum > 0 ? (int)m.errnum : EPROTO,
                       m.errstr);
    else if (m.payload && !json_is_object (m.payload))
        respond_error (svc->h, w->msg, EPROTO,
                       "cairnd's answer is not a JSON object");
    else if ((m.payload ? flux_respond_pack (svc->h, w->msg, "O", m.payload)
                        : flux_respond (svc->h, w->msg, NULL)) < 0)
        flux_log_error (svc->h, "cairn: respond");
    fwd_done (w);
}
