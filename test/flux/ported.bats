#!/usr/bin/env bats
# Checks of flux-core's own exec and perilog tests that apply to an exec
# service, rewritten against cairn-exec.so (issue 14). Each names the
# sharness test it comes from (flux-core t/): t2400 (job-exec, testexec),
# t2402 (dummy shells), t2274 (per-rank perilog), t2212 (perilog event
# order). t2226 (housekeeping, partial release) is partial.bats; t2401's
# takeover and reattach are crash.bats and restart.bats.
load lib

setup() {
    D=$BATS_TEST_TMPDIR
}

teardown() {
    cairnd_stop
    assert_no_leftover
}


# t2400: "job-exec: exec.eventlog in the guest namespace"; the link
# job.<id>.guest outlives the job (grafted copy).
@test "t2400: exec.eventlog has init, the shells' events, complete and done" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit -N2 true)
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog -p guest.exec.eventlog $id | cut -d" " -f2 | paste -sd, -
                 flux job eventlog -p guest.exec.eventlog -f json $id |
                     jq -c "select(.name==\"complete\") | .context"'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == init,*shell.init*shell.start*complete,done ]]
    [ "${lines[1]}" = '{"status":0}' ]
}

# t2402: "job status is max of shell exit codes"
@test "t2402: the job's status is the largest of the shells' exit codes" {
    cairnd_start '{}'
    run in_flux 'flux run -N4 sh -c "exit \$((FLUX_TASK_RANK + 1))"; echo "rc=$?"
                 flux jobs -a -no "{result} {returncode}"'
    echo "$output"
    [[ "$output" == *"rc=4"* ]]
    [[ "$output" == *"FAILED 4"* ]]
}

# t2402: "job-exec: an exception kills the shells"; the wait status of the
# fatal exception is the job's (t2400 "exception wait_status overrides").
@test "t2402: a fatal exception raised by hand kills the shells" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit -N2 sleep 300)
                 flux job wait-event -t 30 $id start >/dev/null
                 flux job raise --type=test $id "by hand"
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux jobs -a -no "{result}"
                 flux job eventlog $id | cut -d" " -f2 | paste -sd, -'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = FAILED ]
    # Shells killed while they start their tasks may raise exceptions of
    # their own ("start failed"), after ours: the first is the one raised.
    [[ "${lines[1]}" =~ ,start,exception(,exception)*,finish,release(,free)?,clean$ ]]
    [ "$(events_named "$(cairn jobs -a --json | jq -r .id)" exception | jq -r .type | head -1)" = test ]
}

# t2402: "job-exec: invalid job shell generates exception"
@test "t2402: a job shell that does not exist: an exception, and the job ends" {
    cairnd_start '{}'
    run in_flux 'flux run --setattr=system.exec.job_shell=/nonexistent/shell true
                 echo "rc=$?"
                 flux jobs -a -no "{state} {result}"'
    echo "$output"
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *"INACTIVE FAILED"* ]]
}

# t2274: "perilog: FLUX_JOB_RANKS, FLUX_JOB_ID" in the environment
@test "t2274: prolog and epilog see FLUX_JOB_ID (f58) and FLUX_JOB_RANKS" {
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -N4 true)
                 flux job wait-event -t 30 $id clean >/dev/null
                 echo "id $id"'
    [ "$status" -eq 0 ]
    id=$(sed -n 's/^id //p' <<<"$output")
    [ "$(grep -c "^prolog $id [0-3] 0-3\$" "$D/runlog")" -eq 4 ]
    [ "$(grep -c "^epilog $id [0-3] 0-3\$" "$D/runlog")" -eq 4 ]
}

# t2274: "a non-fatal exception does not cancel the prolog"
@test "t2274: a non-fatal exception during the prolog does not cancel it" {
    echo 2 >"$D/sleep-prolog"
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -N2 true)
                 flux job wait-event -t 30 $id prolog-start >/dev/null
                 flux job raise --severity=1 --type=test $id "not fatal"
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux jobs -a -no "{result}"'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = COMPLETED ]
}

