/* t_config.c - cairnd configuration and signal names */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "core/config.h"
#include "core/signame.h"
#include "tap.h"

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

/* Every key of the file, as the brief and the man page list them. */
static const char *all_keys[] = {
    "statedir",
    "shim",
    "public-socket",
    "cgroup-parent",
    "cgroup-pids-max",
    "cgroup-memory-max",
    "rlimit-nofile",
    "rlimit-nproc",
    "run-dir",
    "prolog.command",
    "prolog.per-rank",
    "prolog.timeout",
    "prolog.kill-timeout",
    "prolog.cancel-on-exception",
    "prolog.tolerable-exit-codes",
    "epilog.command",
    "epilog.per-rank",
    "epilog.timeout",
    "epilog.kill-timeout",
    "epilog.cancel-on-exception",
    "exec.job-shell",
    "exec.kill-timeout",
    "exec.max-kill-timeout",
    "exec.term-signal",
    "exec.kill-signal",
    "exec.max-kill-count",
    "exec.max-start-delay-percent",
    "release-after",
    "output.max-bytes",
    "journal.max-size",
    "journal.retention",
    "journal.commit-interval",
    "limits.max-request-size",
    "limits.max-ranks",
    "limits.max-connections",
    "limits.max-user-connections",
    "limits.max-jobs",
    "limits.user-idle-timeout",
    "limits.user-max-jobs",
    "limits.user-max-journal-bytes",
    "limits.users-journal-share",
    "limits.users-jobs-share",
    "multinode.local-ranks",
    "multinode.timeout",
    "multinode.poll",
    "role",
    "flux.instance-owner",
    "flux.imp",
};

/* JSON written with single quotes, for readability. Static buffer. */
static const char *q (const char *s)
{
    static char buf[2048];
    size_t i;
    for (i = 0; s[i] && i < sizeof (buf) - 1; i++)
        buf[i] = s[i] == '\'' ? '"' : s[i];
    buf[i] = '\0';
    return buf;
}

static json_t *load (const char *s)
{
    json_error_t jerr;
    json_t *o = json_loads (q (s), JSON_DECODE_ANY, &jerr);
    if (!o)
        BAIL_OUT ("bad test JSON %s: %s", s, jerr.text);
    return o;
}

/* {"a": {"b": value}} for key "a.b"; steals value. */
static json_t *nest (const char *key, json_t *value)
{
    const char *dot = strchr (key, '.');
    char head[64];
    if (!dot)
        return json_pack ("{s:o}", key, value);
    snprintf (head, sizeof (head), "%.*s", (int)(dot - key), key);
    return json_pack ("{s:o}", head, nest (dot + 1, value));
}

static bool argv_equal (char **a, char **b)
{
    if (!a || !b)
        return a == b;
    for (; *a && *b; a++, b++)
        if (strcmp (*a, *b) != 0)
            return false;
    return *a == NULL && *b == NULL;
}

static bool perilog_equal (const struct perilog_config *a,
                           const struct perilog_config *b)
{
    if (!argv_equal (a->command, b->command) || a->per_rank != b->per_rank ||
        a->timeout != b->timeout || a->kill_timeout != b->kill_timeout ||
        a->cancel_on_exception != b->cancel_on_exception ||
        a->ntolerable != b->ntolerable)
        return false;
    for (size_t i = 0; i < a->ntolerable; i++)
        if (a->tolerable_exit_codes[i] != b->tolerable_exit_codes[i])
            return false;
    return true;
}

static bool str_equal (const char *a, const char *b);

static bool job_config_equal (const struct job_config *a,
                              const struct job_config *b)
{
    const struct exec_config *x = &a->exec, *y = &b->exec;
    return perilog_equal (&a->prolog, &b->prolog) &&
           perilog_equal (&a->epilog, &b->epilog) &&
           argv_equal (x->job_shell, y->job_shell) &&
           x->kill_timeout == y->kill_timeout &&
           x->max_kill_timeout == y->max_kill_timeout &&
           x->term_signal == y->term_signal &&
           x->kill_signal == y->kill_signal &&
           x->max_kill_count == y->max_kill_count &&
           a->release_after == b->release_after &&
           a->output_max_bytes == b->output_max_bytes &&
           a->multinode.on == b->multinode.on &&
           str_equal (a->multinode.local_ranks, b->multinode.local_ranks) &&
           a->multinode.timeout == b->multinode.timeout &&
           a->multinode.poll == b->multinode.poll;
}

static bool str_equal (const char *a, const char *b)
{
    return (a && b) ? strcmp (a, b) == 0 : a == b;
}

