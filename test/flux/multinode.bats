#!/usr/bin/env bats
# Ranks on many nodes through Flux (issue 15, DESIGN-MULTINODE.md): in a
# `flux start --test-size=4` instance every broker rank has its own cairnd
# and state dir, as if each were a separate machine (rank 0's is the
# rank-0 cairnd, which keeps the jobs; ranks 1-3 run node cairnds), and
# cairn-exec.so on every broker relays between them over Flux's overlay.
load lib

setup() {
    D=$BATS_TEST_TMPDIR
    STATEDIR=$D/state
    echo '{"role": "node"}' >"$D/node.conf"
    # (re)start the cairnd of rank0 or of node N; pid in pid.WHO
    LAUNCH=$(script launch.sh <<EOF
#!/bin/sh
if [ "\$1" = rank0 ]; then conf=$D/cairn.conf dir=$STATEDIR
else conf=$D/node.conf dir=$D/node\$1; fi
mkdir -p "\$dir" && chmod 700 "\$dir"
CAIRN_TEST_TAG=$D "$B/cairnd" -c "\$conf" --statedir "\$dir" \\
    2>>"$D/cairnd-\$1.log" </dev/null >/dev/null &
echo \$! >"$D/pid.\$1"
for i in \$(seq 1 200); do
    "$B/cairn" --statedir "\$dir" list >/dev/null 2>&1 && exit 0
    sleep 0.05
done
echo "cairnd \$1 did not start" >&2
exit 1
EOF
    )
    # per-rank prolog and epilog: log "PHASE JOBID RANK" to runlog, wait
    # while hold-PHASE-RANK exists
    PERILOG=$(script perilog.sh <<'SH'
#!/bin/sh
d=$(dirname "$0")
echo "$CAIRN_PHASE $FLUX_JOB_ID $CAIRN_RANK" >>"$d/runlog"
while [ -e "$d/hold-$CAIRN_PHASE-$CAIRN_RANK" ]; do sleep 0.05; done
exit 0
SH
    )
    multinode_conf "$D/node%r"
}

teardown() {
    local f pid
    for f in "$D"/pid.*; do
        [ -e "$f" ] || continue
        pid=$(cat "$f")
        kill -CONT "$pid" 2>/dev/null
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    done
    sysflux_stop || true
    assert_no_leftover
}

# Start the rank-0 cairnd (multinode on, $1: more keys) and nodes 1-3.
cairnds_start() {
    printf '{"prolog": {"command": ["%s"], "per-rank": true},
             "epilog": {"command": ["%s"], "per-rank": true},
             "multinode": {"poll": "0.3s"%s}}\n' \
        "$PERILOG" "$PERILOG" "${1:+, $1}" >"$D/cairn.conf"
    "$LAUNCH" rank0 && "$LAUNCH" 1 && "$LAUNCH" 2 && "$LAUNCH" 3
}

# The nodeprocs records of node $1 for job $2 (decimal id), one JSON each,
# read from its journal with the LMDB tools (hex dump: records hold UTF-8).
node_records() {
    mdb_dump -s nodeprocs "$D/node$1/journal" | python3 -c '
import json, sys
lines = [l.strip() for l in sys.stdin]
data = lines[lines.index("HEADER=END") + 1:]
for k, v in zip(data[0::2], data[1::2]):
    if k == "DATA=END":
        break
    rec = json.loads(bytes.fromhex(v))
    if rec.get("id") == int(sys.argv[1]):
        print(json.dumps(rec))
' "$2"
}

jobdec() { "$FLUX" job id --to=dec "$1"; }

