/* crashpoint.h - named crash points and fault injection.
 *
 * Every journal write and every side effect cairnd performs passes a named
 * point (e.g. "journal.commit.after", "exec.spawn.before"). The points cost
 * one predictable branch when no variable below is set.
 *
 * Environment (read once by crashpoint_init):
 *   CAIRN_CRASH_AT=NAME:K     SIGKILL ourselves the K-th time NAME is passed
 *                             (K counts from 1, in this process's lifetime).
 *                             Up to 4, comma-separated: the first reached
 *                             kills (the supervisor at one of its points,
 *                             then cairnd at one of its own).
 *   CAIRN_CRASH_COUNT=FILE    append "NAME\n" to FILE each time a point is
 *                             passed (O_APPEND, one write each), so a harness
 *                             can enumerate (NAME, K) pairs.
 *   CAIRN_FAULT=NAME:K[:ERRNO] make fault_inject(NAME) return ERRNO (default
 *                             EIO) the K-th time it is called; K may be '*'
 *                             for every time.
 * Passes may come from several threads (the supervisor's workers): the
 * counts are atomic; crashpoint_init runs before any thread starts.
 */
#ifndef CAIRN_CRASHPOINT_H
#define CAIRN_CRASHPOINT_H

#include <stdbool.h>

extern bool crashpoint_active;

/* Read the environment. Safe to call more than once. */
void crashpoint_init (void);

/* Slow path of CRASHPOINT(); call the macro instead. */
void crashpoint_pass (const char *name);

#define CRASHPOINT(name)                                                       \
    do {                                                                       \
        if (crashpoint_active)                                                 \
            crashpoint_pass (name);                                            \
    } while (0)

/* Count a pass of name as CRASHPOINT() does, but instead of dying return
 * true when this pass is the one CAIRN_CRASH_AT names: for a point whose
 * crash another process carries out (the spawner counts
 * "shim.drop.before" at each clone, and that clone kills cairnd when it
 * gets there: shim/serve.c). */
bool crashpoint_due (const char *name);

/* Return 0, or the errno value that CAIRN_FAULT asks this call of NAME to
 * fail with. Fault points are also crash points (counted and crashable). */
int fault_inject (const char *name);

/* fault_inject() without the crash point: for a place whose crashes the
 * points around it cover already (outbox.stage: a crash there is one
 * before the commit), so that the harness runs no case twice. */
int fault_only (const char *name);

#endif /* CAIRN_CRASHPOINT_H */
