#!/usr/bin/env bash
# Space HDF5 freed at the end of the file while a reader could still read
# it, too big for the versioned zone and for keeping its old bytes in a
# republished snapshot (eoa.c keep_old, up to 16 MiB with no reader
# registered), is kept from raw data (the hot zone); when HDF5 allocates
# raw data above it, HDF5's books lose it (a hole). The writer hands holes
# out again when HDF5 allocates, once no reader can read their old bytes
# (vfd-swmr-writer/eoa.c).
# 1. A program deletes and re-creates a dataset, flushing each time, no
#    reader (versioned_max=1M, so nothing is versioned): at 4 MiB the
#    space goes back at once (keep_old) and the file is sec2's size; at
#    17 MiB the file stays within two copies of it (sec2: one), where
#    without holes it grows by one copy a round; plain HDF5 reads the last
#    round.
# 2. A reader opened at round 1 and holding that snapshot while the writer
#    goes on for 70 ticks, a round a tick (its read mark is released after
#    20 x max_lag = 60): the writer reuses no hole while a reader is
#    registered, and the reader's next read of its /x returns round 1 or
#    fails with "fell behind", never another round's values. Once the
#    reader closed, the writer reuses the space within a few rounds.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

P=$VFDSWMR_PROGS/eoaclose
for case in "4096 6" "17408 4"; do
    read -r kib rounds <<<"$case"
    out=$(env -u HDF5_DRIVER "$P" cycle "$WORK/sec2.h5" "$kib" "$rounds" 2>&1) || fail "sec2: $out"
    sec2=$(stat -c %s "$WORK/sec2.h5")
    [ "$sec2" -lt $(((kib + 1024) << 10)) ] || fail "sec2's file is $sec2 bytes: HDF5 did not reuse the space"
    log=$WORK/w1.log
    rm -f "$log"
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3;versioned_max=1M;log_file_path=$log" \
        ${VFDSWMR_VALGRIND:-} "$P" cycle "$WORK/w.h5" "$kib" "$rounds" 2>&1) || fail "writer: $out"
    [[ $out =~ closed\ ([0-9]+) ]] || fail "writer: $out"
    size=${BASH_REMATCH[1]}
    if [ "$kib" = 4096 ]; then
        [ "$size" = "$sec2" ] || fail "after $rounds rounds of a 4 MiB dataset deleted and created again the file is $size bytes, on sec2 $sec2"
    else
        [ "$size" -le $((2 * sec2)) ] || fail "after $rounds rounds of a $kib KiB dataset deleted and created again the file is $size bytes (sec2: $sec2): the freed space was not reused"
        grep -q ' hole_reused ' "$log" || fail "$kib KiB rounds: no hole was reused"
    fi
    out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/w.h5" "$rounds" 2>&1) || fail "plain HDF5: $out"
    ok "$rounds rounds of a $kib KiB dataset deleted and created again, no reader: $size bytes (sec2: $sec2), plain HDF5 reads round $rounds"
done

# 2. A reader holding round 1.
log=$WORK/w2.log
proc_start w env HDF5_DRIVER=vfd_swmr_writer \
    HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3;versioned_max=0;log_file_path=$log" ${VFDSWMR_VALGRIND:-} \
    "$P" cycle "$WORK/r.h5" 64 100000 wait
proc_read w
[ "$ANSWER" = "round 1" ] || fail "writer: $ANSWER $(proc_err w)"
proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/r.h5"
proc_read r
[ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err r)"
# One round per tick (the writer's log shows each end of tick).
r=1
ticks() { grep -c ' end_of_tick ' "$log" || true; }
round() {
    local t
    t=$(ticks)
    proc_ask w go
    r=$((r + 1))
    [ "$ANSWER" = "round $r" ] || fail "writer: $ANSWER $(proc_err w)"
    for _ in $(seq 3000); do
        [ "$(ticks)" -gt "$t" ] && break
        sleep 0.01
    done
}
# Holes are reused by the delayed-write rule (max_lag epochs after the
# first snapshot without their old bytes; the reader's read mark holds that
# back until the writer releases it after 20 x max_lag) while the reader is
# still registered; the reader then reads round 1 or is told it fell behind.
while ! grep -q ' hole_reused ' "$log"; do
    [ $r -lt 5000 ] || fail "after $r rounds the writer has not reused the space of a deleted dataset with a reader registered"
    round
done
at=$r
grep -q ' hole_reused addr=[0-9]* size=65536 ' "$log" || fail "the writer reused a hole for something else: $(grep hole_reused "$log")"
proc_ask r go
[ "$ANSWER" = failed ] || [ "$ANSWER" = "still 1" ] || fail "the reader holding round 1 read \"$ANSWER\" $(proc_err r)"
[ "$ANSWER" = "still 1" ] || grep -q 'fell behind' "$WORK/r.err" || fail "the reader's read failed without saying it fell behind: $(proc_err r)"
held=$ANSWER
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/r.h5" $r 2>&1) || fail "plain HDF5 after round $r: $out"
ok "a reader holding round 1 registered: the writer reused a deleted dataset's space at round $at; the reader's read then: $held; plain HDF5 reads round $r"
finish
