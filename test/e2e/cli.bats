#!/usr/bin/env bats
# The cairn client against a real cairnd: exit statuses like a shell's,
# cancel, kill, list, following a job across a cairnd restart, error
# messages, and the demo.
load lib

setup() {
    cairnd_start '{"release-after": 0}'
}

teardown() {
    # a test that failed half-way may leave a `cairn run` behind
    if [ -n "${RUN_PID:-}" ]; then
        kill "$RUN_PID" 2>/dev/null || true
        wait "$RUN_PID" 2>/dev/null || true
    fi
    cairnd_stop
    assert_no_leftover
}

# cairn run ARGS... in the background; its stdout and stderr go to
# $BATS_TEST_TMPDIR/run.out and .err, its exit status to run.rc.
run_bg() {
    (
        set +e # bats runs tests under set -e: keep the status
        "$B/cairn" --statedir "$STATEDIR" run "$@" \
            >"$BATS_TEST_TMPDIR/run.out" 2>"$BATS_TEST_TMPDIR/run.err"
        echo $? >"$BATS_TEST_TMPDIR/run.rc"
    ) 3>&- &
    RUN_PID=$!
}

# Wait up to $1 seconds for the background run to end; its status in RUN_RC.
run_wait() {
    local i
    for i in $(seq 1 $(($1 * 20))); do
        if [ -s "$BATS_TEST_TMPDIR/run.rc" ]; then
            wait "$RUN_PID" 2>/dev/null || true
            RUN_PID=
            RUN_RC=$(cat "$BATS_TEST_TMPDIR/run.rc")
            return 0
        fi
        sleep 0.05
    done
    echo "cairn run did not end within $1s; it printed:" >&2
    cat "$BATS_TEST_TMPDIR/run.out" "$BATS_TEST_TMPDIR/run.err" >&2
    return 1
}

# Wait until job $1 is listed in state $2 (default run).
wait_state() {
    local i
    for i in $(seq 1 200); do
        cairn list --json | jq -e --argjson id "$1" --arg st "${2:-run}" \
            '.jobs[] | select(.id == $id and .state == $st)' >/dev/null \
            && return 0
        sleep 0.05
    done
    echo "job $1 never in state ${2:-run}; list:" >&2
    cairn list >&2
    return 1
}

@test "run -N 2 -- true exits 0 and prints each response" {
    run cairn run -N 2 -- true
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^job\ [0-9]+\ \(ƒ[1-9A-HJ-NP-Za-km-z]+\)\ submitted$ ]]
    [[ "${lines[1]}" =~ ^[0-9]+\.[0-9]{3}s\ start$ ]]
    [[ "$output" == *"s finish status 0 (exit 0)"* ]]
    [[ "${lines[-1]}" =~ s\ release\ ranks\ 0-1\ final$ ]]
}

@test "run exits with the job's exit code" {
    run cairn run -- sh -c 'exit 3'
    [ "$status" -eq 3 ]
    [[ "$output" == *"finish status 768 (exit 3)"* ]]
}

@test "run exits 128+N for a job killed by signal N" {
    run cairn run -- sh -c 'kill -9 $$'
    [ "$status" -eq 137 ]
    [[ "$output" == *"finish status 9 (killed by SIGKILL)"* ]]
}

@test "run --json prints the raw responses, accepted first" {
    run cairn run --json --id 77 -N 2 -- true
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ]
    echo "$output" | jq -e -s 'all(.matchtag == 1 and .payload.id == 77)'
    [ "${lines[0]}" = '{"matchtag":1,"payload":{"id":77,"type":"accepted","data":{}}}' ]
    echo "$output" | jq -e -s '.[1].payload.type == "start"
        and .[2].payload.data.status == 0
        and .[3].payload.data == {"ranks": "0-1", "final": true}'
}

@test "run accepts the job id in F58 and prints both forms" {
    run cairn run --id ƒ21 -- true
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "job 58 (ƒ21) submitted" ]
}

