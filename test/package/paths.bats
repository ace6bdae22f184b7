#!/usr/bin/env bats
# One set of paths (issue 34): every installed path the docs name is one
# that `cmake --install` with prefix /usr puts there, and every such file
# is in one of the packages. Before, README named the module in
# /usr/lib/x86_64-linux-gnu/cairn, cmake put it in /usr/local/lib/cairn,
# and the housekeeping helper's path had the other prefix.

load lib

setup() {
    need_debs
    manifest >"$BATS_TEST_TMPDIR/manifest"
}

# The docs: README and the other top-level pages, the man pages, etc/.
docs() {
    ls "$S"/*.md "$S"/man/* "$S"/etc/*.example "$S"/etc/cairnd.service
    find "$S/etc/flux" "$S/etc/flux.service.d" -type f
}

@test "every installed path the docs name is in the install manifest" {
    run python3 - "$BATS_TEST_TMPDIR/manifest" $(docs) <<'PY'
import fnmatch, re, sys
manifest = [l.strip() for l in open(sys.argv[1]) if l.strip()]

def norm(p):
    # merged /usr: /lib/systemd/... is /usr/lib/systemd/...
    return "/usr" + p if p.startswith("/lib/") else p

files = [norm(p) for p in manifest]
# Installed paths: under /usr or /lib, or cairn's config dir. Runtime
# paths (/var/lib/cairn, /run/...) and other programs' (/etc/passwd,
# /opt/flux-core, Flux's /usr/libexec/flux) are not installed files.
pat = re.compile(r"(?<![\w.~$/-])(/usr/[\w./*@+-]*|/lib/[\w./*@+-]*|/etc/cairn[\w./*@+-]*)")
bad = 0
seen = 0
for doc in sys.argv[2:]:
    text = open(doc, encoding="utf-8").read()
    text = text.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "") \
               .replace("\\fI", "").replace("\\fP", "").replace("\\(dq", '"')
    for n, line in enumerate(text.splitlines(), 1):
        for m in pat.finditer(line):
            p = norm(m.group(1).rstrip("./"))
            # Flux's own (flux-shell, flux-imp): the system-instance guide
            # names where Debian's flux-core and flux-security put them
            if p.startswith(("/usr/libexec/flux/", "/usr/bin/flux")):
                continue
            seen += 1
            if any(fnmatch.fnmatchcase(f, p) or f.startswith(p + "/")
                   for f in files):
                continue
            print(f"{doc}:{n}: {m.group(1)} is not installed "
                  f"(not in the install manifest, prefix /usr)")
            bad += 1
print(f"{seen} paths named, {bad} not installed")
sys.exit(1 if bad else 0)
PY
    echo "$output"
    [ "$status" -eq 0 ]
    # the docs do name paths: a pattern that matched nothing proves nothing
    [[ "$output" =~ ([0-9]+)\ paths\ named ]]
    [ "${BASH_REMATCH[1]}" -ge 20 ]
}

@test "every file of the install manifest is in exactly one package" {
    local d f n bad=0
    for d in "$DEBS"/cairn_*.deb "$DEBS"/cairn-flux_*.deb "$DEBS"/cairn-tests_*.deb; do
        [ -e "$d" ] || continue
        dpkg-deb -c "$d" | awk '{ print $6 }' | sed 's|^\.||'
    done >"$BATS_TEST_TMPDIR/packaged"
    while read -r f; do
        # dh_compress gzips the man pages
        n=$(grep -cxF -e "$f" -e "$f.gz" "$BATS_TEST_TMPDIR/packaged" || true)
        if [ "$n" -ne 1 ]; then
            echo "$f: in $n packages, expected 1"
            bad=1
        fi
    done <"$BATS_TEST_TMPDIR/manifest"
    [ "$bad" -eq 0 ]
}

@test "the unit runs the installed cairnd with the installed config" {
    local unit
    unit=$(grep -x '/lib/systemd/system/cairnd.service\|/usr/lib/systemd/system/cairnd.service' \
               "$BATS_TEST_TMPDIR/manifest")
    run sed -n 's/^ExecStart=//p' "$(ls "$DEBS"/cairn-*/debian/tmp"$unit")"
    [ "$output" = "/usr/sbin/cairnd -c /etc/cairn/cairn.conf" ]
    grep -qx /usr/sbin/cairnd "$BATS_TEST_TMPDIR/manifest"
    grep -qx /etc/cairn/cairn.conf "$BATS_TEST_TMPDIR/manifest"
}

@test "the installed config names the installed prolog and epilog" {
    local conf
    conf=$(ls "$DEBS"/cairn-*/debian/tmp/etc/cairn/cairn.conf)
    run jq -r '.prolog.command[0], .epilog.command[0]' "$conf"
    [ "${lines[0]}" = /etc/cairn/prolog ]
    [ "${lines[1]}" = /etc/cairn/epilog ]
    grep -qx /etc/cairn/prolog "$BATS_TEST_TMPDIR/manifest"
    grep -qx /etc/cairn/epilog "$BATS_TEST_TMPDIR/manifest"
}
