#!/usr/bin/env bats
# The journal inspection commands (jobs, eventlog, ranks, procs, verify,
# dump/export, stats, purge) on journals written by a real cairnd, while
# it runs and after it stopped; verify catching journals corrupted on
# purpose with the LMDB tools.
load lib

# A per-rank prolog that fails on rank R with code C when the file
# $T/fail-R holds C (3 is tolerable), and a per-rank epilog; both print.
setup() {
    T=$BATS_TEST_TMPDIR
    PROLOG=$(script prolog <<EOF
#!/bin/sh
if [ -f "$T/fail-\$CAIRN_RANK" ]; then
    echo "no gpu on rank \$CAIRN_RANK" >&2
    exit \$(cat "$T/fail-\$CAIRN_RANK")
fi
echo "prolog ok on rank \$CAIRN_RANK"
EOF
    )
    EPILOG=$(script epilog <<EOF
#!/bin/sh
echo "epilog cleaning rank \$CAIRN_RANK"
EOF
    )
    cairnd_start "{\"release-after\": 0,
        \"prolog\": {\"command\": [\"$PROLOG\"], \"per-rank\": true,
                     \"tolerable-exit-codes\": [3]},
        \"epilog\": {\"command\": [\"$EPILOG\"], \"per-rank\": true}}"
}

teardown() {
    # a test that failed half-way leaves jobs running: end them
    local id
    for id in $(cairn jobs -n -d 2>/dev/null | awk '{ print $1 }'); do
        [ -n "${CAIRND_PID:-}" ] && cairn cancel "$id" 2>/dev/null || true
        wait_event "$id" 20 clean 2>/dev/null || true
    done
    if [ -n "${RUN_PID:-}" ]; then
        kill "$RUN_PID" 2>/dev/null || true
        wait "$RUN_PID" 2>/dev/null || true
    fi
    cairnd_stop
    assert_no_leftover
}

# cairn run ARGS... in the background (RUN_PID).
run_bg() {
    ("$B/cairn" --statedir "$STATEDIR" run "$@" >"$T/run.out" 2>&1 || true) \
        3>&- &
    RUN_PID=$!
}

run_bg_wait() {
    wait "$RUN_PID" 2>/dev/null || true
    RUN_PID=
}

# Wait until the journal has job $1 (cairn jobs -a lists it).
wait_job() {
    local i
    for i in $(seq 1 200); do
        cairn jobs -a -n -d 2>/dev/null | grep -q "^$1 " && return 0
        sleep 0.05
    done
    echo "job $1 never appeared in the journal" >&2
    return 1
}

# Wait up to $2 seconds until job $1 has an event named $3. (lib's
# wait_event relies on jq -e, whose status in jq 1.6 only reflects the
# last input line: it works for the last event only.)
wait_event() {
    local i
    for i in $(seq 1 $(($2 * 20))); do
        cairn eventlog --json "$1" 2>/dev/null | grep -q "\"name\":\"$3\"" \
            && return 0
        sleep 0.05
    done
    echo "job $1: no $3 event after $2s; events: $(event_names "$1")" >&2
    return 1
}

# The pid of the shim of job $1's process of phase $2 on rank $3.
shim_pid() {
    cairn eventlog --json "$1" | jq -rs --arg ph "$2" --arg r "$3" '
        (map(select(.name == "proc-intent" and .context.phase == $ph
                    and .context.ranks == $r)) | .[0].context.execid) as $x
        | map(select(.name == "proc-spawn" and .context.execid == $x))
        | .[0].context.pid'
}

# Copy the journal of $1 into a new state dir $2 through mdb_dump, with
# the dump edited by the awk program $3 on the way.
copy_journal() {
    mkdir -m 700 -p "$2/journal"
    mdb_dump -a "$1/journal" | awk "$3" >"$T/dump.txt"
    mdb_load -f "$T/dump.txt" "$2/journal" 2>/dev/null
}

# The hex key of event seq $2 of job $1 in the "events" database.
event_key() {
    printf ' %016x%08x' "$1" "$2"
}

