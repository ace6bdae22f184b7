#!/usr/bin/env bats
# A Flux system instance's owner (trust.h, SECURITY.md): the unprivileged
# user whose broker relays jobs to a root cairnd. It is a resource manager
# (any job id, node requests), but it cannot make cairnd run a command as
# another user without flux-imp (T1), as root (T2), a command of its own
# choosing as root through a job's config (T3) or on a node (T4).
# Throwaway users made here; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    OW=ctf$$ UA=ctu$$
    useradd -M -s /bin/sh "$OW"
    useradd -M -s /bin/sh "$UA"
    OWID=$(id -u "$OW") UAID=$(id -u "$UA")
    public_dir
    OUT=$(mktemp -d /tmp/cairn-out.XXXXXX)
    chmod 1777 "$OUT"
    # a stand-in for flux-imp (not setuid: it cannot switch users, so the
    # shell runs as whoever started it): it logs how it was called
    IMP=$PUB/flux-imp
    cat >"$IMP" <<EOF
#!/bin/sh
echo "imp uid=\$(id -u) \$*" >>"$OUT/imp.log"
[ "\$1" = exec ] && shift
exec "\$@"
EOF
    chmod 755 "$IMP"
    PROLOG=$PUB/prolog
    printf '#!/bin/sh\necho "prolog as $(id -u)" >>%s/runlog\n' "$OUT" >"$PROLOG"
    chmod 755 "$PROLOG"
    chmod 755 "$T"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    cairnd_stop
    pkill -u "$OW" 2>/dev/null; pkill -u "$UA" 2>/dev/null
    userdel "$OW" 2>/dev/null; userdel "$UA" 2>/dev/null
    rm -rf "$PUB" "$OUT"
    assert_no_leftover
}

# cairnd with the instance owner, the stand-in IMP (unless $1 = noimp) and
# the prolog; the rest of the config in $2 (JSON members, with a comma).
trust_start() {
    local imp=",\"imp\": \"$IMP\""
    [ "${1:-}" = noimp ] && imp=""
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"prolog\": {\"command\": [\"$PROLOG\"]},
        \"flux\": {\"instance-owner\": \"$OW\" $imp} ${2:-}}"
}

# rpc_as USER TOPIC JSON: one request through the public socket as USER;
# prints the response payload, or "error ERRNUM ERRSTR" (and fails).
rpc_as() {
    RPC_USER=$1 RPC_SOCKET=$PUB/cairn.sock rpc "$2" "$3"
}

# A start payload: job $1 of uid $2 running sh -c "$3" on rank 0; the
# jobspec's attributes.system.cairn in $4 (JSON, default none).
start_req() {
    jq -cn --argjson id "$1" --argjson u "$2" --arg c "$3" \
        --argjson cairn "${4:-null}" '{id: $id, userid: $u,
        R: {version: 1, execution: {R_lite: [{rank: "0",
            children: {core: "0"}}], nodelist: ["node0"]}},
        jobspec: ({version: 1, tasks: [{command: ["sh", "-c", $c]}],
            attributes: {system: ({cwd: "/"} + (if $cairn then
                {cairn: $cairn} else {} end))}})}'
}

@test "the owner runs another user's job through flux.imp, as itself; its prolog is root's" {
    trust_start
    grep -q "flux.imp $IMP: not setuid root: jobs of other users than uid $OWID will fail to start" \
        "$T/cairnd.log"
    grep -q "the Flux instance of uid $OWID ($OW) may start jobs; other users' run through flux.imp" \
        "$T/cairnd.log"
    run rpc_as "$OW" start "$(start_req 41 "$UAID" "id -u >$OUT/shell")"
    [ "$status" -eq 0 ]
    wait_event 41 20 clean
    # the IMP was started as the owner, with the shell behind "exec"
    [ "$(cat "$OUT/imp.log")" = "imp uid=$OWID exec sh -c id -u >$OUT/shell" ]
    [ "$(cat "$OUT/shell")" = "$OWID" ]
    [ "$(cat "$OUT/runlog")" = "prolog as 0" ]
    cairn eventlog 41 --json | jq -s -e --arg imp "$IMP" --argjson ow "$OWID" \
        --argjson ua "$UAID" 'map(select(.name == "accept"))[0].context
        | .imp == {path: $imp, uid: $ow} and .userid == $ua'
    # and cairn eventlog says so
    cairn eventlog 41 | grep -E "^\+[0-9.]+s accept .* userid=$UAID ranks=0 imp=$IMP imp-uid=$OWID command=sh -c "
}

@test "the owner's own job runs as the owner, without the IMP" {
    trust_start
    run rpc_as "$OW" start "$(start_req 42 "$OWID" "id -u >$OUT/shell")"
    [ "$status" -eq 0 ]
    wait_event 42 20 clean
    [ "$(cat "$OUT/shell")" = "$OWID" ]
    [ ! -e "$OUT/imp.log" ]
    [ -z "$(cairn eventlog 42 --json | jq 'select(.name == "accept") | .context.imp // empty')" ]
}

