#!/usr/bin/env bats
# Where each rank ran, as the inspection commands show it for a job run
# with multinode (DESIGN-MULTINODE.md): `cairn ranks` and `cairn show`
# (the NODE column, each process's "host"), `cairn eventlog` (a spawn on a
# node, a node's late report) and `cairn procs` (a process on a node is not
# looked for here). The nodes are fakerelay.py's: fake1, fake2, ... while
# R's nodelist names them node0, node1, ..., so the two cannot be mixed up.
load lib

setup() {
    T=$BATS_TEST_TMPDIR
}

teardown() {
    [ -n "${RELAY_PID:-}" ] && kill "$RELAY_PID" 2>/dev/null
    if [ -n "${STREAM_PID:-}" ]; then
        kill "$STREAM_PID" 2>/dev/null || true
        wait "$STREAM_PID" 2>/dev/null || true
    fi
    cairnd_stop
    assert_no_leftover
}




# The line of `cairn eventlog $1` (human) for event $2 of execid $3, its
# time replaced by +T.
elog_line() {
    cairn eventlog "$1" | grep -F " $2 execid=$3" \
        | sed -E 's/^\+[0-9]+\.[0-9]{3}s /+T /'
}

@test "ranks and show: the node each rank's processes ran on" {
    # one prolog here for all ranks; per-rank epilogs on the ranks' nodes
    cairnd_start '{"release-after": 0,
        "prolog": {"command": ["/bin/true"]},
        "epilog": {"command": ["/bin/true"], "per-rank": true},
        "multinode": {"timeout": "10s", "poll": "0.3s"}}'
    relay_start
    start_job 1 "$(id -u)" '["true"]'
    wait_event 1 10 clean
    # --json: each process's host, null for those run here
    [ "$(cairn ranks --json 1 \
        | jq -c '[.rank, .host, .prolog.host, .shell.host, .epilog.host]' \
        | paste -sd ' ')" = \
        '[0,"node0",null,null,null] [1,"node1",null,"fake1","fake1"] [2,"node2",null,"fake2","fake2"]' ]
    # a process on a node has that node's pid
    [ "$(cairn ranks --json 1 | jq -c '[.shell.pid, .epilog.pid]' | tail -2 \
        | paste -sd ' ')" = '[4001,4001] [4002,4002]' ]
    run cairn ranks 1
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^RANK\ +HOST\ +NODE\ +PROLOG\ +SHELL\ +EPILOG\ +DRAINED\ +RELEASED\ +NOTE$ ]]
    p=$(shim_pid 1 prolog 0-2)
    [ "$(echo "${lines[1]}" | tr -s ' ')" = "0 node0 local exit 0 pid $p exit 0 pid $(shim_pid 1 shell 0) exit 0 pid $(shim_pid 1 epilog 0) no yes -" ]
    [ "$(echo "${lines[2]}" | tr -s ' ')" = "1 node1 fake1 exit 0 pid $p exit 0 pid 4001 exit 0 pid 4001 no yes -" ]
    [ "$(echo "${lines[3]}" | tr -s ' ')" = "2 node2 fake2 exit 0 pid $p exit 0 pid 4002 exit 0 pid 4002 no yes -" ]
    [ "${#lines[@]}" -eq 4 ]
    # show: the same column, the same hosts in per_rank
    run cairn show 1
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | sed -n '/^RANK/,/^$/p')" = "RANK  HOST   NODE   PROLOG  SHELL   EPILOG  DRAINED  RELEASED
0     node0  local  exit 0  exit 0  exit 0  no       yes
1     node1  fake1  exit 0  exit 0  exit 0  no       yes
2     node2  fake2  exit 0  exit 0  exit 0  no       yes" ] \
        || { echo "$output"; false; }
    [ "$(cairn show --json 1 | jq -c '[.per_rank[] | .shell.host]')" = \
        '[null,"fake1","fake2"]' ]
    run cairn verify 1
    [ "$status" -eq 0 ]
}

@test "ranks and show: a one-host job's tables have no NODE column" {
    cairnd_start '{"release-after": 0}'
    start_job 2 "$(id -u)" '["true"]'
    wait_event 2 10 clean
    run cairn ranks 2
    [[ "${lines[0]}" =~ ^RANK\ +HOST\ +PROLOG\ +SHELL\ +EPILOG\ +DRAINED\ +RELEASED\ +NOTE$ ]]
    [ "$(cairn show 2 | grep '^RANK' | tr -s ' ')" = \
        "RANK HOST PROLOG SHELL EPILOG DRAINED RELEASED" ]
    # and --json says each process ran here
    [ "$(cairn ranks --json 2 | jq -c '.shell.host' | paste -sd ' ')" = \
        'null null null' ]
}

