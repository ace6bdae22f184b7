#!/usr/bin/env bats
# Job shells under Flux (issue 37): cairn-exec.so learns of each
# flux-shell's end (cairnd's shell-end events) and does with it what Flux's
# job-exec does: a killed shell is reported to the leader shell, a shell
# that ends before the first start barrier or never reaches it ends the
# job, and shells left running after the leader's exit are timed. Each test
# hung until its timeout before (FLUX_TIMEOUT bounds it).
load lib

setup() {
    D=$BATS_TEST_TMPDIR
    FLUX_TIMEOUT=60
    # The job shell: flux-shell, unless a file of $D says otherwise for
    # this rank: exit-before-R (exit 1 before flux-shell runs),
    # hang-before-R (never start it), linger-after-R (live that many
    # seconds after flux-shell has exited), say-R (write its contents to
    # stderr first, then make said-R), await-R (before anything else, wait
    # up to 30 s for said-N, N the rank in await-R).
    SHELL_WRAP=$(script shell.sh <<SH
#!/bin/sh
r=\$CAIRN_RANK
if [ -e "$D/await-\$r" ]; then
    n=0
    while [ ! -e "$D/said-\$(cat "$D/await-\$r")" ] && [ \$n -lt 600 ]; do
        sleep 0.05; n=\$((n + 1))
    done
fi
[ -e "$D/say-\$r" ] && echo "shell rank \$r says \$(cat "$D/say-\$r")" >&2 &&
    touch "$D/said-\$r"
[ -e "$D/exit-before-\$r" ] && exit 1
[ -e "$D/hang-before-\$r" ] && exec sleep 300
$(dirname "$FLUX")/../libexec/flux/flux-shell "\$@"
rc=\$?
[ -e "$D/linger-after-\$r" ] && sleep "\$(cat "$D/linger-after-\$r")"
exit \$rc
SH
)
}

teardown() {
    cairnd_stop
    assert_no_leftover
}

# The only cairn job (its id, decimal).
cairn_job() {
    cairn jobs -a --json | jq -r .id | tail -n 1
}

@test "a shell killed by a signal on shell rank 1 hung the job: the leader is told (lost-shell)" {
    cairnd_start '{}'
    # flux-core t2614: the task on rank 1 kills its own shell; the leader
    # waits for that shell's tasks-complete until job-exec says it is lost
    s=$(script kill-shell.sh <<'SH'
#!/bin/bash
if test "$FLUX_TASK_RANK" -eq 1; then
    sleep 1 # both shells past their start barriers
    kill -9 $PPID
    exit
fi
sleep 30
SH
)
    run in_flux "t0=\$(date +%s)
                 flux run -N2 -o exit-timeout=1s $s; echo rc=\$?
                 echo took=\$((\$(date +%s) - t0))
                 flux jobs -a -no '{result}'"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *FAILED* ]]
    took=$(echo "$output" | sed -n 's/^took=//p')
    [ "$took" -lt 25 ] # not the tasks' sleep 30 that ended it
    # the leader's doom plugin: rank 1's shell, reported lost
    [[ "$output" == *"shell rank 1"* ]]
    end=$(events_named "$(cairn_job)" shell-end | jq -c 'select(.rank == 1)')
    [ "$(echo "$end" | jq .status)" -eq 9 ]
    [ "$(echo "$end" | jq '.["shell-rank"]')" -eq 1 ]
}

@test "the leader shell killed by a signal hung the job: fatal exception" {
    cairnd_start '{}'
    s=$(script kill-leader.sh <<'SH'
#!/bin/bash
if test "$FLUX_TASK_RANK" -eq 0; then
    sleep 1
    kill -9 $PPID
    exit
fi
sleep 300
SH
)
    run in_flux "flux run -N2 $s; echo rc=\$?
                 flux jobs -a -no '{result}'
                 flux job eventlog \$(flux job last) | grep exception"
    [ "$status" -eq 0 ]
    [[ "$output" == *FAILED* ]]
    [[ "$output" == *"type=\"exec\" severity=0"*"shell rank 0 (on $(hostname)): Killed"* ]]
}