@test "run -t sets a time limit that ends the job" {
    run cairn run -N 2 -t 1s -- sleep 30
    [ "$status" -eq 142 ] # SIGALRM, as Flux's shell gets it
    [[ "$output" == *"exception timeout (severity 0)"* ]]
}

@test "run with an id cairnd already has fails without running it again" {
    cairn run --id 5 -- true
    run cairn run --id 5 -- touch "$BATS_TEST_TMPDIR/ran-twice"
    [ "$status" -eq 1 ]
    [ "${lines[-1]}" = "cairn run: job 5 already exists" ]
    [[ "$output" != *submitted* ]]
    [ ! -e "$BATS_TEST_TMPDIR/ran-twice" ]
    # --detach waits for cairnd's acceptance too: this is no success
    run cairn run --detach --id 5 -- true
    [ "$status" -eq 1 ]
    [ "${lines[-1]}" = "cairn run: job 5 already exists" ]
    [[ "$output" != *submitted* ]]
}

# Regression: run printed "job N (F58) submitted" as soon as it sent the
# request, so a job cairnd refused looked accepted, then failed.
@test "run refused by cairnd prints only the error, no submitted line" {
    rc=0
    cairn run -N 100000 -- true >"$BATS_TEST_TMPDIR/out" \
        2>"$BATS_TEST_TMPDIR/err" || rc=$?
    [ "$rc" -eq 1 ]
    [ "$(cat "$BATS_TEST_TMPDIR/err")" = "cairn run: R: 100000 ranks, more than the limit of 65536" ]
    run grep -q submitted "$BATS_TEST_TMPDIR/out"
    [ "$status" -ne 0 ]
    [ ! -s "$BATS_TEST_TMPDIR/out" ]
    run cairn list
    [ "${#lines[@]}" -eq 1 ] # nothing was started
}

@test "cancel of a sleep 30 job makes run exit non-zero within seconds" {
    run_bg --id 55 -N 2 -- sleep 30
    wait_state 55
    run cairn cancel --note "no longer needed" 55
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    run_wait 10
    [ "$RUN_RC" -eq 143 ]
    # the responses are on stderr: stdout is the job's (empty here)
    grep -q "exception cancel (severity 0): no longer needed" \
        "$BATS_TEST_TMPDIR/run.err"
    grep -q "release ranks 0-1 final" "$BATS_TEST_TMPDIR/run.err"
    [ ! -s "$BATS_TEST_TMPDIR/run.out" ]
}

@test "kill -s INT signals the job's processes" {
    run_bg --id 56 -- sleep 30
    wait_state 56
    run cairn kill -s INT ƒz
    [ "$status" -eq 1 ]
    [ "$output" = "cairn kill: job 57 not found" ]
    run cairn kill -s INT 56
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    run_wait 10
    [ "$RUN_RC" -eq 130 ]
}

# A job whose shell's spawn the supervisor holds: cairnd restarted with
# CAIRN_TEST_SPAWN_HOLD=$HOLD, `cairn run --id $1 -- sleep 30` in the
# background, and back once the spawn is held and the job listed as
# running. `rm "$HOLD"` lets the spawn go on.
held_job() {
    local i
    HOLD=$BATS_TEST_TMPDIR/hold
    cairnd_stop
    touch "$HOLD"
    CAIRN_TEST_SPAWN_HOLD=$HOLD cairnd_start '{"release-after": 0}'
    run_bg --id "$1" -- sleep 30
    for i in $(seq 1 200); do [ -s "$HOLD.held" ] && break; sleep 0.05; done
    [ -s "$HOLD.held" ]
    wait_state "$1"
}

# Wait until cairnd holds $1 kills of connected clients (`stats`).
wait_kills_waiting() {
    local i n
    for i in $(seq 1 200); do
        n=$(rpc stats '{}' | jq '."kills-waiting"')
        [ "$n" -eq "$1" ] && return 0
        sleep 0.05
    done
    echo "cairnd holds $n kills, not $1" >&2
    return 1
}