@test "jobs lists active jobs, --all the finished ones too" {
    run cairn run --id 11 -- true
    [ "$status" -eq 0 ]
    run_bg --id 12 -N 2 -- sleep 30
    wait_event 12 10 start
    u=$(id -un)
    run cairn jobs
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^ID\ +USER\ +STATE\ +RESULT\ +EXIT\ +RANKS\ +RUNTIME\ +COMMAND$ ]]
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[1]}" =~ ^ƒD\ +$u\ +run\ +-\ +-\ +2\ \(0-1\)\ +[0-9.]+s\ +sleep\ 30$ ]]
    run cairn jobs --all
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 3 ] || { echo "$output"; cat "$T/run.out"; false; }
    [[ "${lines[1]}" =~ ^ƒC\ +$u\ +done\ +completed\ +0\ +1\ \(0\)\ +[0-9.]+s\ +true$ ]]
    run cairn jobs --state done -d
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[1]}" =~ ^11\  ]]
    run cairn jobs --state run --json
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    echo "$output" | jq -e '.id == 12 and .f58 == "ƒD" and .state == "run"
        and .active and .ranks == "0-1" and .released == ""'
    run cairn jobs --state bogus
    [ "$status" -eq 2 ]
    [[ "$output" == *"--state: expected new, prolog, starting, held, run, cleanup, done or invalid, got 'bogus'"* ]]
    cairn cancel 12
    run_bg_wait
}

@test "eventlog says why a job failed, on which rank, and what its prolog and epilog printed" {
    echo 4 >"$T/fail-1"
    run cairn run --id 21 -N 2 -- true
    [ "$status" -ne 0 ]
    run cairn eventlog 21
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^\+0\.000s\ accept\ time=[0-9T:+-]+\ userid=[0-9]+\ ranks=0-1\ command=true$ ]]
    [[ "$output" == *"exception type=prolog severity=0 note=\"prolog failed on rank 1: exit 4\""* ]]
    [[ "$output" == *"log stream=stderr rank=1 phase=prolog"$'\n'"        | no gpu on rank 1"* ]]
    [[ "$output" == *"log stream=stdout rank=0 phase=prolog"$'\n'"        | prolog ok on rank 0"* ]]
    [[ "$output" =~ proc-exit\ execid=[0-9a-f-]+\ status=1024\ \(exit\ 4\)\ \[prolog\ rank\ 1\] ]]
    [[ "$output" == *"prolog-finish description=cairn.prolog status=1024 (exit 4)"* ]]
    [[ "$output" == *"        | epilog cleaning rank 1"* ]]
    [[ "${lines[-1]}" =~ ^\+[0-9.]+s\ clean$ ]]
    # every line but the indented output starts with a relative time
    [ -z "$(echo "$output" | grep -v '^        | ' \
        | grep -v '^+[0-9]*\.[0-9]\{3\}s [a-z-]*')" ]
    # --json: the raw RFC 18 lines, the same as dump's events
    run cairn eventlog --json 21
    [ "$status" -eq 0 ]
    echo "$output" | jq -e -s 'length > 10 and .[0].name == "accept"
        and .[-1].name == "clean" and all(has("timestamp") and has("name"))'
    [ "$output" = "$(cairn dump 21 \
        | sed 's/^{"id":21,"seq":[0-9]*,"event"://; s/}$//')" ]
}

@test "eventlog --follow prints a running job's events as they come, until clean" {
    run_bg --id 31 -- sleep 2
    wait_job 31
    run timeout 30 "$B/cairn" eventlog --follow 31 --statedir "$STATEDIR"
    [ "$status" -eq 0 ]
    [[ "$output" =~ \ start$'\n' ]]
    [[ "$output" == *"finish status=0 (exit 0)"* ]]
    [[ "${lines[-1]}" =~ ^\+[0-9.]+s\ clean$ ]]
    # it saw the job live: the sleep took ~2s between start and finish
    [[ "$output" =~ \+([0-9]+)\.[0-9]+s\ finish ]]
    [ "${BASH_REMATCH[1]}" -ge 2 ]
    run_bg_wait
    run timeout 10 "$B/cairn" --statedir "$STATEDIR" eventlog -f --json 31
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | tail -1 | jq -r .name)" = clean ]
}

