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
    # its directory is checked first (no other user may change it)
    [[ "$output" == *"public-socket: $T/none: No such file or directory"* ]]
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

# ---- the views through the public socket (cairn jobs, show, eventlog) ----

# as_default USER CMD...: as USER with cairn's defaults (no CAIRN_SOCKET),
# in a mount namespace whose /run is $PUB: its /run/cairn.sock is then
# cairnd's public socket, where cairn looks for it by default
as_default() {
    local u=$1; shift
    (cd "${CWD:-/}" && unshare -m sh -c \
        'mount --bind "$1" /run && shift && exec runuser -u "$0" -- env -u CAIRN_SOCKET "$@"' \
        "$u" "$PUB" "$B/cairn" "$@")
}

# what user $1 gets for request $2 {$3} on the public socket: "ERRNUM
# ERRSTR", or the payload
as_rpc() {
    runuser -u "$1" -- python3 - "$PUB/cairn.sock" "$2" "$3" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
f.write(json.dumps({"topic": sys.argv[2], "matchtag": 1,
                    "payload": json.loads(sys.argv[3])}) + "\n"); f.flush()
r = json.loads(f.readline())
print("%s %s" % (r["errnum"], r["errstr"]) if "errnum" in r else json.dumps(r["payload"]))
PY
}

