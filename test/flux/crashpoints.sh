#!/bin/bash
# crashpoints.sh - cairnd's crash points under a real Flux job-manager.
# Runs inside a `flux start` instance whose job-exec is cairn-exec.so
# (test/flux/crashpoints.bats starts it). For every crash point NAME:K that
# a clean 4-rank job with per-rank prolog and epilog passes (K = 1 and the
# last K), it starts cairnd with CAIRN_CRASH_AT=NAME:K, runs the job through
# Flux, restarts cairnd when the crash comes, and checks what Flux and the
# journal say. Prints one line per case ("ok NAME:K" or "FAIL NAME:K: why")
# and a summary; exits 1 if any case failed.
#
# MODE tolerated: rank 3's prolog fails tolerably (exit 7, one failure
# allowed), so cairnd holds the shells while cairn-exec.so shrinks the
# job's R, then resumes; every commit (journal.commit.after:K for every K)
# is a case too, so that a crash falls between hold and resume.
#
# MODE multinode: ranks 1-3 run their processes under node cairnds of
# their own (WORKDIR/node1..3, "role": "node"; the instance loads
# cairn-exec.so there with statedir=WORKDIR/node%r, multinode_conf in
# lib.bash). The cases are rank 0's crash points and node 2's: a case
# "node POINT:K" crashes the node cairnd of rank 2 instead.
#
# Usage: crashpoints.sh BUILDDIR WORKDIR [MAXCASES] [MODE]
set -u
B=$1 W=$2 MAX=${3:-0} MODE=${4:-clean}
CONF=$W/cairn.conf
S=$W/state

PL=$W/perilog.sh
cat >"$PL" <<'SH'
#!/bin/sh
echo "$CAIRN_PHASE $CAIRN_RANK" >>"$CP_RUNLOG"
[ "$CP_MODE" = tolerated ] && [ "$CAIRN_PHASE $CAIRN_RANK" = "prolog 3" ] && exit 7
exit 0
SH
chmod +x "$PL"
export CP_MODE=$MODE
MN=
[ "$MODE" = multinode ] && MN=', "multinode": {"timeout": "60s", "poll": "0.3s"}'
printf '{"prolog": {"command": ["%s"], "per-rank": true, "tolerable-exit-codes": [7]},
 "epilog": {"command": ["%s"], "per-rank": true}%s}\n' "$PL" "$PL" "$MN" >"$CONF"
echo '{"role": "node"}' >"$W/node.conf"

CAIRND_PID=
start_cairnd() { # [CAIRN_CRASH_AT value]
    CAIRN_CRASH_AT=${1:-} CAIRN_CRASH_COUNT=${2:-} \
        "$B/cairnd" -c "$CONF" --statedir "$S" 2>>"$W/cairnd.log" &
    CAIRND_PID=$!
}
stop_cairnd() {
    [ -n "$CAIRND_PID" ] || return 0
    kill "$CAIRND_PID" 2>/dev/null
    wait "$CAIRND_PID" 2>/dev/null
    CAIRND_PID=
}

# The node cairnds of ranks 1-3 (multinode): node 2's with the crash point
# given, if any.
NODE_PIDS=()
start_node() { # RANK [CAIRN_CRASH_AT] [CAIRN_CRASH_COUNT]
    mkdir -p "$W/node$1" && chmod 700 "$W/node$1"
    CAIRN_CRASH_AT=${2:-} CAIRN_CRASH_COUNT=${3:-} \
        "$B/cairnd" -c "$W/node.conf" --statedir "$W/node$1" \
        2>>"$W/node$1.log" &
    NODE_PIDS[$1]=$!
}
stop_nodes() {
    local r
    for r in 1 2 3; do
        [ -n "${NODE_PIDS[$r]:-}" ] || continue
        kill "${NODE_PIDS[$r]}" 2>/dev/null
        wait "${NODE_PIDS[$r]}" 2>/dev/null
        NODE_PIDS[$r]=
    done
}

# Undrain what is drained (undrain refuses a set with an undrained rank).
undrain_all() {
    local d
    d=$(flux resource drain -no '{ranks}' | paste -sd, -)
    [ -z "$d" ] || flux resource undrain "$d" 2>/dev/null
}

# Run one 4-rank job through Flux with the runlog at $1; print its id.
# Each task logs "shell TASKRANK BROKERRANK".
run_job() {
    CP_RUNLOG=$1 flux submit -N4 --env=CP_RUNLOG="$1" \
        --setattr=system.exec.prolog-failures-allowed=1 \
        sh -c 'echo "shell $FLUX_TASK_RANK $(flux getattr rank)" >>"$CP_RUNLOG"'
}

# The clean run: which points are passed, how often.
mkdir -p "$S" && chmod 700 "$S"
export CP_RUNLOG=$W/clean.runlog
start_cairnd "" "$W/counts"
if [ "$MODE" = multinode ]; then
    start_node 1; start_node 2 "" "$W/counts.node"; start_node 3
fi
id=$(run_job "$W/clean.runlog")
flux job wait-event -t 60 "$id" clean >/dev/null || { echo "clean run failed"; exit 1; }
stop_cairnd
stop_nodes
undrain_all # a tolerated failure drained rank 3
# (a spawner point makes cairnd exit 1 rather than die: restarted the same)
sort "$W/counts" | uniq -c | awk '{print $2 ":1"; if ($1 > 1) print $2 ":" $1}' \
    >"$W/cases"
