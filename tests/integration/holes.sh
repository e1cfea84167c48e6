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
#    17 MiB too, the old bytes kept when HDF5 allocates there
#    (keep_at_alloc). Plain HDF5 reads the last round.
#    With publish=tick nothing can be kept (a keep's publish would move the
#    tick in the middle of a flush): at 17 MiB, a round a tick, the file
#    then stays within two copies of it (sec2: one), where without holes
#    it grows by one copy a round.
# 2. A reader opened at round 1 and holding that snapshot while the writer
#    goes on, a round a tick: (a) for 10 rounds, each going into the space
#    the round before freed (copied for the reader first), the reader
#    reading round 1, the file closing at sec2's size; (b) for 80 rounds,
#    past the release of its read mark (20 x max_lag = 60 epochs): the
#    reader's next read fails with "fell behind", never returns another
#    round's values.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

P=$VFDSWMR_PROGS/eoaclose
for case in "4096 6" "17408 4"; do
    read -r kib rounds <<<"$case"
    out=$(env -u HDF5_DRIVER "$P" cycle "$WORK/sec2.h5" "$kib" "$rounds" 2>&1) || fail "sec2: $out"
    sec2=$(stat -c %s "$WORK/sec2.h5")
    [ "$sec2" -lt $(((kib + 1024) << 10)) ] || fail "sec2's file is $sec2 bytes: HDF5 did not reuse the space"
    log=$WORK/w1.log
    rm -f "$log" "$WORK/w.h5"
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3;versioned_max=1M;log_file_path=$log" \
        ${VFDSWMR_VALGRIND:-} "$P" cycle "$WORK/w.h5" "$kib" "$rounds" 2>&1) || fail "writer: $out"
    [[ $out =~ closed\ ([0-9]+) ]] || fail "writer: $out"
    size=${BASH_REMATCH[1]}
    [ "$size" = "$sec2" ] || fail "after $rounds rounds of a $kib KiB dataset deleted and created again the file is $size bytes, on sec2 $sec2: $(grep -E 'kept|hole' "$log")"
    out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/w.h5" "$rounds" 2>&1) || fail "plain HDF5: $out"
    ok "$rounds rounds of a $kib KiB dataset deleted and created again, no reader: $size bytes (sec2: $sec2), plain HDF5 reads round $rounds"
done

# 2. A reader holding round 1.
# One round at a time: each flush publishes (the writer's log shows an end
# of tick for it).
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
start_pair() { # $1: the session's name, $2: tick_len
    log=$WORK/$1.log
    proc_start w env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=$2;max_lag=3;versioned_max=0;log_file_path=$log" ${VFDSWMR_VALGRIND:-} \
        "$P" cycle "$WORK/$1.h5" 64 100000 wait
    proc_read w
    [ "$ANSWER" = "round 1" ] || fail "writer: $ANSWER $(proc_err w)"
    proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/$1.h5"
    proc_read r
    [ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err r)"
    # the reader holds a snapshot of round 1 of this epoch or an earlier one
    # (it adopted the newest at its open; ticks go on meanwhile)
    e0=$(epoch)
    r=1
}
epoch() { grep ' end_of_tick ' "$log" | tail -1 | sed 's/.* epoch=\([0-9]*\) .*/\1/'; }

# 1 (publish=tick): a round a tick: after each round, two ends of tick --
# the second began after the round's flush, so it published that flush's
# consistency point, after which the round's hole is no reader's.
log=$WORK/t.log
out=$(env -u HDF5_DRIVER "$P" cycle "$WORK/sec2t.h5" 17408 4 2>&1) || fail "sec2: $out"
sec2=$(stat -c %s "$WORK/sec2t.h5")
proc_start w env HDF5_DRIVER=vfd_swmr_writer \
    HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3;versioned_max=1M;publish=tick;log_file_path=$log" ${VFDSWMR_VALGRIND:-} \
    "$P" cycle "$WORK/t.h5" 17408 100000 wait
