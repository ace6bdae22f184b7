#!/usr/bin/env bats
# The node's supervisor (cairn-shim --spawner, shim/serve.c) runs every
# command. When it dies, its commands are not lost: they outlive it, cairnd
# (a subreaper, its parent) inherits them and sees them through with their
# real statuses, and a new supervisor starts the next commands.
load lib

teardown() {
    unset CAIRN_CRASH_AT
    cairnd_stop
    assert_no_leftover
}

supervisor_pid() {
    pgrep -P "$CAIRND_PID" -x cairn-shim
}

@test "supervisor killed while commands run: real statuses, then a new one" {
    cairnd_start '{}'
    old=$(supervisor_pid)
    [ -n "$old" ]
    cairn run -N 2 --id 1 -- sh -c 'sleep 1; exit 5' 3>&- &
    wait_event 1 5 proc-spawn
    kill -9 "$old"
    wait_event 1 10 clean
    # exit 5 on both ranks, as if nothing had happened
    [ "$(events_named 1 finish | jq .status)" -eq $((5 << 8)) ]
    [ "$(events_named 1 proc-lost | wc -l)" -eq 0 ]
    grep -q "the supervisor (pid $old) died; cairnd takes over its 2 command(s)" \
        "$BATS_TEST_TMPDIR/cairnd.log"
    new=$(supervisor_pid)
    [ -n "$new" ] && [ "$new" != "$old" ]
    run cairn run --id 2 -- sh -c 'exit 7'
    [ "$status" -eq 7 ]
    kill -0 "$CAIRND_PID"
}

# The two instants the supervisor can die at while a command is a zombie:
# before its exit record (cairnd writes it) and after (it stands).
@test "supervisor dead before the exit record is written: cairnd writes it" {
    CAIRN_CRASH_AT=supervisor.exitfile.before:1 cairnd_start '{}'
    old=$(supervisor_pid)
    run cairn run --id 3 -- sh -c 'exit 3'
    [ "$status" -eq 3 ]
    [ "$(events_named 3 proc-lost | wc -l)" -eq 0 ]
    grep -q "the supervisor (pid $old) died" "$BATS_TEST_TMPDIR/cairnd.log"
    run cairn run --id 4 -- true
    [ "$status" -eq 0 ]
}

@test "supervisor dead after the exit record, before the reap: the file stands" {
    CAIRN_CRASH_AT=supervisor.reap.before:1 cairnd_start '{}'
    old=$(supervisor_pid)
    run cairn run --id 5 -- sh -c 'echo out; exit 4'
    [ "$status" -eq 4 ]
    grep -qx out <<<"$output"   # its output too
    [ "$(events_named 5 proc-lost | wc -l)" -eq 0 ]
    grep -q "the supervisor (pid $old) died" "$BATS_TEST_TMPDIR/cairnd.log"
}

# The command's marker names its process: a restarted cairnd finds the
# command of an intent by it, even after the command exec'd with another
# environment (no CAIRN_EXECID left to scan /proc for).
@test "an intent's command found through its marker after a restart" {
    CAIRN_CRASH_AT=exec.spawn.after:1 cairnd_start '{}'
    cairn run --id 6 -- env -i /bin/sh -c 'sleep 1; exit 6' 3>&- &
    for _ in $(seq 1 100); do kill -0 "$CAIRND_PID" 2>/dev/null || break; sleep 0.05; done
    ! kill -0 "$CAIRND_PID" 2>/dev/null
    CAIRND_PID=
    marker=$(ls "$STATEDIR"/exits/*.started)
    read -r pid ns <"$marker"
    kill -0 "$pid"
    [ "$ns" -gt 0 ]
    unset CAIRN_CRASH_AT
    cairnd_launch
    wait_event 6 10 clean
    [ "$(events_named 6 finish | jq .status)" -eq $((6 << 8)) ]
    [ "$(events_named 6 proc-lost | wc -l)" -eq 0 ]
    [ "$(events_named 6 proc-spawn | jq .pid)" -eq "$pid" ]
}

# cairnd sends a job's spawn requests without waiting (blocking on a full
# socket), while the supervisor answers each one and reports each end. If
# the supervisor also blocked on its full socket, each would wait on the
# other for ever: 256 ranks with 8 KiB of environment fill both ways.
@test "a burst of large requests: neither side blocks on the other" {
    cairnd_start '{}'
    PAD=$(head -c 8192 /dev/zero | tr '\0' x) \
        timeout 60 "$B/cairn" --statedir "$STATEDIR" run --id 9 -N 256 -- true
    wait_event 9 10 clean
    [ "$(events_named 9 proc-exit | wc -l)" -eq 256 ]
    kill -0 "$CAIRND_PID"
}

# The supervisor caps output files by name and keeps nothing open per
# command. It held both output files of each, so a node's live commands
# were bounded by half its descriptor limit: 10,000 of them failed with
# "Too many open files" under a hard limit of 20,000.
@test "the supervisor holds no descriptor per live command" {
    cairnd_start '{}'
    sup=$(supervisor_pid)
    cairn run -N 40 --id 7 -- sh -c 'sleep 2; echo ok' >"$BATS_TEST_TMPDIR/out" 3>&- &
    wait_event 7 10 start
    sleep 0.5
    n=$(ls "/proc/$sup/fd" | wc -l)
    echo "supervisor descriptors with 40 live commands: $n" >&2
    [ "$n" -lt 16 ]
    wait_event 7 15 clean
    [ "$(grep -cx ok "$BATS_TEST_TMPDIR/out")" -eq 40 ]
    [ "$(events_named 7 finish | jq .status)" -eq 0 ]
}