static bool config_equal (const struct cairn_config *a,
                          const struct cairn_config *b)
{
    return str_equal (a->statedir, b->statedir) &&
           str_equal (a->shim, b->shim) &&
           str_equal (a->public_socket, b->public_socket) &&
           str_equal (a->cgroup_parent, b->cgroup_parent) &&
           a->cgroup_pids_max == b->cgroup_pids_max &&
           a->cgroup_memory_max == b->cgroup_memory_max &&
           a->rlimit_nofile == b->rlimit_nofile &&
           a->rlimit_nproc == b->rlimit_nproc &&
           job_config_equal (&a->job, &b->job) &&
           a->journal_max_size == b->journal_max_size &&
           a->journal_retention == b->journal_retention &&
           a->journal_commit_interval == b->journal_commit_interval &&
           a->max_request_size == b->max_request_size &&
           a->max_ranks == b->max_ranks &&
           a->max_connections == b->max_connections &&
           a->max_user_connections == b->max_user_connections &&
           a->max_jobs == b->max_jobs &&
           a->user_idle_timeout == b->user_idle_timeout &&
           a->user_max_jobs == b->user_max_jobs &&
           a->user_max_journal_bytes == b->user_max_journal_bytes &&
           a->users_journal_share == b->users_journal_share &&
           a->users_jobs_share == b->users_jobs_share &&
           a->role_node == b->role_node;
}

static void test_defaults (void)
{
    struct cairn_config cfg;
    struct job_config *j = &cfg.job;

    config_init (&cfg);
    ok (cfg.statedir == NULL && cfg.shim == NULL, "statedir, shim unset");
    ok (j->prolog.command == NULL && j->epilog.command == NULL,
        "no prolog or epilog command");
    ok (!j->prolog.per_rank && !j->epilog.per_rank, "per-rank false");
    ok (j->prolog.timeout == 1800., "prolog timeout 30m");
    ok (j->epilog.timeout == 0., "epilog timeout none");
    ok (j->prolog.kill_timeout == 60. && j->epilog.kill_timeout == 60.,
        "perilog kill-timeout 60s");
    ok (j->prolog.cancel_on_exception, "prolog cancel-on-exception true");
    ok (!j->epilog.cancel_on_exception, "epilog cancel-on-exception false");
    ok (j->prolog.tolerable_exit_codes == NULL && j->prolog.ntolerable == 0,
        "no tolerable exit codes");
    ok (j->exec.job_shell == NULL, "no job shell");
    ok (j->exec.kill_timeout == 5., "exec kill-timeout 5s");
    ok (j->exec.max_kill_timeout == 0., "exec max-kill-timeout 0");
    is_int (j->exec.term_signal, SIGTERM, "term-signal SIGTERM");
    is_int (j->exec.kill_signal, SIGKILL, "kill-signal SIGKILL");
    is_int (j->exec.max_kill_count, 8, "max-kill-count 8");
    ok (j->exec.max_start_delay_percent == 25., "max-start-delay-percent 25");
    ok (j->release_after == -1., "release-after -1");
    is_int (j->output_max_bytes, 64 * 1024, "output max-bytes 64K");
    is_int (cfg.journal_max_size, 1LL << 30, "journal max-size 1G");
    ok (cfg.journal_retention == 7 * 86400., "journal retention 7d");
    ok (cfg.journal_commit_interval == 0.002, "journal commit-interval 2ms");
    is_int (cfg.max_request_size, 1 << 20, "max-request-size 1M");
    is_int (cfg.max_ranks, 65536, "max-ranks 65536");
    is_int (cfg.max_connections, 256, "max-connections 256");
    is_int (cfg.max_user_connections, 32, "max-user-connections 32");
    is_int (cfg.max_jobs, 10000, "max-jobs 10000");
    ok (cfg.user_idle_timeout == 300., "user-idle-timeout 5m");
    is_int (cfg.user_max_jobs, 1000, "user-max-jobs 1000");
    is_int (cfg.user_max_journal_bytes, 64 << 20, "user-max-journal-bytes 64M");
    ok (cfg.users_journal_share == 0.5, "users-journal-share 0.5");
    ok (cfg.users_jobs_share == 0.5, "users-jobs-share 0.5");

    json_t *empty = json_object ();
    struct cairn_config def;
    config_init (&def);
    ok (config_parse (&cfg, empty, NULL) == 0 && config_equal (&cfg, &def),
        "an empty object keeps every default");
    json_decref (empty);
    config_free (&cfg);
    config_free (&cfg);
    ok (cfg.statedir == NULL && cfg.job.prolog.command == NULL,
        "config_free twice is safe");
    config_free (NULL);
}

