/* procs_private.h - what the files of src/procs share. Not for use
 * outside src/procs. */
#ifndef CAIRN_PROCS_PRIVATE_H
#define CAIRN_PROCS_PRIVATE_H

#include <sys/resource.h>

#include "core/job.h"
#include "procs/procs.h"
#include "supervise/exitdir.h"
#include "supervise/spawner_proto.h"
#include "util/hashmap.h"

/* A process we watch through its shim's pidfd, for its owner. */
struct watch {
    struct procs *p;
    void *owner;
    const struct procs_owner_ops *ops;
    char execid[EXECID_LEN + 1];
    pid_t pid;
    int pidfd;
    bool supervised; /* our supervisor's: its end comes as an ENDED, and
                      * io is not started (it is readable at the exit,
                      * before the exit record is written) */
    bool orphaned;   /* its supervisor died: the keeper writes its exit
                      * record; we kill what is left of its cgroup */
    ev_io io;
    ev_timer settle; /* another's command that exited: wait for its exit
                      * file until its supervisor reaps it */
};

/* A start the supervisor has not answered yet. */
struct pending {
    char execid[EXECID_LEN + 1];
    void *owner;
    const struct procs_owner_ops *ops;
};

/* cairnd's environment as the prolog and epilog inherit it
 * (procs_start.c): entries "NAME=value" and each NAME's length. */
struct procs_env {
    char **v; /* NULL-terminated; NULL: not taken yet */
    size_t *namelen;
    size_t n;
};

struct procs {
    struct ev_loop *loop;
    char *shim;
    uid_t uid;
    const char *procroot; /* NULL: /proc */
    char bootid[40];
    int pids_max; /* a job shell's cgroup limits (cairn.conf) */
    size_t memory_max;
    struct rlimit nofile, nproc; /* a user's command's limits */
    char *cgroup;            /* cgroup-parent, checked usable, or NULL */
    struct exitdir xd;       /* the shims' files (exitdir.h) */
    struct janitor *janitor; /* removes ended processes' files */
    struct keeper *keeper;   /* forked before anything was opened */
    ev_io keeper_watch;      /* its pidfd: readable when it died */
    struct spawner *spawner; /* the supervisor, the keeper's child */
    ev_io spawner_watch;     /* its pidfd: readable when it died */
    ev_io spawner_msgs;      /* its socket: ENDED and STARTED notices */
    ev_timer spawner_kick;   /* notices queued during a spawn */
    ev_timer reap_timer;     /* procfs_reap_strays(), every second */
    struct pending *pend;    /* requests in order, answered up to */
    size_t pend_head, npend, pend_room; /* ... pend_head */
    struct pending *lost; /* a dead supervisor's unanswered ones */
    size_t nlost, lost_room;
    int supervisor_deaths;     /* within the minute from ... */
    double supervisor_death_t; /* ... this time (ev_now) */
    struct hashmap *watches;   /* execid -> watch */
    struct procs_env inherit;  /* environ as prologs inherit it */
    uint64_t nspawned;
    bool clock_starts_bad; /* the spawner's start times disagreed with /proc */
    bool test_clock_skew;  /* test switch: the spawner's are one tick off */
};

/* procs_start.c: forget a procs_env (procs_destroy). */
void procs_env_clear (struct procs_env *e);

/* procs_link.c: the supervisor's link */

/* No supervisor can be had: exit, so that a restart reconciles. */
void procs_lost (struct procs *p) __attribute__ ((noreturn));
/* The supervisor went away in the middle of a spawn. Wait for its death
 * (kill it if it lingers), adopt its commands, start a new supervisor, and
 * wait until its last start is done or never made (exitdir_settle): the
 * spawn's execid can then be looked at (procs_look). -1 with err if that
 * wait failed. */
int procs_recover (struct procs *p, struct cairn_error *err);
/* Notices may wait in the spawner's queue: look at them next turn. */
void procs_poke (struct procs *p);
/* Watch the keeper's and the supervisor's pidfds and the supervisor's
 * socket. */
void procs_link_watch (struct procs *p);
void procs_link_stop (struct procs *p);

/* procs.c: the watches */

/* Our supervisor died: every process it ran is the keeper's child now,
 * which writes its exit record at its end. Watch each through its pidfd
 * and that record. Returns how many. */
size_t procs_orphan_all (struct procs *p);
/* The supervisor saw execid through: code 0, its exit record is written;
 * else the shim exit code that says why not (shim_proto.h). rec: the
 * record it sent along, or NULL (read it). */
void procs_ended (struct procs *p,
                  const char *execid,
                  int code,
                  const struct procs_exit *rec);

/* procs_start.c: the requests in flight */

/* The supervisor's STARTED m (fd its pidfd, or -1) for the oldest pending
 * request: its owner is answered. */
void procs_answered (struct procs *p, const struct spawner_msg *m, int fd);
/* The supervisor died: its unanswered requests wait for
 * procs_orphans_settle (call it once the exit dir is settled). */
void procs_pending_orphan (struct procs *p);
/* Judge each request a dead supervisor left unanswered by its marker
 * (procs_look), and answer its owner. */
void procs_orphans_settle (struct procs *p);

/* procs_cgroup.c */
const char *procs_cgroup_path (const struct procs *p,
                               const char *execid,
                               char *buf,
                               size_t len);
void procs_cgroup_reap (struct procs *p, const char *execid);

#endif /* CAIRN_PROCS_PRIVATE_H */
