#!/usr/bin/env bats
# cairn-exec.so as Flux's job-exec (issue 14): jobs submitted to a real Flux
# instance run through cairnd, and Flux's commands behave as with stock Flux.
load lib

teardown() {
    cairnd_stop
    assert_no_leftover
}


# The only cairn job (its id, decimal).
cairn_job() {
    cairn jobs -a --json | jq -r .id | tail -n 1
}

@test "flux run -N4 hostname: each rank's flux-shell runs under cairnd" {
    cairnd_start '{}'
    run in_flux 'flux run -N4 -l hostname | sort'
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ]
    [[ "${lines[0]}" == "0: $(hostname)" ]]
    [[ "${lines[3]}" == "3: $(hostname)" ]]
    id=$(cairn_job)
    run cairn eventlog "$id" --json
    [ "$(echo "$output" | jq -r 'select(.name == "accept") | .context.jobspec.tasks[0].command[0]')" \
        = "$(dirname "$FLUX")/../libexec/flux/flux-shell" ] ||
    [[ "$(echo "$output" | jq -r 'select(.name == "accept") | .context.jobspec.tasks[0].command[0]')" == */flux-shell ]]
    # one shell per rank, each started once, each with its own broker
    [ "$(echo "$output" | jq -r 'select(.name == "proc-intent") | .context.ranks' | sort | paste -sd,)" = "0,1,2,3" ]
    [ "$(echo "$output" | jq -c 'select(.name == "proc-spawn")' | wc -l)" -eq 4 ]
    [ "$(echo "$output" | jq -r 'select(.name == "finish") | .context.status')" -eq 0 ]
}

@test "the job's exit code and Flux's result are the shells'" {
    cairnd_start '{}'
    run in_flux 'flux run -N2 sh -c "exit 3"; echo "rc=$?"
                 flux jobs -a -no "{result} {returncode}"'
    [[ "$output" == *"rc=3"* ]]
    [[ "$output" == *"FAILED 3"* ]]
    [ "$(events_named "$(cairn_job)" finish | jq .status)" -eq 768 ]
}

@test "flux cancel: one cancel exception, shells signalled, ranks released" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit -N2 sleep 300)
                 flux job wait-event -t 30 $id start >/dev/null
                 flux cancel $id
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog $id | cut -d" " -f2 | paste -sd, -
                 flux jobs -a -no "{result}"'
    [ "$status" -eq 0 ]
    # exactly one exception: cairnd's echo of the cancel is not relayed
    [ "$(echo "${lines[0]}" | tr , '\n' | grep -c '^exception$')" -eq 1 ]
    [[ "${lines[0]}" == *start*exception*finish*release*clean ]]
    [ "${lines[1]}" = "CANCELED" ]
    id=$(cairn_job)
    [ "$(events_named "$id" exception | jq -r .type)" = cancel ]
    # the shells' status: flux-shell exits 128+15 for tasks killed by SIGTERM
    [ "$(events_named "$id" finish | jq .status)" -eq $(((128 + 15) << 8)) ]
}

# Issue 37: flux-shell puts each task in a process group of its own; the
# kill escalation reached only the shell's group, so a task deaf to
# SIGTERM outlived its cancelled job (and its ranks' release).
@test "flux cancel: a task that ignores SIGTERM dies with its shell before the job ends" {
    cairnd_start '{"exec": {"kill-timeout": "0.5s"}}'
    f=$BATS_TEST_TMPDIR/task
    run in_flux "id=\$(flux submit -N1 sh -c 'trap \"\" TERM; echo \$\$ > $f; exec sleep 300')
                 flux job wait-event -t 30 \$id start >/dev/null
                 for i in \$(seq 1 100); do [ -s $f ] && break; sleep 0.05; done
                 flux cancel \$id
                 flux job wait-event -t 30 \$id clean >/dev/null
                 cat $f
                 if kill -0 \$(cat $f) 2>/dev/null; then echo task-alive; else echo task-gone; fi
                 flux jobs -a -no '{result}'"
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = task-gone ]
    [ "${lines[2]}" = CANCELED ]
    id=$(cairn_job)
    # the term signal, then the kill signal that reached the task's group
    [ "$(events_named "$id" proc-signal | jq -r .signum | paste -sd, -)" = 15,9 ]
    [ "$(events_named "$id" exception | jq -r .type)" = cancel ]
}