static const char *full_file =
    "{'statedir': '/var/lib/cairn', 'shim': '/usr/libexec/cairn-shim',"
    " 'prolog': {'command': ['/etc/cairn/prolog', '-v', ''],"
    "   'per-rank': true, 'timeout': '5m', 'kill-timeout': 2.5,"
    "   'cancel-on-exception': false, 'tolerable-exit-codes': [42, 7, 255]},"
    " 'epilog': {'command': ['/etc/cairn/epilog'], 'per-rank': true,"
    "   'timeout': '1h', 'kill-timeout': '10s', 'cancel-on-exception': true},"
    " 'exec': {'job-shell': '/usr/libexec/flux shell', 'kill-timeout': '2s',"
    "   'max-kill-timeout': '1m', 'term-signal': 'USR1',"
    "   'kill-signal': 15, 'max-kill-count': 3,"
    "   'max-start-delay-percent': 12.5},"
    " 'release-after': '30s', 'output': {'max-bytes': '1M'},"
    " 'journal': {'max-size': '2G', 'retention': '1d',"
    "   'commit-interval': '0.005s'},"
    " 'limits': {'max-request-size': '64K', 'max-ranks': 16,"
    "   'max-connections': 10, 'max-user-connections': 3, 'max-jobs': 20,"
    "   'user-idle-timeout': '90s', 'user-max-jobs': 5,"
    "   'user-max-journal-bytes': '8M', 'users-journal-share': 0.25,"
    "   'users-jobs-share': 0.75}}";

static void check_full (const struct cairn_config *c)
{
    const struct job_config *j = &c->job;
    char *prolog[] = {"/etc/cairn/prolog", "-v", "", NULL};
    char *epilog[] = {"/etc/cairn/epilog", NULL};
    char *shell[] = {"/usr/libexec/flux shell", NULL};

    is_str (c->statedir, "/var/lib/cairn", "statedir");
    is_str (c->shim, "/usr/libexec/cairn-shim", "shim");
    ok (argv_equal (j->prolog.command, prolog), "prolog.command");
    ok (j->prolog.per_rank, "prolog.per-rank");
    ok (j->prolog.timeout == 300., "prolog.timeout 5m");
    ok (j->prolog.kill_timeout == 2.5, "prolog.kill-timeout 2.5");
    ok (!j->prolog.cancel_on_exception, "prolog.cancel-on-exception");
    ok (j->prolog.ntolerable == 3 && j->prolog.tolerable_exit_codes[0] == 7 &&
            j->prolog.tolerable_exit_codes[1] == 42 &&
            j->prolog.tolerable_exit_codes[2] == 255,
        "prolog.tolerable-exit-codes sorted");
    ok (argv_equal (j->epilog.command, epilog), "epilog.command");
    ok (j->epilog.per_rank, "epilog.per-rank");
    ok (j->epilog.timeout == 3600., "epilog.timeout 1h");
    ok (j->epilog.kill_timeout == 10., "epilog.kill-timeout 10s");
    ok (j->epilog.cancel_on_exception, "epilog.cancel-on-exception");
    ok (argv_equal (j->exec.job_shell, shell),
        "exec.job-shell string is one path, not split");
    ok (j->exec.kill_timeout == 2., "exec.kill-timeout");
    ok (j->exec.max_kill_timeout == 60., "exec.max-kill-timeout");
    is_int (j->exec.term_signal, SIGUSR1, "exec.term-signal by short name");
    is_int (j->exec.kill_signal, SIGTERM, "exec.kill-signal by number");
    is_int (j->exec.max_kill_count, 3, "exec.max-kill-count");
    ok (j->exec.max_start_delay_percent == 12.5,
        "exec.max-start-delay-percent");
    ok (j->release_after == 30., "release-after 30s");
    is_int (j->output_max_bytes, 1 << 20, "output.max-bytes 1M");
    is_int (c->journal_max_size, 2LL << 30, "journal.max-size 2G");
    ok (c->journal_retention == 86400., "journal.retention 1d");
    ok (c->journal_commit_interval == 0.005, "journal.commit-interval 0.005s");
    is_int (c->max_request_size, 64 * 1024, "limits.max-request-size");
    is_int (c->max_ranks, 16, "limits.max-ranks");
    is_int (c->max_connections, 10, "limits.max-connections");
    is_int (c->max_user_connections, 3, "limits.max-user-connections");
    is_int (c->max_jobs, 20, "limits.max-jobs");
    ok (c->user_idle_timeout == 90., "limits.user-idle-timeout 90s");
    is_int (c->user_max_jobs, 5, "limits.user-max-jobs");
    is_int (c->user_max_journal_bytes, 8 << 20,
            "limits.user-max-journal-bytes 8M");
    ok (c->users_journal_share == 0.25, "limits.users-journal-share 0.25");
    ok (c->users_jobs_share == 0.75, "limits.users-jobs-share 0.75");
}

static void test_full (void)
{
    struct cairn_config cfg;
    struct cairn_error err = {{0}};
    json_t *o = load (full_file);

    config_init (&cfg);
    if (!ok (config_parse (&cfg, o, &err) == 0, "a full file parses"))
        diag ("%s", err.text);
    check_full (&cfg);

    // Parsing over it again replaces, and null unsets a command.
    json_t *o2 = load ("{'prolog': {'command': null, 'tolerable-exit-codes':"
                       " []}, 'exec': {'job-shell': ['a', 'b']},"
                       " 'shim': null}");
    char *shell[] = {"a", "b", NULL};
    ok (config_parse (&cfg, o2, &err) == 0 && cfg.job.prolog.command == NULL &&
            cfg.shim == NULL && cfg.job.prolog.ntolerable == 0 &&
            argv_equal (cfg.job.exec.job_shell, shell) &&
            cfg.job.epilog.command != NULL,
        "a second parse replaces only the keys it has; null unsets");
    json_decref (o2);
    json_decref (o);
    config_free (&cfg);
}

