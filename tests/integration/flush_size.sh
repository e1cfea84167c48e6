#!/usr/bin/env bash
# Sizes after a flush, and a reader's raw data when HDF5 moves a chunk.
# `eoaclose chunks` writes a deflated one-chunk dataset, flushes, writes it
# again with values that compress far worse (HDF5 moves the grown chunk and
# frees the old one at the end of the file) and flushes again.
# - No reader: after the first flush the file is as big as on sec2 (space
#   freed before anything was published is given back at once, as
#   PyTables' size checks expect).
# - A reader holding the first snapshot keeps reading the first chunk's
#   bytes while the writer moves it, and a reader opening the file again
#   reads the new one; both ways:
#   - by default (versioned_max=0) HDF5 puts the new chunk where the old
#     one was, as on sec2, straight into the HDF5 file: the writer first
#     copies the old bytes for snapshots from before the free
#     (vfd-swmr-writer/kept.c, its log says kept_list) and the reader lays
#     them over what it reads there (vfd-swmr-reader/kept.c). Without the
#     copy, the first reader's read fails in the deflate filter;
#   - with versioned_max=16M the new chunk's bytes stay in the writer's page
#     buffer, versioned, until no reader can read the old ones
#     (vfd-swmr-writer/inplace.c); the reader opening again reads them from
#     the snapshot's images.
#   The file closes at sec2's size either way.
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

# Ticks of half a second: versioned, the new chunk's bytes stay in the
# writer's page buffer (max_lag ticks) while the reader opens the file again
# and reads them from the snapshot's images; once written to the file, the
# test would pass whether the reader reads them from the images or not.
for vm in 0 16M; do
    log=$WORK/w$vm.log
    proc_start w env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=5;max_lag=3;versioned_max=$vm;log_file_path=$log" \
        ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/eoaclose" chunks "$WORK/r$vm.h5" wait
    proc_read w
    [ "$ANSWER" = "flushed ${sec2[0]}" ] || fail "writer: $ANSWER $(proc_err w)"
    proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/eoaclose" chunkread "$WORK/r$vm.h5"
    proc_read r
    [ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err r)"
    proc_ask w go # round 2 written and flushed: the chunk moved
    [[ $ANSWER == "flushed "* ]] || fail "writer: $ANSWER $(proc_err w)"
    proc_ask r go # the reader reads its snapshot's chunk again
    [ "$ANSWER" = "still 1" ] || fail "versioned_max=$vm: a reader holding the first snapshot read \"$ANSWER\" after the chunk moved: $(proc_err r)"
    proc_ask r go # opened again, the newest snapshot: the new chunk
    [ "$ANSWER" = "round 2" ] || fail "versioned_max=$vm: reader, opened again while the writer runs: $ANSWER $(proc_err r)"
    proc_end r
    [ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
    proc_ask w go
    [[ $ANSWER =~ ^closed\ ([0-9]+)$ ]] || fail "writer: $ANSWER $(proc_err w)"
    size=${BASH_REMATCH[1]}
    [ "$size" = "${sec2[2]}" ] || fail "versioned_max=$vm: the file closed at $size bytes, on sec2 at ${sec2[2]}"
    if [ "$vm" = 0 ]; then
        grep -q ' kept_list addr=' "$log" || fail "versioned_max=0: the old chunk's bytes were not copied for the reader: $(cat "$log")"
    fi
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
    out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" chunkcheck "$WORK/r$vm.h5" 2 2>&1) ||
        fail "plain HDF5 does not read round 2 after close: $out"
    ok "versioned_max=$vm: a reader holding the first snapshot read the old chunk intact while the writer moved it; opened again, round 2; the file closed at $size bytes (sec2: ${sec2[2]})"
done
finish
