#!/usr/bin/env bats
# Many users (issue 17): cairnd as root runs each job's shells as the job's
# user, and every request is judged by its sender's uid (SO_PEERCRED).
# Two throwaway users, made here and removed after; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (useradd, a root cairnd)"
    command -v useradd >/dev/null || skip "no useradd here"
    T=$BATS_TEST_TMPDIR
    UA=cta$$ UB=ctb$$
    HA=$(mktemp -d /tmp/cairn-home.XXXXXX)
    useradd -M -d "$HA" -s /bin/sh "$UA"
    useradd -M -s /bin/sh "$UB"
    chown "$UA" "$HA"
    # the public socket's directory, reachable by everyone; the state dir
    # stays 0700
    PUB=$(mktemp -d /tmp/cairn-pub.XXXXXX)
    chmod 755 "$PUB"
    OUT=$(mktemp -d /tmp/cairn-out.XXXXXX) # where the users' jobs write
    chmod 1777 "$OUT"
    PROLOG=$(script prolog <<EOF
#!/bin/sh
echo "prolog as \$(id -u) for \$CAIRN_JOB_USERID \$FLUX_JOB_USERID" >>"$PUB/runlog"
EOF
    )
    chmod 755 "$T"
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"prolog\": {\"command\": [\"$PROLOG\"]}}"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    cairnd_stop
    pkill -u "$UA" 2>/dev/null; pkill -u "$UB" 2>/dev/null
    userdel "$UA" 2>/dev/null; userdel "$UB" 2>/dev/null
    rm -rf "$HA" "$PUB" "$OUT"
    assert_no_leftover
}

# as USER CMD...: run a cairn command as USER through the public socket
as() {
    local u=$1; shift
    (cd "${CWD:-/}" && runuser -u "$u" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" "$@")
}

@test "a job of user A runs as A: uid, groups, HOME; prolog as root" {
    CWD="$HA" run --separate-stderr as "$UA" run --id 1 -- sh -c 'id -u; id -g; id -G; echo $HOME; pwd'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$(id -u "$UA")" ]
    [ "${lines[1]}" = "$(id -g "$UA")" ]
    [ "${lines[2]}" = "$(id -G "$UA")" ]
    [ "${lines[3]}" = "$HA" ]
    [ "${lines[4]}" = "$HA" ]
    [ "$(cat "$PUB/runlog")" = "prolog as 0 for $(id -u "$UA") $(id -u "$UA")" ]
    [ "$(cairn jobs -a -n -o '{id} {username}')" = "1 $UA" ]
}

@test "B cannot reach A's job, nor start one as A; root can" {
    CWD="$HA" as "$UA" run --detach --id 2 -- sleep 60
    wait_event 2 10 start
    run as "$UB" cancel 2
    [ "$status" -ne 0 ]
    [[ "$output" == *"permission denied: job 2 belongs to uid $(id -u "$UA")"* ]]
    run as "$UB" kill 2
    [[ "$output" == *"permission denied: job 2 belongs to uid $(id -u "$UA")"* ]]
    run as "$UB" attach 2
    [[ "$output" == *"permission denied: job 2 belongs to uid $(id -u "$UA")"* ]]
    # a start for A's uid, sent by B: refused, nothing recorded
    run runuser -u "$UB" -- python3 - "$PUB/cairn.sock" "$(id -u "$UA")" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
js = {"version": 1, "resources": [{"type": "slot", "count": 1, "label": "task",
      "with": [{"type": "core", "count": 1}]}],
      "tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}],
      "attributes": {"system": {"cwd": "/"}}}
R = {"version": 1, "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}]}}
f.write(json.dumps({"topic": "start", "matchtag": 1, "payload": {"id": 3,
    "userid": int(sys.argv[2]), "jobspec": js, "R": R}}) + "\n"); f.flush()
r = json.loads(f.readline()); print(r.get("errnum"), r.get("errstr"))
PY
    [ "$output" = "1 start: permission denied: uid $(id -u "$UB") may start jobs of its own uid only, not $(id -u "$UA")" ]
    run cairn eventlog 3
    [ "$status" -ne 0 ]
    # everyone may list; the job is still running; its owner cancels it
    run as "$UB" list
    [ "$status" -eq 0 ]
    run as "$UA" cancel 2
    [ "$status" -eq 0 ]
    wait_event 2 10 clean
}

@test "a job whose user does not exist, or whose cwd its user cannot enter, runs nothing" {
    ! getent passwd 4242424 >/dev/null || skip "uid 4242424 exists here"
    run rpc start "$(jq -cn '{id: 4, userid: 4242424,
        jobspec: {version: 1, resources: [{type: "slot", count: 1,
          label: "task", with: [{type: "core", count: 1}]}],
          tasks: [{command: ["touch", "/tmp/cairn-ran-4"], slot: "task",
                   count: {per_slot: 1}}], attributes: {system: {cwd: "/"}}},
        R: {version: 1, execution: {R_lite: [{rank: "0",
            children: {core: "0"}}], nodelist: ["localhost"]}}}')"
    [ "$status" -eq 0 ]
    wait_event 4 10 clean
    [ "$(events_named 4 exception | jq -r .note)" = "no user with uid 4242424 on this host" ]
    [ ! -e /tmp/cairn-ran-4 ]
    # A's job in a directory A may not enter: the shell fails, as A
    mkdir -m 700 "$T/closed"
    CWD="$T/closed" run -127 as "$UA" run --id 5 -- touch "$T/closed/ran"
    # (the prolog, as root, ran; the shell's exit says why it did not)
    [ "$(events_named 5 proc-exit | jq -r 'select(.error) | .error')" = \
        "chdir $T/closed: Permission denied" ]
    [ ! -e "$T/closed/ran" ]
}

@test "a public-socket that cannot be made: cairnd says so and does not start" {
    cairnd_stop
    printf '{"public-socket": "%s/none/cairn.sock"}\n' "$T" >"$T/bad.conf"
    run "$B/cairnd" -c "$T/bad.conf" --statedir "$T/other"
    [ "$status" -ne 0 ]
    [[ "$output" == *"public-socket: bind $T/none/cairn.sock: No such file or directory"* ]]
}

@test "cairnd SIGKILLed while A's and B's jobs run: both end, each as its user" {
    CWD="$HA" as "$UA" run --detach --id 6 -- sh -c 'sleep 2; id -u >'"$OUT"'/a.out'
    CWD=/tmp as "$UB" run --detach --id 7 -- sh -c 'sleep 2; id -u >'"$OUT"'/b.out'
    wait_event 6 10 start
    wait_event 7 10 start
    cairnd_crash
    cairnd_launch
    wait_event 6 20 clean
    wait_event 7 20 clean
    [ "$(cat "$OUT/a.out")" = "$(id -u "$UA")" ]
    [ "$(cat "$OUT/b.out")" = "$(id -u "$UB")" ]
    [ "$(events_named 6 finish | jq .status)" -eq 0 ]
    [ "$(events_named 7 finish | jq .status)" -eq 0 ]
    run cairn verify 6 7
    [ "$status" -eq 0 ]
}
