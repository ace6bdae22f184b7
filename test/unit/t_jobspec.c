/* t_jobspec.c - the exec service's view of a jobspec. */
#include <limits.h>
#include <math.h>

#include "tap.h"
#include "core/jobspec.h"

static json_t *load (const char *s)
{
    json_error_t jerr;
    json_t *o = json_loads (s, JSON_ALLOW_NUL, &jerr);
    if (!o)
        BAIL_OUT ("bad test JSON: %s: %s", jerr.text, s);
    return o;
}

static void test_full (void)
{
    struct cairn_error err;
    json_t *o = load (
        "{\"version\":1,\"resources\":[{\"type\":\"node\",\"count\":2}],"
        "\"tasks\":[{\"command\":[\"sh\",\"-c\",\"echo hi\"],\"slot\":\"task\","
        "\"count\":{\"per_slot\":1}},{\"command\":[\"ignored\"]}],"
        "\"attributes\":{\"user\":{\"x\":1},\"system\":{\"duration\":60.5,"
        "\"cwd\":\"/tmp\",\"environment\":{\"PATH\":\"/bin\",\"EMPTY\":\"\"},"
        "\"exec\":{\"prolog-failures-allowed\":2,\"other\":true},"
        "\"queue\":\"batch\"}},\"unknown\":[1]}");
    struct jobspec *js = jobspec_decode (o, &err);
    char **argv;

    ok (js != NULL, "decode a full jobspec");
    if (!js)
        BAIL_OUT ("%s", err.text);
    is_int (o->refcount, 1, "keeps no reference to the tree");
    argv = jobspec_argv (js);
    ok (argv && argv[0] && argv[1] && argv[2] && !argv[3], "argv has 3 args");
    is_str (argv[0], "sh", "argv[0]");
    is_str (argv[2], "echo hi", "argv[2]");
    ok (jobspec_duration (js) == 60.5, "duration");
    is_str (jobspec_cwd (js), "/tmp", "cwd");
    char *const *env = jobspec_env (js);
    ok (env && env[0] && env[1] && !env[2], "environment: 2 variables");
    is_str (env ? env[0] : NULL, "PATH=/bin", "environment[0], in order");
    is_str (env ? env[1] : NULL, "EMPTY=", "environment[1], empty value");
    is_int (jobspec_prolog_failures_allowed (js), 2, "prolog-failures-allowed");
    /* the fields are copies: the tree may go first */
    json_decref (o);
    is_str (jobspec_argv (js)[1], "-c", "argv outlives the tree");
    is_str (jobspec_cwd (js), "/tmp", "cwd outlives the tree");
    jobspec_destroy (js);

    o = load ("{\"tasks\":[{\"command\":[\"true\"]}],"
              "\"attributes\":{\"system\":{\"environment\":{}}}}");
    js = jobspec_decode (o, &err);
    ok (js && jobspec_env (js) && !jobspec_env (js)[0],
        "an empty environment is an empty array, not absent");
    jobspec_destroy (js);
    json_decref (o);

    o = load ("{\"tasks\":[{\"command\":[\"true\"]}]}");
    js = jobspec_decode (o, &err);
    ok (js != NULL, "decode a minimal jobspec");
    ok (js && jobspec_duration (js) == 0 && !jobspec_cwd (js) &&
            !jobspec_env (js) && jobspec_prolog_failures_allowed (js) == 0,
        "defaults: no duration, cwd, environment; 0 failures allowed");
    jobspec_destroy (js);
    json_decref (o);

    o = load ("{\"tasks\":[{\"command\":[\"true\"]}],"
              "\"attributes\":{\"system\":{\"exec\":{}}}}");
    js = jobspec_decode (o, &err);
    ok (js && jobspec_prolog_failures_allowed (js) == 0,
        "exec without prolog-failures-allowed gives 0");
    jobspec_destroy (js);
    json_decref (o);
    jobspec_destroy (NULL);
}

#define SYS(x)                                                                 \
    "{\"tasks\":[{\"command\":[\"a\"]}],\"attributes\":{\"system\":" x "}}"
#define ENV(x) SYS ("{\"environment\":" x "}")
#define PFA(x) SYS ("{\"exec\":{\"prolog-failures-allowed\":" x "}}")
#define RENV(x) SYS ("{\"cairn\":{\"rank-environment\":" x "}}")
#define RENV_PATH "jobspec: attributes.system.cairn.rank-environment"
#define CLIENT(x) SYS ("{\"cairn\":{\"client\":" x "}}")
#define CLIENT_MSG                                                             \
    "jobspec: attributes.system.cairn.client: not a string of 1 to 64 bytes"
