#!/usr/bin/env bats
# No local user can take over, stall or starve another user's jobs (issue
# 30): a job's environment and PATH are its own, each command its own
# session, no directory cairnd uses can be another user's, a client talks
# only to a cairnd it trusts, and one user cannot hold every connection.
# Two throwaway users, made here and removed after; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    R=$(realpath "$T") # what cairnd names: the real path
    U0=8070450532247928832 # the users' job ids start here (jobid.h)
    UA=cia$$ UB=cib$$
    HA=$(mktemp -d /tmp/cairn-home.XXXXXX)
    useradd -M -d "$HA" -s /bin/sh "$UA"
    useradd -M -s /bin/sh "$UB"
    chown "$UA" "$HA"
    public_dir
    PROLOG=$(script prolog <<EOF
#!/bin/sh
echo "prolog \$(id -u) \${CAIRND_SECRET:-none} \$\$ \$(cut -d' ' -f6 /proc/\$\$/stat) \$CAIRN_JOB_ID \$(tr '\\0' '\\n' </proc/\$\$/environ | grep -c '^CAIRN_JOB_ID=') \${CAIRN_BENCH_X:-none}" >>"$PUB/runlog"
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
    rm -rf "/dev/shm/cairn-$(id -u "$UA" 2>/dev/null)"
    userdel "$UA" 2>/dev/null; userdel "$UB" 2>/dev/null
    rm -rf "$HA" "$PUB"
    assert_no_leftover
}

# as USER CMD...: a cairn command as USER through the public socket
as() {
    local u=$1; shift
    (cd "${CWD:-/}" && runuser -u "$u" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" "$@")
}

# as_env USER [NAME=VALUE...] CMD...: CMD as USER with exactly the
# variables given (and CAIRN_SOCKET)
as_env() {
    local u=$1; shift
    (cd "${CWD:-/}" && runuser -u "$u" -- env -i \
        CAIRN_SOCKET="$PUB/cairn.sock" "$@")
}

# ---- 1. a job's environment and PATH ----

@test "a job's environment is its jobspec's and cairn's, never cairnd's" {
    cairnd_stop
    CAIRND_SECRET=root-only CAIRN_JOB_ID=stale CAIRN_BENCH_X=private \
        cairnd_launch
    CWD="$HA" run --separate-stderr as_env "$UA" PATH=/usr/bin:/bin A=1 \
        "$B/cairn" run --id $((U0 + 1)) -- env
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    # what cairn run sent (the caller's), cairn's own, the login variables
    [ "$(printf '%s\n' "${lines[@]}" | cut -d= -f1 | LC_ALL=C sort \
        | paste -sd' ')" = "A CAIRN_EXECID CAIRN_JOB_ID CAIRN_JOB_RANKS CAIRN_JOB_USERID CAIRN_PHASE CAIRN_RANK CAIRN_RANKS CAIRN_SOCKET FLUX_JOB_ID FLUX_JOB_RANKS FLUX_JOB_USERID HOME LOGNAME PATH SHELL USER" ]
    [[ "$output" == *"PATH=/usr/bin:/bin"* ]]
    [[ "$output" == *"HOME=$HA"* ]]
    [[ "$output" != *root-only* ]]
    # the prolog, root's site script, keeps cairnd's environment
    # (its job's own variables over cairnd's, once; cairnd's private
    # ones not at all)
    local line
    line=$(cat "$PUB/runlog")
    [[ "$line" == "prolog 0 root-only "* ]]
    [ "$(echo "$line" | cut -d' ' -f6-)" = "$((U0 + 1)) 1 none" ]
    # a caller with no PATH: none is made up for its job (env itself is
    # found in /usr/bin:/bin)
    run --separate-stderr as_env "$UA" "$B/cairn" run --id $((U0 + 2)) -- env
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "${lines[@]}" | cut -d= -f1 | LC_ALL=C sort \
        | paste -sd' ')" = "CAIRN_EXECID CAIRN_JOB_ID CAIRN_JOB_RANKS CAIRN_JOB_USERID CAIRN_PHASE CAIRN_RANK CAIRN_RANKS CAIRN_SOCKET FLUX_JOB_ID FLUX_JOB_RANKS FLUX_JOB_USERID HOME LOGNAME SHELL USER" ]
}

