# lib.bash - shared by the e2e tests: a real cairnd in a temporary state dir.
#
#   load lib
#   setup()    { cairnd_start '{"release-after": 0}'; }
#   teardown() { cairnd_stop; }
#   @test ... { run cairn run -- true; [ "$status" -eq 0 ]; }

B=${CAIRN_BUILD_DIR:?CAIRN_BUILD_DIR must name the build directory}

# Start cairnd with the given JSON config text (default {}).
cairnd_start() {
    STATEDIR=${STATEDIR:-$BATS_TEST_TMPDIR/state}
    CAIRN_CONF=$BATS_TEST_TMPDIR/cairn.conf
    printf '%s\n' "${1:-{\}}" >"$CAIRN_CONF"
    cairnd_launch
}

# (Re)start cairnd on the existing state dir and config.
cairnd_launch() {
    CAIRN_TEST_TAG=$BATS_TEST_TMPDIR \
        "$B/cairnd" -c "$CAIRN_CONF" --statedir "$STATEDIR" \
        2>>"$BATS_TEST_TMPDIR/cairnd.log" &
    CAIRND_PID=$!
    local i
    for i in $(seq 1 200); do
        [ -S "$STATEDIR/cairn.sock" ] && kill -0 "$CAIRND_PID" 2>/dev/null \
            && "$B/cairn" --statedir "$STATEDIR" list >/dev/null 2>&1 && return 0
        kill -0 "$CAIRND_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "cairnd did not start; its log:" >&2
    cat "$BATS_TEST_TMPDIR/cairnd.log" >&2
    return 1
}

# Stop cairnd (SIGTERM, or the signal given) and wait for it.
cairnd_stop() {
    [ -n "${CAIRND_PID:-}" ] || return 0
    kill -"${1:-TERM}" "$CAIRND_PID" 2>/dev/null || true
    wait "$CAIRND_PID" 2>/dev/null || true
    CAIRND_PID=
}

# Kill cairnd with SIGKILL, as a crash would.
cairnd_crash() {
    cairnd_stop KILL
}

cairn() {
    "$B/cairn" --statedir "$STATEDIR" "$@"
}

# Job id $1 in Flux's F58, as cairn's drain reasons name jobs ("ƒj" for 42).
f58() {
    local n=$1 s="" a=123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz
    while :; do
        s=${a:$((n % 58)):1}$s
        n=$((n / 58))
        [ "$n" -gt 0 ] || break
    done
    echo "ƒ$s"
}

# Event names of a job, comma separated, in journal order.
event_names() {
    cairn eventlog "$1" --json | jq -r .name | paste -sd, -
}

# Contexts of a job's events with a given name, one compact JSON per line.
events_named() {
    cairn eventlog "$1" --json | jq -c "select(.name == \"$2\") | .context"
}

# Wait (up to $2 seconds, default 10) until job $1 has an event named $3.
wait_event() {
    # generous: the wait ends as soon as the event is there, and CI
    # machines are shared and slow
    local id=$1 t=$((${2:-10} * 3)) name=$3 i
    for i in $(seq 1 $((t * 20))); do
        cairn eventlog "$id" --json 2>/dev/null \
            | jq -s -e --arg n "$name" 'any(.[]; .name == $n)' >/dev/null 2>&1 \
            && return 0
        sleep 0.05
    done
    echo "job $id: no $name event after ${t}s; events: $(event_names "$id")" >&2
    return 1
}

# A script file from the here-doc on stdin, made executable; prints its path.
script() {
    local f=$BATS_TEST_TMPDIR/$1
    cat >"$f"
    chmod +x "$f"
    echo "$f"
}

# The guard of the tests that make throwaway users (as root, with useradd).
need_useradd() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (useradd, a root cairnd)"
    command -v useradd >/dev/null || skip "no useradd here"
}

# PUB: a directory every user can reach, for a public-socket (the state
# dir stays 0700); the caller removes it.
public_dir() {
    PUB=$(mktemp -d /tmp/cairn-pub.XXXXXX)
    chmod 755 "$PUB"
}

# No process started for this test may outlive it. Reports them, kills
# them (so one failure does not leak into the next test) and fails.
assert_no_leftover() {
    local pids="" p i
    # The supervisor and the keeper exit by themselves once cairnd is gone
    # and their work is done: give them a moment.
    for i in $(seq 1 60); do
        pids=""
        for p in $(grep -l "^CAIRN_TEST_TAG=" /proc/[0-9]*/environ 2>/dev/null \
                   | cut -d/ -f3); do
            { tr '\0' '\n' <"/proc/$p/environ" \
                  | grep -qx "CAIRN_TEST_TAG=$BATS_TEST_TMPDIR"; } 2>/dev/null \
                && [ "$p" != "${CAIRND_PID:-}" ] && pids="$pids $p"
        done
        [ -z "$pids" ] && break
        sleep 0.05
    done
    if [ -z "$pids" ]; then
        run_dirs_discard
        return 0
    fi
    echo "left running:" >&2
    ps -o pid,args -p $pids >&2 || true
    kill -9 $pids 2>/dev/null || true
    run_dirs_discard
    return 1
}