# A job is listed as running once its shell's start is journaled, before
# the supervisor has started it. A kill in that window used to be answered
# and dropped (no process to signal yet): the job ran on. It is answered
# once the shell runs, and the shell gets the signal.
@test "kill while the shell is still starting reaches it once it runs" {
    held_job 58
    cairn kill -s INT 58 >"$BATS_TEST_TMPDIR/kill.out" 2>&1 &
    local kill_pid=$!
    # held by cairnd, not answered while there is nothing to signal
    wait_kills_waiting 1
    kill -0 "$kill_pid"
    rm "$HOLD"
    wait "$kill_pid"
    [ ! -s "$BATS_TEST_TMPDIR/kill.out" ]
    run_wait 10
    [ "$RUN_RC" -eq 130 ]
}

@test "a waiting kill whose client went away is not carried out" {
    held_job 60
    "$B/cairn" --statedir "$STATEDIR" kill -s INT 60 &
    local kill_pid=$!
    wait_kills_waiting 1
    kill -0 "$kill_pid" # held, unanswered
    kill -KILL "$kill_pid"
    wait "$kill_pid" || true
    # cairnd has seen the connection close
    wait_kills_waiting 0
    rm "$HOLD"
    wait_event 60 10 proc-spawn
    sleep 0.5
    # the shell runs on: no SIGINT; the cancel ends it (SIGTERM, 143)
    [ "$(events_named 60 proc-signal | wc -l)" -eq 0 ]
    cairn cancel 60
    run_wait 10
    [ "$RUN_RC" -eq 143 ]
}

@test "a job holds at most 16 kills while its shell starts; the 17th fails" {
    local k=$BATS_TEST_TMPDIR/kill i pids=""
    held_job 59
    # 17 at once, in whatever order they arrive: the first 16 are held,
    # the last is refused at once. SIGWINCH: ignored by sleep, so the job
    # outlives all of them.
    for i in $(seq 1 17); do
        (
            set +e
            "$B/cairn" --statedir "$STATEDIR" kill -s WINCH 59 >"$k.$i.out" 2>&1
            echo $? >"$k.$i.rc"
        ) &
        pids="$pids $!"
    done
    # the refusal comes once 16 are held: then all 17 have arrived
    wait_kills_waiting 16
    for i in $(seq 1 400); do
        [ "$(cat "$k".*.rc 2>/dev/null | wc -l)" -ge 1 ] && break
        sleep 0.05
    done
    sleep 0.3 # nothing else ends while the shell is held
    [ "$(cat "$k".*.rc | tr '\n' ' ')" = "1 " ]
    [ "$(cat "$k".*.out)" = "cairn kill: job 59: 16 kills already wait for its shells to start" ]
    rm "$HOLD"
    for i in $pids; do wait "$i"; done
    # each held one is answered, status 0, silently
    [ "$(grep -lx 0 "$k".*.rc | wc -l)" -eq 16 ]
    [ "$(cat "$k".*.out | wc -l)" -eq 1 ]
    cairn cancel 59
    run_wait 10
    [ "$RUN_RC" -eq 143 ]
}

@test "list shows a running job in a table" {
    run_bg --id 4242 -N 3 -- sleep 30
    wait_state 4242
    run cairn list
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^ID\ +F58\ +STATE\ +RANKS\ +RELEASED\ +AGE$ ]]
    [[ "$output" =~ 4242\ +ƒ2G9\ +run\ +0-2\ +-\ +[0-9.]+s ]]
    run cairn list --json
    [ "$status" -eq 0 ]
    echo "$output" | jq -e '.jobs[] | select(.id == 4242) | .ranks == "0-2"'
    cairn cancel 4242
    run_wait 10
}

@test "list of an idle cairnd prints the header only" {
    run cairn list
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ "${lines[0]}" == ID* ]]
}

@test "run --detach exits 0 once cairnd accepted the job; the job goes on" {
    run cairn run --detach --id 99 -- sleep 30
    [ "$status" -eq 0 ]
    [ "$output" = "job 99 (ƒ2i) submitted" ]
    wait_state 99
    cairn cancel 99
}

