/* verify.h - check a job's journal against the invariants cairn promises.
 *
 * Pure, no I/O: the caller reads a job's events (from the journal, a dump,
 * or a test's hand-made list) and gets back a list of problems. Used by
 * `cairn verify` and by the crash harness after every run.
 *
 * The invariants (cairn-journal(5)):
 *   - sequence numbers start at 0 and have no gaps or repeats;
 *   - the first event is `accept`, and job_apply() accepts every event;
 *   - every proc-spawn/-signal/-exit/-lost/-fail names an execid that a
 *     proc-intent introduced; a process is spawned at most once, ends at
 *     most once, and is not signalled after it ended;
 *   - `start` comes after `prolog-finish` when there is a prolog, at most
 *     once; `finish` only after `start`, at most once;
 *   - a failed prolog (prolog-finish with a non-zero status) is preceded
 *     by a fatal exception (Flux's order);
 *   - every released or drained rank is one of R's ranks; a rank is
 *     released at most once, never while a process working for it has not
 *     ended, and the final release is the last release and comes after
 *     `finish` (if the job has one);
 *   - `clean` is the last event; a clean job released exactly R's ranks,
 *     has its final release, its finish if it started, and no process left
 *     that has not ended (a process given up on as unkillable has ended:
 *     its proc-lost says so).
 */
#ifndef CAIRN_VERIFY_H
#define CAIRN_VERIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

/* Check the events of job id. events is a JSON array whose elements are
 * either RFC 18 entries, the element at index i then being event seq i,
 * or objects {"seq": N, "event": ENTRY} (optionally with "id", which must
 * be id) as `cairn dump` prints them, in the order read.
 * Each problem found is appended to the array problems as
 * {"seq": N, "problem": "text"}, where N is the sequence number of the
 * event at fault (for what a clean job lacks: its `clean` event).
 * Problems are listed in event order; one fault is reported once (an event
 * that breaks an invariant named above is not also reported as refused by
 * job_apply).
 * Returns the number of problems appended (0: the job is consistent), or
 * -1 with errno = EINVAL (events or problems not an array) or ENOMEM.
 */
int verify_job (uint64_t id, const json_t *events, json_t *problems);

/* Check what the journal's job record says against the job's events:
 * nevents must equal the number of events read, and the job is marked
 * active exactly when its events do not end with `clean`.
 * Appends {"seq": -1, "problem": ...} to problems for each mismatch.
 * Returns the number appended, or -1 with errno = EINVAL or ENOMEM.
 */
int verify_record (uint32_t nevents,
                   bool active,
                   const json_t *events,
                   json_t *problems);

#endif /* CAIRN_VERIFY_H */
