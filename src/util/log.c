/* log.c - see log.h */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

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

/* Is stderr the journal's stream? systemd names it in JOURNAL_STREAM
 * ("DEVICE:INODE"); a child whose stderr went elsewhere inherits the
 * variable, hence the comparison. */
static bool to_journal (void)
{
    const char *js = getenv ("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    return js && sscanf (js, "%llu:%llu", &dev, &ino) == 2 &&
           fstat (STDERR_FILENO, &st) == 0 &&
           (unsigned long long)st.st_dev == dev &&
           (unsigned long long)st.st_ino == ino;
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
    char stamp[32], line[LOG_LINE_MAX];
    int n;
    if (to_journal ()) /* it stamps and names each line itself */
        n = snprintf (line, sizeof (line), "<%d>%s: ", level,
                      tags[level] ? tags[level] : "log");
    else {
        clock_gettime (CLOCK_REALTIME, &ts);
        localtime_r (&ts.tv_sec, &tm);
        strftime (stamp, sizeof (stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        n = snprintf (line, sizeof (line), "%s.%03ld %s %s: ", stamp,
                      ts.tv_nsec / 1000000, log_prefix,
                      tags[level] ? tags[level] : "log");
    }
    va_list ap;
    va_start (ap, fmt);
    if (n >= 0 && (size_t)n < sizeof (line) - 1) {
        int m = vsnprintf (line + n, sizeof (line) - (size_t)n, fmt, ap);
        n = m < 0 ? n : n + m;
    }
    va_end (ap);
    /* One line, one write: a SIGKILL leaves a whole line or none (the
     * journal and the tests read the log). A longer line is cut, and
     * says so. */
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof (line) - 1) {
        n = (int)sizeof (line) - 1;
        memcpy (line + n - 3, "...", 3);
    }
    line[n++] = '\n';
    while (write (STDERR_FILENO, line, (size_t)n) < 0 && errno == EINTR)
        ;
    errno = saved;
}