# flux-core's t2614, failing one run in three: rank 1's task SIGKILLs its
# own shell and exits a moment later. The task was still in the shell's
# session when cairnd saw the shell's end, and cairn's rule for shells that
# leave tasks behind raised a fatal exception of its own (the job's tasks
# then died of SIGTERM, flux run 143) where job-exec's lost-shell handling
# ends it through the leader's exit-timeout (flux run 1). Here the task
# stays half a second, every time. (The leader itself sometimes exits 1
# at once when its peer is killed; that fails the job as job-exec would.)
@test "a task that kills its own shell and lingers: the job fails through its leader, as with job-exec" {
    cairnd_start '{}'
    local s=$D/killshell.sh
    cat >"$s" <<'SH'
#!/bin/bash
if test $FLUX_TASK_RANK -eq 1; then
    kill -9 $PPID
    sleep 0.5
    exit
fi
sleep 30
SH
    chmod +x "$s"
    run in_flux "flux run -n2 -N2 -o exit-timeout=1s $s; echo rc=\$?
                 flux job eventlog \$(flux job last) | grep exception"
    echo "$output"
    [ "$status" -eq 0 ]
    # the job failed as a job, not with its tasks killed (143): through
    # the leader's exit-timeout, or (a race of flux-shell's own) the
    # leader exiting 1 when its peer went; never the leftover rule's
    # exception for the killed shell
    [[ "$output" == *"rc=1"* ]]
    [[ "$output" != *"(killed by signal 9) while"* ]]
}

@test "a shell that exited before the first start barrier hung the job" {
    cairnd_start '{}'
    touch "$D/exit-before-1"
    run in_flux "flux run -N2 --setattr=system.exec.job_shell=$SHELL_WRAP true
                 echo rc=\$?
                 flux job eventlog \$(flux job last) | grep exception"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *"severity=0"*"$(hostname) (rank 1) terminated before first barrier"* ]]
}

# issue 37: a shell's own stdout and stderr (an IMP's refusal, a shell's
# fatal error) never reached the user; job-exec posts them as exec.eventlog
# "log" events, which flux run prints
@test "a shell's own stderr reaches the user, as exec.eventlog log events" {
    cairnd_start '{}'
    echo hello >"$D/say-1"
    echo "not flux-shell" >"$D/say-0"
    touch "$D/exit-before-0"
    # rank 0's end fails the job and kills rank 1's shell: only once rank 1
    # has spoken (else a slow machine kills it before its first word)
    echo 1 >"$D/await-0"
    run in_flux "flux run -N2 --setattr=system.exec.job_shell=$SHELL_WRAP true
                 echo rc=\$?
                 flux job eventlog -p exec \$(flux job last) | grep ' log '"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    # what flux run printed, and the events, once each
    [[ "$output" == *"shell.sh[0]: stderr: shell rank 0 says not flux-shell"* ]]
    [ "$(grep -c 'log component="shell.sh" stream="stderr" rank="0" data="shell rank 0 says not flux-shell\\n"' <<<"$output")" -eq 1 ]
    [ "$(grep -c 'log component="shell.sh" stream="stderr" rank="1" data="shell rank 1 says hello\\n"' <<<"$output")" -eq 1 ]
}

@test "a shell that never reached the start barrier hung the job: [exec] barrier-timeout" {
    cairnd_start '{}'
    flux_conf '[exec]
barrier-timeout = "2s"'
    touch "$D/hang-before-1"
    run in_flux "flux run -N2 --setattr=system.exec.job_shell=$SHELL_WRAP true
                 echo rc=\$?
                 flux job eventlog \$(flux job last) | grep exception
                 flux resource drain -no '{ranks} {reason}'"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *"severity=0"*"start barrier timeout waiting for 1/2 nodes (rank 1)"* ]]
    [[ "$output" == *"1 job "*" start timeout: possible node hang"* ]]
}

