/* testenv.h - every environment switch that exists for tests and
 * benchmarks, in one place. None of them is for production: each breaks
 * a promise of cairn's on purpose (a durability, a timing, the
 * write-ahead rule) so that a test can look at what happens then. The
 * programs read them only through these names; TESTING.md, "Test
 * switches", says which test uses which.
 *
 * (Switches a user may set — CAIRN_SOCKET, CAIRN_STATEDIR,
 * CAIRN_RECONNECT_TIMEOUT — are in cairn(1); CAIRN_EXECID and the
 * other variables cairn gives a job are in cairn-shim(8).)
 */
#ifndef CAIRN_TESTENV_H
#define CAIRN_TESTENV_H

/* ---- crash points and faults (journal/crashpoint.c; crashpoint.h) ---- */

/* NAME:K[,NAME:K...]: SIGKILL the process the K-th time NAME is passed. */
#define TESTENV_CRASH_AT "CAIRN_CRASH_AT"
/* FILE: append every crash point passed, one name a line. */
#define TESTENV_CRASH_COUNT "CAIRN_CRASH_COUNT"
/* NAME:K[:ERRNO]: fault_inject(NAME) / fault_only(NAME) fails the K-th
 * time (K '*': every time) with ERRNO (default EIO). */
#define TESTENV_FAULT "CAIRN_FAULT"

/* ---- cairnd (exec/daemon.c) ---- */

/* A directory that stands for /proc (the stray reaper's and proc_look's
 * view; `cairn procs` reads it too). */
#define TESTENV_PROCROOT "CAIRN_PROCROOT"
/* A file that stands for /proc/sys/kernel/random/boot_id: a "reboot". */
#define TESTENV_BOOTID_FILE "CAIRN_BOOTID_FILE"
/* Set: commits without fdatasync (benchmarks of everything but the
 * disk). */
#define TESTENV_BENCH_NOSYNC "CAIRN_BENCH_NOSYNC"
/* Set: act on a batch before committing it, breaking the write-ahead
 * rule, so that the crash harness can show it catches the breach. */
#define TESTENV_UNSAFE_EFFECTS_FIRST "CAIRN_TEST_UNSAFE_EFFECTS_FIRST"
/* Set: the supervisor's start times are one clock tick off /proc's. */
#define TESTENV_CLOCK_SKEW "CAIRN_TEST_CLOCK_SKEW"
/* MS: each batch lands (its effects run) MS milliseconds after it is on
 * disk, so that a test can act in between (W9). */
#define TESTENV_LAND_DELAY "CAIRN_TEST_LAND_DELAY"

/* ---- cairn-shim (shim/serve.c, shim/drop.c) ---- */

/* FILE: hold each spawn child right after its clone while FILE exists. */
#define TESTENV_SPAWN_HOLD "CAIRN_TEST_SPAWN_HOLD"
/* Set: the supervisor's clock tells no command's start tick, as if every
 * clone straddled one; it reads /proc instead. */
#define TESTENV_TICK_UNKNOWN "CAIRN_TEST_TICK_UNKNOWN"
/* In a user's command's environment, "1": stop (SIGSTOP) between the uid
 * drop and the exec. */
#define TESTENV_STOP_AT_DROP "CAIRN_TEST_STOP_AT_DROP"

/* ---- cairn-exec.so (flux/fjob.c) ---- */

/* FILE: hold each job's final release while FILE exists. */
#define TESTENV_HOLD_RELEASE "CAIRN_TEST_HOLD_RELEASE"
/* FILE: make no new job's guest namespace while FILE exists (cairnd has
 * the job meanwhile: its prolog ends first and its shells are held). */
#define TESTENV_HOLD_NS "CAIRN_TEST_HOLD_NS"

#endif /* CAIRN_TESTENV_H */
