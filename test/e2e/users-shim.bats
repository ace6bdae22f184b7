#!/usr/bin/env bats
# What a user's command gets from the supervisor, and what nobody else can
# see of it (issue 51): its environment and directory in no command line,
# a directory of its own when the job names none, no limit of cairnd's.
# Two throwaway users, made here and removed after; the tests need root.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    T=$BATS_TEST_TMPDIR
    U0=8070450532247928832 # the users' job ids start here (jobid.h)
    UA=csa$$ UB=csb$$
    HA=$(mktemp -d /tmp/cairn-home.XXXXXX)
    useradd -M -d "$HA" -s /bin/sh "$UA"
    useradd -M -s /bin/sh "$UB"
    chown "$UA" "$HA"
    public_dir
    chmod 755 "$T"
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\"}"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    cairnd_stop
    pkill -KILL -u "$UA" 2>/dev/null; pkill -KILL -u "$UB" 2>/dev/null
    userdel "$UA" 2>/dev/null; userdel "$UB" 2>/dev/null
    rm -rf "$HA" "$PUB"
    assert_no_leftover
}

# The pid of USER's process that stopped itself (state T), waited for.
stopped_of() {
    local i p
    for i in $(seq 1 200); do
        p=$(ps -o pid=,stat= -u "$1" | awk '$2 ~ /^T/ {print $1}' | head -1)
        [ -n "$p" ] && echo "$p" && return 0
        sleep 0.05
    done
    echo "no stopped process of $1" >&2
    return 1
}

# ---- 1. a job's environment and cwd in no command line ----