#define INSTANCE(x) SYS ("{\"cairn\":{\"instance\":" x "}}")
#define INSTANCE_MSG                                                           \
    "jobspec: attributes.system.cairn.instance: not a string of 1 to 64 "      \
    "bytes"

static const struct {
    const char *js;
    const char *msg;
} bad[] = {
    {"[]", "jobspec: not an object"},
    {"{}", "jobspec: tasks: missing"},
    {"{\"tasks\":{}}", "jobspec: tasks: not a non-empty array"},
    {"{\"tasks\":[]}", "jobspec: tasks: not a non-empty array"},
    {"{\"tasks\":[\"a\"]}", "jobspec: tasks[0]: not an object"},
    {"{\"tasks\":[{}]}", "jobspec: tasks[0].command: missing"},
    {"{\"tasks\":[{\"command\":\"a b\"}]}",
     "jobspec: tasks[0].command: not a non-empty array"},
    {"{\"tasks\":[{\"command\":[]}]}",
     "jobspec: tasks[0].command: not a non-empty array"},
    {"{\"tasks\":[{\"command\":[\"a\",\"b\",3]}]}",
     "jobspec: tasks[0].command[2]: not a string"},
    {"{\"tasks\":[{\"command\":[null]}]}",
     "jobspec: tasks[0].command[0]: not a string"},
    {"{\"tasks\":[{\"command\":[\"a\",\"b\\u0000c\"]}]}",
     "jobspec: tasks[0].command[1]: contains NUL"},
    {"{\"tasks\":[{\"command\":[\"a\"]}],\"attributes\":[]}",
     "jobspec: attributes: not an object"},
    {SYS ("5"), "jobspec: attributes.system: not an object"},
    {SYS ("{\"duration\":\"1h\"}"),
     "jobspec: attributes.system.duration: not a number"},
    {SYS ("{\"duration\":-1}"),
     "jobspec: attributes.system.duration: must be >= 0"},
    {SYS ("{\"cwd\":1}"), "jobspec: attributes.system.cwd: not a string"},
    {SYS ("{\"cwd\":\"/a\\u0000b\"}"),
     "jobspec: attributes.system.cwd: contains NUL"},
    {ENV ("[]"), "jobspec: attributes.system.environment: not an object"},
    {ENV ("{\"A\":1}"),
     "jobspec: attributes.system.environment.A: not a string"},
    {ENV ("{\"A\":null}"),
     "jobspec: attributes.system.environment.A: not a string"},
    {ENV ("{\"A\":\"x\\u0000y\"}"),
     "jobspec: attributes.system.environment.A: contains NUL"},
    {ENV ("{\"\":\"x\"}"),
     "jobspec: attributes.system.environment: invalid variable name \"\""},
    {ENV ("{\"A=B\":\"x\"}"),
     "jobspec: attributes.system.environment: invalid variable name \"A=B\""},
    {ENV ("{\"=\":\"x\"}"),
     "jobspec: attributes.system.environment: invalid variable name \"=\""},
    {SYS ("{\"exec\":1}"), "jobspec: attributes.system.exec: not an object"},
    {PFA ("\"1\""),
     "jobspec: attributes.system.exec.prolog-failures-allowed: not an"
     " integer"},
    {PFA ("1.5"),
     "jobspec: attributes.system.exec.prolog-failures-allowed: not an"
     " integer"},
    {PFA ("-1"),
     "jobspec: attributes.system.exec.prolog-failures-allowed: must be"
     " between 0 and"},
    {PFA ("2147483648"),
     "jobspec: attributes.system.exec.prolog-failures-allowed: must be"
     " between 0 and"},
    {SYS ("{\"cairn\":[]}"), "jobspec: attributes.system.cairn: not an object"},
    {RENV ("[]"), RENV_PATH ": not an object"},
    {RENV ("{\"0\":{\"A\":\"x\"},\"x\":{}}"), RENV_PATH ": invalid rank \"x\""},
    {RENV ("{\"\":{}}"), RENV_PATH ": invalid rank \"\""},
    {RENV ("{\"-1\":{}}"), RENV_PATH ": invalid rank \"-1\""},
    {RENV ("{\"+1\":{}}"), RENV_PATH ": invalid rank \"+1\""},
    {RENV ("{\"01\":{}}"), RENV_PATH ": invalid rank \"01\""},
    {RENV ("{\" 1\":{}}"), RENV_PATH ": invalid rank \" 1\""},
    {RENV ("{\"1.0\":{}}"), RENV_PATH ": invalid rank \"1.0\""},
    {RENV ("{\"0x1\":{}}"), RENV_PATH ": invalid rank \"0x1\""},
    {RENV ("{\"4294967295\":{}}"), RENV_PATH ": invalid rank \"4294967295\""},
    {RENV ("{\"18446744073709551617\":{}}"),
     RENV_PATH ": invalid rank \"18446744073709551617\""},
    {RENV ("{\"7\":[]}"), RENV_PATH ".7: not an object"},
    {RENV ("{\"7\":\"A=1\"}"), RENV_PATH ".7: not an object"},
    {RENV ("{\"7\":{\"A\":1}}"), RENV_PATH ".7.A: not a string"},
    {RENV ("{\"7\":{\"A\":\"x\\u0000y\"}}"), RENV_PATH ".7.A: contains NUL"},
    {RENV ("{\"7\":{\"\":\"x\"}}"), RENV_PATH ".7: invalid variable name \"\""},
    {RENV ("{\"7\":{\"A=B\":\"x\"}}"),
     RENV_PATH ".7: invalid variable name \"A=B\""},
    {CLIENT ("3"), CLIENT_MSG},
    {SYS ("{\"cairn\":{\"hold-on-shrink\":1}}"),
     "jobspec: attributes.system.cairn.hold-on-shrink: not a boolean"},
    {SYS ("{\"cairn\":{\"hold-start\":\"true\"}}"),
     "jobspec: attributes.system.cairn.hold-start: not a boolean"},
    {SYS ("{\"cairn\":{\"shell-leader\":\"yes\"}}"),
     "jobspec: attributes.system.cairn.shell-leader: not a boolean"},
    {CLIENT ("\"\""), CLIENT_MSG},
    {INSTANCE ("3"), INSTANCE_MSG},
    {INSTANCE ("\"\""), INSTANCE_MSG},
    {CLIENT ("\"a\\u0000b\""), CLIENT_MSG},
    {CLIENT ("\"012345678901234567890123456789012345678901234567890123456789012"
             "3X\""),
     CLIENT_MSG},
};

