# nodes.bash - separate "nodes" on one host for the Flux tests: each node
# has its own network, PID, mount and UTS namespaces (its own hostname,
# private /run and /tmp), and the nodes reach one another over TCP through
# a bridge, so a Flux instance of one broker per node is bootstrapped from
# a config file as a real cluster is ("system instance"), and a node can
# be killed whole or cut off the network. Needs root, unshare and nsenter
# (util-linux) and ip (iproute2); nodes_setup skips the test otherwise.
#
#   load lib    # test/flux/lib.bash (FLUX_WAITUP_PY), then:
#   source "$(dirname "$BATS_TEST_FILENAME")/nodes.bash"
#   setup()    { nodes_setup 4; nodes_flux_conf ''; nodes_flux_start; }
#   teardown() { nodes_teardown; }
#   @test ... { nodes_fx run -N4 hostname; }
#
#   nodes_setup N          N nodes node0..node{N-1} and their network
#                          (skips the test where that cannot be done)
#   node_exec I CMD...     CMD inside node I (all its namespaces), in the
#                          caller's environment less FLUX_URI, cwd /
#   node_ip I              node I's address (10.201.0.<I+1>)
#   nodes_flux_conf [TOML] the instance's config: bootstrap over TCP, an R
#                          for the N nodes, tbon settings from NODES_TBON_*,
#                          then TOML (a file of its own)
#   nodes_flux_start       a broker on every node, wait until all are up
#   node_broker_start I    start node I's broker (alone; e.g. after
#                          node_revive), without waiting
#   nodes_fx CMD...        a flux command against rank 0, inside node0
#   nodes_waitup [S] [N]   wait (at most S s) until N brokers are up
#   node_kill I            SIGKILL every process of node I at once: its
#                          namespaces, addresses and private dirs go too
#   node_poweroff I        node_partition I, then node_kill I: no FIN or
#                          RST reaches the peers (a power cut)
#   node0_restart [CMD...] SIGKILL rank 0's broker, (CMD,) start it again,
#                          and the others after it (they exit when it is
#                          back)
#   node_revive I          node I again, fresh (new namespaces, same
#                          address; its state dir is kept); no broker
#   node_partition I       cut node I off the network (its link down)
#   node_heal I            put it back
#   nodes_flux_stop        stop the instance (bounded), its logs on error
#   nodes_teardown         stop the instance, kill every node, remove all
#
# Layout. $NODES is a temp dir under /var/tmp, not /tmp: each node mounts
# a tmpfs of its own over /tmp and /run, so files the nodes must share
# (config, certificate, R, logs, state) live in $NODES, and a path under
# the host's /tmp (BATS_TEST_TMPDIR) is NOT visible inside a node. The rest
# of the file system (/opt/flux-core, the build dir, /work) is the host's.
#
#   $NODES/conf/*.toml       the instance's config (--config-path)
#   $NODES/cert, $NODES/R    CURVE certificate (flux keygen), resources
#   $NODES/nodeI/state       broker I's statedir (kept across node_revive)
#   $NODES/nodeI/broker.log  broker I's stderr (log-stderr-level=6)
#   $NODES/hosts             the nodes' /etc/hosts (bind-mounted)
#   $NODES/stop              makes rank 0's initial program exit
#   /run/flux (in node I)    broker I's rundir: local:///run/flux/local-I
#
# How a node is made. `unshare --pid --fork --kill-child --mount-proc
# --mount --uts --net` runs a small bash "init" as PID 1 of a new PID
# namespace: it sets the hostname, mounts tmpfs on /run and /tmp (mount
# propagation is private, so nothing leaks to the host), bind-mounts
# $NODES/hosts on /etc/hosts, brings lo up, then waits (reaping orphans)
# for NODES_LIFETIME seconds at most (default 1800: a run killed before
# its teardown leaves nothing behind for long). NODE_PID[I] is the init's
# host PID; node_exec is `nsenter -t NODE_PID[I] -a` (every namespace,
# root and cwd the init's: /). No named netns (ip netns add) is used:
# the namespaces live exactly as long as their processes. The switch is
# one more such set of namespaces (hostname nodes-sw, NODES_SW_PID), whose
# network namespace holds a bridge br0; each node is a veth pair, "nI" on
# the bridge in the switch, "eth0" in the node with 10.201.0.<I+1>/24
# (NODES_NET; killing a node removes its pair). The
# host's network namespace is not touched (no interface, address, route
# or firewall rule in it), so the nodes only reach one another, and
# concurrent runs (each its own switch) may use the same addresses.
#
# Faults. node_kill sends SIGKILL to the node's init: the kernel kills
# every process of its PID namespace at once, their sockets are closed by
# the kernel (peers see FIN/RST at once, as after a crash of every
# process, not a power cut), then the network namespace and its veth go.
# node_partition sets the switch side of the node's veth down: the node's
# eth0 loses carrier and every packet to or from it is dropped silently
# (no RST, no ICMP), as when a cable is pulled; TCP connections stay open
# until a retransmission timeout. Flux's parent broker notices a lost
# child only when a send to it fails (EHOSTUNREACH on its ROUTER socket)
# once zeromq has dropped the connection, i.e. tbon.tcp_user_timeout
# (default 20s) after the first unacknowledged data (the heartbeat event
# goes down every 2 s), so set NODES_TBON_TCP_USER_TIMEOUT short (e.g.
# 2s) for partition tests. torpid_max (default 30s) only marks a silent
# child torpid (no new work), it does not fail its jobs. Once healed, a
# cut-off broker is told by rank 0 that it was lost ("sent disconnect
# control message") and exits; node_broker_start starts it again, and it
# rejoins. node_poweroff (cut, then kill) leaves the peers to find out by
# timeout alone, as a power cut does.
#
# Flux facts this relies on (flux-core 0.88):
# - A broker started with `flux broker --config-path=DIR` (no PMI) reads
#   [bootstrap]: its rank is the index of its hostname (exactly as
#   `hostname` prints it) in `hosts`; a broker with children (only rank 0
#   in the default topology "custom": flat, every rank a child of rank 0)
#   binds its `bind` URI, the others connect to their parent's `connect`
#   URI. A curve_cert is required for size > 1 (the same file on every
#   node), to be readable by the instance owner only. Endpoints are
#   tcp://ADDR:PORT (IPv4 unless enable_ipv6). No PMI, no flux-start.
# - Rank 0 runs the initial program; the instance shuts down when it
#   exits (rc3 on rank 0; the followers are told to stop and exit).
#   broker.quorum defaults to the full size: rank 0 runs the initial
#   program once every broker has joined.
# - rundir (created if missing, removed at exit) holds the local socket,
#   local-RANK; statedir is where rank 0's content store lives
#   (content.sqlite, kept across restarts).
# - Jobs of the instance owner (root here) are not signed, so munge is not
#   needed (its socket, under /run, is hidden in the nodes anyway).
# - [resource] path + noverify: the R of fake cores on hosts node0..; the
#   scheduler uses it as is.

