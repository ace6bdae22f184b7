/* cmd_jutil.c - helpers of the journal-reading subcommands (see
 * cmd_journal.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cli/cmd_journal.h"
#include "core/eventlog.h"
#include "core/hostlist.h"
#include "core/jobid.h"
#include "core/signame.h"

int jcli_open (struct jcli *jc, struct cli *cli, bool writable)
{
    struct journal_opts opts = {.readonly = !writable};
    struct cairn_error err = {{0}};
    struct stat sb;
    char *data = NULL;
    int e;

    memset (jc, 0, sizeof (*jc));
    jc->cli = cli;
    if (!(jc->statedir = cli_statedir (cli)))
        return -1;
    if (stat (jc->statedir, &sb) < 0) {
        cli_error ("state dir %s: %s", jc->statedir, strerror (errno));
        goto error;
    }
    /* journal_open() would create a journal when writable: check first
     * that there is one, and say so the same way in both modes. */
    if (asprintf (&data, "%s/journal/data.mdb", jc->statedir) < 0) {
        data = NULL;
        cli_error ("out of memory");
        goto error;
    }
    if (S_ISDIR (sb.st_mode) && stat (data, &sb) < 0 && errno == ENOENT) {
        cli_error ("no journal in %s (is this a cairn state dir?)",
                   jc->statedir);
        goto error;
    }
    if (!(jc->j = journal_open (jc->statedir, &opts, &err))) {
        if (errno == ENOENT)
            cli_error ("no journal in %s (is this a cairn state dir?)",
                       jc->statedir);
        else
            cli_error ("%s", err.text);
        goto error;
    }
    free (data);
    return 0;
error:
    e = errno; /* jcli_open_view() reads it */
    free (data);
    free (jc->statedir);
    jc->statedir = NULL;
    errno = e;
    return -1;
}

