/* shim.h - the two faces of the cairn-shim program.
 *
 * cairn-shim runs one command (shim_main, the contract in
 * exec/shim_proto.h). Started as `cairn-shim --spawner FD` it is instead
 * cairnd's spawner (shim_serve, the wire in exec/spawner_proto.h): it
 * forks a shim per request that runs shim_main without an exec, so that a
 * command costs one exec (its own), not two.
 */
#ifndef CAIRN_SHIM_H
#define CAIRN_SHIM_H

#include <sys/types.h>

/* Run the command of argv (a shim's argv, argv[0] its name) with the
 * environment `environ`, supervise it, write its exit record. Returns the
 * shim's exit code (shim_proto.h). */
int shim_main (int argc, char *argv[]);

/* Supervise the commands cairnd (pid cairnd, which the crash point
 * "shim.drop.before" kills) asks for on sock (shim/serve.c,
 * exec/spawner_proto.h), telling the keeper on keeper (or -1: none) of
 * each command's output pipes (supervise/keeper_proto.h). Once cairnd's end is closed, start nothing more
 * and exit when the last command has been seen through. Never returns:
 * exits 0 then, 1 on a broken request stream or a failed setup. */
void shim_serve (int sock, pid_t cairnd, int keeper)
    __attribute__ ((noreturn));

/* Keep the node (shim/keep.c, exec/keeper_proto.h): answer cairnd's
 * requests on sock, starting each supervisor as `shim --spawner 3 CAIRND`;
 * see each inherited command of a dead supervisor through (its exit
 * record appended to its marker). Once cairnd's end is closed, exit when
 * no supervisor and no inherited command is left. Never returns: exits 0
 * then (at once if cairnd, whose pid is cairnd, is already gone), 1 on a
 * failed setup. */
void shim_keep (int sock, pid_t cairnd, const char *shim)
    __attribute__ ((noreturn));

/* Field 22 of /proc/PID/stat into *ticks: pid's start in clock ticks
 * since boot. 0, or -1 (no such process, or a line not understood). */
int shim_start_ticks (pid_t pid, unsigned long long *ticks);

#endif /* CAIRN_SHIM_H */