@test "eventlog: a spawn on a node says where, so do the process's later events" {
    cairnd_start '{"release-after": 0,
        "multinode": {"timeout": "10s", "poll": "0.3s"}}'
    relay_start
    start_job 3 "$(id -u)" '["true"]'
    wait_event 3 10 clean
    x=$(execid_of 3 shell 1)
    [ "$(elog_line 3 proc-spawn "$x")" = \
        "+T proc-spawn execid=$x pid=4001 starttime=1 bootid=fakeboot [shell rank 1 on fake1]" ]
    [ "$(elog_line 3 proc-exit "$x")" = \
        "+T proc-exit execid=$x status=0 (exit 0) [shell rank 1 on fake1]" ]
    # a process run here: no host, as before
    x0=$(execid_of 3 shell 0)
    [[ "$(elog_line 3 proc-spawn "$x0")" =~ ^\+T\ proc-spawn\ execid=$x0\ pid=[0-9]+\ starttime=[0-9]+\ bootid=[0-9a-f-]+\ \[shell\ rank\ 0\]$ ]]
    # the host is in the tag, not repeated as a key
    [[ "$(cairn eventlog 3)" != *"host="* ]]
    # --json has the event as stored
    [ "$(events_named 3 proc-spawn | jq -r 'select(.execid == "'"$x"'") | .host')" = fake1 ]
}

@test "eventlog: a node's late report is a sentence; ranks: where the lost shell was to run" {
    EPILOG=$(script epilog <<EOF
#!/bin/sh
[ "\$CAIRN_RANK" = 0 ] && sleep 4
exit 0
EOF
    )
    cairnd_start "{\"release-after\": 0,
        \"epilog\": {\"command\": [\"$EPILOG\"], \"per-rank\": true},
        \"multinode\": {\"timeout\": \"2s\", \"poll\": \"0.3s\"}}"
    relay_start --silent 2
    start_job 4 "$(id -u)" '["true"]'
    wait_event 4 10 epilog-start # rank 0's epilog keeps the job open
    sx=$(execid_of 4 shell 2)
    kill -USR1 "$RELAY_PID"
    wait_event 4 10 proc-late
    wait_event 4 10 clean
    [ "$(elog_line 4 proc-late "$sx")" = \
        "+T proc-late execid=$sx: late report from node fake2: shell rank 2 ended, exit 0; recorded, nothing undone" ]
    # the loss stays: the shell never spawned, so no "on" in its tag
    [[ "$(elog_line 4 proc-lost "$sx")" =~ ^\+T\ proc-lost\ execid=$sx\ note=\"node\ node2\ \(rank\ 2\)\ unreachable\ for\ [0-9]+s\"\ \[shell\ rank\ 2\]$ ]]
    # never reported on by its node: R's host of the rank
    [ "$(cairn ranks --json 4 | jq -c 'select(.rank == 2)
        | [.shell.state, .shell.host, .drained]')" = '["lost","node2",true]' ]
    run cairn ranks 4
    [ "$(echo "${lines[3]}" | tr -s ' ')" = "2 node2 node2 - lost lost yes yes epilog for job ƒ5: node node2 (rank 2) is unreachable (silent past multinode.timeout)" ] \
        || { echo "$output"; false; }
    run cairn verify 4
    [ "$status" -eq 0 ]
}

@test "procs: a process on a node is remote, not looked for here" {
    # rank 2's node answers nothing until told: its shell stays an intent
    cairnd_start '{"release-after": 0,
        "multinode": {"timeout": "60s", "poll": "0.3s"}}'
    relay_start --run 30 --silent 2
    start_job 5 "$(id -u)" '["sleep", "30"]'
    for i in $(seq 1 200); do
        [ "$(cairn procs 5 | grep -c ' spawned ')" -eq 2 ] && break
        sleep 0.05
    done
    x0=$(execid_of 5 shell 0)
    x1=$(execid_of 5 shell 1)
    x2=$(execid_of 5 shell 2)
    run cairn procs 5
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ] || { echo "$output"; false; }
    [[ "${lines[0]}" =~ ^EXECID\ +PID\ +JOB\ +RANKS\ +PHASE\ +STATE\ +ALIVE$ ]]
    [[ "${lines[1]}" =~ ^$x0\ +[0-9]+\ +5\ +0\ +shell\ +spawned\ +yes$ ]]
    [[ "${lines[2]}" =~ ^$x1\ +4001\ +5\ +1\ +shell\ +spawned\ +remote\ \(fake1\)$ ]]
    # not spawned yet: named after R, and no shim is looked for here
    [[ "${lines[3]}" =~ ^$x2\ +-\ +5\ +2\ +shell\ +intent\ +remote\ \(node2\)$ ]]
    [ "$(cairn procs --json 5 | jq -c '[.ranks, .state, .alive, .host, .pid]' \
        | paste -sd ' ' | sed -E 's/^\["0","spawned","yes",null,[0-9]+\]/P0/')" = \
        'P0 ["1","spawned","remote","fake1",4001] ["2","intent","remote","node2",0]' ]
    # rank 2's node answers: spawned there too, then the job is canceled
    kill -USR1 "$RELAY_PID"
    for i in $(seq 1 200); do
        [ "$(cairn procs 5 | grep -c ' spawned ')" -eq 3 ] && break
        sleep 0.05
    done
    [[ "$(cairn procs 5 | grep "^$x2")" =~ \ 4002\ +5\ +2\ +shell\ +spawned\ +remote\ \(fake2\)$ ]]
    cairn cancel 5
    wait_event 5 10 clean
    [ "$(cairn procs 5 | wc -l)" -eq 1 ]
    run cairn verify 5
    [ "$status" -eq 0 ]
}
