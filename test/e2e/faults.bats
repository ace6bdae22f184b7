#!/usr/bin/env bats
# Bad input, faults and access (issue 9): cairnd stays up, loses nothing,
# lets no one in.
load lib

teardown() {
    cairnd_stop
    assert_no_leftover
}

@test "journal full: new jobs refused with a clear exception, running ones finish, purge makes room" {
    cairnd_start '{"journal": {"max-size": "2M"}, "output": {"max-bytes": 65536}}'
    cairn run --id 401 -- sleep 3 >/dev/null 3>&- &
    LONG=$!
    refused=
    for i in $(seq 1 200); do
        if ! out=$(cairn run --id $((500 + i)) -- sh -c 'head -c 60000 /dev/zero | tr "\\0" y' 2>&1); then
            refused=$((500 + i)); break
        fi
    done
    [ -n "$refused" ]
    [[ "$out" == *"journal is full"* ]]
    # the refused job left no trace; cairnd still up; the running job ends
    run cairn eventlog "$refused" --json
    [ "$status" -ne 0 ]
    wait "$LONG"
    [ "$(events_named 401 finish | jq .status)" -eq 0 ]
    # make room, and jobs run again
    run cairn purge --older-than 0
    [ "$status" -eq 0 ]
    run cairn run --id 900 -- true
    [ "$status" -eq 0 ]
}

# The second commit, the first after the job's acceptance: a job may take
# only two (its spawn's answer and its end can come in one turn).
@test "commit I/O error: cairnd exits 75 without acting; a restart finishes the job" {
    CAIRN_FAULT=journal.commit:2:5 cairnd_start '{}'
    cairn run --id 402 -- true >/dev/null 2>&1 3>&- &
    RUNPID=$!
    rc=0
    wait "$CAIRND_PID" || rc=$?
    CAIRND_PID=
    [ "$rc" -eq 75 ]
    grep -q "journal commit failed: .*exiting with status 75" "$BATS_TEST_TMPDIR/cairnd.log"
    unset CAIRN_FAULT
    cairnd_launch
    wait "$RUNPID"
    wait_event 402 10 clean
}

@test "spawn failure (EAGAIN): the phase fails with the cause in the note" {
    CAIRN_FAULT=exec.spawn:1:11 cairnd_start '{}'
    run cairn run --id 403 -- true
    [ "$status" -ne 0 ]
    note=$(events_named 403 exception | jq -r .note)
    [[ "$note" == "shell on rank 0: failed to start: "*"Resource temporarily unavailable"* ]]
    [ "$(events_named 403 drain | wc -l)" -eq 0 ]
    wait_event 403 5 clean
}

@test "spawn failure (ENOMEM) of a prolog: the prolog fails, no shell runs, the epilog does" {
    CAIRN_FAULT=exec.spawn:1:12 cairnd_start '{"prolog": {"command": ["/bin/true"]}, "epilog": {"command": ["/bin/true"]}}'
    run cairn run --id 408 -- true
    [ "$status" -ne 0 ]
    note=$(events_named 408 exception | jq -r .note)
    [[ "$note" == *"prolog"*"Cannot allocate memory"* ]]
    wait_event 408 5 clean
    [[ ",$(event_names 408)," != *,start,* ]]
    [ "$(events_named 408 epilog-finish | jq .status)" -eq 0 ]
}

@test "missing and non-executable commands: exit 127 with the reason journaled" {
    cairnd_start '{}'
    run cairn run --id 404 -- /nonexistent/cmd
    [ "$status" -eq 127 ]
    [[ "$(events_named 404 proc-exit | jq -r .error)" == *"/nonexistent/cmd"*"No such file"* ]]
    touch "$BATS_TEST_TMPDIR/noexec"
    run cairn run --id 405 -- "$BATS_TEST_TMPDIR/noexec"
    [ "$status" -eq 127 ]
    [[ "$(events_named 405 proc-exit | jq -r .error)" == *"Permission denied"* ]]
}

