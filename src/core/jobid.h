/* jobid.h - job ids in decimal and in Flux's F58 form.
 *
 * A job id is an unsigned 64-bit integer. Flux shows it in F58: a prefix
 * "ƒ" (U+0192, two bytes in UTF-8) or, where UTF-8 is unwelcome, "f",
 * followed by the id in base 58 with the alphabet
 *   123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz
 * most significant digit first (0 is "ƒ1", 57 is "ƒz", 58 is "ƒ21").
 */
#ifndef CAIRN_JOBID_H
#define CAIRN_JOBID_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Ids from JOBID_USER_MIN up (2^62 + 2^61 + 2^60 = 8070450532247928832, F58
 * ƒKjYLZQiF6xw, on to 2^63 - 1, the largest a JSON integer carries) are the
 * users': a client that is neither root nor cairnd's uid (an ordinary user on
 * the public socket) may start jobs with those ids only, so that it can never
 * take an id that a resource manager (Flux's job ids, which start at 0 and
 * reach this range only after some 15 years of one instance) or root's
 * `cairn run` will use (SECURITY.md, "Job ids are shared with the resource
 * manager"). */
#define JOBID_USER_MIN UINT64_C (0x7000000000000000)
#define JOBID_USER_MAX UINT64_C (0x7fffffffffffffff)

/* A buffer this large holds any encoded id with its NUL. */
#define JOBID_STRLEN 32

/* Write id as F58 with the UTF-8 "ƒ" prefix into buf (len bytes).
 * Returns 0, or -1 with errno = EINVAL (buf NULL) or EOVERFLOW (too small;
 * buf then holds "" if len > 0).
 */
int jobid_encode_f58 (uint64_t id, char *buf, size_t len);

/* Same as jobid_encode_f58() with the ASCII prefix "f". */
int jobid_encode_f58_ascii (uint64_t id, char *buf, size_t len);

/* Parse a job id written in decimal ("1234", digits only) or in F58 with
 * either prefix ("ƒ21", "f21"). No blanks or signs are allowed anywhere.
 * Returns 0 with *id set, or -1 with errno = EINVAL and a message in err:
 * NULL or empty, a character outside the form (base 58 has no 0, O, I, l),
 * a prefix with no digits, or a value above 2^64-1.
 */
int jobid_parse (const char *s, uint64_t *id, struct cairn_error *err);

#endif /* CAIRN_JOBID_H */
