#!/usr/bin/env bats
# The views of issue 16: `cairn jobs` (columns, --json, -o FORMAT), `cairn
# show`, the hosts of `cairn ranks`, and the Flux and Slurm table of
# cairn(1). Each test starts its own cairnd with the config it needs.
load lib

S=${CAIRN_SOURCE_DIR:?CAIRN_SOURCE_DIR must name the source directory}

setup() {
    T=$BATS_TEST_TMPDIR
    U=$(id -un)
    unset COLUMNS # the width of no terminal, unless a test sets it
}

# The widest line of stdin, in characters (awk may count bytes).
widest() {
    python3 -c 'import sys
print(max(len(l) for l in sys.stdin.buffer.read().decode().splitlines()))'
}

teardown() {
    if [ -n "${STREAM_PID:-}" ]; then
        kill "$STREAM_PID" 2>/dev/null || true
        wait "$STREAM_PID" 2>/dev/null || true
    fi
    # a test that failed half-way leaves jobs running: end them
    local id
    for id in $(cairn jobs -n -d 2>/dev/null | awk '{ print $1 }'); do
        [ -n "${CAIRND_PID:-}" ] && cairn cancel "$id" 2>/dev/null || true
        wait_event "$id" 10 clean 2>/dev/null || true
    done
    cairnd_stop
    assert_no_leftover
}


# Copy the journal of $STATEDIR into the new state dir $1 through mdb_dump,
# its events edited on the way: "hosts H" sets the hosts of every drain
# event to H (none: removes them, as in a journal of an older cairnd);
# "no-shell-intent" drops the shell's proc-intent (the fold then fails).
copy_journal_edit() {
    mkdir -m 700 -p "$1/journal"
    mdb_dump -a "$STATEDIR/journal" | python3 -c '
import re, sys
what, arg = sys.argv[1], sys.argv[2]
key = None
for l in sys.stdin:
    if not l.startswith(" "):
        sys.stdout.write(l)
        continue
    if key is None:
        key = l
        continue
    try:
        v = bytes.fromhex(l.strip()).decode()
    except ValueError:
        v = ""
    if what == "hosts" and "\"name\":\"drain\"" in v:
        v = re.sub(r",\"hosts\":\"[^\"]*\"",
                   ",\"hosts\":\"%s\"" % arg if arg else "", v)
        l = " " + v.encode().hex() + "\n"
    if not (what == "no-shell-intent" and "\"name\":\"proc-intent\"" in v
            and "\"phase\":\"shell\"" in v):
        sys.stdout.write(key + l)
    key = None' "$2" "${3:-}" >"$T/dump.txt"
    mdb_load -f "$T/dump.txt" "$1/journal" 2>/dev/null
}

# Wait until every shell of job $1 runs (spawned, not only intended).
wait_running() {
    local i
    for i in $(seq 1 200); do
        cairn ranks --json "$1" 2>/dev/null | jq -s -e \
            'length > 0 and all(.shell.state == "running")' >/dev/null && return 0
        sleep 0.05
    done
    echo "job $1: shells not running: $(cairn ranks "$1")" >&2
    return 1
}

# The default table with the RUNTIME cells ("0.3s") as "N.Ns".
jobs_table() {
    cairn jobs "$@" | sed -E 's/  [0-9]\.[0-9]s /  N.Ns /'
}

