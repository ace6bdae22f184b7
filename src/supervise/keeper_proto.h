/* keeper_proto.h - the wire between cairnd (keeper.c) and the node's
 * keeper, cairn-shim started as `cairn-shim --keeper FD CAIRND_PID SHIM`
 * (shim/keep.c). Header-only and libc-only, like shim_proto.h.
 *
 * A SOCK_SEQPACKET socketpair: one struct keeper_msg a packet, with at
 * most one descriptor along (SCM_RIGHTS). cairnd asks, the keeper
 * answers each request before it reads the next.
 *   EXITDIR   (cairnd -> keeper) fd: the exit dir (exitdir.h), where the
 *             keeper finds the markers of the commands it inherits and
 *             appends their exit records. Sent once, after cairnd opened
 *             it; answered with errnum 0 (or the error of taking it).
 *   SUPERVISE (cairnd -> keeper) fd: the supervisor's end of a new
 *             socketpair (cairnd keeps the other). The keeper forks and execs
 *             `SHIM --spawner 3 CAIRND_PID` with it on 3 and nothing but
 *             0-2 besides. Answered with pid > 0 and a pidfd on the new
 *             supervisor along, or pid 0 and errnum (the fork's, or the
 *             exec's: ENOENT for a missing SHIM).
 */
#ifndef CAIRN_EXEC_KEEPER_PROTO_H
#define CAIRN_EXEC_KEEPER_PROTO_H

#include <stdint.h>

#include "supervise/shim_proto.h"

enum keeper_msg_type {
    KEEPER_MSG_EXITDIR = 1,
    KEEPER_MSG_SUPERVISE = 2,
};

struct keeper_msg {
    int32_t type;   /* the request's, echoed in its answer */
    int32_t errnum; /* answer: 0, or why it failed */
    int32_t pid;    /* SUPERVISE's answer: the new supervisor */
    int32_t pad;
};

/* The supervisor's wire to the keeper (shim/serve.c -> shim/keep.c): a
 * SOCK_SEQPACKET socketpair the keeper makes for each supervisor it
 * starts, on the supervisor's descriptor 4 (`--spawner 3 CAIRND 4`). One
 * struct keeper_pipe a packet, never answered.
 *   PIPE   fd: a copy of the read end of a command's output pipe (stream
 *          0 its stdout, 1 its stderr; cap its output cap, 0 none), sent
 *          before the command starts. The keeper reads nothing from it
 *          while the supervisor lives: it holds it so that the command's
 *          writes never meet a pipe without a reader (SIGPIPE) when the
 *          supervisor dies. Once the supervisor's end of this socket is
 *          closed (it died), the keeper drains each pipe it holds of it
 *          into the command's output file, keeping the cap, until the
 *          command's end.
 *   UNPIPE the pipes of execid are done with (the command's end, or a
 *          start that failed): the keeper closes its copies.
 */
enum keeper_pipe_type {
    KEEPER_PIPE_PIPE = 1,
    KEEPER_PIPE_UNPIPE = 2,
};

struct keeper_pipe {
    int32_t type;
    int32_t stream;
    uint64_t cap;
    char execid[SHIM_EXECID_LEN + 1];
};

#endif /* CAIRN_EXEC_KEEPER_PROTO_H */
