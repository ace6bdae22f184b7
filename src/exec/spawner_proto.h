/* spawner_proto.h - the wire between cairnd (spawner.c) and the spawner,
 * which is cairn-shim started as `cairn-shim --spawner FD` (shim/serve.c).
 * Header-only and libc-only, like shim_proto.h.
 *
 * On a SOCK_STREAM socketpair, both ends blocking, one request at a time:
 *   request: u32 length, then that many bytes: the shim path (unused, kept
 *            for the log), argc, the shim's argv, envc, the environment;
 *            every item a NUL-terminated string (counts in decimal).
 *   reply:   struct spawner_reply; with pid > 0 the shim's pidfd rides
 *            along (SCM_RIGHTS). errnum != 0 means nothing was started.
 *            starttime is the shim's start in clock ticks since boot, the
 *            value of /proc/PID/stat's field 22, read off CLOCK_BOOTTIME
 *            around the clone (the kernel stamps a process in it): the
 *            same tick before and after the clone is its start tick; 0
 *            when a tick boundary fell in between (cairnd reads /proc).
 *
 * The spawner's own environment holds SPAWNER_EXECID_SLOT: each shim it
 * forks writes its execid over the zeros, in its own copy of the memory
 * that /proc/PID/environ shows, so that a restarted cairnd finds the shim
 * of an intent by its execid (procfs_find_execid) exactly as it found an
 * exec'd one.
 */
#ifndef CAIRN_EXEC_SPAWNER_PROTO_H
#define CAIRN_EXEC_SPAWNER_PROTO_H

#include <stdint.h>

#define SPAWNER_MAX_REQUEST (16u << 20)

#define SPAWNER_EXECID_SLOT                                                    \
    "CAIRN_EXECID=00000000-0000-0000-0000-000000000000"

struct spawner_reply {
    int32_t errnum;
    int32_t pid;
    uint64_t starttime;
};

/* The supervisor's messages (SUPERVISOR BRANCH, work in progress): one
 * ordered stream of fixed-size messages. A STARTED answers each request,
 * in the order of the requests: pid > 0 with its pidfd along (SCM_RIGHTS),
 * or pid 0 when no process could be made (errnum 0: the exit file says
 * why; EEXIST: the execid was used already and nothing was touched). An
 * ENDED follows, once the command's exit file is written and its process
 * reaped (code 0), or when it could not be written (code 3). */
enum spawner_msg_type {
    SPAWNER_MSG_STARTED = 1,
    SPAWNER_MSG_ENDED = 2,
};

struct spawner_msg {
    int32_t type;
    int32_t errnum;
    int32_t pid;
    int32_t code;
    uint64_t starttime;
    char execid[40];
};

#endif /* CAIRN_EXEC_SPAWNER_PROTO_H */
