#!/usr/bin/env bats
# One user's flood of requests must not starve another's (issue 30):
# pipelined view requests from a user who never reads the answers held a
# root job's start for 46 s, and 64 such clients took cairnd to 506 MB.
# A user's requests are served after process events and privileged
# clients' (a lower priority), a bounded batch at a time; a connection
# whose answers are not read stops being read; an idle one is closed.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    UF=ctf$$ UV=ctv$$ # the flooder, and another user
    useradd -M -s /bin/sh "$UF"
    useradd -M -s /bin/sh "$UV"
    public_dir
    chmod 755 "$T"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    [ -z "${FLOOD:-}" ] || kill $FLOOD 2>/dev/null || true
    cairnd_stop
    pkill -u "$UF" 2>/dev/null || true
    pkill -u "$UV" 2>/dev/null || true
    userdel "$UF" 2>/dev/null || true
    userdel "$UV" 2>/dev/null || true
    rm -rf "$PUB"
    assert_no_leftover
}

# flood N REQS: N connections of the flooding user, each sending REQS
# pipelined `jobs` requests and never reading an answer; they stay open
# until killed ($FLOOD).
flood() {
    runuser -u "$UF" -- python3 -c '
import socket, sys, time
n, reqs, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
line = b"{\"topic\":\"jobs\",\"matchtag\":1,\"payload\":{\"all\":true}}\n"
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        break
    s.setblocking(False)
    socks.append([s, line * reqs])
while any(b for _, b in socks):
    for e in socks:
        if e[1]:
            try:
                k = e[0].send(e[1][:65536])
                e[1] = e[1][k:]
            except BlockingIOError:
                pass
            except OSError:
                e[1] = b""
    time.sleep(0.001)
print("sent", flush=True)
time.sleep(600)
' "$1" "$2" "$PUB/cairn.sock" >"$T/flood.out" 2>&1 &
    FLOOD=$!
}

# job_within SECONDS LABEL [USER]: a job of root's (of USER's, through the
# public socket) runs to its end, and within SECONDS (LABEL and the time
# taken go to the test's output)
job_within() {
    local t0 t1
    t0=$(date +%s.%N)
    if [ -n "${3:-}" ]; then
        run timeout 20 runuser -u "$3" -- env -C / \
            CAIRN_SOCKET="$PUB/cairn.sock" "$B/cairn" run -- true
    else
        run timeout 20 "$B/cairn" --statedir "$STATEDIR" run -- true
    fi
    t1=$(date +%s.%N)
    [ "$status" -eq 0 ]
    echo "$2: $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') s" >&3
    awk -v a="$t0" -v b="$t1" -v m="$1" 'BEGIN { exit !(b - a < m) }'
}

rss_kb() {
    awk '/^VmRSS/ {print $2}' "/proc/$CAIRND_PID/status"
}

@test "a user's pipelined views hold up no root start, and cairnd's memory stays bounded" {
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\"}"
    # some jobs, so that each answer weighs something
    for i in $(seq 1 40); do cairn run -- true >/dev/null; done
    before=$(rss_kb)
    flood 16 40000
    sleep 2
    # while the flood is being served: root starts and ends a job at once
    job_within 3.0 "root job under the flood"
    # and another user's, whose requests take turns with the flooder's
    job_within 3.0 "another user's job under the flood" "$UV"
    # once its connections wait for it to read, it costs nothing more
    sleep 1
    job_within 1.0 "root job after the ramp"
    for _ in $(seq 1 100); do grep -q sent "$T/flood.out" && break; sleep 0.1; done
    sleep 1
    after=$(rss_kb)
    echo "cairnd VmRSS: $before kB before, $after kB with 16 flooding clients" >&3
    # (a sanitizer build's RSS is its shadow memory and quarantine)
    if ! ldd "$B/cairnd" 2>/dev/null | grep -q libasan; then
        [ $((after - before)) -lt 65536 ]
    fi
    kill -0 "$CAIRND_PID"
}

# An idle user's connection (nothing sent for user-idle-timeout, no stream
# followed) is closed with a message; one that follows a job, and root's,
# are kept.
@test "a user's idle connection is closed after user-idle-timeout; one following a job is not" {
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"limits\": {\"user-idle-timeout\": \"2s\"}}"
    hold() { # hold SOCKET: connect, send nothing, print what comes
        python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1]); s.settimeout(8)
t = time.time()
try:
    d = s.recv(4096)
except socket.timeout:
    d = b"(still open)\n"
print("%.1f %s" % (time.time() - t, d.decode().strip()))
' "$1"
    }
    CWD=/ runuser -u "$UF" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" run -- sleep 6 >"$T/follow.out" 2>&1 3>&- &
    follow=$!
    run runuser -u "$UF" -- bash -c "$(declare -f hold); hold $PUB/cairn.sock"
    echo "$output"
    [[ "$output" == *'"errnum":110'*"idle for 2 s (limits.user-idle-timeout): closing"* ]]
    secs=${output%% *}
    awk -v s="$secs" 'BEGIN { exit !(s >= 1.9 && s < 5) }'
    run hold "$PUB/cairn.sock"         # root's connection
    [[ "$output" == *"(still open)"* ]]
    wait "$follow"                     # the follower saw its job through
    grep -q "finish status 0" "$T/follow.out"
    run grep -q "went away" "$T/follow.out"   # on its first connection
    [ "$status" -ne 0 ]
}
