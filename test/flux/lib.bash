# lib.bash - shared by the Flux tests: a cairnd in a temporary state dir and
# a real Flux instance (`flux start --test-size=4`) whose job-exec is
# cairn-exec.so, relaying to that cairnd.
#
#   load lib
#   setup()    { cairnd_start '{}'; }
#   teardown() { cairnd_stop; }
#   @test ... { in_flux 'flux run -N4 hostname'; }

B=${CAIRN_BUILD_DIR:?CAIRN_BUILD_DIR must name the build directory}
FLUX=${FLUX:-/opt/flux-core/bin/flux}
# The cairnd helpers of the e2e tests (cairnd_start, cairn, script, ...).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.bash"

# The config dir of the instance: cairn-exec.so as job-exec, plus the TOML
# given as $1 (e.g. a [kvs] checkpoint-period).
flux_conf() {
    FLUX_CONF_DIR=$BATS_TEST_TMPDIR/flux-conf
    mkdir -p "$FLUX_CONF_DIR"
    cat >"$FLUX_CONF_DIR/cairn.toml" <<TOML
[modules.job-exec]
module = "$B/cairn-exec.so"
args = ["statedir=$STATEDIR"]
${1:-}
TOML
}

# Run a shell script inside a fresh 4-broker instance; its output and
# status are the instance's (flux start exits with the script's status).
# The instance is bounded in time so that a hang fails the test.
in_flux() {
    [ -n "${FLUX_CONF_DIR:-}" ] || flux_conf
    timeout "${FLUX_TIMEOUT:-120}" "$FLUX" start --test-size=4 \
        --config-path="$FLUX_CONF_DIR" bash -c "$1"
}

# Names of a Flux job's events, comma separated (inside an instance).
FLUX_EVENTS='flux job eventlog $1 | cut -d" " -f2 | paste -sd, -'

# ---- A restartable instance (restart.bats) ----
#
# `flux start --test-size=4` bootstrapped from a config file (fake hosts
# fake[0-3], ipc:// TBON), as flux-core's "system" test personality does,
# with a persistent content store (statedir) and a short KVS checkpoint
# period. Unlike a PMI-bootstrapped test instance, the rank-0 broker can be
# SIGKILLed and started again on its own, through flux-start's `start.*`
# service (flux-core's t/scripts/startctl.py): ranks 1-3 stay up, exit
# when the new rank 0 disconnects them, and are started again. The initial
# program only waits for $SYSFLUX/stop; the test drives the instance from
# outside through rank 0's socket (FLUX_URI), as an operator would.
#
#   sysflux_conf 'TOML'    config: bootstrap, [kvs] checkpoint-period, TOML
#   sysflux_start          start the 4 brokers, wait until all are up
#                          (at most SYSFLUX_TIMEOUT s in all, 120;
#                          flux-start's exit timer, which adds up rank 0's
#                          downtime across restarts: SYSFLUX_EXIT_TIMEOUT,
#                          100)
#   fx CMD...              a flux command against rank 0
#   broker0_crash          SIGKILL the rank-0 broker, wait for it
#   broker0_restart        start rank 0 again, then ranks 1-3, wait all up
#   sysflux_stop           stop the instance (bounded), print its log on error

# The instance's directory: short, as ipc:// and local:// socket paths must
# fit in sun_path.
sysflux_dir() {
    [ -n "${SYSFLUX:-}" ] || SYSFLUX=$(mktemp -d /tmp/cfx.XXXXXX)
    mkdir -p "$SYSFLUX/run" "$SYSFLUX/state" "$SYSFLUX/conf"
}

sysflux_conf() {
    sysflux_dir
    [ -e "$SYSFLUX/cert" ] || "$FLUX" keygen --name testcert "$SYSFLUX/cert" >/dev/null
    { fakehosts_toml "$SYSFLUX" 3; printf '\n%s\n' "${1:-}"; } \
        >"$SYSFLUX/conf/instance.toml"
}

# The config of brokers fake0..fakeN on this host, bootstrapped from it
# (flux-core's "system" test personality), in directory DIR ($1, which
# holds the cert, R, and run/ for the ipc:// sockets), N = $2: the TBON
# over ipc://, R written to DIR/R, a persistent KVS checkpointed every
# $SYSFLUX_CHECKPOINT (100ms). Prints the TOML. Used by sysinst.bash too.
fakehosts_toml() {
    local dir=$1 n=$2
    "$FLUX" R encode --hosts="fake[0-$n]" -r"0-$n" -c0-1 >"$dir/R"
    cat <<TOML
[bootstrap]
curve_cert = "$dir/cert"
default_bind = "ipc://$dir/run/tbon-%h"
default_connect = "ipc://$dir/run/tbon-%h"
hosts = [ { host = "fake[0-$n]" } ]

[resource]
path = "$dir/R"
noverify = true

[kvs]
checkpoint-period = "${SYSFLUX_CHECKPOINT:-100ms}"
TOML
}

