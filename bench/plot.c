/* plot.c - curves drawn into a PNG by gnuplot.
 *
 * gnuplot is a benchmark-only tool (Debian: gnuplot-nox), so a machine
 * without it must not lose a run: the points and the script are always
 * written next to the PNG first, and running gnuplot is the last step. If
 * it is missing, the caller says how to draw the files later. The script
 * uses pngcairo when this gnuplot has it, else the plain png terminal.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

struct curve {
    char *name;
    double *x, *y;
    size_t n;
    bool target;
};

struct panel {
    char *title, *xlabel, *ylabel;
    bool logx, logy;
    struct curve *c;
    size_t nc;
};

struct plot {
    char *png;
    struct panel *p;
    size_t np;
};

/* png made absolute, so that the script names files that gnuplot finds
 * from any directory. */
static char *absolute (const char *png)
{
    char cwd[4096], *s;
    if (png[0] == '/' || !getcwd (cwd, sizeof (cwd)))
        return strdup (png);
    return asprintf (&s, "%s/%s", cwd, png) < 0 ? NULL : s;
}

struct plot *plot_create (const char *png)
{
    struct plot *p = calloc (1, sizeof (*p));
    if (!p || !(p->png = absolute (png))) {
        free (p);
        errno = ENOMEM;
        return NULL;
    }
    return p;
}

void plot_destroy (struct plot *p)
{
    if (!p)
        return;
    int saved = errno;
    for (size_t i = 0; i < p->np; i++) {
        struct panel *pa = &p->p[i];
        for (size_t k = 0; k < pa->nc; k++) {
            free (pa->c[k].name);
            free (pa->c[k].x);
            free (pa->c[k].y);
        }
        free (pa->c);
        free (pa->title);
        free (pa->xlabel);
        free (pa->ylabel);
    }
    free (p->p);
    free (p->png);
    free (p);
    errno = saved;
}

int plot_panel (struct plot *p,
                const char *title,
                const char *xlabel,
                const char *ylabel,
                bool logx,
                bool logy)
{
    struct panel *v = realloc (p->p, (p->np + 1) * sizeof (*v));
    if (!v)
        return -1;
    p->p = v;
    struct panel *pa = &v[p->np];
    memset (pa, 0, sizeof (*pa));
    pa->logx = logx;
    pa->logy = logy;
    p->np++; /* counted now, so that plot_destroy frees what was copied */
    if (!(pa->title = strdup (title)) || !(pa->xlabel = strdup (xlabel)) ||
        !(pa->ylabel = strdup (ylabel))) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int plot_curve (struct plot *p,
                const char *name,
                const double *x,
                const double *y,
                size_t n,
                bool target)
{
    if (p->np == 0) {
        errno = EINVAL;
        return -1;
    }
    struct panel *pa = &p->p[p->np - 1];
    struct curve *v = realloc (pa->c, (pa->nc + 1) * sizeof (*v));
    if (!v)
        return -1;
    pa->c = v;
    struct curve *c = &v[pa->nc];
    memset (c, 0, sizeof (*c));
    pa->nc++;
    c->target = target;
    if (!(c->name = strdup (name)) ||
        !(c->x = calloc (n ? n : 1, sizeof (double))) ||
        !(c->y = calloc (n ? n : 1, sizeof (double)))) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite (x[i]) || !isfinite (y[i]))
            continue;
        c->x[c->n] = x[i];
        c->y[c->n++] = y[i];
    }
    return 0;
}

/* A gnuplot single-quoted string: no escapes but '' for a quote. */
static void put_quoted (FILE *f, const char *s)
{
    fputc ('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc ('\'', f);
        fputc (*s, f);
    }
    fputc ('\'', f);
}

/* Close a file written with stdio: 0, or -1 with errno (EIO for an
 * earlier write error, else fclose's). */
static int close_written (FILE *f)
{
    int e = ferror (f) ? EIO : 0;
    if (fclose (f) < 0 && !e)
        e = errno;
    errno = e;
    return e ? -1 : 0;
}

static int write_dat (const struct plot *p, const char *path)
{
    FILE *f = fopen (path, "we");
    if (!f)
        return -1;
    for (size_t i = 0; i < p->np; i++) {
        for (size_t k = 0; k < p->p[i].nc; k++) {
            const struct curve *c = &p->p[i].c[k];
            fprintf (f, "# panel %zu: %s\n", i + 1, c->name);
            for (size_t j = 0; j < c->n; j++)
                fprintf (f, "%.9g %.9g\n", c->x[j], c->y[j]);
            if (c->n == 0) /* an empty block would merge with the next */
                fprintf (f, "NaN NaN\n");
            fprintf (f, "\n\n");
        }
    }
    return close_written (f);
}