/* One row per key (at least): a bad value and what the message must say
 * besides the key itself.
 */
static const struct bad {
    const char *key;
    const char *value;
    const char *needle;
} bad[] = {
    {"statedir", "5", "must be a non-empty string"},
    {"statedir", "''", "must be a non-empty string"},
    {"shim", "[]", "must be a non-empty string"},
    {"public-socket", "''", "must be a non-empty string"},
    {"cgroup-parent", "7", "must be a non-empty string"},
    {"run-dir", "'run/cairn'", "must be an absolute path or \"statedir\""},
    {"run-dir", "7", "must be a non-empty string"},
    {"flux.instance-owner", "''", "must be a non-empty string"},
    {"flux.instance-owner", "7", "must be a non-empty string"},
    {"flux.imp", "'flux-imp'", "must be an absolute path"},
    {"multinode.local-ranks", "'x'", "must be an idset string"},
    {"multinode.local-ranks", "3", "must be an idset string"},
    {"multinode.timeout", "0", "must be a finite duration > 0"},
    {"journal.commit-interval", "'2s'", "must be a duration from 0 to 1s"},
    {"journal.commit-interval", "-1", "invalid duration -1: must be >= 0"},
    {"multinode.poll", "'inf'", "must be a finite duration > 0"},
    {"role", "'leader'", "must be \"exec\" or \"node\""},
    {"prolog.command", "'true'", "must be a non-empty array of strings"},
    {"prolog.command", "[]", "must be a non-empty array of strings"},
    {"prolog.command", "['a', 1]", "must be a non-empty array of strings"},
    {"prolog.command", "['']", "must be a non-empty array of strings"},
    {"prolog.per-rank", "'yes'", "must be true or false"},
    {"prolog.timeout", "'x'", "invalid duration \"x\""},
    {"prolog.timeout", "-1", "must be >= 0"},
    {"prolog.kill-timeout", "0", "must be a finite duration > 0"},
    {"prolog.kill-timeout", "'inf'", "must be a finite duration > 0"},
    {"prolog.cancel-on-exception", "1", "must be true or false"},
    {"prolog.tolerable-exit-codes", "[0]", "integers in 1..255"},
    {"prolog.tolerable-exit-codes", "[256]", "integers in 1..255"},
    {"prolog.tolerable-exit-codes", "['1']", "integers in 1..255"},
    {"prolog.tolerable-exit-codes", "3", "integers in 1..255"},
    {"prolog.tolerable-exit-codes", "[3, 1, 3]", "exit code 3 listed twice"},
    {"epilog.command", "{}", "must be a non-empty array of strings"},
    {"epilog.per-rank", "null", "must be true or false"},
    {"epilog.timeout", "'5x'", "unknown unit"},
    {"epilog.kill-timeout", "'0s'", "must be a finite duration > 0"},
    {"epilog.cancel-on-exception", "'false'", "must be true or false"},
    {"epilog.tolerable-exit-codes", "[1]", "only the prolog"},
    {"exec.job-shell", "5", "must be a path or a non-empty array"},
    {"exec.job-shell", "''", "must be a path or a non-empty array"},
    {"exec.job-shell", "[]", "must be a path or a non-empty array"},
    {"exec.kill-timeout", "0", "must be a finite duration > 0"},
    {"exec.max-kill-timeout", "'inf'", "must be a finite duration"},
    {"exec.max-kill-timeout", "'x'", "invalid duration"},
    {"exec.term-signal", "'SIGFOO'", "unknown signal 'SIGFOO'"},
    {"exec.term-signal", "true", "must be a name or a number"},
    {"exec.kill-signal", "0", "out of range"},
    {"exec.kill-signal", "'99'", "out of range"},
    {"exec.max-kill-count", "0", "must be an integer >= 1"},
    {"exec.max-kill-count", "1.5", "must be an integer >= 1"},
    {"exec.max-kill-count", "'8'", "must be an integer >= 1"},
    {"exec.max-kill-count", "2147483648", "must be <= 2147483647"},
    {"exec.max-start-delay-percent", "-1", "must be a number >= 0"},
    {"exec.max-start-delay-percent", "'25'", "must be a number >= 0"},
    {"release-after", "'inf'", "use -1"},
    {"release-after", "-2", "must be >= 0"},
    {"release-after", "'-2'", "invalid duration"},
    {"release-after", "true", "invalid duration"},
    {"output.max-bytes", "-1", "must be >= 0"},
    {"output.max-bytes", "'1X'", "invalid size '1X'"},
    {"output.max-bytes", "1.5", "must be an integer or a string"},
    {"output.max-bytes", "'K'", "invalid size"},
    {"output.max-bytes", "'1.5G'", "invalid size"},
    {"output.max-bytes", "' 1K'", "invalid size"},
    {"output.max-bytes", "'1KB'", "invalid size"},
    {"output.max-bytes", "'-1'", "invalid size"},
    {"output.max-bytes", "'17179869184G'", "too large"},
    {"output.max-bytes", "'99999999999999999999'", "too large"},
    {"output.max-bytes", "'9223372036854775808'", "too large"},
    {"journal.max-size", "1048575", "must be at least 1M"},
    {"journal.max-size", "'1T'", "invalid size"},
    {"journal.retention", "'forever'", "invalid duration"},
    {"limits.max-request-size", "'4095'", "must be at least 4K"},
    {"limits.max-ranks", "0", "must be an integer >= 1"},
    {"limits.max-connections", "-3", "must be an integer >= 1"},
    {"limits.max-connections", "4294967296", "must be <= 2147483647"},
    {"limits.max-user-connections", "0", "must be an integer >= 1"},
    {"limits.max-user-connections", "'32'", "must be an integer >= 1"},
    {"limits.max-user-connections", "2147483648", "must be <= 2147483647"},
    {"limits.max-jobs", "'many'", "must be an integer >= 1"},
    {"limits.user-max-jobs", "0", "must be an integer >= 1"},
    {"limits.user-idle-timeout", "'soon'", "invalid duration"},
    {"cgroup-pids-max", "0", "must be an integer >= 1"},
    {"cgroup-memory-max", "'1K'", "must be at least 1M"},
    {"rlimit-nofile", "63", "must be an integer >= 64"},
    {"rlimit-nproc", "0", "must be an integer >= 1"},
    {"rlimit-nproc", "'many'", "must be an integer >= 1"},
    {"limits.user-max-journal-bytes", "65535", "must be at least 64K"},
    {"limits.user-max-journal-bytes", "'lots'", "invalid size 'lots'"},
    {"limits.users-journal-share", "0.95", "must be a number from 0 to 0.9"},
    {"limits.users-journal-share", "-0.1", "must be a number from 0 to 0.9"},
    {"limits.users-journal-share", "'half'", "must be a number from 0 to 0.9"},
    {"limits.users-jobs-share", "1", "must be a number from 0 to 0.9"},
    {"limits.users-jobs-share", "'half'", "must be a number from 0 to 0.9"},
    // Sections that are not objects.
    {"prolog", "[]", "prolog: must be an object"},
    {"epilog", "'x'", "epilog: must be an object"},
    {"exec", "null", "exec: must be an object"},
    {"output", "1", "output: must be an object"},
    {"journal", "true", "journal: must be an object"},
    {"limits", "[]", "limits: must be an object"},
    // Unknown keys at every level.
    {"bogus", "1", "unknown key 'bogus'"},
    {"prolog.comand", "['x']", "unknown key 'prolog.comand'"},
    {"epilog.bogus", "1", "unknown key 'epilog.bogus'"},
    {"exec.shell", "'x'", "unknown key 'exec.shell'"},
    {"output.max", "1", "unknown key 'output.max'"},
    {"journal.size", "1", "unknown key 'journal.size'"},
    {"limits.max-job", "1", "unknown key 'limits.max-job'"},
};

