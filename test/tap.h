/* tap.h - a small TAP producer for cairn's unit tests.
 *
 * Usage:
 *   plan (NO_PLAN);             // or plan (12)
 *   ok (x == 3, "x is three");
 *   is_int (got, 3, "count");   // prints both values on mismatch
 *   is_str (got, "1-3", "encode");
 *   is_errno (rc, EINVAL, "decode rejects 1-");  // rc must be -1, errno set
 *   done_testing ();            // returns the exit code for main
 */
#ifndef CAIRN_TAP_H
#define CAIRN_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_PLAN (-1)

static int tap_planned = NO_PLAN;
static int tap_run;
static int tap_failed;

static inline void plan (int n)
{
    tap_planned = n;
    if (n >= 0)
        printf ("1..%d\n", n);
    fflush (stdout);
}

static inline int tap_result (int pass, const char *file, int line,
                              const char *fmt, va_list ap)
{
    tap_run++;
    if (!pass)
        tap_failed++;
    printf ("%s %d - ", pass ? "ok" : "not ok", tap_run);
    vprintf (fmt, ap);
    printf ("\n");
    if (!pass)
        printf ("#   failed at %s:%d\n", file, line);
    fflush (stdout);
    return pass;
}

static inline int tap_ok (int pass, const char *file, int line,
                          const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int rc = tap_result (pass, file, line, fmt, ap);
    va_end (ap);
    return rc;
}

#define ok(cond, ...) tap_ok (!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                 \
    do {                                                                       \
        long long tap_g_ = (long long)(got), tap_w_ = (long long)(want);       \
        if (!tap_ok (tap_g_ == tap_w_, __FILE__, __LINE__, __VA_ARGS__))       \
            printf ("#   expected %lld, got %lld\n", tap_w_, tap_g_);          \
    } while (0)

#define is_str(got, want, ...)                                                 \
    do {                                                                       \
        const char *tap_g_ = (got), *tap_w_ = (want);                          \
        int tap_p_ = (tap_g_ && tap_w_) ? strcmp (tap_g_, tap_w_) == 0         \
                                        : tap_g_ == tap_w_;                    \
        if (!tap_ok (tap_p_, __FILE__, __LINE__, __VA_ARGS__))                 \
            printf ("#   expected \"%s\", got \"%s\"\n",                       \
                    tap_w_ ? tap_w_ : "(null)", tap_g_ ? tap_g_ : "(null)");   \
    } while (0)

/* rc must be -1 (or NULL-ish 0 for pointers: use is_errno_ptr) and errno
 * must equal want. errno is sampled before anything else runs. */
#define is_errno(rc, want, ...)                                                \
    do {                                                                       \
        long long tap_r_ = (long long)(rc);                                    \
        int tap_e_ = errno;                                                    \
        if (!tap_ok (tap_r_ == -1 && tap_e_ == (want), __FILE__, __LINE__,     \
                     __VA_ARGS__))                                             \
            printf ("#   expected -1 errno %d (%s), got %lld errno %d (%s)\n", \
                    (want), strerror (want), tap_r_, tap_e_,                   \
                    strerror (tap_e_));                                        \
    } while (0)

#define is_errno_ptr(p, want, ...)                                             \
    do {                                                                       \
        const void *tap_p_ = (p);                                              \
        int tap_e_ = errno;                                                    \
        if (!tap_ok (tap_p_ == NULL && tap_e_ == (want), __FILE__, __LINE__,   \
                     __VA_ARGS__))                                             \
            printf ("#   expected NULL errno %d (%s), got %p errno %d (%s)\n", \
                    (want), strerror (want), tap_p_, tap_e_,                   \
                    strerror (tap_e_));                                        \
    } while (0)

/* Message assertion: haystack must contain needle. */
#define like(got, needle, ...)                                                 \
    do {                                                                       \
        const char *tap_g_ = (got), *tap_n_ = (needle);                        \
        if (!tap_ok (tap_g_ && strstr (tap_g_, tap_n_) != NULL, __FILE__,      \
                     __LINE__, __VA_ARGS__))                                   \
            printf ("#   expected to contain \"%s\", got \"%s\"\n", tap_n_,    \
                    tap_g_ ? tap_g_ : "(null)");                               \
    } while (0)

#define diag(...)                                                              \
    do {                                                                       \
        printf ("# ");                                                         \
        printf (__VA_ARGS__);                                                  \
        printf ("\n");                                                         \
    } while (0)

#define BAIL_OUT(...)                                                          \
    do {                                                                       \
        printf ("Bail out! ");                                                 \
        printf (__VA_ARGS__);                                                  \
        printf ("\n");                                                         \
        exit (255);                                                            \
    } while (0)

static inline int done_testing (void)
{
    if (tap_planned == NO_PLAN)
        printf ("1..%d\n", tap_run);
    else if (tap_planned != tap_run)
        printf ("# planned %d tests but ran %d\n", tap_planned, tap_run);
    fflush (stdout);
    if (tap_failed || (tap_planned != NO_PLAN && tap_planned != tap_run))
        return 1;
    return 0;
}

#endif /* CAIRN_TAP_H */