static void test_bad (void)
{
    struct cairn_error err;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        json_t *o = load (bad[i].js);
        errno = 0;
        err.text[0] = '\0';
        is_errno_ptr (jobspec_decode (o, &err), EINVAL, "bad[%zu] fails", i);
        like (err.text, bad[i].msg, "bad[%zu] message", i);
        is_int (o->refcount, 1, "bad[%zu] leaves no reference behind", i);
        json_decref (o);
    }
    errno = 0;
    is_errno_ptr (jobspec_decode (NULL, &err), EINVAL, "decode NULL fails");
    like (err.text, "jobspec: not an object", "decode NULL message");

    /* jansson cannot decode a key with NUL, but a caller can build one. */
    json_t *o = load (ENV ("{}"));
    json_t *env = json_object_get (
        json_object_get (json_object_get (o, "attributes"), "system"),
        "environment");
    ok (json_object_setn_new (env, "A\0B", 3, json_string ("x")) == 0,
        "set an environment name with a NUL byte");
    errno = 0;
    is_errno_ptr (jobspec_decode (o, &err), EINVAL, "NUL in a name fails");
    like (err.text,
          "jobspec: attributes.system.environment: invalid variable name",
          "NUL in a name message");
    json_decref (o);

    /* nor a rank key with one: "1\0x" must not pass for rank 1 */
    o = load (RENV ("{}"));
    env = json_object_get (
        json_object_get (
            json_object_get (json_object_get (o, "attributes"), "system"),
            "cairn"),
        "rank-environment");
    ok (json_object_setn_new (env, "1\0x", 3, json_object ()) == 0,
        "set a rank-environment key with a NUL byte");
    errno = 0;
    is_errno_ptr (jobspec_decode (o, &err), EINVAL, "NUL in a rank fails");
    like (err.text, RENV_PATH ": invalid rank \"1\"", "NUL in a rank message");
    json_decref (o);

    o = load (CLIENT ("\"flux\""));
    struct jobspec *js = jobspec_decode (o, &err);
    is_str (js ? jobspec_client (js) : NULL, "flux", "client: decoded");
    jobspec_destroy (js);
    json_decref (o);
    o = load (INSTANCE ("\"2e272d83-a347-43ab-b01a-f2acb561f54d\""));
    js = jobspec_decode (o, &err);
    is_str (js ? jobspec_instance (js) : NULL,
            "2e272d83-a347-43ab-b01a-f2acb561f54d", "instance: decoded");
    ok (js && !jobspec_client (js), "... client unset then");
    jobspec_destroy (js);
    json_decref (o);
    o = load (ENV ("{}"));
    js = jobspec_decode (o, &err);
    ok (js && !jobspec_client (js), "client: NULL when unset");
    ok (js && !jobspec_instance (js), "instance: NULL when unset");
    ok (js && !jobspec_hold_on_shrink (js), "hold-on-shrink: false when unset");
    jobspec_destroy (js);
    json_decref (o);
    o = load (SYS ("{\"cairn\":{\"hold-on-shrink\":true}}"));
    js = jobspec_decode (o, &err);
    ok (js && jobspec_hold_on_shrink (js), "hold-on-shrink: decoded");
    ok (js && !jobspec_hold_start (js), "hold-start: false when unset");
    ok (js && !jobspec_shell_leader (js), "shell-leader: false when unset");
    jobspec_destroy (js);
    json_decref (o);
    o = load (SYS ("{\"cairn\":{\"shell-leader\":true}}"));
    js = jobspec_decode (o, &err);
    ok (js && jobspec_shell_leader (js), "shell-leader: decoded");
    jobspec_destroy (js);
    json_decref (o);
    o = load (SYS ("{\"cairn\":{\"hold-start\":true}}"));
    js = jobspec_decode (o, &err);
    ok (js && jobspec_hold_start (js) && !jobspec_hold_on_shrink (js),
        "hold-start: decoded, alone");
    jobspec_destroy (js);
    json_decref (o);

    o = load (PFA ("2147483647"));
    js = jobspec_decode (o, &err);
    ok (js && jobspec_prolog_failures_allowed (js) == INT_MAX,
        "prolog-failures-allowed INT_MAX is fine");
    jobspec_destroy (js);
    json_decref (o);
}

