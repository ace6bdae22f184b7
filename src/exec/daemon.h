/* daemon.h - cairnd: the service, its loop and its write-ahead discipline.
 *
 * One libev loop. Every input (request, process exit, timer) goes through
 * the pure job state machine (core/job.h), whose events are collected per
 * job for the current loop turn. Before the loop sleeps (ev_prepare) the
 * whole turn's events are committed in one LMDB transaction, and only then
 * are their effects carried out: spawns, signals, responses, exit-file
 * removal. Effects may produce new events (a spawn's pid); those are
 * committed by the next round of the same flush, before the loop sleeps.
 */
#ifndef CAIRN_DAEMON_H
#define CAIRN_DAEMON_H

#include <stdbool.h>

#include "core/config.h"
#include "core/error.h"

/* Exit status when the journal cannot be written: nothing uncommitted was
 * acted on; a supervisor should restart cairnd, whose replay takes over.
 * (EX_TEMPFAIL from sysexits.h.) */
#define CAIRND_EXIT_JOURNAL 75

struct cairnd;

/* Open the state dir (checking it is ours and private), lock it, open the
 * journal, replay it and reconcile every process it knows, and listen on
 * the socket. cfg is copied. NULL with errno and a message on failure. */
struct cairnd *cairnd_create (const struct cairn_config *cfg,
                              const char *statedir,
                              struct cairn_error *err);

/* Run until SIGTERM/SIGINT (clean stop: stop accepting, commit, return 0;
 * processes keep running for the next start) or a journal failure
 * (CAIRND_EXIT_JOURNAL). */
int cairnd_run (struct cairnd *d);

void cairnd_destroy (struct cairnd *d);

/* For the unit tests that drive a whole cairnd a loop turn at a time
 * (test/unit/fakedaemon.h): its loop, its journal (read), its commit turn
 * (the test switches) and whether it plays the node role. Nothing else
 * reads them: each room is lent what it uses by cairnd_create. */
struct ev_loop;
struct journal;
struct turn;
struct ev_loop *cairnd_loop (struct cairnd *d);
struct journal *cairnd_journal (struct cairnd *d);
struct turn *cairnd_turn (struct cairnd *d);
bool cairnd_is_node (const struct cairnd *d);

#endif /* CAIRN_DAEMON_H */
