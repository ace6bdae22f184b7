#!/usr/bin/env bats
# cairn-protocol(7) against a real cairnd (issue 13): the session of its
# EXAMPLES section is replayed line by line, with the configuration the page
# shows, and every response must be the one the page prints; the page names
# every topic and every errno the code sends.
load lib

S=${CAIRN_SOURCE_DIR:?CAIRN_SOURCE_DIR must name the source directory}
PAGE=$S/man/cairn-protocol.7

# The text between the roff comments '.\" $1 begin' and '.\" $1 end' of
# the page $2 (default: cairn-protocol.7), roff requests left out and
# escapes undone, except the italics (\fI...\fR) that the replay reads as
# "varies". Lines that are not part of the block are printed empty, so
# that line numbers are the page's.
page_block() {
    awk -v b=".\\\\\" $1 begin" -v e=".\\\\\" $1 end" '
        $0 == e { on = 0 }
        { print (on && !/^\./) ? $0 : "" }
        $0 == b { on = 1 }' "${2:-$PAGE}" \
        | sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\(dq/"/g' -e 's/\\&//g'
}

# Replay the transcript in file $2 (page_block output: line numbers are
# the page's) against the cairnd socket $1.
#   N> LINE     send LINE on connection N (opened on first use)
#   N> (close)  close connection N
#   N< JSON     the next line read on connection N must match JSON
#   indented lines continue the one above; # lines are comments.
# In expected lines \fIX\fR is a wildcard: a whole value (any value of X's
# type) or part of a string (any text). In sent lines it stands for the
# value of the key before it, which must be "userid" (our uid).
# Fails on the first mismatch, on a response the transcript does not
# show (checked before each send and for a while at the end), and on a
# timeout; says which transcript line and what differs.
replay() {
    python3 - "$1" "$2" <<'PY'
import json, os, re, select, socket, sys, time

TIMEOUT = 30.0  # per response: prologs and shells start on a busy machine
QUIET = 0.5     # how long nothing more may arrive at the end
ITALIC = re.compile(r"\\fI(.*?)\\f[RP]")


def fail(msg):
    print("replay: " + msg, file=sys.stderr)
    sys.exit(1)


# ---- parse the transcript ----
entries = []  # [lineno, conn, dir, text]
for n, line in enumerate(open(sys.argv[2]).read().split("\n"), 1):
    if not line.strip() or line.startswith("#"):
        continue
    if line[0] in " \t":
        if not entries:
            fail("line %d: continuation of nothing" % n)
        entries[-1][3] += line.strip()
        continue
    m = re.match(r"(\d+)([<>]) (.*)$", line)
    if not m:
        fail("line %d: not 'N> ...', 'N< ...', '#...' or indented: %r" % (n, line))
    entries.append([n, int(m.group(1)), m.group(2), m.group(3).strip()])
if not entries:
    fail("empty transcript")


def in_string(s, pos):
    """Is s[pos] inside a JSON string?"""
    inside, i = False, 0
    while i < pos:
        if s[i] == "\\" and inside:
            i += 2
            continue
        if s[i] == '"':
            inside = not inside
        i += 1
    return inside


ANY_VALUE = "\ue000"  # + index into kinds: a whole value of that type
ANY_TEXT = "\ue001"   # inside a string: any text


def expected(text, n):
    kinds = []

    def sub(m):
        if in_string(text, m.start()):
            return ANY_TEXT
        try:
            kinds.append(type(json.loads(m.group(1))))
        except ValueError:
            fail("line %d: italic %r is not a JSON value" % (n, m.group(1)))
        return json.dumps(ANY_VALUE + str(len(kinds) - 1))

    try:
        return json.loads(ITALIC.sub(sub, text)), kinds
    except ValueError as e:
        fail("line %d: expected response is not JSON (%s): %s" % (n, e, text))


def request(text, n):
    def sub(m):
        if not re.search(r'"userid":\s*$', text[: m.start()]):
            fail("line %d: an italic in a request must be a userid" % n)
        return str(os.getuid())

    return ITALIC.sub(sub, text)


def compare(exp, act, kinds, path=""):
    """None if act matches exp, else what differs."""
    if isinstance(exp, str) and exp.startswith(ANY_VALUE):
        t = kinds[int(exp[1:])]
        if type(act) is not t:
            return "%s: expected a %s, got %s" % (path or ".", t.__name__, json.dumps(act))
        return None
    if isinstance(exp, str) and ANY_TEXT in exp and isinstance(act, str):
        pat = ".*".join(re.escape(p) for p in exp.split(ANY_TEXT))
        if re.fullmatch(pat, act, re.S):
            return None
        return "%s: expected %r, got %r" % (path or ".", exp.replace(ANY_TEXT, "..."), act)
    if type(exp) is not type(act):
        return "%s: expected %s, got %s" % (path or ".", json.dumps(exp), json.dumps(act))
    if isinstance(exp, dict):
        if set(exp) != set(act):
            return "%s: expected keys %s, got %s" % (path or ".", sorted(exp), sorted(act))
        for k in exp:
            d = compare(exp[k], act[k], kinds, path + "." + k)
            if d:
                return d
        return None
    if isinstance(exp, list):
        if len(exp) != len(act):
            return "%s: expected %d items, got %d" % (path or ".", len(exp), len(act))
        for i, (e, a) in enumerate(zip(exp, act)):
            d = compare(e, a, kinds, "%s[%d]" % (path or ".", i))
            if d:
                return d
        return None
    if exp != act:
        return "%s: expected %s, got %s" % (path or ".", json.dumps(exp), json.dumps(act))
    return None


# ---- connections ----
class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf = b""
        self.eof = False

    def fill(self, timeout):
        """Read what comes within timeout; False if nothing did."""
        if self.eof or not select.select([self.s], [], [], max(timeout, 0))[0]:
            return False
        data = self.s.recv(65536)
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if not self.fill(deadline - time.monotonic()) and (
                self.eof or time.monotonic() >= deadline
            ):
                return None
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def unexpected(self, timeout):
        """A line that arrives within timeout, or None."""
        return self.line(timeout) if timeout > 0 or b"\n" in self.buf else None


conns = {}
for n, c, d, text in entries:
    if d == ">":
        if text == "(close)":
            if c not in conns:
                fail("line %d: connection %d is not open" % (n, c))
            extra = conns[c].unexpected(0.05)
            if extra is not None:
                fail("line %d: connection %d: response not in the transcript before the close: %s" % (n, c, extra))
            conns.pop(c).s.close()
            continue
        if c not in conns:
            conns[c] = Conn(sys.argv[1])
        extra = conns[c].unexpected(0.05)
        if extra is not None:
            fail("line %d: connection %d: response not in the transcript: %s" % (n, c, extra))
        line = request(text, n)
        conns[c].s.sendall(line.encode() + b"\n")
        print("%d> %s" % (c, line))
    else:
        if c not in conns:
            fail("line %d: connection %d is not open" % (n, c))
        exp, kinds = expected(text, n)
        got = conns[c].line(TIMEOUT)
        if got is None:
            fail("line %d: connection %d: %s, expected %s" % (
                n, c, "closed by cairnd" if conns[c].eof else "no response in %gs" % TIMEOUT, text))
        try:
            act = json.loads(got)
        except ValueError:
            fail("line %d: connection %d: response is not JSON: %s" % (n, c, got))
        diff = compare(exp, act, kinds)
        if diff:
            fail("line %d: connection %d: %s\n  expected: %s\n  got:      %s" % (n, c, diff, text, got))
        print("%d< %s" % (c, got))
time.sleep(QUIET)
for c, conn in conns.items():
    extra = conn.unexpected(0.05)
    if extra is not None:
        fail("connection %d: response after the end of the transcript: %s" % (c, extra))
print("replay: %d lines matched" % len(entries))
PY
}

