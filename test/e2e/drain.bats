#!/usr/bin/env bats
# cairn drain and cairn undrain (issue 16): the drained ranks with their
# hosts, since when, which job and why, kept in the journal; an undrain is
# journaled, survives a restart, and refuses ranks that are not drained.
load lib

teardown() {
    cairnd_stop
    assert_no_leftover
}

@test "an epilog failure drains its rank; cairn drain lists it; cairn undrain returns it" {
    e=$(script epilog.sh <<'SH'
#!/bin/sh
[ "$CAIRN_RANK" = 1 ] && exit 3
exit 0
SH
)
    cairnd_start "{\"epilog\": {\"command\": [\"$e\"], \"per-rank\": true}}"
    run cairn drain
    [ "$status" -eq 0 ]
    [ "$output" = "RANK  HOST  SINCE  JOB  REASON" ]
    cairn run --id 810 -N 3 -- true 2>/dev/null
    run cairn drain
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^RANK\ +HOST\ +SINCE\ +JOB\ +REASON$ ]]
    [[ "${lines[1]}" =~ ^1\ +$(hostname)\ +[0-9-]+\ [0-9:.]+\ [+-][0-9]{4}\ +ƒ[A-Za-z0-9]+\ +epilog\ failed\ for\ job\ ƒEy:\ exit\ 3$ ]]
    [ "${#lines[@]}" -eq 2 ]
    run cairn drain --json
    [ "$(jq -c '{rank, host, job, reason}' <<<"$output")" = "{\"rank\":1,\"host\":\"$(hostname)\",\"job\":810,\"reason\":\"epilog failed for job ƒEy: exit 3\"}" ]
    # not drained: refused, nothing changes
    run cairn undrain 0-1
    [ "$status" -eq 1 ]
    [ "$output" = "cairn undrain: rank 0 is not drained" ]
    [ "$(cairn drain --json | jq -r .rank)" = 1 ]
    # kept across a restart, and so is the undrain; one that cannot be
    # journaled is refused with its errno and changes nothing (the first
    # record this cairnd stages is the undrain's: outbox.h, O1)
    cairnd_stop
    CAIRN_FAULT=outbox.stage:1:28 cairnd_launch
    [ "$(cairn drain --json | jq -r .rank)" = 1 ]
    run cairn undrain 1
    [ "$status" -eq 1 ]
    [ "$output" = "cairn undrain: undrain: No space left on device" ]
    [ "$(cairn drain --json | jq -r .rank)" = 1 ]
    run cairn undrain 1
    [ "$status" -eq 0 ]
    [ "$output" = "" ]
    cairnd_stop
    cairnd_launch
    [ -z "$(cairn drain --json)" ]
    run cairn undrain 1
    [ "$output" = "cairn undrain: rank 1 is not drained" ]
    run cairn undrain x
    [ "$status" -eq 1 ]
    [[ "$output" == "cairn undrain: ranks: "* ]]
}