@test "ranks shows each rank's processes, drained and released" {
    echo 3 >"$T/fail-1"
    run cairn run --id 41 -N 3 --prolog-failures-allowed 1 -- true
    [ "$status" -eq 0 ]
    run cairn ranks 41
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^RANK\ +HOST\ +PROLOG\ +SHELL\ +EPILOG\ +DRAINED\ +RELEASED\ +NOTE$ ]]
    # the pids are the commands' own, as journaled
    h=$(hostname)
    [ "$(echo "${lines[1]}" | tr -s ' ')" = "0 $h exit 0 pid $(shim_pid 41 prolog 0) exit 0 pid $(shim_pid 41 shell 0) exit 0 pid $(shim_pid 41 epilog 0) no yes -" ]
    [[ "$(echo "${lines[2]}" | tr -s ' ')" == "1 $h exit 3 pid $(shim_pid 41 prolog 1) - exit 0 pid $(shim_pid 41 epilog 1) yes yes job ƒi: prolog failed on rank 1 (tolerated"* ]]
    [ "${#lines[@]}" -eq 4 ]
    run cairn ranks --json 41
    [ "$status" -eq 0 ]
    echo "$output" | jq -e -s --arg h "$(hostname)" 'length == 3
        and (.[1] | .rank == 1 and .host == $h and .drained and .released
        and .shell == null and .prolog.status == 768
        and .prolog.state == "exited" and .prolog.timed_out == false
        and (.drain_reason | startswith("job ƒi: prolog failed on rank 1")))
        and (.[0] | .drained == false and .drain_reason == null)
        and all(keys_unsorted == ["rank", "host", "prolog", "shell", "epilog",
                                  "drained", "drain_reason", "released"])'
    run cairn ranks 999
    [ "$status" -eq 1 ]
    [ "$output" = "cairn ranks: no job 999 (ƒJE) in the journal of $STATEDIR" ]
}

@test "procs checks the processes the journal believes running" {
    run cairn procs
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^EXECID\ +PID\ +JOB\ +RANKS\ +PHASE\ +STATE\ +ALIVE$ ]]
    [ "${#lines[@]}" -eq 1 ]
    # rank 0's loss is fatal: the next cairnd ends the job without waiting
    run_bg --id 51 -N 2 -- sleep 60
    for i in $(seq 1 400); do # until both shells are spawned
        [ "$(cairn procs | grep -c ' spawned ')" -eq 2 ] && break
        sleep 0.05
    done
    run cairn procs
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 3 ] || { echo "$output"; cat "$T/run.out"; false; }
    [[ "${lines[1]}" =~ ^[0-9a-f-]{36}\ +[0-9]+\ +51\ +0\ +shell\ +spawned\ +yes$ ]]
    [[ "${lines[2]}" =~ ^[0-9a-f-]{36}\ +[0-9]+\ +51\ +1\ +shell\ +spawned\ +yes$ ]]
    # cairnd stops (processes keep running), rank 0's dies meanwhile with
    # its supervisor
    cairnd_stop
    victim=$(shim_pid 51 shell 0)
    lose_proc "$victim"
    run cairn procs --json
    [ "$status" -eq 0 ]
    echo "$output" | jq -e -s --argjson p "$victim" 'length == 2
        and (map(select(.pid == $p)) | .[0] | .alive == "no" and .ranks == "0")
        and (map(select(.pid != $p)) | .[0].alive == "yes")'
    # the next cairnd finds the same and journals the loss
    cairnd_launch
    run_bg_wait
    wait_event 51 10 clean
    run cairn procs
    [ "${#lines[@]}" -eq 1 ]
    [[ "$(cairn eventlog 51)" == *"proc-lost execid="*"[shell rank 0]"* ]]
    run cairn verify 51
    [ "$status" -eq 0 ]
}