@test "a command lost with its supervisor while cairnd is down: the rank is lost and drained" {
    cairnd_start '{}'
    cairn run --id 406 -- sh -c "echo \$\$ > $BATS_TEST_TMPDIR/cmdpid; sleep 30" 3>&- &
    for i in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/cmdpid" ] && break; sleep 0.05; done
    cmd=$(cat "$BATS_TEST_TMPDIR/cmdpid")
    # the command may write its pid before cairnd commits its spawn record
    # (group commit): wait for that record, as the crash must come after it
    wait_event 406 10 proc-spawn
    [ "$cmd" = "$(shim_pid 406 shell 0)" ]
    cairnd_crash
    lose_proc "$cmd"
    cairnd_launch
    wait_event 406 10 clean
    # at the restart, or once its zombie is reaped
    [[ "$(events_named 406 proc-lost | jq -r .note)" == *"(pid $cmd)"*"left no exit status"* ]]
    [ "$(events_named 406 drain | jq -r .ranks)" = 0 ]
    [ "$(events_named 406 exception | jq -r .type)" = exec ]
}

@test "a request over max-request-size: EPROTO, connection closed, cairnd up" {
    cairnd_start '{"limits": {"max-request-size": "4K"}}'
    run python3 - "$STATEDIR/cairn.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
f.write('{"topic":"list","matchtag":1,"payload":{"x":"' + "a" * 8192 + '"}}\n'); f.flush()
r = json.loads(f.readline()); print(r["errnum"], r["errstr"])
print("eof" if f.readline() == "" else "open")
PY
    [ "${lines[0]}" = "71 request too large (limit 4096 bytes)" ]
    [ "${lines[1]}" = eof ]
    run cairn list
    [ "$status" -eq 0 ]
}

@test "limits: ranks per job and active jobs, each with a clear error" {
    cairnd_start '{"limits": {"max-ranks": 4, "max-jobs": 1}}'
    run cairn run -N 5 -- true
    [ "$status" -ne 0 ]
    [[ "$output" == *"5 ranks, more than the limit of 4"* ]]
    cairn run --id 407 -- sleep 2 >/dev/null 3>&- &
    wait_event 407 5 start
    run cairn run -- true
    [ "$status" -ne 0 ]
    [[ "$output" == *"too many active jobs of privileged clients (limit 1, limits.max-jobs; users' jobs are not counted)"* ]]
    wait_event 407 10 clean
}

@test "a client that sends half a line and stalls blocks nobody" {
    cairnd_start '{}'
    python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"topic\": \"li"); time.sleep(5)' "$STATEDIR/cairn.sock" 3>&- &
    STALL=$!
    sleep 0.2
    run timeout 5 "$B/cairn" --statedir "$STATEDIR" run -- true
    [ "$status" -eq 0 ]
    kill "$STALL" 2>/dev/null || true
}

@test "field validation names the field; unknown jobs ENOENT" {
    cairnd_start '{}'
    run rpc exception '{"id": 999, "type": "cancel", "severity": 0}'
    [ "$output" = "error 2 job 999 not found" ]
    run rpc start '{"id": -1}'
    [ "$output" = "error 71 id: must be a non-negative integer" ]
    run rpc start '{"id": 5, "userid": 0, "R": {"version": 1}, "jobspec": {}}'
    [ "${output%%:*}" = "error 22 R" ]
    run rpc kill '{"id": 5}'
    [ "$output" = "error 2 job 5 not found" ]
    run rpc nosuchtopic '{}'
    [ "$output" = "error 38 unknown topic 'nosuchtopic'" ]
}

@test "state dir: a symlink or a group-writable dir is refused, saying why" {
    mkdir -m 700 "$BATS_TEST_TMPDIR/real"
    ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/link"
    run "$B/cairnd" --statedir "$BATS_TEST_TMPDIR/link"
    [ "$status" -eq 1 ]
    [[ "$output" == *"is a symlink; refusing it"* ]]
    chmod 770 "$BATS_TEST_TMPDIR/real"
    run "$B/cairnd" --statedir "$BATS_TEST_TMPDIR/real"
    [ "$status" -eq 1 ]
    [[ "$output" == *"group or world writable (mode 0770)"* ]]
}

@test "a second cairnd on the same state dir refuses, naming the first's pid" {
    cairnd_start '{}'
    run "$B/cairnd" --statedir "$STATEDIR"
    [ "$status" -eq 1 ]
    [[ "$output" == *"another cairnd (pid $CAIRND_PID) is using $STATEDIR"* ]]
    run cairn list
    [ "$status" -eq 0 ]
}

