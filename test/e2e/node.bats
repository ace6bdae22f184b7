#!/usr/bin/env bats
# cairnd in the node role (DESIGN-MULTINODE.md), driven over its socket as
# a rank-0 cairnd's relay would: node-exec is idempotent by execid (a query
# when asked again), ends are kept until node-ack, node-watch gets them,
# and a SIGKILLed node finds its processes again. Flux is not needed here:
# test/flux/multinode.bats runs the whole chain.
load lib

setup() {
    T=$BATS_TEST_TMPDIR
    cairnd_start '{"role": "node"}'
}

teardown() {
    cairnd_stop
    assert_no_leftover
}

X1=11111111-1111-4111-8111-111111111111
X2=22222222-2222-4222-8222-222222222222


# The nodeprocs record of execid $1, read with the LMDB tools (mdb_dump
# -p escapes a backslash as two).
node_record() {
    mdb_dump -p -s nodeprocs "$STATEDIR/journal" | awk -v k=" $1" '
        found { sub(/^ /, ""); print; exit }
        $0 == k { found = 1 }' | sed 's/\\\\/\\/g'
}

# node-watch: the first $1 reports (one JSON per line), within 20 s
watch_reports() {
    timeout 20 python3 - "$STATEDIR/cairn.sock" "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.write(json.dumps({"topic": "node-watch", "matchtag": 5, "payload": {}}) + "\n")
f.flush()
for _ in range(int(sys.argv[2])):
    r = json.loads(f.readline())
    print(json.dumps(r.get("payload", r), sort_keys=True))
PY
}

@test "node-exec runs a command once; asked again it answers what became of it" {
    run rpc node-exec "$(exec_req $X1 'echo run >>'"$T"'/count; echo out; echo err >&2; exit 3')"
    [ "$status" -eq 0 ]
    echo "$output" | jq -e --arg h "$(hostname)" \
        '(.state == "running" or .state == "ended") and .host == $h and .pid > 0'
    run watch_reports 1
    [ "$status" -eq 0 ]
    echo "$output" | jq -e --arg x $X1 '.execid == $x and .state == "ended"
        and .status == 768 and .stdout == "out\n" and .stderr == "err\n"
        and .["stdout-truncated"] == false'
    # rank 0's heartbeat: the execid alone; "unknown" for one never asked
    run rpc node-exec "{\"execid\": \"$X1\", \"query\": true}"
    echo "$output" | jq -e '.state == "ended" and .status == 768'
    run rpc node-exec "{\"execid\": \"$X2\", \"query\": true}"
    echo "$output" | jq -e --arg x $X2 '. == {"execid": $x, "state": "unknown",
        "host": "'"$(hostname)"'"}'
    # the same request again: nothing runs, the answer is the end
    run rpc node-exec "$(exec_req $X1 'echo run >>'"$T"'/count')"
    echo "$output" | jq -e '.state == "ended" and .status == 768'
    [ "$(cat "$T/count")" = run ]
    # its files are kept until acknowledged, and its record after that, as
    # the node's account of what ran there
    [ -n "$(ls "$STATEDIR/exits/" | grep $X1)" ]
    run rpc node-ack "{\"execids\": [\"$X1\"]}"
    [ "$output" = "{}" ]
    [ -z "$(ls "$STATEDIR/exits/" | grep $X1)" ]
    node_record $X1 | jq -e '.acked and .state == "ended" and .status == 768
        and .id == 7 and .rank == 2 and .argv[0] == "sh"'
    # an acknowledged end is not reported again
    run rpc node-exec "$(exec_req $X2 'exit 5')"
    run watch_reports 1
    echo "$output" | jq -e --arg x $X2 '.execid == $x and .status == 1280'

}

