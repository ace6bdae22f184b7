/* trust.h - whom cairnd acts for, and as whom (SECURITY.md).
 *
 * A request's sender is its connection's SO_PEERCRED uid. Three kinds:
 *
 *   root and cairnd's own uid: trusted with everything (a resource
 *     manager run by root, cairn's own tools);
 *   the Flux instance's owner, cairn.conf "flux.instance-owner": the
 *     unprivileged user a Flux system instance's brokers run as. It is a
 *     resource manager (job ids of any range, no user quotas, the node
 *     and drain requests), but it cannot make cairnd run anything as
 *     another user, or as root, that the site or that user did not ask
 *     for — no more than Flux's own job-exec can:
 *       T1 a job of another uid runs its shells through "flux.imp"
 *          (`IMP exec SHELL ARGS`), started as the owner's uid: the IMP
 *          runs the shell as the user only if that user signed the job
 *          (J), the owner is in its allowed-users and the shell in its
 *          allowed-shells. Without "flux.imp" such a job is refused.
 *       T2 never a job of uid 0 (the IMP refuses root too).
 *       T3 a job's config in its jobspec names no command (prolog or
 *          epilog command, exec.job-shell): what runs as root is the
 *          site's own file's.
 *       T4 on a node cairnd, it runs commands as itself, and as root only
 *          the node's own prolog or epilog command, with no working
 *          directory and only CAIRN_ and FLUX_JOB_ variables.
 *       T5 it acts on, and reads, only the jobs its instance started:
 *          those whose shells run as the owner (T1). Another user's
 *          direct job (cairn run on the public socket) and root's are
 *          not its: no reattach (output), job-events (environment),
 *          exception, kill, expiration, critical-ranks, fail-ranks,
 *          resume or post on them, and no command or cwd in `jobs`.
 *   anyone else: its own jobs only (service.c's access table).
 *
 * Each refusal is EPERM with a message naming the rule's cause; nothing
 * is journaled for it.
 */
#ifndef CAIRN_EXEC_TRUST_H
#define CAIRN_EXEC_TRUST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "core/error.h"

struct cairn_config; /* core/config.h */
struct job;
struct trust;

/* At startup, for a cairnd of uid with cfg (read live): resolve
 * flux.instance-owner (a user name or a decimal uid) into the instance's
 * uid (trust_instance_uid; -1 without one). NULL with errno and a message
 * for an unknown user, for root or cairnd's own uid (trusted already), for
 * an owner while cairnd is not root (it could not act for other users),
 * or ENOMEM. A flux.imp that is not a setuid-root executable is only
 * warned about (the site may install it later); its jobs then fail at
 * their start.
 */
struct trust *trust_create (const struct cairn_config *cfg,
                            uid_t uid,
                            struct cairn_error *err);

/* NULL is fine; errno is kept. */
void trust_destroy (struct trust *t);

/* flux.instance-owner's uid, or -1 when there is none. */
int64_t trust_instance_uid (const struct trust *t);

/* Root, cairnd's uid, or the instance's owner: the resource manager's
 * requests (ids of any range, no quotas, privileged topics). */
bool trust_privileged (const struct trust *t, uid_t uid);

/* The instance's owner (not root, not cairnd's uid): T1-T5 apply. */
bool trust_is_owner (const struct trust *t, uid_t uid);

/* T5: may sender act on, or read, a job whose shells start as shell_uid
 * (job_shell_uid, or the accept's imp.uid else its userid)? Always true
 * for a sender that is not the instance's owner: the access table judges
 * those. */
bool trust_owner_job (const struct trust *t, uid_t sender, int64_t shell_uid);

/* The uid a job's shells start as, from its accept's context: the IMP's
 * caller (imp.uid, T1), else its userid; -1 if it says neither. */
json_int_t trust_shell_uid (const json_t *accept);

/* A new job's start from sender for userid: T1-T3. For T1 it calls
 * job_set_imp() on job (before its accept). Returns 0, or -1 with errno
 * (EPERM, ENOMEM) and a message.
 */
int trust_start (struct trust *t,
                 uid_t sender,
                 uint32_t userid,
                 const json_t *jobspec,
                 struct job *job,
                 struct cairn_error *err);

/* A node-exec from sender (its payload as node.c decoded it: "user"
 * absent means root): T4. Returns 0, or -1 with errno = EPERM and a
 * message. */
int trust_node_exec (const struct trust *t,
                     uid_t sender,
                     const json_t *payload,
                     struct cairn_error *err);

#endif /* CAIRN_EXEC_TRUST_H */
