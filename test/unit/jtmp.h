/* jtmp.h - a journal in a throwaway directory, for the journal's unit
 * tests (t_journal, t_journal_async). Header-only; include after tap.h. */
#ifndef CAIRN_TEST_JTMP_H
#define CAIRN_TEST_JTMP_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "journal/journal.h"

static int jtmp_rm_entry (const char *path,
                          const struct stat *sb,
                          int flag,
                          struct FTW *ftw)
{
    return remove (path);
}

/* A new directory /tmp/<prefix>.XXXXXX; bails out on failure. */
static inline char *tmpdir_create_as (const char *prefix)
{
    char *dir = NULL;
    if (asprintf (&dir, "/tmp/%s.XXXXXX", prefix) < 0 || !mkdtemp (dir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    return dir;
}

/* Remove dir and everything in it; frees dir. */
static inline void tmpdir_destroy (char *dir)
{
    if (nftw (dir, jtmp_rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
        diag ("cleanup of %s failed: %s", dir, strerror (errno));
    free (dir);
}

/* journal_open or bail out. */
static inline struct journal *xopen (const char *dir,
                                     const struct journal_opts *o)
{
    struct cairn_error err = {""};
    struct journal *j = journal_open (dir, o, &err);
    if (!j)
        BAIL_OUT ("journal_open %s: %s", dir, err.text);
    return j;
}

#endif /* CAIRN_TEST_JTMP_H */