setup() {
    page_block config | sed '/^$/d' >"$BATS_TEST_TMPDIR/conf.json"
    page_block transcript >"$BATS_TEST_TMPDIR/transcript"
    grep -q . "$BATS_TEST_TMPDIR/conf.json"
    grep -q . "$BATS_TEST_TMPDIR/transcript"
    cairnd_start "$(cat "$BATS_TEST_TMPDIR/conf.json")"
}

teardown() {
    # a replay that failed half-way leaves job 42 running: end it
    if [ -n "${CAIRND_PID:-}" ] && cairn jobs -n -d 2>/dev/null | grep -q '^42 '; then
        cairn cancel 42 2>/dev/null || true
        for _ in $(seq 1 200); do
            cairn jobs -n -d 2>/dev/null | grep -q '^42 ' || break
            sleep 0.05
        done
    fi
    cairnd_stop
    assert_no_leftover
}

@test "the session of cairn-protocol(7) replays against a real cairnd" {
    run replay "$STATEDIR/cairn.sock" "$BATS_TEST_TMPDIR/transcript"
    echo "$output"
    [ "$status" -eq 0 ]
    # what it covers, so that an edit of the page cannot drop it unnoticed
    t=$BATS_TEST_TMPDIR/transcript
    grep -q '"errnum":17' "$t"                   # duplicate start: EEXIST
    grep -q '"type":"reattached"' "$t"
    grep -q '"since":1' "$t"
    grep -q '"errnum":2,' "$t"                   # reattach unknown id: ENOENT
    grep -q '"final":true' "$t"
    grep -q '"errnum":71' "$t"                   # not JSON: EPROTO
    grep -q '"topic":"list"' "$t"
    grep -q '"topic":"stats"' "$t"
    grep -q '"topic":"jobs"' "$t"
    grep -q '"topic":"job-events"' "$t"
    grep -q '"events":true' "$t"
    grep -q '"type":"accepted"' "$t"
    # the malformed line did not hurt cairnd, and the journal is sound
    kill -0 "$CAIRND_PID"
    run cairn list --json
    [ "$status" -eq 0 ]
    [ "$output" = '{"jobs":[]}' ]
    run cairn verify --json
    [ "$status" -eq 0 ]
    echo "$output" | jq -e '.ok and .jobs == 2 and .problems == 0'
}