@test "a node-exec whose intent cannot be journaled is refused and never runs" {
    # the outbox's rule O1 (src/journal/outbox.h): the first record staged
    # fails, so its spawn is never queued; the next node-exec works
    cairnd_stop
    rm -rf "$STATEDIR"
    export CAIRN_FAULT=outbox.stage:1:28 # ENOSPC
    cairnd_start '{"role": "node"}'
    unset CAIRN_FAULT
    run rpc node-exec "$(exec_req $X1 'echo run >>'"$T"'/count')"
    [ "$status" -ne 0 ]
    [ "$output" = "error 28 node-exec: cannot journal its intent: No space left on device" ]
    sleep 0.5
    [ ! -e "$T/count" ]
    [ -z "$(node_record $X1)" ]
    run rpc node-exec "$(exec_req $X1 'echo run >>'"$T"'/count')"
    [ "$status" -eq 0 ]
    run watch_reports 1
    [ "$status" -eq 0 ]
    echo "$output" | jq -e '.state == "ended" and .status == 0'
    [ "$(cat "$T/count")" = run ]
}

@test "node-signal reaches the process; an unknown one is ENOENT" {
    run rpc node-exec "$(exec_req $X1 'exec sleep 60')"
    echo "$output" | jq -e '.state == "running"'
    run rpc node-signal "{\"execid\": \"$X1\", \"signum\": 15}"
    [ "$output" = "{}" ]
    run watch_reports 1
    echo "$output" | jq -e '.state == "ended" and .status == 15'
    run rpc node-signal "{\"execid\": \"$X2\", \"signum\": 15}"
    [ "$status" -eq 1 ]
    [ "$output" = "error 2 $X2 is not running here" ]
}

@test "a SIGKILLed node finds its processes again and reports their ends" {
    run rpc node-exec "$(exec_req $X1 'sleep 1; exit 4')"
    run rpc node-exec "$(exec_req $X2 'exec sleep 60')"
    cairnd_crash
    sleep 1.5 # X1 ends while no cairnd watches it
    cairnd_launch
    run watch_reports 1
    echo "$output" | jq -e --arg x $X1 '.execid == $x and .status == 1024'
    run rpc node-exec "$(exec_req $X2 'exec sleep 60')"
    echo "$output" | jq -e '.state == "running"'
    run rpc node-signal "{\"execid\": \"$X2\", \"signum\": 9}"
    run rpc node-ack "{\"execids\": [\"$X1\"]}"
    run watch_reports 1
    echo "$output" | jq -e --arg x $X2 '.execid == $x and .status == 9'
    rpc node-ack "{\"execids\": [\"$X2\"]}"
}

@test "a node refuses jobs and bad requests, and rank 0 refuses node work" {
    run rpc start '{"id": 1}'
    [ "$status" -eq 1 ]
    [ "$output" = 'error 38 start: this cairnd is a node ("role": "node"): that is for rank 0'"'"'s cairnd' ]
    run rpc node-exec '{"execid": "x"}'
    [ "$status" -eq 1 ]
    [[ "$output" == 'error 71 node-exec: want {"execid": a lowercase UUID'* ]]
    run rpc node-ack '{}'
    [ "$output" = 'error 71 node-ack: want {"execids": [...]}' ]
    run rpc node-signal "{\"execid\": \"$X1\", \"signum\": 99}"
    [ "$output" = 'error 71 node-signal: want {"execid", "signum": 1-64}' ]
    # still up, nothing recorded
    run rpc node-ack "{\"execids\": [\"$X1\"]}"
    [ "$output" = "{}" ]
    cairnd_stop
    STATEDIR=$T/rank0
    cairnd_start "{}"
    run rpc node-exec "$(exec_req $X1 true)"
    [ "$output" = 'error 38 node-exec: this cairnd is not a node (its config has no "role": "node")' ]
    # and a config that asks for both is refused
    printf '{"role": "node", "multinode": {}}\n' >"$T/bad.conf"
    run "$B/cairnd" --check -c "$T/bad.conf" --statedir "$T/x"
    [ "$status" -ne 0 ]
    [[ "$output" == *'multinode: only for the rank-0 cairnd, not one with "role": "node"'* ]]
}
