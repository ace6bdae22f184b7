#!/usr/bin/env bats
# Issue 30: cairn-exec.so takes cairnd's job of a Flux job's id for that
# Flux job only if it is that job's: the owner the job-manager gave,
# submitted by a privileged client. A job someone else started first under
# the id is never followed, and the Flux job ends with an exception naming
# the conflict. (A user on the public socket can no longer take such an id
# at all, users.bats; the module's rule on "privileged": t_adopt.)
load lib
bats_require_minimum_version 1.5.0

teardown() {
    cairnd_stop
    assert_no_leftover
}

@test "a job of another uid under a Flux job's id is not adopted: the Flux job fails, naming the conflict" {
    cairnd_start '{}'
    # squat ID: start, as cairnd's root client for uid 65534, a job under
    # a Flux job's id (what a user could do before issue 30)
    squat=$(script squat <<'PY'
#!/usr/bin/env python3
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
js = {"version": 1, "resources": [{"type": "slot", "count": 1, "label": "task",
      "with": [{"type": "core", "count": 1}]}],
      "tasks": [{"command": ["sh", "-c", "echo squatter-output; sleep 60"],
                 "slot": "task",
                 "count": {"per_slot": 1}}],
      "attributes": {"system": {"cwd": "/"}}}
R = {"version": 1, "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}],
     "nodelist": ["localhost"]}}
f.write(json.dumps({"topic": "start", "matchtag": 1, "payload": {
    "id": int(sys.argv[2]), "userid": 65534, "jobspec": js, "R": R}}) + "\n")
f.flush()
r = json.loads(f.readline())
sys.exit(1 if "errnum" in r else 0)
PY
)
    run --separate-stderr in_flux "id=\$(flux submit --urgency=hold -N1 echo flux-job-output)
        dec=\$(flux job id --to=dec \$id)
        $squat $STATEDIR/cairn.sock \$dec || exit 1
        echo \$dec
        flux job urgency \$id default
        flux job wait-event -t 30 \$id clean >/dev/null
        flux jobs -no '{result}' \$id
        flux job wait-event -f json \$id exception | jq -r .context.note
        flux job attach \$id 2>&1; echo rc=\$?"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    dec=${lines[0]}
    f58=$("$FLUX" job id --to=f58 "$dec")
    [ "${lines[1]}" = FAILED ]
    [ "${lines[2]}" = "job id conflict: cairnd's job $f58 belongs to uid 65534, not to this job's uid $(id -u): not adopted" ]
    # nothing of the other job reached the Flux job
    [[ "$output" != *squatter-output* ]]
    # and that job is left alone: it runs on as its own, and the Flux
    # job's fatal exception did not reach it
    [ "$(cairn jobs -n -o '{id} {state}' "$dec")" = "$dec run" ]
    [ "$(events_named "$dec" accept | jq .userid)" -eq 65534 ]
    [ -z "$(events_named "$dec" exception)" ]
    cairn cancel "$dec"
    wait_event "$dec" 10 clean
}
