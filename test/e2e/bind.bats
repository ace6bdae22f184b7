#!/usr/bin/env bats
# One Flux instance per cairnd, the protocol side (exec/bind.h,
# cairn-protocol(7) "bind"); test/flux/instance.bats has it with Flux.
load lib

setup() {
    cairnd_start '{}'
}

teardown() {
    cairnd_stop
}

# Steps against cairnd, one per argument, each on a connection of its own
# name ("a:bind UUID", "a:start ID UUID", "a:close", "stats", "b:cancel ID",
# "a:undrain RANKS [only]" (only-drained), "unbound": stats until no
# instance is bound, 5 s at most);
# connections stay open until closed or the end. Prints one line per step:
# "ok PAYLOAD" or "error ERRNUM ERRSTR".
steps() {
    python3 - "$STATEDIR/cairn.sock" "$@" <<'PY'
import json, socket, sys, time
path, steps = sys.argv[1], sys.argv[2:]
conns = {}
tag = 0
def conn(name):
    if name not in conns:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        conns[name] = (s, s.makefile("rw"))
    return conns[name]
def call(name, topic, payload):
    global tag
    tag += 1
    s, f = conn(name)
    f.write(json.dumps({"topic": topic, "matchtag": tag,
                        "payload": payload}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if r.get("matchtag") != tag:
            continue
        if "errnum" in r:
            return "error %d %s" % (r["errnum"], r["errstr"])
        if topic != "start":
            return "ok " + json.dumps(r["payload"])
        return "ok " + r["payload"]["type"]  # its first response
R = {"version": 1, "execution": {"R_lite": [{"rank": "0",
     "children": {"core": "0"}}], "nodelist": ["node0"]}}
for step in steps:
    name, _, rest = step.partition(":") if ":" in step else ("x", "", step)
    words = rest.split()
    if words[0] == "close":
        conns.pop(name)[0].close()
        continue
    if words[0] == "bind":
        p = {"instance": words[1], "name": "test " + words[1]} \
            if len(words) > 1 else {"instance": "u"}
        print(call(name, "bind", p))
    elif words[0] == "start":
        js = {"version": 1, "tasks": [{"command": ["sleep", "300"]}],
              "attributes": {"system": {"cairn": {"instance": words[2]}}}}
        print(call(name, "start", {"id": int(words[1]), "userid": 0,
                                   "jobspec": js, "R": R}))
    elif words[0] == "cancel":
        print(call(name, "exception", {"id": int(words[1]), "severity": 0,
                                       "type": "cancel", "note": "test"}))
    elif words[0] == "undrain":  # undrain RANKS [only]
        p = {"ranks": words[1]}
        if len(words) > 2:
            p["only-drained"] = True
        print(call(name, "undrain", p))
    elif words[0] == "stats":
        st = json.loads(call(name, "stats", {})[3:])
        print("ok", json.dumps(st.get("flux-instance")))
    elif words[0] == "unbound":  # a close reaches cairnd a moment later
        for _ in range(100):
            fi = json.loads(call(name, "stats", {})[3:]).get("flux-instance")
            if fi is None:
                break
            time.sleep(0.05)
        print("ok", json.dumps(fi))
PY
}

@test "bind: a bad request is EINVAL and binds nothing" {
    run steps "a:bind" "stats"
    echo "$output"
    [ "${lines[0]}" = 'error 22 bind: "instance" must be a string of 1 to 64 bytes and "name" one of 1 to 256' ]
    [ "${lines[1]}" = "ok null" ]
}

@test "bind: one instance while connected; another is refused, naming both" {
    run steps "a:bind A" "b:bind B" "d:bind B" "b:bind A" "stats" "a:close" \
        "b:close" "unbound" "c:bind B"
    echo "$output"
    [ "${lines[0]}" = 'ok {"instance": "A"}' ]
    [ "${lines[1]}" = "error 16 bind: cairnd serves Flux instance A (test A, connected); refused B (test B): one instance per cairnd, see cairn-exec(8)" ]
    [ "${lines[2]}" = "${lines[1]}" ]
    [ "${lines[3]}" = 'ok {"instance": "A"}' ]
    [ "${lines[4]}" = 'ok {"uuid": "A", "name": "test A"}' ]
    [ "${lines[5]}" = "ok null" ]
    [ "${lines[6]}" = 'ok {"instance": "B"}' ]
    # logged once, not at every retry of its module
    [ "$(grep -c "refused B (test B)" "$BATS_TEST_TMPDIR/cairnd.log")" -eq 1 ]
    grep -q "bound to Flux instance B (test B)" "$BATS_TEST_TMPDIR/cairnd.log"
}

@test "bind: an instance's active job keeps it bound, across a cairnd restart" {
    run steps "a:bind A" "a:start 11 A" "a:close" "unbound" "b:bind B"
    echo "$output"
    [ "${lines[1]}" = "ok start" ]
    [ "${lines[2]}" = "ok null" ]
    [ "${lines[3]}" = "error 16 bind: cairnd serves Flux instance A (its job 11 is active); refused B (test B): one instance per cairnd, see cairn-exec(8)" ]
    # the job's stamp is in the journal: a restarted cairnd says the same
    cairnd_crash
    cairnd_launch
    run steps "b:bind B"
    [ "${lines[0]}" = "error 16 bind: cairnd serves Flux instance A (its job 11 is active); refused B (test B): one instance per cairnd, see cairn-exec(8)" ]
    # once the job is over, B is served
    run steps "a:bind A" "a:cancel 11"
    echo "$output"
    wait_event 11 10 clean
    run steps "unbound" "b:bind B"
    [ "${lines[1]}" = 'ok {"instance": "B"}' ]
}

@test "start: a job of an instance only on a connection bound to it" {
    run steps "a:start 12 A" "b:bind B" "b:start 13 A"
    echo "$output"
    [ "${lines[0]}" = "error 16 start: the job is Flux instance A's and this connection is bound to no instance (send bind first)" ]
    [ "${lines[2]}" = "error 16 start: the job is Flux instance A's, this connection is bound to instance B" ]
    # nothing was journaled for either
    run cairn show 12
    [ "$status" -ne 0 ]
    run cairn show 13
    [ "$status" -ne 0 ]
}

# issue 37: under Flux, Flux's drain list is the one; its module mirrors
# Flux's undrains (flux/drainsync.h, only-drained), and nobody else
# undrains while it is bound
@test "undrain: only the bound instance's connection, and only-drained leaves out the others" {
    e=$(script epilog.sh <<'SH'
#!/bin/sh
[ "$CAIRN_RANK" = 1 ] || [ "$CAIRN_RANK" = 2 ] && exit 3
exit 0
SH
)
    cairnd_stop
    cairnd_start "{\"epilog\": {\"command\": [\"$e\"], \"per-rank\": true}}"
    cairn run --id 811 -N 3 -- true 2>/dev/null || true
    [ "$(cairn drain --json | jq -r .rank | paste -sd,)" = 1,2 ]
    run steps "a:bind A" "b:undrain 1" "a:undrain 0 only" "a:undrain 0-1 only" \
        "a:undrain 0"
    echo "$output"
    [ "${lines[0]}" = 'ok {"instance": "A"}' ]
    [ "${lines[1]}" = "error 16 undrain: cairnd serves Flux instance A (test A), whose drain list is the one: undrain there (flux resource undrain RANKS), and cairnd follows (cairn-exec(8))" ]
    [ "${lines[2]}" = 'ok {"ranks": ""}' ]
    [ "${lines[3]}" = 'ok {"ranks": "1"}' ]
    [ "${lines[4]}" = "error 22 rank 0 is not drained" ]
    [ "$(cairn drain --json | jq -r .rank)" = 2 ]
    # unbound: cairn undrain again
    run cairn undrain 2
    [ "$status" -eq 0 ]
    [ -z "$(cairn drain --json)" ]
}
