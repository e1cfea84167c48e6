#!/usr/bin/env bash
# Sizes after a flush, and a reader's raw data when HDF5 moves a chunk.
# `eoaclose chunks` writes a deflated one-chunk dataset, flushes, writes it
# again with values that compress far worse (HDF5 moves the grown chunk and
# frees the old one at the end of the file) and flushes again.
# - No reader: after the first flush the file is as big as on sec2 (space
#   freed before anything was published is given back at once, as
#   PyTables' size checks expect).
# - A reader holding the first snapshot keeps reading the first chunk's
#   bytes while the writer moves it: HDF5 must not put the new chunk where
#   the old one was (raw data is not versioned). Without that rule its
#   read fails in the deflate filter.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=1;max_lag=3"
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" chunks "$WORK/sec2.h5" 2>&1) || fail "sec2: $out"
sec2=($(printf '%s\n' "$out" | awk '{ print $2 }'))
[ "${#sec2[@]}" = 3 ] || fail "sec2: $out"
[ "${sec2[1]}" -gt "${sec2[0]}" ] || fail "sec2: the second round did not grow the file: $out"

out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/eoaclose" chunks "$WORK/w.h5" 2>&1) || fail "writer: $out"
w=($(printf '%s\n' "$out" | awk '{ print $2 }'))
[ "${w[0]}" = "${sec2[0]}" ] || fail "after the first flush the file is ${w[0]} bytes through vfd_swmr_writer, ${sec2[0]} on sec2"
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" chunkcheck "$WORK/w.h5" 2 2>&1) ||
    fail "plain HDF5 does not read round 2 after close: $out"
ok "no reader: after the first flush the file is ${sec2[0]} bytes, as on sec2; closed, plain HDF5 reads it"

proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/eoaclose" chunks "$WORK/r.h5" wait
proc_read w
[ "$ANSWER" = "flushed ${sec2[0]}" ] || fail "writer: $ANSWER $(proc_err w)"
proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/eoaclose" chunkread "$WORK/r.h5"
proc_read r
[ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err r)"
proc_ask w go # round 2 written and flushed: the chunk moved
[[ $ANSWER == "flushed "* ]] || fail "writer: $ANSWER $(proc_err w)"
proc_ask r go # the reader reads its snapshot's chunk again
[ "$ANSWER" = "still 1" ] || fail "a reader holding the first snapshot read \"$ANSWER\" after the chunk moved: $(proc_err r)"
proc_ask w go
[[ $ANSWER == "closed "* ]] || fail "writer: $ANSWER $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
proc_ask r go
[ "$ANSWER" = "round 2" ] || fail "reader, opened again: $ANSWER $(proc_err r)"
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
ok "a reader holding the first snapshot read the old chunk intact while the writer moved it, then round 2"
finish