@test "flux run -N4 hostname: each rank's shell under its own rank's node cairnd" {
    cairnds_start
    run in_flux 'flux run -N4 --label-io hostname | sort; flux job last
                 flux kvs get cairn.instance'
    echo "$output"
    [ "$status" -eq 0 ]
    for r in 0 1 2 3; do [ "${lines[$r]}" = "$r: $(hostname)" ]; done
    dec=$(jobdec "${lines[4]}")
    # each cairnd, the node ones too, served this instance only (bind.h)
    for who in rank0 1 2 3; do
        grep -q "bound to Flux instance ${lines[5]} " "$D/cairnd-$who.log"
    done
    # each node journaled its rank's prolog, shell and epilog, once, and
    # rank 0 acknowledged every end
    for r in 1 2 3; do
        run node_records $r "$dec"
        [ "${#lines[@]}" -eq 3 ]
        printf '%s\n' "${lines[@]}" | jq -e -s --argjson r $r '
            (map(.phase) | sort) == ["epilog", "prolog", "shell"]
            and all(.[]; .rank == $r and .state == "ended"
                         and .status == 0 and .acked)'
    done
    # rank 0 ran rank 0's, and knows where each other one ran
    cairn eventlog "$dec" --json | jq -e -s '
        [.[] | select(.name == "proc-spawn")] | length == 12
        and (map(select(.context.host)) | length == 9)'
    [ "$(grep -c "^prolog " "$D/runlog")" -eq 4 ]
    [ "$(grep -c "^epilog " "$D/runlog")" -eq 4 ]
    run cairn verify "$dec"
    [ "$status" -eq 0 ]
}

# SIGKILL rank 0's cairnd, then node 2's, while PHASE ($1) is held on
# every rank; both come back; the job ends normally, everything ran once.
crash_both_during() {
    local ph=$1 r
    cairnds_start
    for r in 0 1 2 3; do touch "$D/hold-$ph-$r"; done
    run in_flux "
        id=\$(flux submit -N4 sh -c 'echo shell \$FLUX_TASK_RANK >>$D/runlog; while [ -e $D/hold-shell-\$FLUX_TASK_RANK ]; do sleep 0.05; done')
        for i in \$(seq 1 400); do
            [ \$(grep -c '^$ph ' $D/runlog 2>/dev/null) -eq 4 ] && break
            sleep 0.05
        done
        kill -9 \$(cat $D/pid.rank0); sleep 0.3; $LAUNCH rank0 || exit 11
        kill -9 \$(cat $D/pid.2); sleep 0.3; $LAUNCH 2 || exit 12
        rm -f $D/hold-$ph-*
        flux job wait-event -t 60 \$id clean >/dev/null || exit 13
        flux jobs -no '{result}' \$id
        echo \$id"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-2]}" = COMPLETED ]
    for p in prolog shell epilog; do
        [ "$(grep -c "^$p " "$D/runlog")" -eq 4 ]
    done
    dec=$(jobdec "${lines[-1]}")
    for r in 1 2 3; do
        [ "$(node_records $r "$dec" | jq -s 'length')" -eq 3 ]
    done
    run cairn verify "$dec"
    [ "$status" -eq 0 ]
}

@test "rank 0's cairnd, then a node's, SIGKILLed during the prolog: the job completes, once" {
    crash_both_during prolog
}

@test "rank 0's cairnd, then a node's, SIGKILLed while the shells run: the job completes, once" {
    crash_both_during shell
}

@test "rank 0's cairnd, then a node's, SIGKILLed during the epilog: the job completes, once" {
    crash_both_during epilog
}

@test "a node broker SIGKILLed and restarted: its epilog goes on, rank 0 catches up" {
    cairnds_start
    sysflux_conf "$(sysflux_cairn_toml)"
    sysflux_start
    touch "$D/hold-epilog-2"
    id=$(fx submit -N4 true)
    for i in $(seq 1 400); do
        [ "$(grep -c '^epilog ' "$D/runlog" 2>/dev/null)" -eq 4 ] && break
        sleep 0.05
    done
    startctl kill 2 9
    startctl wait 2 || true
    # rank 2's epilog runs on under its shim, the broker gone
    grep -q "^epilog .* 2$" "$D/runlog"
    [ -n "$(pgrep -f "perilog.sh" | head -1)" ]
    rm "$D/hold-epilog-2"
    sleep 0.5 # it ends while rank 2 has no broker: its node keeps the end
    startctl run 2
    sysflux_waitup 30 4
    fx job wait-event -t 60 "$id" clean >/dev/null
    [ "$(fx jobs -no '{result}' "$id")" = COMPLETED ]
    dec=$(jobdec "$id")
    node_records 2 "$dec" | jq -e -s 'map(select(.phase == "epilog"))
        | length == 1 and .[0].acked and .[0].status == 0'
    [ "$(grep -c "^epilog " "$D/runlog")" -eq 4 ]
    sysflux_stop
}

