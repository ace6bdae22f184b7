#!/usr/bin/env bats
# Failure policies through a real cairnd (issue 4): timeouts, kill
# escalation, time limits, exceptions from outside, critical ranks and
# tolerated prolog failures.
load lib

teardown() {
    cairnd_stop
    [ -n "${STRAY:-}" ] && kill -9 $STRAY 2>/dev/null
    assert_no_leftover
}

prolog_exits() { # a per-rank prolog exiting with the code in file exit-RANK
    script prolog.sh <<'SH'
#!/bin/sh
f="$(dirname "$0")/exit-$CAIRN_RANK"
[ -e "$f" ] && exit "$(cat "$f")"
exit 0
SH
}

@test "prolog timeout: term, fatal prolog exception 'timed out', epilog runs" {
    P=$(script p.sh <<'SH'
#!/bin/sh
sleep 30
SH
)
    E=$(script e.sh <<'SH'
#!/bin/sh
exit 0
SH
)
    cairnd_start "{\"prolog\": {\"command\": [\"$P\"], \"timeout\": \"0.5s\", \"kill-timeout\": \"0.2s\"},
                   \"epilog\": {\"command\": [\"$E\"]}}"
    run cairn run -N 2 --id 201 -- true
    [ "$status" -ne 0 ]
    exc=$(events_named 201 exception)
    [ "$(jq -r .type <<<"$exc")" = prolog ]
    [ "$(jq .severity <<<"$exc")" -eq 0 ]
    [ "$(jq -r .note <<<"$exc")" = "prolog failed on ranks 0-1: timed out" ]
    [ "$(events_named 201 proc-signal | jq -r .reason | head -1)" = timeout ]
    wait_event 201 5 clean
    [ "$(events_named 201 epilog-finish | jq .status)" -eq 0 ]
}

@test "epilog timeout: severity-2 epilog exception and a drain; job ends 0" {
    E=$(script e.sh <<'SH'
#!/bin/sh
[ "$CAIRN_RANK" = 1 ] && sleep 30
exit 0
SH
)
    cairnd_start "{\"epilog\": {\"command\": [\"$E\"], \"per-rank\": true, \"timeout\": \"0.5s\", \"kill-timeout\": \"0.2s\"}, \"release-after\": 0}"
    run cairn run -N 2 --id 202 -- true
    [ "$status" -eq 0 ]
    exc=$(events_named 202 exception)
    [ "$(jq -r .type <<<"$exc")" = epilog ]
    [ "$(jq .severity <<<"$exc")" -eq 2 ]
    [ "$(jq -r .note <<<"$exc")" = "epilog failed on rank 1: timed out" ]
    [ "$(events_named 202 drain | jq -r .ranks)" = 1 ]
}

@test "a shell that ignores SIGTERM is killed after exec.kill-timeout" {
    cairnd_start '{"exec": {"kill-timeout": "0.3s"}}'
    cairn run --id 203 -- sh -c 'trap "" TERM; while :; do sleep 0.05; done' 3>&- &
    wait_event 203 5 proc-spawn
    sleep 0.2
    cairn cancel 203
    wait_event 203 10 clean
    run sh -c "$B/cairn --statedir $STATEDIR eventlog 203 --json | jq -r 'select(.name==\"proc-signal\") | \"\(.context.signum) \(.context.reason)\"'"
    [ "${lines[0]}" = "15 terminate" ]
    [ "${lines[1]}" = "9 kill" ]
    [ "$(events_named 203 finish | jq .status)" -eq 9 ]
    # a cancel without a note is logged without a dangling colon
    grep -q 'cairnd info: job 203 (ƒ4W): exception cancel severity 0$' "$BATS_TEST_TMPDIR/cairnd.log"
    # one line at the job's accept and one at its clean, with its id in
    # decimal and in Flux's F58 (issue 34)
    grep -q 'cairnd info: job 203 (ƒ4W): accepted: uid 0, rank(s) 0$' "$BATS_TEST_TMPDIR/cairnd.log"
    grep -q 'cairnd info: job 203 (ƒ4W): clean: finish status 9$' "$BATS_TEST_TMPDIR/cairnd.log"
}

# Job $1 under cairnd config $2: a shell that ignores SIGTERM and the
# kill signal SIGUSR1 (as good as unkillable), canceled; waits for its
# clean. STRAY: the shell's pid, for the test to kill.
cancel_unkillable() {
    cairnd_start "$2"
    cairn run --id "$1" -- sh -c 'trap "" TERM USR1; echo $$ > '"$BATS_TEST_TMPDIR"'/pid; while :; do sleep 0.05; done' 3>&- &
    wait_event "$1" 5 proc-spawn
    sleep 0.2
    cairn cancel "$1"
    wait_event "$1" 10 clean
    STRAY=$(cat "$BATS_TEST_TMPDIR/pid")
}