# t2274: "a canceled prolog does not drain", "epilog runs after a
# canceled prolog"
@test "t2274: cancel during the prolog: no shells, the epilog runs, nothing drained" {
    echo 30 >"$D/sleep-prolog"
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -N2 true)
                 flux job wait-event -t 30 $id prolog-start >/dev/null
                 sleep 0.3
                 flux cancel $id
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux jobs -a -no "{result}"
                 flux job eventlog $id | cut -d" " -f2 | paste -sd, -
                 echo "drained: $(flux resource drain -no "{ranks}")"'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = CANCELED ]
    [[ "${lines[1]}" == *prolog-start,exception*prolog-finish* ]]
    [[ "${lines[1]}" != *,start,* ]]
    [ "${lines[2]}" = "drained: " ]
    [ "$(grep -c '^epilog ' "$D/runlog")" -eq 2 ]
}

# t2274: "epilog failure drains the rank, non-fatal epilog exception"
@test "t2274: a failing epilog: severity-2 epilog exception, its rank drained" {
    echo 3 >"$D/exit-epilog-1"
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -N2 true)
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux jobs -a -no "{result}"
                 flux job eventlog -f json $id |
                     jq -r "select(.name==\"exception\") | \"\(.context.type) \(.context.severity)\""
                 flux resource drain -no "{ranks} {reason}"'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = COMPLETED ]
    [ "${lines[1]}" = "epilog 2" ]
    [[ "${lines[2]}" == "1 epilog failed for job "* ]]
}

# t2212: "prolog-finish < start < epilog-finish < free", "the epilog
# blocks clean"
@test "t2212: event order prolog-finish < start < finish < epilog-finish < free < clean" {
    echo 1 >"$D/sleep-epilog"
    cairnd_start "$(perilog_conf)"
    run in_flux 'id=$(flux submit -N2 true)
                 flux job wait-event -t 30 $id epilog-start >/dev/null
                 flux job wait-event -t 0.2 $id clean 2>/dev/null && echo early-clean
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog $id | cut -d" " -f2 | grep -E "^(prolog-finish|start|finish|epilog-finish|free|clean)$" | paste -sd, -'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *early-clean* ]]
    [ "${lines[-1]}" = "prolog-finish,start,finish,epilog-finish,free,clean" ]
}

# t2406 / job-exec's stats: `flux module stats job-exec` has job-exec's
# fields, the kill settings being cairnd's.
@test "flux module stats job-exec: job-exec's fields, from cairnd's config" {
    cairnd_start '{"exec": {"kill-timeout": "2s", "term-signal": "SIGUSR1"}}'
    run in_flux 'id=$(flux submit -N2 sleep 300)
                 flux job wait-event -t 30 $id start >/dev/null
                 flux module stats job-exec | jq -c "[.method, .\"kill-timeout\", .\"term-signal\", .\"kill-signal\", .\"max-kill-count\", .\"effective-max-kill-timeout\", (.jobs | length), .cairnd.connected]"
                 flux cancel $id
                 flux job wait-event -t 30 $id clean >/dev/null'
    echo "$output"
    [ "$status" -eq 0 ]
    # job-exec's estimate: 5 x 2 s, then 2 + 4 + ... + 128 s: 264 s
    [ "${lines[0]}" = '["cairn",2,"SIGUSR1","SIGKILL",8,264,1,true]' ]
}

@test "flux module stats job-exec while cairnd is down: no kill settings, not connected" {
    cairnd_start '{}'
    run in_flux "kill -9 $CAIRND_PID
                 sleep 0.5
                 flux module stats job-exec | jq -c '[.method, has(\"kill-timeout\"), .cairnd.connected]'"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = '["cairn",false,false]' ]
    CAIRND_PID=
}

