#!/usr/bin/env bats
# A user's running job cannot fill the journal (issue 51): every request
# on it that journals (exception, kill, expiration, critical-ranks) is
# held to its owner's quota and the users' share, and refused before
# anything is staged; cairnd stays up, and root's jobs still start.
# Throwaway users, made here and removed after; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    U0=8070450532247928832 # the users' job ids start here (jobid.h)
    UA=cja$$ UB=cjb$$
    useradd -M -s /bin/sh "$UA"
    useradd -M -s /bin/sh "$UB"
    uid_a=$(id -u "$UA") uid_b=$(id -u "$UB")
    public_dir
    chmod 755 "$T"
    # a small journal, so that the attack would fill it in a second
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"journal\": {\"max-size\": \"4M\"},
        \"limits\": {\"user-max-journal-bytes\": \"512K\"}}"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    cairnd_stop
    pkill -u "$UA" 2>/dev/null; pkill -u "$UB" 2>/dev/null
    userdel "$UA" 2>/dev/null; userdel "$UB" 2>/dev/null
    rm -rf "$PUB"
    assert_no_leftover
}

# as USER CMD...: a cairn command as USER through the public socket
as() {
    local u=$1; shift
    (cd /tmp && runuser -u "$u" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" "$@")
}

# as_rpc USER TOPIC PAYLOAD: one request as USER; prints the response
# payload, or "ERRNUM ERRSTR". A PAYLOAD of @FILE: FILE's text.
as_rpc() {
    runuser -u "$1" -- python3 - "$PUB/cairn.sock" "$2" "$3" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
p = sys.argv[3]
p = open(p[1:]).read() if p.startswith("@") else p
f.write(json.dumps({"topic": sys.argv[2], "matchtag": 1,
                    "payload": json.loads(p)}) + "\n"); f.flush()
r = json.loads(f.readline())
print("%s %s" % (r["errnum"], r["errstr"]) if "errnum" in r else json.dumps(r["payload"]))
PY
}

# flood USER TOPIC PAYLOAD N: up to N requests as USER on one connection
# (PAYLOAD as as_rpc's), 32 in flight, none sent after the first error,
# every answer read. Prints "ok K" (the requests that succeeded), then
# the first error as "ERRNUM ERRSTR", "none", or "eof" if cairnd closed
# the connection (it exited).
flood() {
    runuser -u "$1" -- python3 - "$PUB/cairn.sock" "$2" "$3" "$4" <<'PY'
import json, socket, sys
sock, topic, payload, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
payload = open(payload[1:]).read() if payload.startswith("@") else payload
s = socket.socket(socket.AF_UNIX); s.connect(sock)
# one file each way: a text file's write drops what it read ahead
fr, fw = s.makefile("r"), s.makefile("w")
line = json.dumps({"topic": topic, "matchtag": 1,
                   "payload": json.loads(payload)}) + "\n"
sent = got = ok = 0
err = None
while got < sent or (sent < n and err is None):
    while err is None and sent < n and sent - got < 32:
        fw.write(line); sent += 1
    fw.flush()
    r = fr.readline()
    if not r:
        err = "eof"
        break
    got += 1
    r = json.loads(r)
    if "errnum" in r:
        err = err or "%s %s" % (r["errnum"], r["errstr"])
    else:
        ok += 1
print("ok", ok)
print(err or "none")
PY
}

# start_sleeper USER ID NRANKS: USER's job ID, sleep on NRANKS ranks, its
# shells running when this returns
start_sleeper() {
    as "$1" run --detach --id "$2" -N "$3" -- sleep 300
    wait_event "$2" 10 start
}

# exc ID N: a non-fatal exception request on job ID with a note of N bytes
exc() {
    python3 -c 'import json, sys; print(json.dumps({"id": int(sys.argv[1]),
        "type": "x", "severity": 1, "note": "x" * int(sys.argv[2])}))' "$1" "$2"
}

