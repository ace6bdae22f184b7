/* output.h - live output: a job's shells' stdout and stderr sent to the
 * streams that asked for it (`"output": true`, cairn-protocol(7)), and the
 * kill escalation's `kill` notices. Nothing here is journaled or waits for
 * a commit (output.c says why).
 *
 * Lent the loop (its tail timer), the streams (whom to tell), the
 * processes (where the shells' files are) and the config (the output
 * cap); told by the streams how many ask for output (output_watch).
 */
#ifndef CAIRN_OUTPUT_H
#define CAIRN_OUTPUT_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct conn;         /* server/server.h */
struct jobentry;     /* exec/jobtable.h */
struct job_proc;     /* core/job.h */
struct streams;      /* exec/streams.h */
struct procs;        /* procs/procs.h */
struct cairn_config; /* core/config.h */
struct output;

/* Live output on loop; cfg is read live (job.output-max-bytes). NULL with
 * errno ENOMEM. */
struct output *output_create (struct ev_loop *loop,
                              struct streams *streams,
                              struct procs *procs,
                              const struct cairn_config *cfg);

/* Its timer stops. NULL is fine; errno is kept. */
void output_destroy (struct output *o);

/* delta output streams more (or fewer): the tail timer runs while any. */
void output_watch (struct output *o, int delta);

/* Does any stream ask for output? */
bool output_wanted (const struct output *o);

/* p (a shell of je) has ended: send each output stream what its files hold
 * beyond what was sent, before they are read for the journal. */
void output_flush (struct output *o,
                   struct jobentry *je,
                   const struct job_proc *p);

/* Send a stream what a `log` event (a shell's journaled output; the
 * caller decoded its name) holds beyond the offsets in sent, and advance
 * them. Notes of cairn's own and other phases' output: nothing. */
void output_send_log (struct conn *c,
                      int64_t matchtag,
                      uint64_t id,
                      json_t *sent,
                      const json_t *entry);

/* A committed `log` event of je: output_send_log() to each output stream. */
void output_log_event (struct jobentry *je, const json_t *entry);

/* A committed proc-signal (ctx) of p: a job shell's kill or kill-shell is
 * told to je's streams that asked for events, as a `kill` notice
 * (cairn-protocol(7)); anything else: nothing. */
void output_kill_notice (struct jobentry *je,
                         const struct job_proc *p,
                         const json_t *ctx);

#endif /* CAIRN_OUTPUT_H */