static void test_bad (void)
{
    struct cairn_config def;

    config_init (&def);
    for (size_t i = 0; i < ARRAY_SIZE (bad); i++) {
        struct cairn_config cfg;
        struct cairn_error err = {{0}};
        json_t *o = nest (bad[i].key, load (bad[i].value));

        config_init (&cfg);
        errno = 0;
        is_errno (config_parse (&cfg, o, &err), EINVAL, "%s = %s is rejected",
                  bad[i].key, bad[i].value);
        like (err.text, bad[i].needle, "%s = %s: message", bad[i].key,
              bad[i].value);
        // "key: why", or "unknown key 'key'".
        char want[96];
        if (strstr (bad[i].needle, "unknown key"))
            snprintf (want, sizeof (want), "unknown key '%s'", bad[i].key);
        else
            snprintf (want, sizeof (want), "%s: ", bad[i].key);
        ok (strncmp (err.text, want, strlen (want)) == 0,
            "%s = %s: message starts with \"%s\"", bad[i].key, bad[i].value,
            want);
        ok (config_equal (&cfg, &def), "%s = %s: cfg unchanged", bad[i].key,
            bad[i].value);
        json_decref (o);
        config_free (&cfg);
    }
    config_free (&def);

    // Every key has a row.
    for (size_t i = 0; i < ARRAY_SIZE (all_keys); i++) {
        size_t n = 0;
        for (size_t r = 0; r < ARRAY_SIZE (bad); r++)
            n += strcmp (bad[r].key, all_keys[i]) == 0;
        ok (n > 0, "%s has a bad-value row", all_keys[i]);
    }

    struct cairn_config cfg;
    struct cairn_error err = {{0}};
    json_t *top = json_array ();
    config_init (&cfg);
    is_errno (config_parse (&cfg, top, &err), EINVAL, "top level array");
    like (err.text, "must be a JSON object", "message says so");
    is_errno (config_parse (&cfg, NULL, &err), EINVAL, "NULL object");
    json_decref (top);
    config_free (&cfg);
}