# Remove the run dirs (on a tmpfs, outside the test's directory) of the
# state dirs under it: each state dir's exits link leads to one, which
# names that state dir in its "statedir" file. bats removes the rest.
run_dirs_discard() {
    local link target owner
    for link in $(find "$BATS_TEST_TMPDIR" -maxdepth 3 -name exits -type l \
                      2>/dev/null); do
        target=$(readlink "$link") || continue
        owner=$(cat "$target/statedir" 2>/dev/null) || continue
        [ "$owner" -ef "$(dirname "$link")" ] && rm -rf "$target"
    done
    return 0
}

# One request to cairnd: rpc TOPIC 'JSON-PAYLOAD'. Prints the response
# payload, or "error ERRNUM ERRSTR" (and fails) for an error response.
# RPC_SOCKET: another socket than the state dir's; RPC_USER: sent as that
# user (runuser).
rpc() {
    ${RPC_USER:+runuser -u "$RPC_USER" --} \
        python3 - "${RPC_SOCKET:-$STATEDIR/cairn.sock}" "$1" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.write(json.dumps({"topic": sys.argv[2], "matchtag": 1,
                    "payload": json.loads(sys.argv[3])}) + "\n")
f.flush()
r = json.loads(f.readline())
if "errnum" in r:
    print("error", r["errnum"], r["errstr"])
    sys.exit(1)
print(json.dumps(r["payload"]))
PY
}

# Wait until process $1 has ended (gone, or a zombie nobody reaped yet):
# kill(2) returns before a SIGKILLed process has died.
wait_dead() {
    local i st
    for i in $(seq 1 400); do
        st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
        case $st in ''|Z|X) return 0 ;; esac
        sleep 0.05
    done
    echo "process $1 still alive after 20s (state $st)" >&2
    return 1
}

# Make command $1 end with nobody to record its status: kill its
# supervisor first (a live one writes the exit record; with cairnd up, cairnd
# takes over instead), then the command. Waits until both are dead.
lose_proc() {
    local sup keeper
    sup=$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f2)
    keeper=$(sed 's/.*) //' "/proc/$sup/stat" | cut -d' ' -f2)
    kill -KILL "$sup"
    wait_dead "$sup"
    kill -KILL "$keeper"
    wait_dead "$keeper"
    kill -KILL "$1"
    wait_dead "$1"
}

# pid of job $1's $2 process on rank $3 (its command's own, under the
# supervisor)
shim_pid() {
    cairn eventlog "$1" --json | jq -rs --arg ph "$2" --arg r "$3" '
        (map(select(.name=="proc-intent" and .context.phase==$ph
                    and .context.ranks==$r)) | .[0].context.execid) as $x
        | map(select(.name=="proc-spawn" and .context.execid==$x))
        | .[0].context.pid'
}
# ---- Many nodes (DESIGN-MULTINODE.md) ----

# Start fakerelay.py (options: "$@") as cairnd's node relay, logging what
# cairnd sends to $T/relay.log; wait until cairnd says it is connected.
relay_start() {
    python3 "$BATS_TEST_DIRNAME/fakerelay.py" "$STATEDIR/cairn.sock" \
        "$T/relay.log" "$@" 2>>"$T/relay.err" &
    RELAY_PID=$!
    local i
    for i in $(seq 1 100); do
        grep -q "node relay connected" "$T/cairnd.log" && return 0
        sleep 0.05
    done
    echo "the relay did not connect" >&2
    return 1
}

# execid of job $1's $2 process on ranks $3
execid_of() {
    cairn eventlog "$1" --json | jq -r --arg ph "$2" --arg r "$3" '
        select(.name == "proc-intent" and .context.phase == $ph
               and .context.ranks == $r) | .context.execid'
}

# node-exec payload for execid $1 of job $3 (default 7), rank $4 (default
# 2), running sh -c "$2"
exec_req() {
    jq -cn --arg x "$1" --arg c "$2" --argjson id "${3:-7}" \
        --argjson r "${4:-2}" '{execid: $x, id: $id, phase: "shell",
        rank: $r, argv: ["sh", "-c", $c], env: {"CAIRN_RANK": ($r | tostring)},
        "max-output": 1000}'
}

# ---- Views ----

# A start request for job $1 of user $2 running $3 (a JSON array) on ranks
# 0-2 of hosts node0..node2, in directory $T, sent in the background: its
# responses go to $T/stream-$1 until the final release.
start_job() {
    python3 - "$STATEDIR/cairn.sock" "$1" "$2" "$3" "$T" >"$T/stream-$1" 2>&1 <<'PY' &
import json, socket, sys
sock, jid, uid, cmd, cwd = sys.argv[1:]
R = {"version": 1, "execution": {"R_lite": [{"rank": "0-2",
     "children": {"core": "0"}}], "nodelist": ["node[0-2]"]}}
js = {"version": 1, "tasks": [{"command": json.loads(cmd)}],
      "attributes": {"system": {"cwd": cwd}}}
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.sendall((json.dumps({"topic": "start", "matchtag": 1, "payload": {
    "id": int(jid), "userid": int(uid), "jobspec": js, "R": R}}) + "\n").encode())
f = s.makefile()
while True:
    line = f.readline()
    if not line:
        break
    print(line, end="", flush=True)
    r = json.loads(line)
    if "errnum" in r or (r["payload"]["type"] == "release"
                         and r["payload"]["data"].get("final")):
        break
PY
    STREAM_PID=$!
}
