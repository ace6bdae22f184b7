/* t_shellout.c - the job shells' own output as exec.eventlog "log" events
 * (issue 37): each of cairnd's output responses once, in job-exec's
 * form, and the offsets a reattach asks from. */
#include <string.h>

#include "flux/shellout.h"
#include "tap.h"

static json_t *out (struct shellout *so, const char *data)
{
    json_t *o = json_loads (data, 0, NULL);
    json_t *c = shellout_log (so, o);
    json_decref (o);
    return c;
}

static char *dump (json_t *o)
{
    static char buf[512];
    char *s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf (buf, sizeof (buf), "%s", s ? s : "(null)");
    free (s);
    json_decref (o);
    return buf;
}

int main (void)
{
    plan (NO_PLAN);
    struct shellout *so = shellout_create ("/opt/flux/libexec/flux/flux-shell");
    ok (so != NULL, "created");
    is_str (
        dump (out (so, "{\"rank\": 3, \"stream\": \"stderr\", "
                       "\"data\": \"flux-imp: Fatal: no\\n\", \"end\": 20}")),
        "{\"component\":\"flux-shell\",\"data\":\"flux-imp: Fatal: "
        "no\\n\",\"rank\":\"3\",\"stream\":\"stderr\"}",
        "job-exec's log context: component is the shell's basename, "
        "rank a string");
    ok (out (so, "{\"rank\": 3, \"stream\": \"stderr\", \"data\": \"again\", "
                 "\"end\": 20}") == NULL,
        "an end not past the posted one: not posted twice");
    ok (out (so, "{\"rank\": 3, \"stream\": \"stdout\", \"data\": \"\", "
                 "\"end\": 0}") == NULL,
        "empty data: nothing");
    ok (out (so, "{\"rank\": 3, \"stream\": \"stdin\", \"data\": \"x\", "
                 "\"end\": 1}") == NULL,
        "another stream: nothing");
    ok (out (so, "{\"rank\": -1, \"stream\": \"stdout\", \"data\": \"x\", "
                 "\"end\": 1}") == NULL &&
            out (so, "{\"stream\": \"stdout\", \"data\": \"x\"}") == NULL,
        "malformed: nothing");
    json_decref (out (so, "{\"rank\": 0, \"stream\": \"stdout\", "
                          "\"data\": \"hi\\n\", \"end\": 3}"));
    is_str (dump (shellout_offsets (so)),
            "{\"0\":{\"stderr\":0,\"stdout\":3},\"3\":{\"stderr\":20,"
            "\"stdout\":0}}",
            "the offsets of a reattach: what was posted, per rank");
    shellout_destroy (so);
    so = shellout_create ("shell");
    is_str (dump (out (so, "{\"rank\": 0, \"stream\": \"stdout\", "
                           "\"data\": \"x\", \"end\": 1}")),
            "{\"component\":\"shell\",\"data\":\"x\",\"rank\":\"0\","
            "\"stream\":\"stdout\"}",
            "a shell path without a slash is its own name");
    shellout_destroy (so);
    return done_testing ();
}
