#!/usr/bin/env bats
# A rank-0 cairnd with multinode on (DESIGN-MULTINODE.md), its nodes played
# by fakerelay.py: which processes go to nodes, the write-ahead order, the
# heartbeat and its timeout, late reports, a rank-0 crash. The whole chain
# through Flux and real node cairnds is test/flux/multinode.bats.
load lib

setup() {
    T=$BATS_TEST_TMPDIR
    EPILOG=$(script epilog <<EOF
#!/bin/sh
f="$T/epilog-sleep-\$CAIRN_RANK"
[ -e "\$f" ] && sleep "\$(cat "\$f")"
exit 0
EOF
    )
    cairnd_start "{\"release-after\": 0,
        \"epilog\": {\"command\": [\"$EPILOG\"], \"per-rank\": true},
        \"multinode\": {\"timeout\": \"2s\", \"poll\": \"0.3s\"}}"
}

teardown() {
    [ -n "${RELAY_PID:-}" ] && kill "$RELAY_PID" 2>/dev/null
    [ -n "${RUN_PID:-}" ] && kill "$RUN_PID" 2>/dev/null
    cairnd_stop
    assert_no_leftover
}

# Wait (5 s at most) until the relay got a message for which the jq
# filter $2 holds ($x: $1), then assert that it did.
relay_got() {
    local i
    for i in $(seq 1 100); do
        jq -e -s --arg x "$1" "any(.[]; $2)" "$T/relay.log" >/dev/null && return 0
        sleep 0.05
    done
    jq -e -s --arg x "$1" "any(.[]; $2)" "$T/relay.log"
}

@test "a rank's shell and epilog go to its node, rank 0's stay here" {
    relay_start --state "$T/relay.state"
    run cairn run --id 1 -N 3 -- true
    [ "$status" -eq 0 ]
    # the nodes were asked for ranks 1-2's shells and epilogs, never rank 0
    [ "$(jq -r 'select(.topic == "node-exec") | "\(.payload.phase) \(.rank)"' \
        "$T/relay.log" | sort -u | paste -sd,)" = \
        "epilog 1,epilog 2,shell 1,shell 2" ]
    for ph in shell epilog; do
        for r in 1 2; do
            x=$(execid_of 1 $ph $r)
            # journaled (intent) before it was asked; spawned on its node
            cairn eventlog 1 --json | jq -s -e --arg x "$x" --arg h "fake$r" '
                (map(select(.context.execid == $x and .name == "proc-spawn"))
                 | .[0].context.host == $h) and
                (map(select(.context.execid == $x and .name == "proc-exit"))
                 | length == 1)'
            # and acknowledged once its end was journaled
            jq -e -s --arg x "$x" 'any(.[]; .topic == "node-ack"
                and .payload.execids == [$x])' "$T/relay.log"
        done
    done
    # what each node printed is the job's output, as a local shell's
    [[ "$(cairn eventlog 1)" == *"out of rank 2"* ]]
    x=$(execid_of 1 shell 0)
    cairn eventlog 1 --json | jq -s -e --arg x "$x" '
        map(select(.context.execid == $x and .name == "proc-spawn"))
        | .[0].context.host == null'
    run cairn verify 1
    [ "$status" -eq 0 ]
}