FLUX=${FLUX:-/opt/flux-core/bin/flux}
NODES_NET=${NODES_NET:-10.201.0}        # a /24; node I is .<I+1>
NODES_PORT=${NODES_PORT:-8050}
NODES_CORES=${NODES_CORES:-0-1}         # cores of each node in R
NODES_LIFETIME=${NODES_LIFETIME:-1800}  # seconds; a node's init exits then
NODES_BASE=${NODES_BASE:-/var/tmp}      # not /tmp: private in the nodes
NODES_URI=local:///run/flux/local-0     # rank 0's socket, inside node0

_nodes_say() { echo "nodes: $*" >&2; }

# The init of a node (bash -c; $1 hostname, $2 $NODES, $3 lifetime, $4
# the directory under /tmp that holds the checkout and the build, or "":
# it is bound back over the node's own /tmp, so that a clone under /tmp
# runs its nodes' cairnd as one anywhere else does).
# PID 1 of its PID namespace: SIGTERM only acts through the trap; SIGKILL
# from the host kills it and so every process of the namespace.
# shellcheck disable=SC2016
_NODES_INIT='
hostname "$1" || exit 1
if [ -n "$4" ]; then
    mkdir -p "$2/keep.$1" && mount --bind "$4" "$2/keep.$1" || exit 1