@test "the replay fails when a response differs from the page" {
    # finish status 15 -> 9: the replay must catch it and say where
    sed 's/"status":15/"status":9/' "$PAGE" >"$BATS_TEST_TMPDIR/wrong.7"
    n=$(grep -n '"status":9' "$BATS_TEST_TMPDIR/wrong.7" | cut -d: -f1)
    [ -n "$n" ]
    page_block transcript "$BATS_TEST_TMPDIR/wrong.7" >"$BATS_TEST_TMPDIR/wrong"
    run replay "$STATEDIR/cairn.sock" "$BATS_TEST_TMPDIR/wrong"
    echo "$output"
    [ "$status" -eq 1 ]
    # the line of the response's first part, on which it begins
    [[ "$output" == *"replay: line $((n - 1)): connection 2: .payload.data.status: expected 9, got 15"* ]]
}

@test "cairn-protocol(7) has a section for every topic cairnd serves" {
    topics=$(sed -n '/^} handlers\[\] = {/,/^};/p' "$S/src/exec/service.c" \
        | grep -o '{"[a-z-]*"' | tr -d '{"')
    [ "$(echo "$topics" | wc -l)" -ge 8 ]
    for t in $topics; do
        sed 's/\\-/-/g' "$PAGE" | grep -qx "\.SS $t" \
            || { echo "cairn-protocol.7 has no section for '$t'"; false; }
    done
}

