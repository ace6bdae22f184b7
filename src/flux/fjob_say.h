/* Fjob_say.h - what a Flux job says (fjob_say.c): its state moves by
 * fjobstate.h's table, its answers to the job-manager, and resumes and
 * exceptions to cairnd. The lowest of the job's three files: fjob.c and
 * fjob_stream.c call it, it calls neither.
 */
#ifndef CAIRN_FLUX_FJOB_SAY_H
#define CAIRN_FLUX_FJOB_SAY_H

#include <stdbool.h>
#include <jansson.h>

#include "flux/fjobstate.h"

struct fjob; /* Fjobrec.h */

/* Move the job by ev (fjobstate.h's table). Returns true, or
 * false with a line in the log and the state left alone when the table
 * has no such move: the caller then does nothing of what the move was
 * for. */
bool fjob_move (struct fjob *job, enum fjob_event ev);

/* Answers to the job-manager's start request (data_new stolen;
 * NULL: {}). */
void fjob_jm_respond (struct fjob *job, const char *type, json_t *data_new);
void fjob_jm_exception (struct fjob *job,
                        int severity,
                        const char *type,
                        const char *note);
/* Tell cairnd the job's R is shrunk (sent again after a
 * reconnect until answered: cairnd's `resume` is idempotent). */
void fjob_send_resume (struct fjob *job);
/* Tell cairnd the job's guest namespace is there (a ready
 * `resume`, fjob.c's say_ready). */
void fjob_send_ready (struct fjob *job);

/* Is the guest namespace still to be made (job->ns, ns_wait)? */
bool fjob_ns_pending (const struct fjob *job);
/* For the tests: does the file the environment variable env names exist
 * (core/testenv.h's holds)? */
bool fjob_test_held (const char *env);
/* End the job with a fatal exec exception, through cairnd,
 * which journals it and sends it back on the stream. */
void fjob_raise_fatal (struct fjob *job, const char *note);
/* The same, and with echo, cairnd's copy on the stream is
 * dropped (Flux has it already). */
void fjob_raise (struct fjob *job, const char *note, bool echo);
/* Fshell.h's verdict on the shells: a fatal exception,
 * through cairnd (arg: the job). */
void fjob_shell_fatal (void *arg, const char *note);

#endif /* CAIRN_FLUX_FJOB_SAY_H */
