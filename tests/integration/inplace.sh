#!/usr/bin/env bash
# Raw data rewritten in place while a reader reads it (mdfile/mdlock.h, the
# raw-data lock; vfd-swmr-writer/inplace.c). HDF5 rewrites a contiguous
# dataset, a partly filled chunk or a filtered chunk of unchanged size at
# the same address; a reader reading it meanwhile must get one version
# whole, never half of each (for a deflated chunk, half of each is a stream
# the filter rejects).
# 1. `inplace write` rewrites a 128 KiB dataset in place, every element the
#    round's number, 40 times; the lower driver writes each time in two
#    halves 3 ms apart (vfd_fault split_write_us), as the kernel may write a
#    large write piecewise. A reader reading all along must never see two
#    rounds in one read. (Without the lock it does, within a few rounds.)
# 2. A reader stopped inside a raw read (here: a process holding the read
#    lock) delays the writer by at most a second, once, not at every write.
# 3. A writer stopped inside a raw write (a process holding the write lock)
#    makes a reader's raw read fail after 10 s with a message, not hang.
# 4. So does a writer stopped while it holds the raw-data gate.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

P=$VFDSWMR_PROGS/inplace
rounds=40
wcfg="tick_len=1;max_lag=3;under=vfd_fault(split_write_us=3000)"

proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$wcfg" ${VFDSWMR_VALGRIND:-} "$P" write "$WORK/f.h5" $rounds
proc_read w
[ "$ANSWER" = ready ] || fail "writer: $ANSWER $(proc_err w)"
proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" read "$WORK/f.h5" $rounds
proc_read r
[ "$ANSWER" = opened ] || fail "reader: $ANSWER $(proc_err r)"
proc_ask w go
[ "$ANSWER" = "done $rounds" ] || fail "writer: $ANSWER $(proc_err w)"
proc_read r
[[ $ANSWER == read*", none torn" ]] || fail "reader: $ANSWER $(proc_err r)"
reads=$(awk '{ print $2 }' <<<"$ANSWER")
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
ok "$rounds in-place rewrites, each written in two halves 3 ms apart: a reader read $reads times, never half of one round and half of another"

# 2. A stuck reader does not stall the writer at every write.
log=$WORK/w2.log
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3;log_file_path=$log" \
    ${VFDSWMR_VALGRIND:-} "$P" write "$WORK/g.h5" 10
proc_read w
[ "$ANSWER" = ready ] || fail "writer: $ANSWER $(proc_err w)"
proc_start h "$P" hold "$WORK/g.h5" rd
proc_read h
[ "$ANSWER" = held ] || fail "holder: $ANSWER $(proc_err h)"
proc_ask w go
[ "$ANSWER" = "done 10" ] || fail "writer: $ANSWER $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
proc_ask h go
[ "$ANSWER" = dropped ] || fail "holder: $ANSWER $(proc_err h)"
proc_end h
n=$(grep -c ' raw_lock_stuck ' "$log" || true)
[ "$n" = 1 ] || fail "the writer's log names a held raw-data lock $n times, expected once: $(grep raw_lock "$log")"
out=$(env -u HDF5_DRIVER "$P" read "$WORK/g.h5" 10 2>&1) || fail "plain HDF5 does not read round 10: $out"
ok "a reader stuck in a raw read: the writer waited once, went on, wrote all 10 rounds"

# 3. A stuck writer makes a reader's raw read fail, with a message.
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" \
    ${VFDSWMR_VALGRIND:-} "$P" write "$WORK/s.h5" 2
proc_read w
[ "$ANSWER" = ready ] || fail "writer: $ANSWER $(proc_err w)"
proc_start h "$P" hold "$WORK/s.h5" wr
proc_read h
[ "$ANSWER" = held ] || fail "holder: $ANSWER $(proc_err h)"
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" read "$WORK/s.h5" 1 2>&1) &&
    fail "a reader read while the raw-data lock was held for writing: $out"
grep -q 'the writer has been writing raw data for more than 10 s (is it stopped?)' <<<"$out" ||
    fail "the reader's error does not say why: $out"
proc_ask h go
[ "$ANSWER" = dropped ] || fail "holder: $ANSWER $(proc_err h)"
proc_end h
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" read "$WORK/s.h5" 1 2>&1) ||
    fail "once the lock went, the reader still cannot read: $out"
proc_ask w go
[ "$ANSWER" = "done 2" ] || fail "writer: $ANSWER $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
ok "a writer stuck in a raw write: the reader's read failed after 10 s saying so, and read once it was gone"

# 4. A writer stopped (SIGSTOP) while it holds the raw-data gate (no reader
#    was registered): a reader's first raw read fails after 10 s saying so;
#    once the writer runs again, it sees the reader and lets it read.
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" \
    ${VFDSWMR_VALGRIND:-} "$P" write "$WORK/t.h5" 2
proc_read w
[ "$ANSWER" = ready ] || fail "writer: $ANSWER $(proc_err w)"
kill -STOP "${PROC_PID[w]}"
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" read "$WORK/t.h5" 1 2>&1) &&
    { kill -CONT "${PROC_PID[w]}"; fail "a reader read raw data while a stopped writer held the raw-data gate: $out"; }
kill -CONT "${PROC_PID[w]}"
grep -q 'the writer did not let readers read raw data for 10 s (is it stopped?)' <<<"$out" ||
    fail "the reader's error does not say why: $out"
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" read "$WORK/t.h5" 1 2>&1) ||
    fail "once the writer ran again, the reader still cannot read: $out"
proc_ask w go
[ "$ANSWER" = "done 2" ] || fail "writer: $ANSWER $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
ok "a writer stopped while holding the raw-data gate: the reader's first raw read failed after 10 s saying so, and read once the writer ran again"
finish
