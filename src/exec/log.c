/* log.c - see log.h */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "exec/log.h"

static int log_level = LOG_INFO;
static const char *log_prefix = "cairnd";

void log_set_level (int level)
{
    log_level = level;
}

void log_set_prefix (const char *prefix)
{
    log_prefix = prefix;
}

void log_msg (int level, const char *fmt, ...)
{
    static const char *tags[] = {[LOG_ERR] = "error",
                                 [LOG_WARNING] = "warning",
                                 [LOG_INFO] = "info",
                                 [LOG_DEBUG] = "debug"};
    int saved = errno;
    if (level > log_level)
        return;
    struct timespec ts;
    struct tm tm;
    char stamp[32];
    clock_gettime (CLOCK_REALTIME, &ts);
    localtime_r (&ts.tv_sec, &tm);
    strftime (stamp, sizeof (stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    va_list ap;
    va_start (ap, fmt);
    fprintf (stderr, "%s.%03ld %s %s: ", stamp, ts.tv_nsec / 1000000,
             log_prefix, tags[level] ? tags[level] : "log");
    vfprintf (stderr, fmt, ap);
    fputc ('\n', stderr);
    va_end (ap);
    errno = saved;
}
