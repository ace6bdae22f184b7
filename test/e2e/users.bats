#!/usr/bin/env bats
# Many users (issue 17): cairnd as root runs each job's shells as the job's
# user, and every request is judged by its sender's uid (SO_PEERCRED).
# Two throwaway users, made here and removed after; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    UA=cta$$ UB=ctb$$
    # the users' job ids (jobid.h): 8070450532247928832 up; below are
    # root's and the resource manager's
    U0=8070450532247928832
    for n in 1 2 5 6 7 10 11 12 13 14; do eval "j$n=$((U0 + n))"; done
    HA=$(mktemp -d /tmp/cairn-home.XXXXXX)
    useradd -M -d "$HA" -s /bin/sh "$UA"
    useradd -M -s /bin/sh "$UB"
    chown "$UA" "$HA"
    public_dir
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
    CWD="$HA" run --separate-stderr as "$UA" run --id $j1 -- sh -c 'id -u; id -g; id -G; echo $HOME; pwd'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$(id -u "$UA")" ]
    [ "${lines[1]}" = "$(id -g "$UA")" ]
    [ "${lines[2]}" = "$(id -G "$UA")" ]
    [ "${lines[3]}" = "$HA" ]
    [ "${lines[4]}" = "$HA" ]
    [ "$(cat "$PUB/runlog")" = "prolog as 0 for $(id -u "$UA") $(id -u "$UA")" ]
    [ "$(cairn jobs -a -n -o '{id} {username}')" = "$j1 $UA" ]
}

@test "B cannot reach A's job, nor start one as A; root can" {
    CWD="$HA" as "$UA" run --detach --id $j2 -- sleep 60
    wait_event $j2 10 start
    run as "$UB" cancel $j2
    [ "$status" -ne 0 ]
    [[ "$output" == *"permission denied: job $j2 belongs to uid $(id -u "$UA")"* ]]
    run as "$UB" kill $j2
    [[ "$output" == *"permission denied: job $j2 belongs to uid $(id -u "$UA")"* ]]
    run as "$UB" attach $j2
    [[ "$output" == *"permission denied: job $j2 belongs to uid $(id -u "$UA")"* ]]
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
    run as "$UA" cancel $j2
    [ "$status" -eq 0 ]
    wait_event $j2 10 clean
}

# issue 30: the client chose the job id, so a user could start a job under
# the id of a Flux job still queued, and cairn-exec.so then took that job
# for the Flux job. Users' ids are a range of their own (jobid.h).
@test "a user cannot take a job id of the resource manager's range; root can" {
    uid_a=$(id -u "$UA")
    # the attack: A starts a job under the next id a resource manager
    # would use
    run --separate-stderr as "$UA" run --id 7001 -- true
    echo "$output$stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn run: start: permission denied: job id 7001 is not a user's: uid $uid_a may start jobs with ids from 8070450532247928832 up only (those below are for root and cairnd's uid)" ]
    [ "$(as_rpc "$UA" start "{\"id\": 7002, \"userid\": $uid_a}")" = \
        "1 start: permission denied: job id 7002 is not a user's: uid $uid_a may start jobs with ids from 8070450532247928832 up only (those below are for root and cairnd's uid)" ]
    [ "$(as_rpc "$UA" start "{\"id\": 8070450532247928831, \"userid\": $uid_a}")" = \
        "1 start: permission denied: job id 8070450532247928831 is not a user's: uid $uid_a may start jobs with ids from 8070450532247928832 up only (those below are for root and cairnd's uid)" ]
    # nothing was journaled: the id is free for the resource manager
    run cairn eventlog 7001
    [ "$status" -ne 0 ]
    run cairn run --id 7001 -- true
    [ "$status" -eq 0 ]
    [ "$(events_named 7001 accept | jq -c '[.userid, .privileged]')" = "[0,null]" ]
    # without --id, a user's cairn run picks an id of the users' range,
    # and cairnd records that a user (not a privileged client) sent it
    run --separate-stderr as "$UA" run -- true
    [ "$status" -eq 0 ]
    id=$(cairn jobs -a -n -o '{id} {username}' | awk -v u="$UA" '$2 == u {print $1}')
    [ -n "$id" ]
    [ "$id" -ge 8070450532247928832 ]
    [ "$id" -le 9223372036854775807 ]
    [ "$(events_named "$id" accept | jq -c '[.userid, .privileged]')" = "[$uid_a,false]" ]
    # a resource manager that reattaches to an id hears whose job it is
    [ "$(rpc start "{\"id\": $id, \"reattach\": true}" | head -1 | jq -c .data)" = \
        "{\"userid\":$uid_a,\"privileged\":false}" ]
    [ "$(rpc start '{"id": 7001, "reattach": true}' | head -1 | jq -c .data)" = \
        '{"userid":0,"privileged":true}' ]
    # and the list marks a user's active job
    CWD="$HA" as "$UA" run --detach --id $j1 -- sleep 60
    wait_event $j1 10 start
    [ "$(rpc list '{}' | jq -c ".jobs[] | select(.id == $j1) | .privileged")" = false ]
    as "$UA" cancel $j1
    wait_event $j1 10 clean
}

