#!/usr/bin/env bats
# test/fluxsuite/judge on made-up TAP logs: what it lets pass, what it
# fails, and the files it names for the suite's second run (--bad-files).

J=$BATS_TEST_DIRNAME/judge

setup() {
    L=$BATS_TEST_TMPDIR/logs
    mkdir -p "$L"
    cat >"$BATS_TEST_TMPDIR/expected" <<'X'
a.t 2 exec listed here
b.t 3 exec,skip waits out a timeout
X
}

# tap FILE LINE...: FILE's log, its plan and an exit line
tap() {
    local f=$1; shift
    printf '%s\n' "$@" "1..$#" "# fluxsuite exit 0" >"$L/$f.tap"
}

judge() {
    run python3 "$J" --mode cairn --expected "$BATS_TEST_TMPDIR/expected" \
        --logs "$L" --bad-files "$BATS_TEST_TMPDIR/bad" "$@"
}

@test "only listed failures: exit 0, no file to run again" {
    tap a.t "ok 1 - x" "not ok 2 - y"
    judge a.t
    [ "$status" -eq 0 ]
    [ -e "$BATS_TEST_TMPDIR/bad" ]
    [ ! -s "$BATS_TEST_TMPDIR/bad" ]
}

@test "an unlisted failure, a file that did not finish, a missing log: exit 1, each named once" {
    tap a.t "ok 1 - x" "not ok 2 - y" "not ok 3 - z"
    printf 'ok 1 - x\n1..2\n# fluxsuite exit 124\n' >"$L/b.t.tap"
    tap c.t "ok 1 - x"
    judge a.t b.t c.t d.t
    [ "$status" -eq 1 ]
    [[ "$output" == *"FAIL a.t 3 - z"* ]]
    [[ "$output" == *"b.t: 1 ok, 0 failed (0 listed), 0 skipped; did not finish (plan 2, 1 seen, exit 124)"* ]]
    [[ "$output" == *"d.t: no log (did not run)"* ]]
    [ "$(paste -sd' ' "$BATS_TEST_TMPDIR/bad")" = "a.t b.t d.t" ]
}

@test ",skip gives the file its SKIP_TESTS; a bad expected line is refused" {
    run python3 "$J" --skips b.t --mode cairn --expected "$BATS_TEST_TMPDIR/expected"
    [ "$status" -eq 0 ]
    [ "$output" = "*.3" ]
    echo "a.t 1 maybe no reason" >"$BATS_TEST_TMPDIR/expected"
    judge a.t
    [ "$status" -eq 1 ]
    [[ "$output" == *"expected:1: want 'FILE NUMBER stock|exec|gap[,skip] reason'"* ]]
}