# The cairn-exec.so lines for sysflux_conf.
sysflux_cairn_toml() {
    printf '[modules.job-exec]\nmodule = "%s"\nargs = ["statedir=%s"]\n' \
        "$B/cairn-exec.so" "$STATEDIR"
}

fx() {
    FLUX_URI=local://$SYSFLUX/run/local-0 "$FLUX" "$@"
}

# flux-start's own service (start.kill/run/wait by rank).
startctl() {
    FLUX_START_URI=local://$SYSFLUX/run/start timeout 30 "$FLUX" python -c '
import os, sys, flux
h = flux.Flux(os.environ["FLUX_START_URI"])
cmd, rank = sys.argv[1], int(sys.argv[2])
if cmd == "kill":
    h.rpc("start.kill", {"rank": rank, "signum": int(sys.argv[3])}).get()
elif cmd == "run":
    h.rpc("start.run", {"rank": rank}).get()
else:
    sys.exit(int(h.rpc("start.wait", {"rank": rank}).get()["exit_rc"]))
' "$@"
}

# Wait (at most $1 s) until $2 brokers are up as the resource module sees it
# (rank 0 may not be listening yet, or not have loaded resource yet).
sysflux_waitup() {
    FLUX_URI=local://$SYSFLUX/run/local-0 timeout "${1:-20}" "$FLUX" python -c \
        "$FLUX_WAITUP_PY" "${2:-4}"
}

# Python run by `flux python -c`: wait until argv[1] brokers are up as the
# resource module sees it, the broker at FLUX_URI perhaps not listening
# yet. Used by nodes.bash too.
FLUX_WAITUP_PY='
import flux, sys, time
while True:
    try:
        flux.Flux().rpc("resource.monitor-waitup", {"up": int(sys.argv[1])}).get()
        break
    except OSError:
        time.sleep(0.1)
'

sysflux_start() {
    rm -f "$SYSFLUX/stop"
    # FLUX_DISABLE_JOB_CLEANUP: no `flux cancel` and `flux queue idle` at
    # shutdown (rc1's cleanup stack), so a stuck job cannot hang the stop
    CAIRN_TEST_TAG=$BATS_TEST_TMPDIR FLUX_DISABLE_JOB_CLEANUP=t \
        timeout "${SYSFLUX_TIMEOUT:-120}" "$FLUX" start --test-size=4 \
        --test-hosts='fake[0-3]' --test-exit-mode=leader \
        --test-exit-timeout="${SYSFLUX_EXIT_TIMEOUT:-100}" \
        --test-rundir="$SYSFLUX/run" \
        -Sbroker.quorum=4 -Stbon.topo=custom -Sstatedir="$SYSFLUX/state" \
        -Slog-stderr-level=6 -c "$SYSFLUX/conf" \
        sh -c "while [ ! -e $SYSFLUX/stop ]; do sleep 0.1; done" \
        >>"$BATS_TEST_TMPDIR/flux.log" 2>&1 &
    SYSFLUX_PID=$!
    local i
    for i in $(seq 1 200); do
        [ -S "$SYSFLUX/run/local-0" ] && break
        sleep 0.05
    done
    sysflux_waitup 30 4 || { tail -30 "$BATS_TEST_TMPDIR/flux.log" >&2; return 1; }
}

broker0_crash() {
    startctl kill 0 9
    startctl wait 0 || true    # 137
}

broker0_restart() {
    local r
    startctl run 0
    # ranks 1-3 exit when the new rank 0 disconnects them ("sent
    # disconnect control message"); start them again
    for r in 1 2 3; do
        startctl wait "$r" || true
        startctl run "$r"
    done
    sysflux_waitup 30 4 || { tail -30 "$BATS_TEST_TMPDIR/flux.log" >&2; return 1; }
}

sysflux_stop() {
    [ -n "${SYSFLUX_PID:-}" ] || return 0
    touch "$SYSFLUX/stop"
    local rc=0
    wait "$SYSFLUX_PID" || rc=$?
    SYSFLUX_PID=
    [ "$rc" -eq 0 ] || { echo "flux start: exit $rc" >&2; tail -30 "$BATS_TEST_TMPDIR/flux.log" >&2; }
    return "$rc"
}