# issue 30: a job's owner could lengthen or remove its time limit, which
# the resource manager set. As in Flux and Slurm, it may only shorten it.
@test "a job's owner may shorten its time limit, not lengthen or remove it; root may" {
    uid_a=$(id -u "$UA")
    CWD="$HA" as "$UA" run --detach --id $j2 -t 1h -- sleep 300
    wait_event $j2 10 start
    limit() { cairn jobs --json $j2 | jq -r .expiration; }
    t0=$(limit)
    later=$(jq -n "$t0 + 3600")
    # the attack: the owner lengthens, or removes, the limit
    # (the limit in the message is cairnd's %.3f of it: jq's and bash's
    # roundings of the same double may differ in the last digit)
    [[ "$(as_rpc "$UA" expiration "{\"id\": $j2, \"expiration\": $later}")" == \
        "1 expiration: permission denied: uid $uid_a may only shorten job $j2's time limit (now ${t0%%.*}."???"), not lengthen it: only root and cairnd's uid 0 may" ]]
    [[ "$(as_rpc "$UA" expiration "{\"id\": $j2, \"expiration\": 0}")" == \
        "1 expiration: permission denied: uid $uid_a may only shorten job $j2's time limit (now ${t0%%.*}."???"), not remove it: only root and cairnd's uid 0 may" ]]
    # nothing changed
    [ -z "$(events_named $j2 expiration)" ]
    [ "$(limit)" = "$t0" ]
    # shortening is the owner's to do
    sooner=$(jq -n "$t0 - 1800")
    # (the answer: the limit now in force)
    as_rpc "$UA" expiration "{\"id\": $j2, \"expiration\": $sooner}" \
        | jq -e --argjson t "$sooner" '.expiration == $t'
    [ "$(events_named $j2 expiration | jq .expiration)" = "$sooner" ]
    # ... and not undone: back to the first limit is a lengthening
    [[ "$(as_rpc "$UA" expiration "{\"id\": $j2, \"expiration\": $t0}")" == \
        "1 expiration: permission denied: uid $uid_a may only shorten job $j2's time limit (now "*"), not lengthen it: only root and cairnd's uid 0 may" ]]
    # root (a resource manager) may lengthen it, and remove it
    run rpc expiration "{\"id\": $j2, \"expiration\": $later}"
    [ "$status" -eq 0 ]
    run rpc expiration "{\"id\": $j2, \"expiration\": 0}"
    [ "$status" -eq 0 ]
    # with no limit, the owner may set one (a shortening); not remove it
    soon=$(jq -n "now + 600")
    as_rpc "$UA" expiration "{\"id\": $j2, \"expiration\": $soon}" \
        | jq -e --argjson t "$soon" '.expiration == $t'
    [ "$(as_rpc "$UA" expiration "{\"id\": $j2, \"expiration\": 0}")" = \
        "1 expiration: permission denied: uid $uid_a may only shorten job $j2's time limit (now $(printf %.3f "$soon")), not remove it: only root and cairnd's uid 0 may" ]
    [ "$(events_named $j2 expiration | jq -s -c 'map(.expiration)')" = "[$sooner,$later,0,$soon]" ]
    as "$UA" cancel $j2
    wait_event $j2 10 clean
}

# issue 30: one user's 1 MiB jobspecs filled the journal, and every new
# job, root's too, was refused until a purge. Users have quotas; root's
# jobs never wait on them.
@test "a user's jobs are held to its quotas (active jobs, journal bytes, the users' share); root's are not" {
    cairnd_stop
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"journal\": {\"max-size\": \"16M\"},
        \"limits\": {\"user-max-jobs\": 2, \"user-max-journal-bytes\": \"1M\",
                   \"users-journal-share\": 0.06}}"
    uid_a=$(id -u "$UA") uid_b=$(id -u "$UB")
    # active jobs: A's third is refused, B's and root's are not
    CWD=/tmp as "$UA" run --detach -- sleep 60
    CWD=/tmp as "$UA" run --detach -- sleep 60
    run --separate-stderr as "$UA" run -- true
    echo "$stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn run: start: uid $uid_a has 2 active jobs, the most limits.user-max-jobs (2) allows" ]
    [ "$(as_rpc "$UA" start "{\"id\": $j5, \"userid\": $uid_a, \"jobspec\": {}, \"R\": {}}")" = \
        "122 start: uid $uid_a has 2 active jobs, the most limits.user-max-jobs (2) allows" ]
    CWD=/tmp run as "$UB" run -- true
    [ "$status" -eq 0 ]
    run cairn run -- true
    [ "$status" -eq 0 ]
    for id in $(cairn jobs -n -o '{id}'); do as "$UA" cancel "$id"; done
    for id in $(cairn jobs -a -n -o '{id}'); do wait_event "$id" 10 clean; done
    # journal bytes: the attack, jobspecs of 600 KB each (the environment
    # is in the jobspec); the second is over A's 1 MiB
    # (five variables: one argument may not pass 128 KiB)
    x=$(head -c 120000 /dev/zero | tr '\0' x)
    big=(--env "B1=$x" --env "B2=$x" --env "B3=$x" --env "B4=$x" --env "B5=$x")
    CWD=/tmp run as "$UA" run "${big[@]}" -- true
    [ "$status" -eq 0 ]
    CWD=/tmp run --separate-stderr as "$UA" run "${big[@]}" -- true
    echo "$stderr"
    [ "$status" -eq 1 ]
    [[ "$stderr" == "cairn run: start: uid $uid_a's jobs hold 0.6 MiB of the journal, and this one needs 6"?????" bytes more: limits.user-max-journal-bytes is 1.0 MiB (finished jobs count until purged)" ]]
    # all users together: B's is over their share, 0.06 of 16 MiB
    CWD=/tmp run --separate-stderr as "$UB" run "${big[@]}" -- true
    echo "$stderr"
    [ "$status" -eq 1 ]
    [[ "$stderr" == "cairn run: start: the users' jobs hold 0.6 MiB of the journal (with room for those still running), and their share is 1.0 MiB (limits.users-journal-share 0.06 of journal.max-size): the rest is kept for root's and cairnd's uid's jobs" ]]
    # the count survives a restart: made again from the journal
    cairnd_stop
    cairnd_launch
    CWD=/tmp run --separate-stderr as "$UA" run "${big[@]}" -- true
    [ "$status" -eq 1 ]
    [[ "$stderr" == "cairn run: start: uid $uid_a's jobs hold 0.6 MiB of the journal, and this one needs 6"?????" bytes more: limits.user-max-journal-bytes is 1.0 MiB (finished jobs count until purged)" ]]
    # root's are never refused for the users' usage
    for i in 1 2 3; do
        run cairn run "${big[@]}" -- true
        [ "$status" -eq 0 ]
    done
    # a purge (another process: cairn purge) gives A its quota back
    cairn purge --older-than 0
    CWD=/tmp run as "$UA" run "${big[@]}" -- true
    [ "$status" -eq 0 ]
}

@test "users at their quotas leave limits.max-jobs to root: the users' jobs are counted apart" {
    # issue 51: limits.max-jobs counted everyone's jobs, so users at their
    # quotas refused root's (and the resource manager's) starts
    cairnd_stop
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"limits\": {\"max-jobs\": 3, \"user-max-jobs\": 2,
                   \"users-jobs-share\": 0.67}}"
    CWD=/tmp as "$UA" run --detach -- sleep 60
    CWD=/tmp as "$UA" run --detach -- sleep 60
    # the users' part of max-jobs (0.67 of 3: 2) is full: B is refused
    CWD=/tmp run --separate-stderr as "$UB" run -- true
    echo "$stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn run: start: the users' jobs together are 2 active, the most limits.users-jobs-share (0.67 of limits.max-jobs 3) allows" ]
    # root has its 3 whatever the users hold, and is refused past them
    for i in 1 2 3; do
        run cairn run --detach -- sleep 60
        [ "$status" -eq 0 ]
    done
    run --separate-stderr cairn run -- true
    echo "$stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn run: too many active jobs of privileged clients (limit 3, limits.max-jobs; users' jobs are not counted)" ]
    [ "$(cairn jobs -n -o '{id}' | wc -l)" -eq 5 ]
    for id in $(cairn jobs -n -o '{id}'); do cairn cancel "$id"; done
    for id in $(cairn jobs -a -n -o '{id}'); do wait_event "$id" 10 clean; done
}

@test "a user's job may not wait for the resource manager's resume (hold-start, hold-on-shrink)" {
    # issue 51: a user's hold-start job waited for ever for a resume that
    # only a privileged client sends, its time limit never armed
    uid_a=$(id -u "$UA")
    for flag in hold-start hold-on-shrink; do
        js="{\"version\": 1, \"tasks\": [{\"command\": [\"true\"]}],
             \"attributes\": {\"system\": {\"cwd\": \"/tmp\",
             \"cairn\": {\"$flag\": true}}}}"
        R='{"version": 1, "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}], "nodelist": ["localhost"]}}'
        run as_rpc "$UA" start "{\"id\": $j13, \"userid\": $uid_a, \"jobspec\": $js, \"R\": $R}"
        echo "$output"
        [ "$output" = "1 start: permission denied: attributes.system.cairn.$flag is the resource manager's: uid $uid_a's job would wait for ever for a resume, which only root, cairnd's uid and a Flux instance send" ]
    done
    # nothing journaled; false is the default, and allowed
    [ -z "$(cairn jobs -a -n -o '{id}')" ]
    js='{"version": 1, "tasks": [{"command": ["true"]}], "attributes": {"system": {"cwd": "/tmp", "cairn": {"hold-start": false}}}}'
    run as_rpc "$UA" start "{\"id\": $j14, \"userid\": $uid_a, \"jobspec\": $js, \"R\": $R}"
    echo "$output"
    [ "$(jq -r .type <<<"$output")" = start ]
    wait_event $j14 10 clean
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
    CWD="$T/closed" run -127 as "$UA" run --id $j5 -- touch "$T/closed/ran"
    # (the prolog, as root, ran; the shell's exit says why it did not)
    [ "$(events_named $j5 proc-exit | jq -r 'select(.error) | .error')" = \
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
    CWD="$HA" as "$UA" run --detach --id $j6 -- sh -c 'sleep 2; id -u >'"$OUT"'/a.out'
    CWD=/tmp as "$UB" run --detach --id $j7 -- sh -c 'sleep 2; id -u >'"$OUT"'/b.out'
    wait_event $j6 10 start
    wait_event $j7 10 start
    cairnd_crash
    cairnd_launch
    wait_event $j6 20 clean
    wait_event $j7 20 clean
    [ "$(cat "$OUT/a.out")" = "$(id -u "$UA")" ]
    [ "$(cat "$OUT/b.out")" = "$(id -u "$UB")" ]
    [ "$(events_named $j6 finish | jq .status)" -eq 0 ]
    [ "$(events_named $j7 finish | jq .status)" -eq 0 ]
    run cairn verify $j6 $j7
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
s.settimeout(10)  # no answer (a job held for ever) fails the test
f.write(json.dumps({"topic": sys.argv[2], "matchtag": 1,
                    "payload": json.loads(sys.argv[3])}) + "\n"); f.flush()
r = json.loads(f.readline())
print("%s %s" % (r["errnum"], r["errstr"]) if "errnum" in r else json.dumps(r["payload"]))
PY
}

@test "B lists every user's jobs through the public socket; commands of its own only" {
    CWD="$HA" as "$UA" run --detach --id $j10 -- sh -c 'sleep 60 # secret-of-A'
    CWD=/tmp as "$UB" run --detach --id $j11 -- sleep 61
    wait_event $j10 10 start
    wait_event $j11 10 start
    run --separate-stderr as "$UB" jobs -n -d -o '{id} {username} {state} {command} [{cwd}]'
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    # A's job by its name only, as flux jobs shows it; B's in full
    [ "${lines[0]}" = "$j10 $UA run sh []" ]
    [ "${lines[1]}" = "$j11 $UB run sleep 61 [/tmp]" ]
    # the table, as root's: the same rows but for A's command
    run as "$UB" jobs -d
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "ID "*" USER "*" COMMAND" ]]
    [[ "${lines[1]}" == "$j10 "*" $UA "*" run "*" 1 (0) "*" sh" ]]
    [[ "${lines[2]}" == "$j11 "*" $UB "*" run "*" sleep 61" ]]
    [[ "$(cairn jobs -d | sed -n 2p)" == *" sh -c 'sleep 60 # secret-of-A'" ]]
    # nothing of A's command line reaches B, whatever it asks
    run as "$UB" jobs -a --json
    [ "$status" -eq 0 ]
    [[ "$output" != *secret-of-A* ]]
    # a job that is not there is named, the others are shown
    run --separate-stderr as "$UB" jobs -n -d -o '{id}' 4242 $j11
    [ "$status" -eq 1 ]
    [ "$output" = "$j11" ]
    [[ "$stderr" == "cairn jobs: no job 4242 ("*") known to cairnd at $PUB/cairn.sock" ]]
    as "$UA" cancel $j10
    as "$UB" cancel $j11
    wait_event $j10 10 clean
    wait_event $j11 10 clean
    # finished jobs with -a; B's own as root reads it in the journal
    run as "$UB" jobs -n -d -o '{id}'
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    run as "$UB" jobs -a -n -d -o '{id} {state} {result} {returncode}'
    [ "$output" = "$j10 done canceled 143
$j11 done canceled 143" ]
    run as "$UB" jobs --state done -n -d -o '{id}'
    [ "$output" = "$j10
$j11" ]
    [ "$(as "$UB" jobs --json $j11)" = "$(cairn jobs --json $j11)" ]
    [ "$(as "$UB" jobs --json $j10 | jq -c '[.command, .cwd]')" = '["sh",""]' ]
    [ "$(as "$UA" jobs --json $j10)" = "$(cairn jobs --json $j10)" ]
}

@test "B reads its own job with show and eventlog through the socket; A's job and output are refused" {
    CWD="$HA" as "$UA" run --detach --id $j12 -- sh -c 'echo secret-of-A; sleep 60'
    CWD=/tmp run -3 as "$UB" run --id $j13 -- sh -c 'echo hello-from-B; exit 3'
    wait_event $j12 10 start
    # B's own job: what root reads in the journal, byte for byte
    for c in "show $j13" "show --json $j13" "eventlog $j13" "eventlog --json $j13" \
             "ranks $j13" "ranks --json $j13"; do
        [ "$(as "$UB" $c)" = "$(cairn $c)" ] || { echo "differs: $c"; false; }
    done
    run as "$UB" eventlog $j13
    [[ "$output" == *"        | hello-from-B"* ]]
    run as "$UB" show $j13
    [[ "$output" == *"exit code   3 (exit 3)"* ]]
    # A's job: EPERM, with why, and nothing of it
    n=$(cairn eventlog --json $j12 | wc -l)
    uid_a=$(id -u "$UA")
    for c in show eventlog ranks; do
        run --separate-stderr as "$UB" $c $j12
        [ "$status" -eq 1 ]
        [ "$stderr" = "cairn $c: job-events: permission denied: job $j12 belongs to uid $uid_a" ]
        [ -z "$output" ]
    done
    [ "$(as_rpc "$UB" job-events "{\"id\": $j12}")" = \
        "1 job-events: permission denied: job $j12 belongs to uid $uid_a" ]
    [ "$(as_rpc "$UB" job-events "{\"id\": $j12, \"from\": 3}")" = \
        "1 job-events: permission denied: job $j12 belongs to uid $uid_a" ]
    # and nothing changed: A's job runs on, its events as they were
    [ "$(cairn eventlog --json $j12 | wc -l)" -eq "$n" ]
    [ "$(cairn jobs -n -d -o '{id} {state}' $j12)" = "$j12 run" ]
    # its output, once journaled, is A's (and root's) alone
    as "$UA" cancel $j12
    wait_event $j12 10 clean
    [[ "$(cairn eventlog $j12)" == *"| secret-of-A"* ]]
    [[ "$(as "$UA" eventlog $j12)" == *"| secret-of-A"* ]]
    run --separate-stderr as "$UB" eventlog --json $j12
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn eventlog: job-events: permission denied: job $j12 belongs to uid $uid_a" ]
    [[ "$output" != *secret-of-A* ]]
    [[ "$(as_rpc "$UB" job-events "{\"id\": $j12}")" != *secret-of-A* ]]
    # a job nobody has: ENOENT, as for root
    run --separate-stderr as "$UB" show 4242
    [ "$status" -eq 1 ]
    [[ "$stderr" == "cairn show: no job 4242 ("*") known to cairnd at $PUB/cairn.sock" ]]
}

@test "with the defaults, a user's cairn finds the system cairnd's public socket" {
    unshare -m true 2>/dev/null || skip "no mount namespaces here"
    [ ! -e /run/cairn.sock ] || skip "a cairnd's public socket is at /run/cairn.sock"
    # no state dir of B's own (HOME has none): /run/cairn.sock
    run --separate-stderr as_default "$UB" run --id $j14 -- id -un
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    [ "$output" = "$UB" ]
    run as_default "$UB" jobs -a -n -d -o '{id} {username} {result}'
    [ "$output" = "$j14 $UB completed" ]
    # root's state dir, closed to B (0700): the same socket
    run --separate-stderr as_default "$UB" --statedir "$STATEDIR" show $j14
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "user        $UB ($(id -u "$UB"))" ]
    run as_default "$UB" --statedir "$STATEDIR" eventlog $j14
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
    [ "$output" = "$j14" ]
}

# The supervisor starts a command with vfork, which held its thread until
# the command's exec; after the drop to the user, the user may stop that
# process (SIGSTOP) before its exec, and every later start on the node
# then waited behind it, root's included (answers go out in order). The
# drop, chdir and exec now run after an exec of cairn-shim --drop
# (shim/drop.c): only the user's own job waits.
# CAIRN_TEST_STOP_AT_DROP=1 in the job's environment makes its process
# stop itself right after the drop, as its user could.
@test "a user's command stopped between its drop and its exec holds up no other start" {
    (cd / && runuser -u "$UA" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        CAIRN_TEST_STOP_AT_DROP=1 "$B/cairn" run -- sh -c 'echo a-ran') \
        >"$T/a.out" 2>&1 3>&- &
    apid=$!
    stopped=
    for _ in $(seq 1 200); do
        stopped=$(ps -o pid=,stat= -u "$UA" | awk '$2 ~ /^T/ {print $1}' | head -1)
        [ -n "$stopped" ] && break
        sleep 0.05
    done
    [ -n "$stopped" ]
    # root's jobs and B's start and end while A's process is stopped
    for i in 1 2 3 4 5 6 7 8 9; do
        run timeout 10 "$B/cairn" --statedir "$STATEDIR" run -- true
        [ "$status" -eq 0 ]
    done
    CWD=/ run timeout 10 runuser -u "$UB" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" run -- true
    [ "$status" -eq 0 ]
    # A's own job goes on once A lets its process go
    kill -CONT "$stopped"
    wait "$apid"
    grep -qx a-ran "$T/a.out"
}
