#!/usr/bin/env bats
# Torture under a real Flux (issue 37): jobs stream through a restartable
# 4-broker instance (lib.bash, sysflux_*) whose job-exec is cairn-exec.so,
# with cairnd's per-rank prolog and epilog, while cairnd, the rank-0
# broker, or both are SIGKILLed at random and started again. Then, with
# the kills over, every job must end, and:
#   - no prolog, epilog or task ran twice;
#   - no epilog started while a task of its job was still alive;
#   - no task outlived its time limit or its cancel by more than the
#     grace (the kill escalation, plus a restart or two);
#   - every job ended once; one that got no exception has the result its
#     tasks earned (the exit code each job chose), and each exception
#     says what happened (a note, or its type for a cancel);
#   - no rank is left allocated, and no process of the test is left.
# A Flux 0.88 fault that stock Flux hits too (the scheduler's allocation
# reaches the KVS checkpoint but the job-manager's alloc event does not;
# after the restart the queue stops) is recognised and named, and the test
# is skipped for it: it is not cairn's to fix.
#
# TORTURE_SECONDS (default 90) is how long the kills go on.
load lib

TORTURE_LIMIT=2 # s, the time limit of one job in five
GRACE=15        # s a task may outlive its limit or cancel (the kill
                # escalation, plus a restart or two)

setup() {
    D=$BATS_TEST_TMPDIR
    mkdir -p "$D/tasks" "$D/beat"
    export FLUX # for the prolog, epilog and tasks
}

teardown() {
    [ -z "${SUBMITTER:-}" ] || { touch "$D/stop-submit"; wait "$SUBMITTER" || true; }
    sysflux_stop || true
    cairnd_stop
    [ -z "${SYSFLUX:-}" ] || rm -rf "$SYSFLUX"
    assert_no_leftover
}

# Per-rank prolog and epilog: "PHASE JOB RANK" to runlog, a short random
# sleep; the epilog first logs "early JOB RANK PID" for each task of its
# job still alive.
torture_conf() {
    local c
    c=$(script perilog.sh <<'SH'
#!/bin/bash
d=$(dirname "$0")
j=$("$FLUX" job id --to=dec "$FLUX_JOB_ID")
echo "$CAIRN_PHASE $j $CAIRN_RANK" >>"$d/runlog"
if [ "$CAIRN_PHASE" = epilog ]; then
    for f in "$d/tasks/$j".*; do
        [ -e "$f" ] || continue
        p=$(cat "$f")
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null \
            | grep -q "^TORTURE_JOB=$j$" && echo "early $j $CAIRN_RANK $p" >>"$d/runlog"
    done
fi
sleep "0.$((RANDOM % 4))"
exit 0
SH
)
    echo "{\"prolog\": {\"command\": [\"$c\"], \"per-rank\": true},
           \"epilog\": {\"command\": [\"$c\"], \"per-rank\": true}}"
}

# The task: task.sh SECONDS CODE. Logs "task JOB TASKRANK", runs SECONDS
# (writing the time to beat/JOB.TASKRANK every half second: the test
# checks it against the job's time limit or cancel), exits CODE.
task_script() {
    script task.sh <<'SH'
#!/bin/bash
d=$(dirname "$0")
j=$("$FLUX" job id --to=dec "$FLUX_JOB_ID")
export TORTURE_JOB=$j
exec bash -c '
d=$0 j=$1 secs=$2 code=$3
echo $$ >"$d/tasks/$j.$FLUX_TASK_RANK"
echo "task $j $FLUX_TASK_RANK" >>"$d/runlog"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
    date +%s >"$d/beat/$j.$FLUX_TASK_RANK"
    sleep 0.5
done
exit "$code"' "$d" "$j" "$1" "$2"
SH
}

# Submit jobs until $D/stop-submit exists: 1-4 nodes, 1-4 s, exit code 0
# or 3 (in the job's name, "cCODE"), one in five with a 2 s time limit
# shorter than its 30 s run (named "timeout"), one in seven canceled a
# second after it is submitted. A submit that fails (the broker is down)
# is not tried again.
submitter() {
    local task=$1 n=0 id secs code name args
    while [ ! -e "$D/stop-submit" ]; do
        n=$((n + 1))
        secs=$((1 + RANDOM % 4)) code=$(((RANDOM % 2) * 3))
        name=c$code args=()
        if [ $((n % 5)) -eq 0 ]; then
            secs=30 name=timeout args=(-t "${TORTURE_LIMIT}s")
        fi
        if id=$(fx submit -N$((1 + RANDOM % 4)) --job-name="$name" "${args[@]}" \
                   "$task" "$secs" "$code"); then
            echo "$id" >>"$D/submitted"
            if [ $((n % 7)) -eq 0 ]; then
                sleep 1
                fx cancel "$id" || true
            fi
        fi
        sleep 0.$((3 + RANDOM % 5))
    done
}