@test "a job's command is looked up in its own PATH, as its user, not in cairnd's" {
    cairnd_stop
    mkdir -m 755 "$T/rootbin"
    printf '#!/bin/sh\necho root-tool\n' >"$T/rootbin/roottool"
    chmod 755 "$T/rootbin/roottool"
    PATH="$T/rootbin:$PATH" cairnd_launch
    mkdir "$HA/bin" "$HA/closed"
    printf '#!/bin/sh\necho "mytool as $(id -u)"\n' >"$HA/bin/mytool"
    cp "$HA/bin/mytool" "$HA/closed/hidden"
    chmod 755 "$HA/bin/mytool" "$HA/closed/hidden"
    chown -R "$UA" "$HA/bin"
    chmod 700 "$HA/closed" # root's: A may not search it
    # A's own directory in A's PATH
    CWD="$HA" run --separate-stderr as_env "$UA" PATH="$HA/bin:/usr/bin:/bin" \
        "$B/cairn" run --id $((U0 + 3)) -- mytool
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    [ "$output" = "mytool as $(id -u "$UA")" ]
    # cairnd's PATH is not the job's
    run -127 --separate-stderr as_env "$UA" PATH=/usr/bin:/bin \
        "$B/cairn" run --id $((U0 + 4)) -- roottool
    echo "$output$stderr"
    [[ "$stderr" == *"cairn run: shell on rank 0: execvp roottool: No such file or directory"* ]]
    [[ "$output" != *root-tool* ]]
    # looked up as A: a directory only root may search is closed to it
    run -127 --separate-stderr as_env "$UA" PATH="$HA/closed:/usr/bin:/bin" \
        "$B/cairn" run --id $((U0 + 5)) -- hidden
    [[ "$stderr" == *"cairn run: shell on rank 0: execvp hidden: Permission denied"* ]]
    # no PATH at all: found in /usr/bin:/bin
    run --separate-stderr as_env "$UA" "$B/cairn" run --id $((U0 + 6)) -- printf ok
    [ "$status" -eq 0 ]
    [ "$output" = ok ]
}

# ---- 2. a session of its own ----

@test "each command leads its own session and group; a cancel still kills its group" {
    CWD="$HA" run --separate-stderr as "$UA" run --id $((U0 + 7)) -- \
        sh -c 'echo $$; cut -d" " -f5,6 /proc/$$/stat'
    echo "$output$stderr"
    [ "$status" -eq 0 ]
    # process group and session: its own, not the supervisor's
    [ "${lines[1]}" = "${lines[0]} ${lines[0]}" ]
    # so does the prolog's
    read -r _ _ _ pid sid _ <"$PUB/runlog"
    [ "$pid" = "$sid" ]
    # what the command starts in its group dies with a cancel
    CWD="$HA" as "$UA" run --detach --id $((U0 + 8)) -- \
        sh -c 'sleep 300 & sleep 301 & wait'
    wait_event $((U0 + 8)) 10 start
    as "$UA" cancel $((U0 + 8))
    wait_event $((U0 + 8)) 10 clean
    # (killed at once; reaped a moment later by whoever inherited them)
    for i in $(seq 1 100); do
        pgrep -u "$UA" sleep >/dev/null || break
        sleep 0.05
    done
    ps -o pid,stat,pgid,sid,ppid,args -u "$UA" || true
    run pgrep -u "$UA" sleep
    [ "$status" -ne 0 ]
}

# ---- 3. directories another user could change ----

