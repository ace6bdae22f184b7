/* signame.c - see signame.h
 *
 * The standard names are indexed by the <signal.h> macros rather than
 * written as a list in numeric order, so the table is right on every Linux
 * architecture (their numbers differ, e.g. SIGUSR1 on mips).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/signame.h"

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

static const char *const std_names[] = {
    [SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
    [SIGILL] = "SIGILL",       [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
    [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",   [SIGKILL] = "SIGKILL",
    [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
#ifdef SIGSTKFLT
    [SIGSTKFLT] = "SIGSTKFLT",
#endif
    [SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
    [SIGTSTP] = "SIGTSTP",     [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
    [SIGURG] = "SIGURG",       [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
    [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
    [SIGIO] = "SIGIO",
#ifdef SIGPWR
    [SIGPWR] = "SIGPWR",
#endif
    [SIGSYS] = "SIGSYS",
};

/* Linux has at most 32 real-time signals on the common architectures
 * (glibc: 34..64). A larger range would leave the top ones unnamed, hence
 * rejected, which is safe.
 */
static const char *const rt_names[] = {
    "SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",  "SIGRTMIN+4",
    "SIGRTMIN+5",  "SIGRTMIN+6",  "SIGRTMIN+7",  "SIGRTMIN+8",  "SIGRTMIN+9",
    "SIGRTMIN+10", "SIGRTMIN+11", "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14",
    "SIGRTMIN+15", "SIGRTMIN+16", "SIGRTMIN+17", "SIGRTMIN+18", "SIGRTMIN+19",
    "SIGRTMIN+20", "SIGRTMIN+21", "SIGRTMIN+22", "SIGRTMIN+23", "SIGRTMIN+24",
    "SIGRTMIN+25", "SIGRTMIN+26", "SIGRTMIN+27", "SIGRTMIN+28", "SIGRTMIN+29",
    "SIGRTMIN+30", "SIGRTMIN+31", "SIGRTMIN+32",
};

const char *signame_str (int signum)
{
    if (signum > 0 && (size_t)signum < ARRAY_SIZE (std_names))
        return std_names[signum];
    if (signum >= SIGRTMIN && signum <= SIGRTMAX &&
        (size_t)(signum - SIGRTMIN) < ARRAY_SIZE (rt_names))
        return rt_names[signum - SIGRTMIN];
    return NULL;
}

/* Parse an unsigned decimal with no sign, blanks or junk; -1 if not one. */
static long parse_digits (const char *s)
{
    long n = 0;

    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (n > (LONG_MAX - 9) / 10)
            return LONG_MAX; // out of range anyway; caller reports it
        n = n * 10 + (*s - '0');
    }
    return n;
}

static int check_number (long n, const char *s, struct cairn_error *err)
{
    if (n < 1 || n > SIGRTMAX)
        return errset (err, EINVAL, "signal '%s' is out of range 1..%d", s,
                       SIGRTMAX);
    if (!signame_str ((int)n))
        return errset (err, EINVAL, "signal %ld is reserved by the C library",
                       n);
    return 0;
}

/* "RTMIN", "RTMIN+n", "RTMAX", "RTMAX-n" (prefix already stripped). */
static int parse_rt (const char *s, int *signum)
{
    long base, off = 0;
    char sign;

    if (!strncasecmp (s, "RTMIN", 5)) {
        base = SIGRTMIN;
        sign = '+';
    } else if (!strncasecmp (s, "RTMAX", 5)) {
        base = SIGRTMAX;
        sign = '-';
    } else
        return -1;
    s += 5;
    if (*s != '\0') {
        if (*s != sign || (off = parse_digits (s + 1)) < 0)
            return -1;
        if (off > SIGRTMAX - SIGRTMIN)
            return -1;
    }
    *signum = (int)(sign == '+' ? base + off : base - off);
    return 0;
}

int signame_parse (const char *s, int *signum, struct cairn_error *err)
{
    const char *name;
    long n;
    int rt;

    if (!s || *s == '\0')
        return errset (err, EINVAL, "empty signal name");
    if ((n = parse_digits (s)) >= 0) {
        if (check_number (n, s, err) < 0)
            return -1;
        *signum = (int)n;
        return 0;
    }
    name = strncasecmp (s, "SIG", 3) == 0 ? s + 3 : s;
    for (size_t i = 1; i < ARRAY_SIZE (std_names); i++) {
        if (std_names[i] && !strcasecmp (name, std_names[i] + 3)) {
            *signum = (int)i;
            return 0;
        }
    }
    if (parse_rt (name, &rt) == 0 && signame_str (rt)) {
        *signum = rt;
        return 0;
    }
    return errset (err, EINVAL, "unknown signal '%.64s'", s);
}

int signame_parse_json (const json_t *o, int *signum, struct cairn_error *err)
{
    if (json_is_string (o)) {
        const char *s = json_string_value (o);
        if (strlen (s) != json_string_length (o))
            return errset (err, EINVAL, "signal name contains NUL");
        return signame_parse (s, signum, err);
    }
    if (json_is_integer (o)) {
        json_int_t v = json_integer_value (o);
        if (v < 1 || v > SIGRTMAX)
            return errset (err, EINVAL, "signal %lld is out of range 1..%d",
                           (long long)v, SIGRTMAX);
        if (check_number ((long)v, "", err) < 0)
            return -1;
        *signum = (int)v;
        return 0;
    }
    return errset (err, EINVAL, "a signal must be a name or a number");
}