static void test_rank_env (void)
{
    struct cairn_error err;
    struct idset *R = idset_decode ("0-10", NULL);
    json_t *o = load (RENV ("{\"3\":{\"FLUX_URI\":\"local:///r3\",\"E\":\"\"},"
                            "\"0\":{\"FLUX_URI\":\"local:///r0\"},"
                            "\"10\":{},\"4294967294\":{\"MAX\":\"1\"}}"));
    struct jobspec *js = jobspec_decode (o, &err);
    char *const *env;

    ok (js != NULL, "rank-environment: decodes");
    if (!js)
        BAIL_OUT ("%s", err.text);
    json_decref (o); /* copies: the tree may go first */
    env = jobspec_rank_env (js, 3);
    ok (env && env[0] && env[1] && !env[2], "rank-environment: rank 3 has 2");
    is_str (env ? env[0] : NULL, "FLUX_URI=local:///r3",
            "rank-environment: rank 3, first variable, in order");
    is_str (env ? env[1] : NULL, "E=", "rank-environment: an empty value");
    env = jobspec_rank_env (js, 0);
    ok (env && env[0] && !env[1], "rank-environment: rank 0 has 1");
    is_str (env ? env[0] : NULL, "FLUX_URI=local:///r0",
            "rank-environment: rank 0's own value");
    env = jobspec_rank_env (js, 10);
    ok (env && !env[0], "rank-environment: {} is an empty array, not absent");
    env = jobspec_rank_env (js, IDSET_MAX_ID);
    is_str (env ? env[0] : NULL, "MAX=1",
            "rank-environment: the largest rank is one");
    ok (!jobspec_rank_env (js, 1) && !jobspec_rank_env (js, 2) &&
            !jobspec_rank_env (js, 11),
        "rank-environment: NULL for a rank without an entry");
    ok (!jobspec_env (js), "rank-environment: not the jobspec's environment");

    errno = 0;
    err.text[0] = '\0';
    is_errno (jobspec_check_ranks (js, R, &err), EINVAL,
              "check_ranks: a rank not in R is refused");
    is_str (err.text, RENV_PATH ".4294967294: rank 4294967294 is not in R",
            "check_ranks: message names the rank");
    jobspec_destroy (js);

    o = load (RENV ("{\"7\":{\"A\":\"1\"},\"2\":{}}"));
    js = jobspec_decode (o, &err);
    ok (js && jobspec_check_ranks (js, R, &err) == 0,
        "check_ranks: ranks of R pass");
    idset_destroy (R);
    R = idset_decode ("0-6", NULL);
    errno = 0;
    is_errno (jobspec_check_ranks (js, R, &err), EINVAL,
              "check_ranks: rank 7 of 0-6 is refused");
    is_str (err.text, RENV_PATH ".7: rank 7 is not in R",
            "check_ranks: message");
    jobspec_destroy (js);
    json_decref (o);

    o = load ("{\"tasks\":[{\"command\":[\"true\"]}]}");
    js = jobspec_decode (o, &err);
    ok (js && !jobspec_rank_env (js, 0) &&
            jobspec_check_ranks (js, R, &err) == 0,
        "no rank-environment: NULL for every rank, and nothing to check");
    jobspec_destroy (js);
    json_decref (o);

    o = load (SYS ("{\"cairn\":{\"other\":1}}"));
    js = jobspec_decode (o, &err);
    ok (js && !jobspec_rank_env (js, 0),
        "attributes.system.cairn without rank-environment is fine");
    jobspec_destroy (js);
    json_decref (o);
    ok (jobspec_rank_env (NULL, 0) == NULL, "jobspec_rank_env (NULL)");
    idset_destroy (R);
}