# cairn-shim --drop carried the job's environment and cwd in its argv, and
# /proc/PID/cmdline is world-readable: any user read a job's secrets while
# its process went from the drop to its exec (12 of 20 tries). Now they
# ride in its environment, which only root reads there. The hook
# CAIRN_TEST_STOP_AT_DROP=1 holds the process in that window.
@test "another user reads neither a job's environment nor its cwd from the drop's command line" {
    local dir="$HA/cwd-sec$$" secret="s3cr3t-$$" pid
    mkdir "$dir"
    chown "$UA" "$dir"
    (cd "$dir" && runuser -u "$UA" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        SECRET="$secret" CAIRN_TEST_STOP_AT_DROP=1 \
        "$B/cairn" run --id $((U0 + 1)) -- sh -c 'echo "$SECRET"; pwd') \
        >"$T/a.out" 2>"$T/a.err" 3>&- &
    local apid=$!
    pid=$(stopped_of "$UA")
    runuser -u "$UB" -- cat "/proc/$pid/cmdline" >"$T/cmdline"
    local cmdline
    cmdline=$(tr '\0' ' ' <"$T/cmdline")
    echo "cmdline: $cmdline"
    [[ "$cmdline" == *" --drop "* ]] # the window: the drop, not the command
    [[ "$cmdline" != *"$secret"* ]]
    [[ "$cmdline" != *"cwd-sec$$"* ]]
    # its environment is root's to read alone until the exec
    run runuser -u "$UB" -- cat "/proc/$pid/environ"
    [ "$status" -ne 0 ]
    [[ "$output" == *"Permission denied"* ]]
    run runuser -u "$UA" -- cat "/proc/$pid/environ"
    [ "$status" -ne 0 ]
    [[ "$output" == *"Permission denied"* ]]
    # and the job still gets both
    kill -CONT "$pid"
    wait "$apid"
    [ "$(cat "$T/a.out")" = "$secret
$dir" ]
}

# ---- 2. a job without a cwd ----

# start_nocwd USER ID COMMAND-JSON: USER starts job ID through the public
# socket with a jobspec that names no cwd (cairn run always sends one)
start_nocwd() {
    # (built as text: jq would round a user's job id to a double)
    RPC_USER=$1 RPC_SOCKET=$PUB/cairn.sock rpc start "{\"id\": $2,
        \"userid\": $(id -u "$1"), \"jobspec\": {\"version\": 1,
        \"tasks\": [{\"command\": $3}], \"attributes\": {\"system\": {}}},
        \"R\": {\"version\": 1, \"execution\": {\"R_lite\": [{\"rank\": \"0\",
        \"children\": {\"core\": \"0\"}}], \"nodelist\": [\"localhost\"]}}}"
}

# A job whose jobspec named no cwd started wherever cairnd happened to be
# started: its user's shell in a directory of root's choosing, one the
# user may not even be allowed to enter.
@test "a job with no cwd starts in its user's home, or in / if its user cannot enter it; a prolog in /; never where cairnd runs" {
    cairnd_stop
    local dcwd="$T/cairnd-cwd"
    mkdir -m 700 "$dcwd" # root's: no user may enter it
    PROLOG=$(script prolog <<EOF2
#!/bin/sh
pwd >"$T/prolog.pwd"
EOF2
    )
    printf '%s\n' "{\"public-socket\": \"$PUB/cairn.sock\",
        \"prolog\": {\"command\": [\"$PROLOG\"]}}" >"$CAIRN_CONF"
    cd "$dcwd"
    cairnd_launch
    cd /
    # A's home
    run start_nocwd "$UA" $((U0 + 2)) '["pwd"]'
    [ "$status" -eq 0 ]
    wait_event $((U0 + 2)) 10 clean
    run --separate-stderr cairn attach $((U0 + 2))
    [ "$output" = "$HA" ]
    [ "$(cat "$T/prolog.pwd")" = / ]
    # B's home is not there (useradd -M): / then, and B's stderr says so
    run start_nocwd "$UB" $((U0 + 3)) '["pwd"]'
    [ "$status" -eq 0 ]
    wait_event $((U0 + 3)) 10 clean
    run --separate-stderr cairn attach $((U0 + 3))
    [ "$output" = / ]
    local hb
    hb=$(getent passwd "$UB" | cut -d: -f6)
    [[ "$stderr" == *"cairn-shim: chdir $hb: No such file or directory: starting in /"* ]]
    # root's own job: root's home
    run start_nocwd root 3 '["pwd"]'
    [ "$status" -eq 0 ]
    wait_event 3 10 clean
    run --separate-stderr cairn attach 3
    [ "$output" = "$(getent passwd root | cut -d: -f6)" ]
}

# ---- 3. resource limits ----

# A root cairnd may run with RLIMIT_NPROC unlimited and RLIMIT_NOFILE
# raised (its unit's LimitNOFILE): every user's command got them, so a
# user's fork storm met no limit of its own. Now a user's command gets
# what a login gets (or cairn.conf's rlimit-nofile and rlimit-nproc), and
# root's lowered them while still root, so the user cannot raise them
# back. (Tests cannot raise a hard limit here, no CAP_SYS_RESOURCE: cairnd
# runs with its soft limits raised to the hard ones instead.)
@test "a user's command gets the site's rlimits, not the raised ones root's cairnd runs with" {
    cairnd_stop
    ulimit -Sn "$(ulimit -Hn)"
    ulimit -Su "$(ulimit -Hu)"
    local hn hu
    hn=$(ulimit -Hn)
    hu=$(ulimit -Hu)
    [ "$hn" = unlimited ] || [ "$hn" -gt 4096 ] || skip "hard RLIMIT_NOFILE $hn"
    cairnd_launch
    local limits='echo $(ulimit -Sn) $(ulimit -Hn) $(ulimit -Su) $(ulimit -Hu)'
    local half=$(($(cat /proc/sys/kernel/threads-max) / 2))
    [ "$hu" = unlimited ] || [ "$hu" -ge "$half" ] || half=$hu
    [ "$hn" = unlimited ] || [ "$hn" -le 524288 ] || hn=524288
    run --separate-stderr runuser -u "$UA" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" run --cwd / -- bash -c "$limits"
    [ "$status" -eq 0 ]
    [ "$output" = "1024 $hn $half $half" ]
    # nor can it raise them back
    run --separate-stderr runuser -u "$UA" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" run --cwd / -- bash -c "ulimit -Hn $((hn + 1))"
    [ "$status" -ne 0 ]
    [[ "$output$stderr" == *"Operation not permitted"* ]]
    # root's own commands keep cairnd's
    run --separate-stderr cairn run -- bash -c "$limits"
    [ "$output" = "$(ulimit -Hn) $(ulimit -Hn) $hu $hu" ]
    # the site's, from cairn.conf
    cairnd_stop
    printf '%s\n' "{\"public-socket\": \"$PUB/cairn.sock\",
        \"rlimit-nofile\": 4096, \"rlimit-nproc\": 500}" >"$CAIRN_CONF"
    cairnd_launch
    run --separate-stderr runuser -u "$UA" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" run --cwd / -- bash -c "$limits"
    [ "$status" -eq 0 ]
    [ "$output" = "4096 4096 500 500" ]
}

# ---- 4. a lost command's leftovers ----

# When a command's supervisor is lost, cairnd kills what still carries
# its execid; it looked only at processes of its own uid, so what a
# user's job left in a session of its own ran on after the job.
@test "a user's job lost with its supervisor: what it left in a session of its own is killed too" {
    local id=$((U0 + 4)) cmd left
    (cd / && runuser -u "$UA" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        "$B/cairn" run --id $id -- sh -c \
        "setsid sleep 300 & echo \$! >$HA/left; echo \$\$ >$HA/cmd; sleep 300") \
        >/dev/null 2>&1 3>&- &
    wait_event $id 10 proc-spawn
    for _ in $(seq 1 100); do
        [ -s "$HA/left" ] && [ -s "$HA/cmd" ] && break
        sleep 0.05
    done
    left=$(cat "$HA/left")
    cmd=$(cat "$HA/cmd")
    [ "$cmd" = "$(shim_pid $id shell 0)" ]
    [ "$(stat -c %U "/proc/$left")" = "$UA" ]
    cairnd_crash
    lose_proc "$cmd"
    cairnd_launch
    wait_event $id 10 clean
    [[ "$(events_named $id proc-lost | jq -r .note)" == *"left no exit status"* ]]
    wait_dead "$left"
}
