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

# Per-job limits (issue 30): one user's process storm must not use up the
# tasks, or the memory, every other spawn needs. A site that asks for a
# limit never runs without it: where the controller is not there, cairnd
# refuses to start and says which and where.
@test "cgroup-pids-max where the pids controller is not available: cairnd refuses, naming it" {
    mkdir -p "$PARENT"
    grep -qw pids "$PARENT/cgroup.controllers" && skip "pids is available here"
    run "$B/cairnd" --statedir "$T/s1" -c <(echo "{\"cgroup-parent\": \"$PARENT\", \"cgroup-pids-max\": 64}")
    [ "$status" -eq 1 ]
    [[ "$output" == *"cgroup-pids-max: the pids controller is not available under cgroup-parent $PARENT (its cgroup.controllers: \""* ]]
    run "$B/cairnd" --statedir "$T/s2" -c <(echo '{"cgroup-memory-max": "1G"}')
    [ "$status" -eq 1 ]
    [[ "$output" == *"cgroup-memory-max needs a usable cgroup-parent (none is set)"* ]]
}

@test "cgroup-pids-max and cgroup-memory-max hold each job shell's cgroup; another job starts" {
    mkdir -p "$PARENT"
    for c in pids memory; do
        grep -qw "$c" "$PARENT/cgroup.controllers" \
            || skip "no $c controller in $PARENT's cgroup v2 (only: $(cat "$PARENT/cgroup.controllers"))"
    done
    cairnd_start "{\"cgroup-parent\": \"$PARENT\", \"cgroup-pids-max\": 16,
        \"cgroup-memory-max\": \"64M\"}"
    # the shell's cgroup carries the limits, and a storm stops at them
    run cairn run -- sh -c "cg=$CG\$(grep '^0::' /proc/self/cgroup | cut -d: -f3)"'
        cat "$cg/pids.max" "$cg/memory.max"
        n=0; for i in $(seq 1 40); do sleep 2 & n=$((n + 1)); done 2>/dev/null
        echo started $(jobs -p | wc -l)'
    [ "${lines[0]}" = 16 ]
    [ "${lines[1]}" = $((64 << 20)) ]
    started=$(echo "$output" | awk '/^started/ {print $2}')
    [ "$started" -lt 16 ]
    # meanwhile, and after, other jobs start as usual
    run cairn run -- true
    [ "$status" -eq 0 ]
}

# The shim writes a limit before anything joins the cgroup, and only the
# two files it knows: a failed write starts nothing and says why.
@test "cairn-shim --cgroup-limit: pids.max or memory.max only; a failed write runs nothing" {
    mkdir -p "$PARENT" "$T/x"
    id=$(cat /proc/sys/kernel/random/uuid)
    run env CAIRN_EXECID="$id" "$B/cairn-shim" --exitdir "$T/x" \
        --cgroup "$PARENT/$id" --cgroup-limit cgroup.procs=1 -- true
    [ "$status" -eq 2 ]
    [[ "$output" == *"--cgroup-limit must be pids.max=N or memory.max=N, N a number > 0"* ]]
    grep -qw pids "$PARENT/cgroup.subtree_control" && skip "pids is enabled here"
    run env CAIRN_EXECID="$id" "$B/cairn-shim" --exitdir "$T/x" \
        --cgroup "$PARENT/$id" --cgroup-limit pids.max=5 -- touch "$T/ran"
    [ "$status" -eq 0 ]
    [ ! -e "$T/ran" ]
    [ "$(jq -r .error "$T/x/$id")" = "cgroup limit $PARENT/$id/pids.max: No such file or directory" ]
    [ "$(jq -r .status "$T/x/$id")" -eq 32512 ]
    rmdir "$PARENT/$id" 2>/dev/null || true
}
