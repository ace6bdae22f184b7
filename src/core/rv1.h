/* rv1.h - resource set R, version 1 (RFC 20).
 *
 *   {"version": 1,
 *    "execution": {"R_lite": [{"rank": "0-3",
 *                              "children": {"core": "0-7", "gpu": "0-1"}}],
 *                  "nodelist": ["node[0-3]"],
 *                  "starttime": 0, "expiration": 0},
 *    "scheduling": ...}
 *
 * A job's ranks are the union of the R_lite entries' "rank" sets. Shell
 * rank i runs on the i-th rank in ascending order, and that rank's host is
 * the i-th host of "nodelist" (its hostlists concatenated in order).
 * Unknown keys anywhere are kept. An R holds at most RV1_MAX_RANKS ranks.
 */
#ifndef CAIRN_RV1_H
#define CAIRN_RV1_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "core/error.h"
#include "core/idset.h"

#define RV1_MAX_RANKS (1u << 20)

struct rv1;

/* Validate R and index it. Checked: version is 1; execution.R_lite is a
 * non-empty array of objects with "rank" (a non-empty idset) and
 * "children" (an object with "core", an idset, and optionally "gpu", an
 * idset; other children are kept unchecked); no rank appears twice; at most
 * RV1_MAX_RANKS ranks; execution.nodelist is an array of RFC 29 hostlist
 * strings holding exactly one host per rank; execution.starttime and
 * execution.expiration, when present, are numbers >= 0 (0 = unset).
 * The result holds its own reference to R, which must not be modified
 * while the result lives.
 * Returns a new rv1 (free with rv1_destroy), or NULL with errno = EINVAL and
 * a message naming the field in err ("R: execution.R_lite[1].rank: ..."),
 * or ENOMEM.
 */
struct rv1 *rv1_decode (const json_t *R, struct cairn_error *err);

/* Free r. NULL is fine. errno is preserved. */
void rv1_destroy (struct rv1 *r);

/* The R object r was decoded from (borrowed). */
const json_t *rv1_json (const struct rv1 *r);

/* All ranks of r (borrowed), and how many there are. */
const struct idset *rv1_ranks (const struct rv1 *r);
size_t rv1_nranks (const struct rv1 *r);

/* The cores of rank (borrowed), or NULL with errno = ENOENT when rank is
 * not in r.
 */
const struct idset *rv1_cores (const struct rv1 *r, uint32_t rank);

/* The gpus of rank (borrowed; an empty set when the entry has none), or
 * NULL with errno = ENOENT when rank is not in r.
 */
const struct idset *rv1_gpus (const struct rv1 *r, uint32_t rank);

/* The host of rank (borrowed), or NULL with errno = ENOENT when rank is
 * not in r.
 */
const char *rv1_hostname (const struct rv1 *r, uint32_t rank);

/* The position of rank among r's ranks in ascending order (its shell
 * rank), or -1 with errno = ENOENT when rank is not in r.
 */
int rv1_rank_index (const struct rv1 *r, uint32_t rank);

/* execution.starttime and execution.expiration; 0 when absent (unset). */
double rv1_starttime (const struct rv1 *r);
double rv1_expiration (const struct rv1 *r);

/* Build the R fragment that holds only `ranks`, e.g. for a release:
 * R_lite entries are restricted to those ranks (entries left empty are
 * dropped; children and other keys of an entry are kept), nodelist becomes
 * one hostlist of those ranks' hosts, "scheduling" is dropped, and every
 * other key is kept.
 * Returns a new reference (caller must json_decref), or NULL with errno =
 * EINVAL (ranks NULL, empty, or not a subset of r's ranks; message in err)
 * or ENOMEM.
 */
json_t *rv1_fragment (const struct rv1 *r,
                      const struct idset *ranks,
                      struct cairn_error *err);

/* Build a simple R for `cairn run`: ranks 0..nranks-1, each with cores
 * 0..cores_per_rank-1, all on `hostname` (nodelist lists it nranks times,
 * which RFC 20 allows), starttime 0 and the given expiration (0 = none).
 * Returns a new reference (caller must json_decref), or NULL with errno =
 * EINVAL (nranks or cores_per_rank 0, nranks > RV1_MAX_RANKS, hostname
 * NULL, empty or not a single hostname, expiration negative or not finite)
 * or ENOMEM.
 */
json_t *rv1_create (uint32_t nranks,
                    uint32_t cores_per_rank,
                    const char *hostname,
                    double expiration);

#endif /* CAIRN_RV1_H */