# issue 37: the wait status an exception carries is a task's; as
# job-exec, the job's finish status is its shell-exit form ((128 + signal)
# << 8 for a signal), not the raw 11 it was sometimes.
@test "exit-on-error after a task's SIGSEGV: finish status 35584, returncode 139" {
    cairnd_start '{}'
    run in_flux 'flux run -N2 -o exit-on-error \
                     sh -c "[ \$FLUX_TASK_RANK = 1 ] && kill -SEGV \$\$; sleep 30"
                 echo "rc=$?"
                 id=$(flux jobs -a -no {id})
                 flux job eventlog -f json $id | jq -r "select(.name == \"finish\") | .context.status"
                 flux jobs -a -no "{returncode}"'
    echo "$output"
    [[ "$output" == *"rc=139"* ]]
    [ "${lines[-2]}" = 35584 ]
    [ "${lines[-1]}" = 139 ]
}

# ---- job-exec's settings (issue 37): [exec] and module arguments ----

# The kill settings of the broker's [exec] table and the module's
# arguments are each job's in cairnd (over cairn.conf), and stats show them.
@test "[exec] term-signal and kill-timeout, and a module argument, are the job's" {
    cairnd_start '{}'
    flux_conf '[exec]
term-signal = "SIGUSR1"
kill-timeout = "1s"
max-kill-count = 3'
    sed -i "s|^args = \[\(.*\)\]|args = [\1, \"max-kill-count=5\"]|" "$FLUX_CONF_DIR/cairn.toml"
    run in_flux 'flux module stats job-exec | jq -c "[.\"term-signal\", .\"kill-timeout\", .\"max-kill-count\"]"
                 id=$(flux submit sleep 300)
                 flux job wait-event -t 20 $id start >/dev/null
                 flux cancel $id
                 flux job wait-event -t 20 $id clean >/dev/null'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = '["SIGUSR1",1,5]' ]
    id=$(cairn jobs -a --json | jq -r .id | tail -n 1)
    [ "$(events_named "$id" accept | jq -c '.config.exec | [.["term-signal"], .["kill-timeout"], .["max-kill-count"]]')" = '["SIGUSR1",1,5]' ]
    [ "$(events_named "$id" proc-signal | jq -r .signum | head -n 1)" -eq 10 ]
}

@test "an invalid [exec] setting refuses the module, naming it" {
    cairnd_start '{}'
    flux_conf '[exec]
kill-timeout = "0s"'
    run in_flux 'flux module stats job-exec; echo "rc=$?"'
    echo "$output"
    [[ "$output" == *"cairn-exec: refused: invalid kill-timeout: 0s (exec.kill-timeout: must be a finite duration > 0)"* ]]
    [[ "$output" != *"rc=0"* ]]
}