/* cfg is unchanged on error, even by keys that came before the bad one. */
static void test_unchanged (void)
{
    struct cairn_config cfg;
    struct cairn_error err = {{0}};
    json_t *first = load ("{'statedir': '/old', 'prolog': {'timeout': '1m',"
                          " 'command': ['old']}}");
    json_t *second = load ("{'statedir': '/new', 'prolog': {'timeout': '2m',"
                           " 'command': ['new'], 'comand': 1}}");
    char *old[] = {"old", NULL};

    config_init (&cfg);
    ok (config_parse (&cfg, first, &err) == 0, "first parse works");
    is_errno (config_parse (&cfg, second, &err), EINVAL, "second parse fails");
    like (err.text, "unknown key 'prolog.comand'", "names the bad key");
    is_str (cfg.statedir, "/old", "statedir kept");
    ok (cfg.job.prolog.timeout == 60., "prolog.timeout kept");
    ok (argv_equal (cfg.job.prolog.command, old), "prolog.command kept");
    json_decref (first);
    json_decref (second);
    config_free (&cfg);
}

static void test_values (void)
{
    static const struct {
        const char *key, *value;
        double want;
    } durations[] = {
        {"prolog.timeout", "'inf'", 0.},
        {"prolog.timeout", "'0'", 0.},
        {"epilog.timeout", "'2.5s'", 2.5},
        {"release-after", "-1", -1.},
        {"release-after", "'-1'", -1.},
        {"release-after", "-1.0", -1.},
        {"release-after", "0", 0.},
        {"release-after", "'1m'", 60.},
        {"journal.retention", "'inf'", INFINITY},
        {"journal.retention", "0", 0.},
    };
    for (size_t i = 0; i < ARRAY_SIZE (durations); i++) {
        struct cairn_config cfg;
        json_t *o = nest (durations[i].key, load (durations[i].value));
        double got;
        config_init (&cfg);
        int rc = config_parse (&cfg, o, NULL);
        if (!strcmp (durations[i].key, "prolog.timeout"))
            got = cfg.job.prolog.timeout;
        else if (!strcmp (durations[i].key, "epilog.timeout"))
            got = cfg.job.epilog.timeout;
        else if (!strcmp (durations[i].key, "release-after"))
            got = cfg.job.release_after;
        else
            got = cfg.journal_retention;
        ok (rc == 0 && got == durations[i].want, "%s = %s gives %g",
            durations[i].key, durations[i].value, durations[i].want);
        json_decref (o);
        config_free (&cfg);
    }

    static const struct {
        const char *value;
        long long want;
    } sizes[] = {
        {"0", 0},
        {"'0'", 0},
        {"'100'", 100},
        {"'64K'", 64 << 10},
        {"'64k'", 64 << 10},
        {"'512M'", 512LL << 20},
        {"'2G'", 2LL << 30},
        {"'8589934591G'", 8589934591LL << 30},
        {"'9223372036854775807'", 9223372036854775807LL},
    };
    for (size_t i = 0; i < ARRAY_SIZE (sizes); i++) {
        struct cairn_config cfg;
        json_t *o = nest ("output.max-bytes", load (sizes[i].value));
        config_init (&cfg);
        ok (config_parse (&cfg, o, NULL) == 0 &&
                (long long)cfg.job.output_max_bytes == sizes[i].want,
            "size %s is %lld", sizes[i].value, sizes[i].want);
        json_decref (o);
        config_free (&cfg);
    }

    // max-kill-timeout is a give-up time (escalate.h): below kill-timeout
    // too, as job-exec takes it (given up before the first kill signal).
    struct cairn_config cfg;
    json_t *o = load ("{'exec': {'kill-timeout': 10, 'max-kill-timeout': 2}}");
    config_init (&cfg);
    ok (config_parse (&cfg, o, NULL) == 0 &&
            cfg.job.exec.max_kill_timeout == 2.,
        "max-kill-timeout below kill-timeout is taken");
    json_decref (o);
    config_free (&cfg);
}

static void test_keys (void)
{
    const char *const *keys = config_keys ();
    size_t n = 0;

    ok (keys != NULL, "config_keys returns a list");
    while (keys && keys[n])
        n++;
    is_int (n, ARRAY_SIZE (all_keys), "config_keys has every key, no more");
    for (size_t i = 0; i < ARRAY_SIZE (all_keys); i++) {
        size_t count = 0;
        for (size_t k = 0; k < n; k++)
            count += strcmp (keys[k], all_keys[i]) == 0;
        is_int (count, 1, "%s listed once", all_keys[i]);
    }
    ok (config_keys () == keys, "the list is built once");
}

