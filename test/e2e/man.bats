#!/usr/bin/env bats
# The man pages: they render without warnings, document every subcommand,
# option, event and (with unit/t_doc) configuration key the code has, and
# `cmake --install` installs them with the systemd unit and the example
# configuration.

S=${CAIRN_SOURCE_DIR:?CAIRN_SOURCE_DIR must name the source directory}
B=${CAIRN_BUILD_DIR:?CAIRN_BUILD_DIR must name the build directory}
PAGES="cairn.1 cairn-crashtest.1 cairn.conf.5 cairn-journal.5 cairn-protocol.7 cairnd.8 cairn-shim.8 cairn-exec.8 cairn-flux-housekeeping.8"

# A man page as plain roff text: "\-" -> "-", no "\&", no font escapes.
plain() {
    sed -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\f[BIRP]//g' "$S/man/$1"
}

# The .SS headings of the COMMANDS section of cairn(1): first words.
man_commands() {
    plain cairn.1 | awk '/^\.SH/ { on = ($2 == "COMMANDS") }
        on && /^\.SS/ { gsub(/"/, "", $2); print $2 }'
}

@test "every man page renders without warnings (groff -ww, man --warnings)" {
    for p in $PAGES; do
        [ -f "$S/man/$p" ]
        run groff -man -ww -z "$S/man/$p"
        [ "$status" -eq 0 ]
        [ -z "$output" ] || { echo "$p: $output"; false; }
        # man's own and groff's complaints go to stderr
        run sh -c 'MANPAGER=cat MANWIDTH=80 man -l --warnings "$1" 2>&1 >/dev/null' \
            sh "$S/man/$p"
        [ "$status" -eq 0 ]
        [ -z "$output" ] || { echo "$p: $output"; false; }
        MANPAGER=cat man -l "$S/man/$p" | grep -q '^NAME'
    done
}

@test "cairn(1) documents every subcommand, and only those" {
    cmds=$("$B/cairn" --help | awk '/^Commands:/ { on = 1; next }
        on && /^$/ { exit } on { print $1 }')
    [ "$(echo "$cmds" | wc -l)" -ge 14 ]
    for c in $cmds; do
        man_commands | grep -qx "$c" || { echo "cairn.1 lacks '$c'"; false; }
    done
    for c in $(man_commands); do
        echo "$cmds" | grep -qx "$c" || { echo "cairn.1 has '$c', not a command"; false; }
    done
}

@test "every subcommand's options are in cairn(1)" {
    for c in $(man_commands); do
        opts=$("$B/cairn" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
        for o in $opts; do
            plain cairn.1 | grep -q -- "$o" || { echo "cairn.1 lacks $c $o"; false; }
        done
    done
}

@test "cairnd(8) documents every option of cairnd --help" {
    opts=$("$B/cairnd" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
    [ -n "$opts" ]
    for o in $opts; do
        plain cairnd.8 | grep -q -- "$o" || { echo "cairnd.8 lacks $o"; false; }
    done
}

@test "cairn-crashtest(1) documents every option of cairn-crashtest --help" {
    [ -x "$B/cairn-crashtest" ] || skip "cairn-crashtest is not built"
    opts=$("$B/cairn-crashtest" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    [ -n "$opts" ]
    for o in $opts; do
        plain cairn-crashtest.1 | grep -q -- "$o" \
            || { echo "cairn-crashtest.1 lacks $o"; false; }
    done
}

@test "cairn-journal(5) documents every event of the transition table" {
    names=$(grep -o 'X (JOB_EV_[A-Z_]*, "[a-z-]*"' "$S/src/core/job.h" \
        | sed 's/.*"\([a-z-]*\)"/\1/')
    [ "$(echo "$names" | wc -l)" -ge 20 ]
    for n in $names; do
        plain cairn-journal.5 | grep -q "^\.B[RI]* $n\b" \
            || { echo "cairn-journal.5 lacks event $n"; false; }
    done
}

@test "cairn.conf(5) keys match the code (unit/t_doc), the example parses" {
    CAIRN_SOURCE_DIR=$S run "$B/test/t_doc"
    [ "$status" -eq 0 ] || { echo "$output" | grep -v '^ok'; false; }
    # cairn reads -c files as strictly as cairnd: reaching the state dir
    # means the whole example was accepted
    run "$B/cairn" -c "$S/etc/cairn.conf.example" \
        --statedir "$BATS_TEST_TMPDIR/none" jobs
    [ "$status" -eq 1 ]
    [ "$output" = "cairn jobs: state dir $BATS_TEST_TMPDIR/none: No such file or directory" ]
}

@test "the systemd unit leaves jobs running on stop and restarts on failure" {
    u=$S/etc/cairnd.service
    grep -qx 'KillMode=process' "$u"
    grep -qx 'Restart=on-failure' "$u"
    grep -qx 'ExecStart=@CMAKE_INSTALL_FULL_SBINDIR@/cairnd -c @CMAKE_INSTALL_FULL_SYSCONFDIR@/cairn/cairn.conf' "$u"
    grep -qx 'WantedBy=multi-user.target' "$u"
}

@test "cmake --install installs the man pages, the unit and the example" {
    grep -q cairnd.service "$B/cmake_install.cmake" \
        || { echo "cmake/man.cmake is not included by CMakeLists.txt"; false; }
    # DESTDIR too: a build configured with prefix /usr installs the config
    # to the absolute /etc/cairn, which --prefix does not move
    run env DESTDIR="$BATS_TEST_TMPDIR/root" \
        cmake --install "$B" --prefix "$BATS_TEST_TMPDIR/inst"
    [ "$status" -eq 0 ]
    i=$BATS_TEST_TMPDIR/root$BATS_TEST_TMPDIR/inst
    for p in $PAGES; do
        [ -f "$i/share/man/man${p##*.}/$p" ] || { echo "$p not installed"; false; }
    done
    [ -f "$i/share/doc/cairn/cairn.conf.example" ]
    unit=$i/lib/systemd/system/cairnd.service
    grep -q '^ExecStart=/.*/cairnd -c /.*etc/cairn/cairn.conf$' "$unit"
    [ -z "$(grep @ "$unit")" ]
}
