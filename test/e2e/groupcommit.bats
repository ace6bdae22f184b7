#!/usr/bin/env bats
# Group commit (journal.commit-interval): while many processes are live, a
# batch of events waits until the interval has passed since the last
# commit; with few live, every turn commits at once. A 1 s interval makes
# the wait plain to see.
load lib

setup() {
    cairnd_start '{"journal": {"commit-interval": "1s"}}'
}

teardown() {
    [ -n "${BIG:-}" ] && kill "$BIG" 2>/dev/null || true
    cairnd_stop
    assert_no_leftover
}

# Run `cairn run -- true`; MS is how long it took, in milliseconds.
time_true() {
    local t0 t1
    t0=$(date +%s%N)
    cairn run -- true >/dev/null
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
    echo "took ${MS} ms"
}

@test "few live processes: a job commits each step at once" {
    time_true
    [ "$MS" -lt 1000 ]
}

@test "20 live processes: a job's steps wait for the interval, and it ends" {
    cairn run --id 700 -N 20 -- sleep 60 >/dev/null 2>&1 3>&- &
    BIG=$!
    wait_event 700 10 start
    # accept, spawn, exit, clean: each waits for 1 s after the last commit
    # at most, and the job's spawn and exit come within a second of it
    time_true
    [ "$MS" -ge 1000 ]
    cairn cancel 700
    wait "$BIG" || true
    BIG=
    wait_event 700 10 clean
}
