#!/usr/bin/env bats
# The crash harness's Flux mode (issue 14): every crash point cairnd passes
# for a 4-rank job with per-rank prolog and epilog, at K = 1 and the last
# K, with Flux's job-manager as the client (test/flux/crashpoints.sh).
load lib

@test "every crash point under a real job-manager: the job ends, once" {
    STATEDIR=$BATS_TEST_TMPDIR/state   # the module's; the script runs cairnd
    FLUX_TIMEOUT=1200 run in_flux \
        "$CAIRN_SOURCE_DIR/test/flux/crashpoints.sh $B $BATS_TEST_TMPDIR ${CP_MAX:-0}"
    echo "$output" | grep -v '^ok ' | head -50
    [ "$status" -eq 0 ]
    [[ "$output" == *" 0 failed"* ]]
}
