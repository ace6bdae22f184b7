#!/usr/bin/env bats
# A job's output as it runs (issue 16): `cairn run` shows the shells'
# stdout and stderr while they write (-l labels, -o/--error files), a
# restart of cairnd neither repeats nor loses a byte, and `cairn attach`
# follows a job again from its start.
load lib

setup() {
    T=$BATS_TEST_TMPDIR
    cairnd_start '{}'
}

teardown() {
    [ -z "${RUN:-}" ] || { kill "$RUN" 2>/dev/null; wait "$RUN" 2>/dev/null; } || true
    cairnd_stop
    assert_no_leftover
}

# Wait (up to 10 s) until file $1 holds a line $2.
wait_line() {
    for _ in $(seq 1 200); do
        grep -qx -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "no line '$2' in $1:"; cat "$1"
    return 1
}

# The job's command: prints "first", waits for $T/go, prints "second".
GATED='echo first; while [ ! -e '"$BATS_TEST_TMPDIR"'/go ]; do sleep 0.05; done; echo second'

@test "cairn run: the output comes while the job runs; status lines on stderr" {
    cairn run --id 700 -- sh -c "$GATED" >"$T/out" 2>"$T/err" 3>&- &
    RUN=$!
    wait_line "$T/out" first
    [ -z "$(events_named 700 finish)" ]     # still running
    touch "$T/go"
    wait "$RUN"; RUN=
    [ "$(cat "$T/out")" = "first
second" ]
    [ "$(head -1 "$T/err")" = "job 700 (ƒD5) submitted" ]
    grep -q 'finish status 0 (exit 0)$' "$T/err"
}

@test "cairn run -l: each line labeled with its rank, even when cut; stderr too" {
    run cairn run --id 701 -N 2 -l -- sh -c 'printf "a"; sleep 0.3; echo "b"; echo "e$CAIRN_RANK" >&2'
    [ "$status" -eq 0 ]
    # (bats merges stderr into $output: check each line)
    [ "$(grep -c '^0: ab$' <<<"$output")" -eq 1 ]
    [ "$(grep -c '^1: ab$' <<<"$output")" -eq 1 ]
    [ "$(grep -c '^0: e0$' <<<"$output")" -eq 1 ]
    [ "$(grep -c '^1: e1$' <<<"$output")" -eq 1 ]
}

@test "cairn run -o and --error write the output to files" {
    run cairn run --id 702 -o "$T/o.txt" --error "$T/e.txt" -- sh -c 'echo out; echo err >&2'
    [ "$status" -eq 0 ]
    [ "$(cat "$T/o.txt")" = out ]
    [ "$(cat "$T/e.txt")" = err ]
    [[ "$output" != *out* ]]
    run cairn run --id 703 -o /nonexistent/dir/o -- true
    [ "$status" -eq 1 ]
    [ "$output" = "cairn run: --output /nonexistent/dir/o: No such file or directory" ]
}

@test "a cairnd restart mid-job: every byte of output once" {
    cairn run --id 704 -- sh -c "$GATED" >"$T/out" 2>"$T/err" 3>&- &
    RUN=$!
    wait_line "$T/out" first
    cairnd_stop
    sleep 0.3
    cairnd_launch
    touch "$T/go"
    wait "$RUN"; RUN=
    [ "$(cat "$T/out")" = "first
second" ]
    grep -qx "cairn run: cairnd went away; reconnecting" "$T/err"
}

@test "a character cut between two reads comes out whole; a bad byte as U+FFFD" {
    run cairn run --id 705 -- sh -c 'printf "caf\303"; sleep 0.4; printf "\251\n"; printf "a\377b\n"'
    [ "$status" -eq 0 ]
    grep -qx 'café' <<<"$output"
    grep -qx 'a�b' <<<"$output"
}

@test "cairn attach: from the start, while it runs and after it ended" {
    cairn run --detach --id 706 -- sh -c "$GATED; exit 3" 2>/dev/null
    wait_event 706 10 start
    cairn attach 706 >"$T/out" 2>"$T/err" 3>&- &
    RUN=$!
    wait_line "$T/out" first
    touch "$T/go"
    wait "$RUN" || rc=$?; RUN=
    [ "${rc:-0}" -eq 3 ]
    [ "$(cat "$T/out")" = "first
second" ]
    grep -qx "cairn attach: shell on rank 0: exit 3" "$T/err"
    # ended: the output from the journal, the same exit code
    run cairn attach 706
    [ "$status" -eq 3 ]
    [ "$(grep -c -x -e first -e second <<<"$output")" -eq 2 ]
    run cairn attach 7999
    [ "$status" -eq 1 ]
    [ "$output" = "cairn attach: job 7999 not found" ]
}

@test "a bad output or output-offsets is refused, nothing started" {
    R='{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["n0"]}}'
    J='{"version":1,"tasks":[{"command":["true"]}]}'
    run rpc start "{\"id\":708,\"userid\":$(id -u),\"jobspec\":$J,\"R\":$R,\"output\":1}"
    [ "$status" -eq 1 ]
    [ "$output" = "error 22 output: must be true or false" ]
    run rpc start "{\"id\":708,\"reattach\":true,\"output\":true,\"output-offsets\":{\"0\":{\"stdout\":-1}}}"
    [ "$status" -eq 1 ]
    [ "$output" = 'error 22 output-offsets: must map ranks to {"stdout": N, "stderr": N}, N >= 0' ]
    run rpc start "{\"id\":708,\"reattach\":true,\"output\":true,\"output-offsets\":{\"x\":{}}}"
    [ "$output" = 'error 22 output-offsets: must map ranks to {"stdout": N, "stderr": N}, N >= 0' ]
    run cairn eventlog 708
    [ "$status" -eq 1 ]
}

@test "resume of a job that is not held: EINVAL, nothing changes" {
    cairn run --detach --id 709 -- sleep 30 2>/dev/null
    wait_event 709 10 start
    n=$(cairn eventlog 709 --json | wc -l)
    run rpc resume '{"id": 709}'
    [ "$status" -eq 1 ]
    [ "$output" = "error 22 job 709 is not held" ]
    [ "$(cairn eventlog 709 --json | wc -l)" -eq "$n" ]
    cairn cancel 709
    wait_event 709 10 clean
}

# issue 35: a hold-start job (cairn-exec.so's) waits for its client's word
# (resume with ready); without a prolog it is held at once, for the word
# alone. A plain resume does not stand in for the word; the word for a job
# that is not hold-start changes nothing.
@test "resume with ready: the word a hold-start job waits for" {
    R='{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["n0"]}}'
    J='{"version":1,"tasks":[{"command":["true"]}],"attributes":{"system":{"cairn":{"hold-start":true}}}}'
    # its first response is `start`, after the word: in the background
    rpc start "{\"id\":710,\"userid\":$(id -u),\"jobspec\":$J,\"R\":$R}" \
        >"$BATS_TEST_TMPDIR/start-710" 2>&1 &
    RPC_PID=$!
    wait_event 710 10 hold
    [ "$(events_named 710 hold)" = '{"ranks":"0","wait":"ready"}' ]
    run rpc resume '{"id": 710, "ready": "yes"}'
    [ "$status" -eq 1 ]
    [[ "$output" == "error 71 resume: "* ]]
    n=$(cairn eventlog 710 --json | wc -l)
    run rpc resume '{"id": 710}'
    [ "$output" = "{}" ]
    [ "$(event_names 710 | tr , '\n' | tail -n 1)" = resume ]
    [ "$(cairn eventlog 710 --json | wc -l)" -eq $((n + 1)) ]
    run rpc resume '{"id": 710, "ready": true}'
    [ "$output" = "{}" ]
    wait_event 710 10 clean
    wait "$RPC_PID"
    [ "$(jq -r .type "$BATS_TEST_TMPDIR/start-710")" = start ]
    [ "$(events_named 710 resume | paste -sd' ')" = '{} {"ready":true}' ]
    [[ "$(event_names 710)" == *hold,resume,resume,start,* ]]
    # not hold-start: the word changes nothing, and says so with success
    cairn run --detach --id 711 -- sleep 30 2>/dev/null
    wait_event 711 10 start
    n=$(cairn eventlog 711 --json | wc -l)
    run rpc resume '{"id": 711, "ready": true}'
    [ "$output" = "{}" ]
    [ "$(cairn eventlog 711 --json | wc -l)" -eq "$n" ]
    cairn cancel 711
    wait_event 711 10 clean
}
