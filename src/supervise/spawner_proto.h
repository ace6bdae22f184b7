/* spawner_proto.h - the wire between cairnd (spawner.c) and its
 * supervisor, cairn-shim started as `cairn-shim --spawner FD`
 * (shim/serve.c). Header-only and libc-only, like shim_proto.h.
 *
 * A SOCK_STREAM socketpair.
 *   request (cairnd -> supervisor): u32 length, then that many bytes: the
 *            shim path (unused, kept for the log), argc, the argv of a
 *            shim command line (shim_proto.h: --exitdir, --execid... --
 *            command), envc, the command's environment; every item a
 *            NUL-terminated string (counts in decimal). cairnd sends
 *            a job's requests without waiting for their answers (a
 *            node's spawns wait for each), blocking while the socket is
 *            full.
 *   messages (supervisor -> cairnd): struct spawner_msg, fixed size, one
 *            ordered stream. The supervisor never blocks on it: what
 *            the socket cannot take yet waits in its memory, in order
 *            (else cairnd, blocked sending a request, and the
 *            supervisor, blocked sending an answer, would wait on each
 *            other for ever).
 *     STARTED answers each request, in order: pid > 0 with a pidfd on
 *            the command along (SCM_RIGHTS); or pid 0 when no process
 *            could be made (errnum 0: its exit record says why; EEXIST: the
 *            execid was used already and nothing was touched; EPROTO: a
 *            request it could not read; another errno: nothing started).
 *            starttime is the command's start in clock ticks since boot,
 *            the value of /proc/PID/stat's field 22, read off
 *            CLOCK_BOOTTIME around the vfork (the kernel stamps a process
 *            in it): the same tick before and after is its start tick.
 *            When a tick boundary fell in between, the supervisor reads
 *            /proc/PID/stat itself, before anything can reap the command;
 *            0 only when that failed too (cairnd reads /proc).
 *     ENDED  once the command's exit record is written and the command
 *            reaped (code 0), or when the exit record could not be written
 *            (code 3, shim_proto.h's exit code for it). ENDED messages
 *            may come between a request and its STARTED. With record 1,
 *            status, out_size, err_size and leftover are what the record
 *            the supervisor wrote says, and it says nothing else (no
 *            "error"): cairnd need not read it. The record on disk stays
 *            the truth for a restart; record 0 (a record written by
 *            cairn-shim --drop, one with an error, or none) sends cairnd
 *            to it.
 */
#ifndef CAIRN_EXEC_SPAWNER_PROTO_H
#define CAIRN_EXEC_SPAWNER_PROTO_H

#include <stdint.h>

#define SPAWNER_MAX_REQUEST (16u << 20)

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
    /* ENDED: the exit record, when record is 1 */
    int32_t record;
    int32_t status;   /* wait status */
    int64_t out_size; /* -1: not said */
    int64_t err_size;
    int32_t leftover;
    int32_t pad;
};

#endif /* CAIRN_EXEC_SPAWNER_PROTO_H */
