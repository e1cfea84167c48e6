# Helpers for the integration tests; sourced. The test environment
# (Makefile.am, AM_TESTS_ENVIRONMENT) provides HDF5_PLUGIN_PATH, VFDSWMR_PROGS
# and H5DUMP.
# shellcheck shell=bash
set -u

: "${VFDSWMR_PROGS:?run the integration tests through make check}"
# The test program, under valgrind when make check-valgrind set VFDSWMR_VALGRIND.
# shellcheck disable=SC2086
roundtrip() { ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/roundtrip" "$@"; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vfdswmr-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CHECKS=0

fail() { echo "FAIL: $*" >&2; exit 1; }
ok()   { CHECKS=$((CHECKS + 1)); echo "ok $CHECKS - $*"; }

# with_driver NAME CONFIG CMD...: run CMD with HDF5 selecting driver NAME.
with_driver() {
    local name=$1 config=$2
    shift 2
    HDF5_DRIVER=$name HDF5_DRIVER_CONFIG=$config "$@"
}

# dump_data FILE: h5dump of every dataset's values, without addresses.
dump_data() {
    "$H5DUMP" -d /data -d /deflated -a /data/rows "$1" | sed -e '1s/".*"/FILE/'
}

# tool CMD...: run one of HDF5's own tools (h5dump, ...) that will load a
# plugin driver: in a sanitizer build the plugins need their runtimes
# loaded first, which the tool (not built with them) does not do; leaks in
# the tool itself are not ours to report.
tool() {
    local so
    so=$(ldd "${HDF5_PLUGIN_PATH%%:*}"/*.so 2>/dev/null | awk '/lib(asan|ubsan|tsan)\.so/ { print $3 }' | sort -u | paste -sd:)
    if [ -n "$so" ]; then
        LD_PRELOAD=$so ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$@"
    else
        "$@"
    fi
}

# check_rows FILE DRIVER CONFIG ROWS GROUPS: rowreader reads exactly ROWS rows
# and GROUPS groups of the row file FILE (tests/progs/rows.h) through DRIVER
# with CONFIG ("plain": no driver), or the test fails.
check_rows() {
    local out drv=(-u HDF5_DRIVER -u HDF5_DRIVER_CONFIG)
    [ "$2" = plain ] || drv=(HDF5_DRIVER="$2" HDF5_DRIVER_CONFIG="$3")
    out=$(env "${drv[@]}" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$1" check "$4" "$5" 2>&1) \
        || fail "reading through $2: $out"
    [ "$out" = "verified $4 rows, 0 more (0 written, 0 unwritten), $5 groups" ] || fail "reading through $2: $out"
}

finish() { echo "$CHECKS checks passed"; exit 0; }
