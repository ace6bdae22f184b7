/* fakeprocs.h - procs.h without processes: a supervisor the test drives.
 *
 * A test program that includes this header (once) and links cairn_exec
 * gets these definitions of procs.h's functions instead of src/procs/'s:
 * the linker takes none of libcairn_procs.a's members, since nothing is
 * left undefined for them. cairnd then runs as ever, but no process is
 * started: each procs_start is recorded (fake_starts), and the test
 * decides its fate, as the supervisor would have:
 *   fake_answer  answers an asynchronous start (started, failed,
 *                unstarted, lost), as a STARTED notice or a dead
 *                supervisor's unanswered request would;
 *   fake_end     ends a watched process: writes its exit record (a wait
 *                status) in the real exit dir, then tells its owner, as
 *                an ENDED notice would; fake_vanish ends it with no
 *                record (its supervisor died, or could not write it).
 * fake_on_start and fake_on_leftovers, when set, are called inside
 * procs_start and procs_kill_leftovers, before anything is done: where a
 * test checks what the journal holds at that moment.
 */
#ifndef CAIRN_TEST_FAKEPROCS_H
#define CAIRN_TEST_FAKEPROCS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/job.h"
#include "procs/procs.h"
#include "supervise/exitfile.h"

#define FAKE_MAXSTARTS 256

struct fake_start {
    char execid[EXECID_LEN + 1];
    void *owner;
    const struct procs_owner_ops *ops;
    int64_t user;
    bool async;
    bool answered; /* async: answered already */
};

struct fake_watch {
    char execid[EXECID_LEN + 1];
    void *owner;
    const struct procs_owner_ops *ops;
    pid_t pid;
    int last_signal;
    bool used;
};

struct procs {
    int xfd;
    char path[4096];
    uint64_t nspawned;
    struct fake_start starts[FAKE_MAXSTARTS];
    size_t nstarts;
    struct fake_watch watches[FAKE_MAXSTARTS];
    size_t nsends;
    size_t nleftovers; /* procs_kill_leftovers calls */
    pid_t next_pid;
};

static struct procs *fake_procs; /* the one cairnd made */
static void (*fake_on_start) (const char *execid, void *arg);
static void *fake_on_start_arg;
static void (*fake_on_leftovers) (const char *execid);

struct procs *procs_create (const char *shim, struct cairn_error *err)
{
    struct procs *p = calloc (1, sizeof (*p));
    (void)shim;
    if (!p) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    p->xfd = -1;
    p->next_pid = 40000;
    return fake_procs = p;
}