@test "cairn-protocol(7) lists every errno the server and the service send" {
    errs=$(cat "$S/src/server/server.c" "$S/src/exec/service.c" \
        "$S/src/exec/service_views.c" \
        | tr -s ' \n' ' ' \
        | grep -o 'conn_respond_error ([^,]*, [^,]*, E[A-Z]*' \
        | grep -o 'E[A-Z]*$' | sort -u)
    errs="$errs EAGAIN" # server_reject writes its line by hand
    [ "$(echo $errs | wc -w)" -ge 8 ]
    errors=$(awk '/^\.SH ERRORS/ { on = 1; next } /^\.SH/ { on = 0 } on' "$PAGE")
    for e in $errs; do
        echo "$errors" | grep -q "^\.BR $e \"" \
            || { echo "ERRORS of cairn-protocol.7 lacks $e"; false; }
    done
}

# Regression: severity, signum and wait_status were cut to 32 bits before
# their range check: severity 2^32 became 0 and canceled the job, signum
# 2^32+15 became SIGTERM.
@test "severity, signum and wait_status are checked on their 64-bit values" {
    cairn run --id 42 -- sleep 600 3>&- &
    wait_event 42 10 proc-spawn
    wait_event 42 10 start
    run rpc exception '{"id":42,"type":"cancel","severity":4294967296}'
    [ "$output" = "error 22 severity: must be 0..7, not 4294967296" ]
    run rpc exception '{"id":42,"type":"cancel","severity":-4294967296}'
    [ "$output" = "error 22 severity: must be 0..7, not -4294967296" ]
    run rpc exception '{"id":42,"type":"cancel","severity":8}'
    [ "$output" = "error 22 severity: must be 0..7, not 8" ]
    run rpc exception '{"id":42,"type":"notice","severity":2,"wait_status":4294967296}'
    [ "$output" = "error 22 wait_status: must be at most 2147483647, not 4294967296" ]
    run rpc kill '{"id":42,"signum":4294967311}'
    [ "$output" = "error 22 signum: 4294967311 is not a signal" ]
    run rpc kill '{"id":42,"signum":-4294967281}'
    [ "$output" = "error 22 signum: -4294967281 is not a signal" ]
    # none of them reached the job
    [ "$(events_named 42 exception | wc -l)" -eq 0 ]
    [ "$(events_named 42 proc-signal | wc -l)" -eq 0 ]
    [ "$(cairn list --json | jq -r '.jobs[0].state')" = run ]
    # a wait_status below 0, however far, is none at all (not 0)
    run rpc exception '{"id":42,"type":"cancel","severity":0,"wait_status":-4294967296}'
    [ "$output" = "{}" ]
    [ "$(events_named 42 exception | jq -c .)" = '{"type":"cancel","severity":0,"note":""}' ]
    wait_event 42 10 clean
    [ "$(events_named 42 finish | jq .status)" -eq 15 ]
}

# attributes.system.cairn.rank-environment: each shell gets its rank's
# variables over the jobspec's environment; a rank not in R is refused.
@test "rank-environment: each rank's shell gets its own variables" {
    R='{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],"nodelist":["node[0-1]"]}}'
    js() {
        printf '{"version":1,"tasks":[{"command":["sh","-c","echo $CAIRN_RANK $FLUX_URI $A"]}],"attributes":{"system":{"environment":{"FLUX_URI":"job","A":"job"},"cairn":{"rank-environment":%s}}}}' "$1"
    }
    run rpc start "{\"id\":45,\"userid\":$(id -u),\"R\":$R,\"jobspec\":$(js '{"1":{"FLUX_URI":"local:///run/flux-1","A":"1"},"7":{}}')}"
    [ "$output" = "error 22 jobspec: attributes.system.cairn.rank-environment.7: rank 7 is not in R" ]
    run rpc start '{"id":45,"reattach":true}'
    [ "$output" = "error 2 job 45 not found" ]
    run rpc start "{\"id\":45,\"userid\":$(id -u),\"R\":$R,\"jobspec\":$(js '{"1":{"FLUX_URI":"local:///run/flux-1","A":"1"},"x":{}}')}"
    [ "$output" = 'error 22 jobspec: attributes.system.cairn.rank-environment: invalid rank "x"' ]
    run rpc start "{\"id\":45,\"userid\":$(id -u),\"R\":$R,\"jobspec\":$(js '{"1":{"FLUX_URI":"local:///run/flux-1","A":"1"}}')}"
    [ "$(jq -c . <<<"$output")" = '{"id":45,"type":"start","data":{}}' ]
    wait_event 45 10 clean
    events_named 45 log
    [ "$(events_named 45 log | jq -j .data | sort)" = "$(printf '0 job job\n1 local:///run/flux-1 1')" ]
}

