/* adopt.h - may the module take cairnd's job of a Flux job's id as that
 * Flux job's?
 *
 * The module reattaches to a job id before it starts one (fjob.c), and
 * follows jobs the job-manager lists (resync.c): whatever cairnd runs
 * under that id would then end the Flux job with its status and output.
 * cairnd's `reattached` response says who submitted the job ({"userid":
 * N, "privileged": B}, cairn-protocol(7)); the job is the Flux job's only
 * if it has the owner the job-manager gave and came from a privileged
 * client (root or cairnd's uid: this module), never from a user on
 * cairnd's public socket who took the id first.
 *
 * No Flux here, so that the unit test can link it alone.
 */
#ifndef CAIRN_FLUX_ADOPT_H
#define CAIRN_FLUX_ADOPT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* data: the `reattached` response's data; userid: the Flux job's owner;
 * f58: the job's id, for the note. Returns 0 if the job may be adopted,
 * else -1 with errno and the reason in note (len bytes, a job exception's
 * note):
 *   EPROTO  data does not say the owner (no integer "userid")
 *   EPERM   another owner, or "privileged" is false (a user's job)
 */
int adopt_check (const json_t *data,
                 uint32_t userid,
                 const char *f58,
                 char *note,
                 size_t len);

#endif /* CAIRN_FLUX_ADOPT_H */