@test "a time limit (flux run -t) ends the job with a timeout exception" {
    cairnd_start '{}'
    run in_flux 'flux run -t 2s sleep 60; echo "rc=$?"
                 flux jobs -a -no "{result}"'
    [[ "$output" == *TIMEOUT* ]]
    [ "$(events_named "$(cairn_job)" exception | jq -r .type)" = timeout ]
}

@test "the prolog does not eat a short job's time limit (max-start-delay-percent)" {
    # issue 37 gap 6: a 4 s job after a 2 s prolog had 2 s left and timed
    # out; as job-exec, a start delayed by more than 25 % of the job's
    # duration moves the limit by that delay
    echo 2 >"$BATS_TEST_TMPDIR/sleep-prolog"
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -t 4s sh -c "sleep 3; echo alive")
                 flux job wait-event -t 30 $id start >/dev/null
                 # job-exec'"'"'s per-job stat: the limit in force, moved
                 exp=$(flux job info $id R | jq .execution.expiration)
                 flux module stats job-exec | jq --arg id $id ".jobs[\$id].expiration - $exp | . > 1.5 and . < 3"
                 flux job attach $id; echo "rc=$?"
                 flux jobs -a -no "{result}"'
    echo "$output"
    [ "${lines[0]}" = true ]
    [[ "$output" == *alive* ]]
    [[ "$output" == *"rc=0"* ]]
    [[ "$output" == *COMPLETED* ]]
}

@test "max-start-delay-percent 100: the same delay counts against the limit" {
    echo 2 >"$BATS_TEST_TMPDIR/sleep-prolog"
    cairnd_start "$(perilog_conf '"exec": {"max-start-delay-percent": 100}')"
    run in_flux 'flux run -t 4s sh -c "sleep 3; echo alive"; echo "rc=$?"
                 flux jobs -a -no "{result}"'
    [[ "$output" != *alive* ]]
    [[ "$output" == *TIMEOUT* ]]
}

@test "prolog and epilog run under cairnd and show in Flux's eventlog" {
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -N4 true)
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog $id | cut -d" " -f2 | paste -sd, -
                 flux job eventlog -f json $id |
                     jq -c "select(.name|test(\"log-\")) | [.name, .context]"'
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == *prolog-start*prolog-finish*start*finish*epilog-start*epilog-finish*release*free*clean* ]] ||
    [[ "${lines[0]}" == *prolog-start*prolog-finish*start*finish*epilog-start*epilog-finish*release*clean* ]]
    [[ "$output" == *'["prolog-start",{"description":"job-manager.prolog"}]'* ]]
    [[ "$output" == *'["prolog-finish",{"description":"job-manager.prolog","status":0}]'* ]]
    [[ "$output" == *'["epilog-finish",{"description":"job-manager.epilog","status":0}]'* ]]
    [ "$(grep -c '^prolog ' "$BATS_TEST_TMPDIR/runlog")" -eq 4 ]
    [ "$(grep -c '^epilog ' "$BATS_TEST_TMPDIR/runlog")" -eq 4 ]
    # FLUX_JOB_ID is Flux's F58, as perilog sets it
    [[ "$(head -1 "$BATS_TEST_TMPDIR/runlog")" == "prolog ƒ"* ]]
}

# issue 35: a new job goes to cairnd at once, and its prolog runs while the
# module makes the guest namespace; the shells wait for the module's word
# that it is there (jobspec hold-start, a `resume` during the prolog).
@test "a new job's prolog runs while its namespace is made; no hold" {
    echo 1 >"$BATS_TEST_TMPDIR/sleep-prolog"
    cairnd_start "$(perilog_conf)"
    run in_flux 'flux run -N4 true; echo "rc=$?"'
    echo "$output"
    [[ "$output" == *"rc=0"* ]]
    run cairn eventlog "$(cairn_job)" --json
    [ "$(echo "$output" | jq -r 'select(.name | test("^(prolog-finish|hold|resume|start)$")) | .name' | paste -sd,)" = resume,prolog-finish,start ]
    [ "$(echo "$output" | jq -r 'select(.name == "resume") | .context.ready')" = true ]
}

