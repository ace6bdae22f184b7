/* error.c - see error.h */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

static void verr (struct cairn_error *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf (err->text, sizeof (err->text), fmt, ap);
}

int errprintf (struct cairn_error *err, const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start (ap, fmt);
    verr (err, fmt, ap);
    va_end (ap);
    errno = saved;
    return -1;
}

int errset (struct cairn_error *err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    verr (err, fmt, ap);
    va_end (ap);
    errno = errnum;
    return -1;
}

int errprefix (struct cairn_error *err, const char *fmt, ...)
{
    int saved = errno;
    if (err) {
        char old[sizeof (err->text)];
        char pre[sizeof (err->text)];
        va_list ap;
        memcpy (old, err->text, sizeof (old));
        va_start (ap, fmt);
        vsnprintf (pre, sizeof (pre), fmt, ap);
        va_end (ap);
        size_t n = strnlen (pre, sizeof (err->text) - 1);
        memcpy (err->text, pre, n);
        if (n + 2 < sizeof (err->text)) {
            err->text[n++] = ':';
            err->text[n++] = ' ';
        }
        size_t m = strnlen (old, sizeof (err->text) - 1 - n);
        memcpy (err->text + n, old, m);
        err->text[n + m] = '\0';
    }
    errno = saved;
    return -1;
}
