#!/usr/bin/env bats
# A Flux system instance on two nodes through cairn (issues 32 and 15):
# the brokers run as the unprivileged `cairnflux`; rank 0's root cairnd
# keeps the jobs, rank 1 has a node-role root cairnd of its own; both
# name cairnflux their instance owner. cairn-exec.so on each broker reaches
# its cairnd through that cairnd's public socket. A user's job runs on
# both ranks as the user through flux-imp, and the per-rank prolog and
# epilog run as root on each: on the node, only because they are the
# node's own commands (trust.h, T4). sysinst.bash builds the instance.
load lib
source "$(dirname "$BATS_TEST_FILENAME")/sysinst.bash"

setup() {
    sysinst_setup
    T=$BATS_TEST_TMPDIR
    PUB=$SYSINST/pub
    mkdir -m 0755 "$PUB"
    printf '#!/bin/sh\necho "$CAIRN_PHASE $(id -u) $FLUX_JOB_USERID $CAIRN_RANK" >>%s\n' \
        "$SYSINST/perilog.log" >"$SYSINST/perilog"
    chmod 755 "$SYSINST/perilog"
    local common="\"flux\": {\"instance-owner\": \"$SYSINST_OWNER\", \"imp\": \"$SYSINST_IMP\"},
        \"prolog\": {\"command\": [\"$SYSINST/perilog\"], \"per-rank\": true},
        \"epilog\": {\"command\": [\"$SYSINST/perilog\"], \"per-rank\": true}"
    cairnd_start "{\"public-socket\": \"$PUB/cairn-0.sock\", $common,
        \"multinode\": {\"local-ranks\": \"0\", \"poll\": \"0.3s\"}}"
    # the node's cairnd, in a state dir of its own
    mkdir -m 0700 "$T/node1"
    printf '{"role": "node", "public-socket": "%s", %s}\n' \
        "$PUB/cairn-1.sock" "$common" >"$T/node1.conf"
    CAIRN_TEST_TAG=$T "$B/cairnd" -c "$T/node1.conf" --statedir "$T/node1" \
        2>>"$T/cairnd-node1.log" &
    NODE_PID=$!
    local _
    for _ in $(seq 1 200); do
        [ -S "$PUB/cairn-1.sock" ] && break
        sleep 0.05
    done
    # cairn-exec.so on rank 1 too (as multinode_conf in lib.bash does),
    # where the brokers, run by the owner, can read it
    modprobe_node_module "$SYSINST/modprobe" "socket=$PUB/cairn-%r.sock"
    chmod -R a+rX "$SYSINST/modprobe"
    SYSINST_RESTARTABLE=1 # two brokers, fake0 and fake1
    FLUX_MODPROBE_PATH_APPEND=$SYSINST/modprobe sysinst_start "[modules.job-exec]
module = \"$B/cairn-exec.so\"
args = [\"socket=$PUB/cairn-%r.sock\", \"start-timeout=10\"]"
}

teardown() {
    sysinst_teardown
    cairnd_stop
    if [ -n "${NODE_PID:-}" ]; then
        kill "$NODE_PID" 2>/dev/null
        wait "$NODE_PID" 2>/dev/null || true
    fi
    assert_no_leftover
}

@test "a user's job on two nodes: its shells through flux-imp as the user on each; each node's prolog and epilog as root" {
    local u1 out
    u1=$(id -u cairnu1)
    out=$(as_user cairnu1 timeout 60 flux run -N2 -l sh -c 'echo $(id -u) $(hostname)')
    echo "$out"
    [ "$(sort <<<"$out" | paste -sd,)" = "0: $u1 $(hostname),1: $u1 $(hostname)" ]
    # rank 1's shell ran under the node's cairnd, through the IMP as the
    # owner; its prolog and epilog as root there
    cat "$SYSINST/perilog.log" >&2
    [ "$(sort "$SYSINST/perilog.log" | paste -sd,)" = \
      "epilog 0 $u1 0,epilog 0 $u1 1,prolog 0 $u1 0,prolog 0 $u1 1" ]
    "$B/cairn" --statedir "$T/node1" procs -a >&2 || true
    mdb_dump -p -s nodeprocs "$T/node1/journal" | grep -F "\"argv\":[\"$SYSINST_IMP\",\"exec\"" >/dev/null
    mdb_dump -p -s nodeprocs "$T/node1/journal" | grep -F "\"user\":$(id -u "$SYSINST_OWNER")" >/dev/null
    # nothing refused on either
    [ "$(cat "$T/cairnd-node1.log" "$T/cairnd.log" | grep -c "permission denied")" -eq 0 ]
}