# The prolog ends before the namespace is made (held here by the test
# hook): cairnd holds every rank, no shell starts, and the shells start
# once the namespace is there.
@test "a prolog done before the namespace: the shells wait for it" {
    D=$BATS_TEST_TMPDIR
    cairnd_start "$(perilog_conf)"
    touch "$D/hold-ns"
    export CAIRN_TEST_HOLD_NS=$D/hold-ns
    run in_flux "id=\$(flux submit -N4 sh -c 'echo shell >>$D/runlog')
                 dec=\$(flux job id --to=dec \$id)
                 for i in \$(seq 200); do
                     $B/cairn --statedir $STATEDIR eventlog \$dec --json 2>/dev/null |
                         jq -e 'select(.name == \"hold\")' >/dev/null && break
                     sleep 0.05
                 done
                 sleep 1
                 echo \"held: \$($B/cairn --statedir $STATEDIR eventlog \$dec --json |
                     jq -c 'select(.name == \"start\")' | wc -l) starts\"
                 rm $D/hold-ns
                 flux job wait-event -t 30 \$id clean >/dev/null; echo clean=\$?
                 echo \"result=\$(flux jobs -no {result} \$id)\""
    unset CAIRN_TEST_HOLD_NS
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"held: 0 starts"* ]]
    [[ "$output" == *clean=0* ]]
    [[ "$output" == *result=COMPLETED* ]]
    [ "$(grep -c '^shell' "$D/runlog")" -eq 4 ]
    run cairn eventlog "$(cairn_job)" --json
    [ "$(echo "$output" | jq -r 'select(.name | test("^(prolog-finish|hold|resume|start)$")) | .name' | paste -sd,)" = prolog-finish,hold,resume,start ]
    # held for the word alone, which the module said once the namespace
    # was there (no shrink, no second resume)
    [ "$(echo "$output" | jq -r 'select(.name == "hold") | "\(.context.ranks) \(.context.wait)"')" = "0-3 ready" ]
    [ "$(echo "$output" | jq -r 'select(.name == "resume") | .context.ready')" = true ]
}

@test "a failing prolog: fatal prolog exception, epilog still runs" {
    echo 1 >"$BATS_TEST_TMPDIR/exit-prolog-2"
    cairnd_start "$(perilog_conf)"
    run in_flux 'flux run -N4 true; echo "rc=$?"
                 id=$(flux jobs -a -no {id})
                 flux job eventlog $id | cut -d" " -f2 | paste -sd, -
                 flux job eventlog -f json $id |
                     jq -r "select(.name==\"exception\") | .context.type"'
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *prolog-start*exception*prolog-finish* ]]
    [[ "$output" == *$'\n'prolog* ]]
    [ "$(grep -c '^epilog ' "$BATS_TEST_TMPDIR/runlog")" -eq 4 ]
    [ "$(grep -c '^shell' "$BATS_TEST_TMPDIR/runlog")" -eq 0 ]
}

