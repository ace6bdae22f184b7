#!/usr/bin/env bats
# start streams with "events": true (cairn-protocol(7)): the acceptance
# acknowledgment and the progress events, in journal order with the RFC 32
# responses; what a reattach resends, in either view, after `since`.
load lib

# A per-rank prolog that succeeds and a per-rank epilog that fails on rank
# 1: its exception and drain are in every sequence below.
CONF='{"prolog": {"command": ["/bin/true"], "per-rank": true},
 "epilog": {"command": ["/bin/sh", "-c", "test \"$CAIRN_RANK\" != 1"],
            "per-rank": true}}'

R2='{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],"nodelist":["node[0-1]"]}}'

setup() {
    cairnd_start "$CONF"
}

teardown() {
    cairnd_stop
    assert_no_leftover
}

# The payload of a start for job $1 running command $2 (a JSON array) on
# ranks 0-1, with the extra keys $3 (",\"events\":true").
job() {
    printf '{"id":%s,"userid":%s,"jobspec":{"version":1,"tasks":[{"command":%s}]},"R":%s%s}' \
        "$1" "$(id -u)" "$2" "$R2" "${3:-}"
}

# stream 'PAYLOAD': send one start request and print the payload of each
# response, compact and in cairnd's key order, up to the final release;
# "error ERRNUM ERRSTR" for an error response, "(timeout)" when nothing
# comes for 30s.
stream() {
    python3 - "$STATEDIR/cairn.sock" "$1" <<'PY'
import json, select, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"topic": "start", "matchtag": 1,
                       "payload": json.loads(sys.argv[2])}) + "\n").encode())
buf = b""
while True:
    if b"\n" not in buf:
        if not select.select([s], [], [], 30)[0]:
            print("(timeout)")
            sys.exit(2)
        data = s.recv(65536)
        if not data:
            print("(closed)")
            sys.exit(3)
        buf += data
        continue
    line, buf = buf.split(b"\n", 1)
    r = json.loads(line)
    if "errnum" in r:
        print("error", r["errnum"], r["errstr"])
        sys.exit(1)
    p = r["payload"]
    print(json.dumps(p, separators=(",", ":"), ensure_ascii=False),
          flush=True)
    if p["type"] == "release" and p["data"].get("final"):
        break
PY
}

