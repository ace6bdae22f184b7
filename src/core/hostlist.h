/* hostlist.h - ordered lists of host names in RFC 29 form, e.g. R's nodelist.
 *
 * Text form: comma separated entries, each a plain host name ("login1") or
 * "prefix[ranges]suffix" where ranges is a comma separated list of numbers
 * and "lo-hi" runs (lo <= hi), e.g. "node[0-3,7],login1" is node0 node1
 * node2 node3 node7 login1. A number written with leading zeros fixes the
 * width of its run: "n[08-10]" is n08 n09 n10. Order is kept as written;
 * duplicates are kept. "" is the empty list.
 *
 * Host names are 1..HOSTLIST_HOST_MAX characters of printable ASCII other
 * than space, ',', '[' and ']'. Only one bracket group per entry is
 * supported ("rack[1-2]node[1-4]" is rejected).
 */
#ifndef CAIRN_HOSTLIST_H
#define CAIRN_HOSTLIST_H

#include <stddef.h>

#include "core/error.h"

/* Limits that keep a short hostile string from exhausting memory:
 * hosts in one decoded list, their total size (with NULs), and characters
 * in one host name. */
#define HOSTLIST_MAX_HOSTS 1000000
#define HOSTLIST_MAX_BYTES (64 * 1024 * 1024)
#define HOSTLIST_HOST_MAX 255

struct hostlist;

/* Create an empty list, or return NULL with errno ENOMEM.
 * The caller frees it with hostlist_destroy(). */
struct hostlist *hostlist_create (void);

/* Free hl. NULL is fine. errno is preserved. */
void hostlist_destroy (struct hostlist *hl);

/* Parse the RFC 29 text s into a new list (caller destroys it). Returns NULL
 * with errno EINVAL and a reason in err, e.g.
 * `hostlist "node[3-1]": range "3-1" is descending`, for malformed input
 * (bad characters, empty entries, unbalanced brackets, several bracket
 * groups in one entry, descending ranges, a host name that is too long), for
 * NULL s, and when the list would exceed HOSTLIST_MAX_HOSTS ("too many
 * hosts") or HOSTLIST_MAX_BYTES ("too large"); ENOMEM if out of memory. */
struct hostlist *hostlist_decode (const char *s, struct cairn_error *err);

/* Like hostlist_decode(), but refuse a list of more than max_hosts hosts
 * (values above HOSTLIST_MAX_HOSTS are taken as HOSTLIST_MAX_HOSTS) with
 * errno E2BIG and "too many hosts (limit N)" in err. The limit is checked
 * before each run is expanded, so a short string that names many hosts
 * ("n[0-999999]") is refused without building them: a caller that knows how
 * many hosts it can accept (R's nodelist: one per rank) pays only for
 * those. Other errors as hostlist_decode(). */
struct hostlist *
hostlist_decode_max (const char *s, size_t max_hosts, struct cairn_error *err);

/* Format hl as RFC 29 text, keeping its order: neighbouring hosts that
 * differ only in their last number join one bracket group, and consecutive
 * numbers of the same width join one run:
 * node0,node1,node2,node5,login1 -> "node[0-2,5],login1". "" when empty.
 * hostlist_decode() of the result gives back hl (though a list built with
 * hostlist_append() may exceed its limits). Returns a malloc'd string the
 * caller frees, or NULL with errno EINVAL (hl is NULL) or ENOMEM. */
char *hostlist_encode (const struct hostlist *hl);

/* Number of hosts in hl (0 if hl is NULL). */
size_t hostlist_count (const struct hostlist *hl);

/* The n-th host (0-based), or NULL if n >= count. The string belongs to hl
 * and stays valid until hl is destroyed. */
const char *hostlist_nth (const struct hostlist *hl, size_t n);

/* Append a copy of host to hl. Returns 0, or -1 with errno EINVAL (hl or
 * host NULL, or host not a valid host name, see above) or ENOMEM. */
int hostlist_append (struct hostlist *hl, const char *host);

#endif /* CAIRN_HOSTLIST_H */