# Kill at random for $1 seconds: cairnd, the rank-0 broker, or both.
killer() {
    local until=$((SECONDS + $1)) what
    while [ "$SECONDS" -lt "$until" ]; do
        sleep $((2 + RANDOM % 4)).$((RANDOM % 10))
        what=$((RANDOM % 3))
        echo "--- kill: $(date +%T.%N | cut -c1-12) $([ $what = 0 ] && echo cairnd || { [ $what = 1 ] && echo broker || echo both; })" >&2
        case $what in
            0) cairnd_crash; cairnd_launch ;;
            1) broker0_crash; broker0_restart ;;
            2) broker0_crash; cairnd_crash; cairnd_launch; broker0_restart ;;
        esac
        echo "kill $what" >>"$D/kills"
    done
}

# What became of job $1: its Flux eventlog, exec eventlog, and cairnd's.
explain_job() {
    echo "--- job $1:"
    fx job eventlog "$1" || true
    echo "--- exec:"
    fx job eventlog -p exec "$1" || true
    echo "--- cairnd:"
    cairn eventlog "$(fx job id --to=dec "$1")" --json 2>&1 \
        | jq -c '[(.timestamp | strftime("%T")), .name, (.context | del(.R, .jobspec))]' | cut -c1-300 || true
    echo "--- runlog:"
    grep " $(fx job id --to=dec "$1") " "$D/runlog" || true
}

# Jobs not yet inactive (Flux ids).
pending_jobs() {
    fx jobs -a -no '{id} {state}' 2>/dev/null | awk '$2 != "INACTIVE" { print $1 }'
}

# The Flux 0.88 fault: a job the job-manager holds in SCHED whose R the
# scheduler has written to the KVS (it was allocated; the alloc event was
# lost in the restart).
flux_alloc_lost() {
    local id
    for id in $(fx jobs -a -no '{id} {state}' | awk '$2 == "SCHED" { print $1 }'); do
        fx job info "$id" R >/dev/null 2>&1 && { echo "$id"; return 0; }
    done
    return 1
}

