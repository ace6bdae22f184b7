# sysinst.bash - a multi-user Flux *system instance* for the Flux tests:
# the broker runs as the unprivileged instance owner `cairnflux`, guests
# (`cairnu1`, `cairnu2`) submit through its local socket, and job-exec
# starts their job shells through the setuid flux-imp, which checks the
# jobspec each guest signed with munge (flux-security). Needs root, a
# flux-core built --with-flux-security and flux-imp setuid root
# (scripts/install-flux), and munge; sysinst_setup skips the test
# otherwise.
#
#   source "$(dirname "$BATS_TEST_FILENAME")/sysinst.bash"
#   setup()    { sysinst_setup; sysinst_start ''; }
#   teardown() { sysinst_teardown; }
#   @test ... { as_user cairnu1 flux run id -u; }
#
#   sysinst_setup          users, temp dir $SYSINST, munged, IMP and sign
#                          configs (skips the test where Flux lacks security)
#   sysinst_start [TOML]   start the instance, TOML appended to its config
#                          (a file of its own: tables such as [exec] merge);
#                          with SYSINST_ROOT=1 a root-owned instance
#                          (broker as root) that names no [exec] imp
#   as_user USER CMD...    CMD as USER against the instance (clean env,
#                          HOME, cwd the user's home, FLUX_URI set)
#   sysinst_fx CMD...      a flux command as root, which has the owner role
#   sysinst_broker0_crash, sysinst_broker0_restart
#                          with SYSINST_RESTARTABLE=1 (two brokers): SIGKILL
#                          the rank-0 broker, start it again
#   sysinst_stop           stop the instance (bounded), its log on failure
#   sysinst_teardown       sysinst_stop, then undo what sysinst_setup did
#
# Flux facts this relies on (flux-core 0.88, flux-security 0.15):
# - flux-imp reads only its compiled-in ${sysconfdir}/flux/imp/conf.d/
#   *.toml and libflux-security ${sysconfdir}/flux/security/conf.d/*.toml
#   (here /opt/flux-core/etc/...); as the setuid IMP runs with euid 0,
#   those files and their directory must be owned by root and not
#   writable by others ("path paranoia"). make install ships
#   security/conf.d/sign.toml with the same [sign] as ours.
# - The broker's rundir must be owned by the instance owner (rwx); the
#   guests reach local://RUNDIR/local-0 (the socket is 0777), so every
#   directory above it must be searchable by them.
# - [access] allow-guest-user lets guests connect (role user),
#   allow-root-owner gives root the owner role; [exec] imp makes job-exec
#   run `flux-imp exec flux-shell` for guests' jobs, and the IMP wants the
#   caller in [exec] allowed-users and the shell in allowed-shells.

FLUX=${FLUX:-/opt/flux-core/bin/flux}
SYSINST_PREFIX=${SYSINST_PREFIX:-$(cd "$(dirname "$FLUX")/.." && pwd)}
SYSINST_IMP=$SYSINST_PREFIX/libexec/flux/flux-imp
SYSINST_SHELL=$SYSINST_PREFIX/libexec/flux/flux-shell
SYSINST_IMP_CONFDIR=$SYSINST_PREFIX/etc/flux/imp/conf.d
SYSINST_SEC_CONFDIR=$SYSINST_PREFIX/etc/flux/security/conf.d
SYSINST_OWNER=cairnflux
SYSINST_USERS=(cairnu1 cairnu2)
SYSINST_GROUP=cairngrp          # a supplementary group of cairnu1
# A munged of our own, shared by concurrent fixtures: its state, and one
# file per fixture using it (holders/); the last one out stops it.
SYSINST_MUNGE=/run/cairn-test-munge
MUNGE_SOCKET=/run/munge/munge.socket.2

_sysinst_say() { echo "sysinst: $*" >&2; }