@test "jobs: ID, USER, STATE, RESULT, EXIT, RANKS, RUNTIME, COMMAND for each kind of end" {
    cairnd_start '{"release-after": 0}'
    cairn run --id 11 -N 2 -- true
    run cairn run --id 12 -- sh -c 'exit 3'
    [ "$status" -eq 3 ]
    run cairn run --id 13 -- sh -c 'kill -9 $$'
    [ "$status" -eq 137 ]
    run cairn run --id 14 -t 1s -- sleep 30
    [ "$status" -eq 142 ]
    cairn run --detach --id 15 -- sleep 30
    wait_event 15 10 start
    cairn cancel 15
    wait_event 15 10 clean
    # a job of a user with no name: cairnd ends it at once, it never starts
    ! getent passwd 4242424 >/dev/null || skip "uid 4242424 has a name here"
    start_job 16 4242424 '["true"]'
    wait_event 16 10 clean
    cairn run --detach --id 17 -N 3 -- sleep 30
    wait_event 17 10 start
    uw=$((${#U} > 7 ? ${#U} : 7))
    row() { printf "%-2s  %-${uw}s  %-5s  %-9s  %-4s  %-7s  %-7s  %s\n" "$@"; }
    run jobs_table -a
    [ "$status" -eq 0 ]
    [ "$output" = "$(row ID USER STATE RESULT EXIT RANKS RUNTIME COMMAND
        row ƒC "$U" done completed 0 "2 (0-1)" N.Ns true
        row ƒD "$U" done failed 3 "1 (0)" N.Ns "sh -c 'exit 3'"
        row ƒE "$U" done failed 137 "1 (0)" N.Ns "sh -c 'kill -9 \$\$'"
        row ƒF "$U" done timeout 142 "1 (0)" N.Ns "sleep 30"
        row ƒG "$U" done canceled 143 "1 (0)" N.Ns "sleep 30"
        row ƒH 4242424 done failed - "3 (0-2)" - true
        row ƒJ "$U" run - - "3 (0-2)" N.Ns "sleep 30")" ] || { echo "$output"; false; }
    # active jobs only by default; columns as wide as their cells
    uw=$((${#U} > 4 ? ${#U} : 4))
    row() { printf "%-2s  %-${uw}s  %-5s  %-6s  %-4s  %-7s  %-7s  %s\n" "$@"; }
    run jobs_table
    [ "$output" = "$(row ID USER STATE RESULT EXIT RANKS RUNTIME COMMAND
        row ƒJ "$U" run - - "3 (0-2)" N.Ns "sleep 30")" ] || { echo "$output"; false; }
    # the runtime of the timed-out job is its second; a running one's grows
    run cairn jobs -n -o '{runtime}' 14
    [[ "$output" =~ ^(0\.9|1\.)[0-9]*$ ]]
    a=$(cairn jobs -n -o '{runtime}' 17)
    sleep 0.2
    b=$(cairn jobs -n -o '{runtime}' 17)
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b >= a + 0.2) }'
    cairn cancel 17
}

@test "jobs -d, -n, JOBID operands in any form, --state" {
    cairnd_start '{"release-after": 0}'
    cairn run --id 21 -- true
    run cairn run --id 22 -- false
    cairn run --detach --id 23 -- sleep 30
    wait_event 23 10 start
    uw=$((${#U} > 4 ? ${#U} : 4))
    row() { printf "%-2s  %-${uw}s  %-5s  %-9s  %-4s  %-5s  %-7s  %s\n" "$@"; }
    run jobs_table -a -d -n
    [ "$output" = "$(row 21 "$U" done completed 0 "1 (0)" N.Ns true
        row 22 "$U" done failed 1 "1 (0)" N.Ns false
        row 23 "$U" run - - "1 (0)" N.Ns "sleep 30")" ]
    # named jobs, finished or not, in the order given: decimal, F58, f58
    run cairn jobs -n -o '{id} {state}' 23 ƒN fP
    [ "$status" -eq 0 ]
    [ "$output" = "23 run
21 done
22 done" ]
    # an unknown one is reported; the others are shown all the same
    run cairn jobs -n -o '{id}' 21 999 22
    [ "$status" -eq 1 ]
    [ "$output" = "21
cairn jobs: no job 999 (ƒJE) in the journal of $STATEDIR
22" ]
    run cairn jobs bogus
    [ "$status" -eq 1 ]
    [[ "$output" == "cairn jobs: "*bogus* ]]
    run cairn jobs -n -d -o '{id}' --state done
    [ "$output" = "21
22" ]
    run cairn jobs -n -o '{id}' --state run
    [ "$output" = 23 ]
    run cairn jobs --state bogus
    [ "$status" -eq 2 ]
    [[ "$output" == *"--state: expected new, prolog, starting, held, run, cleanup, done or invalid, got 'bogus'"* ]]
    cairn cancel 23
}

@test "jobs: a job whose events do not fold is invalid, and shows what they say" {
    cairnd_start '{"release-after": 0}'
    cairn run --id 91 -N 2 -- sh -c 'exit 2' || true
    copy_journal_edit "$T/bad" no-shell-intent
    run "$B/cairn" --statedir "$T/bad" jobs -a -n -d -o '{id} {state} {username} {ranks} {result} {returncode} {command}'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "cairn jobs: job 91 in $T/bad: seq 4: proc-spawn: unknown execid $(events_named 91 proc-spawn | head -1 | jq -r .execid) (run cairn verify)" ] \
        || { echo "$output"; false; }
    [ "${lines[1]}" = "91 invalid $U 0-1 failed 2 sh -c 'exit 2'" ]
    run "$B/cairn" --statedir "$T/bad" jobs -n -o '{id}' --state invalid
    [[ "$output" == *$'\n'91 ]]
    run "$B/cairn" --statedir "$T/bad" show 91
    [ "$status" -eq 1 ]
    [[ "$output" == "cairn show: job 91 in $T/bad: seq 4: "*" (run cairn verify)" ]]
}

@test "jobs --json: the fields, one object a line, keys in Flux's spelling" {
    cairnd_start '{"release-after": 0}'
    run cairn run --id 31 -N 2 -- sh -c 'exit 3'
    cairn run --detach --id 32 -- sleep 30
    wait_event 32 10 start
    run cairn jobs -a --json
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 2 ]
    keys='["id","f58","username","userid","state","result","returncode","waitstatus","active","nranks","ranks","released","drained","nodelist","runtime","command","cwd","expiration","t_accept","t_start","t_finish","t_clean","nevents","last_event","t_last"]'
    for l in "${lines[@]}"; do
        [ "$(echo "$l" | jq -c keys_unsorted)" = "$keys" ]
    done
    echo "${lines[0]}" | jq -e --arg u "$U" --argjson uid "$(id -u)" \
        --arg h "$(hostname)" --arg cwd "$PWD" '.id == 31 and .f58 == "ƒY"
        and .username == $u and .userid == $uid and .state == "done"
        and .result == "failed" and .returncode == 3 and .waitstatus == 768
        and .active == false and .nranks == 2 and .ranks == "0-1"
        and .released == "0-1" and .drained == "" and .nodelist == $h
        and .command == "sh -c '"'exit 3'"'" and .cwd == $cwd
        and .expiration == 0 and .t_accept > 0
        and .t_accept <= .t_start and .t_start <= .t_finish
        and .t_finish <= .t_clean and .runtime == .t_finish - .t_start
        and .last_event == "clean" and .t_last == .t_clean and .nevents > 5'
    echo "${lines[1]}" | jq -e '.id == 32 and .state == "run" and .result == ""
        and .returncode == null and .waitstatus == null and .active
        and .t_finish == 0 and .t_clean == 0 and .runtime > 0'
    # the help lists the fields, the same as the keys
    [ "$(cairn jobs --help | sed -n '/the --json keys/,$p' | tail -n +2 \
        | xargs | tr ' ' '\n' | jq -R . | jq -sc .)" = "$keys" ]
    cairn cancel 32
}

@test "jobs -o FORMAT: {field}, widths, alignment, cuts, braces; errors name the field" {
    cairnd_start '{"release-after": 0}'
    cairn run --id 41 -N 2 -- true
    run cairn run --id 42 -- sh -c 'kill -9 $$'
    run cairn jobs -a -o '{id:>4} {f58:<4}|{state}|{result:>9}|{returncode:>3}|{ranks}|{command:.8}|{active}|{{{nranks}}}'
    [ "$status" -eq 0 ]
    [ "$output" = "  ID F58 |STATE|   RESULT|RETURNCODE|RANKS|COMMAND|ACTIVE|{NRANKS}
  41 ƒi  |done|completed|  0|0-1|true|false|{2}
  42 ƒj  |done|   failed|137|0|sh -c 'k|false|{1}" ]
    run cairn jobs -a -n -o '{id} {state} {result} {returncode}'
    [ "$output" = "41 done completed 0
42 done failed 137" ]
    # numbers as people write them; null as nothing
    run cairn jobs -n -o '[{expiration}] [{t_start}]' 41
    [[ "$output" =~ ^\[0\]\ \[[0-9]{10}(\.[0-9]{1,6})?\]$ ]]
    for bad in "{nope}@@unknown field 'nope'" \
        "{id:x}@@field 'id': bad spec ':x' (expected [<>]WIDTH[.MAX])" \
        "{id:4.}@@field 'id': bad spec ':4.' (expected [<>]WIDTH[.MAX])" \
        "{id:.0}@@field 'id': bad spec ':.0' (expected [<>]WIDTH[.MAX])" \
        "{}@@empty field name in '{}'" \
        "{id@@unmatched '{' (write '{{' for a brace)" \
        "a}b@@unmatched '}' (write '}}' for a brace)"; do
        run cairn jobs -o "${bad%%@@*}"
        [ "$status" -eq 2 ]
        [ "${lines[0]}" = "cairn jobs: --format: ${bad#*@@}" ] \
            || { echo "got: ${lines[0]}"; false; }
    done
    run cairn jobs --json -o '{id}'
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "cairn jobs: --json and --format exclude each other" ]
}

@test "jobs cuts COMMAND to the terminal's width, or to 40 characters" {
    cairnd_start '{"release-after": 0}'
    long="echo $(printf 'x%.0s' $(seq 1 60))"
    cairn run --id 51 -- sh -c "$long" >/dev/null
    full="sh -c '$long'"
    # no terminal: 39 characters and an ellipsis
    uw=$((${#U} > 4 ? ${#U} : 4))
    run jobs_table -a -n
    [ "$output" = "$(printf "%-2s  %-${uw}s  %-5s  %-9s  %-4s  %-5s  %-7s  %s\n" \
        ƒt "$U" done completed 0 "1 (0)" N.Ns "${full:0:39}…")" ]
    # -o has it all
    [ "$(cairn jobs -a -n -o '{command}')" = "$full" ]
    # COLUMNS, as a terminal's width: every line fits
    run env COLUMNS=70 "$B/cairn" --statedir "$STATEDIR" jobs -a
    [ "$(echo "$output" | widest)" -eq 70 ]
    [[ "${lines[1]}" =~ \ sh\ -c\ \'echo\ x+…$ ]]
    # a terminal: its width
    # (lib's script() is another thing: util-linux's, by its path)
    sc=$(type -P script) || skip "no script(1) to make a terminal"
    run "$sc" -q -c "stty cols 75; '$B/cairn' --statedir '$STATEDIR' jobs -a" /dev/null
    out=$(echo "$output" | tr -d '\r')
    [ "$(echo "$out" | widest)" -eq 75 ] || { echo "$out"; false; }
    [[ "$(echo "$out" | tail -1)" =~ \ sh\ -c\ \'echo\ x+…$ ]]
}

@test "show: one job on one screen, its phases, ranks and hosts, exceptions, drains, releases, posted events" {
    # per-rank epilogs that end one after the other; rank 1's fails
    cairnd_start '{"release-after": 0,
        "prolog": {"command": ["/bin/true"], "per-rank": true},
        "epilog": {"command": ["/bin/sh", "-c",
            "sleep 0.$((CAIRN_RANK * 4)); test $CAIRN_RANK != 1"],
            "per-rank": true}}'
    cmd="while [ ! -e $T/go ]; do sleep 0.05; done"
    start_job 61 "$(id -u)" "[\"sh\", \"-c\", \"$cmd\"]"
    wait_event 61 10 start
    cairn post 61 data-out path=/scratch/u1 "note=two words"
    touch "$T/go"
    wait_event 61 10 clean
    run cairn show 61
    [ "$status" -eq 0 ]
    out=$(echo "$output" | sed -E 's/[0-9]\.[0-9]{3}s/N.NNNs/g
        s/^(accepted +)[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\.[0-9]{3} [+-][0-9]{4}$/\1DATE/')
    [ "$out" = "job         61 (ƒ24)
user        $U ($(id -u))
state       done
result      completed
exit code   0 (exit 0)
command     sh -c '$cmd'
cwd         $T
ranks       0-2 (3)
hosts       node[0-2]
time limit  none
accepted    DATE
runtime     N.NNNs
clean       +N.NNNs

PHASE   START    END      STATUS
prolog  +N.NNNs  +N.NNNs  exit 0
shell   +N.NNNs  +N.NNNs  exit 0
epilog  +N.NNNs  +N.NNNs  exit 1

RANK  HOST   PROLOG  SHELL   EPILOG  DRAINED  RELEASED
0     node0  exit 0  exit 0  exit 0  no       yes
1     node1  exit 0  exit 0  exit 1  yes      yes
2     node2  exit 0  exit 0  exit 0  no       yes

EXCEPTION  TIME     SEVERITY  RANKS  NOTE
epilog     +N.NNNs  2         1      epilog failed on rank 1: exit 1

DRAINED  TIME     HOSTS  REASON
1        +N.NNNs  node1  epilog failed for job ƒ24: exit 1

RELEASED  TIME     FINAL
0         +N.NNNs  no
1         +N.NNNs  no
2         +N.NNNs  yes

EVENT     TIME     CONTEXT
data-out  +N.NNNs  path=/scratch/u1 note=\"two words\"" ] || { echo "$output"; false; }
    # the F58 id names the same job
    [ "$(cairn show ƒ24)" = "$output" ]
    run cairn show 999
    [ "$status" -eq 1 ]
    [ "$output" = "cairn show: no job 999 (ƒJE) in the journal of $STATEDIR" ]
    run cairn show
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == "cairn show: expected one JOBID" ]]
}

@test "show --json: the same as one object" {
    cairnd_start '{"release-after": 0,
        "epilog": {"command": ["/bin/sh", "-c", "test $CAIRN_RANK != 1"],
                   "per-rank": true}}'
    start_job 62 "$(id -u)" '["true"]'
    wait_event 62 10 clean
    run cairn show --json 62
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    # the keys of jobs --json, then show's own
    [ "$(echo "$output" | jq -c '[keys_unsorted[]][0:25]')" = \
        "$(cairn jobs --json 62 | jq -c keys_unsorted)" ]
    [ "$(echo "$output" | jq -c '[keys_unsorted[]][25:]')" = \
        '["phases","per_rank","exceptions","drains","releases","late","events"]' ]
    echo "$output" | jq -e '.id == 62 and .nodelist == "node[0-2]"
        and ([.phases[].name] == ["shell", "epilog"])
        and .phases[1].status == 256 and .phases[1].t_finish > 0
        and ([.per_rank[] | .host] == ["node0", "node1", "node2"])
        and .per_rank[1].drained and .per_rank[1].epilog.status == 256
        and (.per_rank[1].drain_reason | startswith("epilog failed"))
        and .per_rank[0].shell.timed_out == false
        and (.exceptions | length == 1 and .[0].type == "epilog"
             and .[0].severity == 2 and .[0].ranks == "1"
             and .[0].timestamp > 0)
        and .drains == [{"timestamp": .drains[0].timestamp, "ranks": "1",
                         "hosts": "node1",
                         "reason": "epilog failed for job ƒ25: exit 1"}]
        and (.releases | map(.ranks) | sort == ["0", "1", "2"])
        and (.releases | map(.final) | sort == [false, false, true])
        and .events == []'
}

@test "show: an active job, its time limit, a user with no name" {
    cairnd_start '{"release-after": 0}'
    cairn run --detach --id 71 -N 2 -t 1h -- sleep 30
    wait_running 71
    run cairn show 71
    [ "$status" -eq 0 ]
    [ "${lines[2]}" = "state       run" ]
    [ "${lines[3]}" = "result      -" ]
    [ "${lines[4]}" = "exit code   -" ]
    [[ "${lines[9]}" =~ ^time\ limit\ \ 1h00m\ \(until\ [0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9:]{8}\.[0-9]{3}\ [+-][0-9]{4}\)$ ]]
    [[ "${lines[11]}" =~ ^runtime\ +[0-9]\.[0-9]{3}s$ ]]
    [ "${lines[12]}" = "clean       -" ]
    [[ "$output" =~ $'\n'shell\ +\+[0-9]\.[0-9]{3}s\ +-\ +-$'\n' ]]
    [[ "$output" =~ $'\n'0\ +$(hostname)\ +-\ +running\ +-\ +no\ +no$'\n' ]]
    cairn cancel 71
    wait_event 71 10 clean
    run cairn show 71
    [ "${lines[3]}" = "result      canceled" ]
    [ "${lines[4]}" = "exit code   143 (killed by SIGTERM)" ]
    [[ "$output" =~ $'\n'cancel\ +\+[0-9]\.[0-9]{3}s\ +0\ +-\ +-$'\n' ]]
    ! getent passwd 4242424 >/dev/null || skip "uid 4242424 has a name here"
    start_job 72 4242424 '["true"]'
    wait_event 72 10 clean
    run cairn show 72
    [ "${lines[1]}" = "user        4242424" ]
    [ "${lines[3]}" = "result      failed" ]
    [ "${lines[11]}" = "runtime     -" ]
}

@test "ranks and show: a drain's hosts are its event's, else its ranks' in R" {
    cairnd_start '{"release-after": 0,
        "epilog": {"command": ["/bin/sh", "-c", "test $CAIRN_RANK != 1"],
                   "per-rank": true}}'
    start_job 81 "$(id -u)" '["true"]'
    wait_event 81 10 clean
    run cairn ranks 81
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^RANK\ +HOST\ +PROLOG\ +SHELL\ +EPILOG\ +DRAINED\ +RELEASED\ +NOTE$ ]]
    [[ "${lines[2]}" =~ ^1\ +node1\ +-\ +exit\ 0\ pid\ [0-9]+\ +exit\ 1\ pid\ [0-9]+\ +yes\ +yes\ +epilog\ failed\ for\ job\ ƒ2Q:\ exit\ 1$ ]]
    [ "$(cairn ranks --json 81 | jq -r .host | paste -sd,)" = node0,node1,node2 ]
    # the event names the hosts: shown as they are
    copy_journal_edit "$T/other" hosts elsewhere7
    run "$B/cairn" --statedir "$T/other" show 81
    [[ "$output" == *$'\n'"1        +"*"  elsewhere7  epilog failed for job ƒ2Q: exit 1"* ]]
    # an older journal's drain has no hosts: R's hosts of its ranks
    copy_journal_edit "$T/older" hosts ""
    [ -z "$(mdb_dump -p -s events "$T/older/journal" | grep hosts)" ]
    run "$B/cairn" --statedir "$T/older" show --json 81
    [ "$(echo "$output" | jq -c '.drains[0] | [.ranks, .hosts]')" = '["1","node1"]' ]
    run "$B/cairn" --statedir "$T/older" verify
    [ "$status" -eq 0 ]
}

@test "cairn(1) maps Flux's and Slurm's commands to cairn commands that exist" {
    cmds=$("$B/cairn" --help | awk '/^Commands:/ { on = 1; next }
        on && /^$/ { exit } on { print $1 }')
    section=$(sed -e 's/\\-/-/g' "$S/man/cairn.1" \
        | awk '/^\.SH/ { on = ($0 ~ /FOR FLUX AND SLURM USERS/) } on')
    [ -n "$section" ]
    for w in "flux run" srun "flux submit" sbatch scancel "flux jobs" squeue \
        sacct "scontrol show job" "flux job attach" sattach \
        "flux post-job-event" "sinfo -R"; do
        [[ "$section" == *"$w"* ]] || { echo "lacks $w"; false; }
    done
    used=$(echo "$section" | grep -o 'cairn [a-z-]*' | awk '{ print $2 }' | sort -u)
    [ "$(echo "$used" | wc -l)" -ge 8 ]
    for c in $used; do
        echo "$cmds" | grep -qx "$c" || { echo "cairn $c is no command"; false; }
    done
}
