#!/usr/bin/env bats
# The run dir (exitdir.h, cairn.conf(5) run-dir): where the shims' files
# live, and the at-most-once rule across a reboot.
load lib

teardown() { cairnd_stop; }

@test "by default the exit dir is a private directory on a tmpfs, linked from the state dir" {
    cairnd_start '{}'
    # a brand-new state dir has nothing to lose: no line says so (issue 34)
    run grep -c 'not sealed under this boot' "$BATS_TEST_TMPDIR/cairnd.log"
    [ "$output" = 0 ]
    [ -L "$STATEDIR/exits" ]
    target=$(readlink -f "$STATEDIR/exits")
    [ "$(stat -f -c %T "$target")" = tmpfs ]
    [ "$(stat -c %a "$target")" = 700 ]
    [ "$(cat "$target/statedir")" = "$STATEDIR" ]
    [ "$(cat "$target/boot")" = "$(cat /proc/sys/kernel/random/boot_id)" ]
    # the command's files are made there, and removed once its end is
    # journaled: by the janitor thread, soon after, not before the reply
    cairn run --id 1 -- sh -c 'ls "$0" >"$1"' "$target" "$BATS_TEST_TMPDIR/seen" >/dev/null
    grep -q '\.started$' "$BATS_TEST_TMPDIR/seen"
    for _ in $(seq 1 100); do
        [ -z "$(ls "$target" | grep -E '^[0-9a-f-]{36}')" ] && break
        sleep 0.05
    done
    [ -z "$(ls "$target" | grep -E '^[0-9a-f-]{36}')" ]
}

@test "run-dir statedir: a plain directory in the state dir" {
    cairnd_start '{"run-dir": "statedir"}'
    [ -d "$STATEDIR/exits" ]
    [ ! -L "$STATEDIR/exits" ]
    run cairn run -- echo on-disk
    [ "$status" -eq 0 ]
    [[ "$output" == *on-disk* ]]
}

@test "a run dir writable by others, or a relative one, is refused, naming it" {
    mkdir -m 0777 "$BATS_TEST_TMPDIR/open"
    chmod 0777 "$BATS_TEST_TMPDIR/open"
    STATEDIR=$BATS_TEST_TMPDIR/state
    printf '{"run-dir": "%s"}\n' "$BATS_TEST_TMPDIR/open" >"$BATS_TEST_TMPDIR/c.conf"
    run "$B/cairnd" -c "$BATS_TEST_TMPDIR/c.conf" --statedir "$STATEDIR"
    [ "$status" -ne 0 ]
    [[ "$output" == *"run-dir: $BATS_TEST_TMPDIR/open: mode 0777: writable by others"* ]]
    printf '{"run-dir": "run/cairn"}\n' >"$BATS_TEST_TMPDIR/c.conf"
    run "$B/cairnd" -c "$BATS_TEST_TMPDIR/c.conf" --statedir "$STATEDIR"
    [ "$status" -ne 0 ]
    [[ "$output" == *'run-dir: must be an absolute path or "statedir"'* ]]
}

@test "switching run-dir keeps the old dir while a process's files are in it" {
    cairnd_start '{"run-dir": "statedir"}'
    T=$BATS_TEST_TMPDIR
    cairn run --id 5 -- sh -c "while [ ! -e $T/go ]; do sleep 0.05; done" 3>&- &
    wait_event 5 5 proc-spawn
    cairnd_stop
    printf '{"run-dir": "%s/rd"}\n' "$T" >"$CAIRN_CONF"
    cairnd_launch
    [ -d "$STATEDIR/exits" ]
    [ ! -L "$STATEDIR/exits" ]
    grep -q "still holds the files of running processes" "$T/cairnd.log"
    touch "$T/go"
    wait_event 5 10 clean
    [ "$(events_named 5 finish | jq .status)" -eq 0 ]
    cairnd_stop
    cairnd_launch   # now empty: the new place is taken
    [ "$(readlink "$STATEDIR/exits")" = "$T/rd/$(ls "$T/rd")" ]
    run cairn run -- true
    [ "$status" -eq 0 ]
}

# A start cut short by cairnd's death, then a reboot: the marker that would
# have said "it ran" is gone with the tmpfs, so the start is never retried.
@test "after a reboot an intent with no exit status is lost, never started again" {
    local hold=$BATS_TEST_TMPDIR/hold held
    echo 00000000-0000-4000-8000-000000000001 >"$BATS_TEST_TMPDIR/bootid"
    export CAIRN_BOOTID_FILE=$BATS_TEST_TMPDIR/bootid
    touch "$hold"
    CAIRN_TEST_SPAWN_HOLD=$hold cairnd_start '{}'
    cairn run --id 9 -- sh -c "echo ran >>$BATS_TEST_TMPDIR/runlog" 3>&- &
    for _ in $(seq 1 200); do [ -s "$hold.held" ] && break; sleep 0.05; done
    held=$(cat "$hold.held")
    cairnd_crash
    rm "$hold"
    for _ in $(seq 1 100); do kill -0 $held 2>/dev/null || break; sleep 0.05; done
    # the reboot: another boot id, and the tmpfs's files gone
    echo 00000000-0000-4000-8000-000000000002 >"$BATS_TEST_TMPDIR/bootid"
    rm -f "$(readlink -f "$STATEDIR/exits")"/*
    cairnd_launch
    wait_event 9 10 clean
    note=$(events_named 9 proc-lost | jq -r .note)
    [[ "$note" == *"rebooted"* || "$note" == *"start marker cannot be told"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/runlog" ]
    [ "$(events_named 9 proc-intent | wc -l)" -eq 1 ]
    # ... and where a job was active, the log says why it was not started
    grep -q 'not sealed under this boot: a process with no start marker' \
        "$BATS_TEST_TMPDIR/cairnd.log"
    unset CAIRN_BOOTID_FILE
}

@test "the same cut-short start within one boot runs exactly once" {
    local hold=$BATS_TEST_TMPDIR/hold held
    touch "$hold"
    CAIRN_TEST_SPAWN_HOLD=$hold cairnd_start '{}'
    cairn run --id 10 -- sh -c "echo ran >>$BATS_TEST_TMPDIR/runlog" 3>&- &
    for _ in $(seq 1 200); do [ -s "$hold.held" ] && break; sleep 0.05; done
    cairnd_crash
    rm "$hold"
    cairnd_launch
    wait_event 10 10 clean
    [ "$(events_named 10 finish | jq .status)" -eq 0 ]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/runlog")" -eq 1 ]
}

@test "instance dirs of state dirs that are gone are removed at start" {
    cairnd_start '{}'
    old=$(readlink -f "$STATEDIR/exits")
    cairnd_stop
    rm -rf "$STATEDIR"
    STATEDIR=$BATS_TEST_TMPDIR/state2 cairnd_start '{}'
    [ ! -e "$old" ]
}
