#!/usr/bin/env bats
# The rank-0 broker SIGKILLed and restarted under a real 4-broker Flux
# instance (issue 14; flux-core #4108).
#
# The instance (lib.bash, sysflux_*) is a `flux start --test-size=4`
# bootstrapped from a config file, as flux-core's "system" test personality
# is, with a persistent content store (-Sstatedir) and
# `[kvs] checkpoint-period = "100ms"`. SIGKILL of the rank-0 broker goes
# through flux-start's start.kill; start.run starts it again on the same
# statedir, and it restores the KVS from its last checkpoint ("restored KVS
# from checkpoint", then "Flux was not shut down properly"); the
# job-manager replays the jobs' eventlogs. Ranks 1-3 stay up while rank 0
# is down; when the new rank 0 comes up it disconnects them (a restarted
# parent always restarts its children in Flux's TBON), they exit 1 and
# are started again. A PMI-bootstrapped --test-size=4 instance cannot do
# this: flux-start kills ranks 1-3 once rank 0 is gone and a restarted
# rank 0 could not rejoin them.
#
# 1. Stock Flux: job-exec + perilog.so, per-rank prolog/epilog blocked on
#    a gate file. Killed during the prolog the job stays in RUN for ever;
#    during the epilog it stays in CLEANUP for ever (#4108), until an
#    operator posts the missing *-finish event (the workaround, also run).
# 2. cairn: cairn-exec.so as job-exec, cairnd's own per-rank prolog and
#    epilog. The rank-0 broker is killed during the prolog, the shells and
#    the epilog; cairnd keeps running. The job must end (never stuck),
#    every command run exactly once, the ranks freed once and only after
#    the epilog.
# 3. The same with cairnd SIGKILLed together with the broker, both
#    restarted.
#
# Every wait is bounded; each test takes well under 60 s.
load lib

setup() {
    D=$BATS_TEST_TMPDIR
}

teardown() {
    sysflux_stop || true
    cairnd_stop
    [ -z "${SYSFLUX:-}" ] || rm -rf "$SYSFLUX"
    assert_no_leftover
}

# Count lines of runlog that start with "$1 ".
runs() {
    local n
    n=$(grep -c "^$1 " "$D/runlog" 2>/dev/null)
    echo "${n:-0}"
}

# Wait (at most 30 s) until runlog has $2 lines for phase $1.
wait_phase() {
    local i
    for i in $(seq 1 600); do
        [ "$(runs "$1")" -ge "$2" ] && return 0
        sleep 0.05
    done
    echo "no $2 x $1 in runlog: $(cat "$D/runlog" 2>/dev/null)" >&2
    return 1
}

# Names of Flux job $1's events, comma separated.
flux_events() {
    fx job eventlog "$1" | cut -d' ' -f2 | paste -sd, -
}

# How many events named $2 Flux job $1 has.
flux_count() {
    fx job eventlog "$1" | cut -d' ' -f2 | grep -cx "$2" || true
}

# The job's state, e.g. RUN, CLEANUP, INACTIVE.
flux_state() {
    fx jobs -no '{state}' "$1"
}

# ---- 1. stock Flux: job-exec + perilog.so ----

