#!/usr/bin/env bats
# Processes a command leaves in its session (issue 37): a task in a process
# group of its own, as flux-shell makes each task, outlives a kill of the
# command's group. The supervisor kills the whole session once the
# command's process has ended, before its end is told, and the record says
# how many were left; a shell that left some did not succeed.
load lib

teardown() {
    cairnd_stop
    assert_no_leftover
}

# True while pid $1 runs (a zombie has ended).
alive() {
    [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" | grep -q '^[ZX]'
}

# Wait until file $1 holds a pid; print it.
pid_in() {
    local i
    for i in $(seq 1 200); do
        [ -s "$1" ] && { cat "$1"; return 0; }
        sleep 0.05
    done
    return 1
}

@test "cancel: a task in its own group that ignores SIGTERM dies before the job ends" {
    cairnd_start '{"exec": {"kill-timeout": "0.3s"}}'
    f=$BATS_TEST_TMPDIR/child
    cairn run --id 701 -- bash -c "set -m; (trap '' TERM; exec sleep 300) & echo \$! > $f; wait" >/dev/null 2>&1 3>&- &
    RUN=$!
    child=$(pid_in "$f")
    alive "$child"
    run cairn cancel 701
    [ "$status" -eq 0 ]
    wait_event 701 10 clean
    wait "$RUN" || true
    run alive "$child"
    [ "$status" -ne 0 ]
    # the record said one was left; a cancel explains it: no new exception
    [ "$(cairn eventlog 701 --json | jq -c 'select(.name=="proc-exit") | .context.leftover')" = 1 ]
    [ "$(events_named 701 exception | jq -r .type)" = cancel ]
}

@test "cancel escalated to SIGKILL: what the shell left in its session is killed too" {
    cairnd_start '{"exec": {"kill-timeout": "0.3s"}}'
    f=$BATS_TEST_TMPDIR/child
    cairn run --id 702 -- bash -c "trap '' TERM; set -m; sleep 300 & echo \$! > $f; wait" >/dev/null 2>&1 3>&- &
    RUN=$!
    child=$(pid_in "$f")
    run cairn cancel 702
    [ "$status" -eq 0 ]
    wait_event 702 10 clean
    wait "$RUN" || true
    run alive "$child"
    [ "$status" -ne 0 ]
    run sh -c "$B/cairn --statedir $STATEDIR eventlog 702 --json | jq -r 'select(.name==\"proc-signal\") | .context.signum'"
    [ "${lines[0]}" = 15 ]
    [ "${lines[1]}" = 9 ]
    [ "$(events_named 702 finish | jq .status)" -eq 9 ]
}

@test "a shell that exits 0 while a task of its session runs on: task killed, fatal exception" {
    cairnd_start '{"release-after": 0}'
    f=$BATS_TEST_TMPDIR/child
    run cairn run --id 703 -- bash -c "set -m; (exec sleep 300) & echo \$! > $f; exit 0"
    [ "$status" -ne 0 ]
    child=$(cat "$f")
    wait_event 703 10 clean
    run alive "$child"
    [ "$status" -ne 0 ]
    [ "$(cairn eventlog 703 --json | jq -c 'select(.name=="proc-exit") | .context | [.status, .leftover]')" = "[0,1]" ]
    exc=$(events_named 703 exception)
    [ "$(jq -r .type <<<"$exc")" = exec ]
    [ "$(jq -r .severity <<<"$exc")" = 0 ]
    [[ "$(jq -r .note <<<"$exc")" == "shell on rank 0 exited ("*") while 1 other process of its session still ran; they were killed" ]]
}

@test "the epilog starts only once the shell's session is empty" {
    E=$(script epi.sh <<SH
#!/bin/sh
ps -eo sid,args > $BATS_TEST_TMPDIR/at-epilog
SH
)
    cairnd_start "{\"epilog\": {\"command\": [\"$E\"]}}"
    f=$BATS_TEST_TMPDIR/child
    name=cairn-left-$$-$RANDOM
    run cairn run --id 704 -- bash -c "set -m; (exec -a $name sleep 300) & echo \$! > $f; exit 0"
    [ "$status" -ne 0 ]
    wait_event 704 10 clean
    [ -s "$BATS_TEST_TMPDIR/at-epilog" ]
    # (the cairn CLI's own args name it too: only a process called so)
    run grep -cE "^ *[0-9]+ $name" "$BATS_TEST_TMPDIR/at-epilog"
    [ "$output" = 0 ]
}

@test "a command whose session is empty at its end: no leftover, success" {
    cairnd_start '{}'
    run cairn run --id 705 -- bash -c "set -m; (exit 0) & wait; exit 0"
    [ "$status" -eq 0 ]
    wait_event 705 10 clean
    [ "$(cairn eventlog 705 --json | jq -c 'select(.name=="proc-exit") | .context.leftover')" = null ]
    [ "$(events_named 705 exception | wc -l)" -eq 0 ]
}

@test "the kill escalation reaches the tasks in groups of their own while the shell lives" {
    # kill-signal SIGUSR1, which the shell ignores and its task does not
    cairnd_start '{"exec": {"kill-timeout": "0.3s", "kill-signal": "SIGUSR1", "max-kill-count": 3}}'
    f=$BATS_TEST_TMPDIR/child
    cairn run --id 706 -- bash -c "trap '' TERM USR1; set -m; (trap - USR1; trap '' TERM; exec sleep 300) & echo \$! > $f; while :; do sleep 0.05; done" >/dev/null 2>&1 3>&- &
    RUN=$!
    child=$(pid_in "$f")
    run cairn cancel 706
    [ "$status" -eq 0 ]
    for i in $(seq 1 100); do
        alive "$child" || break
        sleep 0.05
    done
    run alive "$child"
    [ "$status" -ne 0 ]
    # by the kill signal, while the shell still ran: not given up on yet
    [ "$(events_named 706 proc-lost | wc -l)" -eq 0 ]
    grep -Eq "cairnd info: [0-9a-f-]+: signal 10 to [0-9]+ other process\(es\) of its session" "$BATS_TEST_TMPDIR/cairnd.log"
    wait_event 706 15 clean
    wait "$RUN" || true
    # given up on as unkillable (its rank drained), as it is: ours to end
    kill -9 "$(events_named 706 proc-spawn | jq .pid)"
}

@test "a task that survives the session's kill holds the end; a cancel gives up on it and drains" {
    # the fault keeps the supervisor from killing the session's processes,
    # as if the task were in uninterruptible sleep
    CAIRN_FAULT='shim.session.kill:*:1' cairnd_start '{"exec": {"kill-timeout": "0.2s", "max-kill-count": 2}}'
    f=$BATS_TEST_TMPDIR/child
    cairn run --id 707 -- bash -c "set -m; (exec sleep 300) & echo \$! > $f; exit 0" >/dev/null 2>&1 3>&- &
    RUN=$!
    child=$(pid_in "$f")
    sleep 3 # past the supervisor's 2 s of kills
    alive "$child"
    # the shell has ended, yet its end is not told while its task runs
    [ "$(events_named 707 proc-exit | wc -l)" -eq 0 ]
    [ "$(events_named 707 finish | wc -l)" -eq 0 ]
    run cairn cancel 707
    [ "$status" -eq 0 ]
    wait_event 707 15 clean
    wait "$RUN" || true
    [[ "$(events_named 707 proc-lost | jq -r .note)" == "unkillable user processes: "* ]]
    [[ "$(events_named 707 drain | jq -r .reason)" == *"for job $(f58 707)"*"unkillable"* ]]
    kill -9 "$child"
}
