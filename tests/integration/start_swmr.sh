#!/usr/bin/env bash
# SWMR-write mode however it is entered. A writer that creates its file
# without H5F_ACC_SWMR_WRITE and switches with H5Fstart_swmr_write (h5py's
# `f.swmr_mode = True`), then appends with H5Dflush alone -- never H5Fflush
# -- must publish at every H5Dflush, exactly like a writer opened with
# H5F_ACC_SWMR_WRITE: a reader sees every flushed row before the writer
# closes. (Before the driver noticed H5Fstart_swmr_write, nothing appeared
# until close.) The reader waits by refreshing (ROWS_TIMEOUT bounds it; it is
# a guard against a hang, not a measure of time).
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

export ROWS_TIMEOUT=${ROWS_TIMEOUT:-60}
f=$WORK/started.h5 cfg="tick_len=1;max_lag=5"
for how in start_swmr open_swmr; do
    if [ $how = start_swmr ]; then flags=--latest; else flags=--swmr; fi
    rm -f "$f"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" create $flags
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "$how: writer not ready: $ANSWER $(proc_err w)"
    [ $how = open_swmr ] || proc_expect w start_swmr "swmr started"
    proc_expect w tick ticked # the file as created is published: a reader can open it
    proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" watch
    proc_read r
    [ "$ANSWER" = "ready 0" ] || fail "$how: reader not ready: $ANSWER $(proc_err r)"
    total=0
    for step in 1 2 3 4 5; do
        total=$((total + 300))
        proc_expect w "dappend 300" "dflushed $total"
        proc_expect r "verify $total" "rows $total"
    done
    proc_expect r quit closed
    proc_end r
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "$how: the writer exited with $PROC_STATUS: $(proc_err w)"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check $total 2>&1) || fail "$how: plain HDF5: $out"
    ok "$how: every H5Dflush published: the reader saw all $total rows, 300 at a time, before the close"
done
finish