@test "verify passes on journals of real runs" {
    cairn run --id 61 -N 2 -- true
    echo 4 >"$T/fail-0"
    cairn run --id 62 -N 2 -- true || true
    echo 3 >"$T/fail-0"
    cairn run --id 63 -N 3 --prolog-failures-allowed 1 -- sh -c 'exit 2' || true
    rm "$T/fail-0"
    run_bg --id 64 -- sleep 30
    # until its shell runs, then nothing happens for 30s (its prolog's
    # proc-spawn came before a dozen more events: verify and dump raced)
    local i out before after
    for i in $(seq 1 600); do
        cairn ranks --json 64 2>/dev/null \
            | jq -e '.shell.state == "running"' >/dev/null && break
        sleep 0.05
    done
    [ "$i" -lt 600 ] || { echo "job 64's shell never ran"; false; }
    # verify and dump agree on the count once the journal is quiet: read
    # dump before and after verify, again if something was committed
    for i in $(seq 1 20); do
        before=$(cairn dump | wc -l)
        out=$(cairn verify) || { echo "verify failed: $out"; false; }
        after=$(cairn dump | wc -l)
        [ "$before" -eq "$after" ] && break
        sleep 0.2
    done
    [ "$out" = "verified 4 jobs, $after events: no problems" ] \
        || { echo "verify: '$out'; dump: $before then $after lines"; false; }
    cairn cancel 64
    run_bg_wait
    cairnd_stop
    run cairn verify 61 63
    [ "$status" -eq 0 ]
    [[ "$output" == "verified 2 jobs, "*" events: no problems" ]]
    # --json says so too: no problem lines, one summary line with the counts
    run cairn verify --json
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    echo "$output" | jq -e --argjson n "$(cairn dump | wc -l)" \
        '. == {"ok": true, "jobs": 4, "events": $n, "problems": 0}'
}

@test "verify catches an event removed from the journal" {
    cairn run --id 71 -N 2 -- true
    copy_journal "$STATEDIR" "$T/bad" \
        "\$0 == \"$(event_key 71 5)\" { skip = 2 } skip > 0 { skip--; next } { print }"
    run "$B/cairn" --statedir "$T/bad" verify
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "job 71 seq 6: gap: seq 6 follows seq 4 (1 event(s) missing)" ]
    [[ "$output" == *"job 71: the job record counts "*" events, but "*" were read"* ]]
    [[ "${lines[-1]}" =~ ^verified\ 1\ job,\ [0-9]+\ events:\ [0-9]+\ problems$ ]]
    run "$B/cairn" --statedir "$T/bad" verify --json
    [ "$status" -eq 1 ]
    echo "${lines[0]}" | jq -e '.id == 71 and .seq == 6
        and (.problem | startswith("gap:"))'
    echo "${lines[-1]}" | jq -e --argjson k "$((${#lines[@]} - 1))" \
        '.ok == false and .jobs == 1 and .events > 0 and .problems == $k'
}

@test "verify catches a duplicated release" {
    cairn run --id 81 -N 2 -- true
    # the first release: either rank's epilog may end first
    k=$(cairn dump 81 | jq 'select(.event.name == "release") | .seq' | head -1)
    r=$(cairn dump 81 | jq -r 'select(.event.name == "release")
        | .event.context.ranks' | head -1)
    # the event after the first release is overwritten with a copy of it
    copy_journal "$STATEDIR" "$T/bad" "
        \$0 == \"$(event_key 81 "$k")\" { print; getline; v = \$0; print; next }
        \$0 == \"$(event_key 81 $((k + 1)))\" { print; getline; print v; next }
        { print }"
    run "$B/cairn" --statedir "$T/bad" verify 81
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "job 81 seq $((k + 1)): rank(s) $r released twice" ]]
    run "$B/cairn" --statedir "$T/bad" eventlog 81
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | grep -c "release ranks=$r final=false")" -eq 2 ]
}

@test "errors name the state dir: no journal, other format version, unknown job" {
    mkdir -m 700 "$T/empty"
    run "$B/cairn" --statedir "$T/empty" jobs
    [ "$status" -eq 1 ]
    [ "$output" = "cairn jobs: no journal in $T/empty (is this a cairn state dir?)" ]
    run "$B/cairn" --statedir "$T/empty" purge --older-than 0
    [ "$status" -eq 1 ]
    [ "$output" = "cairn purge: no journal in $T/empty (is this a cairn state dir?)" ]
    [ ! -e "$T/empty/journal" ]
    run "$B/cairn" --statedir "$T/nowhere" verify
    [ "$status" -eq 1 ]
    [ "$output" = "cairn verify: state dir $T/nowhere: No such file or directory" ]
    cairn run --id 91 -- true
    # a journal of a future format: "format" -> "2" in the meta database
    copy_journal "$STATEDIR" "$T/v2" \
        'prev == " 666f726d6174" { $0 = " 32" } { prev = $0; print }'
    for cmd in jobs "eventlog 91" verify stats dump; do
        run "$B/cairn" --statedir "$T/v2" $cmd
        [ "$status" -eq 1 ]
        [ "$output" = "cairn ${cmd%% *}: journal at $T/v2/journal has format version 2; this cairn reads version 1" ]
    done
    run cairn eventlog 424242
    [ "$status" -eq 1 ]
    [ "$output" = "cairn eventlog: no job 424242 (ƒ3B7X) in the journal of $STATEDIR" ]
    run cairn verify 91 424242
    [ "$status" -eq 1 ]
    [ "$output" = "cairn verify: no job 424242 (ƒ3B7X) in the journal of $STATEDIR" ]
    run cairn eventlog
    [ "$status" -eq 2 ]
    [[ "$output" == "cairn eventlog: expected one JOBID"* ]]
}