static int write_gp (const struct plot *p, const char *path, const char *dat)
{
    FILE *f = fopen (path, "we");
    size_t cols = p->np < 3 ? p->np : 3, rows = (p->np + cols - 1) / cols;
    size_t index = 0;

    if (!f)
        return -1;
    fprintf (f, "# cairn-bench scale: draw with  gnuplot %s\n", path);
    fprintf (f,
             "if (strstrt (GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
             "    set terminal pngcairo size %zu,%zu font ',9'\n"
             "} else {\n"
             "    set terminal png size %zu,%zu\n"
             "}\n",
             520 * cols, 400 * rows, 520 * cols, 400 * rows);
    fprintf (f, "set output ");
    put_quoted (f, p->png);
    fprintf (f,
             "\nset grid\nset key outside top center horizontal\n"
             "set multiplot layout %zu,%zu\n",
             rows, cols);
    for (size_t i = 0; i < p->np; i++) {
        const struct panel *pa = &p->p[i];
        /* a linear y axis starts at 0, so that ratios read as ratios */
        fprintf (f, "%s\n%s\nset title ",
                 pa->logx ? "set logscale x" : "unset logscale x",
                 pa->logy ? "set logscale y; set autoscale y"
                          : "unset logscale y; set yrange [0:*]");
        put_quoted (f, pa->title);
        fprintf (f, "\nset xlabel ");
        put_quoted (f, pa->xlabel);
        fprintf (f, "\nset ylabel ");
        put_quoted (f, pa->ylabel);
        fprintf (f, "\nplot ");
        for (size_t k = 0; k < pa->nc; k++, index++) {
            fprintf (f, "%s", k ? ", \\\n     " : "");
            put_quoted (f, dat);
            fprintf (f, " index %zu using 1:2 with %s title ", index,
                     pa->c[k].target ? "lines dt 2 lw 2 lc rgb 'gray40'"
                                     : "linespoints pt 7 lw 2");
            put_quoted (f, pa->c[k].name);
        }
        fprintf (f, "\n");
    }
    fprintf (f, "unset multiplot\n");
    return close_written (f);
}

/* Run gnuplot on script: 0, or -1 with errno ENOENT (no gnuplot) or EIO
 * (it failed; its messages went to our stderr). */
static int run_gnuplot (const char *script)
{
    const char *prog = getenv ("GNUPLOT");
    char *argv[] = {(char *)(prog && *prog ? prog : "gnuplot"), (char *)script,
                    NULL};
    pid_t pid;
    int status;
    int rc = posix_spawnp (&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    while (waitpid (pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    /* 127: posix_spawnp's child could not exec (an old glibc) */
    if (WIFEXITED (status) && WEXITSTATUS (status) == 127) {
        errno = ENOENT;
        return -1;
    }
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

int plot_draw (struct plot *p, char *msg, size_t len, struct cairn_error *err)
{
    size_t n = strlen (p->png);
    size_t base = n > 4 && !strcmp (p->png + n - 4, ".png") ? n - 4 : n;
    char *dat = NULL, *gp = NULL;
    int rc = -1;

    if (p->np == 0)
        return errset (err, ENODATA, "plot: no curve was measured");
    if (asprintf (&dat, "%.*s.dat", (int)base, p->png) < 0) {
        dat = NULL;
        goto nomem;
    }
    if (asprintf (&gp, "%.*s.gp", (int)base, p->png) < 0) {
        gp = NULL;
        goto nomem;
    }
    if (write_dat (p, dat) < 0) {
        errset (err, errno, "plot: %s: %s", dat, strerror (errno));
        goto out;
    }
    if (write_gp (p, gp, dat) < 0) {
        errset (err, errno, "plot: %s: %s", gp, strerror (errno));
        goto out;
    }
    if (run_gnuplot (gp) < 0) {
        if (errno == ENOENT)
            errset (err, ENOENT,
                    "plot: gnuplot is not installed (apt-get install"
                    " gnuplot-nox); the points are in %s: draw them with"
                    " `gnuplot %s`",
                    dat, gp);
        else
            errset (err, errno, "plot: gnuplot %s failed (%s)", gp,
                    strerror (errno));
        goto out;
    }
    snprintf (msg, len, "plot: %s (points in %s, script %s)", p->png, dat, gp);
    rc = 0;
    goto out;
nomem:
    errset (err, ENOMEM, "out of memory");
out:
    free (dat);
    free (gp);
    return rc;
}