# Why this machine cannot run a system instance, or nothing.
_sysinst_missing() {
    [ "$(id -u)" -eq 0 ] || { echo "not root"; return; }
    [ -x "$FLUX" ] || { echo "no $FLUX (scripts/install-flux)"; return; }
    env -u FLUX_URI "$FLUX" version 2>/dev/null | grep -q '^libflux-security:' ||
        { echo "$FLUX is built without flux-security (scripts/install-flux)"; return; }
    if [ ! -u "$SYSINST_IMP" ] || [ "$(stat -c %u "$SYSINST_IMP")" -ne 0 ]; then
        echo "$SYSINST_IMP is not setuid root (scripts/install-flux)"; return
    fi
    if ! command -v munged >/dev/null || ! command -v munge >/dev/null; then
        echo "munge is not installed (apt-get install munge)"; return
    fi
    command -v runuser >/dev/null || { echo "no runuser"; return; }
}

# Create user $1 (useradd ARGS... after it) unless it exists; tolerate a
# concurrent fixture creating it at the same time.
_sysinst_user() {
    local u=$1; shift
    getent passwd "$u" >/dev/null && return 0
    useradd "$@" "$u" 2>/dev/null || getent passwd "$u" >/dev/null ||
        { _sysinst_say "useradd $u failed"; return 1; }
}

_sysinst_users() {
    _sysinst_user "$SYSINST_OWNER" --system --user-group \
        --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin || return 1
    getent group "$SYSINST_GROUP" >/dev/null || groupadd "$SYSINST_GROUP" 2>/dev/null ||
        getent group "$SYSINST_GROUP" >/dev/null || return 1
    local u
    for u in "${SYSINST_USERS[@]}"; do
        _sysinst_user "$u" --user-group --create-home --shell /bin/bash || return 1
    done
    id -nG "${SYSINST_USERS[0]}" | tr ' ' '\n' | grep -qx "$SYSINST_GROUP" ||
        usermod -aG "$SYSINST_GROUP" "${SYSINST_USERS[0]}"
}

_sysinst_munge_works() {
    munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1
}

# Use the munged on the default socket, or start one (as the munge user,
# with a key of its own), and register this fixture as one of its users.
_sysinst_munged_start() {
    mkdir -p "$SYSINST_MUNGE/holders"
    (
        flock 9
        if ! _sysinst_munge_works; then
            local m=$SYSINST_MUNGE/d
            rm -rf "$m"
            mkdir -p "$m" && chown munge:munge "$m" && chmod 0700 "$m" || exit 1
            # munged wants its socket dir owned by itself (or root), not
            # writable by others; its key 0600, owned by itself
            mkdir -p "$(dirname "$MUNGE_SOCKET")"
            chown munge:munge "$(dirname "$MUNGE_SOCKET")"
            chmod 0755 "$(dirname "$MUNGE_SOCKET")"
            runuser -u munge -- mungekey --create --keyfile="$m/munge.key" || exit 1
            # munged daemonizes keeping the fds it inherits: bats' (bats
            # would wait for them) and the lock's (held for its lifetime)
            ( for fd in "/proc/$BASHPID/fd"/*; do
                  fd=${fd##*/}
                  [ "$fd" -gt 2 ] && eval "exec $fd>&-"
              done
              exec runuser -u munge -- munged --socket="$MUNGE_SOCKET" \
                  --key-file="$m/munge.key" --pid-file="$m/munged.pid" \
                  --log-file="$m/munged.log" --seed-file="$m/munged.seed"
            ) </dev/null >/dev/null 2>"$SYSINST/munged.err" || {
                cat "$SYSINST/munged.err" "$m/munged.log" >&2 2>/dev/null; exit 1; }
            local _
            for _ in $(seq 1 100); do
                _sysinst_munge_works && break
                sleep 0.05
            done
            _sysinst_munge_works || { cat "$m/munged.log" >&2; exit 1; }
            cp "$m/munged.pid" "$SYSINST_MUNGE/ours.pid"
        fi
        # only a munged we started is counted (and stopped)
        [ -e "$SYSINST_MUNGE/ours.pid" ] && touch "$SYSINST_MUNGE/holders/${SYSINST##*/}"
        exit 0
    ) 9>"$SYSINST_MUNGE/lock" || { _sysinst_say "cannot start munged"; return 1; }
}