# ---- cairnd's prolog and epilog for the Flux tests ----

# A per-rank prolog/epilog that logs "PHASE JOBID RANK RANKS" to
# $BATS_TEST_TMPDIR/runlog (JOBID: FLUX_JOB_ID, f58), sleeps the seconds in
# sleep-PHASE-RANK or else sleep-PHASE, and exits with exit-PHASE-RANK,
# each if that file exists. $1: more cairn.conf keys ("k": v, ...).
perilog_conf() {
    local c
    c=$(script perilog.sh <<'SH'
#!/bin/sh
d=$(dirname "$0")
echo "$CAIRN_PHASE $FLUX_JOB_ID $CAIRN_RANK $FLUX_JOB_RANKS" >>"$d/runlog"
f="$d/sleep-$CAIRN_PHASE-$CAIRN_RANK"; [ -e "$f" ] || f="$d/sleep-$CAIRN_PHASE"
[ -e "$f" ] && sleep "$(cat "$f")"
f="$d/exit-$CAIRN_PHASE-$CAIRN_RANK"; [ -e "$f" ] && exit "$(cat "$f")"
exit 0
SH
)
    echo "{\"prolog\": {\"command\": [\"$c\"], \"per-rank\": true},
           \"epilog\": {\"command\": [\"$c\"], \"per-rank\": true}${1:+, $1}}"
}

# Per-rank prolog and epilog that log "PHASE RANK" to runlog and wait
# while the file hold-PHASE exists.
gated_conf() {
    local c
    c=$(script gated.sh <<'SH'
#!/bin/sh
d=$(dirname "$0")
echo "$CAIRN_PHASE $CAIRN_RANK" >>"$d/runlog"
while [ -e "$d/hold-$CAIRN_PHASE" ]; do sleep 0.05; done
exit 0
SH
)
    echo "{\"prolog\": {\"command\": [\"$c\"], \"per-rank\": true},
           \"epilog\": {\"command\": [\"$c\"], \"per-rank\": true}}"
}

# The job's command: logs "shell RANK", waits while hold-shell exists.
shell_cmd() {
    echo "sh -c \"echo shell \\\$FLUX_TASK_RANK >>$D/runlog; while [ -e $D/hold-shell ]; do sleep 0.05; done\""
}

# ---- Many nodes (issue 15) ----
#
# multinode_conf PATTERN: load cairn-exec.so on ranks 1-3 as well, as the
# module cairn-node, each relaying for its rank to the cairnd in state dir
# PATTERN, where %r stands for the broker's rank (e.g.
# "$BATS_TEST_TMPDIR/node%r": node1, node2, node3). Rank 0 keeps
# cairn-exec.so as job-exec (flux_conf). Flux 0.88's rc1 is
# `flux modprobe rc1`: it reads [[modules]] entries from DIR/modprobe.d/
# *.toml and runs DIR/rc1.d/*.py for each DIR of FLUX_MODPROBE_PATH_APPEND.
# The entry defines the module (ranks ">0": never on rank 0); the rc1.d
# file has it loaded, as an entry alone loads nothing. The variable is
# exported, so the brokers of in_flux (and sysflux_start) inherit it.
# Start the node cairnds yourself (one per rank, each in its own dir).
#
#   setup() {
#       cairnd_start '{}'
#       multinode_conf "$BATS_TEST_TMPDIR/node%r"
#   }
#   @test ... { in_flux 'flux exec -r 1-3 flux module list | grep cairn-node'; }
multinode_conf() {
    local d=$BATS_TEST_TMPDIR/modprobe
    modprobe_node_module "$d" \
        "statedir=${1:?multinode_conf: a state dir pattern, e.g. DIR/node%r}"
    export FLUX_MODPROBE_PATH_APPEND=$d${FLUX_MODPROBE_PATH_APPEND:+:$FLUX_MODPROBE_PATH_APPEND}
}

# The modprobe dir DIR that loads cairn-exec.so as "cairn-node" on the
# ranks above 0 with the module argument ARG (statedir=... or socket=...).
modprobe_node_module() {
    local d=$1
    mkdir -p "$d/modprobe.d" "$d/rc1.d"
    cat >"$d/modprobe.d/cairn.toml" <<TOML
[[modules]]
name = "cairn-node"
module = "$B/cairn-exec.so"
args = ["$2"]
ranks = ">0"
TOML
    cat >"$d/rc1.d/cairn.py" <<'PY'
def setup(context):
    context.load_modules(["cairn-node"])
PY
}