int procs_open (struct procs *p,
                const char *statedir,
                const char *run_dir,
                const char *instance,
                const char *bootid,
                const char *procroot,
                struct cairn_error *err)
{
    (void)run_dir, (void)instance, (void)bootid, (void)procroot;
    snprintf (p->path, sizeof (p->path), "%s/exits", statedir);
    if ((mkdir (p->path, 0700) < 0 && errno != EEXIST) ||
        (p->xfd = open (p->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return errset (err, errno, "%s: %s", p->path, strerror (errno));
    return 0;
}

void procs_attach (struct procs *p, struct ev_loop *loop, bool test_clock_skew)
{
    (void)p, (void)loop, (void)test_clock_skew;
}

int procs_cgroup_setup (struct procs *p,
                        const struct cairn_config *cfg,
                        struct cairn_error *err)
{
    (void)p, (void)cfg, (void)err;
    return 0;
}

void procs_rlimit_setup (struct procs *p, const struct cairn_config *cfg)
{
    (void)p, (void)cfg;
}

const char *procs_cgroup (const struct procs *p)
{
    (void)p;
    return NULL;
}

bool procs_trusted (const struct procs *p)
{
    (void)p;
    return true;
}

int procs_seal (struct procs *p, struct cairn_error *err)
{
    (void)p, (void)err;
    return 0;
}

int procs_exitdir (const struct procs *p)
{
    return p->xfd;
}

const char *procs_exitdir_path (const struct procs *p)
{
    return p->path;
}

void procs_detach (struct procs *p)
{
    (void)p;
}

void procs_destroy (struct procs *p)
{
    if (!p)
        return;
    if (p->xfd >= 0)
        close (p->xfd);
    if (fake_procs == p)
        fake_procs = NULL;
    free (p);
}

static struct fake_watch *fake_watch_of (const struct procs *p,
                                         const char *execid)
{
    for (size_t i = 0; execid && i < FAKE_MAXSTARTS; i++)
        if (p->watches[i].used && !strcmp (p->watches[i].execid, execid))
            return (struct fake_watch *)&p->watches[i];
    return NULL;
}

int procs_start (struct procs *p,
                 const char *execid,
                 char **argv,
                 json_t *env,
                 const char *cwd,
                 size_t max_output,
                 int64_t user,
                 bool async,
                 void *owner,
                 const struct procs_owner_ops *ops,
                 struct procs_started *out,
                 struct cairn_error *err)
{
    (void)argv, (void)env, (void)cwd, (void)max_output;
    *out = (struct procs_started){.pidfd = -1};
    if (fake_on_start)
        fake_on_start (execid, fake_on_start_arg);
    if (p->nstarts == FAKE_MAXSTARTS)
        return errset (err, EAGAIN, "fakeprocs: too many starts");
    struct fake_start *s = &p->starts[p->nstarts++];
    snprintf (s->execid, sizeof (s->execid), "%s", execid);
    s->owner = owner;
    s->ops = ops;
    s->user = user;
    s->async = async;
    if (async)
        out->pending = true;
    else {
        out->pid = p->next_pid++;
        p->nspawned++;
    }
    return 0;
}

void procs_send (struct procs *p)
{
    p->nsends++;
}

int procs_watch (struct procs *p,
                 const char *execid,
                 pid_t pid,
                 int pidfd,
                 void *owner,
                 const struct procs_owner_ops *ops)
{
    (void)pidfd;
    if (fake_watch_of (p, execid)) {
        errno = EEXIST;
        return -1;
    }
    for (size_t i = 0; i < FAKE_MAXSTARTS; i++) {
        struct fake_watch *w = &p->watches[i];
        if (w->used)
            continue;
        *w = (struct fake_watch){
            .owner = owner, .ops = ops, .pid = pid, .used = true};
        snprintf (w->execid, sizeof (w->execid), "%s", execid);
        return 0;
    }
    errno = ENOMEM;
    return -1;
}

void procs_watch_started (struct procs *p,
                          const char *execid,
                          const struct procs_started *st)
{
    (void)p, (void)execid, (void)st;
}

void procs_unwatch (struct procs *p, const char *execid)
{
    struct fake_watch *w = p ? fake_watch_of (p, execid) : NULL;
    if (w)
        w->used = false;
}

bool procs_watched (const struct procs *p, const char *execid)
{
    return fake_watch_of (p, execid) != NULL;
}

size_t procs_count (const struct procs *p)
{
    size_t n = 0;
    for (size_t i = 0; i < FAKE_MAXSTARTS; i++)
        n += p->watches[i].used;
    return n;
}

size_t procs_asked (const struct procs *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nstarts; i++)
        n += p->starts[i].async && !p->starts[i].answered;
    return n;
}

uint64_t procs_nspawned (const struct procs *p)
{
    return p->nspawned;
}

void procs_signal (struct procs *p,
                   const char *execid,
                   int signum,
                   bool session)
{
    struct fake_watch *w = fake_watch_of (p, execid);
    (void)session;
    if (w)
        w->last_signal = signum;
}

int procs_kill_leftovers (struct procs *p, const char *execid)
{
    if (fake_on_leftovers)
        fake_on_leftovers (execid);
    p->nleftovers++;
    return 0;
}

void procs_forget (struct procs *p, const char *execid)
{
    (void)exitfile_remove (p->xfd, execid);
}

void procs_forget_kick (struct procs *p)
{
    (void)p;
}

int procs_look (struct procs *p,
                const char *execid,
                bool spawned,
                pid_t pid,
                unsigned long long starttime,
                const char *bootid,
                struct proc_look *out,
                struct cairn_error *err)
{
    (void)p, (void)execid, (void)spawned, (void)pid, (void)starttime;
    (void)bootid, (void)err;
    *out = (struct proc_look){.verdict = LOOK_UNSTARTED, .pidfd = -1};
    snprintf (out->why, sizeof (out->why), "never started");
    return 0;
}

void procs_gone_note (char *buf, size_t len, int shim_status, pid_t pid)
{
    (void)shim_status;
    snprintf (buf, len, "the process (pid %d) ended and left no exit status",
              (int)pid);
}

/* ---- the test's side ---- */

/* How many starts of execid were asked for. */
static inline int fake_nstarts_of (const char *execid)
{
    int n = 0;
    for (size_t i = 0; i < fake_procs->nstarts; i++)
        n += !strcmp (fake_procs->starts[i].execid, execid);
    return n;
}

/* The oldest unanswered asynchronous start, or NULL. */
static inline struct fake_start *fake_next_asked (void)
{
    for (size_t i = 0; i < fake_procs->nstarts; i++) {
        struct fake_start *s = &fake_procs->starts[i];
        if (s->async && !s->answered)
            return s;
    }
    return NULL;
}

/* Answer s (see procs_owner_ops.answered); why: err's text. Returns the
 * pid given (PROCS_STARTED) or 0. */
static inline pid_t
fake_answer (struct fake_start *s, enum procs_answer answer, const char *why)
{
    struct procs_started st = {.pidfd = -1};
    struct cairn_error err = {{0}};
    char execid[EXECID_LEN + 1];

    s->answered = true;
    snprintf (execid, sizeof (execid), "%s", s->execid);
    if (answer == PROCS_STARTED) {
        st.pid = fake_procs->next_pid++;
        fake_procs->nspawned++;
    }
    if (why)
        snprintf (err.text, sizeof (err.text), "%s", why);
    s->ops->answered (s->owner, execid, answer, &st, &err);
    return st.pid;
}

/* End watched execid: with its exit record (wait status) written first,
 * as its supervisor's ENDED (fake_end); or with none, its shim's wait
 * status shim_status (-1: not a child of our supervisor; else the code
 * that says why the supervisor could not write it, shim_proto.h) as a
 * dead or failing supervisor leaves it (fake_vanish). -1 with ENOENT if
 * it is not watched. */
static inline int
fake_end_as (const char *execid, int status, bool record, int shim_status)
{
    struct fake_watch *w = fake_watch_of (fake_procs, execid);
    if (!w) {
        errno = ENOENT;
        return -1;
    }
    char id[EXECID_LEN + 1];
    snprintf (id, sizeof (id), "%s", execid);
    void *owner = w->owner;
    const struct procs_owner_ops *ops = w->ops;
    if (record && exitfile_write_status (fake_procs->xfd, id, status) < 0)
        return -1;
    w->used = false;
    ops->ended (owner, id, record ? 0 : shim_status, NULL);
    return 0;
}

static inline int fake_end (const char *execid, int status)
{
    return fake_end_as (execid, status, true, 0);
}

static inline int fake_vanish (const char *execid, int shim_status)
{
    return fake_end_as (execid, 0, false, shim_status);
}

/* The last signal sent to watched execid, 0 if none. */
static inline int fake_signal_of (const char *execid)
{
    struct fake_watch *w = fake_watch_of (fake_procs, execid);
    return w ? w->last_signal : 0;
}

#endif /* CAIRN_TEST_FAKEPROCS_H */