# The responses of job $1 after its start, as every stream of it gets them
# (the lines of the epilog failure are the same in both views).
exc() {
    echo "{\"id\":$1,\"type\":\"exception\",\"data\":{\"severity\":2,\"type\":\"epilog\",\"note\":\"epilog failed on rank 1: exit 1\",\"ranks\":\"1\"}}"
}
# What a reattach without events gets of a job that ended after its epilog
# failed on rank 1: the reattached answer, then the responses only.
reattached_end() { # ID
    cat <<EOF
{"id":$1,"type":"reattached","data":{"userid":$(id -u),"privileged":true}}
{"id":$1,"type":"finish","data":{"status":0}}
$(exc "$1")
{"id":$1,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
}
drain() { # ID [HOST of rank 1, default node1 as in R2]
    echo "{\"id\":$1,\"type\":\"drain\",\"data\":{\"ranks\":\"1\",\"reason\":\"epilog failed for job $(f58 $1): exit 1\",\"hosts\":\"${2:-node1}\"}}"
}

@test "events: true: accepted, the perilog events and the drain, in journal order" {
    run stream "$(job 1 '["true"]' ',"events":true')"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat <<EOF
{"id":1,"type":"accepted","data":{}}
{"id":1,"type":"prolog-start","data":{"description":"cairn.prolog"}}
{"id":1,"type":"prolog-finish","data":{"description":"cairn.prolog","status":0}}
{"id":1,"type":"start","data":{}}
{"id":1,"type":"finish","data":{"status":0}}
{"id":1,"type":"epilog-start","data":{"description":"cairn.epilog"}}
$(exc 1)
$(drain 1)
{"id":1,"type":"epilog-finish","data":{"description":"cairn.epilog","status":256}}
{"id":1,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
    # views of the journal: nothing more was journaled for them
    [ "$(event_names 1 | tr , '\n' | grep -v '^proc-' | paste -sd, -)" = \
        accept,prolog-start,prolog-finish,start,finish,cleanup,epilog-start,exception,drain,epilog-finish,release,clean ]
    run cairn verify --json
    echo "$output" | jq -e '.ok and .problems == 0'
}

@test "without events (or events: false) a stream gets the RFC 32 responses only" {
    run stream "$(job 2 '["true"]')"
    echo "$output"
    [ "$status" -eq 0 ]
    want=$(cat <<EOF
{"id":2,"type":"start","data":{}}
{"id":2,"type":"finish","data":{"status":0}}
$(exc 2)
{"id":2,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)
    [ "$output" = "$want" ]
    run stream "$(job 3 '["true"]' ',"events":false')"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "${want//\"id\":2/\"id\":3}" ]
}

@test "reattach to a finished job: since counts within the stream's own view" {
    run stream "$(job 4 '["true"]' ',"events":true')"
    [ "$status" -eq 0 ]
    # the events view counts prolog-start, prolog-finish, start, finish
    # (not accepted): the client had those four
    run stream '{"id":4,"reattach":true,"events":true,"since":4}'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat <<EOF
{"id":4,"type":"reattached","data":{"userid":$(id -u),"privileged":true}}
{"id":4,"type":"epilog-start","data":{"description":"cairn.epilog"}}
$(exc 4)
$(drain 4)
{"id":4,"type":"epilog-finish","data":{"description":"cairn.epilog","status":256}}
{"id":4,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
    # the RFC 32 view of the same job: finish is its first, as before
    run stream '{"id":4,"reattach":true,"since":1}'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat <<EOF
{"id":4,"type":"reattached","data":{"userid":$(id -u),"privileged":true}}
$(exc 4)
{"id":4,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
}

@test "reattach with events to a running job: backlog after since (start too), then live; no accepted" {
    GO=$BATS_TEST_TMPDIR/go
    stream "$(job 5 "[\"sh\",\"-c\",\"while [ ! -e $GO ]; do sleep 0.05; done\"]" ',"events":true')" \
        >"$BATS_TEST_TMPDIR/s1" 3>&- &
    p1=$!
    wait_event 5 10 start
    # the client had prolog-start and prolog-finish
    stream '{"id":5,"reattach":true,"events":true,"since":2}' \
        >"$BATS_TEST_TMPDIR/s2" 3>&- &
    p2=$!
    stream '{"id":5,"reattach":true}' >"$BATS_TEST_TMPDIR/s3" 3>&- &
    p3=$!
    for _ in $(seq 1 200); do
        [ -s "$BATS_TEST_TMPDIR/s2" ] && [ -s "$BATS_TEST_TMPDIR/s3" ] && break
        sleep 0.05
    done
    touch "$GO"
    wait $p1
    wait $p2
    wait $p3
    cat "$BATS_TEST_TMPDIR"/s[123]
    [ "$(cat "$BATS_TEST_TMPDIR/s1")" = "$(cat <<EOF
{"id":5,"type":"accepted","data":{}}
{"id":5,"type":"prolog-start","data":{"description":"cairn.prolog"}}
{"id":5,"type":"prolog-finish","data":{"description":"cairn.prolog","status":0}}
{"id":5,"type":"start","data":{}}
{"id":5,"type":"finish","data":{"status":0}}
{"id":5,"type":"epilog-start","data":{"description":"cairn.epilog"}}
$(exc 5)
$(drain 5)
{"id":5,"type":"epilog-finish","data":{"description":"cairn.epilog","status":256}}
{"id":5,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
    # the events view replays start to a client that lacked it (cut off
    # during the prolog); the RFC 32 view (s3) never sends it on reattach
    [ "$(cat "$BATS_TEST_TMPDIR/s2")" = "$(cat <<EOF
{"id":5,"type":"reattached","data":{"userid":$(id -u),"privileged":true}}
{"id":5,"type":"start","data":{}}
{"id":5,"type":"finish","data":{"status":0}}
{"id":5,"type":"epilog-start","data":{"description":"cairn.epilog"}}
$(exc 5)
$(drain 5)
{"id":5,"type":"epilog-finish","data":{"description":"cairn.epilog","status":256}}
{"id":5,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
    [ "$(cat "$BATS_TEST_TMPDIR/s3")" = "$(reattached_end 5)" ]
}

# A batch is on disk a moment before its effects run (cairnd's committer
# thread commits it, the loop acts on it when it lands): a reattach in
# between must not get its responses from the journal and again from the
# effects (doc/design.md W9). CAIRN_TEST_LAND_DELAY widens that moment.
@test "reattach between a batch's commit and its effects: each response once" {
    cairnd_stop
    export CAIRN_TEST_LAND_DELAY=800
    cairnd_launch
    unset CAIRN_TEST_LAND_DELAY
    GO=$BATS_TEST_TMPDIR/go
    stream "$(job 6 "[\"sh\",\"-c\",\"while [ ! -e $GO ]; do sleep 0.05; done\"]")" \
        >"$BATS_TEST_TMPDIR/s1" 3>&- &
    p1=$!
    wait_event 6 10 start
    touch "$GO"
    wait_event 6 10 finish # on disk; its effects 0.8 s later
    stream '{"id":6,"reattach":true}' >"$BATS_TEST_TMPDIR/s2" 3>&- &
    p2=$!
    wait $p1
    wait $p2
    cat "$BATS_TEST_TMPDIR"/s[12]
    [ "$(cat "$BATS_TEST_TMPDIR/s2")" = "$(reattached_end 6)" ]
    [ "$(grep -c '"type":"finish"' "$BATS_TEST_TMPDIR/s1")" -eq 1 ]
}

@test "events must be a boolean: EINVAL, and nothing is started" {
    run stream "$(job 6 '["true"]' ',"events":1')"
    [ "$status" -eq 1 ]
    [ "$output" = "error 22 events: must be true or false" ]
    run stream '{"id":6,"reattach":true,"events":"yes"}'
    [ "$status" -eq 1 ]
    [ "$output" = "error 22 events: must be true or false" ]
    run stream '{"id":6,"reattach":true}'
    [ "$output" = "error 2 job 6 not found" ]
}

# Regression: backlog_cb built an exception's data by hand and left out
# the ranks that the live response (job_response) had.
@test "an exception resent on reattach has the ranks the live one had" {
    run stream "$(job 7 '["true"]')"
    [ "$status" -eq 0 ]
    live=$(grep '"type":"exception"' <<<"$output")
    [ "$(jq -r .data.ranks <<<"$live")" = 1 ]
    run stream '{"id":7,"reattach":true}'
    [ "$status" -eq 0 ]
    [ "$(grep '"type":"exception"' <<<"$output")" = "$live" ]
}

# cairn run asks for events to learn when its job is accepted: it says
# "submitted" then, shows the RFC 32 responses, and with --json everything.
@test "cairn run: submitted once accepted, progress events only with --json" {
    run cairn run --id 8 -N 2 -- true
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | sed 's/^[0-9]*\.[0-9]\{3\}s /T /')" = "$(cat <<EOF
job 8 (ƒ9) submitted
T start
T finish status 0 (exit 0)
T exception epilog (severity 2): epilog failed on rank 1: exit 1
T release ranks 0-1 final
EOF
)" ]
    run cairn run --json --id 9 -N 2 -- true
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | jq -c .payload)" = "$(cat <<EOF
{"id":9,"type":"accepted","data":{}}
{"id":9,"type":"prolog-start","data":{"description":"cairn.prolog"}}
{"id":9,"type":"prolog-finish","data":{"description":"cairn.prolog","status":0}}
{"id":9,"type":"start","data":{}}
{"id":9,"type":"finish","data":{"status":0}}
{"id":9,"type":"epilog-start","data":{"description":"cairn.epilog"}}
$(exc 9)
$(drain 9 "$(hostname)")
{"id":9,"type":"epilog-finish","data":{"description":"cairn.epilog","status":256}}
{"id":9,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
}

# Its `since` counts start and the progress events then: a reattach after
# a restart resends none of those it had.
@test "cairn run --json across a cairnd restart: every response once" {
    GO=$BATS_TEST_TMPDIR/go
    (cairn run --json --id 10 -N 2 -- sh -c "while [ ! -e $GO ]; do sleep 0.05; done" \
        >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || true) 3>&- &
    p=$!
    wait_event 10 10 start
    for _ in $(seq 1 100); do # until run has printed start
        grep -q '"type":"start"' "$BATS_TEST_TMPDIR/out" && break
        sleep 0.05
    done
    cairnd_stop
    cairnd_launch
    touch "$GO"
    wait $p
    cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err"
    [ "$(cat "$BATS_TEST_TMPDIR/err")" = "cairn run: cairnd went away; reconnecting" ]
    [ "$(jq -c .payload <"$BATS_TEST_TMPDIR/out")" = "$(cat <<EOF
{"id":10,"type":"accepted","data":{}}
{"id":10,"type":"prolog-start","data":{"description":"cairn.prolog"}}
{"id":10,"type":"prolog-finish","data":{"description":"cairn.prolog","status":0}}
{"id":10,"type":"start","data":{}}
{"id":10,"type":"reattached","data":{"userid":$(id -u),"privileged":true}}
{"id":10,"type":"finish","data":{"status":0}}
{"id":10,"type":"epilog-start","data":{"description":"cairn.epilog"}}
$(exc 10)
$(drain 10 "$(hostname)")
{"id":10,"type":"epilog-finish","data":{"description":"cairn.epilog","status":256}}
{"id":10,"type":"release","data":{"ranks":"0-1","final":true}}
EOF
)" ]
}
