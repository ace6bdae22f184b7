/* log.h - cairnd's diagnostics on stderr (journald adds its own stamps
 * under systemd; a terminal gets ours). */
#ifndef CAIRN_LOG_H
#define CAIRN_LOG_H

enum { LOG_ERR = 3, LOG_WARNING = 4, LOG_INFO = 6, LOG_DEBUG = 7 };

void log_set_level (int level);
void log_set_prefix (const char *prefix);
void log_msg (int level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