@test "the owner cannot start a root job, choose a command by config, or skip the IMP" {
    trust_start noimp
    run rpc_as "$OW" start "$(start_req 43 0 "touch $OUT/ran")"
    [ "$status" -eq 1 ]
    [ "$output" = "error 1 start: permission denied: uid $OWID (the Flux instance's owner) may not start jobs as root" ]
    run rpc_as "$OW" start "$(start_req 44 "$OWID" true \
        "{\"config\": {\"prolog\": {\"command\": [\"/bin/touch\", \"$OUT/ran\"]}}}")"
    [ "$status" -eq 1 ]
    [ "$output" = "error 1 start: permission denied: attributes.system.cairn.config.prolog.command: uid $OWID (the Flux instance's owner) may not choose a command; they are cairn.conf's" ]
    run rpc_as "$OW" start "$(start_req 45 "$OWID" true \
        '{"config": {"exec": {"job-shell": ["/bin/sh"]}}}')"
    [ "$output" = "error 1 start: permission denied: attributes.system.cairn.config.exec.job-shell: uid $OWID (the Flux instance's owner) may not choose a command; they are cairn.conf's" ]
    run rpc_as "$OW" start "$(start_req 46 "$UAID" "touch $OUT/ran")"
    [ "$status" -eq 1 ]
    [ "$output" = "error 1 start: permission denied: uid $OWID (the Flux instance's owner) runs jobs of other users ($UAID) only through flux-imp, and cairn.conf sets no flux.imp" ]
    # nothing journaled, nothing ran; its kill settings are still its to set
    [ -z "$(cairn jobs -a -n -o '{id}')" ]
    [ ! -e "$OUT/ran" ]
    run rpc_as "$OW" start "$(start_req 47 "$OWID" true \
        '{"config": {"exec": {"kill-timeout": "2s"}}}')"
    [ "$status" -eq 0 ]
    wait_event 47 20 clean
    # and a user is not the owner: its own jobs only, as before
    run rpc_as "$UA" start "$(start_req 48 "$OWID" true)"
    [ "$status" -eq 1 ]
    [[ "$output" == "error 1 start: permission denied: uid $UAID may start jobs of its own uid only, not $OWID" ]]
}

@test "the owner acts on its instance's jobs only: a user's direct job's environment, output and end are not its" {
    # issue 51: the instance's owner, privileged as a resource manager,
    # read any user's direct job (its jobspec's environment, its output)
    # and could cancel it
    trust_start
    J=$((8070450532247928832 + 51))
    # (the id put in by sed: jq would round it to a double)
    run rpc_as "$UA" start "$(start_req 0 "$UAID" 'echo out-of-A; sleep 60' |
        jq -c '.jobspec.attributes.system.environment = {SECRET: "s3cret"}' |
        sed "s/^{\"id\":0,/{\"id\":$J,/")"
    [ "$status" -eq 0 ]
    wait_event $J 20 start
    msg="permission denied: job $J is uid $UAID's, not one the Flux instance started: uid $OWID (the instance's owner) acts on its instance's jobs only"
    run rpc_as "$OW" job-events "{\"id\": $J}"
    [ "$output" = "error 1 job-events: $msg" ]
    run rpc_as "$OW" start "{\"id\": $J, \"reattach\": true, \"output\": true}"
    [ "$output" = "error 1 start: $msg" ]
    run rpc_as "$OW" kill "{\"id\": $J, \"signum\": 9}"
    [ "$output" = "error 1 kill: $msg" ]
    run rpc_as "$OW" exception "{\"id\": $J, \"type\": \"cancel\", \"severity\": 0}"
    [ "$output" = "error 1 exception: $msg" ]
    run rpc_as "$OW" fail-ranks "{\"id\": $J, \"ranks\": \"0\"}"
    [ "$output" = "error 1 fail-ranks: $msg" ]
    # in the list: its name, not its command or cwd
    run rpc_as "$OW" jobs "{\"ids\": [$J]}"
    [ "$status" -eq 0 ]
    [ "$(jq -c '.jobs[0] | [.userid, .name, .command, .cwd]' <<<"$output")" = "[$UAID,\"sh\",null,null]" ]
    # untouched
    [ "$(cairn jobs -n -o '{id} {state}' $J)" = "$J run" ]
    [ -z "$(events_named $J exception)" ]
    # a job its instance started for that user (through the IMP) is its
    run rpc_as "$OW" start "$(start_req 52 "$UAID" 'sleep 60')"
    [ "$status" -eq 0 ]
    wait_event 52 20 start
    run rpc_as "$OW" job-events '{"id": 52}'
    [ "$status" -eq 0 ]
    run rpc_as "$OW" jobs '{"ids": [52]}'
    [ "$(jq -c '.jobs[0].command' <<<"$output")" = '["sh","-c","sleep 60"]' ]
    run rpc_as "$OW" exception '{"id": 52, "type": "cancel", "severity": 0}'
    [ "$status" -eq 0 ]
    wait_event 52 20 clean
    # the user's own and root's stay theirs to end
    cairn cancel $J
    wait_event $J 20 clean
}

