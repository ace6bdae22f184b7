#!/usr/bin/env bats
# No user fills the run dir through a job's own output (issue 51): under
# the supervisor a command writes into pipes the supervisor drains, keeping
# at most output.max-bytes + 1 of each on disk. A command once wrote
# straight into its output file on the run dir (a tmpfs): fallocate with
# FALLOC_FL_KEEP_SIZE allocated the whole tmpfs at a size of 0, nothing
# was cut, and every other job on the node failed ("its supervisor could
# not record its exit status") and the node drained. Here the run dir is
# a small tmpfs of the test's own; two throwaway users, removed after.
load lib
bats_require_minimum_version 1.5.0

setup() {
    need_useradd
    command -v python3 >/dev/null || skip "no python3 here"
    T=$BATS_TEST_TMPDIR
    U0=8070450532247928832 # the users' job ids start here (jobid.h)
    UA=cua$$ UB=cub$$
    useradd -M -s /bin/sh "$UA"
    useradd -M -s /bin/sh "$UB"
    public_dir
    chmod 755 "$T"
    mkdir "$T/rd"
    mount -t tmpfs -o size=8m,mode=0700 tmpfs "$T/rd"
    cairnd_start "{\"public-socket\": \"$PUB/cairn.sock\",
        \"run-dir\": \"$T/rd\", \"output\": {\"max-bytes\": 65536}}"
}

teardown() {
    [ "$(id -u)" -eq 0 ] || return 0
    cairnd_stop
    pkill -u "$UA" 2>/dev/null; pkill -u "$UB" 2>/dev/null
    umount -l "$T/rd" 2>/dev/null
    userdel "$UA" 2>/dev/null; userdel "$UB" 2>/dev/null
    rm -rf "$PUB"
    assert_no_leftover
}

# as USER CMD...: a cairn command as USER through the public socket
as() {
    local u=$1; shift
    (cd / && runuser -u "$u" -- env CAIRN_SOCKET="$PUB/cairn.sock" \
        PATH=/usr/bin:/bin "$B/cairn" "$@")
}

# What a job runs to take all the space its stdout's file system has left
# without changing its size: fallocate(1, FALLOC_FL_KEEP_SIZE, 0, free);
# it says how that went on stderr, then waits to be canceled.
FILL='import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
st = os.fstatvfs(1)
n = st.f_bavail * st.f_frsize - 4096
r = libc.fallocate(1, 1, ctypes.c_long(0), ctypes.c_long(max(n, 4096)))
e = ctypes.get_errno()
print("fallocate", r, os.strerror(e) if r else "done", file=sys.stderr, flush=True)
open("/dev/null").close()
time.sleep(300)'

@test "a job's output cannot fill the run dir: fallocate on its stdout is refused" {
    as "$UA" run --id $((U0 + 1)) -- python3 -c "$FILL" \
        >"$T/a.out" 2>"$T/a.err" 3>&- &
    local runner=$!
    for _ in $(seq 100); do
        grep -q fallocate "$T/a.err" 2>/dev/null && break
        sleep 0.1
    done
    cat "$T/a.err" >&2
    used=$(df --output=used -k "$T/rd" | tail -1)
    echo "run dir: $used KiB used" >&2
    [ "$used" -lt 1024 ]
    # another user's job and root's run as ever, their output whole
    run --separate-stderr as "$UB" run --id $((U0 + 2)) -- sh -c 'echo from-b'
    echo "$output$stderr" >&2
    [ "$status" -eq 0 ]
    [ "$output" = from-b ]
    run --separate-stderr cairn run --id 3 -- sh -c 'echo from-root'
    [ "$status" -eq 0 ]
    [ "$output" = from-root ]
    # its stdout is a pipe: ESPIPE, nothing allocated
    grep -q "fallocate -1 Illegal seek" "$T/a.err"
    as "$UA" cancel $((U0 + 1))
    wait "$runner" || true
}

@test "a job writing far past the cap keeps at most the cap on the run dir" {
    # 32 MiB into an 8 MiB run dir, as fast as it can: every write
    # succeeds, the journal keeps the first 64 KiB and says the rest was
    # cut, and the run dir never filled
    run --separate-stderr as "$UA" run --id $((U0 + 4)) -- \
        sh -c 'head -c 33554432 /dev/zero | tr "\0" x; echo; echo end-of-job >&2'
    echo "status $status: ${#output} bytes out; $stderr" >&2
    [ "$status" -eq 0 ]
    [[ "$stderr" == *end-of-job* ]]
    [ "${#output}" -le 65536 ]
    [ "${#output}" -ge 60000 ]
}
