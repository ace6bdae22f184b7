/* notify.h - tell a service manager how cairnd is doing (sd_notify(3)).
 *
 * systemd's notification protocol without libsystemd: when NOTIFY_SOCKET
 * names a unix datagram socket (a path, or "@name" for the abstract
 * namespace), one datagram of "KEY=VALUE" lines goes to it. The unit file
 * uses Type=notify, so that a broker ordered After=cairnd.service starts
 * only once cairnd listens (with Type=simple it could start first and wait
 * for cairnd's socket). Without NOTIFY_SOCKET nothing is sent.
 */
#ifndef CAIRN_NOTIFY_H
#define CAIRN_NOTIFY_H

/* Send state (e.g. "READY=1", "STOPPING=1") with MAINPID. Returns 0 (also
 * when there is no NOTIFY_SOCKET), or -1 with errno: EINVAL (a socket name
 * too long or malformed), or send's. */
int notify_send (const char *state);

#endif /* CAIRN_NOTIFY_H */
