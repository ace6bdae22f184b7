/* killwait.h - kills that wait for their job's shells to start.
 *
 * A job runs once its shells' starts are journaled; the supervisor makes
 * them a moment later. A `kill` in between would find nothing to signal,
 * so it waits, unanswered, until no shell of the job is starting, and is
 * carried out then, its signals in the same batch as the last start. Nothing
 * of it is journaled before: a crash loses it with its connection, and its
 * client, never answered, knows it was not done.
 *
 * This room only holds them: when a job's shells no longer start is the
 * caller's judgement (the daemon's stage, once per job and turn), and what
 * carrying a kill out means is its ops' kill. A job is named by its entry's
 * address, never dereferenced here.
 */
#ifndef CAIRN_KILLWAIT_H
#define CAIRN_KILLWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KILLWAIT_MAX 16 /* held kills a job may have */

struct conn;     /* server/server.h */
struct jobentry; /* the caller's job: compared by address only */
struct killwait;

struct killwait_ops {
    /* Carry out a held kill of je's now: its client (c) still waits for
     * the answer. Called from killwait_run(); may not call back into this
     * room for je. */
    void (*kill) (void *arg,
                  struct jobentry *je,
                  struct conn *c,
                  int64_t matchtag,
                  int signum);
};

/* The held kills of every job, carried out through ops (copied) with arg.
 * NULL with errno ENOMEM. */
struct killwait *killwait_create (const struct killwait_ops *ops, void *arg);

/* Drops every held kill, unanswered (their clients' connections are going
 * with the daemon). NULL is fine; errno is kept. */
void killwait_destroy (struct killwait *kw);

/* Hold a kill of je's: 0, or -1 with errno ENOMEM, or EAGAIN when the job
 * holds KILLWAIT_MAX already. Carried out in the order they came. */
int killwait_add (struct killwait *kw,
                  struct jobentry *je,
                  struct conn *c,
                  int64_t matchtag,
                  int signum);

/* Does je hold any kill? Cheap when no job holds one (the common case):
 * the daemon asks it of every job it stages. */
bool killwait_holds (const struct killwait *kw, const struct jobentry *je);

/* Carry out je's held kills now (ops.kill for each whose client still
 * waits), and forget them. */
void killwait_run (struct killwait *kw, struct jobentry *je);

/* c went away: its held kills are dropped (never carried out). */
void killwait_conn_gone (struct killwait *kw, struct conn *c);

/* je is forgotten: its held kills go, unanswered. */
void killwait_drop (struct killwait *kw, const struct jobentry *je);

/* The held kills whose clients still wait, of all jobs (`stats`). */
size_t killwait_count (const struct killwait *kw);

#endif /* CAIRN_KILLWAIT_H */
