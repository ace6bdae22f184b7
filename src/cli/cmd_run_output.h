/* cmd_run_output.h - where `cairn run` and `cairn attach` put a job's
 * output: the `output` responses of a stream that asked for it
 * (cairn-protocol(7)), each {rank, stream, data, end}.
 *
 * stdout data goes to stdout (or -o FILE), stderr data to stderr (or
 * --error FILE), as it comes. With labels (-l, as `flux run -l`), every
 * line is prefixed with "RANK: ", a line cut between two responses being
 * held until its end. The file offsets received (`end`) are kept, so that
 * a reattach asks for exactly what is missing (output-offsets).
 */
#ifndef CAIRN_CLI_CMD_RUN_OUTPUT_H
#define CAIRN_CLI_CMD_RUN_OUTPUT_H

#include <stdbool.h>
#include <jansson.h>

#include "core/error.h"

struct runout;

/* outpath/errpath: files to write (created or truncated, 0644), or NULL
 * for stdout/stderr. Returns NULL with errno and err ("--output FILE:
 * Permission denied"). */
struct runout *runout_create (const char *outpath,
                              const char *errpath,
                              bool label,
                              struct cairn_error *err);

/* Flush what is held (a last line without its newline) and close files. */
void runout_destroy (struct runout *ro);

/* Write one `output` response's data. Returns 0, or -1 with errno
 * (EPROTO: malformed data; a write error). */
int runout_write (struct runout *ro, const json_t *data);

/* rank -> {"stdout": END, "stderr": END} received so far (borrowed). */
const json_t *runout_offsets (const struct runout *ro);

#endif /* CAIRN_CLI_CMD_RUN_OUTPUT_H */
