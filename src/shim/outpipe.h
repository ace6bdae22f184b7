/* outpipe.h - a command's output pipe, drained into its output file
 * (issue 51; cmd.c says why a command writes into a pipe).
 *
 * The supervisor drains its live commands' pipes (serve.c), the keeper a
 * dead supervisor's (keep.c): both keep at most the cap + 1 bytes of the
 * file, as a lone shim's cut does, the extra byte telling cairnd that
 * there was more, and drop the rest. libc only, like the rest of
 * cairn-shim.
 */
#ifndef CAIRN_SHIM_OUTPIPE_H
#define CAIRN_SHIM_OUTPIPE_H

enum outpipe_state {
    OUTPIPE_EMPTY = 0, /* drained: nothing more now (EAGAIN) */
    OUTPIPE_END = 1,   /* every writer gone, or the pipe failed: close it */
    OUTPIPE_MORE = 2,  /* a few pipefuls read; more may be there */
};

/* Read what the non-blocking pipe fd holds, a few pipefuls at most (one
 * chatty command must not keep its drainer from the others), and append
 * it to the file name under dirfd (O_NOFOLLOW; opened for the call and
 * closed: the drainer holds no descriptor of the file), keeping the file
 * at most cap + 1 bytes (cap 0: no cap) and dropping the rest. A file
 * that cannot be opened drops what was read. */
enum outpipe_state
outpipe_drain (int fd, int dirfd, const char *name, unsigned long long cap);

#endif /* CAIRN_SHIM_OUTPIPE_H */