# The root job that must still start and succeed
root_job_runs() {
    run cairn run -- true
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "kills on a user's many-rank job are held to its journal quota: EDQUOT, cairnd up, root's jobs start" {
    pid=$CAIRND_PID
    start_sleeper "$UA" $((U0 + 1)) 16
    # each kill journals one event per running shell: 16 here; the
    # flood would fill the 4 MiB journal many times over
    run flood "$UA" kill "{\"id\": $((U0 + 1)), \"signum\": 18}" 3000
    echo "$output"
    [ "${lines[0]}" != "ok 3000" ]
    [[ "${lines[1]}" == "122 kill: uid $uid_a's jobs hold 0."?" MiB of the journal, and this request needs "*" bytes more: limits.user-max-journal-bytes is 0.5 MiB (finished jobs count until purged)" ]]
    # nothing of the refused requests was journaled
    [ "$(events_named $((U0 + 1)) proc-signal | wc -l)" -eq $((16 * ${lines[0]#ok })) ]
    kill -0 "$pid"
    [ "$CAIRND_PID" = "$pid" ]
    root_job_runs
    # the owner, over its quota, may still cancel its job (that ends it)
    run as "$UA" cancel $((U0 + 1))
    [ "$status" -eq 0 ]
    wait_event $((U0 + 1)) 10 clean
    kill -0 "$pid"
}

@test "a user's exceptions are held to its journal quota, and a note to 4 KiB; after a restart too" {
    pid=$CAIRND_PID
    j=$((U0 + 2))
    start_sleeper "$UA" $j 2
    # a note is a sentence, not a store: one of 1 MB is refused
    exc $j 1000000 >"$PUB/big"
    [ "$(as_rpc "$UA" exception @"$PUB/big")" = \
        "22 exception: note: 1000000 bytes, more than the 4096 a user's exception may carry" ]
    [ "$(events_named $j exception | wc -l)" -eq 0 ]
    # non-fatal exceptions with 4 KiB notes: the quota, then EDQUOT
    exc $j 4096 >"$PUB/exc"
    run flood "$UA" exception @"$PUB/exc" 2000
    echo "$output"
    [ "${lines[0]}" != "ok 2000" ]
    [[ "${lines[1]}" == "122 exception: uid $uid_a's jobs hold 0."?" MiB of the journal, and this request needs 4"???" bytes more: limits.user-max-journal-bytes is 0.5 MiB (finished jobs count until purged)" ]]
    [ "$(events_named $j exception | wc -l)" -eq "${lines[0]#ok }" ]
    kill -0 "$pid"
    [ "$CAIRND_PID" = "$pid" ]
    root_job_runs
    # the count is made again from the journal at a restart (the weights
    # are upper bounds of the lines: what they leave takes one more at
    # most)
    n=$(events_named $j exception | wc -l)
    cairnd_stop
    cairnd_launch
    pid=$CAIRND_PID
    run flood "$UA" exception @"$PUB/exc" 100
    echo "$output"
    [ "${lines[0]#ok }" -le 1 ]
    [[ "${lines[1]}" == "122 exception: uid $uid_a's jobs hold 0.5 MiB of the journal, and this request needs 4"???" bytes more: limits.user-max-journal-bytes is 0.5 MiB (finished jobs count until purged)" ]]
    [ "$(events_named $j exception | wc -l)" -eq $((n + ${lines[0]#ok })) ]
    run flood "$UA" kill "{\"id\": $j, \"signum\": 18}" 100
    echo "$output"
    [ "${lines[0]}" != "ok 100" ]
    [[ "${lines[1]}" == "122 kill: uid $uid_a's jobs hold 0.5 MiB of the journal, and this request needs "*" bytes more: limits.user-max-journal-bytes is 0.5 MiB (finished jobs count until purged)" ]]
    [ "$CAIRND_PID" = "$pid" ]
    kill -0 "$pid"
    root_job_runs
    as "$UA" cancel $j
    wait_event $j 10 clean
}

@test "all users together are held to their share of the journal; root's jobs are not" {
    cairnd_stop
    # a share of 0.25 of 4 MiB: 1 MiB, room for 2 jobs of 256 KiB each
    # (their output cap, 3 x 64 KiB, and their events) and 0.5 MiB more
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"journal\": {\"max-size\": \"4M\"},
        \"limits\": {\"user-max-journal-bytes\": \"512K\",
                   \"users-journal-share\": 0.25}}"
    pid=$CAIRND_PID
    start_sleeper "$UA" $((U0 + 3)) 2
    start_sleeper "$UB" $((U0 + 4)) 2
    exc $((U0 + 3)) 4000 >"$PUB/exc-a"
    exc $((U0 + 4)) 4000 >"$PUB/exc-b"
    run flood "$UA" exception @"$PUB/exc-a" 60
    echo "$output"
    [ "${lines[0]}" = "ok 60" ]
    run flood "$UB" exception @"$PUB/exc-b" 200
    echo "$output"
    [ "${lines[0]}" != "ok 200" ]
    [ "${lines[1]}" = "122 exception: the users' jobs hold 1.0 MiB of the journal (with room for those still running), and their share is 1.0 MiB (limits.users-journal-share 0.25 of journal.max-size): the rest is kept for root's and cairnd's uid's jobs" ]
    # critical-ranks and expiration are held to it too: lighter, some
    # may pass, not many
    run flood "$UB" critical-ranks "{\"id\": $((U0 + 4)), \"ranks\": \"0\"}" 200
    echo "$output"
    [ "${lines[0]}" != "ok 200" ]
    [ "${lines[1]}" = "122 critical-ranks: the users' jobs hold 1.0 MiB of the journal (with room for those still running), and their share is 1.0 MiB (limits.users-journal-share 0.25 of journal.max-size): the rest is kept for root's and cairnd's uid's jobs" ]
    run flood "$UB" expiration "{\"id\": $((U0 + 4)), \"expiration\": $(($(date +%s) + 3600))}" 200
    echo "$output"
    [ "${lines[0]}" != "ok 200" ]
    [ "${lines[1]}" = "122 expiration: the users' jobs hold 1.0 MiB of the journal (with room for those still running), and their share is 1.0 MiB (limits.users-journal-share 0.25 of journal.max-size): the rest is kept for root's and cairnd's uid's jobs" ]
    kill -0 "$pid"
    root_job_runs
    as "$UA" cancel $((U0 + 3))
    as "$UB" cancel $((U0 + 4))
    wait_event $((U0 + 3)) 10 clean
    wait_event $((U0 + 4)) 10 clean
}

@test "with the journal full, a user's requests are refused (ENOSPC), its cancel is not" {
    cairnd_stop
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"journal\": {\"max-size\": \"2M\"}, \"output\": {\"max-bytes\": 65536}}"
    pid=$CAIRND_PID
    j=$((U0 + 5))
    start_sleeper "$UA" $j 2
    # root's jobs fill it to what is kept for the running ones' ends
    refused=
    for i in $(seq 1 100); do
        if ! out=$(cairn run --id $((500 + i)) -- sh -c 'head -c 60000 /dev/zero | tr "\\0" y' 2>&1); then
            refused=$((500 + i)); break
        fi
    done
    [ -n "$refused" ]
    [[ "$out" == *"journal is full"* ]]
    exc $j 10 >"$PUB/exc"
    [ "$(as_rpc "$UA" exception @"$PUB/exc")" = \
        "28 exception: cairnd's journal is full: what is left is kept for the running jobs' ends and for root's and cairnd's uid's requests" ]
    [ "$(as_rpc "$UA" kill "{\"id\": $j, \"signum\": 18}")" = \
        "28 kill: cairnd's journal is full: what is left is kept for the running jobs' ends and for root's and cairnd's uid's requests" ]
    [ "$(events_named $j exception | wc -l)" -eq 0 ]
    [ "$(events_named $j proc-signal | wc -l)" -eq 0 ]
    # the job's end is what the rest is kept for
    as "$UA" cancel $j
    wait_event $j 10 clean
    [ "$CAIRND_PID" = "$pid" ]
    kill -0 "$pid"
}
