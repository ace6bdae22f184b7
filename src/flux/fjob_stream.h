/* fjob_stream.h - cairnd's responses to a Flux job, handled in order
 * (fjob_stream.c): each decoded once (stream_resp_of) and handed to its
 * handler in a table. fjob.c queues them; the handlers speak through
 * fjob_say.h.
 */
#ifndef CAIRN_FLUX_FJOB_STREAM_H
#define CAIRN_FLUX_FJOB_STREAM_H

struct fjob; /* fjobrec.h */

/* Handle the queue of cairnd's responses, in order, one
 * asynchronous step at a time, until it is empty or the final release is
 * sent; nothing while the guest namespace is being made (job->ns). */
void fjob_process (struct fjob *job);

#endif /* CAIRN_FLUX_FJOB_STREAM_H */