static void roundtrip (const struct job_config *jc, const char *what)
{
    struct job_config dec, copy = {0};
    struct cairn_error err = {{0}};
    json_t *enc = job_config_encode (jc);
    char *s = enc ? json_dumps (enc, JSON_COMPACT) : NULL;
    json_t *back = s ? json_loads (s, 0, NULL) : NULL;

    ok (enc != NULL, "%s: encodes", what);
    memset (&dec, 0xff, sizeof (dec)); // an output: garbage is fine
    if (!ok (back && job_config_decode (&dec, back, &err) == 0,
             "%s: decodes from text", what)) {
        diag ("%s", err.text);
        job_config_init (&dec);
    }
    ok (job_config_equal (&dec, jc), "%s: decode (encode (x)) == x", what);
    ok (job_config_copy (&copy, jc) == 0 && job_config_equal (&copy, jc),
        "%s: copy is equal", what);
    ok (jc->prolog.command == NULL || copy.prolog.command != jc->prolog.command,
        "%s: copy is deep", what);
    job_config_free (&copy);
    job_config_free (&dec);
    free (s);
    json_decref (back);
    json_decref (enc);
}

static void test_job_config (void)
{
    struct cairn_config cfg;
    struct job_config jc, out;
    struct cairn_error err = {{0}};
    json_t *o = load (full_file);
    json_t *enc;

    job_config_init (&jc);
    roundtrip (&jc, "defaults");
    enc = job_config_encode (&jc);
    is_int (json_object_size (enc), 5, "encoding has five top keys");
    ok (json_is_null (
            json_object_get (json_object_get (enc, "prolog"), "command")),
        "unset command encodes as null");
    ok (json_object_get (json_object_get (enc, "epilog"),
                         "tolerable-exit-codes") == NULL,
        "epilog has no tolerable-exit-codes");
    json_t *codes = json_object_get (json_object_get (enc, "prolog"),
                                     "tolerable-exit-codes");
    ok (json_is_array (codes) && json_array_size (codes) == 0,
        "prolog tolerable-exit-codes is an empty array");
    is_str (json_string_value (
                json_object_get (json_object_get (enc, "exec"), "kill-signal")),
            "SIGKILL", "signals encode as names");
    ok (json_is_number (json_object_get (enc, "release-after")) &&
            json_number_value (json_object_get (enc, "release-after")) == -1.,
        "release-after -1 encodes as a number");
    json_decref (enc);

    config_init (&cfg);
    if (config_parse (&cfg, o, &err) < 0)
        BAIL_OUT ("full file: %s", err.text);
    roundtrip (&cfg.job, "full file");
    cfg.job.exec.term_signal = SIGRTMIN + 2;
    cfg.job.release_after = 0.;
    roundtrip (&cfg.job, "rt signal, release-after 0");

    // multinode: on with its defaults, then a round trip; null is off
    json_t *mn = load ("{'multinode': {'timeout': '2s'}}");
    ok (config_parse (&cfg, mn, &err) == 0 && cfg.job.multinode.on &&
            !strcmp (cfg.job.multinode.local_ranks, "0") &&
            cfg.job.multinode.timeout == 2. && cfg.job.multinode.poll == 10.,
        "multinode: on, local-ranks 0 and poll 10s by default");
    roundtrip (&cfg.job, "multinode on");
    json_decref (mn);
    mn = load ("{'multinode': null}");
    ok (config_parse (&cfg, mn, &err) == 0 && !cfg.job.multinode.on &&
            !cfg.job.multinode.local_ranks,
        "multinode: null turns it off");
    json_decref (mn);
    mn = load ("{'role': 'node', 'multinode': {}}");
    is_errno (config_parse (&cfg, mn, &err), EINVAL,
              "multinode: refused with role node");
    like (err.text, "multinode: only for the rank-0 cairnd", "message says why");
    ok (!cfg.role_node, "role node: cfg unchanged");
    json_decref (mn);

    // Keys absent from a snapshot take their defaults.
    json_t *part = load ("{'exec': {'max-kill-count': 2}}");
    ok (job_config_decode (&out, part, &err) == 0 &&
            out.exec.max_kill_count == 2 && out.exec.kill_timeout == 5. &&
            out.prolog.timeout == 1800.,
        "decode fills absent keys with defaults");
    job_config_free (&out);
    json_decref (part);

    json_t *bad = load ("{'journal': {}}");
    memset (&out, 0, sizeof (out));
    out.exec.max_kill_count = 77;
    is_errno (job_config_decode (&out, bad, &err), EINVAL,
              "decode is strict: file-only keys refused");
    like (err.text, "unknown key 'journal'", "message names the key");
    is_int (out.exec.max_kill_count, 77, "output untouched on error");
    json_decref (bad);

    cfg.job.exec.kill_signal = 32; // reserved by glibc: has no name
    errno = 0;
    is_errno_ptr (job_config_encode (&cfg.job), EINVAL,
                  "encode refuses a signal with no name");
    cfg.job.exec.kill_signal = SIGKILL;
    cfg.job.prolog.timeout = INFINITY;
    is_errno_ptr (job_config_encode (&cfg.job), EINVAL,
                  "encode refuses an infinite duration");

    job_config_free (&jc);
    job_config_free (&jc);
    job_config_free (NULL);
    json_decref (o);
    config_free (&cfg);
}

