/* cairnsvc.h - the `cairn` Flux service of cairn-exec.so, on every broker
 * rank (DESIGN-MULTINODE.md, "Flux RPCs between the modules").
 *
 * A request `cairn.<name>` is forwarded unchanged to a cairnd as request
 * `<name>`, and the Flux request is answered with cairnd's answer: its
 * payload, or its error (errnum, errstr). When that cairnd is not
 * connected, or the connection drops before it answers, the answer is
 * ENOTCONN with a text naming the rank and the state directory. The
 * callers (noderelay.h on rank 0, nodeagent.h on the other ranks) decide
 * which topics they serve; this file holds what they share.
 */
#ifndef CAIRN_FLUX_CAIRNSVC_H
#define CAIRN_FLUX_CAIRNSVC_H

#include <stdbool.h>
#include <stdint.h>
#include <flux/core.h>
#include <jansson.h>

#include "flux/cconn.h"

#define CAIRNSVC_NAME "cairn"

struct cairnsvc;

/* Register the service `cairn` for this module, so that the broker routes
 * `cairn.*` requests to it. Nothing is done when the module itself is
 * named "cairn" (the broker registered the name with the module). Waits
 * for the broker's answer: call it while the module starts, before its
 * reactor runs. Returns 0, or -1 with errno (EEXIST: another module on
 * this broker has the service). The broker drops the registration when
 * the module unloads. */
int cairnsvc_register (flux_t *h);

/* The forwarding state for requests to cairnd over cc (borrowed: it must
 * outlive the object). rank and statedir only make the ENOTCONN text,
 * "no cairnd connected on rank R (DIR)". Returns NULL with errno ENOMEM. */
struct cairnsvc *cairnsvc_create (flux_t *h,
                                  struct cconn *cc,
                                  uint32_t rank,
                                  const char *statedir);

/* Answer every request still waiting with ENOSYS ("module unloading") and
 * free. NULL is fine. */
void cairnsvc_destroy (struct cairnsvc *svc);

/* Forward the Flux request msg to cairnd as request `name` with payload
 * (an object: the request's own payload, as a rule). The request is
 * answered later, with cairnd's answer (cconn_rpc) or from cairnsvc_fail_all, or at
 * once with ENOTCONN (cairnd not connected) or ENOMEM. */
void cairnsvc_forward (struct cairnsvc *svc,
                       const flux_msg_t *msg,
                       const char *name,
                       const json_t *payload);

/* The same for a request whose answer is a job's stream (a `start` with
 * reattach): each of cairnd's responses is a Flux response, up to and
 * including the job's final release, which ENODATA follows (the end of
 * a Flux stream); an error answer ends it too. */
void cairnsvc_forward_stream (struct cairnsvc *svc,
                              const flux_msg_t *msg,
                              const char *name,
                              const json_t *payload);

/* Take the Flux request and its payload out of a `cairn.<name>` request:
 * sets *name to <name> (a pointer into the message's topic) and *payload
 * (borrowed from msg). Returns 0, or -1 with errno EPROTO (no JSON object
 * payload, a topic outside the service). */
int cairnsvc_request (const flux_msg_t *msg,
                      const char **name,
                      json_t **payload);

/* The connection to cairnd is gone: answer every waiting request with
 * ENOTCONN (cairnd will not answer them on a new connection). */
void cairnsvc_fail_all (struct cairnsvc *svc);

/* The ENOTCONN text, "no cairnd connected on rank R (DIR)". */
const char *cairnsvc_notconn (const struct cairnsvc *svc);

#endif /* CAIRN_FLUX_CAIRNSVC_H */
