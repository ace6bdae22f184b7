/* crashpoint.c - see crashpoint.h
 *
 * Counting is per process lifetime: a restarted cairnd starts from zero, so
 * NAME:K always means "the K-th pass since this process started".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/testenv.h"
#include "journal/crashpoint.h"

bool crashpoint_active;

/* CAIRN_CRASH_AT's points: the first of them passed K times kills us. */
#define CRASH_MAX 4
static struct {
    char name[128];
    long k, seen;
} crash[CRASH_MAX];
static int ncrash;
static int count_fd = -1;

static char fault_name[128];
static long fault_k; /* 0 means every call */
static int fault_errno = EIO;
static long fault_seen;

/* Parse "NAME:K[:ERRNO]". K may be '*' (returned as 0). */
static int
parse_spec (const char *spec, char *name, size_t namesz, long *k, int *errnum)
{
    const char *colon = strchr (spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= namesz)
        return -1;
    memcpy (name, spec, colon - spec);
    name[colon - spec] = '\0';
    const char *ks = colon + 1;
    char *end;
    if (ks[0] == '*') {
        *k = 0;
        end = (char *)ks + 1;
    } else {
        *k = strtol (ks, &end, 10);
        if (end == ks || *k < 1)
            return -1;
    }
    if (*end == ':' && errnum) {
        long e = strtol (end + 1, &end, 10);
        if (e <= 0)
            return -1;
        *errnum = (int)e;
    }
    return *end == '\0' ? 0 : -1;
}

void crashpoint_init (void)
{
    const char *s;

    ncrash = 0;
    fault_name[0] = '\0';
    if ((s = getenv (TESTENV_CRASH_AT)) && *s) {
        char list[600], *save = NULL;
        snprintf (list, sizeof (list), "%s", s);
        for (char *it = strtok_r (list, ",", &save); it;
             it = strtok_r (NULL, ",", &save)) {
            if (ncrash == CRASH_MAX ||
                parse_spec (it, crash[ncrash].name, sizeof (crash[0].name),
                            &crash[ncrash].k, NULL) < 0 ||
                crash[ncrash].k == 0) {
                fprintf (stderr,
                         "cairn: ignoring malformed CAIRN_CRASH_AT=%s\n", s);
                ncrash = 0;
                break;
            }
            crash[ncrash++].seen = 0;
        }
    }
    if ((s = getenv (TESTENV_FAULT)) && *s) {
        if (parse_spec (s, fault_name, sizeof (fault_name), &fault_k,
                        &fault_errno) < 0) {
            fprintf (stderr, "cairn: ignoring malformed CAIRN_FAULT=%s\n", s);
            fault_name[0] = '\0';
        }
    }
    if (count_fd < 0 && (s = getenv (TESTENV_CRASH_COUNT)) && *s) {
        count_fd = open (s, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (count_fd < 0)
            fprintf (stderr, "cairn: CAIRN_CRASH_COUNT=%s: %s\n", s,
                     strerror (errno));
    }
    crashpoint_active = ncrash > 0 || fault_name[0] || count_fd >= 0;
}

bool crashpoint_due (const char *name)
{
    int saved = errno;
    bool due;
    if (!crashpoint_active)
        return false;
    if (count_fd >= 0) {
        char line[160];
        int n = snprintf (line, sizeof (line), "%s\n", name);
        if (n > 0 && (size_t)n < sizeof (line))
            (void)!write (count_fd, line, n);
    }
    due = false;
    for (int i = 0; i < ncrash; i++)
        if (strcmp (name, crash[i].name) == 0 &&
            __atomic_add_fetch (&crash[i].seen, 1, __ATOMIC_RELAXED) ==
                crash[i].k)
            due = true;
    errno = saved;
    return due;
}

void crashpoint_pass (const char *name)
{
    if (crashpoint_due (name)) {
        kill (getpid (), SIGKILL);
        pause ();
    }
}

int fault_inject (const char *name)
{
    if (!crashpoint_active)
        return 0;
    crashpoint_pass (name);
    return fault_only (name);
}

int fault_only (const char *name)
{
    if (!crashpoint_active)
        return 0;
    if (fault_name[0] && strcmp (name, fault_name) == 0) {
        long seen = __atomic_add_fetch (&fault_seen, 1, __ATOMIC_RELAXED);
        if (fault_k == 0 || seen == fault_k)
            return fault_errno;
    }
    return 0;
}