# t2400: a start request that names no job is answered EPROTO (it used
# to get no answer at all, and its sender waited for ever)
# t2406 and t2402: job-exec's kill escalation, its per-job stats, its
# dmesg lines, and the drain of a shell that survives it.
@test "t2406: a job that ignores every signal: job-exec's kill counts in stats, dmesg lines, given up and drained" {
    cairnd_start '{}'
    # a reload by name loads the module path's job-exec.so: cairn's here
    mkdir -p "$BATS_TEST_TMPDIR/mods"
    ln -s "$B/cairn-exec.so" "$BATS_TEST_TMPDIR/mods/job-exec.so"
    FLUX_MODULE_PATH_PREPEND=$BATS_TEST_TMPDIR/mods run in_flux '
                 flux module reload job-exec statedir='"$STATEDIR"' kill-timeout=0.1s kill-signal=SIGURG term-signal=SIGURG max-kill-count=3
                 flux module stats job-exec | jq -r .method
                 flux module stats job-exec | jq -c ".[\"effective-max-kill-timeout\"]"
                 id=$(flux submit --wait-event=start -n1 sleep inf)
                 pid=$(flux job hostpids $id | sed s/.*://)
                 flux cancel $id
                 for i in $(seq 1 100); do
                     flux module stats job-exec | jq -e ".jobs[\"$id\"].kill_shell_count >= 1" >/dev/null && break
                     sleep 0.05
                 done
                 flux module stats job-exec | jq -c ".jobs[\"$id\"] | [.kill_count >= 1, .kill_shell_count >= 1, .kill_timeout > 0.1]"
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux dmesg -H | grep -c "Sending SIGURG to job shell for job $id"
                 flux dmesg -H | grep "job $id: draining rank(s) 0" | sed "s/.*draining/draining/"
                 flux resource drain -no {reason}
                 kill $pid
                 flux resource undrain 0'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = cairn ]
    # (5 x 0.1) + 0.1 + 0.2
    [ "${lines[1]}" = 0.8 ]
    [ "${lines[2]}" = '[true,true,true]' ]
    # one line per direct kill, three of them
    [ "${lines[3]}" = 3 ]
    [[ "${lines[4]}" == "draining rank(s) 0: shell for job ƒ"*": unkillable user processes: exceeded max kill count (7 kill signals)" ]]
    [[ "${lines[5]}" == "shell for job ƒ"*": unkillable user processes: exceeded max kill count"* ]]
}

@test "job-exec.start with an empty payload: EPROTO, and jobs still run" {
    cairnd_start '{}'
    run in_flux 'flux python -c "
import errno, flux
try:
    flux.Flux().rpc(\"job-exec.start\").get()
    print(\"answered\")
except OSError as e:
    print(\"errno\", e.errno)
"
                 flux run hostname >/dev/null && echo ran'
    echo "$output"
    [[ "$output" == *"errno 71"* ]]
    [[ "$output" == *"ran"* ]]
}

# t2292: a running job's new expiration, taken by cairnd, is in the
# broker's log as job-exec puts it
@test "flux update duration of a running job: dmesg says updated expiration of the job" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit --wait-event=start -t 5m sleep 300)
                 flux update $id duration=+1m && echo updated
                 # the job-manager tells job-exec after it answers the update
                 for i in $(seq 1 100); do
                     flux dmesg | grep -q "updated expiration of $id to" && break
                     sleep 0.1
                 done
                 flux dmesg | grep "updated expiration of $id to"
                 flux cancel $id; flux job wait-event -t 30 $id clean >/dev/null'
    echo "$output"
    [[ "$output" == *"updated"* ]]
    [[ "$output" == *"job-exec.debug[0]: updated expiration of "*" to "* ]]
}

# t2403 / t2406 / t2417: a config reload is checked as a load is. An
# invalid [exec] fails `flux config load` with job-exec's message and
# changes nothing; a valid one is taken, module arguments still winning.
@test "flux config load: an invalid [exec] is refused, a valid one taken, module arguments win" {
    cairnd_start '{}'
    # `flux module reload job-exec` loads job-exec by name: cairn's first
    mkdir -p "$BATS_TEST_TMPDIR/mods"
    ln -s "$B/cairn-exec.so" "$BATS_TEST_TMPDIR/mods/job-exec.so"
    FLUX_MODULE_PATH_PREPEND=$BATS_TEST_TMPDIR/mods run in_flux '
        st() { flux module stats job-exec | jq -c "[.\"kill-timeout\", .config.shell_exit_timeout, .config.default_job_shell]"; }
        echo "before $(st)"
        printf "[exec]\nkill-timeout = \"1f\"\n" | flux config load; echo "bad rc=$?"
        printf "[exec]\nshell-exit-timeout = 42\n" | flux config load; echo "bad2 rc=$?"
        printf "[exec]\nmax-kill-timeout = 100\n" | flux config load; echo "int rc=$?"
        printf "[exec]\nmax-kill-timeout = \"0\"\n" | flux config load; echo "zero rc=$?"
        echo "after-bad $(st)"
        printf "[exec]\nkill-timeout = \"7s\"\nshell-exit-timeout = \"1m\"\njob-shell = \"/x/conf-shell\"\n" | flux config load; echo "good rc=$?"
        echo "after-good $(st)"
        flux module reload job-exec statedir='"$STATEDIR"' kill-timeout=3s job-shell=/x/arg-shell shell-exit-timeout=none
        printf "[exec]\nkill-timeout = \"9s\"\njob-shell = \"/x/conf2-shell\"\n" | flux config load; echo "good2 rc=$?"
        echo "args-win $(st)"
        flux module reload job-exec statedir='"$STATEDIR"' kill-timeout=0.1s max-kill-timeout=1s; echo "pair rc=$?"
        flux module reload job-exec statedir='"$STATEDIR"' job-shell=42x kill-signal=SIGFOO; echo "badarg rc=$?"
        flux dmesg | grep "cairn-exec: refused" | tail -n 1
        flux module load job-exec statedir='"$STATEDIR"''
    echo "$output"
    [[ "$output" == *'before [5,30,"'*'flux-shell"]'* ]]
    [[ "$output" == *"invalid kill-timeout: 1f"* ]]
    [[ "$output" == *"bad rc=1"* ]]
    [[ "$output" == *"error reading config value exec.shell-exit-timeout"* ]]
    [[ "$output" == *"bad2 rc=1"* ]]
    # job-exec's rules for its table: a duration string, never 0
    [[ "$output" == *"int rc=1"* ]]
    [[ "$output" == *"invalid max-kill-timeout: 100 (a duration string"* ]]
    [[ "$output" == *"zero rc=1"* ]]
    [[ "$output" == *"invalid max-kill-timeout: 0 (must be > 0)"* ]]
    [[ "$output" == *'after-bad [5,30,"'*'flux-shell"]'* ]]
    [[ "$output" == *"good rc=0"* ]]
    [[ "$output" == *'after-good [7,60,"/x/conf-shell"]'* ]]
    [[ "$output" == *"good2 rc=0"* ]]
    [[ "$output" == *'args-win [3,0,"/x/arg-shell"]'* ]]
    # max-kill-timeout with a kill-timeout: both taken
    [[ "$output" == *"pair rc=0"* ]]
    [[ "$output" == *"badarg rc=1"* ]]
    [[ "$output" == *"cairn-exec: refused: invalid kill-signal: SIGFOO"* ]]
}

# [exec] imp is accepted (cairnd runs through its own flux.imp, trust.h):
# only sdexec and Flux's own prolog are refused
@test "[exec] service = sdexec and Flux's own prolog: refused, each named; imp is not" {
    cairnd_start '{}'
    flux_conf '[exec]
imp = "/usr/libexec/flux/flux-imp"
service = "sdexec"
[job-manager.prolog]
command = ["true"]'
    run in_flux 'flux module stats job-exec; echo "rc=$?"'
    echo "$output"
    [[ "$output" != *'imp'* ]]
    [[ "$output" == *'[exec] service = "sdexec": not supported'* ]]
    [[ "$output" == *"[job-manager.prolog] is set"* ]]
    [[ "$output" != *"rc=0"* ]]
}

@test "perilog.so loaded as well: refused at module load" {
    cairnd_start '{}'
    flux_conf '[job-manager]
plugins = [ { load = "perilog.so" } ]'
    run in_flux 'flux module stats job-exec; echo "rc=$?"'
    echo "$output"
    [[ "$output" == *"perilog.so: every prolog and epilog would run twice"* ]]
    [[ "$output" != *"rc=0"* ]]
}

# issue 37: job-exec's final release says "all"; cairn's said "0-3"
@test "the final release of a whole job says ranks all, as job-exec's" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit -N4 true)
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog -f json $id | jq -c "select(.name == \"release\") | .context"'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = '{"ranks":"all","final":true}' ]
}
