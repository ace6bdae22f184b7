#!/usr/bin/env bats
# A user's `jobs` requests cannot hold cairnd's loop (issue 51): one view
# of 1,200 jobs cost 160 ms in one go, and one uid's connections asking
# in turn slowed root's start from 0.03 s to 0.75 s. The summaries are
# made a slice of each loop turn at a time, root's requests served
# between, and a user has at most 8 such requests answered at once.
# A throwaway user, made here and removed after; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    UA=cva$$
    useradd -M -s /bin/sh "$UA"
    uid_a=$(id -u "$UA")
    public_dir
    chmod 755 "$T"
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\"}"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    if [ -n "${VIEWS_PID:-}" ]; then
        kill "$VIEWS_PID" 2>/dev/null || true
        wait "$VIEWS_PID" 2>/dev/null || true
    fi
    cairnd_stop
    pkill -u "$UA" 2>/dev/null
    userdel "$UA" 2>/dev/null
    rm -rf "$PUB"
    assert_no_leftover
}

# views_waiting: the jobs requests cairnd is answering (stats)
views_waiting() {
    rpc stats '{}' | jq -e '."views-waiting"'
}

@test "a user's jobs views are made a slice at a time: root's requests and jobs go on meanwhile" {
    # 40 jobs whose accepts (300 KB of environment each) are slow to
    # summarize: about 3 ms each, 0.1 s a view
    x=$(head -c 100000 /dev/zero | tr '\0' x)
    for i in $(seq 1 40); do
        cairn run --env "B1=$x" --env "B2=$x" --env "B3=$x" -- true >/dev/null
    done
    # 9 jobs requests at once on one connection, as A: 8 are answered, the
    # 9th is refused at once
    runuser -u "$UA" -- python3 - "$PUB/cairn.sock" >"$PUB/answers" 2>&1 <<'PY' &
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
fr, fw = s.makefile("r"), s.makefile("w")
fw.write("".join(json.dumps({"topic": "jobs", "matchtag": i,
                             "payload": {"all": True}}) + "\n"
                 for i in range(1, 10)))
fw.flush()
for _ in range(9):
    r = json.loads(fr.readline())
    if "errnum" in r:
        print(r["matchtag"], r["errnum"], r["errstr"])
    else:
        print(r["matchtag"], len(r["payload"]["jobs"]))
PY
    VIEWS_PID=$!
    # while they are made, root's requests are answered, and root's job
    # runs from start to end
    n=
    for i in $(seq 1 400); do
        n=$(views_waiting) || { echo "stats has no views-waiting" >&2; break; }
        [ "$n" -eq 0 ] || break
        sleep 0.01
    done
    [ "$n" -eq 8 ]
    run cairn run -- true
    [ "$status" -eq 0 ]
    n=$(views_waiting)
    [ "$n" -gt 0 ]
    wait "$VIEWS_PID"
    VIEWS_PID=
    cat "$PUB/answers"
    [ "$(grep -c ' 40$' "$PUB/answers")" -eq 8 ]
    [ "$(grep -v ' 40$' "$PUB/answers")" = \
        "9 11 jobs: uid $uid_a has 8 jobs requests being answered already: wait for their answers" ]
    [ "$(views_waiting)" -eq 0 ]
}

@test "a jobs request whose client went away is dropped, and the rest still answered" {
    x=$(head -c 100000 /dev/zero | tr '\0' x)
    for i in $(seq 1 10); do
        cairn run --env "B1=$x" --env "B2=$x" --env "B3=$x" -- true >/dev/null
    done
    # A asks and hangs up at once
    runuser -u "$UA" -- python3 - "$PUB/cairn.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall((json.dumps({"topic": "jobs", "matchtag": 1,
                       "payload": {"all": True}}) + "\n").encode())
s.close()
PY
    run cairn jobs -a -n
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 10 ]
    [ "$(views_waiting)" -eq 0 ]
    kill -0 "$CAIRND_PID"
}
