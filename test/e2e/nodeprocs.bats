#!/usr/bin/env bats
# `cairn procs` on a node's state dir ("role": "node", DESIGN-MULTINODE.md):
# no jobs there, only the nodeprocs records of the processes rank 0 asked
# for. Each is listed in the job processes' columns while rank 0 has not
# acknowledged it, with -a/--all after that too; a JOBID names a node's
# job. The node is driven over its socket as node.bats does.
load lib

setup() {
    T=$BATS_TEST_TMPDIR
    cairnd_start '{"role": "node"}'
}

teardown() {
    cairnd_stop
    assert_no_leftover
}

X1=11111111-1111-4111-8111-111111111111
X2=22222222-2222-4222-8222-222222222222


# The table `cairn procs` prints for the rows on stdin (cells separated by
# tabs): the header, then each column as wide as its widest cell and two
# spaces apart, the last one unpadded.
table() {
    { printf 'EXECID\tPID\tJOB\tRANKS\tPHASE\tSTATE\tALIVE\n'; cat; } | awk -F'\t' '
        { for (i = 1; i <= NF; i++) {
              c[NR, i] = $i
              if (length($i) > w[i]) w[i] = length($i)
          }
          n = NF }
        END { for (r = 1; r <= NR; r++) {
                  s = ""
                  for (i = 1; i < n; i++)
                      s = s sprintf("%-" w[i] "s  ", c[r, i])
                  print s c[r, n]
              } }'
}

# Wait until the node's record of execid $1 is in state $2.
wait_state() {
    local i
    for i in $(seq 1 400); do
        [ "$(cairn procs -a --json | jq -r --arg x "$1" \
            'select(.execid == $x) | .state')" = "$2" ] && return 0
        sleep 0.05
    done
    echo "$1 not $2 after 20s: $(cairn procs -a)" >&2
    return 1
}

@test "procs on a node: running and alive, ended until acknowledged, then with -a only" {
    run rpc node-exec "$(exec_req $X1 'exec sleep 60')"
    [ "$status" -eq 0 ]
    pid=$(echo "$output" | jq -e '.pid')
    run cairn procs
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\t%s\t7\t2\tshell\trunning\tyes\n' $X1 $pid | table)" ]
    # it ends (SIGTERM): still the node's to report, so still listed
    rpc node-signal "{\"execid\": \"$X1\", \"signum\": 15}"
    wait_state $X1 ended
    run cairn procs
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\t%s\t7\t2\tshell\tended\t-\n' $X1 $pid | table)" ]
    # rank 0 has journaled it: the node keeps it as its account only
    rpc node-ack "{\"execids\": [\"$X1\"]}"
    run cairn procs
    [ "$status" -eq 0 ]
    [ "$output" = "$(table </dev/null)" ]
    for all in -a --all; do
        run cairn procs $all
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf '%s\t%s\t7\t2\tshell\tended\t-\n' $X1 $pid | table)" ]
    done
}

@test "procs --json on a node: a job process's keys, then status, error, acked" {
    run rpc node-exec "$(exec_req $X1 'exec sleep 60')"
    pid=$(echo "$output" | jq -e '.pid')
    run cairn procs --json
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    echo "$output" | jq -e --arg x $X1 --argjson p "$pid" '
        keys_unsorted == ["execid", "pid", "job", "f58", "ranks", "phase",
                          "state", "alive", "host", "acked"]
        and .execid == $x and .pid == $p and .job == 7 and .f58 == "ƒ8"
        and .ranks == "2" and .phase == "shell" and .state == "running"
        and .alive == "yes" and .host == null and .acked == false'
    # an end has its wait status and nothing to look for; what the shim
    # recorded of a command that could not run is its error
    rpc node-signal "{\"execid\": \"$X1\", \"signum\": 9}"
    rpc node-exec "$(exec_req $X2 '' | jq -c '.argv = ["/nonexistent"]')"
    wait_state $X1 ended
    wait_state $X2 ended
    run cairn procs --json
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    echo "${lines[0]}" | jq -e --arg x $X1 '
        keys_unsorted == ["execid", "pid", "job", "f58", "ranks", "phase",
                          "state", "alive", "host", "status", "acked"]
        and .execid == $x and .state == "ended" and .status == 9
        and .alive == null and .acked == false'
    echo "${lines[1]}" | jq -e --arg x $X2 '
        .execid == $x and .state == "ended" and .status == 32512
        and .error == "execvp /nonexistent: No such file or directory"'
    x2=${lines[1]}
    rpc node-ack "{\"execids\": [\"$X1\"]}"
    run cairn procs --json
    [ "$output" = "$x2" ]
    run cairn procs --json --all
    [ "${#lines[@]}" -eq 2 ]
    echo "${lines[0]}" | jq -e --arg x $X1 '
        keys_unsorted == ["execid", "pid", "job", "f58", "ranks", "phase",
                          "state", "alive", "host", "status", "acked",
                          "t_acked"]
        and .execid == $x and .acked == true and .t_acked > 1700000000'
    rpc node-ack "{\"execids\": [\"$X2\"]}"
}

