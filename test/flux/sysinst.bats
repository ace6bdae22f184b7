#!/usr/bin/env bats
# A Flux system instance through cairn (issue 32): the broker runs as the
# unprivileged `cairnflux`, two users submit, munge signs their jobs, and
# a root cairnd whose flux.instance-owner is cairnflux runs each user's
# shells through the setuid flux-imp (trust.h), which checks the
# signature. sysinst.bash builds the instance; it skips where Flux lacks
# its security layer (scripts/install-flux) or munge is missing.
load lib
source "$(dirname "$BATS_TEST_FILENAME")/sysinst.bash"

setup() {
    sysinst_setup
    T=$BATS_TEST_TMPDIR
    PUB=$SYSINST/pub
    mkdir -m 0755 "$PUB"
    # the site's prolog and epilog: root's, logging who they ran as, and
    # waiting while $SYSINST/hold-PHASE exists
    printf '#!/bin/sh\necho "$CAIRN_PHASE $(id -u) $FLUX_JOB_USERID" >>%s
while [ -e %s/hold-$CAIRN_PHASE ]; do sleep 0.05; done\n' \
        "$SYSINST/perilog.log" "$SYSINST" >"$SYSINST/perilog"
    chmod 755 "$SYSINST/perilog"
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"flux\": {\"instance-owner\": \"$SYSINST_OWNER\", \"imp\": \"$SYSINST_IMP\"},
        \"prolog\": {\"command\": [\"$SYSINST/perilog\"]},
        \"epilog\": {\"command\": [\"$SYSINST/perilog\"]}}"
    # the broker-kill test: two brokers, rank 0 restartable
    case $BATS_TEST_DESCRIPTION in
        *"broker SIGKILLed"*) SYSINST_RESTARTABLE=1 ;;
        *"root-owned instance"*) SYSINST_ROOT=1 ;;
    esac
    sysinst_start "[modules.job-exec]
module = \"$B/cairn-exec.so\"
args = [\"socket=$PUB/cairn.sock\", \"start-timeout=5\"]"
}

teardown() {
    sysinst_teardown
    cairnd_stop
    assert_no_leftover
}

# The job's uid, groups and HOME, as USER, are USER's own.
job_is_users_own() {
    local user=$1 out
    out=$(as_user "$user" timeout 60 flux run sh -c 'id -u; id -G; echo $HOME')
    echo "$user: $out"
    [ "$(sed -n 1p <<<"$out")" = "$(id -u "$user")" ]
    [ "$(sed -n 2p <<<"$out" | tr ' ' '\n' | sort -n | paste -sd' ')" = \
      "$(id -G "$user" | tr ' ' '\n' | sort -n | paste -sd' ')" ]
    [ "$(sed -n 3p <<<"$out")" = "$(getent passwd "$user" | cut -d: -f6)" ]
}

@test "each user's job runs as that user through flux-imp; prolog and epilog as root" {
    [ "$(sysinst_fx getattr security.owner)" = "$(id -u "$SYSINST_OWNER")" ]
    job_is_users_own cairnu1
    job_is_users_own cairnu2
    as_user cairnu1 flux run id -nG | grep -qw cairngrp
    # cairnd ran the shells as the owner through the IMP, and knows whose
    # jobs they are
    local ow u1 u2
    ow=$(id -u "$SYSINST_OWNER") u1=$(id -u cairnu1) u2=$(id -u cairnu2)
    [ "$(cairn jobs -a -n -o '{username}' | sort -u | paste -sd,)" = cairnu1,cairnu2 ]
    for id in $(cairn jobs -a -n -o '{id}'); do
        cairn eventlog "$id" --json | jq -s -e --arg imp "$SYSINST_IMP" \
            --argjson ow "$ow" 'map(select(.name == "accept"))[0].context.imp
            == {path: $imp, uid: $ow}'
    done
    # the site's prolog and epilog ran as root for each job
    sort "$SYSINST/perilog.log" | uniq -c >&2
    [ "$(grep -c "^prolog 0 $u1$" "$SYSINST/perilog.log")" -eq 2 ]
    [ "$(grep -c "^epilog 0 $u1$" "$SYSINST/perilog.log")" -eq 2 ]
    [ "$(grep -c "^prolog 0 $u2$" "$SYSINST/perilog.log")" -eq 1 ]
    [ "$(grep -c "^epilog 0 $u2$" "$SYSINST/perilog.log")" -eq 1 ]
    [ "$(wc -l <"$SYSINST/perilog.log")" -eq 6 ]
}