@test "a bad config names the key and exits non-zero" {
    echo '{"prolog": {"timeout": "soon"}}' >"$BATS_TEST_TMPDIR/bad.conf"
    run "$B/cairnd" -c "$BATS_TEST_TMPDIR/bad.conf" --statedir "$BATS_TEST_TMPDIR/st"
    [ "$status" -eq 1 ]
    [[ "$output" == *"prolog.timeout"* ]]
    echo '{"prolog": {"comand": ["x"]}}' >"$BATS_TEST_TMPDIR/bad.conf"
    run "$B/cairnd" -c "$BATS_TEST_TMPDIR/bad.conf" --statedir "$BATS_TEST_TMPDIR/st"
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown key 'prolog.comand'"* ]]
}

# A prolog or epilog that cannot run would fail (or skip the cleanup of)
# every job: cairnd refuses to start instead, naming the key, and
# --check says the same without starting (issue 16).
@test "a prolog or epilog that is not an absolute path to an executable file: cairnd refuses to start" {
    T=$BATS_TEST_TMPDIR
    printf '#!/bin/sh\nexit 0\n' >"$T/noexec.sh"
    chmod 644 "$T/noexec.sh"
    check() { # CONFIG-JSON EXPECTED-MESSAGE
        echo "$1" >"$T/c.json"
        run "$B/cairnd" -c "$T/c.json" --statedir "$T/st"
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$output" = "cairnd: $T/c.json: $2" ]
        [ ! -e "$T/st/cairn.sock" ]
        run "$B/cairnd" --check -c "$T/c.json"
        [ "$status" -eq 1 ]
        [ "$output" = "cairnd: $T/c.json: $2" ]
    }
    check '{"prolog": {"command": ["true"]}}' \
        "prolog.command: true: not an absolute path"
    check '{"epilog": {"command": ["/nonexistent/epilog", "-x"]}}' \
        "epilog.command: /nonexistent/epilog: No such file or directory"
    check '{"epilog": {"command": ["/etc"]}}' \
        "epilog.command: /etc: not a regular file"
    check "{\"prolog\": {\"command\": [\"$T/noexec.sh\"]}}" \
        "prolog.command: $T/noexec.sh: not executable (Permission denied)"
    # a good one
    echo '{"prolog": {"command": ["/bin/true"]}}' >"$T/c.json"
    run "$B/cairnd" --check -c "$T/c.json"
    [ "$status" -eq 0 ]
    [ "$output" = "cairnd: $T/c.json: ok" ]
    [ ! -e "$T/st" ]
    # a missing config file: jansson's words, no line number
    run "$B/cairnd" -c "$T/none.json" --statedir "$T/st"
    [ "$status" -eq 1 ]
    [ "$output" = "cairnd: unable to open $T/none.json: No such file or directory" ]
}

# Ids are never reused: a purged job's id is remembered (journal "purged"
# table, 8 bytes a job), across a restart (issue 16).
@test "a purged job's id cannot run again" {
    cairnd_start '{}'
    cairn run --id 611 -- true >/dev/null
    run cairn purge --older-than 0
    [ "$status" -eq 0 ]
    run cairn eventlog 611
    [ "$status" -ne 0 ]
    run cairn run --id 611 -- touch "$BATS_TEST_TMPDIR/ran"
    [ "$status" -ne 0 ]
    [[ "$output" == *"job 611 was purged from the journal: its id cannot be used again" ]]
    cairnd_stop
    cairnd_launch
    run cairn run --id 611 -- touch "$BATS_TEST_TMPDIR/ran"
    [ "$status" -ne 0 ]
    [[ "$output" == *"job 611 was purged from the journal: its id cannot be used again" ]]
    [ ! -e "$BATS_TEST_TMPDIR/ran" ]
    run cairn eventlog 611
    [ "$status" -ne 0 ]
}

