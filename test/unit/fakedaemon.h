/* fakedaemon.h - a real cairnd on the fake supervisor (fakeprocs.h), in
 * a state dir of its own, and a client on its socket: what t_daemon and
 * t_node start from. The test runs its loop (fake_turn) a turn at a time.
 *
 * Header-only: include it from one test program, instead of
 * fakeprocs.h.
 */
#ifndef CAIRN_TEST_FAKEDAEMON_H
#define CAIRN_TEST_FAKEDAEMON_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

#include "fakeprocs.h"

#include "client/client.h"
#include "core/config.h"
#include "exec/daemon.h" /* cairnd_loop, cairnd_journal */

struct fake_daemon {
    struct cairnd *d;
    struct client *cl;
    struct cairn_config cfg;
    char statedir[64];
};

/* Start cairnd with the config o (cairn.conf(5) keys; taken) in a new
 * state dir under /tmp, and connect to it. Bails out on any failure. */
static inline void fake_daemon_start (struct fake_daemon *fd, json_t *o)
{
    struct cairn_error err = {{0}};
    char sock[PATH_MAX];

    snprintf (fd->statedir, sizeof (fd->statedir), "/tmp/t_fakedaemon.XXXXXX");
    if (!mkdtemp (fd->statedir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    config_init (&fd->cfg);
    if (!o || config_parse (&fd->cfg, o, &err) < 0)
        BAIL_OUT ("config: %s", err.text);
    json_decref (o);
    if (!(fd->d = cairnd_create (&fd->cfg, fd->statedir, &err)))
        BAIL_OUT ("cairnd_create: %s", err.text);
    snprintf (sock, sizeof (sock), "%s/cairn.sock", fd->statedir);
    if (!(fd->cl = client_connect (sock, &err)))
        BAIL_OUT ("connect: %s", err.text);
}

static inline void fake_daemon_stop (struct fake_daemon *fd)
{
    char cmd[PATH_MAX + 16];

    client_close (fd->cl);
    cairnd_destroy (fd->d);
    config_free (&fd->cfg);
    snprintf (cmd, sizeof (cmd), "rm -rf %s", fd->statedir);
    (void)!system (cmd);
}

#endif /* CAIRN_TEST_FAKEDAEMON_H */
