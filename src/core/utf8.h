/* utf8.h - a process's output as a JSON string.
 *
 * Output is bytes; JSON strings are UTF-8. Valid UTF-8 passes through,
 * each byte that is not part of a valid sequence becomes U+FFFD, so what
 * can be read still reads. Used for the journal's `log` events and for
 * live output (cairn-protocol(7)), where a read may end inside a
 * character.
 */
#ifndef CAIRN_UTF8_H
#define CAIRN_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/* buf[0..len) as a JSON string. A sequence cut short at the end is left
 * out (for the next read) unless final, when it becomes U+FFFD. *used (if
 * non-NULL) gets the bytes consumed; *clean (if non-NULL) whether the
 * string holds exactly those bytes (nothing replaced). NULL on ENOMEM. */
json_t *utf8_string (
    const char *buf, size_t len, bool final, size_t *used, bool *clean);

#endif /* CAIRN_UTF8_H */
