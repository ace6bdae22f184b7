#!/usr/bin/env bats
# The packages as a site installs them (issue 34): dpkg -i the .deb files
# scripts/build-deb made, run the README's Flux quick start against the
# installed paths (the installed cairnd with the installed config, the
# installed cairn-exec.so in a `flux start --test-size=4`), then dpkg -r
# (cairnd stopped, nothing of the packages left running) and dpkg -P
# (config and journal gone). Installs on this machine: root only, and
# skipped where cairn is installed already or /var/lib/cairn exists, so a
# real installation is never touched.

load lib

FLUX=${FLUX:-/opt/flux-core/bin/flux}
PKGS=(cairn-tests cairn-flux cairn)
MARK=/run/cairn-package-test

# The processes running a file of the packages (also once it is deleted).
pkg_procs() {
    local p exe
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case $exe in
            /usr/sbin/cairnd* | /usr/libexec/cairn/*) echo "${p#/proc/} $exe" ;;
        esac
    done
}

setup_file() {
    [ "$(id -u)" -eq 0 ] || return 0
    ls "$DEBS"/cairn_*.deb >/dev/null 2>&1 || return 0
    if dpkg-query -W -f='${Status}' cairn 2>/dev/null | grep -q installed \
            && [ ! -e "$MARK" ]; then
        return 0   # someone's real installation: the tests skip
    fi
    [ -e /var/lib/cairn ] && [ ! -e "$MARK" ] && return 0
    touch "$MARK"
    local debs=("$DEBS"/cairn_*.deb "$DEBS"/cairn-tests_*.deb)
    ls "$DEBS"/cairn-flux_*.deb >/dev/null 2>&1 && debs+=("$DEBS"/cairn-flux_*.deb)
    dpkg_wait -i "${debs[@]}" >"$BATS_FILE_TMPDIR/dpkg-i.log" 2>&1
}

# A net under the tests: whatever they left, stop it and purge.
teardown_file() {
    [ -e "$MARK" ] || return 0
    start-stop-daemon --stop --quiet --oknodo --exec /usr/sbin/cairnd \
        --retry TERM/10/KILL/2 >/dev/null 2>&1 || true
    dpkg_wait -P "${PKGS[@]}" >/dev/null 2>&1 || true
    rm -rf /var/lib/cairn "$MARK"
}

need_installed() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (dpkg -i)"
    need_debs
    [ -e "$MARK" ] || skip "cairn is installed here already, or /var/lib/cairn exists: not touched"
}

@test "dpkg -i installs the packages, and the installed cairnd accepts the installed config" {
    need_installed
    cat "$BATS_FILE_TMPDIR/dpkg-i.log"
    dpkg-query -W -f='${Status}\n' cairn | grep -qx 'install ok installed'
    [ -x /usr/sbin/cairnd ]
    [ -x /usr/bin/cairn ]
    [ -x /usr/libexec/cairn/cairn-shim ]
    # the conffiles are the package's
    dpkg-query -W -f='${Conffiles}\n' cairn | grep -q '/etc/cairn/cairn.conf '
    run /usr/sbin/cairnd --check -c /etc/cairn/cairn.conf
    echo "$output"
    [ "$status" -eq 0 ]
    # the test harness is out of users' PATH
    [ ! -e /usr/bin/cairn-crashtest ]
    [ -x /usr/libexec/cairn/cairn-crashtest ]
    # and works from there, as cairn-crashtest(1) says, on its scenarios,
    # finding the installed cairnd by itself (not the build dir's)
    run env -u CAIRN_BUILD_DIR /usr/libexec/cairn/cairn-crashtest \
        --workdir "$BATS_TEST_TMPDIR" --reference /usr/share/cairn/crash/plain.json
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "the README's Flux quick start runs a Flux job through the installed module" {
    need_installed
    ls "$DEBS"/cairn-flux_*.deb >/dev/null 2>&1 || skip "no cairn-flux package (no flux-core when it was built)"
    [ -x "$FLUX" ] || skip "no flux at $FLUX (scripts/install-flux)"
    [ -e /usr/libexec/cairn/cairn-exec.so ]
    # the README's lines, with a private directory for /tmp/fc
    sed -n '/<!-- package-quickstart-sh/,/^```$/p' "$S/README.md" \
        | sed '1,2d;$d' | sed "s|/tmp/fc|$BATS_TEST_TMPDIR/fc|g" \
        >"$BATS_TEST_TMPDIR/quickstart.sh"
    cat "$BATS_TEST_TMPDIR/quickstart.sh"
    grep -q '^cairnd -c /etc/cairn/cairn.conf &' "$BATS_TEST_TMPDIR/quickstart.sh"
    grep -q '^flux start ' "$BATS_TEST_TMPDIR/quickstart.sh"
    # the installed programs, and flux-core's flux. Into a file, not
    # `run`: the cairnd it starts in the background keeps its output open.
    local out=$BATS_TEST_TMPDIR/quickstart.out rc=0
    env PATH="$(dirname "$FLUX"):/usr/sbin:/usr/bin:/sbin:/bin" \
        timeout 120 bash -e "$BATS_TEST_TMPDIR/quickstart.sh" \
        >"$out" 2>&1 3>&- </dev/null || rc=$?
    cat "$out"
    [ "$rc" -eq 0 ]
    # flux run -N4 hostname: four lines of this host's name
    [ "$(grep -cx "$(hostname)" "$out")" -eq 4 ]
    # cairnd ran it: one job in its journal, ended with status 0
    run /usr/bin/cairn --statedir /var/lib/cairn jobs -a --json
    echo "$output"
    [ "$(jq -s length <<<"$output")" -eq 1 ]
    [ "$(jq -r .returncode <<<"$output")" = 0 ]
    [ -n "$(pkg_procs | grep /usr/sbin/cairnd)" ]
}

# README "Upgrades", with the same version standing in for the next one
# (there is no earlier release to build yet): stop cairnd, install, start;
# a job running throughout ends once, with its own status, and a site's
# change to a conffile stays.
@test "an upgrade while a job runs: stop, install, start; the job ends once with its status" {
    need_installed
    local c=/usr/bin/cairn sd=/var/lib/cairn id=4242 i
    if [ -z "$(pkg_procs | grep /usr/sbin/cairnd)" ]; then
        /usr/sbin/cairnd -c /etc/cairn/cairn.conf >"$BATS_TEST_TMPDIR/cairnd0.log" 2>&1 3>&- &
        for i in $(seq 1 100); do [ -S $sd/cairn.sock ] && break; sleep 0.1; done
    fi
    sed -i 's/"max-jobs": 10000/"max-jobs": 9999/' /etc/cairn/cairn.conf
    "$c" --statedir $sd run --detach --id $id -N 2 -- sh -c 'sleep 8; exit 7'
    # the job's shells run under the old version's supervisor
    for i in $(seq 1 100); do
        "$c" --statedir $sd jobs -d -n --json $id | jq -e '.state == "run"' >/dev/null && break
        sleep 0.1
    done
    start-stop-daemon --stop --quiet --exec /usr/sbin/cairnd --retry TERM/30
    dpkg_wait -i "$DEBS"/cairn_*.deb
    # the old supervisor runs on from the file the upgrade replaced
    pkg_procs | grep -q '/usr/libexec/cairn/cairn-shim (deleted)'
    grep -q '"max-jobs": 9999' /etc/cairn/cairn.conf
    /usr/sbin/cairnd -c /etc/cairn/cairn.conf >"$BATS_TEST_TMPDIR/cairnd.log" 2>&1 3>&- &
    for i in $(seq 1 300); do
        "$c" --statedir $sd jobs -a -d -n --json $id 2>/dev/null \
            | jq -e '.state == "done"' >/dev/null && break
        sleep 0.1
    done
    cat "$BATS_TEST_TMPDIR/cairnd.log"
    run "$c" --statedir $sd eventlog $id --json
    echo "$output"
    # one finish, with the shells' own status (exit 7: wait status 1792)
    [ "$(jq -s '[.[] | select(.name == "finish")] | length' <<<"$output")" -eq 1 ]
    [ "$(jq -s -r '.[] | select(.name == "finish") | .context.status' <<<"$output")" -eq 1792 ]
    [ "$(jq -s '[.[] | select(.name == "exception")] | length' <<<"$output")" -eq 0 ]
}

@test "dpkg -r stops cairnd, and nothing of the packages is left running" {
    need_installed
    run dpkg_wait -r "${PKGS[@]}"
    echo "$output"
    [ "$status" -eq 0 ]
    [ ! -e /usr/sbin/cairnd ]
    local i left
    # the supervisor and the keeper exit once cairnd is gone: a moment
    for i in $(seq 1 100); do
        left=$(pkg_procs)
        [ -z "$left" ] && break
        sleep 0.1
    done
    echo "left running: $left"
    [ -z "$left" ]
    # the conffiles stay until purge
    [ -e /etc/cairn/cairn.conf ]
}

@test "dpkg -P removes the config, the journal and the unit's links" {
    need_installed
    run dpkg_wait -P "${PKGS[@]}"
    echo "$output"
    [ "$status" -eq 0 ]
    [ ! -e /etc/cairn ]
    [ ! -e /var/lib/cairn ]
    [ -z "$(find /etc/systemd/system -name 'cairnd.service' 2>/dev/null)" ]
    run dpkg-query -W -f='${Status}' cairn
    [[ "$output" != *"ok installed"* ]]
}