# A prolog exit code the site calls tolerable (prolog.tolerable-exit-codes)
# within the jobspec's allowance: the rank is drained in Flux, a severity-2
# exception names it, and the job runs on the other ranks. flux-shell sizes
# the job from R, so the job's R in the KVS holds only those ranks when the
# shells start (src/flux/shrink.h).
@test "a tolerated prolog failure: drained, severity 2, the job runs on the rest" {
    echo 7 >"$BATS_TEST_TMPDIR/exit-prolog-2"
    cairnd_start "$(perilog_conf | sed '0,/"per-rank": true}/s//"per-rank": true, "tolerable-exit-codes": [7]}/')"
    run in_flux 'ranks=$(flux run -N4 --setattr=system.exec.prolog-failures-allowed=1 \
                     flux getattr rank); echo "rc=$?"
                 echo "$ranks" | sort -u | paste -sd" " -
                 id=$(flux jobs -a -no {id})
                 echo "result=$(flux jobs -no {result} $id)"
                 flux job eventlog -f json $id |
                     jq -r "select(.name==\"exception\") | \"exc=\(.context.severity) \(.context.note)\""
                 echo "R=$(flux job info $id R | jq -r "[.execution.R_lite[].rank] | join(\",\")")"
                 echo "drained=$(flux resource drain -no {ranks})"
                 flux resource drain -no {reason}'
    echo "$output"
    [[ "$output" == *$'\n'"0 1 3"$'\n'* ]]
    [[ "$output" == *"rc=0"* ]]
    [[ "$output" == *"result=COMPLETED"* ]]
    [[ "$output" == *"exc=2 prolog failed on rank 2 (tolerated, 1 of 1 allowed)"* ]]
    [[ "$output" == *"R=0-1,3"* ]]
    [[ "$output" == *"drained=2"* ]]
    [[ "$output" == *"prolog failed on rank 2 (tolerated"* ]]
    [ "$(grep -c '^prolog ' "$BATS_TEST_TMPDIR/runlog")" -eq 4 ]
    [ "$(grep -c '^epilog ' "$BATS_TEST_TMPDIR/runlog")" -eq 4 ]
    # the journal: held with the ranks that ran (for the shrink: no
    # "wait"), resumed once after the hold, then one shell each on those
    # ranks; the namespace's word (a ready resume) once, before or after
    run cairn eventlog "$(cairn_job)" --json
    [ "$(echo "$output" | jq -r 'select(.name == "hold") | "\(.context.ranks) \(.context.wait)"')" = "0-1,3 null" ]
    [ "$(echo "$output" | jq -r 'select(.name == "hold" or (.name == "resume" and .context.ready != true) or .name == "start") | .name' | paste -sd,)" = hold,resume,start ]
    [ "$(echo "$output" | jq -c 'select(.name == "resume" and .context.ready == true)' | wc -l)" -eq 1 ]
    [ "$(echo "$output" | jq -r 'select(.name == "proc-intent" and .context.phase == "shell") | .context.ranks' | paste -sd,)" = 0,1,3 ]
}

@test "flux alloc without rank 0: critical ranks are shell ranks, not broker ranks" {
    # issue 37 gap 1: a sub-instance names its critical ranks by shell rank
    # (0..N-1); cairnd checks broker ranks. Before, "not a subset of the
    # job's ranks" killed the sub-instance at start and its job stayed in RUN.
    cairnd_start '{}'
    run in_flux 'flux submit -N1 --exclusive sleep 60 >/dev/null
                 flux alloc -N1 flux getattr size; echo "rc=$?"
                 flux cancel --all
                 flux job wait-event -t 20 $(flux jobs -ano {id} | tail -n 1) clean >/dev/null
                 flux jobs -a -no "{ranks} {result}" | sort'
    [ "$status" -eq 0 ]
    [[ "$output" == *"rc=0"* ]]
    [[ "$output" != *"not a subset"* ]]
    [[ "$output" == *"1 COMPLETED"* ]]
    # cairnd was told broker rank 1, the alloc job's only rank
    id=$(cairn jobs -a --json | jq -r 'select(.ranks == "1") | .id' | tail -n 1)
    run cairn eventlog "$id" --json
    [ "$(echo "$output" | jq -r 'select(.name == "critical-ranks") | .context.ranks')" = "1" ]
}

@test "job-exec.critical-ranks past the job's last shell: EINVAL, named" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit -N2 sleep 30)
                 flux job wait-event -t 20 $id start >/dev/null
                 flux python -c "