@test "dump and export print every event as a JSON line" {
    cairn run --id 101 -N 2 -- true
    cairn run --id 102 -- sh -c 'echo hello'
    run cairn dump
    [ "$status" -eq 0 ]
    [ "$output" = "$(cairn export)" ]
    echo "$output" | jq -e -s '
        (map(select(.id == 101)) | (map(.seq) == [range(length)])
            and .[0].event.name == "accept" and .[-1].event.name == "clean")
        and (map(select(.id == 102)) | length > 5)
        and all(keys == ["event", "id", "seq"])'
    [ "$(echo "$output" | wc -l)" -eq "$(cairn stats --json | jq .events)" ]
    [[ "$(cairn dump 102)" == *'"data":"hello\n"'* ]]
}

@test "stats shows the journal's size and counts" {
    cairn run --id 111 -- true
    run_bg --id 112 -- sleep 30
    wait_event 112 10 start
    run cairn stats
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "journal   $STATEDIR/journal/data.mdb" ]
    [[ "${lines[1]}" =~ ^instance\ \ [0-9a-f-]{36}$ ]]
    [[ "$output" =~ map\ +[0-9.]+\ [KMG]?i?B\ used\ of\ 64\.0\ MiB ]]
    [[ "$output" =~ data\ +[0-9.]+\ [KMG]?i?B\ in\ live\ pages ]]
    [[ "$output" == *"jobs      2 (1 active, 1 finished)"* ]]
    run cairn stats --json
    echo "$output" | jq -e '.jobs == 2 and .active == 1 and .finished == 1
        and .events > 10 and .map_size == 67108864
        and .map_used <= .map_size and .file_size > 0
        and .data_used > 0 and .data_used <= .map_used'
    cairn cancel 112
    run_bg_wait
}

@test "purge removes finished jobs older than the given age, while cairnd runs" {
    cairn run --id 121 -- true
    cairn run --id 122 -- true
    run_bg --id 123 -- sleep 30
    wait_event 123 10 start
    run cairn purge
    [ "$status" -eq 2 ]
    [[ "$output" == *"--older-than DURATION is required"* ]]
    run cairn purge --older-than 1h
    [ "$status" -eq 0 ]
    [ "$output" = "purged 0 jobs (0 events) finished more than 1h ago" ]
    sleep 1.1
    run cairn purge --older-than 1s --json
    [ "$status" -eq 0 ]
    echo "$output" | jq -e '.purged == 2 and .events > 10'
    run cairn jobs -a -d
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[1]}" =~ ^123\  ]]
    run cairn eventlog 121
    [ "$status" -eq 1 ]
    # cairnd goes on with its journal: the active job ends normally
    cairn cancel 123
    run_bg_wait
    wait_event 123 10 clean
    cairn run --id 124 -- true
    run cairn verify
    [ "$status" -eq 0 ]
    [[ "$output" == "verified 2 jobs, "* ]]
}

@test "options: --statedir after the subcommand, -c CONFIG, --help" {
    cairn run --id 131 -- true
    run "$B/cairn" jobs -a -d --statedir "$STATEDIR"
    [ "$status" -eq 0 ]
    [[ "${lines[1]}" =~ ^131\  ]]
    printf '{"statedir": "%s"}\n' "$STATEDIR" >"$T/client.conf"
    run "$B/cairn" -c "$T/client.conf" eventlog 131
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == *" clean" ]]
    for cmd in jobs show eventlog ranks procs verify dump export stats purge; do
        run "$B/cairn" "$cmd" --help
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == "Usage: cairn $cmd "* ]]
    done
}