@test "a silent node: its processes are lost, its rank drained; it comes back late" {
    relay_start --state "$T/relay.state" --silent 2
    echo 4 >"$T/epilog-sleep-0" # keeps the job open for the late report
    # (errexit holds in the subshell: the status is written either way)
    ("$B/cairn" --statedir "$STATEDIR" run --id 2 -N 3 -- true \
        >"$T/run.out" 2>&1 && echo 0 >"$T/run.rc" || echo $? >"$T/run.rc") \
        3>&- &
    RUN_PID=$!
    wait_event 2 10 epilog-start
    sx=$(execid_of 2 shell 2)
    # rank 2's shell: lost after 2s of silence, an exception naming it
    [[ "$(events_named 2 proc-lost)" == *"node $(hostname) (rank 2) unreachable for "* ]]
    events_named 2 exception | jq -e -s 'any(.[]; .type == "exec"
        and (.note | contains("unreachable")))'
    events_named 2 drain | jq -e -s 'any(.[]; .ranks == "2")'
    # its epilog is not even asked for: the node is known to be down
    [ -z "$(jq -r 'select(.topic == "node-exec" and .payload.phase == "epilog"
                          and .rank == 2)' "$T/relay.log")" ]
    # the node comes back: what was given up on there is killed (if it
    # still ran), its report is recorded, and acknowledged
    kill -USR1 "$RELAY_PID"
    wait_event 2 10 proc-late
    jq -e -s --arg x "$sx" 'any(.[]; .topic == "node-signal" and .rank == 2
        and .payload == {"execid": $x, "signum": 9})' "$T/relay.log"
    events_named 2 proc-late | jq -e --arg x "$sx" '.execid == $x
        and .state == "ended" and .status == 0 and .host == "fake2"'
    relay_got "$sx" '.topic == "node-ack" and .payload.execids == [$x]'
    wait "$RUN_PID" || true
    RUN_PID=
    [ "$(cat "$T/run.rc")" -ne 0 ]
    wait_event 2 10 clean
    # the late report changed nothing: the rank stays drained
    [[ "$(cairn drain)" == *"unreachable"* ]]
    run cairn verify 2
    [ "$status" -eq 0 ]
}