@test "a shell outside allowed-shells, a forged J: refused, the cause in the job's eventlogs" {
    # (a job of uid 0 never gets this far: Flux's job-ingest refuses it in
    # an instance not run by root, and cairnd too, trust.bats)
    # a shell the IMP's allowed-shells does not name
    run as_user cairnu1 timeout 60 flux run --setattr=system.exec.job_shell=/bin/sh true
    echo "$output"
    [ "$status" -ne 0 ]
    local id
    id=$(as_user cairnu1 flux jobs -a -n -o '{id}' | head -n 1)
    sysinst_fx job eventlog -p exec "$id" | grep -F "shell not in allowed-shells"
    sysinst_fx job eventlog "$id" >&2
    sysinst_fx job eventlog "$id" | grep -F 'finish status=256'
    # a J that cairnu2 did not sign: the owner (root here) replaces the
    # held job's J by a tampered one before it runs
    id=$(as_user cairnu2 flux submit --urgency=hold true)
    local key J
    key=$(sysinst_fx job id --to=kvs "$id").J
    J=$(sysinst_fx kvs get "$key")
    sysinst_fx kvs put "$key=${J%?}x"
    sysinst_fx job urgency "$id" default
    sysinst_fx job wait-event -t 60 "$id" clean
    sysinst_fx job eventlog -p exec "$id" | grep -F "signature validation failed"
    sysinst_fx job eventlog "$id" >&2
    sysinst_fx job eventlog "$id" | grep -F 'finish status=256'
}

@test "cairnd killed while a user's job runs: the job ends once, as its user" {
    local id
    id=$(as_user cairnu1 flux submit sh -c 'sleep 3; id -u')
    sysinst_fx job wait-event -t 60 "$id" start
    cairnd_crash
    sleep 1
    cairnd_launch
    sysinst_fx job wait-event -t 60 "$id" clean
    [ "$(as_user cairnu1 flux job attach "$id")" = "$(id -u cairnu1)" ]
    [ "$(sysinst_fx job eventlog "$id" | grep -c 'finish status=0')" -eq 1 ]
    [ "$(grep -c "^prolog 0 " "$SYSINST/perilog.log")" -eq 1 ]
    [ "$(grep -c "^epilog 0 " "$SYSINST/perilog.log")" -eq 1 ]
}

# wait_line PATTERN [N]: until perilog.log has N lines (default 1)
# matching it (30 s)
wait_line() {
    local _
    for _ in $(seq 1 300); do
        [ "$(grep -c "$1" "$SYSINST/perilog.log" 2>/dev/null)" -ge "${2:-1}" ] &&
            return 0
        sleep 0.1
    done
    echo "not ${2:-1} '$1' in perilog.log" >&2
    return 1
}