@test "a node silent past multinode.timeout: exception and drain name it; its late report changes nothing" {
    cairnds_start '"timeout": "3s"'
    touch "$D/hold-prolog-3" "$D/hold-epilog-0"
    run in_flux "
        id=\$(flux submit -N4 true)
        for i in \$(seq 1 400); do
            grep -q '^prolog .* 3\$' $D/runlog 2>/dev/null && break
            sleep 0.05
        done
        kill -STOP \$(cat $D/pid.3)
        flux job wait-event -t 30 \$id exception >/dev/null || exit 11
        flux job eventlog -f json \$id | jq -r 'select(.name == \"exception\") | .context.note'
        flux resource drain -no '{ranks} {reason}'
        # the prolog ends while its node is stopped; the node tells later
        rm $D/hold-prolog-3
        sleep 1
        kill -CONT \$(cat $D/pid.3)
        dec=\$(flux job id --to=dec \$id)
        for i in \$(seq 1 200); do
            $B/cairn --statedir $STATEDIR eventlog \$dec --json | grep -q proc-late && break
            sleep 0.05
        done
        rm $D/hold-epilog-0
        flux job wait-event -t 60 \$id clean >/dev/null || exit 12
        flux jobs -no '{result}' \$id
        flux resource drain -no '{ranks}'
        echo \$dec"
    echo "$output"
    [ "$status" -eq 0 ]
    # (the broker's log, on stderr, has the same note: prolog failures go
    # to flux dmesg)
    printf '%s\n' "${lines[@]}" | grep -q "^prolog failed on rank 3: node .* (rank 3) unreachable for "
    printf '%s\n' "${lines[@]}" | grep -q "^3 prolog for job .*(rank 3) unreachable for "
    [ "${lines[-3]}" = FAILED ]
    [ "${lines[-2]}" = 3 ] # still drained: the late report undid nothing
    dec=${lines[-1]}
    cairn eventlog "$dec" --json | jq -e -s 'map(select(.name == "proc-late"))
        | length == 1 and .[0].context.state == "ended"
        and .[0].context.status == 0'
    run cairn verify "$dec"
    [ "$status" -eq 0 ]
}