@test "procs JOBID on a node: only that job's records; an unknown job is an error" {
    run rpc node-exec "$(exec_req $X1 'exit 3' 7 2)"
    run rpc node-exec "$(exec_req $X2 'exit 4' 8 0)"
    wait_state $X1 ended
    wait_state $X2 ended
    p1=$(cairn procs --json 7 | jq .pid)
    p2=$(cairn procs --json 8 | jq .pid)
    row1=$(printf '%s\t%s\t7\t2\tshell\tended\t-' $X1 "$p1")
    row2=$(printf '%s\t%s\t8\t0\tshell\tended\t-' $X2 "$p2")
    run cairn procs 8
    [ "$status" -eq 0 ]
    [ "$output" = "$(echo "$row2" | table)" ]
    # F58 as well, and several
    run cairn procs ƒ8 8
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\n%s\n' "$row1" "$row2" | table)" ]
    run cairn procs 9
    [ "$status" -eq 1 ]
    [ "$output" = "cairn procs: no job 9 (ƒA) in the journal of $STATEDIR" ]
    # an acknowledged job is known, not listed but with -a
    rpc node-ack "{\"execids\": [\"$X1\", \"$X2\"]}"
    run cairn procs 8
    [ "$status" -eq 0 ]
    [ "$output" = "$(table </dev/null)" ]
    run cairn procs -a 8
    [ "$status" -eq 0 ]
    [ "$output" = "$(echo "$row2" | table)" ]
}

@test "procs on a node: a process gone while the node was down is not alive" {
    run rpc node-exec "$(exec_req $X1 'exec sleep 60')"
    shim=$(echo "$output" | jq -e '.pid')
    cairnd_stop
    lose_proc "$shim"
    run cairn procs
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\t%s\t7\t2\tshell\trunning\tno\n' $X1 $shim | table)" ]
    # the next node cairnd finds the same and records the loss
    cairnd_launch
    wait_state $X1 lost
    run cairn procs
    [ "$output" = "$(printf '%s\t%s\t7\t2\tshell\tlost\t-\n' $X1 $shim | table)" ]
    cairn procs --json | jq -e '.error | length > 0'
    rpc node-ack "{\"execids\": [\"$X1\"]}"
}

@test "procs: -a changes nothing where there are no node records; bad usage is refused" {
    run cairn procs -a
    [ "$status" -eq 0 ]
    [ "$output" = "$(table </dev/null)" ]
    run cairn procs --bogus
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "procs: unrecognized option '--bogus'" ]
    [ "${lines[1]}" = "Usage: cairn procs [-a] [--json] [JOBID...]" ]
    [ "${lines[2]}" = "Try 'cairn procs --help'." ]
    run cairn procs -x
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "procs: invalid option -- 'x'" ]
    run cairn procs 12x
    [ "$status" -eq 1 ]
    [ "$output" = 'cairn procs: invalid job id "12x": expected decimal digits or F58' ]
    # a rank-0 state dir: the jobs' processes only, as without -a
    cairnd_stop
    STATEDIR=$T/rank0
    cairnd_start '{"release-after": 0}'
    cairn run --id 31 -- true
    run cairn procs -a
    [ "$status" -eq 0 ]
    [ "$output" = "$(table </dev/null)" ]
}
