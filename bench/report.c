/* report.c - a benchmark's results, as a table or as JSON.
 *
 * The machine is described in every report (cores, memory, kernel, load
 * average before and after) because the figures only mean something next
 * to the limits of the machine they were measured on, and these machines
 * are shared: the load average says how busy it was.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct report {
    json_t *o;
    json_t *rows;
    json_t *ratios;
    json_t *notes;
    json_t *params;
    double t_start;
    bool failed;
};

static json_t *loadavg (void)
{
    double l[3] = {0};
    FILE *f = fopen ("/proc/loadavg", "re");
    if (f) {
        if (fscanf (f, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3)
            l[0] = l[1] = l[2] = 0;
        fclose (f);
    }
    return json_pack ("[f f f]", l[0], l[1], l[2]);
}

static json_t *machine (void)
{
    struct utsname u;
    long mem_kib = 0;
    char line[256], cpu[128] = "?";
    FILE *f = fopen ("/proc/meminfo", "re");
    if (f) {
        while (fgets (line, sizeof (line), f))
            if (sscanf (line, "MemTotal: %ld", &mem_kib) == 1)
                break;
        fclose (f);
    }
    if ((f = fopen ("/proc/cpuinfo", "re"))) {
        while (fgets (line, sizeof (line), f)) {
            char *colon = strchr (line, ':');
            if (!strncmp (line, "model name", 10) && colon) {
                snprintf (cpu, sizeof (cpu), "%s", colon + 2);
                cpu[strcspn (cpu, "\n")] = '\0';
                break;
            }
        }
        fclose (f);
    }
    if (uname (&u) < 0)
        memset (&u, 0, sizeof (u));
    return json_pack ("{s:i s:s s:I s:s s:o}", "nproc",
                      (int)sysconf (_SC_NPROCESSORS_ONLN), "cpu", cpu,
                      "memory_mib", (json_int_t)(mem_kib / 1024), "kernel",
                      u.release, "loadavg_start", loadavg ());
}

struct report *report_create (const char *name, const struct bench_opts *o)
{
    struct report *r = calloc (1, sizeof (*r));
    if (!r)
        return NULL;
    r->t_start = bench_now ();
    r->rows = json_array ();
    r->ratios = json_array ();
    r->notes = json_array ();
    r->params = json_pack ("{s:i}", "reps", o->reps);
    r->o = json_pack ("{s:s s:f s:o s:O s:O s:O s:O}", "benchmark", name,
                      "date", (double)time (NULL), "machine", machine (),
                      "params", r->params, "rows", r->rows, "ratios", r->ratios,
                      "notes", r->notes);
    if (!r->o || !r->rows || !r->ratios || !r->notes || !r->params) {
        report_destroy (r);
        return NULL;
    }
    return r;
}

void report_destroy (struct report *r)
{
    if (!r)
        return;
    json_decref (r->rows);
    json_decref (r->ratios);
    json_decref (r->notes);
    json_decref (r->params);
    json_decref (r->o);
    free (r);
}

void report_param (struct report *r, const char *key, json_t *v)
{
    json_object_set_new (r->params, key, v);
}

static json_t *samples (const double *v, size_t n)
{
    json_t *a = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (a, isfinite (v[i]) ? json_real (v[i])
                                                  : json_null ());
    return a;
}

double report_add (struct report *r,
                   const char *name,
                   const char *unit,
                   const double *v,
                   size_t n)
{
    double m = bench_median (v, n);
    json_array_append_new (
        r->rows,
        json_pack ("{s:s s:s s:o s:o}", "name", name, "unit", unit, "median",
                   isfinite (m) ? json_real (m) : json_null (), "samples",
                   samples (v, n)));
    return m;
}

double report_ratio (struct report *r,
                     const char *name,
                     const double *v,
                     size_t n,
                     const char *cmp,
                     double target)
{
    double m = bench_median (v, n);
    json_t *o = json_pack ("{s:s s:o s:o}", "name", name, "median",
                           isfinite (m) ? json_real (m) : json_null (),
                           "samples", samples (v, n));
    if (cmp) {
        bool met = !strcmp (cmp, ">=") ? m >= target : m <= target;
        json_object_set_new (o, "target",
                             json_sprintf ("%s %.3g", cmp, target));
        json_object_set_new (o, "met", json_boolean (isfinite (m) && met));
    }
    json_array_append_new (r->ratios, o);
    return m;
}

void report_note (struct report *r, const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    json_array_append_new (r->notes, json_string (buf));
}

void report_fail (struct report *r, const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    r->failed = true;
    json_object_set_new (r->o, "failed", json_true ());
    json_array_append_new (r->notes, json_sprintf ("FAILED: %s", buf));
}

bool report_failed (const struct report *r)
{
    return r->failed;
}

/* A figure with 3-4 significant digits, the way a person reads it. */
static void fmt_num (char *buf, size_t len, json_t *v)
{
    double x = json_number_value (v);
    if (!json_is_number (v) || !isfinite (x))
        snprintf (buf, len, "-");
    else if (fabs (x) >= 1000)
        snprintf (buf, len, "%.0f", x);
    else if (fabs (x) >= 10)
        snprintf (buf, len, "%.1f", x);
    else
        snprintf (buf, len, "%.3g", x);
}

