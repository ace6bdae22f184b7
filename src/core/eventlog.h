/* eventlog.h - RFC 18 eventlog entries.
 *
 * An entry is a JSON object {"timestamp": T, "name": N, "context": C}:
 * T a number of epoch seconds > 0, N a non-empty string, C an optional
 * object. On disk and on the wire an entry is one line of compact JSON.
 * Entries with any other top-level key are rejected.
 */
#ifndef CAIRN_EVENTLOG_H
#define CAIRN_EVENTLOG_H

#include <stddef.h>
#include <jansson.h>

#include "core/error.h"

/* Build an entry. fmt is a json_pack() format that must produce an object
 * (the context), or NULL for an entry without context.
 * Returns a new reference (caller must json_decref), or NULL with errno =
 * EINVAL (timestamp not finite or <= 0, name NULL or empty, fmt fails or
 * does not give an object) or ENOMEM.
 */
json_t *
eventlog_entry_pack (double timestamp, const char *name, const char *fmt, ...);

/* Build an entry from a context object, stealing the reference to
 * context_new (which may be NULL) even when it fails.
 * Returns a new reference, or NULL with errno = EINVAL (as above, or
 * context_new not an object) or ENOMEM.
 */
json_t *
eventlog_entry_create (double timestamp, const char *name, json_t *context_new);

/* Encode a valid entry as one line of compact JSON with the keys in the
 * order timestamp, name, context and no trailing newline. The timestamp
 * is written with microsecond precision. Returns a string the caller must
 * free(), or NULL with errno = EINVAL (not a valid entry) or ENOMEM.
 */
char *eventlog_entry_encode (const json_t *entry);

/* Decode one line of len bytes (no NUL needed) into an entry. The line must
 * hold exactly one JSON object and may end with one "\n"; any other newline,
 * duplicate keys, unknown top-level keys and invalid fields are refused.
 * Returns a new reference, or NULL with errno = EINVAL and a message in
 * err, or ENOMEM.
 */
json_t *
eventlog_entry_decode (const char *line, size_t len, struct cairn_error *err);

/* Check entry and return its parts; any out-parameter may be NULL.
 * *name and *context are borrowed from entry; *context is NULL when the
 * entry has none. Returns 0, or -1 with errno = EINVAL when entry is not a
 * valid entry.
 */
int eventlog_entry_parse (const json_t *entry,
                          double *timestamp,
                          const char **name,
                          json_t **context);

/* The parts of an entry already checked: one built by
 * eventlog_entry_create(), decoded, or parsed once, and not changed since
 * at its top level. Nothing is checked again (cairnd reads the events it
 * built and folded several times per commit: issue 35); a part
 * missing or of another type reads as 0 or NULL, never as garbage. Any
 * out-parameter may be NULL; *name and *context are borrowed. */
void eventlog_entry_fields (const json_t *entry,
                            double *timestamp,
                            const char **name,
                            json_t **context);

#endif /* CAIRN_EVENTLOG_H */