# perilog.so with a per-rank prolog and epilog: "$D/gate.sh PHASE" logs
# "PHASE RANK" to runlog, waits while hold-PHASE exists, then logs
# "PHASE RANK done" (whoever is still alive to see the gate open).
stock_conf() {
    cat >"$D/gate.sh" <<'SH'
#!/bin/sh
d=$(dirname "$0")
r=$(flux getattr rank 2>/dev/null)
echo "$1 $r" >>"$d/runlog"
while [ -e "$d/hold-$1" ]; do sleep 0.05; done
echo "$1 $r done" >>"$d/runlog"
exit 0
SH
    chmod +x "$D/gate.sh"
    sysflux_conf "[job-manager]
plugins = [{load = \"perilog.so\"}]

[job-manager.prolog]
command = [\"$D/gate.sh\", \"prolog\"]
per-rank = true

[job-manager.epilog]
command = [\"$D/gate.sh\", \"epilog\"]
per-rank = true"
}

# Hold PHASE, run a 4-rank job, SIGKILL the rank-0 broker while all four
# PHASE processes run, restart the instance, open the gate. Sets id.
stock_crash_during() {
    local phase=$1
    stock_conf
    touch "$D/hold-$phase"
    sysflux_start
    id=$(fx submit -N4 true)
    wait_phase "$phase" 4
    sleep 0.5   # > checkpoint-period: the *-start event is in the KVS
    echo "--- before the crash:"; fx job eventlog "$id"
    broker0_crash
    broker0_restart
    rm "$D/hold-$phase"
    # the one PHASE process that outlives its broker (rank 0's, reparented
    # to init) sees the gate open and exits, unwatched
    local i
    for i in $(seq 1 100); do
        grep -q "^$phase 0 done" "$D/runlog" && break
        sleep 0.05
    done
    echo "--- runlog:"; cat "$D/runlog"
}

@test "stock Flux, rank-0 broker SIGKILLed during the prolog: the job stays in RUN (#4108)" {
    stock_crash_during prolog
    # bounded: the job never starts
    run fx job wait-event -t 5 "$id" start
    [ "$status" -ne 0 ]
    echo "--- after the restart, gate open, 5 s later:"; fx job eventlog "$id"
    fx jobs -a -o '{id} {state} {result}'
    fx resource list
    [ "$(flux_state "$id")" = RUN ]
    [[ "$(flux_events "$id")" == *,alloc,prolog-start ]]
    # what this Flux does with the prolog processes: rank 0's survived the
    # broker's SIGKILL and finished unseen; ranks 1-3's were killed with
    # their brokers (never "done")
    grep -qx "prolog 0 done" "$D/runlog"
    [ "$(grep -c '^prolog [1-3] done' "$D/runlog")" -eq 0 ]
    # the operator's workaround: post the missing prolog-finish; the job
    # then starts, runs, and its epilog runs
    fx post-job-event "$id" prolog-finish status=0
    fx job wait-event -t 20 "$id" clean >/dev/null
    fx job eventlog "$id"
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
}

@test "stock Flux, rank-0 broker SIGKILLed during the epilog: the job stays in CLEANUP (#4108)" {
    stock_crash_during epilog
    run fx job wait-event -t 5 "$id" clean
    [ "$status" -ne 0 ]
    echo "--- after the restart, gate open, 5 s later:"; fx job eventlog "$id"
    fx jobs -a -o '{id} {state} {result}'
    fx resource list
    [ "$(flux_state "$id")" = CLEANUP ]
    # job-exec's final release came; perilog's epilog-finish never will
    [[ "$(flux_events "$id")" == *,start,finish,epilog-start,release ]]
    # the ranks stay allocated
    [ "$(fx resource list -s allocated -no '{nnodes}')" -eq 4 ]
    grep -qx "epilog 0 done" "$D/runlog"
    [ "$(grep -c '^epilog [1-3] done' "$D/runlog")" -eq 0 ]
    # the workaround: post the missing epilog-finish; free and clean follow
    fx post-job-event "$id" epilog-finish status=0
    fx job wait-event -t 20 "$id" clean >/dev/null
    fx job eventlog "$id"
    [ "$(fx resource list -s free -no '{nnodes}')" -eq 4 ]
}

# ---- 2, 3. cairn: cairn-exec.so as job-exec ----


# Hold PHASE, run a 4-rank job through cairnd, SIGKILL the rank-0 broker
# (and cairnd too if $2 = both) while PHASE runs on all ranks, restart,
# open the gate (with $3 = gate-while-down: before the restart, once
# cairnd has seen PHASE end). The job must end, and end once. Sets id,
# cid.
cairn_crash_during() {
    local phase=$1 both=${2:-} when=${3:-}
    touch "$D/hold-$phase"
    cairnd_start "$(gated_conf)"
    sysflux_conf "$(sysflux_cairn_toml)"
    sysflux_start
    id=$(eval fx submit -N4 "$(shell_cmd)")
    wait_phase "$phase" 4
    sleep 0.5   # > checkpoint-period
    echo "--- before the crash:"; fx job eventlog "$id"
    broker0_crash
    if [ "$both" = both ]; then
        cairnd_crash
        cairnd_launch
    fi
    if [ "$when" = gate-while-down ]; then
        rm "$D/hold-$phase"
        local i c
        c=$(cairn jobs -a --json | jq -r .id | tail -n 1)
        for i in $(seq 1 200); do
            [[ "$(event_names "$c")" == *${phase}-finish* ]] && break
            sleep 0.05
        done
        sleep 0.5 # what cairnd does next happens while the broker is down
    fi
    broker0_restart
    rm -f "$D/hold-$phase"
    run fx job wait-event -t 25 "$id" clean
    echo "--- after the restart:"; fx job eventlog "$id"
    fx jobs -a -o '{id} {state} {result} {returncode}'
    echo "--- runlog:"; cat "$D/runlog"
    cid=$(cairn jobs -a --json | jq -r .id | tail -n 1)
    echo "--- cairnd: $(event_names "$cid")"; cairn eventlog "$cid" --json | jq -c "select(.name == \"log\" or .name == \"proc-exit\") | .context" | cut -c1-300
    echo "--- module:"
    grep -E 'job-exec\.(err|info)|job-manager\.(err|info)\[0\]: restart' \
        "$D/flux.log" || true

    # never stuck
    [ "$(flux_state "$id")" = INACTIVE ]
    # each command exactly once
    for p in prolog shell epilog; do
        [ "$(runs $p)" -eq 4 ]
    done
    # the ranks went back once, after the epilog, and are free
    local ev
    ev=$(flux_events "$id")
    [ "$(flux_count "$id" free)" -eq 1 ]
    [[ "$ev" == *epilog-finish,*free* ]]
    [ "$(flux_count "$id" prolog-start)" -eq "$(flux_count "$id" prolog-finish)" ]
    [ "$(flux_count "$id" epilog-start)" -eq "$(flux_count "$id" epilog-finish)" ]
    [ "$(fx resource list -s free -no '{nnodes}')" -eq 4 ]
    # cairnd's side: done, one final release, nothing lost twice
    [[ "$(event_names "$cid")" == *,release,clean ]]
    [ "$(events_named "$cid" release | wc -l)" -eq 1 ]
}

# The prolog and epilog outlive the broker (they are cairnd's), so nothing
# of the job's truth is lost: it must complete.
@test "cairn, rank-0 broker SIGKILLed during the prolog: the job completes" {
    cairn_crash_during prolog
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
}

# flux-shell (without --reconnect) does not outlive its broker, and every
# broker restarts: the job may fail or get an exception, never stick, and
# its epilog must still run before the ranks are freed.
# issue 37: the prolog ended while the broker was down; cairnd started the
# shells at once, they failed without their brokers, and the job failed
# with no exception. Its shells now wait for the module (hold, resume).
@test "cairn, the prolog ends while the rank-0 broker is down: the shells wait for it, the job completes" {
    cairn_crash_during prolog "" gate-while-down
    [[ "$(event_names "$cid")" == *,prolog-finish,hold,*resume,start,* ]]
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
}

@test "cairn, rank-0 broker SIGKILLed while the shells run: the job ends, freed after its epilog" {
    cairn_crash_during shell
    # Issue 37: rank 0's flux-shell loses its broker and exits 0 while its
    # task (a process group of its own) runs on. Its supervisor kills the
    # task before the end is told; the job is not a success.
    [ "$(events_named "$cid" proc-exit | jq -s '[.[] | select(.leftover > 0)] | length')" -ge 1 ]
    [[ "$(events_named "$cid" exception | jq -r '"\(.type) \(.severity) \(.note)"')" == *"exec 0 shell on rank "*" while "*" of its session still ran; they were killed"* ]]
    [ "$(fx jobs -no '{result}' "$id")" != COMPLETED ]
    # issue 33: the shells had passed their barriers long before; the
    # restarted broker's new exec.eventlog does not say so, and the module
    # must not claim they were in it
    events_named "$cid" exception | jq -r .note >&2
    [ -z "$(events_named "$cid" exception | jq -r .note | grep 'start barrier')" ]
}

@test "cairn, rank-0 broker SIGKILLed during the epilog: the job completes" {
    cairn_crash_during epilog
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
}

@test "cairn, broker and cairnd SIGKILLed at once during the prolog: the job completes" {
    cairn_crash_during prolog both
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
}

@test "cairn, broker and cairnd SIGKILLed at once while the shells run: the job ends, freed after its epilog" {
    cairn_crash_during shell both
}

@test "cairn, broker and cairnd SIGKILLed at once during the epilog: the job completes" {
    cairn_crash_during epilog both
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
}

# Issue 37 (the torture test found it): a job on ranks 1-3 whose tasks end
# while the rank-0 broker is down. Their shells, whose brokers are still up
# but cut off from rank 0, cannot report the tasks' ends; when the new rank
# 0 disconnects their brokers they exit 1 ("No route to host"), with no
# task left behind. That 1 is not the tasks' (they exited 0): the job must
# fail with an exception that says the shells lost contact, not end with
# a returncode nobody earned.
@test "cairn, tasks end while the rank-0 broker is down: their shells lost contact, the job fails saying so" {
    cairnd_start '{}'
    sysflux_conf "$(sysflux_cairn_toml)"
    sysflux_start
    touch "$D/hold-shell"
    id=$(eval fx submit -N3 --requires=rank:1-3 "$(shell_cmd)")
    wait_phase shell 3
    sleep 0.5   # > checkpoint-period: `start` is in the KVS
    broker0_crash
    rm "$D/hold-shell"  # the tasks exit 0; their shells cannot say so
    sleep 1
    broker0_restart
    run fx job wait-event -t 30 "$id" clean
    echo "--- after the restart:"; fx job eventlog "$id"
    fx jobs -a -o '{id} {state} {result} {returncode}'
    cid=$(cairn jobs -a --json | jq -r .id | tail -n 1)
    echo "--- cairnd: $(event_names "$cid")"
    events_named "$cid" shell-end
    grep -E "job-exec" "$D/flux.log" | tail -5
    [ "$(flux_state "$id")" = INACTIVE ]
    [ "$(runs shell)" -eq 3 ]
    # no task was left behind: not the leftover rule's exception
    [ "$(events_named "$cid" proc-exit | jq -s '[.[] | select(.leftover > 0)] | length')" -eq 0 ]
    [ "$(fx jobs -no '{result}' "$id")" = FAILED ]
    [[ "$(fx job eventlog "$id")" == *'exception type="exec" severity=0 '*'note="lost contact with job shell on fake'[123]' (rank '[123]'): its broker restarted while it ran"'* ]]
    # (cairnd journals it too while it still has the job; here it may have
    # ended it already: no epilog)
}

# Partial release (cairn-flux-housekeeping): the rank-0 broker SIGKILLed
# while rank 3's epilog holds it in housekeeping. Flux does not keep
# housekeeping across a restart, so the job is inactive and the scheduler
# would count rank 3 free; the module drains it until cairnd releases it.
@test "cairn partial release, rank-0 broker SIGKILLed while one rank's epilog runs: that rank is not handed out before its epilog ends" {
    local c
    c=$(script slow3.sh <<'SH'
#!/bin/sh
d=$(dirname "$0")
echo "$CAIRN_PHASE $CAIRN_RANK" >>"$d/runlog"
[ "$CAIRN_RANK" = 3 ] && while [ -e "$d/hold-epilog" ]; do sleep 0.05; done
exit 0
SH
)
    touch "$D/hold-epilog"
    cairnd_start "{\"epilog\": {\"command\": [\"$c\"], \"per-rank\": true},
                   \"release-after\": \"0\"}"
    sysflux_conf "$(sysflux_cairn_toml)
[job-manager.housekeeping]
command = [\"$B/cairn-flux-housekeeping\", \"statedir=$STATEDIR\"]
release-after = \"0\""
    sysflux_start
    id=$(fx submit -N4 true)
    fx job wait-event -t 30 "$id" clean >/dev/null
    wait_phase epilog 4
    local i
    for i in $(seq 1 100); do
        [ "$(fx resource list -s free -no '{nnodes}')" = 3 ] && break
        sleep 0.1
    done
    [ "$(fx resource list -s free -no '{nnodes}')" = 3 ]
    sleep 0.5   # > checkpoint-period
    broker0_crash
    broker0_restart
    # rank 3 is drained by the module, with the reason
    for i in $(seq 1 100); do
        fx resource drain -no '{ranks}' | grep -qx 3 && break
        sleep 0.1
    done
    fx resource drain -no '{ranks} {reason}'
    [[ "$(fx resource drain -no '{ranks} {reason}')" == "3 cairn: job ƒ"*" still running (housekeeping lost in a broker restart)" ]]
    # a 4-node job cannot start while the epilog runs
    id2=$(fx submit -N4 true)
    run fx job wait-event -t 2 "$id2" alloc
    [ "$status" -ne 0 ]
    rm "$D/hold-epilog"
    # released in cairnd: undrained, and the waiting job runs
    fx job wait-event -t 30 "$id2" clean >/dev/null
    [ "$(fx jobs -no '{result}' "$id2")" = COMPLETED ]
    [ -z "$(fx resource drain -no '{ranks}')" ]
    [ "$(runs epilog)" -eq 8 ]
}

# A job Flux lost entirely: submitted after the last KVS checkpoint (here
# there is none), then the rank-0 broker killed. The restarted job-manager
# has never heard of it; cairnd still runs its prolog. The module must end
# it in cairnd and keep its ranks out of the scheduler until cairnd has
# released them.
@test "cairn, a job Flux lost entirely in a broker restart: ended in cairnd, its ranks drained until released" {
    touch "$D/hold-prolog"
    cairnd_start "$(gated_conf)"
    SYSFLUX_CHECKPOINT=1h sysflux_conf "$(sysflux_cairn_toml)"
    sysflux_start
    id=$(eval fx submit -N4 "$(shell_cmd)")
    wait_phase prolog 4
    broker0_crash
    broker0_restart
    cid=$(cairn jobs -a --json | jq -r .id | tail -n 1)
    # Flux does not know the job any more
    [ -z "$(fx jobs -a -no '{id}')" ]
    local i
    for i in $(seq 1 200); do
        [[ "$(event_names "$cid")" == *,clean ]] && break
        sleep 0.1
    done
    echo "--- cairnd: $(event_names "$cid")"; cairn eventlog "$cid" --json | jq -c "select(.name == \"log\" or .name == \"proc-exit\") | .context" | cut -c1-300
    grep -E 'job-exec\.(err|info)' "$BATS_TEST_TMPDIR/flux.log" || true
    [[ "$(event_names "$cid")" == *,clean ]]
    [ "$(events_named "$cid" exception | jq -r .note)" = \
        "Flux has no record of this job (lost in a broker restart)" ]
    # the prolog was cancelled, no shell ran, the epilog did, once a rank
    [ "$(runs shell)" -eq 0 ]
    [ "$(runs epilog)" -eq 4 ]
    # drained while cairnd still held the ranks, undrained after
    grep -q "resource.drain 0-3" "$BATS_TEST_TMPDIR/flux.log"
    for i in $(seq 1 100); do
        [ -z "$(fx resource drain -no '{ranks}')" ] && break
        sleep 0.1
    done
    [ -z "$(fx resource drain -no '{ranks}')" ]
    [ "$(fx resource list -s free -no '{nnodes}')" -eq 4 ]
    rm -f "$D/hold-prolog"
}
