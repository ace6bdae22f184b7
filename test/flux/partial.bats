#!/usr/bin/env bats
# Partial release under Flux (issue 14): with Flux's housekeeping running
# cairn-flux-housekeeping (release-after = "0"), a rank whose epilog is done
# goes back to the scheduler while another rank's epilog still runs, and
# a new job is scheduled onto it meanwhile. Without it, the ranks are
# freed together after the last epilog, as with perilog.so.
load lib

setup() {
    D=$BATS_TEST_TMPDIR
}

teardown() {
    cairnd_stop
    assert_no_leftover
}

# cairnd's per-rank epilog: logs "epilog JOBID RANK", waits while
# hold-RANK exists, exits with exit-RANK if that exists; logs "done" last.
# cairnd's release-after is $1 (default 0: each rank as its epilog ends).
gated_epilog_conf() {
    local c
    c=$(script epilog.sh <<'SH'
#!/bin/sh
d=$(dirname "$0")
echo "epilog $FLUX_JOB_ID $CAIRN_RANK" >>"$d/runlog"
while [ -e "$d/hold-$CAIRN_RANK" ]; do sleep 0.05; done
echo "done $FLUX_JOB_ID $CAIRN_RANK" >>"$d/runlog"
[ -e "$d/exit-$CAIRN_RANK" ] && exit "$(cat "$d/exit-$CAIRN_RANK")"
exit 0
SH
)
    echo "{\"epilog\": {\"command\": [\"$c\"], \"per-rank\": true},
           \"release-after\": \"${1:-0}\"}"
}

hk_toml() {
    printf '[job-manager.housekeeping]\ncommand = ["%s", "statedir=%s"]\nrelease-after = "0"\n' \
        "$B/cairn-flux-housekeeping" "$STATEDIR"
}

# Inside the instance: wait (bounded) until `flux resource list` shows $1
# nodes in state $2.
WAIT_NODES='wait_nodes() {
    for i in $(seq 1 300); do
        [ "$(flux resource list -s $2 -no "{nnodes}")" = "$1" ] && return 0
        sleep 0.1
    done
    echo "never $1 nodes $2:"; flux resource list; return 1
}'

@test "partial release: ranks 0-2 run a new job while rank 3's epilog still runs" {
    cairnd_start "$(gated_epilog_conf)"
    flux_conf "$(hk_toml)"
    touch "$D/hold-3"
    run in_flux "$WAIT_NODES
        id1=\$(flux submit -N4 true)
        flux job wait-event -t 30 \$id1 clean >/dev/null || exit 11
        # ranks 0-2 came back, rank 3 is still held by its epilog
        wait_nodes 3 free || exit 12
        [ \"\$(flux resource list -s allocated -no '{ranks}')\" = 3 ] ||
            { flux resource list; exit 13; }
        flux housekeeping list -no '{id} {nnodes}'
        id2=\$(flux submit -N3 true)
        flux job wait-event -t 30 \$id2 clean >/dev/null || exit 14
        echo \"job2 \$(flux jobs -no '{result} {ranks}' \$id2)\"
        grep -c '^done' $D/runlog
        rm $D/hold-3
        wait_nodes 4 free || exit 15
        echo \"job1 \$(flux job eventlog \$id1 | cut -d' ' -f2 | paste -sd, -)\"
        echo \"cairn \$(flux job id --to=dec \$id1)\""
    echo "$output"
    [ "$status" -eq 0 ]
    # housekeeping held job 1's one node while job 2 ran on the others
    [[ "$output" == *"ƒ"*" 1"* ]]
    [[ "$output" == *"job2 COMPLETED [0-2]"* ]]
    # when job 2 was clean, its three epilogs and job 1's ranks 0-2 were
    # done, rank 3's not (7 would mean it had ended first)
    [[ "$(grep -x '[0-9]*' <<<"$output")" == 6 ]]
    # the Flux job ended normally; epilog events are not posted in this
    # mode (they would hold every rank until the last epilog)
    [[ "$output" == *"job1 submit,"*",start,finish,release,free,clean"* ]]
    [[ "$output" != *epilog-start* ]]
    # cairnd: each rank released once, rank 3 last, after its epilog
    id=$(sed -n 's/^cairn //p' <<<"$output")
    run events_named "$id" release
    echo "$output"
    [ "$(jq -r .ranks <<<"${lines[-1]}")" = 3 ]
    [ "$(jq -r .final <<<"${lines[-1]}")" = true ]
    [ "$(jq -r .ranks <<<"$output" | grep -c 3)" -eq 1 ]
    [ "$(grep -c "^epilog" "$D/runlog")" -eq 7 ]
}

@test "partial release: a failed epilog drains its rank before Flux frees it" {
    cairnd_start "$(gated_epilog_conf)"
    flux_conf "$(hk_toml)"
    echo 1 >"$D/exit-2"
    run in_flux "$WAIT_NODES
        id=\$(flux submit -N4 true)
        flux job wait-event -t 30 \$id clean >/dev/null || exit 11
        wait_nodes 3 free || exit 12
        flux resource drain -no '{ranks} {reason}'"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" == "2 epilog failed for job "* ]]
}

@test "without cairn-flux-housekeeping the ranks are freed together, after the last epilog" {
    cairnd_start "$(gated_epilog_conf -1)"
    flux_conf
    touch "$D/hold-3"
    run in_flux "$WAIT_NODES
        id=\$(flux submit -N4 true)
        flux job wait-event -t 30 \$id epilog-start >/dev/null || exit 11
        for i in \$(seq 1 100); do
            [ \"\$(grep -c '^done' $D/runlog)\" -ge 3 ] && break; sleep 0.1
        done
        echo \"free while held: \$(flux resource list -s free -no '{nnodes}')\"
        rm $D/hold-3
        flux job wait-event -t 30 \$id clean >/dev/null || exit 12
        wait_nodes 4 free || exit 13
        flux job eventlog \$id | cut -d' ' -f2 | paste -sd, -"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"free while held: 0"* ]]
    [[ "${lines[-1]}" == *,start,finish,epilog-start,epilog-finish,release,free,clean ]]
}

@test "cairn-flux-housekeeping: bad usage exits 2 with a message; an unknown job exits 0" {
    run env -u FLUX_JOB_ID "$B/cairn-flux-housekeeping"
    [ "$status" -eq 2 ]
    [[ "$output" == *"FLUX_JOB_ID is not a decimal job id (unset)"* ]]
    run env FLUX_JOB_ID=ƒ3x "$B/cairn-flux-housekeeping"
    [ "$status" -eq 2 ]
    [[ "$output" == *"not a decimal job id (ƒ3x)"* ]]
    run env FLUX_JOB_ID=1 "$B/cairn-flux-housekeeping" --bogus
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown argument '--bogus'"* ]]
    cairnd_start '{}'
    run in_flux "FLUX_JOB_ID=4242 $B/cairn-flux-housekeeping statedir=$STATEDIR; echo rc=\$?"
    [ "$status" -eq 0 ]
    [[ "$output" == *"rc=0"* ]]
}