@test "shells still running after the leader's exit kept the job in RUN: [exec] shell-exit-timeout" {
    cairnd_start '{}'
    flux_conf '[exec]
shell-exit-timeout = "2s"'
    echo 300 >"$D/linger-after-1"
    run in_flux "flux run -N2 --setattr=system.exec.job_shell=$SHELL_WRAP true
                 echo rc=\$?
                 id=\$(flux job last)
                 flux job eventlog \$id | grep exception
                 flux job eventlog -p exec \$id | grep shell-exit"
    [ "$status" -eq 0 ]
    [[ "$output" != *"rc=0"* ]]
    [[ "$output" == *"severity=0"*"job shells still active on $(hostname) (rank 1) 2s after leader shell exit"* ]]
    [[ "$output" == *"shell-exit rank=0 wait_status=0 active_ranks=\"1\""* ]]
}

@test "shell-exit-timeout none: shell-exit was not posted; the job waits for its last shell" {
    cairnd_start '{}'
    flux_conf '[exec]
shell-exit-timeout = "none"'
    echo 3 >"$D/linger-after-1"
    run in_flux "flux run -N2 --setattr=system.exec.job_shell=$SHELL_WRAP true
                 echo rc=\$?
                 id=\$(flux job last)
                 flux job eventlog \$id | cut -d' ' -f2 | paste -sd, -
                 flux job eventlog -p exec \$id | grep shell-exit"
    [ "$status" -eq 0 ]
    [[ "$output" == *"rc=0"* ]]
    [[ "$output" != *exception* ]]
    [[ "$output" == *"shell-exit rank=0 wait_status=0 active_ranks=\"1\""* ]]
}

@test "exec.eventlog lacked starting and shell-exit" {
    cairnd_start '{}'
    run in_flux 'id=$(flux submit -N2 true)
                 flux job wait-event -t 30 $id clean >/dev/null
                 flux job eventlog -p exec $id | cut -d" " -f2 | paste -sd, -'
    [ "$status" -eq 0 ]
    [[ "$output" == init,starting,* ]]
    [[ "$output" == *shell-exit*complete,done ]]
}

@test "a bad [exec] barrier-timeout or shell-exit-timeout is refused at load, naming the key" {
    cairnd_start '{}'
    run in_flux "flux module remove job-exec
                 printf '[exec]\nbarrier-timeout = \"soon\"\n' | flux config load
                 flux module load --name=job-exec $B/cairn-exec.so statedir=$STATEDIR
                 echo rc=\$?
                 printf '[exec]\nshell-exit-timeout = 5\n' | flux config load
                 flux module load --name=job-exec $B/cairn-exec.so statedir=$STATEDIR
                 echo rc=\$?
                 flux dmesg | grep cairn-exec"
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | grep -c '^rc=0')" -eq 0 ]
    # job-exec's messages (flux-core's t2406 and t2417 grep them)
    [[ "$output" == *"cairn-exec: refused: invalid duration 'soon' specified for exec.barrier-timeout"* ]]
    [[ "$output" == *"cairn-exec: refused: error reading config value exec.shell-exit-timeout"* ]]
}

@test "a module reload after the leader's exit: the shell-exit timer starts again from the replayed end" {
    cairnd_start '{}'
    flux_conf '[exec]
shell-exit-timeout = "4s"'
    echo 300 >"$D/linger-after-1"
    run in_flux "id=\$(flux submit -N2 --setattr=system.exec.job_shell=$SHELL_WRAP true)
                 flux job wait-event -p exec -t 30 \$id shell-exit >/dev/null
                 flux module remove job-exec
                 flux module load --name=job-exec $B/cairn-exec.so statedir=$STATEDIR
                 flux job wait-event -t 30 \$id clean >/dev/null
                 flux job eventlog \$id | grep exception
                 flux job eventlog -p exec \$id | cut -d' ' -f2 | paste -sd, -"
    [ "$status" -eq 0 ]
    # one fatal exception, from the timer armed again after the reload
    [ "$(echo "$output" | grep -c 'exception')" -ge 1 ]
    [ "$(echo "$output" | grep -c 'severity=0')" -eq 1 ]
    [[ "$output" == *"job shells still active on $(hostname) (rank 1) 4s after leader shell exit"* ]]
    # shell-exit once, not again from the replay
    [ "$(echo "$output" | tail -n 1 | tr , '\n' | grep -c '^shell-exit$')" -eq 1 ]
}
