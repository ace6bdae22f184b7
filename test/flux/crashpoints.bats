#!/usr/bin/env bats
# The crash harness's Flux mode (issue 14): every crash point cairnd passes
# for a 4-rank job with per-rank prolog and epilog, at K = 1 and the last
# K, with Flux's job-manager as the client (test/flux/crashpoints.sh).
load lib

@test "every crash point under a real job-manager: the job ends, once" {
    STATEDIR=$BATS_TEST_TMPDIR/state   # the module's; the script runs cairnd
    FLUX_TIMEOUT=1200 run in_flux \
        "$CAIRN_SOURCE_DIR/test/flux/crashpoints.sh $B $BATS_TEST_TMPDIR ${CP_MAX:-0}"
    echo "$output" | grep -v -e '^ok ' -e 'job-exec.err' -e ' Killed ' | head -50
    [ "$status" -eq 0 ]
    [[ "$output" == *" 0 failed"* ]]
}

# The same with rank 3's prolog failing tolerably: cairnd holds the shells
# while the module shrinks R and resumes; every commit is a crash case too,
# so that cairnd dies between hold and resume, and just after each.
@test "every crash point with a tolerated prolog failure (hold, shrink, resume)" {
    STATEDIR=$BATS_TEST_TMPDIR/state
    FLUX_TIMEOUT=1200 run in_flux \
        "$CAIRN_SOURCE_DIR/test/flux/crashpoints.sh $B $BATS_TEST_TMPDIR ${CP_MAX:-0} tolerated"
    echo "$output" | grep -v -e '^ok ' -e 'job-exec.err' -e ' Killed ' | head -50
    [ "$status" -eq 0 ]
    [[ "$output" == *" 0 failed"* ]]
}

# Ranks 1-3 on node cairnds of their own (issue 15): rank 0's crash points
# (its remote processes among them) and every one node 2's cairnd passes.
@test "every crash point of rank 0 and of a node cairnd, many nodes" {
    STATEDIR=$BATS_TEST_TMPDIR/state
    multinode_conf "$BATS_TEST_TMPDIR/node%r"
    FLUX_TIMEOUT=1500 run in_flux \
        "$CAIRN_SOURCE_DIR/test/flux/crashpoints.sh $B $BATS_TEST_TMPDIR ${CP_MAX:-0} multinode"
    echo "$output" | grep -v -e '^ok ' -e 'job-exec.err' -e ' Killed ' | head -50
    [ "$status" -eq 0 ]
    [[ "$output" == *" 0 failed"* ]]
}
