# lib.bash - shared by the package tests: where scripts/build-deb left the
# .deb files and its build tree (cmake's install with prefix /usr).
#
#   DEBS      the directory of the .deb files ($CAIRN_DEB_DIR, default
#             $CAIRN_SOURCE_DIR/build-deb)
#   need_debs skips the test, saying how to build them, when there are none

S=${CAIRN_SOURCE_DIR:?CAIRN_SOURCE_DIR must name the source directory}
DEBS=${CAIRN_DEB_DIR:-$S/build-deb}

need_debs() {
    ls "$DEBS"/cairn_*.deb >/dev/null 2>&1 \
        || skip "no packages in $DEBS: run scripts/build-deb (scripts/test does)"
}

# The install manifest of the package build: every file `cmake --install`
# put under the prefix /usr (DESTDIR debian/tmp), one absolute path a line.
manifest() {
    local m
    m=$(ls "$DEBS"/cairn-*/obj-*/install_manifest.txt 2>/dev/null | head -n 1)
    [ -n "$m" ] || { echo "no install_manifest.txt under $DEBS" >&2; return 1; }
    sed 's|^.*/debian/tmp/|/|' "$m"
}

# dpkg ARGS..., waiting (up to 600 s) for the dpkg lock while another apt
# or dpkg runs on the machine, instead of failing at once as dpkg does.
dpkg_wait() {
    local i out rc
    for i in $(seq 1 200); do
        rc=0
        out=$(dpkg "$@" 2>&1) || rc=$?
        if [ $rc -ne 0 ] && grep -q 'lock' <<<"$out" \
                && grep -q 'locked by another process' <<<"$out"; then
            sleep 3
            continue
        fi
        printf '%s\n' "$out"
        return $rc
    done
    printf '%s\n' "$out"
    return 1
}