@test "an unkillable shell: given up after max-kill-count, rank drained, job ends" {
    cancel_unkillable 204 '{"exec": {"kill-timeout": "0.2s", "kill-signal": "SIGUSR1", "max-kill-count": 2}}'
    # job-exec's schedule: a kill every kill-timeout, direct kills from
    # 5 x kill-timeout on, given up with the max-kill-count-th
    [ "$(events_named 204 proc-signal | jq -r '"\(.signum)/\(.reason)"' | paste -sd,)" = "15/terminate,10/kill,10/kill,10/kill,10/kill,10/kill-shell,10/kill-shell" ]
    [ "$(events_named 204 proc-lost | jq -r .note)" = "unkillable user processes: exceeded max kill count (6 kill signals)" ]
    [ "$(events_named 204 drain | jq -r .ranks)" = 0 ]
    [ "$(events_named 204 drain | jq -r .reason)" = "shell for job ƒ4X: unkillable user processes: exceeded max kill count (6 kill signals)" ]
    kill -9 "$STRAY"
}

@test "an unkillable shell: given up at max-kill-timeout, whatever max-kill-count" {
    cancel_unkillable 205 '{"exec": {"kill-timeout": "0.2s", "kill-signal": "SIGUSR1", "max-kill-count": 1, "max-kill-timeout": "1.5s"}}'
    # past the first direct kill (at 1 s; the second at 1.4 s), which
    # max-kill-count 1 alone would have made the last; given up 1.5 s
    # after the term signal
    [ "$(events_named 205 proc-signal | jq -r .reason | paste -sd,)" = "terminate,kill,kill,kill,kill,kill-shell,kill-shell" ]
    [ "$(events_named 205 proc-lost | jq -r .note)" = "unkillable user processes: exceeded max-kill-timeout (1.5 s, 6 kill signals)" ]
    t0=$(cairn eventlog 205 --json | jq -r 'select(.name == "proc-signal") | .timestamp' | head -1)
    t1=$(cairn eventlog 205 --json | jq -r 'select(.name == "proc-lost") | .timestamp')
    awk -v a="$t0" -v b="$t1" 'BEGIN { d = b - a; exit !(d >= 1.5 && d < 2.5) }'
    kill -9 "$STRAY"
}

@test "time limit from R: timeout exception, SIGALRM first" {
    cairnd_start '{"exec": {"kill-timeout": "0.3s"}}'
    run cairn run -t 0.5s --id 205 -- sleep 30
    [ "$status" -ne 0 ]
    exc=$(events_named 205 exception)
    [ "$(jq -r .type <<<"$exc")" = timeout ]
    [ "$(jq .severity <<<"$exc")" -eq 0 ]
    [ "$(events_named 205 proc-signal | jq -r .signum | head -1)" -eq 14 ]
    [ "$(events_named 205 finish | jq .status)" -eq 14 ]
}

@test "time limit from an expiration request" {
    cairnd_start '{}'
    cairn run --id 206 -- sleep 30 3>&- &
    wait_event 206 5 proc-spawn
    exp=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 0.3 }')
    run rpc expiration "{\"id\": 206, \"expiration\": $exp}"
    [ "$status" -eq 0 ]
    wait_event 206 10 clean
    [ "$(events_named 206 exception | jq -r .type)" = timeout ]
}

@test "an exception's wait_status becomes the finish status" {
    cairnd_start '{}'
    cairn run --id 207 -- sleep 30 3>&- &
    wait_event 207 5 proc-spawn
    run rpc exception '{"id": 207, "type": "cancel", "severity": 0, "note": "by test", "wait_status": 3840}'
    [ "$status" -eq 0 ]
    wait_event 207 10 clean
    [ "$(events_named 207 finish | jq .status)" -eq 3840 ]
}

@test "a severity>0 exception is recorded and kills nothing" {
    cairnd_start '{}'
    cairn run --id 208 -- sh -c "while [ ! -e $BATS_TEST_TMPDIR/go ]; do sleep 0.05; done" 3>&- &
    wait_event 208 5 proc-spawn
    run rpc exception '{"id": 208, "type": "notice", "severity": 3, "note": "fyi"}'
    echo "$output"
    [ "$status" -eq 0 ]
    touch "$BATS_TEST_TMPDIR/go"
    wait_event 208 10 clean
    [ "$(events_named 208 proc-signal | wc -l)" -eq 0 ]
    [ "$(events_named 208 finish | jq .status)" -eq 0 ]
}

# A shell is lost when nobody can record its exit status: here the
# supervisor cannot write its exit record (an injected fault).
@test "losing a shell on a non-critical rank: node-failure, job goes on" {
    CAIRN_FAULT=shim.exitfile.write:1 cairnd_start '{}'
    cairn run -N 2 --id 209 -- sh -c "while [ ! -e $BATS_TEST_TMPDIR/go\$CAIRN_RANK ]; do sleep 0.05; done" 3>&- &
    wait_event 209 5 start
    run rpc critical-ranks '{"id": 209, "ranks": "0"}'
    [ "$status" -eq 0 ]
    for i in $(seq 50); do [ "$(events_named 209 proc-spawn | wc -l)" -eq 2 ] && break; sleep 0.05; done
    touch "$BATS_TEST_TMPDIR/go1"
    wait_event 209 10 drain
    touch "$BATS_TEST_TMPDIR/go0"
    wait_event 209 10 clean
    exc=$(events_named 209 exception)
    [ "$(jq -r .type <<<"$exc")" = node-failure ]
    [ "$(jq .severity <<<"$exc")" -eq 2 ]
    [[ "$(jq -r .note <<<"$exc")" == "shell on rank 1: its supervisor could not record its exit status (code 3)" ]]
    [ "$(events_named 209 drain | jq -r .ranks)" = 1 ]
    [ "$(events_named 209 finish | jq .status)" -eq 0 ]
}

