#!/usr/bin/env bash
# The lag is a time, not a count of publishes. Every flush publishes
# (publish=flush), but max_lag counts ends of tick (epochs, DESIGN.md "The
# lag is a time"): a reader holding an old snapshot while the writer
# publishes hundreds of flushes -- and ends max_lag - 1 ticks -- still
# reads its snapshot whole and right, and never falls behind. Ticks end
# only by explicit calls here (tick_len=0), so the count is exact.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

for mode in plain swmr; do
    f=$WORK/lag-$mode.h5
    flags=
    [ $mode = plain ] || flags=--swmr
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=4" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" create $flags
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "$mode: writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append 10" "flushed 10"
    proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" watch
    proc_read r
    [ "$ANSWER" = "ready 10" ] || fail "$mode: reader not ready: $ANSWER $(proc_err r)"
    proc_expect r read "rows 10"
    proc_ask w status
    [[ $ANSWER =~ ^status\ tick=([0-9]+)$ ]] || fail "$mode: status answered \"$ANSWER\""
    first=${BASH_REMATCH[1]}
    total=10
    for i in $(seq 1 300); do
        total=$((total + 2))
        if [ $mode = plain ]; then
            proc_expect w "append 2" "flushed $total"
        else
            proc_expect w "dappend 2" "dflushed $total"
        fi
    done
    proc_ask w status
    [[ $ANSWER =~ ^status\ tick=([0-9]+)$ ]] || fail "$mode: status answered \"$ANSWER\""
    [ $((BASH_REMATCH[1] - first)) -ge 300 ] || fail "$mode: 300 flushes made only $((BASH_REMATCH[1] - first)) publishes"
    proc_expect r read "rows 10"
    for t in 1 2 3; do
        proc_expect w tick ticked
        proc_expect r read "rows 10"
    done
    ok "$mode: $((BASH_REMATCH[1] - first)) publishes and 3 ends of tick (max_lag=4): the reader still read its snapshot of 10 rows, every value right"
    proc_expect r refresh refreshed
    proc_expect r read "rows $total"
    proc_expect r quit closed
    proc_end r
    [ "$PROC_STATUS" = 0 ] || fail "$mode: the reader exited with $PROC_STATUS: $(proc_err r)"
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "$mode: the writer exited with $PROC_STATUS: $(proc_err w)"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check $total 2>&1) || fail "$mode: plain HDF5: $out"
    ok "$mode: after a refresh the reader held all $total rows; the closed file holds them for plain HDF5"
done
finish
