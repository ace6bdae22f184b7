/* fxphase.c - see fxphase.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxphase.h"

/* Kept short: `flux python -c` takes it as one argument. */
const char fxphase_py[] =
    "import flux, json, statistics, sys\n"
    "from flux.job import job_kvs_lookup\n"
    "h = flux.Flux()\n"
    "keys = ((\"eventlog\", \"\"), (\"guest.exec.eventlog\", \"exec.\"))\n"
    "rel, n = {}, 0\n"
    "for a in sys.argv[1:]:\n"
    "    d = job_kvs_lookup(h, int(a), keys=[k for k, _ in keys],\n"
    "                       decode=False)\n"
    "    t = {}\n"
    "    for k, pre in keys:\n"
    "        for line in (d.get(k) or \"\").splitlines():\n"
    "            e = json.loads(line)\n"
    "            t.setdefault(pre + e[\"name\"], e[\"timestamp\"])\n"
    "    if \"submit\" not in t or \"alloc\" not in t:\n"
    "        continue\n"
    "    n += 1\n"
    "    a0 = t[\"alloc\"]\n"
    "    rel.setdefault(\"submit alloc\", []).append((a0 - t[\"submit\"]) * "
    "1e3)\n"
    "    for name, ts in t.items():\n"
    "        if ts >= a0 and name != \"alloc\":\n"
    "            rel.setdefault(\"alloc \" + name, []).append((ts - a0) * "
    "1e3)\n"
    "rows = sorted((k.startswith(\"alloc\"), statistics.median(v), k)\n"
    "              for k, v in rel.items() if len(v) == n)\n"
    "for _, m, k in rows:\n"
    "    print(\"%s %.3f\" % (k, m))\n";

json_t *fxphase_parse (const char *text, struct cairn_error *err)
{
    json_t *a = json_array ();
    const char *line = text;

    if (!a) {
        errset (err, ENOMEM, "out of memory");
        return NULL;
    }
    while (line && *line) {
        char from[64], to[64], name[140];
        double ms;
        if (sscanf (line, "%63s %63s %lf", from, to, &ms) == 3 &&
            snprintf (name, sizeof (name), "%s -> %s", from, to) > 0 &&
            json_array_append_new (a, json_pack ("[s f]", name, ms)) < 0) {
            json_decref (a);
            errset (err, ENOMEM, "out of memory");
            return NULL;
        }
        line = strchr (line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (json_array_size (a) == 0) {
        json_decref (a);
        errset (err, EINVAL, "no phase read from the jobs' eventlogs");
        return NULL;
    }
    return a;
}

/* labels: [[LABEL, [NAME...], {NAME: [MS...]}], ...] in order */
struct fxphase {
    json_t *labels;
};

struct fxphase *fxphase_create (void)
{
    struct fxphase *p = calloc (1, sizeof (*p));
    if (p && !(p->labels = json_array ())) {
        free (p);
        p = NULL;
    }
    return p;
}

void fxphase_destroy (struct fxphase *p)
{
    if (!p)
        return;
    json_decref (p->labels);
    free (p);
}

static json_t *label_get (struct fxphase *p, const char *label)
{
    size_t i;
    json_t *l;
    json_array_foreach (p->labels, i, l)
    {
        if (!strcmp (json_string_value (json_array_get (l, 0)), label))
            return l;
    }
    l = json_pack ("[s [] {}]", label);
    if (!l || json_array_append_new (p->labels, l) < 0)
        return NULL;
    return l;
}

int fxphase_add (struct fxphase *p, const char *label, const json_t *medians)
{
    json_t *l = label_get (p, label);
    size_t i;
    json_t *row;

    if (!l) {
        errno = ENOMEM;
        return -1;
    }
    json_t *order = json_array_get (l, 1), *vals = json_array_get (l, 2);
    json_array_foreach (medians, i, row)
    {
        const char *name = json_string_value (json_array_get (row, 0));
        json_t *v = json_object_get (vals, name);
        if (!v) {
            if (json_object_set_new (vals, name, v = json_array ()) < 0 ||
                json_array_append_new (order, json_string (name)) < 0) {
                errno = ENOMEM;
                return -1;
            }
        }
        if (json_array_append (v, json_array_get (row, 1)) < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    return 0;
}

void fxphase_report (const struct fxphase *p, struct report *r, int n)
{
    size_t i, j;
    json_t *l, *name;

    json_array_foreach (p->labels, i, l)
    {
        const char *label = json_string_value (json_array_get (l, 0));
        json_t *vals = json_array_get (l, 2);
        json_array_foreach (json_array_get (l, 1), j, name)
        {
            json_t *v = json_object_get (vals, json_string_value (name));
            double x[BENCH_MAX_REPS];
            char row[128];
            if ((int)json_array_size (v) != n || n > BENCH_MAX_REPS)
                continue; /* not in every run */
            for (int k = 0; k < n; k++)
                x[k] = json_real_value (json_array_get (v, (size_t)k));
            snprintf (row, sizeof (row), "%s: %s", label,
                      json_string_value (name));
            report_add (r, row, "ms", x, n);
        }
    }
}
