# Steps of tests/progs/eoaclose shared by keep_old.sh and keep_large.sh
# (sourced; P is eoaclose, WORK the test's directory, procs.sh loaded).

# flushed_closed NAME SIZE: the writer NAME (file $WORK/NAME.h5, at
# "rewritten") flushes -- a reader opening then reads round 2 -- and closes
# at SIZE bytes, sec2's; plain HDF5 reads round 2.
flushed_closed() {
    proc_ask "$1" go
    [ "$ANSWER" = "round 2" ] || fail "writer: $ANSWER $(proc_err "$1")"
    out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cyclecheck "$WORK/$1.h5" 2 2>&1) ||
        fail "a reader opening after the flush does not read round 2: $out"
    proc_ask "$1" go
    [ "$ANSWER" = "closed $2" ] || fail "the writer answered \"$ANSWER\"; on sec2 the file closed at $2 bytes: $(proc_err "$1")"
    proc_end "$1"
    [ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err "$1")"
    out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/$1.h5" 2 2>&1) || fail "plain HDF5 after close: $out"
}