# Unregister this fixture; the last user of a munged we started stops it.
# Holders whose temp dir is gone (a run killed before its teardown) are
# dropped.
_sysinst_munged_stop() {
    [ -d "$SYSINST_MUNGE/holders" ] || return 0
    (
        flock 9
        rm -f "$SYSINST_MUNGE/holders/${SYSINST##*/}"
        local h
        for h in "$SYSINST_MUNGE"/holders/*; do
            [ -e "$h" ] || continue
            [ -d "/tmp/${h##*/}" ] || rm -f "$h"
        done
        [ -e "$SYSINST_MUNGE/ours.pid" ] || exit 0
        [ -z "$(ls -A "$SYSINST_MUNGE/holders")" ] || exit 0
        local pid _
        pid=$(cat "$SYSINST_MUNGE/ours.pid")
        if [ -n "$pid" ] && [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = munged ]; then
            kill "$pid"
            for _ in $(seq 1 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.05
            done
        fi
        rm -rf "$SYSINST_MUNGE/ours.pid" "$SYSINST_MUNGE/d"
    ) 9>"$SYSINST_MUNGE/lock"
}

# Write $2 (stdin) as root-owned 0644 $1, the configs the IMP reads as root.
_sysinst_rootfile() {
    install -o root -g root -m 0644 /dev/stdin "$1"
}