# etc/ ships a config and a prolog and epilog that work together: installed
# where the config says (here under a temporary root instead of /etc/cairn
# and /var/lib/cairn), they run jobs (issue 16).
@test "the shipped example config, prolog and epilog run a job" {
    T=$BATS_TEST_TMPDIR
    mkdir -p "$T/etc/cairn" "$T/scratch"
    install -m 755 "$CAIRN_SOURCE_DIR/etc/prolog.example" "$T/etc/cairn/prolog"
    install -m 755 "$CAIRN_SOURCE_DIR/etc/epilog.example" "$T/etc/cairn/epilog"
    sed -e "s|/etc/cairn/|$T/etc/cairn/|" -e "s|/var/lib/cairn|$T/state|" \
        "$CAIRN_SOURCE_DIR/etc/cairn.conf.example" >"$T/cairn.conf"
    run "$B/cairnd" --check -c "$T/cairn.conf"
    [ "$status" -eq 0 ]
    STATEDIR=$T/state
    CAIRN_SCRATCH_ROOT=$T/scratch cairnd_start "$(cat "$T/cairn.conf")"
    run cairn run --id 620 -N 2 -- sh -c 'ls -d '"$T"'/scratch/cairn-job-620-*'
    [ "$status" -eq 0 ]
    out=$(events_named 620 log | jq -r .data)
    [[ "$out" == *"$T/scratch/cairn-job-620-0"* ]]
    [[ "$out" == *"$T/scratch/cairn-job-620-1"* ]]
    [ -z "$(ls "$T/scratch")" ]       # the epilog removed them
    [ "$(events_named 620 prolog-finish | jq .status)" -eq 0 ]
    [ "$(events_named 620 epilog-finish | jq .status)" -eq 0 ]
    # a node without room: the prolog fails the job, saying why
    cairnd_stop
    CAIRN_SCRATCH_ROOT=$T/scratch CAIRN_SCRATCH_MIN_KB=999999999999 cairnd_launch
    run cairn run --id 621 -- true
    [ "$status" -ne 0 ]
    [[ "$(events_named 621 log | jq -r .data)" == *"less than 999999999999K"* ]]
}

# systemd readiness (Type=notify): READY=1 once the socket is there, with
# MAINPID; STOPPING=1 on SIGTERM (issue 16).
@test "cairnd tells a service manager when it is ready and when it stops" {
    grep -qx 'Type=notify' "$CAIRN_SOURCE_DIR/etc/cairnd.service"
    N=$BATS_TEST_TMPDIR/notify.sock
    python3 - "$N" >"$BATS_TEST_TMPDIR/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
for _ in range(2):
    print(s.recv(4096).decode().replace("\n", " "))
    sys.stdout.flush()
PY
    LISTENER=$!
    while [ ! -S "$N" ]; do sleep 0.05; done
    NOTIFY_SOCKET=$N cairnd_start '{}'
    pid=$CAIRND_PID
    cairnd_stop
    wait "$LISTENER"
    cat "$BATS_TEST_TMPDIR/notes"
    [ "$(sed -n 1p "$BATS_TEST_TMPDIR/notes")" = "READY=1 MAINPID=$pid" ]
    [ "$(sed -n 2p "$BATS_TEST_TMPDIR/notes")" = "STOPPING=1 MAINPID=$pid" ]
}

# The keeper is a child subreaper and reaps what it inherits: a job's
# process that daemonizes (setsid, its parent gone) comes to it, not PID 1,
# and leaves no <defunct> behind when it ends (issue 16; containers whose
# PID 1 does not reap).
@test "a daemonized job process comes to the keeper and is reaped when it ends" {
    cairnd_start '{}'
    T=$BATS_TEST_TMPDIR
    run cairn run --id 630 -- sh -c "setsid sh -c 'echo \$\$ >$T/orphan; sleep 1.5' </dev/null >/dev/null 2>&1 & sleep 0.3"
    [ "$status" -eq 0 ]
    o=$(cat "$T/orphan")
    keeper=$(pgrep -P "$CAIRND_PID" -f 'cairn-shim --keeper')
    [ -n "$keeper" ]
    [ "$(ps -o ppid= -p "$o" | tr -d ' ')" = "$keeper" ]
    for _ in $(seq 1 60); do
        kill -0 "$o" 2>/dev/null || break
        sleep 0.1
    done
    # gone altogether: not even a zombie of the keeper's
    run ps -o pid= -p "$o"
    [ "$status" -ne 0 ]
    [ -z "$(ps -o stat= --ppid "$keeper" | grep Z)" ]
}
