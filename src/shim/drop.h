/* drop.h - `cairn-shim --drop`, a command's last steps as its user
 * (drop.c). cmd.c execs it with the argv and environment drop.c
 * describes; main.c dispatches to it.
 */
#ifndef CAIRN_SHIM_DROP_H
#define CAIRN_SHIM_DROP_H

/* `cairn-shim --drop ...`: a command's last steps as its user, after the
 * exec that frees the supervisor's vfork (shim/drop.c says why and
 * what its argv and environment hold). Returns only on a usage error
 * before anything ran. */
int shim_drop_main (int argc, char *argv[]);

/* The byte before each entry of `cairn-shim --drop`'s environment, so
 * that no libc reads any of them as a variable (drop.c). */
#define SHIM_DROP_ENV_MARK '\x01'

#endif /* CAIRN_SHIM_DROP_H */