int jcli_list_add (const struct journal_jobinfo *info, void *arg)
{
    json_t *o = json_pack ("{s:I s:b s:I s:f}", "id", (json_int_t)info->id,
                           "active", info->active, "nevents",
                           (json_int_t)info->nevents, "t-end", info->t_end);
    if (!o || json_array_append_new (arg, o) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

json_t *jcli_job_list (struct jcli *jc, bool active_only)
{
    struct cairn_error err = {{0}};
    json_t *a = json_array ();
    if (!a ||
        journal_foreach_job (jc->j, active_only, jcli_list_add, a, &err) < 0) {
        cli_error ("%s: listing jobs: %s", jc->statedir,
                   a ? err.text : "out of memory");
        json_decref (a);
        return NULL;
    }
    return a;
}

uint64_t jcli_list_id (const json_t *a, size_t i)
{
    return (uint64_t)json_integer_value (
        json_object_get (json_array_get (a, i), "id"));
}

void jcli_close (struct jcli *jc)
{
    if (jc) {
        journal_close (jc->j);
        client_close (jc->c);
        free (jc->statedir);
        free (jc->sockpath);
        jc->j = NULL;
        jc->c = NULL;
        jc->statedir = NULL;
        jc->sockpath = NULL;
    }
}

void jcli_f58 (uint64_t id, char *buf, size_t len)
{
    if (jobid_encode_f58 (id, buf, len) < 0)
        snprintf (buf, len, "?");
}

void jcli_no_job (struct jcli *jc, uint64_t id)
{
    char f58[JOBID_STRLEN];
    jcli_f58 (id, f58, sizeof (f58));
    if (jc->c)
        cli_error ("no job %ju (%s) known to cairnd at %s", (uintmax_t)id, f58,
                   jc->sockpath);
    else
        cli_error ("no job %ju (%s) in the journal of %s", (uintmax_t)id, f58,
                   jc->statedir);
}

struct readarg {
    json_t *events;
    bool bad;
};

static int
read_cb (uint64_t id, uint32_t seq, const char *line, size_t len, void *arg)
{
    struct readarg *ra = arg;
    json_t *entry = eventlog_entry_decode (line, len, NULL);
    json_t *o;

    if (!entry) {
        if (errno == ENOMEM)
            return -1;
        ra->bad = true;
        entry = json_stringn_nocheck (line, len);
    }
    if (!(o = json_pack ("{s:I s:o}", "seq", (json_int_t)seq, "event",
                         entry)) ||
        json_array_append_new (ra->events, o) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

json_t *jcli_events (struct jcli *jc, uint64_t id, uint32_t from, bool *bad)
{
    struct cairn_error err = {{0}};
    struct readarg ra = {.events = json_array ()};

    if (!ra.events) {
        cli_error ("out of memory");
        return NULL;
    }
    if (jcli_read (jc, id, from, read_cb, &ra, &err) < 0) {
        jcli_read_error (jc, id, &err);
        json_decref (ra.events);
        return NULL;
    }
    if (bad)
        *bad = ra.bad;
    return ra.events;
}

struct job *
jcli_fold (uint64_t id, const json_t *events, struct cairn_error *err)
{
    struct job *job = job_create (id);
    size_t i;
    json_t *w;

    if (!job) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    json_array_foreach (events, i, w)
    {
        json_int_t seq = json_integer_value (json_object_get (w, "seq"));
        json_t *entry = json_object_get (w, "event");
        if (!json_is_object (entry)) {
            errset (err, EINVAL, "seq %jd: malformed event", (intmax_t)seq);
            goto error;
        }
        if (job_apply (job, entry, err) < 0) {
            errprefix (err, "seq %jd", (intmax_t)seq);
            goto error;
        }
    }
    return job;
error:
    job_destroy (job);
    return NULL;
}

bool jcli_json_option (struct cli *cli, int argc, char **argv)
{
    enum { OPT_JSON = 0x100 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        CLI_COMMON_LONGOPTS,
        {0},
    };
    bool json = false;
    int opt;

    while ((opt = getopt_long (argc, argv, CLI_COMMON_SHORTOPTS, longopts,
                               NULL)) != -1) {
        if (opt == OPT_JSON)
            json = true;
        else
            cli_common_option (cli, opt, optarg);
    }
    return json;
}

struct job *jcli_one_job (struct jcli *jc,
                          struct cli *cli,
                          int argc,
                          char **argv,
                          bool *json,
                          uint64_t *id,
                          json_t **events)
{
    *events = NULL;
    *json = jcli_json_option (cli, argc, argv);
    if (argc - optind != 1)
        cli_usage_error (cli, "expected one JOBID");
    if (cli_parse_jobid (cli, argv[optind], id) < 0 ||
        jcli_open_view (jc, cli) < 0)
        return NULL;
    return jcli_load (jc, *id, events);
}

struct job *jcli_load (struct jcli *jc, uint64_t id, json_t **eventsp)
{
    struct cairn_error err = {{0}};
    json_t *events = jcli_events (jc, id, 0, NULL);
    struct job *job;

    if (!events)
        return NULL;
    if (!(job = jcli_fold (id, events, &err)))
        cli_error ("job %ju in %s: %s (run cairn verify)", (uintmax_t)id,
                   jc->c ? jc->sockpath : jc->statedir, err.text);
    if (eventsp && job)
        *eventsp = events;
    else
        json_decref (events);
    return job;
}

const char *jcli_last_event (const json_t *events, double *t)
{
    json_t *w = json_array_get (events, json_array_size (events) - 1);
    const char *name = "";
    double ts = 0;

    if (!w || eventlog_entry_parse (json_object_get (w, "event"), &ts, &name,
                                    NULL) < 0)
        name = "";
    if (t)
        *t = ts;
    return name;
}

int jcli_parse_ids (struct cli *cli, int argc, char **argv, uint64_t **ids)
{
    *ids = NULL;
    if (argc <= 0)
        return 0;
    if (!(*ids = calloc ((size_t)argc, sizeof (**ids)))) {
        cli_error ("out of memory");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (cli_parse_jobid (cli, argv[i], &(*ids)[i]) < 0) {
            free (*ids);
            *ids = NULL;
            return -1;
        }
    }
    return argc;
}

double jcli_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void jcli_duration (double s, char *buf, size_t len)
{
    if (!(s >= 0) || !isfinite (s))
        snprintf (buf, len, "-");
    else if (s < 60)
        snprintf (buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf (buf, len, "%dm%02ds", (int)(s / 60), (int)fmod (s, 60));
    else if (s < 86400)
        snprintf (buf, len, "%dh%02dm", (int)(s / 3600),
                  (int)fmod (s, 3600) / 60);
    else
        snprintf (buf, len, "%.0fd%02dh", floor (s / 86400),
                  (int)fmod (s, 86400) / 3600);
}

void jcli_time (double t, char *buf, size_t len)
{
    time_t secs = (time_t)floor (t);
    int ms = (int)((t - floor (t)) * 1000);
    char day[32] = "?", zone[16] = "";
    struct tm tm;

    if (localtime_r (&secs, &tm)) {
        strftime (day, sizeof (day), "%Y-%m-%d %H:%M:%S", &tm);
        strftime (zone, sizeof (zone), "%z", &tm);
    }
    snprintf (buf, len, "%s.%03d %s", day, ms > 999 ? 999 : ms, zone);
}

void jcli_username (uint32_t uid, char *buf, size_t len)
{
    /* a journal's jobs are mostly one user's: ask the user database (which
     * may be a network service) once for a run of them */
    static char last[256];
    static uint32_t last_uid;
    static bool have_last;
    struct passwd pw, *found = NULL;
    char tmp[4096];

    if (!have_last || uid != last_uid) {
        if (getpwuid_r ((uid_t)uid, &pw, tmp, sizeof (tmp), &found) == 0 &&
            found && found->pw_name && *found->pw_name)
            snprintf (last, sizeof (last), "%s", found->pw_name);
        else
            snprintf (last, sizeof (last), "%u", (unsigned)uid);
        last_uid = uid;
        have_last = true;
    }
    snprintf (buf, len, "%s", last);
}

/* A word the shell reads as it is. */
static bool shell_safe (const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || strchr ("@%+=:,./_-", *s)))
            return false;
    return true;
}

char *jcli_command (const json_t *argv)
{
    char *buf = NULL;
    size_t len = 0, i;
    FILE *f = open_memstream (&buf, &len);
    json_t *a;

    if (!f)
        return NULL;
    json_array_foreach (argv, i, a)
    {
        const char *w = json_string_value (a) ? json_string_value (a) : "?";
        if (i > 0)
            fputc (' ', f);
        if (shell_safe (w)) {
            fputs (w, f);
            continue;
        }
        fputc ('\'', f);
        for (; *w; w++) {
            if (*w == '\'')
                fputs ("'\\''", f);
            else
                fputc (*w, f);
        }
        fputc ('\'', f);
    }
    if (fclose (f) != 0) {
        free (buf);
        errno = ENOMEM;
        return NULL;
    }
    return buf;
}

struct rv1 *jcli_rv1 (const json_t *events)
{
    const char *name;
    json_t *ctx;

    if (eventlog_entry_parse (
            json_object_get (json_array_get (events, 0), "event"), NULL, &name,
            &ctx) < 0 ||
        job_event_of (name) != JOB_EV_ACCEPT || !json_object_get (ctx, "R"))
        return NULL;
    return rv1_decode (json_object_get (ctx, "R"), NULL);
}

char *jcli_hosts (const struct rv1 *r, const struct idset *ranks, bool unique)
{
    struct hostlist *hl = hostlist_create ();
    json_t *seen = json_object ();
    char *s = NULL;

    if (!hl || !seen) {
        errno = ENOMEM;
        goto done;
    }
    for (uint32_t rk = idset_first (ranks); rk != IDSET_INVALID_ID;
         rk = idset_next (ranks, rk)) {
        const char *h = r ? rv1_hostname (r, rk) : NULL;
        if (!h) {
            errno = ENOENT;
            goto done;
        }
        if (unique) {
            if (json_object_get (seen, h))
                continue;
            if (json_object_set_new (seen, h, json_true ()) < 0) {
                errno = ENOMEM;
                goto done;
            }
        }
        if (hostlist_append (hl, h) < 0)
            goto done;
    }
    s = hostlist_encode (hl);
done:
    json_decref (seen);
    hostlist_destroy (hl);
    return s;
}

void jcli_status (int status, char *buf, size_t len)
{
    if (status < 0)
        snprintf (buf, len, "unknown");
    else
        cli_wait_status_str (status, buf, len);
}

int jcli_exit_code (int status)
{
    if (status < 0)
        return -1;
    if (WIFEXITED (status))
        return WEXITSTATUS (status);
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return 1;
}

int jcli_print_json (json_t *o)
{
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    json_decref (o);
    if (!s) {
        cli_error ("out of memory");
        return -1;
    }
    puts (s);
    free (s);
    return 0;
}

/* ---- tables ---- */

struct table {
    int ncols;
    size_t width; /* the longest line, 0: no limit (table_set_width) */
    bool noheader;
    json_t *rows; /* arrays of strings; row 0 is the header */
};

struct table *table_create (int ncols, const char *const *headers)
{
    struct table *t = calloc (1, sizeof (*t));
    json_t *h;

    if (!t || !(t->rows = json_array ()) || !(h = json_array ()) ||
        json_array_append_new (t->rows, h) < 0)
        goto error;
    t->ncols = ncols;
    for (int i = 0; i < ncols; i++)
        if (json_array_append_new (h, json_string (headers[i])) < 0)
            goto error;
    return t;
error:
    table_destroy (t);
    errno = ENOMEM;
    return NULL;
}

void table_destroy (struct table *t)
{
    if (t) {
        int saved = errno;
        json_decref (t->rows);
        free (t);
        errno = saved;
    }
}

/* One line per row: these would break it. */
#define CONTROL_CHARS                                                          \
    "\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13"   \
    "\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"

int table_add (struct table *t, ...)
{
    json_t *row = json_array ();
    va_list ap;

    if (!row)
        return -1;
    va_start (ap, t);
    for (int i = 0; i < t->ncols; i++) {
        const char *s = va_arg (ap, const char *);
        json_t *cell = json_string (s && *s ? s : "-");
        if (!cell) /* not UTF-8: keep the column */
            cell = json_string ("?");
        if (cell && strpbrk (json_string_value (cell), CONTROL_CHARS)) {
            char *c = strdup (json_string_value (cell));
            for (char *p = c; p && (p = strpbrk (p, CONTROL_CHARS));)
                *p = '?';
            json_decref (cell);
            cell = c ? json_string (c) : NULL;
            free (c);
        }
        if (json_array_append_new (row, cell) < 0) {
            va_end (ap);
            json_decref (row);
            errno = ENOMEM;
            return -1;
        }
    }
    va_end (ap);
    if (json_array_append_new (t->rows, row) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

size_t jcli_width (const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

size_t jcli_prefix (const char *s, size_t n)
{
    size_t i = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && n-- == 0)
            break;
    }
    return i;
}

void table_set_width (struct table *t, size_t width)
{
    t->width = width;
}

void table_set_header (struct table *t, bool header)
{
    t->noheader = !header;
}

/* The last column's cell s as table_set_width() cuts it to room
 * characters, in buf. */
static const char *cut (const char *s, size_t room, char *buf, size_t len)
{
    if (jcli_width (s) <= room)
        return s;
    snprintf (buf, len, "%.*s…", (int)jcli_prefix (s, room - 1), s);
    return buf;
}

void table_print (const struct table *t, FILE *f)
{
    size_t w[32] = {0};
    int ncols = t->ncols < 32 ? t->ncols : 32;
    size_t r;
    json_t *row;

    size_t room = 0;
    char buf[1024];

    json_array_foreach (t->rows, r, row)
    {
        for (int i = 0; i < ncols; i++) {
            size_t cw =
                jcli_width (json_string_value (json_array_get (row, i)));
            if (cw > w[i])
                w[i] = cw;
        }
    }
    if (t->width > 0) {
        size_t used = 0;
        for (int i = 0; i < ncols - 1; i++)
            used += w[i] + 2;
        room = t->width > used + 10 ? t->width - used : 10;
        if (room > sizeof (buf) / 4)
            room = sizeof (buf) / 4;
    }
    json_array_foreach (t->rows, r, row)
    {
        if (r == 0 && t->noheader)
            continue;
        for (int i = 0; i < ncols; i++) {
            const char *s = json_string_value (json_array_get (row, i));
            if (i == ncols - 1)
                fprintf (f, "%s\n",
                         room > 0 && r > 0 ? cut (s, room, buf, sizeof (buf))
                                           : s);
            else
                fprintf (f, "%s%*s  ", s, (int)(w[i] - jcli_width (s)), "");
        }
    }
}
