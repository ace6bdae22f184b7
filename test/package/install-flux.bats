#!/usr/bin/env bats
# scripts/install-flux finds a flux-core for a plain clone (issue 34): an
# installed one of the supported version first, then a tarball given, then
# the one beside the checkout, then the release download, checked against
# the pinned sha256; offline it says what it needs. Nothing here builds
# flux-core (--dry-run, or a failure before the build).

S=${CAIRN_SOURCE_DIR:?CAIRN_SOURCE_DIR must name the source directory}

# A checkout with nothing beside it: $R/repo/scripts/install-flux, and
# $R/shared/flux only where a test makes it.
setup() {
    R=$BATS_TEST_TMPDIR/r
    mkdir -p "$R/repo/scripts"
    cp "$S/scripts/install-flux" "$S/scripts/apt-get-wait" "$R/repo/scripts/"
    export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/cache
    NOPE=$BATS_TEST_TMPDIR/no-flux-here
    pinned=$(sed -n 's/^FLUX_SHA256=//p' "$S/scripts/install-flux")
    version=$(sed -n 's/^FLUX_VERSION_PINNED=//p' "$S/scripts/install-flux")
}

@test "an installed flux-core of the supported version is used as it is" {
    local pc=$BATS_TEST_TMPDIR/pc
    mkdir -p "$pc"
    printf 'prefix=/somewhere\nName: flux-core\nDescription: x\nVersion: %s\n' \
        "$version" >"$pc/flux-core.pc"
    run env PKG_CONFIG_PATH="$pc" "$R/repo/scripts/install-flux" \
        --prefix "$NOPE" --dry-run
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "install-flux: would use the installed flux-core $version in /somewhere" ]
}

@test "another installed version is not used: it says so and builds the supported one" {
    local pc=$BATS_TEST_TMPDIR/pc
    mkdir -p "$pc" "$R/shared/flux"
    printf 'prefix=/somewhere\nName: flux-core\nDescription: x\nVersion: 0.1.0\n' \
        >"$pc/flux-core.pc"
    touch "$R/shared/flux/flux-core-$version.tar.gz"
    run env PKG_CONFIG_PATH="$pc" "$R/repo/scripts/install-flux" \
        --prefix "$NOPE" --dry-run
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"flux-core 0.1.0 is installed, but cairn supports $version only"* ]]
    [[ "$output" == *"would build flux-core from the tarball beside the checkout"* ]]
}

@test "a tarball the user gives comes before the one beside the checkout" {
    mkdir -p "$R/shared/flux"
    touch "$R/shared/flux/flux-core-$version.tar.gz" "$BATS_TEST_TMPDIR/mine.tar.gz"
    run "$R/repo/scripts/install-flux" --prefix "$NOPE" --dry-run \
        --tarball "$BATS_TEST_TMPDIR/mine.tar.gz"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"would build flux-core from the tarball given into $NOPE" ]]
    run env CAIRN_FLUX_TARBALL="$BATS_TEST_TMPDIR/missing.tar.gz" \
        "$R/repo/scripts/install-flux" --prefix "$NOPE" --dry-run
    [ "$status" -eq 1 ]
    [[ "$output" == *"no such tarball: $BATS_TEST_TMPDIR/missing.tar.gz"* ]]
}

@test "offline, with no tarball anywhere, it says what it needs" {
    run env CAIRN_FLUX_URL=http://127.0.0.1:9/flux-core.tar.gz \
        "$R/repo/scripts/install-flux" --prefix "$NOPE"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"could not download flux-core $version from http://127.0.0.1:9/"* ]]
    [[ "$output" == *"sha256 $pinned"* ]]
    [[ "$output" == *"--tarball FILE or CAIRN_FLUX_TARBALL"* ]]
    [[ "$output" == *"../shared/flux/"* ]]
    [ ! -e "$NOPE" ]
}

@test "a download whose sha256 is not the pinned one is refused" {
    echo "not flux-core" >"$BATS_TEST_TMPDIR/fake.tar.gz"
    run env CAIRN_FLUX_URL="file://$BATS_TEST_TMPDIR/fake.tar.gz" \
        "$R/repo/scripts/install-flux" --prefix "$NOPE"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"expected $pinned: refused"* ]]
    [ ! -e "$XDG_CACHE_HOME/cairn/flux-core-$version.tar.gz" ]
    [ ! -e "$NOPE" ]
}

@test "the pinned sha256 is that of the tarball beside the checkout" {
    local t=$S/../shared/flux/flux-core-$version.tar.gz
    [ -f "$t" ] || skip "no $t here"
    [ "$(sha256sum "$t" | cut -d' ' -f1)" = "$pinned" ]
}

# The suite's tree is kept per machine (test/fluxsuite/run's default): its
# name changes with flux-core's and flux-security's versions and with the
# recipe, so that a tree built otherwise is never taken for it.
@test "the suite's default tree is named by the versions and the recipe" {
    local recipe
    recipe=$(sed -n 's/^SUITE_RECIPE=//p' "$S/scripts/install-flux")
    [ -n "$recipe" ]
    run "$R/repo/scripts/install-flux" --suite-tree-default
    [ "$status" -eq 0 ]
    [ "$output" = "$XDG_CACHE_HOME/cairn/fluxsuite/flux-core-$version-r$recipe" ]
    mkdir -p "$R/shared/flux"
    touch "$R/shared/flux/flux-security-0.15.0-7-gd61455e.tar.gz"
    run "$R/repo/scripts/install-flux" --suite-tree-default
    [ "$status" -eq 0 ]
    [ "$output" = "$XDG_CACHE_HOME/cairn/fluxsuite/flux-core-$version+security-0.15.0-7-gd61455e-r$recipe" ]
}