static void fmt_samples (char *buf, size_t len, json_t *a)
{
    size_t i, off = 0;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach (a, i, v)
    {
        char num[32];
        fmt_num (num, sizeof (num), v);
        int n = snprintf (buf + off, len - off, "%s%s", i ? " " : "", num);
        if (n < 0 || (size_t)n >= len - off)
            break;
        off += n;
    }
}

static void print_table (struct report *r)
{
    json_t *m = json_object_get (r->o, "machine"), *row;
    json_t *la = json_object_get (m, "loadavg_start");
    json_t *lb = json_object_get (m, "loadavg_end");
    size_t i;
    char num[32], smp[256];

    printf ("== %s  (%d cores, %s, %lld MiB, kernel %s; load %.2f -> %.2f;"
            " medians of %d runs)\n",
            json_string_value (json_object_get (r->o, "benchmark")),
            (int)json_integer_value (json_object_get (m, "nproc")),
            json_string_value (json_object_get (m, "cpu")),
            (long long)json_integer_value (json_object_get (m, "memory_mib")),
            json_string_value (json_object_get (m, "kernel")),
            json_number_value (json_array_get (la, 0)),
            json_number_value (json_array_get (lb, 0)),
            (int)json_integer_value (json_object_get (r->params, "reps")));
    printf ("%-46s %12s  %-9s %s\n", "measure", "median", "unit", "runs");
    json_array_foreach (r->rows, i, row)
    {
        fmt_num (num, sizeof (num), json_object_get (row, "median"));
        fmt_samples (smp, sizeof (smp), json_object_get (row, "samples"));
        printf ("%-46s %12s  %-9s %s\n",
                json_string_value (json_object_get (row, "name")), num,
                json_string_value (json_object_get (row, "unit")), smp);
    }
    if (json_array_size (r->ratios) > 0)
        printf ("%-46s %12s  %-9s %s\n", "ratio", "median", "target", "runs");
    json_array_foreach (r->ratios, i, row)
    {
        json_t *t = json_object_get (row, "target");
        char tgt[64];
        fmt_num (num, sizeof (num), json_object_get (row, "median"));
        fmt_samples (smp, sizeof (smp), json_object_get (row, "samples"));
        snprintf (tgt, sizeof (tgt), "%s%s", t ? json_string_value (t) : "",
                  !t                                            ? ""
                  : json_is_true (json_object_get (row, "met")) ? " ok"
                                                                : " MISSED");
        printf ("%-46s %12s  %-9s %s\n",
                json_string_value (json_object_get (row, "name")), num, tgt,
                smp);
    }
    json_array_foreach (r->notes, i, row)
        printf ("  * %s\n", json_string_value (row));
    printf ("\n");
}

void report_print (struct report *r, bool json, FILE *jf)
{
    json_t *m = json_object_get (r->o, "machine");
    json_object_set_new (m, "loadavg_end", loadavg ());
    json_object_set_new (r->o, "seconds",
                         json_real (bench_now () - r->t_start));
    char *s = json_dumps (r->o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (json && s)
        printf ("%s\n", s);
    else if (!json)
        print_table (r);
    if (jf && s) {
        fprintf (jf, "%s\n", s);
        fflush (jf);
    }
    free (s);
    fflush (stdout);
}
