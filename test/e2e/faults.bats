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

@test "commit I/O error: cairnd exits 75 without acting; a restart finishes the job" {
    CAIRN_FAULT=journal.commit:3:5 cairnd_start '{}'
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
    CAIRN_FAULT=exec.spawn:1:12 cairnd_start '{"prolog": {"command": ["true"]}, "epilog": {"command": ["true"]}}'
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

@test "a shim killed with SIGKILL takes its command along; the rank is lost and drained" {
    cairnd_start '{}'
    cairn run --id 406 -- sh -c "echo \$\$ > $BATS_TEST_TMPDIR/cmdpid; sleep 30" 3>&- &
    for i in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/cmdpid" ] && break; sleep 0.05; done
    kill -9 "$(shim_pid 406 shell 0)"
    wait_event 406 10 clean
    cmd=$(cat "$BATS_TEST_TMPDIR/cmdpid")
    for i in $(seq 40); do kill -0 "$cmd" 2>/dev/null || break; sleep 0.05; done
    ! kill -0 "$cmd" 2>/dev/null
    [[ "$(events_named 406 proc-lost | jq -r .note)" == "cairn-shim ended"*"without recording"* ]]
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
    [[ "$output" == *"too many active jobs (limit 1)"* ]]
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