import flux, sys
from flux.job import JobID
h = flux.Flux()
try:
    h.rpc(\"job-exec.critical-ranks\", {\"id\": JobID(sys.argv[1]), \"ranks\": \"0-2\"}).get()
    print(\"accepted\")
except OSError as e:
    print(\"errno=%d %s\" % (e.errno, e.strerror))
" $id
                 flux cancel $id; flux job wait-event -t 20 $id clean >/dev/null'
    [ "$status" -eq 0 ]
    [[ "$output" == *"errno=22 ranks: shell rank 2 is not one of the job's 2 shells"* ]]
}

@test "cairnd unreachable: flux dmesg says why at once, the job fails within start-timeout" {
    # issue 32: a module that could not reach cairnd retried for ever in
    # silence, and a job sat in RUN with nothing in its eventlog
    STATEDIR=$BATS_TEST_TMPDIR/nocairnd
    mkdir -p "$STATEDIR"
    flux_conf
    sed -i "s|^args = \[\(.*\)\]|args = [\1, \"start-timeout=2s\"]|" "$FLUX_CONF_DIR/cairn.toml"
    run in_flux 'flux run true; echo "rc=$?"
                 id=$(flux jobs -a -no {id})
                 flux job eventlog $id | grep exception
                 flux dmesg | grep -c "cannot connect to cairnd"'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *"type=exec severity=0 cairnd did not take the job within 2s"*"No such file or directory"* ]]
    # said once, not on every retry
    [ "${lines[-1]}" -eq 1 ]
}

@test "prolog and epilog failures: the note names the host, flux dmesg has them" {
    # issue 37: Flux's perilog names the host ("... on HOST (rank 1)") and
    # logs failures; cairn's notes named the rank only, dmesg had nothing
    echo 1 >"$BATS_TEST_TMPDIR/exit-prolog-2"
    echo 3 >"$BATS_TEST_TMPDIR/exit-epilog-1"
    cairnd_start "$(perilog_conf)"
    run in_flux 'flux run -N4 true; echo "rc=$?"
                 id=$(flux jobs -a -no {id})
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog $id | grep exception
                 flux dmesg | grep "cairn-exec\|job ƒ" | grep -i "prolog\|epilog"'
    echo "$output"
    [[ "$output" == *"type=prolog severity=0 prolog failed on rank 2: "*"(on $(hostname))"* ]]
    [[ "$output" == *"type=epilog severity=2 epilog failed on rank 1: "*"(on $(hostname))"* ]]
    [[ "$output" == *"err"*"prolog failed on rank 2"* ]]
    [[ "$output" == *"epilog failed on rank 1"* ]]
}

# issue 37: cairn's drain list and Flux's never agreed; under Flux, Flux's
# is the one: an undrain there undrains in cairnd (drainsync.h), and
# cairn undrain is refused while the instance is bound
@test "an undrain in Flux undrains in cairnd; cairn undrain defers to Flux" {
    echo 3 >"$BATS_TEST_TMPDIR/exit-epilog-1"
    cairnd_start "$(perilog_conf)"
    run in_flux "flux run -N4 true
                 id=\$(flux jobs -a -no {id})
                 flux job wait-event -t 30 \$id clean >/dev/null
                 echo flux=\$(flux resource drain -no {ranks})
                 echo cairn=\$($B/cairn --statedir $STATEDIR drain --json | jq -r .rank)
                 $B/cairn --statedir $STATEDIR undrain 1; echo rc=\$?
                 flux resource undrain 1
                 for i in \$(seq 1 50); do
                     [ -z \"\$($B/cairn --statedir $STATEDIR drain --json)\" ] && break
                     sleep 0.1
                 done
                 echo flux=\$(flux resource drain -no {ranks})
                 echo cairn=\$($B/cairn --statedir $STATEDIR drain --json | jq -r .rank)"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c '^flux=1$' <<<"$output")" -eq 1 ]
    [ "$(grep -c '^cairn=1$' <<<"$output")" -eq 1 ]
    [[ "$output" == *"cairn undrain: undrain: cairnd serves Flux instance "*"whose drain list is the one: undrain there (flux resource undrain RANKS), and cairnd follows (cairn-exec(8))"* ]]
    [[ "$output" == *"rc=1"* ]]
    [ "$(tail -n 2 <<<"$output" | paste -sd' ')" = "flux= cairn=" ]
}
