/* log.h - cairnd's diagnostics on stderr (journald adds its own stamps
 * under systemd, and gets none of ours; a terminal or a file gets
 * ours). */
#ifndef CAIRN_LOG_H
#define CAIRN_LOG_H

enum { LOG_ERR = 3, LOG_WARNING = 4, LOG_INFO = 6, LOG_DEBUG = 7 };

void log_set_level (int level);
void log_set_prefix (const char *prefix);
/* The longest line log_msg writes, its newline included. */
#define LOG_LINE_MAX 4096

/* Write "STAMP PREFIX LEVEL: message\n" to stderr in one write(2), so that
 * a crash never leaves a torn line; a message that would make the line
 * longer than LOG_LINE_MAX is cut and ends in "...". Where stderr is
 * systemd's journal stream (JOURNAL_STREAM), which stamps and names each
 * line itself, the line is "<LEVEL>LEVEL-NAME: message\n" instead, the
 * syslog priority prefix journald reads. Messages above the level set are
 * dropped. errno is kept. */
void log_msg (int level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