# A posted event counts in a reattach's `since` (cairn-protocol(7)): were
# it left out, cairnd would send the last response again after the restart.
@test "run counts a posted event in since: seen once across a cairnd restart" {
    run_bg --id 87 -- sh -c 'sleep 3'
    wait_state 87
    cairn post 87 data-out path=/scratch/p
    E=$BATS_TEST_TMPDIR/run.err
    for _ in $(seq 1 100); do grep -q data-out "$E" && break; sleep 0.05; done
    cairnd_stop
    sleep 0.5
    cairnd_launch
    run_wait 20
    [ "$RUN_RC" -eq 0 ]
    grep -q "s reattached$" "$E"
    [ "$(grep -c 's data-out {"path":"/scratch/p"}$' "$E")" -eq 1 ]
    [ "$(grep -c ' start$' "$E")" -eq 1 ]
}

@test "run follows its job across a cairnd restart" {
    run_bg --id 88 -N 2 -- sh -c 'sleep 2; exit 4'
    wait_state 88
    cairnd_stop
    sleep 0.5
    cairnd_launch
    run_wait 20
    [ "$RUN_RC" -eq 4 ]
    E=$BATS_TEST_TMPDIR/run.err
    [ "$(grep '^cairn run:' "$E")" = "cairn run: cairnd went away; reconnecting
cairn run: shell on ranks 0-1: exit 4" ]
    [ "$(head -1 "$E")" = "job 88 (ƒ2X) submitted" ]
    [ "$(grep -c submitted "$E")" -eq 1 ]
    grep -q "s reattached$" "$E"
    grep -q "finish status 1024 (exit 4)" "$E"
    [ "$(grep -c ' start$' "$E")" -eq 1 ]
    [ "$(grep -c 'final$' "$E")" -eq 1 ]
}

@test "run follows its job across a cairnd crash (SIGKILL)" {
    run_bg --id 89 -N 2 -- sh -c 'sleep 1; exit 6'
    wait_state 89
    cairnd_crash
    sleep 2 # the job ends while cairnd is down
    cairnd_launch
    run_wait 20
    [ "$RUN_RC" -eq 6 ]
    grep -q "finish status 1536 (exit 6)" "$BATS_TEST_TMPDIR/run.err"
    [ "$(grep -c 'final$' "$BATS_TEST_TMPDIR/run.err")" -eq 1 ]
}

@test "run gives up when cairnd does not come back in time" {
    CAIRN_RECONNECT_TIMEOUT=1 run_bg --id 90 -- sleep 30
    wait_state 90
    cairnd_stop
    run_wait 10
    # 69: cairn run lost track, the job did not fail (cairn(1))
    [ "$RUN_RC" -eq 69 ]
    [ "$(grep -m1 '^cairn run:' "$BATS_TEST_TMPDIR/run.err")" = "cairn run: cairnd went away; reconnecting" ]
    grep -q "^cairn run: gave up reconnecting after 1s: cannot connect" \
        "$BATS_TEST_TMPDIR/run.err"
    [ "$(tail -1 "$BATS_TEST_TMPDIR/run.err")" = 'cairn run: job 90 goes on without this client: follow it with `cairn attach 90` once cairnd is back' ]
    cairnd_launch # the job ran on without cairnd: end it
    cairn cancel 90
}

@test "errors: unknown job, bad id, no cairnd, unknown command" {
    run cairn cancel 12
    [ "$status" -eq 1 ]
    [ "$output" = "cairn cancel: job 12 not found" ]
    run cairn cancel 12x
    [ "$status" -eq 1 ]
    [ "$output" = 'cairn cancel: invalid job id "12x": expected decimal digits or F58' ]
    run cairn kill -s NOPE 12
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "cairn kill: -s: unknown signal 'NOPE'" ]
    run "$B/cairn" frobnicate
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "cairn: unknown command 'frobnicate'" ]
    run "$B/cairn" --statedir "$BATS_TEST_TMPDIR/nothing" list
    [ "$status" -eq 1 ]
    [ "$output" = "cairn list: cannot connect to cairnd at $BATS_TEST_TMPDIR/nothing/cairn.sock: No such file or directory (is cairnd running?)" ]
    run "$B/cairn" --statedir "$BATS_TEST_TMPDIR/nothing" run -- true
    [ "$status" -eq 69 ]
    [ "$output" = "cairn run: cannot connect to cairnd at $BATS_TEST_TMPDIR/nothing/cairn.sock: No such file or directory (is cairnd running?)" ]
}

