#!/usr/bin/env bats
# Confinement (issue 17): with cgroup-parent, each process runs in a cgroup
# v2 of its own, so what a command starts in a new session with a scrubbed
# environment (which escapes the process-group kill and the execid sweep)
# is killed with it. Needs root and a writable cgroup v2 hierarchy.
load lib

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    CG=$(findmnt -n -t cgroup2 -o TARGET | head -1)
    [ -n "$CG" ] || skip "no cgroup v2 hierarchy mounted"
    mkdir "$CG/cairn-probe-$$" 2>/dev/null || skip "cannot make cgroups in $CG"
    rmdir "$CG/cairn-probe-$$"
    T=$BATS_TEST_TMPDIR
    TAG=$$.$RANDOM # in the escapee's argv: what pgrep looks for
    PARENT=$CG/cairn-test-$$
    # a command that leaves a process in a new session, with no
    # CAIRN_EXECID in its environment, then ends
    ESCAPE="setsid env -i sleep 3$TAG & sleep 0.3; echo left"
}

teardown() {
    [ -n "${TAG:-}" ] || return 0 # skipped
    cairnd_stop
    pkill -x -f "sleep 3$TAG" 2>/dev/null || true
    [ -z "${PARENT:-}" ] || rmdir "$PARENT"/* "$PARENT" 2>/dev/null || true
    assert_no_leftover
}


escapee_alive() {
    pgrep -x -f "sleep 3$TAG" >/dev/null
}

@test "a process that left its session and environment dies with its command" {
    cairnd_start "{\"cgroup-parent\": \"$PARENT\"}"
    run cairn stats
    [[ "$output" == *"confine   cgroup"* ]]
    run cairn run --id 1 -- sh -c "$ESCAPE"
    [ "$status" -eq 0 ]
    [[ "$output" == *left* ]]
    run escapee_alive
    [ "$status" -ne 0 ]
    # its cgroup is gone too
    [ -z "$(ls -d "$PARENT"/*-*-*-*-* 2>/dev/null)" ]
    # and on a cancel, the same
    cairn run --detach --id 2 -- sh -c "setsid env -i sleep 3$TAG & wait"
    wait_event 2 10 start
    for i in $(seq 1 100); do escapee_alive && break; sleep 0.05; done
    escapee_alive
    cairn cancel 2
    wait_event 2 10 clean
    run escapee_alive
    [ "$status" -ne 0 ]
}

@test "without cgroups the same process escapes (the check can fail)" {
    cairnd_start '{}'
    run cairn stats
    [[ "$output" == *"confine   process-group"* ]]
    run cairn run --id 3 -- sh -c "$ESCAPE"
    [ "$status" -eq 0 ]
    escapee_alive
    pkill -x -f "sleep 3$TAG"
}

@test "a cgroup-parent that is not cgroup v2: process groups, and cairnd says why" {
    cairnd_start "{\"cgroup-parent\": \"$T/plain\"}"
    grep -q "cgroup-parent $T/plain: not a cgroup v2 directory: using process groups" \
        "$T/cairnd.log"
    run cairn stats --json
    echo "$output" | jq -e '.confinement == "process-group"'
    PARENT=
}
