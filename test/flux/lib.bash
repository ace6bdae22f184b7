# lib.bash - shared by the Flux tests: a cairnd in a temporary state dir and
# a real Flux instance (`flux start --test-size=4`) whose job-exec is
# cairn-exec.so, relaying to that cairnd.
#
#   load lib
#   setup()    { cairnd_start '{}'; }
#   teardown() { cairnd_stop; }
#   @test ... { in_flux 'flux run -N4 hostname'; }

B=${CAIRN_BUILD_DIR:?CAIRN_BUILD_DIR must name the build directory}
FLUX=${FLUX:-/opt/flux-core/bin/flux}
# The cairnd helpers of the e2e tests (cairnd_start, cairn, script, ...).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.bash"

# The config dir of the instance: cairn-exec.so as job-exec, plus the TOML
# given as $1 (e.g. a [kvs] checkpoint-period).
flux_conf() {
    FLUX_CONF_DIR=$BATS_TEST_TMPDIR/flux-conf
    mkdir -p "$FLUX_CONF_DIR"
    cat >"$FLUX_CONF_DIR/cairn.toml" <<TOML
[modules.job-exec]
module = "$B/cairn-exec.so"
args = ["statedir=$STATEDIR"]
${1:-}
TOML
}

# Run a shell script inside a fresh 4-broker instance; its output and
# status are the instance's (flux start exits with the script's status).
# The instance is bounded in time so that a hang fails the test.
in_flux() {
    [ -n "${FLUX_CONF_DIR:-}" ] || flux_conf
    timeout "${FLUX_TIMEOUT:-120}" "$FLUX" start --test-size=4 \
        --config-path="$FLUX_CONF_DIR" bash -c "$1"
}

# Names of a Flux job's events, comma separated (inside an instance).
FLUX_EVENTS='flux job eventlog $1 | cut -d" " -f2 | paste -sd, -'
