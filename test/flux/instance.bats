#!/usr/bin/env bats
# One Flux instance per cairnd (issue 32, exec/bind.h): a second instance
# pointed at the same cairnd used to be served too, and its module ended
# every running job of the first as lost in a broker restart.
load lib

setup() {
    cairnd_start '{}'
}

teardown() {
    touch "$BATS_TEST_TMPDIR/a-stop"
    [ -z "${APID:-}" ] || wait "$APID" || true
    cairnd_stop
}

@test "a second Flux instance is refused while the first has a job, then served" {
    flux_conf
    sed -i "s|^args = \[\(.*\)\]|args = [\1, \"start-timeout=3s\"]|" \
        "$FLUX_CONF_DIR/cairn.toml"
    T=$BATS_TEST_TMPDIR
    # instance A: one job runs until the test says stop
    timeout 120 "$FLUX" start --test-size=1 --config-path="$FLUX_CONF_DIR" \
        bash -c "id=\$(flux submit sleep 300)
                 flux job wait-event -t 30 \$id start >/dev/null &&
                     flux kvs get cairn.instance >$T/a-instance &&
                     flux job id --to=dec \$id >$T/a-job
                 while [ ! -e $T/a-stop ]; do sleep 0.1; done
                 flux cancel \$id
                 flux job wait-event -t 30 \$id clean >/dev/null
                 flux job eventlog \$id | grep -c exception" \
        >"$T/a.log" 2>&1 &
    APID=$!
    for _ in $(seq 1 300); do [ -s "$T/a-job" ] && break; sleep 0.1; done
    [ -s "$T/a-job" ] || { cat "$T/a.log"; false; }
    ajob=$(cat "$T/a-job")
    auuid=$(cat "$T/a-instance")

    # instance B, same cairnd: refused, so its job cannot start; it is told
    run in_flux 'flux run true 2>/dev/null; echo "rc=$?"
                 echo "B=$(flux kvs get cairn.instance)"
                 flux job eventlog $(flux jobs -a -no {id}) | grep exception
                 flux dmesg | grep "refused the connection" | head -1'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    buuid=$(echo "$output" | sed -n 's/^B=//p')
    [ -n "$buuid" ]
    [ "$buuid" != "$auuid" ]
    [[ "$output" == *"cairnd did not take the job within 3s"* ]]
    [[ "$output" == *"refused the connection: bind: cairnd serves Flux instance $auuid ($(hostname) local://"*"connected); refused $buuid ($(hostname) local://"* ]]
    grep -q "refused $buuid" "$T/cairnd.log"

    # A's job was left alone: still running, in cairnd as in A
    run cairn show "$ajob"
    echo "$output"
    [[ "$output" == *"state"*"running"* ]]

    # A ends: its job had no exception but the cancel's
    touch "$T/a-stop"
    wait "$APID"
    APID=
    cat "$T/a.log"
    [ "$(tail -n 1 "$T/a.log")" -eq 1 ]

    # now nothing of A is left: the next instance is served
    run in_flux 'flux run echo served; echo "rc=$?"
                 echo "refused=$(flux dmesg | grep -c "refused the connection")"'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"served"*"rc=0"* ]]
    [[ "$output" == *"refused=0"* ]]
}