@test "a job through the IMP survives cairnd's SIGKILL: the IMP runs once" {
    trust_start
    run rpc_as "$OW" start "$(start_req 49 "$UAID" "sleep 2; echo done >$OUT/shell")"
    [ "$status" -eq 0 ]
    wait_event 49 20 start
    cairnd_crash
    cairnd_launch
    wait_event 49 30 clean
    [ "$(cat "$OUT/shell")" = done ]
    [ "$(wc -l <"$OUT/imp.log")" -eq 1 ]
    [ "$(cairn jobs -a -n -o '{id} {result}' | grep ^49)" = "49 completed" ]
}

@test "cairnd refuses an unknown instance owner, or root, at its start" {
    STATEDIR=$T/state
    printf '{"flux": {"instance-owner": "nosuchuser%s"}}\n' $$ >"$T/bad.conf"
    run "$B/cairnd" -c "$T/bad.conf" --statedir "$STATEDIR"
    [ "$status" -ne 0 ]
    [[ "$output" == *"flux.instance-owner: no user 'nosuchuser$$' on this host"* ]]
    printf '{"flux": {"instance-owner": "root"}}\n' >"$T/bad.conf"
    run "$B/cairnd" -c "$T/bad.conf" --statedir "$STATEDIR"
    [ "$status" -ne 0 ]
    [[ "$output" == *"flux.instance-owner: uid 0 is root, trusted with everything already"* ]]
}

X1=11111111-1111-4111-8111-111111111111
X2=22222222-2222-4222-8222-222222222222
X3=33333333-3333-4333-8333-333333333333
X4=44444444-4444-4444-8444-444444444444

# node-exec payload: execid $1, phase $2, argv $3 (JSON), env $4 (JSON),
# then the members given in $5 (e.g. "user": N)
node_req() {
    jq -cn --arg x "$1" --arg ph "$2" --argjson a "$3" --argjson e "$4" \
        --argjson more "${5:-{\}}" '{execid: $x, id: 7, phase: $ph, rank: 1,
        argv: $a, env: $e, "max-output": 1000} + $more'
}

@test "on a node, the owner runs as root only the node's own prolog, with the job's variables" {
    trust_start "" ', "role": "node"'
    run rpc_as "$OW" node-exec "$(node_req $X1 shell '["sh", "-c", "touch '"$OUT"'/ran"]' '{}' \
        "{\"user\": $UAID}")"
    [ "$status" -eq 1 ]
    [ "$output" = "error 1 node-exec: permission denied: uid $OWID (the Flux instance's owner) runs commands as itself only (other users' through flux-imp), not as uid $UAID" ]
    run rpc_as "$OW" node-exec "$(node_req $X1 prolog '["sh", "-c", "touch '"$OUT"'/ran"]' '{}')"
    [ "$output" = "error 1 node-exec: permission denied: uid $OWID (the Flux instance's owner) may run as root only this node's own prolog or epilog command (cairn.conf)" ]
    run rpc_as "$OW" node-exec "$(node_req $X1 prolog "[\"$PROLOG\"]" \
        '{"CAIRN_JOB_ID": "7", "LD_PRELOAD": "/tmp/x.so"}')"
    [ "$output" = "error 1 node-exec: permission denied: a prolog as root takes CAIRN_ and FLUX_JOB_ variables only, not LD_PRELOAD" ]
    run rpc_as "$OW" node-exec "$(node_req $X1 prolog "[\"$PROLOG\"]" '{}' '{"cwd": "/tmp"}')"
    [ "$output" = "error 1 node-exec: permission denied: a prolog runs in no working directory of the sender's" ]
    [ ! -e "$OUT/ran" ]
    [ ! -e "$OUT/runlog" ]
    # what rank 0 sends: the node's prolog as root; a shell as the owner
    run rpc_as "$OW" node-exec "$(node_req $X2 prolog "[\"$PROLOG\"]" \
        '{"CAIRN_JOB_ID": "7", "FLUX_JOB_USERID": "1"}')"
    [ "$status" -eq 0 ]
    run rpc_as "$OW" node-exec "$(node_req $X3 shell \
        "[\"$IMP\", \"exec\", \"sh\", \"-c\", \"id -u >$OUT/shell\"]" '{}' \
        "{\"user\": $OWID}")"
    [ "$status" -eq 0 ]
    local i
    for i in $(seq 1 100); do
        [ -s "$OUT/shell" ] && [ -s "$OUT/runlog" ] && break
        sleep 0.1
    done
    [ "$(cat "$OUT/runlog")" = "prolog as 0" ]
    [ "$(cat "$OUT/shell")" = "$OWID" ]
    # root is not held to any of this
    run rpc node-exec "$(node_req $X4 shell '["sh", "-c", "id -u >'"$OUT"'/root"]' '{}')"
    [ "$status" -eq 0 ]
    for i in $(seq 1 100); do [ -s "$OUT/root" ] && break; sleep 0.1; done
    [ "$(cat "$OUT/root")" = 0 ]
}
