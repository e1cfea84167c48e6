#!/usr/bin/env bash
# Consistency points under metadata cache pressure: a writer with a tiny
# metadata cache creates hundreds of datasets (HDF5 evicts and writes parts
# of objects between flushes) while two readers walk the whole file over and
# over, one snapshot per walk. They may only ever see states of consistency
# points, and every object they see must be whole and hold its values.
. "${VFDSWMR_TESTLIB:?}"

groups=12 per_group=25
# Under valgrind a walk is slow: give readers more ticks before they count
# as fallen behind (a lag error is correct behaviour, but ends the reader).
export HDF5_DRIVER_CONFIG="tick_len=1;max_lag=$([ -n "${VFDSWMR_VALGRIND:-}" ] && echo 300 || echo 6)"

# run_case NAME WRITER_BATCH READER_BATCH
run_case() {
    local name=$1 wbatch=$2 rbatch=$3 f=$WORK/$1.h5 total=$((groups * per_group))
    HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/evict" read "$f" $groups $per_group $rbatch \
        >"$WORK/r1" 2>&1 &
    local r1=$!
    HDF5_DRIVER=vfd_swmr_writer ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/evict" write "$f" $groups $per_group $wbatch \
        >"$WORK/w" 2>&1 &
    local w=$!
    HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/evict" read "$f" $groups $per_group $rbatch \
        >"$WORK/r2" 2>&1 &
    local r2=$!
    wait $w || fail "$name: writer failed: $(cat "$WORK/w")"
    wait $r1 || fail "$name: reader 1 failed: $(tail -n 20 "$WORK/r1")"
    wait $r2 || fail "$name: reader 2 failed: $(tail -n 20 "$WORK/r2")"
    cat "$WORK/w" "$WORK/r1" "$WORK/r2"
    grep -q "all $total datasets verified" "$WORK/r1" && grep -q "all $total datasets verified" "$WORK/r2" \
        || fail "$name: a reader did not verify everything"
    "$VFDSWMR_PROGS/evict" read "$f" $groups $per_group $rbatch >/dev/null \
        || fail "$name: the closed file does not verify with plain HDF5"
}

# Without SWMR-write mode only H5Fflush (every 10 datasets) may publish;
# the H5Gflush after every dataset must not.
run_case plain 10 10
ok "plain writer: readers saw only H5Fflush states of 300 datasets (tiny metadata cache, H5Gflush between)"

# (With H5F_ACC_SWMR_WRITE every flush is a consistency point, as legacy
# SWMR programs expect; like legacy SWMR that is safe for appends to
# existing datasets, not while objects are created: see README. The append
# tests in tests/swmr/ cover that mode.)
finish