# Drop the configs of fixtures whose temp dir is gone (killed runs).
_sysinst_prune_configs() {
    local f n
    for f in "$SYSINST_IMP_CONFDIR"/cairn-test-*.toml "$SYSINST_SEC_CONFDIR"/cairn-test-*.toml; do
        [ -e "$f" ] || continue
        n=${f##*/cairn-test-}
        n=${n%.toml}
        [ -d "/tmp/$n" ] || rm -f "$f"
    done
}

sysinst_setup() {
    local why
    why=$(_sysinst_missing)
    if [ -n "$why" ]; then
        skip "no Flux system instance here: $why"
    fi
    _sysinst_users || return 1
    # Short (sun_path), searchable by the guests, who connect to the
    # socket in it and whose job shells read its config.
    SYSINST=$(mktemp -d /tmp/cfi.XXXXXX)
    chmod 0755 "$SYSINST"
    mkdir -p "$SYSINST/conf"
    install -d -o "$SYSINST_OWNER" -g "$SYSINST_OWNER" -m 0755 \
        "$SYSINST/run" "$SYSINST/state"
    SYSINST_URI=local://$SYSINST/run/local-0
    SYSINST_CONF_NAME=cairn-test-${SYSINST##*/}.toml
    _sysinst_prune_configs
    _sysinst_munged_start || return 1
    mkdir -p "$SYSINST_IMP_CONFDIR" "$SYSINST_SEC_CONFDIR"
    _sysinst_rootfile "$SYSINST_IMP_CONFDIR/$SYSINST_CONF_NAME" <<TOML
# written by cairn's test/flux/sysinst.bash for $SYSINST; removed at teardown
[exec]
allowed-users = [ "$SYSINST_OWNER" ]
allowed-shells = [ "$SYSINST_SHELL" ]
TOML
    _sysinst_rootfile "$SYSINST_SEC_CONFDIR/$SYSINST_CONF_NAME" <<TOML
# written by cairn's test/flux/sysinst.bash for $SYSINST; removed at teardown
[sign]
max-ttl = 1209600
default-type = "munge"
allowed-types = [ "munge" ]
TOML
}

# The instance's config dir: guests allowed, job shells through the IMP,
# then the TOML given, in a file of its own (Flux merges the files of the
# dir recursively, so it may add keys to [exec] or [access]).
sysinst_conf() {
    cat >"$SYSINST/conf/sysinst.toml" <<TOML
[access]
allow-guest-user = true
allow-root-owner = true
TOML
    [ "${SYSINST_ROOT:-0}" = 1 ] ||
        printf '\n[exec]\nimp = "%s"\n' "$SYSINST_IMP" >>"$SYSINST/conf/sysinst.toml"
    printf '%s\n' "${1:-}" >"$SYSINST/conf/test.toml"
    [ "${SYSINST_RESTARTABLE:-0}" = 1 ] && _sysinst_bootstrap
    chmod 0644 "$SYSINST/conf/"*.toml
}

# SYSINST_RESTARTABLE=1: two brokers (fake hosts fake[0-1], one machine)
# bootstrapped from the config, with a persistent content store and a
# short KVS checkpoint period, as test/flux/lib.bash's sysflux does for a
# root instance: the rank-0 broker can be SIGKILLed and started again on
# its own (sysinst_broker0_crash, sysinst_broker0_restart).
_sysinst_bootstrap() {
    [ -e "$SYSINST/cert" ] || {
        "$FLUX" keygen --name testcert "$SYSINST/cert" >/dev/null &&
            chown "$SYSINST_OWNER" "$SYSINST/cert" && chmod 0600 "$SYSINST/cert"
    }
    # test/flux/lib.bash's, which the bats files that use this one load
    fakehosts_toml "$SYSINST" 1 >"$SYSINST/conf/bootstrap.toml"
}

sysinst_start() {
    [ -n "${SYSINST:-}" ] || { _sysinst_say "sysinst_setup first"; return 1; }
    sysinst_conf "${1:-}"
    rm -f "$SYSINST/stop" "$SYSINST/state/ready"
    local owner=$SYSINST_OWNER
    if [ "${SYSINST_ROOT:-0}" = 1 ]; then
        owner=root
        chown root "$SYSINST/run" "$SYSINST/state"
    fi
    local size=(--test-size=1)
    [ "${SYSINST_RESTARTABLE:-0}" = 1 ] &&
        size=(--test-size=2 --test-hosts='fake[0-1]' --test-exit-mode=leader
              --test-exit-timeout=100 -Sbroker.quorum=2 -Stbon.topo=custom)
    # The initial program says when rc1 is done (all modules loaded), then
    # waits for $SYSINST/stop. setsid: its own process group, for
    # sysinst_stop's last resort.
    # cwd: one the owner can read; fd 3 closed, or bats waits for it.
    ( cd "$SYSINST/state" &&
      exec setsid env -u FLUX_URI -u TMPDIR HOME="$SYSINST/state" \
        timeout "${SYSINST_TIMEOUT:-600}" \
        runuser -u "$owner" -- "$FLUX" start "${size[@]}" \
        --test-rundir="$SYSINST/run" -Sstatedir="$SYSINST/state" \
        -Slog-stderr-level=6 -c "$SYSINST/conf" \
        sh -c "touch $SYSINST/state/ready; while [ ! -e $SYSINST/stop ]; do sleep 0.1; done"
    ) >>"$SYSINST/flux.log" 2>&1 </dev/null 3>&- &
    SYSINST_PID=$!
    local _
    for _ in $(seq 1 600); do
        [ -e "$SYSINST/state/ready" ] && return 0
        kill -0 "$SYSINST_PID" 2>/dev/null || break
        sleep 0.05
    done
    _sysinst_say "the instance did not start; its log:"
    cat "$SYSINST/flux.log" >&2
    return 1
}

as_user() {
    local user=$1 home
    shift
    home=$(getent passwd "$user" | cut -d: -f6)
    [ -n "$home" ] || { _sysinst_say "no user $user"; return 1; }
    ( cd "$home" && runuser -u "$user" -- env -i \
        PATH="$(dirname "$FLUX"):/usr/local/bin:/usr/bin:/bin" \
        HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash LANG=C.UTF-8 \
        FLUX_URI="$SYSINST_URI" "$@" )
}

sysinst_fx() {
    FLUX_URI=$SYSINST_URI "$FLUX" "$@"
}

# flux-start's own service, as the owner: start.kill/run/wait of a rank.
_sysinst_startctl() {
    runuser -u "$SYSINST_OWNER" -- env FLUX_START_URI="local://$SYSINST/run/start" \
        timeout 30 "$FLUX" python -c '
import os, sys, flux
h = flux.Flux(os.environ["FLUX_START_URI"])
cmd, rank = sys.argv[1], int(sys.argv[2])
if cmd == "kill":
    h.rpc("start.kill", {"rank": rank, "signum": 9}).get()
elif cmd == "run":
    h.rpc("start.run", {"rank": rank}).get()
else:
    sys.exit(int(h.rpc("start.wait", {"rank": rank}).get()["exit_rc"]))
' "$@"
}

# SYSINST_RESTARTABLE=1 only: SIGKILL the rank-0 broker and wait for it.
sysinst_broker0_crash() {
    _sysinst_startctl kill 0 && { _sysinst_startctl wait 0 || true; }
}

# Start rank 0 again (its KVS checkpoint has the jobs), then rank 1, which
# exits when the new rank 0 disconnects it; wait for the initial program.
sysinst_broker0_restart() {
    rm -f "$SYSINST/state/ready"
    _sysinst_startctl run 0 || return 1
    _sysinst_startctl wait 1 || true
    _sysinst_startctl run 1 || return 1
    local _
    for _ in $(seq 1 600); do
        [ -e "$SYSINST/state/ready" ] && return 0
        sleep 0.05
    done
    _sysinst_say "rank 0 did not come back; the log:"
    tail -n 40 "$SYSINST/flux.log" >&2
    return 1
}

# PID $1 and its descendants.
_sysinst_tree() {
    ps -eo pid=,ppid= | awk -v root="$1" '
        { parent[$1] = $2 }
        END {
            for (p in parent) {
                for (q = p; q != "" && q != 0 && q != 1; q = parent[q])
                    if (q == root) { print p; break }
            }
        }'
}

sysinst_stop() {
    [ -n "${SYSINST_PID:-}" ] || return 0
    touch "$SYSINST/stop"
    local _ rc=0
    for _ in $(seq 1 "$((${SYSINST_STOP_TIMEOUT:-60} * 10))"); do
        kill -0 "$SYSINST_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$SYSINST_PID" 2>/dev/null; then
        _sysinst_say "the instance did not stop in ${SYSINST_STOP_TIMEOUT:-60} s: killed"
        # all its descendants: job shells and their tasks are in process
        # groups of their own, and outlive a kill of the brokers' group
        # shellcheck disable=SC2046
        kill -KILL $(_sysinst_tree "$SYSINST_PID") 2>/dev/null || true
        rc=124
    fi
    local wrc=0
    wait "$SYSINST_PID" 2>/dev/null || wrc=$?
    [ "$rc" -ne 0 ] || rc=$wrc
    SYSINST_PID=
    if [ "$rc" -ne 0 ]; then
        _sysinst_say "flux start: exit $rc; its log:"
        tail -n 40 "$SYSINST/flux.log" >&2
    fi
    return "$rc"
}

sysinst_teardown() {
    [ -n "${SYSINST:-}" ] || return 0
    local rc=0
    sysinst_stop || rc=$?
    rm -f "$SYSINST_IMP_CONFDIR/$SYSINST_CONF_NAME" "$SYSINST_SEC_CONFDIR/$SYSINST_CONF_NAME"
    _sysinst_munged_stop || rc=1
    rm -rf "$SYSINST"
    SYSINST=
    return "$rc"
}