proc_read w
[ "$ANSWER" = "round 1" ] || fail "writer: $ANSWER $(proc_err w)"
r=1
while [ $r -lt 4 ]; do
    round
    t=$(ticks)
    for _ in $(seq 3000); do
        [ "$(ticks)" -gt $((t + 1)) ] && break
        sleep 0.01
    done
done
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
size=$(stat -c %s "$WORK/t.h5")
[ "$size" -le $((2 * sec2)) ] || fail "publish=tick: after 4 rounds of a 17408 KiB dataset deleted and created again the file is $size bytes (sec2: $sec2): the freed space was not reused"
grep -q ' hole_reused ' "$log" || fail "publish=tick: no hole was reused: $(grep -E 'kept|hole' "$log")"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/t.h5" 4 2>&1) || fail "plain HDF5: $out"
ok "4 rounds of a 17408 KiB dataset deleted and created again, publish=tick, a round a tick: $size bytes (sec2: $sec2), the space reused through holes; plain HDF5 reads round 4"

# a. Ten rounds while the reader holds round 1 (its read mark holds it:
#    released only after 20 x max_lag epochs, a minute with ticks of a
#    second, far more than ten rounds take even under valgrind): each round's dataset goes
#    into the space the last one freed, as on sec2, the old bytes copied
#    for the reader first (vfd-swmr-writer/kept.c), and the reader reads
#    round 1 all along. With the reader gone the file closes at sec2's
#    size for ten rounds.
start_pair a 10
while [ $r -lt 10 ]; do round; done
n=$(grep -c ' kept_list ' "$log" || true)
[ "$n" -ge 9 ] || fail "a reader registered: $n of 9 frees copied for it: $(grep -E 'kept|hole' "$log")"
! grep -q ' hole_reused ' "$log" || fail "a reader registered: the freed space went through a hole, not back at once"
proc_ask r go
[ "$ANSWER" = "still 1" ] || fail "the reader holding round 1 read \"$ANSWER\" after 9 rounds went into its space: $(proc_err r)"
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
size=$(stat -c %s "$WORK/a.h5")
out=$(env -u HDF5_DRIVER "$P" cycle "$WORK/sec2b.h5" 64 10 2>&1) || fail "sec2: $out"
[[ $out =~ closed\ ([0-9]+) ]] || fail "sec2: $out"
[ "$size" = "${BASH_REMATCH[1]}" ] || fail "10 rounds with a reader holding round 1: the file closed at $size bytes, on sec2 at ${BASH_REMATCH[1]}"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/a.h5" 10 2>&1) || fail "plain HDF5 after round 10: $out"
ok "a reader holding round 1 registered: 9 rounds went into the space the round before freed, the reader read round 1 all along, the file closed at sec2's $size bytes, plain HDF5 reads round 10"

# b. The reader keeps holding round 1 past its mark's release (20 x
#    max_lag = 60 epochs; counted from the writer's epoch when the reader
#    had opened, which is at least its snapshot's): the copies go lag epochs later (or the list
#    fills and the space is kept from raw data: hot zone, holes); the
#    reader's next read fails saying it fell behind -- never another
#    round's values.
start_pair b 1
while [ "$(epoch)" -lt $((e0 + 70)) ]; do
    [ $r -lt 5000 ] || fail "after $r rounds the writer is at epoch $(epoch)"
    round
done
proc_ask r go
[ "$ANSWER" = failed ] || fail "the reader holding round 1 read \"$ANSWER\" after its mark was released $(proc_err r)"
grep -q 'fell behind' "$WORK/r.err" || fail "the reader's read failed without saying it fell behind: $(proc_err r)"
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/b.h5" $r 2>&1) || fail "plain HDF5 after round $r: $out"
ok "a reader holding round 1 past its mark's release (70 epochs after its snapshot's, $r rounds): its next read fails, saying it fell behind; plain HDF5 reads round $r"
finish
