/* shellout.h - the job shells' own stdout and stderr, as job-exec shows
 * them: "log" events in the job's exec.eventlog ({component, stream, rank,
 * data}), which `flux run` and `flux job attach` print. A shell that dies
 * before its tasks start (an IMP that refuses the job, a bad option) says
 * why there.
 *
 * cairnd streams them to a start or reattach that asks for "output"
 * (cairn-protocol(7), Output), each with the byte offset after it; this
 * keeps, per rank and stream, the end of what was posted, so that a
 * reattach after a lost connection asks for the rest only.
 */
#ifndef CAIRN_FLUX_SHELLOUT_H
#define CAIRN_FLUX_SHELLOUT_H

#include <jansson.h>

struct shellout;

/* shell: the job shell's path; its basename is the events' component.
 * NULL with errno = ENOMEM. */
struct shellout *shellout_create (const char *shell);
void shellout_destroy (struct shellout *so);

/* The context of the "log" event for the data of cairnd's output
 * response ({"rank", "stream", "data", "end"}), and its end recorded.
 * NULL (nothing to post) when data is empty, malformed, or already
 * posted (an end not past the recorded one). The caller owns it. */
json_t *shellout_log (struct shellout *so, const json_t *data);

/* The "output-offsets" of a reattach: rank -> {"stdout", "stderr"}, the
 * ends posted so far. A new reference; NULL on ENOMEM. */
json_t *shellout_offsets (const struct shellout *so);

#endif /* CAIRN_FLUX_SHELLOUT_H */