# The views' payloads are checked as the other topics' are, and the
# errors are the page's (jobs, job-events).
@test "jobs and job-events refuse a malformed payload, naming the field" {
    run rpc jobs '{"all": 1}'
    [ "$output" = "error 71 all: must be true or false" ]
    run rpc jobs '{"ids": [1, -2]}'
    [ "$output" = "error 71 ids: must be an array of job ids" ]
    run rpc jobs '{"ids": 7}'
    [ "$output" = "error 71 ids: must be an array of job ids" ]
    run rpc jobs "{\"ids\": $(seq 1 1001 | jq -sc .)}"
    [ "$output" = "error 22 ids: at most 1000 jobs, not 1001" ]
    run rpc job-events '{}'
    [ "$output" = "error 71 id: missing" ]
    run rpc job-events '{"id": "x"}'
    [ "$output" = "error 71 id: must be a non-negative integer" ]
    run rpc job-events '{"id": 5, "from": -1}'
    [ "$output" = "error 71 from: must be an integer from 0 to 4294967295" ]
    run rpc job-events '{"id": 5, "from": 4294967296}'
    [ "$output" = "error 71 from: must be an integer from 0 to 4294967295" ]
    run rpc job-events '{"id": 4242}'
    [ "$output" = "error 2 job 4242 not found" ]
    # a job's events, as the journal has them, from where the client asks
    cairn run --id 7 -- true
    n=$(cairn eventlog --json 7 | wc -l)
    run rpc job-events '{"id": 7}'
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | jq -r '.events[]')" = "$(cairn eventlog --json 7)" ]
    [ "$(echo "$output" | jq -c '[.id, .from, .nevents, .active]')" = "[7,0,$n,false]" ]
    run rpc job-events "{\"id\": 7, \"from\": $((n - 1))}"
    [ "$(echo "$output" | jq -r '.events[]')" = "$(cairn eventlog --json 7 | tail -1)" ]
    run rpc job-events '{"id": 7, "from": 4294967295}'
    [ "$(echo "$output" | jq -c '.events')" = "[]" ]
    run rpc jobs '{"all": true}'
    [ "$(echo "$output" | jq -c '[.jobs[].id, .truncated]')" = "[7,0]" ]
    run rpc jobs '{}'
    [ "$output" = '{"jobs": []}' ]
}

@test "node-state: a malformed request is refused, naming the field; a good one answers" {
    run rpc node-state '{"ranks": 3, "online": false}'
    [ "$output" = 'error 71 node-state: want {"ranks": IDSET, "online": BOOL, "why": S}' ]
    run rpc node-state '{"ranks": "1-2"}'
    [ "$output" = 'error 71 node-state: want {"ranks": IDSET, "online": BOOL, "why": S}' ]
    run rpc node-state '{"ranks": "x", "online": true}'
    [[ "$output" == "error 22 node-state: ranks: "* ]]
    # nothing runs on those ranks here: nothing is lost, and it is logged
    run rpc node-state '{"ranks": "1-2", "online": false, "why": "test"}'
    [ "$status" -eq 0 ]
    [ "$output" = '{"lost": 0}' ]
    grep -q "ranks 1-2: lost: test; 0 process(es) lost" "$BATS_TEST_TMPDIR/cairnd.log"
    run rpc node-state '{"ranks": "1-2", "online": true}'
    [ "$output" = '{"lost": 0}' ]
    grep -q "ranks 1-2: online in Flux" "$BATS_TEST_TMPDIR/cairnd.log"
}