@test "cairnd killed in a user's prolog and in its epilog: each runs once, the job ends once" {
    local id u2
    u2=$(id -u cairnu2)
    touch "$SYSINST/hold-prolog" "$SYSINST/hold-epilog"
    id=$(as_user cairnu2 flux submit id -u)
    wait_line "^prolog 0 $u2$"
    cairnd_crash
    cairnd_launch
    rm "$SYSINST/hold-prolog"
    wait_line "^epilog 0 $u2$"
    cairnd_crash
    cairnd_launch
    rm "$SYSINST/hold-epilog"
    sysinst_fx job wait-event -t 60 "$id" clean
    [ "$(as_user cairnu2 flux job attach "$id")" = "$u2" ]
    [ "$(sysinst_fx job eventlog "$id" | grep -c 'finish status=0')" -eq 1 ]
    [ "$(cat "$SYSINST/perilog.log")" = "prolog 0 $u2
epilog 0 $u2" ]
}

@test "the rank-0 broker SIGKILLed in a user's prolog, shells and epilog: started again, each job ends once" {
    local u1 id1 id2 id3
    u1=$(id -u cairnu1)
    # in its prolog
    touch "$SYSINST/hold-prolog"
    id1=$(as_user cairnu1 flux submit -N1 id -u)
    wait_line "^prolog 0 $u1$"
    sleep 0.5 # past a KVS checkpoint
    sysinst_broker0_crash
    rm "$SYSINST/hold-prolog"
    sysinst_broker0_restart
    sysinst_fx job wait-event -t 90 "$id1" clean
    # in its shells, and in its epilog
    id2=$(as_user cairnu1 flux submit -N1 sh -c 'sleep 3; id -u')
    sysinst_fx job wait-event -t 60 "$id2" start
    sleep 0.5
    sysinst_broker0_crash
    sysinst_broker0_restart
    sysinst_fx job wait-event -t 90 "$id2" clean
    # its shell lost its broker: not a success, and its task was killed
    sysinst_fx job eventlog "$id2" |
        grep -E 'exception type="exec" severity=0 .*other processes of its session still ran; they were killed'
    touch "$SYSINST/hold-epilog"
    id3=$(as_user cairnu1 flux submit -N1 true)
    wait_line "^epilog 0 $u1$" 3 # (the earlier jobs' are there too)
    sysinst_fx job wait-event -t 60 "$id3" finish
    sleep 0.5
    sysinst_broker0_crash
    rm "$SYSINST/hold-epilog"
    sysinst_broker0_restart
    sysinst_fx job wait-event -t 90 "$id3" clean
    local id
    for id in "$id1" "$id2" "$id3"; do
        sysinst_fx job eventlog "$id" >&2
        [ "$(sysinst_fx job eventlog "$id" | grep -c ' clean')" -eq 1 ]
    done
    cat "$SYSINST/perilog.log" >&2
    # every prolog and epilog once: three jobs
    [ "$(grep -c "^prolog 0 $u1$" "$SYSINST/perilog.log")" -eq 3 ]
    [ "$(grep -c "^epilog 0 $u1$" "$SYSINST/perilog.log")" -eq 3 ]
    # nothing of the user's left running
    run pgrep -u cairnu1
    [ "$status" -eq 1 ]
}

@test "cairnd down: a user's job gets an exception within start-timeout" {
    cairnd_stop
    local id t0
    t0=$(date +%s)
    id=$(as_user cairnu1 flux submit true)
    sysinst_fx job wait-event -t 30 "$id" clean
    [ $(($(date +%s) - t0)) -le 15 ]
    sysinst_fx job eventlog "$id" | grep -E 'exception.*type="exec".*severity=0'
}

# The exception of Flux job $1 (as "TYPE SEVERITY NOTE"), once it is
# clean, and whether it ever started.
root_job_end() {
    sysinst_fx job wait-event -t 30 "$1" clean >/dev/null
    sysinst_fx job eventlog -f json "$1" | jq -r 'select(.name == "exception")
        | "\(.context.type) \(.context.severity) \(.context.note)"'
    sysinst_fx job eventlog "$1" | cut -d' ' -f2 | grep -x start || echo "never started"
}

@test "a root-owned instance without an IMP: another user's job fails before it runs, as with job-exec" {
    # issue 51: cairn ran a guest's job of a root-owned instance as that
    # user, with no IMP to check its J; job-exec refuses a multiuser job
    # without one
    u1=$(id -u cairnu1)
    [ "$(sysinst_fx getattr security.owner)" = 0 ]
    id=$(as_user cairnu1 flux submit sh -c "touch $SYSINST/ran")
    run root_job_end "$id"
    echo "$output"
    [ "${lines[0]}" = "exec 0 failed to initialize implementation: unable to run multiuser job (uid $u1, the instance's 0) with no IMP configured" ]
    [ "${lines[1]}" = "never started" ]
    # nothing ran, nothing reached cairnd
    [ ! -e "$SYSINST/ran" ]
    [ -z "$(cairn jobs -a -n -o '{id}')" ]
    # the owner's own jobs run
    [ "$(sysinst_fx run id -u)" = 0 ]
    # stock job-exec in the same instance: the same end
    sysinst_stop
    sysinst_start ''
    id=$(as_user cairnu1 flux submit sh -c "touch $SYSINST/ran")
    run root_job_end "$id"
    echo "$output"
    [[ "${lines[0]}" == "exec 0 failed to initialize implementation"* ]]
    [ "${lines[1]}" = "never started" ]
    [ ! -e "$SYSINST/ran" ]
}