fi
mount -t tmpfs -o mode=0755 "tmpfs-$1" /run || exit 1
mount -t tmpfs -o mode=1777 "tmpfs-$1" /tmp || exit 1
if [ -n "$4" ]; then
    mkdir -p "$4" && mount --bind "$2/keep.$1" "$4" &&
        umount "$2/keep.$1" || exit 1
fi
[ -e "$2/hosts" ] && { mount --bind "$2/hosts" /etc/hosts || exit 1; }
ip link set lo up || exit 1
cd / || exit 1
trap "exit 0" TERM
touch "$2/ready.$1"
sleep "$3" &
wait $!
'

# Why this machine cannot make nodes, or nothing.
_nodes_missing() {
    [ "$(id -u)" -eq 0 ] || { echo "not root"; return; }
    local c
    for c in unshare nsenter ip; do
        command -v "$c" >/dev/null || { echo "no $c (util-linux, iproute2)"; return; }
    done
    [ -x "$FLUX" ] || { echo "no $FLUX (scripts/install-flux)"; return; }
    # namespaces, a bridge and a veth pair, in a scratch namespace
    unshare --pid --fork --mount-proc --mount --uts --net sh -c '
        ip link set lo up && ip link add b0 type bridge &&
        ip link add v0 type veth peer name v1 && ip link set v0 master b0' \
        >/dev/null 2>&1 ||
        { echo "cannot make namespaces, a bridge and veths (unshare --net ...)"; return; }
}

# Kill the nodes of runs that ended without their teardown (their owner
# process is gone; a dir without an owner: an hour old) and remove their
# dirs.
_nodes_prune() {
    local d p
    for d in "$NODES_BASE"/cnd.*; do
        [ -d "$d" ] || continue
        if [ -e "$d/owner" ]; then
            p=$(cat "$d/owner" 2>/dev/null)
            [ -n "$p" ] && kill -0 "$p" 2>/dev/null && continue
        else
            [ -n "$(find "$d" -maxdepth 0 -mmin +60)" ] || continue
        fi
        _nodes_kill_listed "$d"
        rm -rf "$d"
    done
}