@test "B lists every user's jobs through the public socket; commands of its own only" {
    CWD="$HA" as "$UA" run --detach --id 10 -- sh -c 'sleep 60 # secret-of-A'
    CWD=/tmp as "$UB" run --detach --id 11 -- sleep 61
    wait_event 10 10 start
    wait_event 11 10 start
    run --separate-stderr as "$UB" jobs -n -d -o '{id} {username} {state} {command} [{cwd}]'
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    # A's job by its name only, as flux jobs shows it; B's in full
    [ "${lines[0]}" = "10 $UA run sh []" ]
    [ "${lines[1]}" = "11 $UB run sleep 61 [/tmp]" ]
    # the table, as root's: the same rows but for A's command
    run as "$UB" jobs -d
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "ID "*" USER "*" COMMAND" ]]
    [[ "${lines[1]}" == "10 "*" $UA "*" run "*" 1 (0) "*" sh" ]]
    [[ "${lines[2]}" == "11 "*" $UB "*" run "*" sleep 61" ]]
    [[ "$(cairn jobs -d | sed -n 2p)" == *" sh -c 'sleep 60 # secret-of-A'" ]]
    # nothing of A's command line reaches B, whatever it asks
    run as "$UB" jobs -a --json
    [ "$status" -eq 0 ]
    [[ "$output" != *secret-of-A* ]]
    # a job that is not there is named, the others are shown
    run --separate-stderr as "$UB" jobs -n -d -o '{id}' 4242 11
    [ "$status" -eq 1 ]
    [ "$output" = "11" ]
    [[ "$stderr" == "cairn jobs: no job 4242 ("*") known to cairnd at $PUB/cairn.sock" ]]
    as "$UA" cancel 10
    as "$UB" cancel 11
    wait_event 10 10 clean
    wait_event 11 10 clean
    # finished jobs with -a; B's own as root reads it in the journal
    run as "$UB" jobs -n -d -o '{id}'
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    run as "$UB" jobs -a -n -d -o '{id} {state} {result} {returncode}'
    [ "$output" = "10 done canceled 143
11 done canceled 143" ]
    run as "$UB" jobs --state done -n -d -o '{id}'
    [ "$output" = "10
11" ]
    [ "$(as "$UB" jobs --json 11)" = "$(cairn jobs --json 11)" ]
    [ "$(as "$UB" jobs --json 10 | jq -c '[.command, .cwd]')" = '["sh",""]' ]
    [ "$(as "$UA" jobs --json 10)" = "$(cairn jobs --json 10)" ]
}

@test "B reads its own job with show and eventlog through the socket; A's job and output are refused" {
    CWD="$HA" as "$UA" run --detach --id 12 -- sh -c 'echo secret-of-A; sleep 60'
    CWD=/tmp run -3 as "$UB" run --id 13 -- sh -c 'echo hello-from-B; exit 3'
    wait_event 12 10 start
    # B's own job: what root reads in the journal, byte for byte
    for c in "show 13" "show --json 13" "eventlog 13" "eventlog --json 13" \
             "ranks 13" "ranks --json 13"; do
        [ "$(as "$UB" $c)" = "$(cairn $c)" ] || { echo "differs: $c"; false; }
    done
    run as "$UB" eventlog 13
    [[ "$output" == *"        | hello-from-B"* ]]
    run as "$UB" show 13
    [[ "$output" == *"exit code   3 (exit 3)"* ]]
    # A's job: EPERM, with why, and nothing of it
    n=$(cairn eventlog --json 12 | wc -l)
    uid_a=$(id -u "$UA")
    for c in show eventlog ranks; do
        run --separate-stderr as "$UB" $c 12
        [ "$status" -eq 1 ]
        [ "$stderr" = "cairn $c: job-events: permission denied: job 12 belongs to uid $uid_a" ]
        [ -z "$output" ]
    done
    [ "$(as_rpc "$UB" job-events '{"id": 12}')" = \
        "1 job-events: permission denied: job 12 belongs to uid $uid_a" ]
    [ "$(as_rpc "$UB" job-events '{"id": 12, "from": 3}')" = \
        "1 job-events: permission denied: job 12 belongs to uid $uid_a" ]
    # and nothing changed: A's job runs on, its events as they were
    [ "$(cairn eventlog --json 12 | wc -l)" -eq "$n" ]
    [ "$(cairn jobs -n -d -o '{id} {state}' 12)" = "12 run" ]
    # its output, once journaled, is A's (and root's) alone
    as "$UA" cancel 12
    wait_event 12 10 clean
    [[ "$(cairn eventlog 12)" == *"| secret-of-A"* ]]
    [[ "$(as "$UA" eventlog 12)" == *"| secret-of-A"* ]]
    run --separate-stderr as "$UB" eventlog --json 12
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn eventlog: job-events: permission denied: job 12 belongs to uid $uid_a" ]
    [[ "$output" != *secret-of-A* ]]
    [[ "$(as_rpc "$UB" job-events '{"id": 12}')" != *secret-of-A* ]]
    # a job nobody has: ENOENT, as for root
    run --separate-stderr as "$UB" show 4242
    [ "$status" -eq 1 ]
    [[ "$stderr" == "cairn show: no job 4242 ("*") known to cairnd at $PUB/cairn.sock" ]]
}

@test "with the defaults, a user's cairn finds the system cairnd's public socket" {
    unshare -m true 2>/dev/null || skip "no mount namespaces here"
    [ ! -e /run/cairn.sock ] || skip "a cairnd's public socket is at /run/cairn.sock"
    # no state dir of B's own (HOME has none): /run/cairn.sock
    run --separate-stderr as_default "$UB" run --id 14 -- id -un
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    [ "$output" = "$UB" ]
    run as_default "$UB" jobs -a -n -d -o '{id} {username} {result}'
    [ "$output" = "14 $UB completed" ]
    # root's state dir, closed to B (0700): the same socket
    run --separate-stderr as_default "$UB" --statedir "$STATEDIR" show 14
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "user        $UB ($(id -u "$UB"))" ]
    run as_default "$UB" --statedir "$STATEDIR" eventlog 14
    [ "$status" -eq 0 ]
    [[ "$output" == *"        | $UB"* ]]
    # a state dir that is not there, named: an error, not another cairnd
    run --separate-stderr as_default "$UB" --statedir "$PUB/none" jobs
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn jobs: state dir $PUB/none: No such file or directory" ]
    run --separate-stderr as_default "$UB" --statedir "$PUB/none" run -- true
    [ "$status" -eq 69 ]
    [ "$stderr" = "cairn run: cannot connect to cairnd at $PUB/none/cairn.sock: No such file or directory (is cairnd running?)" ]
    # no public socket anywhere: the journal's error, and what to do
    run --separate-stderr runuser -u "$UB" -- env -u CAIRN_SOCKET "$B/cairn" --statedir "$STATEDIR" jobs
    [ "$status" -eq 1 ]
    # (the state dir, or a directory above it, is closed to B)
    [[ "${stderr_lines[0]}" == "cairn jobs: "*"$STATEDIR"*": Permission denied" ]]
    [ "${stderr_lines[1]}" = "cairn jobs: a root cairnd's users see its jobs through its public socket: set CAIRN_SOCKET to it" ]
    # root reads the journal, whatever CAIRN_SOCKET says
    run env CAIRN_SOCKET="$T/nothing-here" "$B/cairn" --statedir "$STATEDIR" jobs -a -n -d -o '{id}'
    [ "$status" -eq 0 ]
    [ "$output" = "14" ]
}
