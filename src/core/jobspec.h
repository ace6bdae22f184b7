/* jobspec.h - what the exec service reads from a jobspec (RFC 14, RFC 25 v1).
 *
 *   {"version": 1, "resources": [...],
 *    "tasks": [{"command": ["hostname"], "slot": "task",
 *               "count": {"per_slot": 1}}],
 *    "attributes": {"system": {"duration": 60, "cwd": "/home/u",
 *                              "environment": {"PATH": "/bin"},
 *                              "exec": {"prolog-failures-allowed": 1},
 *                              "cairn": {"rank-environment":
 *                                  {"1": {"FLUX_URI": "local:///r1"}},
 *                                        "client": "flux",
 *                                        "instance": "UUID",
 *                                        "hold-on-shrink": true,
 *                                        "hold-start": true,
 *                                        "shell-leader": true}}}}
 *
 * Only the fields above are read and checked; everything else (resources,
 * other attributes) belongs to the scheduler and is kept as it is.
 */
#ifndef CAIRN_JOBSPEC_H
#define CAIRN_JOBSPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "core/error.h"
#include "core/idset.h"

struct jobspec;

/* Validate js and extract its fields. Checked: tasks is a non-empty array;
 * tasks[0].command is a non-empty array of strings without NUL bytes;
 * attributes and attributes.system, when present, are objects; in system,
 * "duration" is a number >= 0 (0 = unset), "cwd" a string, "environment"
 * an object whose names are non-empty without '=' and whose values are
 * strings, "exec" an object whose "prolog-failures-allowed" is an
 * integer 0..INT_MAX (default 0), and "cairn" an object whose
 * "rank-environment" is an object of rank -> environment: each key a
 * decimal rank (digits only, no leading zero, at most IDSET_MAX_ID), each
 * value checked like "environment", and whose "client" and "instance" are
 * strings of 1 to JOBSPEC_CLIENT_MAX bytes without NUL, "hold-on-shrink",
 * "hold-start" and "shell-leader" booleans and "config" an object (its keys are
 * job_accept()'s to check).
 * Whether those ranks are R's is not
 * known here: see jobspec_check_ranks().
 * The result holds copies of these fields and no reference to js.
 * Returns a new jobspec (free with jobspec_destroy), or NULL with errno =
 * EINVAL and a message naming the field in err
 * ("jobspec: tasks[0].command[2]: not a string",
 * "jobspec: attributes.system.cairn.rank-environment.3.A: not a string"),
 * or ENOMEM.
 */
struct jobspec *jobspec_decode (const json_t *js, struct cairn_error *err);

/* Free js. NULL is fine. errno is preserved. */
void jobspec_destroy (struct jobspec *js);

/* tasks[0].command as a NULL-terminated argv, owned by js. */
char **jobspec_argv (const struct jobspec *js);

/* attributes.system.environment as a NULL-terminated array of
 * "NAME=value" strings in the object's order, owned by js; NULL when
 * absent (an empty object gives an empty array).
 */
char *const *jobspec_env (const struct jobspec *js);

/* attributes.system.cairn.rank-environment's entry for rank, packed like
 * jobspec_env() and owned by js; NULL when the rank has none. A job shell
 * of that rank gets these after the jobspec's environment (they override
 * it).
 */
char *const *jobspec_rank_env (const struct jobspec *js, uint32_t rank);

/* Check that every rank of attributes.system.cairn.rank-environment is in
 * ranks (R's). Returns 0, or -1 with errno = EINVAL and a message in err
 * ("jobspec: attributes.system.cairn.rank-environment.7: rank 7 is not in
 * R").
 */
int jobspec_check_ranks (const struct jobspec *js,
                         const struct idset *ranks,
                         struct cairn_error *err);

/* attributes.system.cwd (borrowed), or NULL when absent. */
const char *jobspec_cwd (const struct jobspec *js);

/* The longest attributes.system.cairn.client. */
#define JOBSPEC_CLIENT_MAX 64

/* attributes.system.cairn.client: which kind of client started the job
 * ("flux" for cairn-exec.so), so that it can find its own jobs in `list`;
 * NULL when unset. Owned by js. */
const char *jobspec_client (const struct jobspec *js);

/* attributes.system.cairn.instance: the Flux instance whose cairn-exec.so
 * started the job (its UUID, exec/bind.h), a string like "client"; NULL
 * when unset. Owned by js. */
const char *jobspec_instance (const struct jobspec *js);

/* attributes.system.cairn.hold-on-shrink: when a tolerated prolog failure
 * leaves ranks out, the job waits after its prolog, with no shell started,
 * until its client says `resume` (the client first shrinks what its shells
 * will read of R: cairn-exec.so rewrites the job's R in the KVS). false
 * when unset. */
bool jobspec_hold_on_shrink (const struct jobspec *js);

/* attributes.system.cairn.hold-start: the job's shells wait for its
 * client's word that what they need outside cairn is there (Flux: the
 * guest KVS namespace, which cairn-exec.so creates while the prolog
 * runs). The client says `resume` once, at any time after the accept:
 * said before the prolog ends, the job is `ready` and its shells start
 * at the prolog's end; not said by then, the job is held with every rank
 * (`hold`) until it is. With hold-on-shrink, a tolerated prolog failure
 * holds the job whatever was said, as before. false when unset. */
bool jobspec_hold_start (const struct jobspec *js);

/* attributes.system.cairn.shell-leader: the shell on the job's first rank
 * leads the others (flux-shell's shell rank 0, which waits for every
 * other shell): a shell killed by a signal cairn did not send ends the
 * job (the first rank's) or is a node failure (another non-critical
 * rank's), as Flux's job-exec decides (job_decide.c, shell-end). false
 * when unset. */
bool jobspec_shell_leader (const struct jobspec *js);

/* attributes.system.duration in seconds; 0 when unset. */
double jobspec_duration (const struct jobspec *js);

/* attributes.system.exec.prolog-failures-allowed; 0 when absent. */
int jobspec_prolog_failures_allowed (const struct jobspec *js);

/* Build a minimal valid v1 jobspec for `cairn run`: nranks nodes with one
 * one-core task slot each, tasks[0].command = argv, and attributes.system
 * with duration, cwd (if non-NULL), a copy of environment (if non-NULL)
 * and exec.prolog-failures-allowed (if > 0).
 * Returns a new reference (caller must json_decref), or NULL with errno =
 * EINVAL (argv NULL or empty, nranks 0, duration negative or not finite,
 * prolog_failures_allowed < 0, or a result that jobspec_decode() refuses,
 * e.g. a bad environment name) or ENOMEM.
 */
json_t *jobspec_create (char **argv,
                        uint32_t nranks,
                        const char *cwd,
                        const json_t *environment,
                        double duration,
                        int prolog_failures_allowed);

#endif /* CAIRN_JOBSPEC_H */
