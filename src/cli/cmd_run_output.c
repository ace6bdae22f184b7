/* cmd_run_output.c - see cmd_run_output.h */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_run_output.h"

struct runout {
    FILE *out, *err;       /* stdout/stderr or the files */
    bool own_out, own_err; /* opened here: closed at the end */
    bool label;
    json_t *held;    /* "RANK.stream" -> the start of a line not ended yet */
    json_t *offsets; /* rank -> {stdout, stderr} */
};

static FILE *
open_file (const char *path, const char *opt, struct cairn_error *err)
{
    FILE *f = fopen (path, "w");
    if (!f)
        errset (err, errno, "%s %s: %s", opt, path, strerror (errno));
    return f;
}

struct runout *runout_create (const char *outpath,
                              const char *errpath,
                              bool label,
                              struct cairn_error *err)
{
    struct runout *ro = calloc (1, sizeof (*ro));

    if (!ro || !(ro->held = json_object ()) ||
        !(ro->offsets = json_object ())) {
        runout_destroy (ro);
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    ro->label = label;
    ro->out = stdout;
    ro->err = stderr;
    if (outpath) {
        if (!(ro->out = open_file (outpath, "--output", err)))
            goto fail;
        ro->own_out = true;
    }
    if (errpath) {
        if (!(ro->err = open_file (errpath, "--error", err)))
            goto fail;
        ro->own_err = true;
    }
    return ro;
fail:;
    int e = errno;
    ro->out = ro->own_out ? ro->out : stdout;
    ro->err = stderr;
    runout_destroy (ro);
    errno = e;
    return NULL;
}

/* Write s (len bytes) of rank's stream, labeling whole lines. */
static int write_labeled (struct runout *ro,
                          FILE *f,
                          const char *key,
                          const char *rank,
                          const char *s,
                          size_t len)
{
    const char *held = json_string_value (json_object_get (ro->held, key));
    const char *p = s, *end = s + len, *nl;

    while ((nl = memchr (p, '\n', (size_t)(end - p)))) {
        fprintf (f, "%s: %s", rank, held ? held : "");
        fwrite (p, 1, (size_t)(nl - p) + 1, f);
        held = NULL;
        json_object_del (ro->held, key);
        p = nl + 1;
    }
    if (p < end) { /* a line not ended yet: keep it for the next data */
        size_t hl = held ? strlen (held) : 0;
        char *buf = malloc (hl + (size_t)(end - p) + 1);
        if (!buf)
            return -1;
        memcpy (buf, held ? held : "", hl);
        memcpy (buf + hl, p, (size_t)(end - p));
        buf[hl + (size_t)(end - p)] = '\0';
        json_object_set_new (ro->held, key, json_string (buf));
        free (buf);
    }
    return 0;
}

int runout_write (struct runout *ro, const json_t *data)
{
    const char *stream, *s;
    json_int_t rank, end;
    size_t len;
    char rk[24], key[40];

    if (json_unpack ((json_t *)data, "{s:I s:s s:s% s:I}", "rank", &rank,
                     "stream", &stream, "data", &s, &len, "end", &end) < 0 ||
        (strcmp (stream, "stdout") != 0 && strcmp (stream, "stderr") != 0)) {
        errno = EPROTO;
        return -1;
    }
    FILE *f = stream[3] == 'o' ? ro->out : ro->err;
    snprintf (rk, sizeof (rk), "%jd", (intmax_t)rank);
    snprintf (key, sizeof (key), "%s.%s", rk, stream);
    if (ro->label) {
        if (write_labeled (ro, f, key, rk, s, len) < 0)
            return -1;
    } else
        fwrite (s, 1, len, f);
    fflush (f);
    json_t *o = json_object_get (ro->offsets, rk);
    if (!o &&
        (!(o = json_object ()) || json_object_set_new (ro->offsets, rk, o) < 0))
        return -1;
    json_object_set_new (o, stream, json_integer (end));
    return ferror (f) ? -1 : 0;
}

const json_t *runout_offsets (const struct runout *ro)
{
    return ro->offsets;
}

void runout_destroy (struct runout *ro)
{
    const char *key;
    json_t *v;

    if (!ro)
        return;
    json_object_foreach (ro->held, key, v)
    {
        /* a last line without its newline: show it, and end it */
        char rank[24];
        snprintf (rank, sizeof (rank), "%.*s", (int)strcspn (key, "."), key);
        FILE *f = strstr (key, ".stdout") ? ro->out : ro->err;
        fprintf (f, "%s: %s\n", rank, json_string_value (v));
    }
    if (ro->own_out && ro->out)
        fclose (ro->out);
    if (ro->own_err && ro->err)
        fclose (ro->err);
    json_decref (ro->held);
    json_decref (ro->offsets);
    free (ro);
}