@test "a node broker SIGKILLed while the shells run: the job ends at once, the drain names the node" {
    # issue 33: the job waited for multinode.timeout (5 min by default)
    # although Flux's overlay knew in about a second
    # the bound: stock job-exec in the same instance, just before
    sysflux_conf ""
    sysflux_start
    id=$(fx submit -N4 sleep 300)
    fx job wait-event -t 30 "$id" start >/dev/null
    sleep 1
    t0=$(date +%s.%N)
    startctl kill 2 9
    fx job wait-event -t 60 "$id" clean >/dev/null
    stock=$(echo "$(date +%s.%N) - $t0" | bc)
    startctl wait 2 || true
    sysflux_stop
    rm -rf "$SYSFLUX"
    SYSFLUX=
    cairnds_start
    sysflux_conf "$(sysflux_cairn_toml)"
    sysflux_start
    id=$(fx submit -N4 sh -c "echo \$\$ >>$D/tasks; exec sleep 300")
    fx job wait-event -t 30 "$id" start >/dev/null
    for i in $(seq 1 400); do
        [ "$(cat "$D/tasks" 2>/dev/null | wc -l)" -eq 4 ] && break
        sleep 0.05
    done
    [ "$(wc -l <"$D/tasks")" -eq 4 ]
    t0=$(date +%s.%N)
    startctl kill 2 9
    startctl wait 2 || true
    fx job wait-event -t 60 "$id" clean >/dev/null
    elapsed=$(echo "$(date +%s.%N) - $t0" | bc)
    echo "fault to clean: ${elapsed}s (stock job-exec: ${stock}s)"
    # no later than stock, give or take a loaded machine's second
    [ "$(echo "$elapsed < $stock + 1" | bc)" -eq 1 ]
    fx job eventlog "$id" | grep exception
    fx job eventlog -f json "$id" | jq -r 'select(.name == "exception") | .context.note' \
        | grep -q "node .* (rank 2) lost: its broker left Flux's overlay (broker.online)$"
    fx resource drain -no '{ranks} {reason}' | grep -q "^2 .*(rank 2) lost"
    # its epilog, asked for after the loss, is lost for the same reason
    fx job eventlog -f json "$id" | jq -r 'select(.name == "exception") | .context.note' \
        | grep -q "^epilog failed on rank 2: node .* (rank 2) lost: its broker left"
    grep -q "broker rank(s) 2 left Flux's overlay" "$BATS_TEST_TMPDIR/flux.log"
    # back: what still ran there under its node cairnd is killed
    startctl run 2
    sysflux_waitup 30 4
    dec=$(jobdec "$id")
    alive() { local p; for p in $(cat "$D/tasks"); do kill -0 "$p" 2>/dev/null && echo "$p"; done; }
    for i in $(seq 1 200); do
        [ -z "$(alive)" ] && break
        sleep 0.1
    done
    [ -z "$(alive)" ]
    run cairn verify "$dec"
    [ "$status" -eq 0 ]
    sysflux_stop
}

@test "partial release across nodes: a remote rank stays out of the scheduler until its epilog ends" {
    # issue 33: cairn-flux-housekeeping on a rank above 0 asked that
    # host's node cairnd, which refused it; it exited 2 and Flux freed the
    # rank while its epilog still ran
    cairnds_start
    # rank 0's cairnd releases each rank as its epilog ends
    jq -c '. + {"release-after": "0"}' "$D/cairn.conf" >"$D/cairn.conf.new"
    mv "$D/cairn.conf.new" "$D/cairn.conf"
    kill "$(cat "$D/pid.rank0")"
    for _ in $(seq 1 100); do kill -0 "$(cat "$D/pid.rank0")" 2>/dev/null || break; sleep 0.05; done
    "$LAUNCH" rank0
    ln -s "$STATEDIR" "$D/node0" # the helper's statedir=DIR/node%r on rank 0
    sysflux_conf "$(sysflux_cairn_toml)
$(printf '[job-manager.housekeeping]\ncommand = ["%s", "statedir=%s"]\nrelease-after = "0"\n' \
        "$B/cairn-flux-housekeeping" "$D/node%r")"
    sysflux_start
    touch "$D/hold-epilog-2"
    id=$(fx submit -N4 true)
    for i in $(seq 1 400); do
        [ "$(fx resource list -s free -no '{nnodes}')" = 3 ] && break
        sleep 0.05
    done
    sleep 1 # a helper that gave up would free rank 2 now
    fx resource list
    [ "$(fx resource list -s free -no '{ranks}')" = "0-1,3" ]
    [ "$(fx housekeeping list -no '{id} {ranks}')" = "$id 2" ]
    grep -q "^epilog .* 2$" "$D/runlog"
    rm "$D/hold-epilog-2"
    for i in $(seq 1 400); do
        [ "$(fx resource list -s free -no '{nnodes}')" = 4 ] && break
        sleep 0.05
    done
    [ "$(fx resource list -s free -no '{nnodes}')" = 4 ]
    run grep "housekeeping.*nonzero exit" "$BATS_TEST_TMPDIR/flux.log"
    [ "$status" -ne 0 ]
    sysflux_stop
}