static void test_create (void)
{
    char *argv[] = {"hostname", "-s", NULL};
    json_t *env = json_pack ("{s:s s:s}", "PATH", "/bin", "HOME", "/root");
    struct cairn_error err;
    json_t *o;
    struct jobspec *js;
    char *s;

    o = jobspec_create (argv, 4, "/home/u", env, 300., 1);
    ok (o != NULL, "jobspec_create works");
    s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    is_str (
        s,
        "{\"version\":1,\"resources\":[{\"type\":\"node\",\"count\":4,"
        "\"with\":[{\"type\":\"slot\",\"count\":1,\"label\":\"task\","
        "\"with\":[{\"type\":\"core\",\"count\":1}]}]}],"
        "\"tasks\":[{\"command\":[\"hostname\",\"-s\"],\"slot\":\"task\","
        "\"count\":{\"per_slot\":1}}],"
        "\"attributes\":{\"system\":{\"duration\":300.0,\"cwd\":\"/home/u\","
        "\"environment\":{\"PATH\":\"/bin\",\"HOME\":\"/root\"},"
        "\"exec\":{\"prolog-failures-allowed\":1}}}}",
        "jobspec_create output");
    free (s);
    ok (json_object_get (
            json_object_get (json_object_get (o, "attributes"), "system"),
            "environment") != env,
        "the environment is copied");
    js = o ? jobspec_decode (o, &err) : NULL;
    ok (js != NULL, "jobspec_create output decodes");
    ok (js && jobspec_duration (js) == 300. &&
            jobspec_prolog_failures_allowed (js) == 1 &&
            !strcmp (jobspec_argv (js)[1], "-s") &&
            !strcmp (jobspec_cwd (js), "/home/u"),
        "and gives back what went in");
    jobspec_destroy (js);
    json_decref (o);

    o = jobspec_create (argv, 1, NULL, NULL, 0., 0);
    s = o ? json_dumps (json_object_get (o, "attributes"), JSON_COMPACT) : NULL;
    is_str (s, "{\"system\":{\"duration\":0.0}}",
            "without cwd, environment or failures allowed");
    free (s);
    json_decref (o);

    json_t *badenv = json_pack ("{s:s}", "A=B", "x");
    json_t *notobj = json_array ();
    char *empty[] = {NULL};
    char *badutf8[] = {"a", "\xff", NULL};
    struct {
        char **argv;
        uint32_t n;
        const char *cwd;
        const json_t *env;
        double duration;
        int pfa;
        const char *what;
    } badc[] = {
        {NULL, 1, NULL, NULL, 0., 0, "NULL argv"},
        {empty, 1, NULL, NULL, 0., 0, "empty argv"},
        {badutf8, 1, NULL, NULL, 0., 0, "argv not UTF-8"},
        {argv, 0, NULL, NULL, 0., 0, "no ranks"},
        {argv, 1, "\xff", NULL, 0., 0, "cwd not UTF-8"},
        {argv, 1, NULL, badenv, 0., 0, "bad environment name"},
        {argv, 1, NULL, notobj, 0., 0, "environment not an object"},
        {argv, 1, NULL, NULL, -1., 0, "negative duration"},
        {argv, 1, NULL, NULL, NAN, 0, "NaN duration"},
        {argv, 1, NULL, NULL, INFINITY, 0, "infinite duration"},
        {argv, 1, NULL, NULL, 0., -1, "negative failures allowed"},
    };
    for (size_t i = 0; i < sizeof (badc) / sizeof (badc[0]); i++) {
        errno = 0;
        is_errno_ptr (jobspec_create (badc[i].argv, badc[i].n, badc[i].cwd,
                                      badc[i].env, badc[i].duration,
                                      badc[i].pfa),
                      EINVAL, "jobspec_create fails: %s", badc[i].what);
    }
    json_decref (badenv);
    json_decref (notobj);
    json_decref (env);
}

int main (void)
{
    plan (NO_PLAN);
    test_full ();
    test_bad ();
    test_rank_env ();
    test_create ();
    return done_testing ();
}