@test "a /dev/shm/cairn-0 another user made first does not keep root's cairnd from starting" {
    [ "$(stat -c %u:%a /run)" = 0:755 ] || skip "/run is not root's 0755 here"
    [ "$(stat -f -c %T /run)" != tmpfs ] || skip "/run is a tmpfs: the default is /run/cairn"
    command -v unshare >/dev/null || skip "no unshare here"
    cairnd_stop
    # in a mount namespace of its own, on a /dev/shm of its own, so that
    # the squat touches no other cairnd of this host
    STATEDIR=$T/s3
    unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm &&
        runuser -u "$0" -- mkdir -m 700 /dev/shm/cairn-0 && exec "$@"' "$UA" \
        env CAIRN_TEST_TAG="$BATS_TEST_TMPDIR" "$B/cairnd" -c "$CAIRN_CONF" \
        --statedir "$STATEDIR" 2>>"$T/cairnd.log" &
    CAIRND_PID=$!
    for i in $(seq 1 200); do
        "$B/cairn" --statedir "$STATEDIR" list >/dev/null 2>&1 && break
        kill -0 "$CAIRND_PID" 2>/dev/null || break
        sleep 0.05
    done
    cat "$T/cairnd.log"
    [[ "$(readlink "$STATEDIR/exits")" == /run/cairn/* ]]
    [ "$(stat -c %u:%a /run/cairn)" = 0:700 ]
    grep -q "/dev/shm/cairn-0 is not root's own (uid $(id -u "$UA"), mode 0700): the run dir is /run/cairn instead, on a disk" "$T/cairnd.log"
    CWD="$HA" run as "$UA" run --id $((U0 + 9)) -- true
    [ "$status" -eq 0 ]
}

@test "a state dir, run dir or public socket in a directory another user can change is refused, naming it" {
    cairnd_stop
    mkdir -m 755 "$T/ua" "$T/ok"
    chown "$UA" "$T/ua"
    mkdir "$T/open" "$T/sticky"
    chmod 777 "$T/open"
    chmod 1777 "$T/sticky"
    echo '{}' >"$T/plain.conf"
    ua=$(id -u "$UA")
    run -1 timeout 10 "$B/cairnd" -c "$T/plain.conf" --statedir "$T/ua/state"
    [[ "$output" == *"state dir $T/ua/state: $R/ua: owned by uid $ua, expected root"* ]]
    [ ! -e "$T/ua/state" ]
    printf '{"run-dir": "%s"}\n' "$T/ua/rd" >"$T/c.conf"
    run -1 timeout 10 "$B/cairnd" -c "$T/c.conf" --statedir "$T/s1"
    [[ "$output" == *"run-dir: $R/ua: owned by uid $ua, expected root"* ]]
    [ ! -e "$T/ua/rd" ]
    printf '{"run-dir": "%s"}\n' "$T/open/rd" >"$T/c.conf"
    run -1 timeout 10 "$B/cairnd" -c "$T/c.conf" --statedir "$T/s1"
    [[ "$output" == *"run-dir: $R/open: mode 0777: writable by others without the sticky bit"* ]]
    [ ! -e "$T/open/rd" ]
    printf '{"public-socket": "%s"}\n' "$T/ua/cairn.sock" >"$T/c.conf"
    run -1 timeout 10 "$B/cairnd" -c "$T/c.conf" --statedir "$T/s1"
    [[ "$output" == *"public-socket: $R/ua: owned by uid $ua, expected root"* ]]
    [ ! -e "$T/ua/cairn.sock" ]
    # a sticky directory (/tmp) is fine: no one can rename what is ours
    STATEDIR=$T/s2 cairnd_start "{\"public-socket\": \"$T/sticky/cairn.sock\",
        \"run-dir\": \"$T/sticky/rd\"}"
    [ -S "$T/sticky/cairn.sock" ]
}

@test "a run dir another user made first is refused, naming its owner" {
    ua=$(id -u "$UA") ub=$(id -u "$UB")
    [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "no tmpfs /dev/shm"
    runuser -u "$UB" -- mkdir -m 700 "/dev/shm/cairn-$ua"
    echo '{}' >"$HA/plain.conf"
    chmod 644 "$HA/plain.conf"
    run -1 runuser -u "$UA" -- env -i PATH=/usr/bin:/bin HOME="$HA" \
        timeout 10 "$B/cairnd" -c "$HA/plain.conf" --statedir "$HA/state"
    echo "$output"
    [[ "$output" == *"run-dir: /dev/shm/cairn-$ua: owned by uid $ub, not $ua"* ]]
}

@test "cairn refuses a socket that another user serves, and sends it nothing" {
    FAKE=$HA/fake # A's: reachable by B
    mkdir -m 755 "$FAKE"
    chown "$UA" "$FAKE"
    chmod 755 "$HA"
    # A's stand-in for cairnd: it records what it is sent
    runuser -u "$UA" -- python3 - "$FAKE/cairn.sock" "$FAKE/got" <<'PY' &
import os, socket, sys
os.umask(0)
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
s.settimeout(5)
got = b""
try:
    while True:
        c, _ = s.accept(); c.settimeout(5)
        while True:
            b = c.recv(4096)
            if not b:
                break
            got += b
            c.sendall(b'{"matchtag":1,"payload":{"jobs":[]}}\n')
except OSError:
    pass
open(sys.argv[2], "wb").write(got)
PY
    fake=$!
    for i in $(seq 1 100); do [ -S "$FAKE/cairn.sock" ] && break; sleep 0.05; done
    run --separate-stderr as_env "$UB" CAIRN_SOCKET="$FAKE/cairn.sock" \
        "$B/cairn" list
    echo "$output$stderr"
    [ "$status" -eq 1 ]
    [ "$stderr" = "cairn list: cannot connect to cairnd: $FAKE/cairn.sock is served by uid $(id -u "$UA"), not by root or uid $(id -u "$UB"): refusing to talk to it" ]
    # so do the views (cairn jobs, show, eventlog) that read no journal
    run --separate-stderr as_env "$UB" CAIRN_SOCKET="$FAKE/cairn.sock" \
        "$B/cairn" jobs
    echo "$stderr"
    [ "$status" -ne 0 ]
    [[ "$stderr" == "cairn jobs: cannot read the journal of "*" nor connect to cairnd: $FAKE/cairn.sock is served by uid $(id -u "$UA"), not by root or uid $(id -u "$UB"): refusing to talk to it" ]]
    # root's cairn the same
    run -1 env CAIRN_SOCKET="$FAKE/cairn.sock" "$B/cairn" list
    [[ "$output" == *"is served by uid $(id -u "$UA"), not by root: refusing to talk to it" ]]
    wait "$fake"
    [ -e "$FAKE/got" ]
    [ ! -s "$FAKE/got" ]
    # and cairnd's public socket, served by root, is fine for B
    run as "$UB" list
    [ "$status" -eq 0 ]
}

# ---- 4. connections per user ----

@test "one user cannot hold every connection: the next gets EAGAIN, others and root still get in" {
    cairnd_stop
    printf '{"public-socket": "%s", "limits": {"max-user-connections": 2}}\n' \
        "$PUB/cairn.sock" >"$CAIRN_CONF"
    cairnd_launch
    # A holds two connections, is refused a third, and keeps the two
    # until told to let go
    runuser -u "$UA" -- python3 - "$PUB/cairn.sock" "$HA/held" "$HA/release" \
        >"$T/a.out" 2>&1 <<'PY' &
import json, os, socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); return s
held = []
for i in range(2):
    s = conn(); f = s.makefile("rw"); held.append((s, f))
    f.write('{"topic":"list","matchtag":1}\n'); f.flush()
    print("held", "payload" in json.loads(f.readline()))
s = conn(); f = s.makefile("r")
r = json.loads(f.readline())
print(r["matchtag"], r["errnum"], r["errstr"])
print("closed", f.readline() == "")
sys.stdout.flush()
open(sys.argv[2], "w").close()
for i in range(300):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
PY
    a=$!
    for i in $(seq 1 200); do [ -e "$HA/held" ] && break; sleep 0.05; done
    [ -e "$HA/held" ]
    # B, and root, still get in while A holds its two
    run as "$UB" list
    [ "$status" -eq 0 ]
    run cairn list
    [ "$status" -eq 0 ]
    touch "$HA/release"
    wait "$a"
    cat "$T/a.out"
    [ "$(cat "$T/a.out")" = "held True
held True
0 11 too many connections of uid $(id -u "$UA") (limit 2 per user)
closed True" ]
    # once A let go, A gets in again
    run as "$UA" list
    [ "$status" -eq 0 ]
}
