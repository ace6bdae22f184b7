/* t_quota.c - the users' quotas (quota.h): a request on a running job is
 * weighed like a start (issue 51), and what the checks let in during a
 * turn counts until cairnd has staged it, so that many requests in one
 * turn cannot each be measured against the same count. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "unit/jtmp.h"

#include "core/config.h"
#include "core/job.h"
#include "exec/quota.h"

#define KIB 1024

/* An unprivileged job's accept line of len bytes, as job_accept() begins
 * it (quota.c reads that start at a recount). */
static char *accept_line (uint32_t uid, size_t len)
{
    char head[128];
    int n = snprintf (head, sizeof (head),
                      "{\"timestamp\":1.0,\"name\":\"accept\",\"context\":{"
                      "\"privileged\":false,\"userid\":%u,\"pad\":\"",
                      (unsigned)uid);
    char *line = malloc (len + 1);
    if (!line)
        BAIL_OUT ("out of memory");
    memcpy (line, head, n);
    memset (line + n, 'x', len - n - 3);
    memcpy (line + len - 3, "\"}}", 4);
    return line;
}

static void test_need (void)
{
    is_int (quota_need (0, 0), 0, "nothing weighs nothing");
    is_int (quota_need (3, 100), 100 + 3 * 32,
            "each event weighs its line and 32 bytes of key and bookkeeping");
}

static void test_requests (struct quota *q, struct cairn_config *cfg)
{
    struct cairn_error err = {{0}};

    cfg->user_max_journal_bytes = 64 * KIB;
    cfg->users_journal_share = 0.9;
    ok (quota_check_request (q, 1000, 40000, &err) == 0,
        "a request within the user's quota is let in");
    err.text[0] = '\0';
    is_errno (quota_check_request (q, 1000, 40000, &err), EDQUOT,
              "a second one in the same turn is weighed with the first "
              "(promised, not staged yet): EDQUOT");
    is_str (err.text,
            "uid 1000's jobs hold 0.0 MiB of the journal, and this request "
            "needs 40000 bytes more: limits.user-max-journal-bytes is 0.1 "
            "MiB (finished jobs count until purged)",
            "the message names the request and the limit");
    ok (quota_check_request (q, 1001, 40000, &err) == 0,
        "another user's promises are its own");
    quota_settle (q);
    ok (quota_check_request (q, 1000, 40000, &err) == 0,
        "once staged (quota_settle), only what was journaled counts");
    quota_settle (q);
}

static void test_starts (struct quota *q, struct cairn_config *cfg)
{
    struct cairn_error err = {{0}};

    cfg->user_max_jobs = 2;
    ok (quota_check (q, 3000, 100, &err) == 0 &&
            quota_check (q, 3000, 100, &err) == 0,
        "two starts in one turn, within limits.user-max-jobs 2");
    err.text[0] = '\0';
    is_errno (quota_check (q, 3000, 100, &err), EDQUOT,
              "a third in the same turn counts the two promised: EDQUOT");
    is_str (err.text,
            "uid 3000 has 2 active jobs, the most limits.user-max-jobs (2) "
            "allows",
            "the message names the limit");
    quota_settle (q);
    ok (quota_check (q, 3000, 100, &err) == 0,
        "jobs never staged are forgotten at quota_settle");
    quota_settle (q);
    cfg->user_max_jobs = 1000;
}

/* A job of uid 0's, journaled and staged: its bytes and its room as a
 * running job count for the users' share; a recount finds the same. */
static void
test_staged (struct quota *q, struct cairn_config *cfg, struct journal *j)
{
    struct cairn_error err = {{0}};
    struct job *job = job_create (77);
    char *line = accept_line (0, 50000);

    if (!job)
        BAIL_OUT ("job_create");
    job_set_unprivileged (job);
    if (journal_append (j, 77, 0, line, strlen (line)) < 0 ||
        journal_set_active (j, 77, true, 0) < 0 || journal_commit (j, &err) < 0)
        BAIL_OUT ("journal: %s", err.text);
    quota_staged (q, job, 0, JOB_EV_ACCEPT, strlen (line));

    cfg->user_max_journal_bytes = 64 * KIB;
    err.text[0] = '\0';
    is_errno (quota_check_request (q, 0, 20000, &err), EDQUOT,
              "a request past its job's own bytes: EDQUOT");
    like (err.text,
          "uid 0's jobs hold 0.0 MiB of the journal, and this "
          "request needs 20000 bytes more",
          "the message says what the user holds and what it asks");
    /* 1 MiB journal, a share of 0.35: 367001 bytes; the users hold
     * 50032 bytes and 256 KiB of room for the running job */
    cfg->users_journal_share = 0.35;
    err.text[0] = '\0';
    is_errno (quota_check_request (q, 2000, 60000, &err), EDQUOT,
              "another user within its own quota, past the users' share: "
              "EDQUOT");
    is_str (err.text,
            "the users' jobs hold 0.3 MiB of the journal (with room for "
            "those still running), and their share is 0.3 MiB "
            "(limits.users-journal-share 0.35 of journal.max-size): the "
            "rest is kept for root's and cairnd's uid's jobs",
            "the message names the users' share");
    ok (quota_check_request (q, 2000, 40000, &err) == 0,
        "a lighter request fits in what is left");
    quota_settle (q);
    /* the count made again from the journal finds the same */
    ok (quota_count (q, &err) == 0, "a recount from the journal");
    is_errno (quota_check_request (q, 2000, 60000, &err), EDQUOT,
              "after the recount: the same refusal");
    cfg->users_journal_share = 0.9;
    free (line);
    job_destroy (job);
}