@test "torture: jobs stream while cairnd and the rank-0 broker are SIGKILLed at random; each job ends once, as earned" {
    local seconds=${TORTURE_SECONDS:-90} task i id lost
    cairnd_start "$(torture_conf)"
    sysflux_conf "$(sysflux_cairn_toml)"
    SYSFLUX_TIMEOUT=$((seconds + 500)) SYSFLUX_EXIT_TIMEOUT=$((seconds + 500)) sysflux_start
    task=$(task_script)
    submitter "$task" 2>>"$D/submit.log" &
    SUBMITTER=$!
    killer "$seconds"
    KILLS_OVER=$(date +%T)
    touch "$D/stop-submit"
    wait "$SUBMITTER"
    SUBMITTER=
    # every job ends: the longest runs 30 s into a 2 s limit, plus grace;
    # one still going after a minute is shown (once: one run in eight
    # had a job in CLEANUP past two minutes, not seen since). At most 4
    # minutes by the clock, and no longer once the Flux fault below has
    # stopped the queue: a slow machine's `flux jobs` takes a second,
    # and this wait once outlasted the instance's own timeout.
    local slow="" deadline=$((SECONDS + 240))
    i=0
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ -z "$(pending_jobs)" ] && break
        i=$((i + 1))
        if [ $((i % 20)) -eq 0 ] && flux_alloc_lost >/dev/null; then
            break
        fi
        if [ "$SECONDS" -ge $((deadline - 180)) ] && [ -z "$slow" ]; then
            slow=$(pending_jobs)
            for id in $slow; do explain_job "$id" | sed 's/^/# slow: /' >&3; done
        fi
        sleep 0.5
    done
    # the figures, also in the TAP output (fd 3) of a run that passes
    {
        echo "# kills: $(sort "$D/kills" | uniq -c | awk '{ printf "%s%d %s", s, $1, ($3 == 0 ? "cairnd" : $3 == 1 ? "broker" : "both"); s = ", " }')"
        echo "# jobs: $(wc -l <"$D/submitted") submitted; $(fx jobs -a -no '{result}' | sort | uniq -c | awk '{ printf "%s%d %s", s, $1, $2; s = ", " }')"
    } | tee /dev/fd/3
    if lost=$(flux_alloc_lost); then
        fx jobs -a -no '{id} {state} {name}' | grep -v INACTIVE || true
        skip "Flux 0.88 fault, not cairn's: job $lost allocated in the KVS, its alloc event lost in a broker restart (the queue stops)"
    fi
    local stuck
    stuck=$(pending_jobs)
    [ -z "$stuck" ] || {
        echo "kills over at $KILLS_OVER; now $(date +%T)"
        fx jobs -a -no '{id} {state} {name}' | grep -v INACTIVE
        fx queue status || true
        fx resource list || true
        for id in $stuck; do explain_job "$id"; done
        grep -E "job-exec|job-manager|sched" "$D/flux.log" | grep -v "\.debug" | tail -40
        false
    }
    [ "$(wc -l <"$D/submitted")" -ge 20 ]

    # nothing ran twice
    dup=$(awk '$1 == "prolog" || $1 == "epilog" || $1 == "task" { print $1, $2, $3 }' "$D/runlog" | sort | uniq -d)
    [ -z "$dup" ] || { echo "ran twice: $dup"; false; }
    # no epilog while a task of its job lived
    run grep -E '^early ' "$D/runlog"
    [ "$status" -eq 1 ] || {
        echo "$output"
        explain_job "$(echo "$output" | head -1 | cut -d' ' -f2)"
        false
    }

    # each job: ended once, with its result or an exception that says why
    # one line a job, fields split by US (\x1f: no field is ever empty
    # by collapse, as with a tab)
    fx jobs -a --json | jq -r '.jobs[] | [.id, .name, .returncode, (.exception.occurred // false), .exception.type // "", .exception.note // ""] | map(tostring) | join("\u001f")' >"$D/jobs.txt"
    echo "# exceptions:" | tee /dev/fd/3
    awk -F'\037' '$4 == "true" { print $5 ": " $6 }' "$D/jobs.txt" \
        | sed 's/ƒ[A-Za-z0-9]*/ƒ…/g; s/fake[0-9]/fakeN/g; s/rank [0-9]/rank N/g' \
        | sort | uniq -c | sed 's/^/#  /' | tee /dev/fd/3
    while IFS=$'\037' read -r id name rc exc type note; do
        ev=$(fx job eventlog "$id" | cut -d' ' -f2)
        [ "$(grep -cx clean <<<"$ev")" -eq 1 ] || { explain_job "$id"; false; }
        [ "$(grep -cx finish <<<"$ev")" -le 1 ] || { explain_job "$id"; false; }
        # no time limit or cancel ignored: the tasks' last heartbeat
        beat=$(cat "$D/beat/$(fx job id --to=dec "$id")".* 2>/dev/null | sort -n | tail -1)
        if [ -n "$beat" ] && { [ "$type" = cancel ] || [ "$type" = timeout ]; }; then
            t=$(fx job eventlog -f json "$id" | jq -r --arg t "$type" \
                'select(.name == "exception" and .context.type == $t) | .timestamp' | head -1)
            [ "$type" = cancel ] || t=$(fx job eventlog -f json "$id" | jq -r \
                "select(.name == \"start\") | .timestamp + $TORTURE_LIMIT")
            awk -v b="$beat" -v t="$t" -v g="$GRACE" 'BEGIN { exit !(b <= t + g) }' \
                || { echo "$id: a task lived past its $type"; explain_job "$id"; false; }
        fi
        if [ "$exc" = false ]; then
            [ "$name" != timeout ] || { echo "$id: a timed job with no exception"; false; }
            [ "$rc" = "${name#c}" ] || { echo "$id ($name): returncode $rc"; explain_job "$id"; false; }
        else
            # a cancel says what it is by its type; others say why
            [ -n "$note" ] || [ "$type" = cancel ] \
                || { echo "$id: a $type exception without a note"; false; }
        fi
    done <"$D/jobs.txt"
    # no rank held
    [ "$(fx resource list -s allocated -no '{nnodes}')" -eq 0 ]
    fx resource drain -no '{ranks} {reason}'
}
