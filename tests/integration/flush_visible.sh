#!/usr/bin/env bash
# A flush is a flush (publish=flush, the default): when H5Fflush -- or, in
# SWMR-write mode however it was entered, H5Dflush -- returns, a reader's
# very next refresh sees what it flushed. No tick ever ends here
# (tick_len=0: only flushes publish), and the reader does not wait: it
# refreshes once and reads the snapshot it then holds (rowreader "refresh",
# then "read"), right after the writer answered that its flush returned.
# With publish=tick the same refresh shows nothing new until the writer ends
# a tick.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=0;max_lag=3"

# sees TOTAL: the reader refreshes once and holds exactly TOTAL rows.
sees() {
    proc_expect r refresh refreshed
    proc_expect r read "rows $1"
}

# start_pair FILE FLAGS CONFIG: a writer creating FILE (rowwriter FLAGS), its
# first flush, and a reader of it.
start_pair() {
    rm -f "$1"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$3" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$1" create $2
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append 1" "flushed 1" # the file as created, published: a reader can open it
    case $3 in *publish=tick*) proc_expect w tick ticked ;; esac # publish=tick: only now
    proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$1" watch
    proc_read r
    [ "$ANSWER" = "ready 1" ] || fail "reader not ready: $ANSWER $(proc_err r)"
}

stop_pair() {
    proc_expect r quit closed
    proc_end r
    [ "$PROC_STATUS" = 0 ] || fail "the reader exited with $PROC_STATUS: $(proc_err r)"
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "the writer exited with $PROC_STATUS: $(proc_err w)"
}

f=$WORK/flush.h5

# H5Fflush, no SWMR-write mode
start_pair "$f" "" "$cfg"
total=1
for step in $(seq 1 25); do
    total=$((total + step))
    proc_expect w "append $step" "flushed $total"
    sees $total
done
stop_pair
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check $total 2>&1) || fail "plain HDF5: $out"
ok "H5Fflush: after each of 25 flushes (no tick ever ended) the reader's next refresh held every flushed row ($total)"

# H5Dflush in SWMR-write mode: opened with it, and entered by H5Fstart_swmr_write
for how in open_swmr start_swmr; do
    if [ $how = open_swmr ]; then flags=--swmr; else flags=--latest; fi
    start_pair "$f" "$flags" "$cfg"
    [ $how = open_swmr ] || proc_expect w start_swmr "swmr started"
    total=1
    for step in $(seq 1 25); do
        total=$((total + 3 * step))
        proc_expect w "dappend $((3 * step))" "dflushed $total"
        sees $total
    done
    stop_pair
    ok "$how: after each of 25 H5Dflush calls the reader's next refresh held every flushed row ($total)"
done

# publish=tick: a flush alone publishes nothing; the end of tick does.
start_pair "$f" "" "$cfg;publish=tick"
sees 1
proc_expect w "append 10" "flushed 11"
sees 1
proc_expect w tick ticked
sees 11
stop_pair
ok "publish=tick: a flushed row is not visible until the writer ends a tick, then it is"
finish