/* A user's job staged, its batch not committed yet: the journal has one
 * job record fewer than the count, which is not made again from it (that
 * would drop the job's bytes, and cost a full count per request). */
static void
test_uncommitted (struct quota *q, struct cairn_config *cfg, struct journal *j)
{
    struct cairn_error err = {{0}};
    struct job *job = job_create (78);
    char *line = accept_line (0, 10000); /* uid 0 has 50032 bytes */

    if (!job)
        BAIL_OUT ("job_create");
    job_set_unprivileged (job);
    if (journal_append (j, 78, 0, line, strlen (line)) < 0)
        BAIL_OUT ("journal_append: %s", strerror (errno));
    quota_staged (q, job, 0, JOB_EV_ACCEPT, strlen (line));
    cfg->user_max_journal_bytes = 64 * KIB;
    err.text[0] = '\0';
    is_errno (quota_check_request (q, 0, 8000, &err), EDQUOT,
              "a job staged and not committed counts: EDQUOT");
    like (err.text, "uid 0's jobs hold 0.1 MiB of the journal",
          "its bytes are there");
    if (journal_commit (j, &err) < 0)
        BAIL_OUT ("journal_commit: %s", err.text);
    is_errno (quota_check_request (q, 0, 8000, &err), EDQUOT,
              "committed: the same");
    free (line);
    job_destroy (job);
}

/* The users' active jobs, which limits.users-jobs-share holds against
 * limits.max-jobs (service.c), are a count, not a walk: a promised start,
 * a staged accept, a clean, a recount. After test_staged and
 * test_uncommitted: jobs 77 and 78 of uid 0, active. */
static void test_active (struct quota *q)
{
    struct cairn_error err = {{0}};
    struct job *job = job_create (77);

    if (!job)
        BAIL_OUT ("job_create");
    job_set_unprivileged (job);
    is_int (quota_users_active (q), 2, "two users' jobs staged: 2 active");
    ok (quota_check (q, 4000, 100, &err) == 0, "a user's start let in");
    is_int (quota_users_active (q), 3, "... counts as active while promised");
    quota_settle (q);
    is_int (quota_users_active (q), 2, "... and not once forgotten");
    quota_staged (q, job, 5, JOB_EV_CLEAN, 60);
    is_int (quota_users_active (q), 1, "job 77's clean: 1 active");
    ok (quota_count (q, &err) == 0, "a recount from the journal");
    is_int (quota_users_active (q), 2,
            "a recount reads the journal, where neither job has ended (77's "
            "clean was never journaled here), counted afresh: 2");
    job_destroy (job);
}

int main (void)
{
    char *dir = tmpdir_create_as ("t_quota");
    struct journal *j = xopen (dir, NULL);
    struct cairn_config cfg;
    struct cairn_error err = {{0}};

    plan (NO_PLAN);
    config_init (&cfg);
    cfg.journal_max_size = 1 << 20;
    cfg.job.output_max_bytes = 64 * KIB; /* 256 KiB of room a job */
    struct quota *q = quota_create (j, &cfg);
    if (!q || quota_count (q, &err) < 0)
        BAIL_OUT ("quota: %s", err.text);

    test_need ();
    test_requests (q, &cfg);
    test_starts (q, &cfg);
    test_staged (q, &cfg, j);
    test_uncommitted (q, &cfg, j);
    test_active (q);

    quota_destroy (q);
    config_free (&cfg);
    journal_close (j);
    tmpdir_destroy (dir);
    return done_testing ();
}