@test "run --help gives CAIRN_RECONNECT_TIMEOUT as a duration, once" {
    run cairn run --help
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | tail -2)" = "waiting up to \$CAIRN_RECONNECT_TIMEOUT for it to come back (a
duration such as 30s or 5m, default 60s)." ]
    [ "$(echo "$output" | grep -c CAIRN_RECONNECT_TIMEOUT)" -eq 1 ]
    [[ "$output" != *seconds* ]]
}

@test "the state dir comes from --statedir anywhere, the env, or -c" {
    run "$B/cairn" list --statedir "$STATEDIR"
    [ "$status" -eq 0 ]
    CAIRN_STATEDIR=$STATEDIR run "$B/cairn" list
    [ "$status" -eq 0 ]
    printf '{"statedir": "%s"}\n' "$STATEDIR" >"$BATS_TEST_TMPDIR/c.json"
    env -u CAIRN_STATEDIR "$B/cairn" -c "$BATS_TEST_TMPDIR/c.json" list
    printf '{"statedir": 5}\n' >"$BATS_TEST_TMPDIR/bad.json"
    run env -u CAIRN_STATEDIR "$B/cairn" -c "$BATS_TEST_TMPDIR/bad.json" list
    [ "$status" -eq 1 ]
    [[ "$output" == "cairn list: $BATS_TEST_TMPDIR/bad.json: statedir"* ]]
}

@test "demo runs its four jobs as expected and cleans up" {
    mkdir "$BATS_TEST_TMPDIR/demo"
    TMPDIR=$BATS_TEST_TMPDIR/demo run "$B/cairn" demo
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"All 4 jobs ended as expected."* ]]
    [[ "$output" == *"tolerate  <- exception prolog (severity 2)"* ]]
    [ -z "$(ls -A "$BATS_TEST_TMPDIR/demo")" ]
}

@test "run says why a job failed, one line per cause, on stderr" {
    # (the other stderr lines are the responses: only the reasons start
    # with "cairn run:")
    E=$BATS_TEST_TMPDIR/run.err
    run_bg --id 95 -N 3 --cwd /nonexistent -- true
    run_wait 10
    [ "$RUN_RC" -eq 127 ]
    [ "$(grep '^cairn run:' "$E")" = "cairn run: shell on ranks 0-2: chdir /nonexistent: No such file or directory" ]
    run_bg --id 96 -- /no/such/cmd
    run_wait 10
    [ "$(grep '^cairn run:' "$E")" = "cairn run: shell on rank 0: execvp /no/such/cmd: No such file or directory" ]
    run_bg --id 97 -N 2 -- sh -c 'exit $((CAIRN_RANK + 2))'
    run_wait 10
    [ "$RUN_RC" -eq 3 ]
    [ "$(grep '^cairn run:' "$E")" = "cairn run: shell on rank 0: exit 2
cairn run: shell on rank 1: exit 3" ]
    run_bg --id 98 -t 0.3s -- sleep 30
    run_wait 10
    [ "$(grep -m1 '^cairn run:' "$E")" = "cairn run: exception timeout (severity 0): resource allocation expired" ]
    grep -qx "cairn run: shell on rank 0: killed by SIGALRM" "$E"
    # a job that succeeds says nothing of the kind
    run_bg --id 99 -- true
    run_wait 10
    [ "$RUN_RC" -eq 0 ]
    run grep -q '^cairn run:' "$E"
    [ "$status" -ne 0 ]
}
