#!/usr/bin/env bash
# Write errors are errors, never crashes: hundreds of chunk writes failing
# with ENOSPC inside ONE API call (H5Dclose flushing the chunk cache) under
# the writer driver give one clean error stack of at most 32 entries, and the
# program goes on. (HDF5 1.14.5's H5Eappend_stack writes past a full stack,
# and the writer's error guard appended on every failed lower write: the
# process died with "free(): invalid pointer" or a segfault.) The full disk
# is the test-only vfd_fault driver under the writer, steered through its
# state file; when space is back, the writer goes on and loses nothing
# flushed.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

state=$WORK/state
# full_disk BYTES | none: what vfd_fault lets through from now on
full_disk() {
    if [ "$1" = none ]; then
        rm -f "$state"
    else
        echo "max_eof=$1" >"$state.tmp" && mv "$state.tmp" "$state"
    fi
}

# burst_case NAME DRIVER CONFIG: 1000 rows flushed, a burst of 300 chunks
# on a full disk, space back, 1000 more rows, close; then plain HDF5 reads
# all 2000 rows.
burst_case() {
    local name=$1 f=$WORK/$1.h5
    full_disk none
    proc_start "$name" env HDF5_DRIVER="$2" HDF5_DRIVER_CONFIG="$3" "${FAULTY[@]}" \
        "$VFDSWMR_PROGS/rowwriter" "$f" create
    proc_read "$name"
    [ "$ANSWER" = "ready 0" ] || fail "$name: writer not ready: $ANSWER $(proc_err "$name")"
    proc_expect "$name" "append 1000" "flushed 1000"
    full_disk 0
    proc_expect "$name" "burst 300" "burst failed"
    stack_check "$WORK/$name.err" "H5Dclose of the burst"
    [[ $STACK == *'vfd_fault: cannot write 512 bytes at address '*': No space left on device (injected: max_eof=0)'* ]] \
        || fail "$name: the stack does not show the injected ENOSPC: $STACK"
    ok "$name: 300 chunk writes failing in one H5Dclose: one stack of $(grep -c '^  #' <<<"$STACK") entries with \"No space left on device\""
    full_disk none
    proc_expect "$name" "append 1000" "flushed 2000"
    proc_expect "$name" close closed
    proc_end "$name"
    [ "$PROC_STATUS" = 3 ] || fail "$name: exit status $PROC_STATUS, expected 3 (a command failed): $(proc_err "$name")"
    ok "$name: the writer went on when space was back, closed, and exited with its own status 3"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 2000 2>&1) || fail "$name: $out"
    [ "$out" = "verified 2000 rows, 0 more (0 written, 0 unwritten), 0 groups" ] || fail "$name: $out"
    ok "$name: plain HDF5 reads all 2000 flushed rows"
}

burst_case writer vfd_swmr_writer "tick_len=1;max_lag=3;under=vfd_fault(state_file=$state)"
# The same on vfd_fault alone, as HDF5 sees it without vfd-swmr.
burst_case fault vfd_fault "state_file=$state"
finish