# SIGKILL the inits listed in $1/pids (each only if its command line
# still names $1: a PID may have been reused).
_nodes_kill_listed() {
    local p
    [ -e "$1/pids" ] || return 0
    for p in $(cat "$1/pids"); do
        { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qF " $1 " &&
            kill -KILL "$p" 2>/dev/null || true
    done
    return 0
}

# The top directory under /tmp of the build ($B) and of the checkout, or
# nothing when neither is under /tmp (the nodes mount a /tmp of their own).
_nodes_tmp_keep() {
    local p
    for p in "$B" "$BATS_TEST_DIRNAME"; do
        p=$(realpath -m "$p")
        case $p in
        /tmp/?*) p=${p#/tmp/}; echo "/tmp/${p%%/*}"; return ;;
        esac
    done
}

# Start a namespace init named $1; sets _NODES_U (unshare's PID, in the
# host's PID namespace and our child) and _NODES_P (the init's host PID).
_nodes_spawn() {
    local name=$1 _
    rm -f "$NODES/ready.$name"
    unshare --pid --fork --kill-child --mount-proc --mount --uts --net \
        bash -c "$_NODES_INIT" "nodes-init" "$name" "$NODES" "$NODES_LIFETIME" \
        "$(_nodes_tmp_keep)" \
        </dev/null >>"$NODES/init.log" 2>&1 3>&- &
    _NODES_U=$!
    _NODES_P=
    for _ in $(seq 1 200); do
        if [ -e "$NODES/ready.$name" ]; then
            _NODES_P=$(ps -o pid= --ppid "$_NODES_U" | tr -d ' ')
            [ -n "$_NODES_P" ] && break
        fi
        kill -0 "$_NODES_U" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$_NODES_P" ]; then
        _nodes_say "cannot start $name:"
        cat "$NODES/init.log" >&2
        kill -KILL "$_NODES_U" 2>/dev/null || true
        wait "$_NODES_U" 2>/dev/null
        return 1
    fi
    echo "$_NODES_P" >>"$NODES/pids"
}

# A command in the switch's network namespace.
_nodes_sw() {
    nsenter -t "$NODES_SW_PID" -n "$@"
}

node_ip() {
    echo "$NODES_NET.$(($1 + 1))"
}

# Make node $1: its namespaces, then its veth to the switch.
_node_create() {
    local i=$1
    _nodes_spawn "node$i" || return 1
    NODE_PID[i]=$_NODES_P
    NODE_UPID[i]=$_NODES_U
    mkdir -p "$NODES/node$i/state"
    _nodes_sw ip link add "n$i" type veth peer name eth0 netns "${NODE_PID[i]}" &&
        _nodes_sw ip link set "n$i" master br0 up &&
        nsenter -t "${NODE_PID[i]}" -n ip addr add "$(node_ip "$i")/24" dev eth0 &&
        nsenter -t "${NODE_PID[i]}" -n ip link set eth0 up ||
        { _nodes_say "cannot connect node$i"; return 1; }
}

nodes_setup() {
    local n=${1:?nodes_setup: how many nodes} why i
    why=$(_nodes_missing)
    [ -z "$why" ] || skip "no separate nodes here: $why"
    _nodes_prune
    NODES=$(mktemp -d "$NODES_BASE/cnd.XXXXXX") || return 1
    chmod 0755 "$NODES"
    NODES_N=$n
    NODE_PID=() NODE_UPID=() NODE_BROKER=()
    NODES_SW_PID='' NODES_SW_UPID=''
    echo "$BASHPID" >"$NODES/owner"
    mkdir -p "$NODES/conf"
    {
        printf '127.0.0.1\tlocalhost\n'
        for ((i = 0; i < n; i++)); do
            printf '%s\tnode%d\n' "$(node_ip "$i")" "$i"
        done
    } >"$NODES/hosts"
    _nodes_spawn nodes-sw || return 1
    NODES_SW_PID=$_NODES_P NODES_SW_UPID=$_NODES_U
    _nodes_sw ip link add br0 type bridge && _nodes_sw ip link set br0 up ||
        { _nodes_say "cannot make the bridge"; return 1; }
    for ((i = 0; i < n; i++)); do
        _node_create "$i" || return 1
    done
}

node_exec() {
    local i=${1:?node_exec: a node number}
    shift
    [ -n "${NODE_PID[i]:-}" ] || { _nodes_say "node$i is not running"; return 1; }
    nsenter -t "${NODE_PID[i]}" -a env -u FLUX_URI "$@"
}

nodes_fx() {
    node_exec 0 FLUX_URI=$NODES_URI "$FLUX" "$@"
}

# The config: [bootstrap] over TCP (every host binds and connects on its
# own address; only rank 0's are used in the flat topology), [resource],
# tbon keys from NODES_TBON_TCP_USER_TIMEOUT, NODES_TBON_TORPID_MIN,
# NODES_TBON_TORPID_MAX, NODES_TBON_CONNECT_TIMEOUT (FSD strings, e.g.
# "2s"; unset: Flux's default), the KVS checkpointed every
# NODES_KVS_CHECKPOINT (e.g. "100ms", so that a SIGKILLed rank 0 restarts
# with its jobs: node0_restart), then $1 in a file of its own (Flux merges
# the files of the dir, so it may add to [tbon] or load modules, e.g.
# [modules.job-exec]).
nodes_flux_conf() {
    [ -n "${NODES:-}" ] || { _nodes_say "nodes_setup first"; return 1; }
    local i last=$((NODES_N - 1))
    [ -e "$NODES/cert" ] || {
        "$FLUX" keygen --name nodes "$NODES/cert" >/dev/null && chmod 0600 "$NODES/cert"
    } || return 1
    "$FLUX" R encode --hosts="node[0-$last]" -r"0-$last" -c"$NODES_CORES" \
        >"$NODES/R" || return 1
    {
        printf '[bootstrap]\ncurve_cert = "%s"\nhosts = [\n' "$NODES/cert"
        for ((i = 0; i < NODES_N; i++)); do
            printf '    { host = "node%d", bind = "tcp://%s:%s", connect = "tcp://%s:%s" },\n' \
                "$i" "$(node_ip "$i")" "$NODES_PORT" "$(node_ip "$i")" "$NODES_PORT"
        done
        printf ']\n\n[resource]\npath = "%s"\nnoverify = true\n' "$NODES/R"
    } >"$NODES/conf/bootstrap.toml"
    {
        [ -z "${NODES_TBON_TCP_USER_TIMEOUT:-}" ] ||
            printf 'tbon.tcp_user_timeout = "%s"\n' "$NODES_TBON_TCP_USER_TIMEOUT"
        [ -z "${NODES_TBON_TORPID_MIN:-}" ] ||
            printf 'tbon.torpid_min = "%s"\n' "$NODES_TBON_TORPID_MIN"
        [ -z "${NODES_TBON_TORPID_MAX:-}" ] ||
            printf 'tbon.torpid_max = "%s"\n' "$NODES_TBON_TORPID_MAX"
        [ -z "${NODES_TBON_CONNECT_TIMEOUT:-}" ] ||
            printf 'tbon.connect_timeout = "%s"\n' "$NODES_TBON_CONNECT_TIMEOUT"
        [ -z "${NODES_KVS_CHECKPOINT:-}" ] ||
            printf '\n[kvs]\ncheckpoint-period = "%s"\n' "$NODES_KVS_CHECKPOINT"
    } >"$NODES/conf/tbon.toml"
    printf '%s\n' "${1:-}" >"$NODES/conf/test.toml"
}

# Start node $1's broker in the background (rank 0: with the initial
# program, which waits for $NODES/stop). Its stderr goes to
# $NODES/node$1/broker.log. NODE_BROKER[I]: nsenter's PID (our child; it
# exits with the broker's status).
node_broker_start() {
    local i=${1:?node_broker_start: a node number}
    local prog=()
    [ "$i" -ne 0 ] || prog=(sh -c "while [ ! -e $NODES/stop ]; do sleep 0.1; done")
    [ -n "${NODE_PID[i]:-}" ] || { _nodes_say "node$i is not running"; return 1; }
    echo "--- $(date +%T.%N) broker start" >>"$NODES/node$i/broker.log"
    # FLUX_DISABLE_JOB_CLEANUP: no `flux cancel`/`flux queue idle` in rc3,
    # so a stuck job cannot hang the stop
    # (exec: $! is nsenter, whose child is the broker)
    ( exec nsenter -t "${NODE_PID[i]}" -a env -u FLUX_URI TMPDIR=/tmp \
        FLUX_DISABLE_JOB_CLEANUP=t "$FLUX" broker --config-path="$NODES/conf" \
        -Srundir=/run/flux -Sstatedir="$NODES/node$i/state" \
        -Slog-stderr-level=6 -Slog-stderr-mode=local "${prog[@]}"
    ) </dev/null >>"$NODES/node$i/broker.log" 2>&1 3>&- &
    NODE_BROKER[i]=$!
}

# Wait (at most $1 s, default 30) until $2 brokers (default all) are up as
# the resource module sees it (rank 0 may not be listening yet).
nodes_waitup() {
    local t=${1:-30} n=${2:-$NODES_N}
    # FLUX_WAITUP_PY: test/flux/lib.bash's, which the bats files load
    node_exec 0 FLUX_URI=$NODES_URI timeout "$t" "$FLUX" python -c \
        "$FLUX_WAITUP_PY" "$n"
}

nodes_flux_start() {
    [ -e "$NODES/conf/bootstrap.toml" ] || nodes_flux_conf '' || return 1
    rm -f "$NODES/stop"
    local i
    for ((i = 0; i < NODES_N; i++)); do
        node_broker_start "$i" || return 1
    done
    if ! nodes_waitup "${NODES_START_TIMEOUT:-60}"; then
        _nodes_say "the instance did not come up"
        _nodes_logs
        return 1
    fi
}

# The tail of every broker's log.
_nodes_logs() {
    local f
    for f in "$NODES"/node*/broker.log; do
        [ -e "$f" ] || continue
        echo "==> $f <==" >&2
        tail -n "${NODES_LOG_LINES:-25}" "$f" >&2
    done
}

# Wait up to $2 s for our child $1 to exit; its status, 124 if it did not.
_nodes_wait() {
    local pid=$1 t=$2 _
    for _ in $(seq 1 "$((t * 10))"); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && return 124
    wait "$pid" 2>/dev/null
}

# SIGKILL node $1's broker (nsenter's child) and reap nsenter. (nsenter
# stops itself when its child stops, and a stopped nsenter does not reap:
# SIGCONT it.)
_nodes_broker_kill() {
    local i=$1 p
    [ -n "${NODE_BROKER[i]:-}" ] || return 0
    p=$(ps -o pid= --ppid "${NODE_BROKER[i]}" | tr -d ' ')
    [ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true
    kill -CONT "${NODE_BROKER[i]}" 2>/dev/null || true
    _nodes_wait "${NODE_BROKER[i]}" 5 || true
    NODE_BROKER[i]=
}

# Stop the instance: the initial program exits, rank 0 shuts the others
# down. Bounded: NODES_STOP_TIMEOUT s (default 60) for rank 0, then 10 s
# for all the others (one cut off, or whose rank 0 is gone, would never
# stop); a broker still running then is SIGKILLed. Returns rank 0's
# status (lost or partitioned nodes are not an error), 124 if it had to
# be killed; prints the brokers' logs then.
nodes_flux_stop() {
    [ -n "${NODES:-}" ] || return 0
    touch "$NODES/stop"
    local i rc=0 t=${NODES_STOP_TIMEOUT:-60} grace=0 left
    if [ -n "${NODE_BROKER[0]:-}" ]; then
        _nodes_wait "${NODE_BROKER[0]}" "$t" || rc=$?
        if [ "$rc" -eq 124 ]; then
            _nodes_say "rank 0 did not stop in $t s: killed"
            _nodes_broker_kill 0
        else
            grace=10
        fi
        NODE_BROKER[0]=
    fi
    # the others, once rank 0 has told them to stop (no rank 0: at once)
    local deadline=$((SECONDS + grace))
    for ((i = 1; i < ${NODES_N:-0}; i++)); do
        [ -n "${NODE_BROKER[i]:-}" ] || continue
        left=$((deadline - SECONDS))
        [ "$left" -gt 0 ] || left=0
        if _nodes_wait "${NODE_BROKER[i]}" "$left"; [ $? -eq 124 ]; then
            [ "$grace" -eq 0 ] || _nodes_say "the broker of node$i did not stop: killed"
            _nodes_broker_kill "$i"
        fi
        NODE_BROKER[i]=
    done
    if [ "$rc" -ne 0 ]; then
        _nodes_say "rank 0's broker: exit $rc"
        _nodes_logs
    fi
    return "$rc"
}

# SIGKILL rank 0's broker, run CMD... if given (e.g. a daemon's restart
# in node0), and start the broker again on its state dir; the other
# brokers exit when the new rank 0 disconnects them (a restarted parent
# restarts its children in Flux's TBON), and are started again. Waits
# (at most 60 s) until all are up. With NODES_KVS_CHECKPOINT set, rank 0
# comes back with its jobs.
node0_restart() {
    local i
    _nodes_broker_kill 0
    [ $# -eq 0 ] || "$@" || return 1
    node_broker_start 0 || return 1
    for ((i = 1; i < NODES_N; i++)); do
        [ -n "${NODE_BROKER[i]:-}" ] || continue
        if _nodes_wait "${NODE_BROKER[i]}" 30; [ $? -eq 124 ]; then
            _nodes_say "the broker of node$i stayed"
            return 1
        fi
        node_broker_start "$i" || return 1
    done
    nodes_waitup 60 || { _nodes_logs; return 1; }
}

node_kill() {
    local i=${1:?node_kill: a node number}
    [ -n "${NODE_PID[i]:-}" ] || return 0
    kill -KILL "${NODE_PID[i]}" 2>/dev/null || true
    # nsenter too: the PID namespace is gone only once every process of it
    # is reaped, and a stopped nsenter (its broker was SIGSTOPped) would
    # not reap the broker
    [ -z "${NODE_BROKER[i]:-}" ] || kill -KILL "${NODE_BROKER[i]}" 2>/dev/null || true
    # (their statuses: 137)
    _nodes_wait "${NODE_UPID[i]}" 10 || true
    [ -z "${NODE_BROKER[i]:-}" ] || _nodes_wait "${NODE_BROKER[i]}" 10 || true
    NODE_PID[i]='' NODE_UPID[i]='' NODE_BROKER[i]=''
    return 0
}

# A power cut: node $1 off the network, then killed, so that no FIN or
# RST reaches its peers; they notice by timeout only.
node_poweroff() {
    local i=${1:?node_poweroff: a node number}
    node_partition "$i" && node_kill "$i"
}

node_revive() {
    local i=${1:?node_revive: a node number}
    node_kill "$i"
    _node_create "$i"
}

node_partition() {
    _nodes_sw ip link set "n${1:?node_partition: a node number}" down
}

node_heal() {
    _nodes_sw ip link set "n${1:?node_heal: a node number}" up
}

nodes_teardown() {
    [ -n "${NODES:-}" ] || return 0
    local rc=0 i
    # a partitioned node cannot hear rank 0's goodbye, and rank 0 waits for
    # a stopped broker: heal, and SIGCONT every broker (and nsenter), first
    local p
    for ((i = 0; i < ${NODES_N:-0}; i++)); do
        [ -z "${NODE_PID[i]:-}" ] || node_heal "$i" 2>/dev/null || true
        [ -n "${NODE_BROKER[i]:-}" ] || continue
        for p in $(ps -o pid= --ppid "${NODE_BROKER[i]}") "${NODE_BROKER[i]}"; do
            kill -CONT "$p" 2>/dev/null || true
        done
    done
    nodes_flux_stop || rc=$?
    for ((i = 0; i < ${NODES_N:-0}; i++)); do
        node_kill "$i"
    done
    if [ -n "${NODES_SW_PID:-}" ]; then
        kill -KILL "$NODES_SW_PID" 2>/dev/null || true
        _nodes_wait "$NODES_SW_UPID" 10 || true
    fi
    # whatever a failed setup left
    _nodes_kill_listed "$NODES"
    rm -rf "$NODES"
    NODES='' NODES_SW_PID='' NODES_SW_UPID=''
    NODE_PID=() NODE_UPID=() NODE_BROKER=()
    return "$rc"
}