@test "losing a shell on a critical rank is fatal" {
    CAIRN_FAULT=shim.exitfile.write:1 cairnd_start '{}'
    cairn run -N 2 --id 210 -- sh -c "[ \$CAIRN_RANK = 1 ] || exec sleep 30" 3>&- &
    wait_event 210 10 clean
    exc=$(events_named 210 exception | head -1)
    [ "$(jq -r .type <<<"$exc")" = exec ]
    [ "$(jq .severity <<<"$exc")" -eq 0 ]
}

@test "tolerable prolog exit within the allowance: job runs on the rest, ends 0" {
    P=$(prolog_exits)
    echo 42 >"$BATS_TEST_TMPDIR/exit-1"
    cairnd_start "{\"prolog\": {\"command\": [\"$P\"], \"per-rank\": true, \"tolerable-exit-codes\": [42]}, \"release-after\": -1}"
    run cairn run -N 3 --prolog-failures-allowed 1 --id 211 -- sh -c 'echo $CAIRN_JOB_RANKS'
    [ "$status" -eq 0 ]
    exc=$(events_named 211 exception)
    [ "$(jq -r .type <<<"$exc")" = prolog ]
    [ "$(jq .severity <<<"$exc")" -eq 2 ]
    [ "$(jq -r .ranks <<<"$exc")" = 1 ]
    [ "$(events_named 211 drain | jq -r .ranks)" = 1 ]
    [ "$(events_named 211 proc-intent | jq -r 'select(.phase=="shell") | .ranks' | paste -sd,)" = "0,2" ]
    events_named 211 log | grep -q '"data":"0,2\\n"'
    # rank 1 released early (non-final), the others at the end
    [ "$(events_named 211 release | paste -sd' ')" = '{"ranks":"1","final":false} {"ranks":"0,2","final":true}' ]
}

@test "one tolerable failure too many is fatal" {
    P=$(prolog_exits)
    echo 42 >"$BATS_TEST_TMPDIR/exit-0"
    echo 42 >"$BATS_TEST_TMPDIR/exit-1"
    cairnd_start "{\"prolog\": {\"command\": [\"$P\"], \"per-rank\": true, \"tolerable-exit-codes\": [42]}}"
    run cairn run -N 3 --prolog-failures-allowed 1 --id 212 -- true
    [ "$status" -ne 0 ]
    [ "$(events_named 212 exception | jq -r .note)" = "prolog failed on 2 ranks (0-1), more than the 1 allowed" ]
    [ "$(events_named 212 start | wc -l)" -eq 0 ]
}

@test "a non-tolerable prolog exit is fatal even with an allowance" {
    P=$(prolog_exits)
    echo 1 >"$BATS_TEST_TMPDIR/exit-2"
    cairnd_start "{\"prolog\": {\"command\": [\"$P\"], \"per-rank\": true, \"tolerable-exit-codes\": [42]}}"
    run cairn run -N 3 --prolog-failures-allowed 2 --id 213 -- true
    [ "$status" -ne 0 ]
    [ "$(events_named 213 exception | jq -r .note)" = "prolog failed on rank 2: exit 1" ]
}

@test "fail-ranks from an outside service during the prolog" {
    P=$(script p.sh <<'SH'
#!/bin/sh
while [ ! -e "$(dirname "$0")/go" ]; do sleep 0.05; done
exit 0
SH
)
    cairnd_start "{\"prolog\": {\"command\": [\"$P\"], \"per-rank\": true}}"
    cairn run -N 3 --prolog-failures-allowed 1 --id 214 -- true 3>&- &
    wait_event 214 5 prolog-start
    run rpc fail-ranks '{"id": 214, "ranks": "2", "note": "rabbit mount failed"}'
    [ "$status" -eq 0 ]
    touch "$BATS_TEST_TMPDIR/go"
    wait_event 214 10 clean
    [ "$(events_named 214 exception | jq -r .ranks)" = 2 ]
    [[ "$(events_named 214 exception | jq -r .note)" == *": rabbit mount failed" ]]
    [ "$(events_named 214 drain | jq -r .ranks)" = 2 ]
    [ "$(events_named 214 finish | jq .status)" -eq 0 ]
    # after the prolog, fail-ranks is refused with a reason
    run rpc fail-ranks '{"id": 214, "ranks": "1"}'
    [ "$status" -ne 0 ]
    [[ "$output" == *"already clean"* ]]
}