@test "a node back after its job ended: what was given up on there is killed all the same" {
    # issue 33: a dropped process was forgotten once its job was over, so a
    # healed node's leftover ran on and was never killed (the node reports
    # ends only, as node-watch does: the kill is rank 0's to remember)
    relay_start --state "$T/relay.state" --silent 2 --run 4 --ends-only
    run cairn run --id 4 -N 3 -- true
    [ "$status" -ne 0 ]
    wait_event 4 10 clean
    sx=$(execid_of 4 shell 2)
    [ -n "$(events_named 4 proc-lost)" ]
    [ -z "$(jq -r 'select(.topic == "node-signal" and .rank == 2)' "$T/relay.log")" ]
    sleep 1 # the heal comes some ticks (multinode.poll, 0.3s) after the end
    kill -USR1 "$RELAY_PID"
    relay_got "$sx" '.topic == "node-signal" and .rank == 2
        and .payload == {"execid": $x, "signum": 9}'
    grep -q "rank 2 answers again: killing $sx" "$T/cairnd.log"
    # and what the node then reports of it is recorded all the same, after
    # the job's clean: the job stays done, its record as it was
    wait_event 4 10 proc-late
    # (its 60 s may be over by the heal: ended by itself, or killed)
    events_named 4 proc-late | jq -e --arg x "$sx" '.execid == $x
        and .state == "ended" and (.status == 0 or .status == 9)
        and .host == "fake2"'
    [ "$(cairn eventlog 4 --json | jq -s -r '.[-2:] | map(.name) | join(",")')" = clean,proc-late ]
    cairn show 4 | grep -E '^shell +\+[0-9.]+s +2 +fake2 +(exit 0|killed by SIGKILL)$'
    cairn show 4 --json | jq -e --arg x "$sx" '.late == [.late[0]]
        and .late[0].execid == $x and .late[0].rank == 2
        and .late[0].phase == "shell" and .state == "done"'
    grep -q "job 4 (done): $sx: a late report from rank 2: recorded" "$T/cairnd.log"
    # acknowledged once that was committed
    relay_got "$sx" '.topic == "node-ack" and .payload.execids == [$x]'
    run cairn verify 4
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "a late report of a job that is over: rank 0 SIGKILLed before recording it, it is recorded once after the restart" {
    # issue 33: rank 0 forgets what it gave up on when it restarts; the
    # report's job id says whose it is, and the journal whether it is late
    cairnd_stop
    CAIRN_CRASH_AT=remote.late.done:1 cairnd_launch
    relay_start --state "$T/relay.state" --silent 2 --run 5 --ends-only
    run cairn run --id 5 -N 3 -- true
    [ "$status" -ne 0 ]
    wait_event 5 10 clean
    sx=$(execid_of 5 shell 2)
    sleep 1
    kill -USR1 "$RELAY_PID"
    # the kill goes out, the report of the end comes, cairnd dies deciding
    # (SIGKILLed by its crash point: 137)
    for i in $(seq 1 100); do
        kill -0 "$CAIRND_PID" 2>/dev/null || break
        sleep 0.05
    done
    rc=0
    wait "$CAIRND_PID" || rc=$?
    [ "$rc" -eq 137 ]
    wait "$RELAY_PID" || true
    RELAY_PID=
    [ -z "$(events_named 5 proc-late)" ]
    # started again: the relay (the node's memory kept) reports its ends
    # again, rank 2's shell among them, killed
    jq -c --arg x "$sx" 'select(.execid == $x) | .id' "$T/relay.state" | grep -qx 5
    cairnd_launch
    relay_start --state "$T/relay.state" --run 0.2
    wait_event 5 10 proc-late
    sleep 1 # the others' reports: repeats of known ends, not late
    [ "$(events_named 5 proc-late | jq -r .execid)" = "$sx" ]
    run cairn verify 5
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "rank 0 SIGKILLed: asked again after the restart, nothing runs twice" {
    relay_start --state "$T/relay.state" --run 3
    ("$B/cairn" --statedir "$STATEDIR" run --id 3 -N 2 -- true \
        >"$T/run.out" 2>&1) 3>&- &
    RUN_PID=$!
    for i in $(seq 1 100); do
        [ -n "$(execid_of 3 shell 1)" ] && break
        sleep 0.05
    done
    x=$(execid_of 3 shell 1)
    wait_event 3 10 proc-spawn
    cairnd_crash
    wait "$RELAY_PID" || true # cairnd's end is its end
    RELAY_PID=
    wait "$RUN_PID" || true
    RUN_PID=
    cairnd_launch
    relay_start --state "$T/relay.state" --run 3
    wait_event 3 20 clean
    # asked again with the same execid; the node ran it once; one spawn
    [ "$(jq -r --arg x "$x" 'select(.topic == "node-exec"
            and .payload.execid == $x) | .payload.execid' "$T/relay.log" \
        | wc -l)" -ge 2 ]
    [ "$(jq -r 'select(.started) | .execid' "$T/relay.state" | grep -c "$x")" -eq 1 ]
    [ "$(cairn eventlog 3 --json | jq -r --arg x "$x" \
        'select(.name == "proc-spawn" and .context.execid == $x) | .name' \
        | wc -l)" -eq 1 ]
    events_named 3 finish | jq -e '.status == 0'
    run cairn verify 3
    [ "$status" -eq 0 ]
}

@test "node-report and node-hello: malformed ones are refused, nothing changes" {
    run rpc node-report '{"rank": 1}'
    [ "$status" -eq 1 ]
    [ "$output" = 'error 71 node-report: want {"rank": R, "report": {"execid", "state", ...}}' ]
    run rpc node-report '{"rank": 1, "report": {"execid": "x", "state": "gone"}}'
    [ "$output" = 'error 71 node-report: unknown state "gone"' ]
    run rpc node-report '{"rank": 1, "report": {"execid": "x", "state": "ended"}}'
    [ "$output" = 'error 71 node-report: an ended process needs its status' ]
    run rpc node-hello '{"rank": -1}'
    [ "$output" = 'error 71 node-hello: want {"rank": R, "host": H}' ]
    # a report of something unknown is only acknowledged: nothing journaled
    run rpc node-report '{"rank": 1, "report": {"execid": "x", "state": "ended", "status": 0}}'
    [ "$output" = "{}" ]
    [ "$(cairn jobs -a -n | wc -l)" -eq 0 ]
    run cairn list
    [ "$status" -eq 0 ]
}
