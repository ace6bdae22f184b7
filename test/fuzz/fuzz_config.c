/* fuzz_config.c - config_parse and job_config_decode from JSON text, and the
 * job snapshot round trip.
 *
 * The same input goes to config_parse (the daemon's file) and to
 * job_config_decode (a job's snapshot in its accept event). Whatever is
 * accepted must encode, survive a trip through JSON text as the journal
 * stores it, and decode to an equal job_config (config.h: decode (encode
 * (x)) equals x). A refused input must leave the config untouched.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/config.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "fuzz_config: %s:%d: ", __FILE__, __LINE__);      \
            fprintf (stderr, __VA_ARGS__);                                     \
            fputc ('\n', stderr);                                              \
            abort ();                                                          \
        }                                                                      \
    } while (0)

static bool same_argv (char **a, char **b)
{
    if (!a || !b)
        return a == b;
    for (; *a && *b; a++, b++) {
        if (strcmp (*a, *b) != 0)
            return false;
    }
    return !*a && !*b;
}

static bool same_perilog (const struct perilog_config *a,
                          const struct perilog_config *b)
{
    return same_argv (a->command, b->command) && a->per_rank == b->per_rank &&
           a->timeout == b->timeout && a->kill_timeout == b->kill_timeout &&
           a->cancel_on_exception == b->cancel_on_exception &&
           a->ntolerable == b->ntolerable &&
           (a->ntolerable == 0 ||
            !memcmp (a->tolerable_exit_codes, b->tolerable_exit_codes,
                     a->ntolerable * sizeof (int)));
}

static bool same_job_config (const struct job_config *a,
                             const struct job_config *b)
{
    const struct exec_config *x = &a->exec, *y = &b->exec;

    return same_perilog (&a->prolog, &b->prolog) &&
           same_perilog (&a->epilog, &b->epilog) &&
           same_argv (x->job_shell, y->job_shell) &&
           x->kill_timeout == y->kill_timeout &&
           x->max_kill_timeout == y->max_kill_timeout &&
           x->term_signal == y->term_signal &&
           x->kill_signal == y->kill_signal &&
           x->max_kill_count == y->max_kill_count &&
           a->release_after == b->release_after &&
           a->output_max_bytes == b->output_max_bytes;
}

/* Header promises about a job_config that was accepted. */
static void check_ranges (const struct job_config *jc)
{
    const struct perilog_config *p[] = {&jc->prolog, &jc->epilog};

    for (int i = 0; i < 2; i++) {
        CHECK (p[i]->timeout >= 0 && p[i]->kill_timeout > 0, "perilog");
        CHECK ((p[i]->ntolerable == 0) == !p[i]->tolerable_exit_codes,
               "tolerable codes");
        for (size_t k = 0; k < p[i]->ntolerable; k++)
            CHECK (p[i]->tolerable_exit_codes[k] >= 1 &&
                       p[i]->tolerable_exit_codes[k] <= 255 &&
                       (k == 0 || p[i]->tolerable_exit_codes[k] >
                                      p[i]->tolerable_exit_codes[k - 1]),
                   "tolerable code %zu", k);
        CHECK (!p[i]->command || (p[i]->command[0] && *p[i]->command[0]),
               "command");
    }
    CHECK (jc->epilog.ntolerable == 0, "epilog tolerable codes");
    CHECK (jc->exec.kill_timeout > 0 && jc->exec.max_kill_count >= 1, "exec");
    /* a give-up time (escalate.h): 0 = none, any finite value else */
    CHECK (jc->exec.max_kill_timeout >= 0 &&
               isfinite (jc->exec.max_kill_timeout),
           "max-kill-timeout");
    CHECK (jc->release_after == -1 || jc->release_after >= 0, "release-after");
}

/* encode -> text -> decode gives jc back; so does job_config_copy. */
static void round_trip (const struct job_config *jc)
{
    struct cairn_error err = {{0}};
    struct job_config back, copy;
    json_t *o, *o2;
    char *text;

    check_ranges (jc);
    CHECK ((o = job_config_encode (jc)), "encode failed: errno %d", errno);
    CHECK ((text = json_dumps (o, JSON_COMPACT)), "dump");
    json_decref (o);
    CHECK ((o = json_loads (text, 0, NULL)), "reload %s", text);
    CHECK (job_config_decode (&back, o, &err) == 0, "decode %s: %s", text,
           err.text);
    CHECK (same_job_config (jc, &back), "decode (encode (x)) != x: %s", text);
    CHECK ((o2 = job_config_encode (&back)) && json_equal (o, o2),
           "encode not stable");
    CHECK (job_config_copy (&copy, jc) == 0 && same_job_config (jc, &copy),
           "copy");
    job_config_free (&copy);
    job_config_free (&back);
    json_decref (o2);
    json_decref (o);
    free (text);
}

static void fuzz_config_parse (const json_t *o)
{
    struct cairn_error err = {{0}};
    struct cairn_config cfg, def;

    config_init (&cfg);
    config_init (&def);
    if (config_parse (&cfg, o, &err) < 0) {
        CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
        CHECK (same_job_config (&cfg.job, &def.job) && !cfg.statedir &&
                   !cfg.shim && cfg.journal_max_size == def.journal_max_size &&
                   cfg.max_jobs == def.max_jobs,
               "config changed by a failed parse");
    } else {
        CHECK (cfg.journal_max_size >= 1024 * 1024, "journal.max-size");
        CHECK (cfg.journal_retention >= 0, "journal.retention");
        CHECK (cfg.max_request_size >= 4096 && cfg.max_ranks >= 1 &&
                   cfg.max_connections >= 1 && cfg.max_user_connections >= 1 &&
                   cfg.max_jobs >= 1,
               "limits");
        round_trip (&cfg.job);
        /* applying the same file again changes nothing */
        struct cairn_config twice;
        config_init (&twice);
        CHECK (config_parse (&twice, o, &err) == 0 &&
                   config_parse (&twice, o, &err) == 0,
               "second parse: %s", err.text);
        CHECK (same_job_config (&cfg.job, &twice.job), "parse twice");
        config_free (&twice);
    }
    config_free (&cfg);
    config_free (&def);
}

static void fuzz_job_config_decode (const json_t *o)
{
    struct cairn_error err = {{0}};
    struct job_config jc;

    memset (&jc, 0xa5, sizeof (jc));
    if (job_config_decode (&jc, o, &err) < 0) {
        CHECK (errno == EINVAL || errno == ENOMEM, "errno %d", errno);
        CHECK (err.text[0] != '\0', "no reason");
        return;
    }
    round_trip (&jc);
    job_config_free (&jc);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *o = json_loadb ((const char *)data, size,
                            JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

    if (!o)
        return 0;
    fuzz_config_parse (o);
    fuzz_job_config_decode (o);
    json_decref (o);
    return 0;
}