if [ "$MODE" = tolerated ]; then
    n=$(grep -c '^journal.commit.after$' "$W/counts")
    seq 1 "$n" | sed 's/^/journal.commit.after:/' >>"$W/cases"
    sort -u -o "$W/cases" "$W/cases"
fi
if [ "$MODE" = multinode ]; then
    [ -s "$W/counts.node" ] || { echo "node 2 passed no crash point"; exit 1; }
    sort "$W/counts.node" | uniq -c |
        awk '{print "node " $2 ":1"; if ($1 > 1) print "node " $2 ":" $1}' \
        >>"$W/cases"
fi
n=$(wc -l <"$W/cases")
echo "# $n cases from $(sort -u "$W/counts" | wc -l) crash points${MN:+ of rank 0 and $(sort -u "$W/counts.node" | wc -l) of node 2}"

pass=0 fail=0 i=0
while read -r point; do
    i=$((i + 1))
    [ "$MAX" -gt 0 ] && [ "$i" -gt "$MAX" ] && break
    log=$W/run.$i
    export CP_RUNLOG=$log
    if [ "${point#node }" != "$point" ]; then # a node 2 case
        start_cairnd ""
        start_node 1; start_node 2 "${point#node }"; start_node 3
        victim=node
    else
        start_cairnd "$point"
        if [ "$MODE" = multinode ]; then
            start_node 1; start_node 2; start_node 3
        fi
        victim=rank0
    fi
    id=$(run_job "$log")
    why=
    # the victim dies at the point (or the job ends first, if the point
    # comes later in this run than in the clean one); restart it after a
    # crash
    vpid() { [ $victim = node ] && echo "${NODE_PIDS[2]}" || echo "$CAIRND_PID"; }
    for _ in $(seq 1 600); do
        kill -0 "$(vpid)" 2>/dev/null || break
        flux job wait-event -t 0.05 "$id" clean >/dev/null 2>&1 && break
    done
    if ! kill -0 "$(vpid)" 2>/dev/null; then
        wait "$(vpid)" 2>/dev/null
        if [ $victim = node ]; then start_node 2; else start_cairnd ""; fi
    fi
    if ! flux job wait-event -t 60 "$id" clean >/dev/null 2>&1; then
        why="job not clean after 60s: $(flux job eventlog "$id" | cut -d' ' -f2 | paste -sd,)"
    else
        res=$(flux jobs -no '{result}' "$id")
        [ "$res" = COMPLETED ] || why="result $res: $(flux job eventlog "$id" | cut -d' ' -f2 | paste -sd,)"
        for p in prolog shell epilog; do
            c=$(grep -c "^$p " "$log" 2>/dev/null)
            [ "${c:-0}" -eq 4 ] || why="$why; $p ran ${c:-0} times"
        done
        if [ "$MODE" = tolerated ]; then
            grep -q '^shell [0-9]* 3$' "$log" && why="$why; a task ran on rank 3"
            sev=$(flux job eventlog -f json "$id" |
                jq -r 'select(.name == "exception") | .context.severity' | paste -sd,)
            [ "$sev" = 2 ] || why="$why; exceptions of severity $sev"
        fi
        ev=$(flux job eventlog "$id" | cut -d' ' -f2 | paste -sd,)
        rel=$(flux job eventlog -f json "$id" |
            jq -r 'select(.name == "release") | "\(.context.ranks):\(.context.final)"' | paste -sd,)
        if [ "$MODE" = tolerated ]; then
            # rank 3 at once, after its epilog; the rest at the end
            [ "$rel" = "3:false,0-2:true" ] || why="$why; releases $rel"
            ev=$(echo "$ev" | tr , '\n' | grep -vx release | paste -sd,),release
        fi
        if [ "$MODE" = multinode ]; then
            # each rank's shell ran under its own node cairnd, once
            dec=$(flux job id --to=dec "$id")
            for r in 1 2 3; do
                c=$(mdb_dump -p -s nodeprocs "$W/node$r/journal" 2>/dev/null |
                    grep -F "\"id\":$dec," | grep -cF '"phase":"shell"')
                [ "$c" -eq 1 ] || why="$why; node $r has $c shell records"
            done
        fi
        for e in start finish release clean; do
            [ "$(echo "$ev" | tr , '\n' | grep -cx "$e")" -eq 1 ] ||
                why="$why; $e x$(echo "$ev" | tr , '\n' | grep -cx "$e")"
        done
    fi
    stop_cairnd
    stop_nodes
    # a case that went wrong may have drained ranks: the next case needs
    # all four (and says for itself what went wrong)
    undrain_all
    if [ -z "$why" ]; then
        pass=$((pass + 1)); echo "ok $point"
    else
        fail=$((fail + 1)); echo "FAIL $point: $why"
    fi
done <"$W/cases"
start_cairnd ""
v=$("$B/cairn" --statedir "$S" verify --json | tail -n 1)
stop_cairnd
echo "$v" | grep -q '"ok":true' || { echo "FAIL verify: $v"; fail=$((fail + 1)); }
echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