static void test_signame (void)
{
    static const struct {
        const char *s;
        int want;
    } good[] = {
        {"SIGTERM", SIGTERM}, {"TERM", SIGTERM},  {"sigterm", SIGTERM},
        {"kill", SIGKILL},    {"15", 15},         {"9", 9},
        {"SIGHUP", SIGHUP},   {"SIGSYS", SIGSYS}, {"SIGUSR2", SIGUSR2},
    };
    for (size_t i = 0; i < ARRAY_SIZE (good); i++) {
        int sig = -1;
        ok (signame_parse (good[i].s, &sig, NULL) == 0 && sig == good[i].want,
            "signame_parse %s = %d", good[i].s, good[i].want);
    }
    int sig = -1;
    ok (signame_parse ("SIGRTMIN", &sig, NULL) == 0 && sig == SIGRTMIN,
        "SIGRTMIN");
    ok (signame_parse ("SIGRTMIN+2", &sig, NULL) == 0 && sig == SIGRTMIN + 2,
        "SIGRTMIN+2");
    ok (signame_parse ("rtmax-1", &sig, NULL) == 0 && sig == SIGRTMAX - 1,
        "rtmax-1");
    ok (signame_parse ("SIGRTMAX", &sig, NULL) == 0 && sig == SIGRTMAX,
        "SIGRTMAX");

    static const struct {
        const char *s, *needle;
    } badsig[] = {
        {"", "empty"},
        {"SIGFOO", "unknown signal 'SIGFOO'"},
        {"SIG", "unknown signal"},
        {"0", "out of range"},
        {"65", "out of range"},
        {"99999999999999999999", "out of range"},
        {"-1", "unknown signal"},
        {" 15", "unknown signal"},
        {"15x", "unknown signal"},
        {"32", "reserved"},
        {"SIGRTMIN+", "unknown signal"},
        {"SIGRTMIN+31", "unknown signal"},
        {"SIGRTMAX+1", "unknown signal"},
        {"SIGRTMIN-1", "unknown signal"},
    };
    for (size_t i = 0; i < ARRAY_SIZE (badsig); i++) {
        struct cairn_error err = {{0}};
        sig = -7;
        errno = 0;
        is_errno (signame_parse (badsig[i].s, &sig, &err), EINVAL,
                  "signame_parse '%s' fails", badsig[i].s);
        like (err.text, badsig[i].needle, "'%s': message", badsig[i].s);
        is_int (sig, -7, "'%s': output untouched", badsig[i].s);
    }

    is_str (signame_str (SIGTERM), "SIGTERM", "signame_str 15");
    is_str (signame_str (SIGKILL), "SIGKILL", "signame_str 9");
    is_str (signame_str (SIGRTMIN), "SIGRTMIN", "signame_str SIGRTMIN");
    is_str (signame_str (SIGRTMIN + 3), "SIGRTMIN+3", "signame_str RTMIN+3");
    ok (signame_str (0) == NULL && signame_str (-1) == NULL &&
            signame_str (32) == NULL && signame_str (SIGRTMAX + 1) == NULL,
        "signame_str of 0, -1, 32, SIGRTMAX+1 is NULL");
    int named = 0, back = 0;
    for (int n = 1; n <= SIGRTMAX; n++) {
        const char *s = signame_str (n);
        if (s) {
            named++;
            back += signame_parse (s, &sig, NULL) == 0 && sig == n;
        }
    }
    ok (named > 50 && back == named,
        "every named signal parses back (%d of %d)", back, named);

    json_t *js[] = {json_integer (9),    json_string ("HUP"),
                    json_integer (0),    json_integer (SIGRTMAX + 1),
                    json_real (9.),      json_true (),
                    json_string ("NOPE")};
    int want[] = {SIGKILL, SIGHUP, -1, -1, -1, -1, -1};
    const char *needle[] = {NULL,
                            NULL,
                            "out of range",
                            "out of range",
                            "a name or a number",
                            "a name or a number",
                            "unknown signal"};
    for (size_t i = 0; i < ARRAY_SIZE (js); i++) {
        struct cairn_error err = {{0}};
        sig = -1;
        errno = 0;
        int rc = signame_parse_json (js[i], &sig, &err);
        if (want[i] > 0)
            ok (rc == 0 && sig == want[i], "json signal %zu is %d", i, want[i]);
        else {
            is_errno (rc, EINVAL, "json signal %zu refused", i);
            like (err.text, needle[i], "json signal %zu: message", i);
        }
        json_decref (js[i]);
    }
}

int main (void)
{
    plan (NO_PLAN);
    test_defaults ();
    test_full ();
    test_bad ();
    test_unchanged ();
    test_values ();
    test_keys ();
    test_job_config ();
    test_signame ();
    return done_testing ();
}
