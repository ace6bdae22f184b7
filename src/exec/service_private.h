/* service_private.h - the parts of the service (service.h), one file per
 * family of requests, and what they share:
 *
 *   service.c        create/destroy, the handlers table and who may send
 *                    each request, the dispatch, the helpers below
 *   service_start.c  start: a new job, or a reattach and its backlog
 *   service_job.c    the requests on a running job: exception, kill,
 *                    expiration, critical-ranks, fail-ranks, resume, post
 *   service_admin.c  undrain, list, bind, stats
 *
 * Private to these files: nothing else includes it.
 */
#ifndef CAIRN_EXEC_SERVICE_PRIVATE_H
#define CAIRN_EXEC_SERVICE_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/idset.h"
#include "exec/bind.h"
#include "exec/service.h"
#include "exec/trust.h"

struct service {
    /* lent (service.h): the wiring's */
    const struct cairn_config *cfg;
    uid_t uid;
    double t_start;
    struct journal *journal;
    struct outbox *outbox;
    struct jobtable *jobs;
    struct turn *turn;
    struct streams *streams;
    struct jobctx *jctx;
    struct trust *trust;
    struct usercost *cost;
    struct quota *quota;
    struct bindings *bindings;
    struct killwait *kills;
    struct procs *procs;
    struct views *views;
    struct node *node;
    struct remote *remote; /* rank 0's other nodes, or NULL (node role) */
    struct service_ops ops;
    void *arg;
    /* its own */
    bool stopping; /* service_stopping(): every request gets EAGAIN */
    char bind_refused[BIND_UUID_MAX + 1]; /* last refused: logged once */
};

/* A request's handler, called once its sender may send it (service.c's
 * table). */
typedef void (*service_handler_f) (struct service *svc,
                                   struct conn *c,
                                   int64_t matchtag,
                                   json_t *payload);

/* Root, cairnd's own uid and a Flux instance's owner (a resource
 * manager submitting for its users) are privileged (trust.h). */
static inline bool service_privileged (const struct service *svc, uid_t uid)
{
    return trust_privileged (svc->trust, uid);
}

/* payload.id, a job id: 0, or -1 after the EPROTO response. */
int service_get_id (struct conn *c,
                    int64_t matchtag,
                    json_t *payload,
                    uint64_t *id);

/* The active job named by payload.id, or NULL after the error response
 * (EPROTO, ENOENT, or EINVAL for a job already clean). */
struct jobentry *service_get_job (struct service *svc,
                                  struct conn *c,
                                  int64_t matchtag,
                                  json_t *payload);

/* payload.ranks, an idset (caller must free), or NULL after the error
 * response (EPROTO, EINVAL). */
struct idset *
service_get_ranks (struct conn *c, int64_t matchtag, json_t *payload);

/* Who submitted a job: its owner (the accept's userid, -1 if the job is
 * unknown), whether a privileged client sent it (not "privileged": false
 * in the accept) and its shells' uid (the IMP's, else uid). */
struct submitter {
    json_int_t uid;
    bool privileged;
    json_int_t shell_uid;
};

/* Job id's submitter: from memory if active, else its accept event. */
struct submitter service_submitter (struct service *svc, uint64_t id);

/* An RFC 32 response {id, type, data} (data taken; NULL: {}). */
json_t *service_response (uint64_t id, const char *type, json_t *data);

/* The handlers (service_start.c, service_job.c, service_admin.c). */
void service_req_start (struct service *svc,
                        struct conn *c,
                        int64_t matchtag,
                        json_t *payload);
void service_req_exception (struct service *svc,
                            struct conn *c,
                            int64_t matchtag,
                            json_t *payload);
void service_req_kill (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload);
void service_req_expiration (struct service *svc,
                             struct conn *c,
                             int64_t matchtag,
                             json_t *payload);
void service_req_critical_ranks (struct service *svc,
                                 struct conn *c,
                                 int64_t matchtag,
                                 json_t *payload);
void service_req_fail_ranks (struct service *svc,
                             struct conn *c,
                             int64_t matchtag,
                             json_t *payload);
void service_req_resume (struct service *svc,
                         struct conn *c,
                         int64_t matchtag,
                         json_t *payload);
void service_req_post (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload);
void service_req_undrain (struct service *svc,
                          struct conn *c,
                          int64_t matchtag,
                          json_t *payload);
void service_req_list (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload);
void service_req_bind (struct service *svc,
                       struct conn *c,
                       int64_t matchtag,
                       json_t *payload);
void service_req_stats (struct service *svc,
                        struct conn *c,
                        int64_t matchtag,
                        json_t *payload);

#endif /* CAIRN_EXEC_SERVICE_PRIVATE_H */
