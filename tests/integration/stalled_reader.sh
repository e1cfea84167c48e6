#!/usr/bin/env bash
# Read marks (issue: "nobody on one host should ever see 'fell behind'"). A
# reader on the writer's host is stopped (SIGSTOP) for 10 x max_lag ticks
# while the writer appends and publishes at every tick; continued, it reads
# its old snapshot -- every value -- without an error, then refreshes to
# the newest. Stopped again for far longer, it is released once its
# snapshot is 20 x max_lag ticks old: from then on the metadata file stops
# growing, and the reader gets the documented "fell behind" error at its
# next read, then recovers with a refresh. Explicit ticks (tick_len=0): no
# timing anywhere.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/stalled.h5 lag=3
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=$lag" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
proc_expect w "append 500" "flushed 500"
proc_expect w tick ticked
proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r
[ "$ANSWER" = "ready 500" ] || fail "reader not ready: $ANSWER $(proc_err r)"
proc_expect r "verify 500" "rows 500"

total=500
# run N: N ticks, each after appending 100 rows
run() {
    local i
    for ((i = 0; i < $1; i++)); do
        total=$((total + 100))
        proc_expect w "append 100" "flushed $total"
        proc_expect w tick ticked
    done
}
kill -STOP "${PROC_PID[r]}"
run $((10 * lag))
kill -CONT "${PROC_PID[r]}"
proc_expect r read "rows 500"
proc_expect r "verify $total" "rows $total"
ok "stopped for $((10 * lag)) ticks (max_lag=$lag): read its snapshot (500 rows) without an error, then all $total"

kill -STOP "${PROC_PID[r]}"
run $((20 * lag + 5))           # past the release point
s1=$(stat -c %s "$f.md")
run $((10 * lag))               # the same work again, the reader still stopped
s2=$(stat -c %s "$f.md")
[ "$s2" -le "$s1" ] || fail "the metadata file kept growing after the release point: $s1 -> $s2 bytes"
kill -CONT "${PROC_PID[r]}"
proc_expect r read failed
grep -q "the writer released its snapshot" "$WORK/r.err" || fail "no release error: $(proc_err r)"
proc_expect r "verify $total" "rows $total"
ok "stopped past 20 x max_lag ticks: released, the metadata file bounded ($s1 -> $s2 bytes), a clear error, then all $total rows"

proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
proc_expect r quit closed
proc_end r
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check $total 2>&1) || fail "plain HDF5: $out"
ok "plain HDF5 reads all $total rows"

# A reader that opened the file before its writer started holds the file as
# it was -- the writer's tick 0 -- and marks that: it does not fall behind
# either, however many ticks the writer publishes.
proc_start r2 env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r2
[ "$ANSWER" = "ready $total" ] || fail "reader 2 not ready: $ANSWER $(proc_err r2)"
before=$total
proc_start w2 env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=$lag" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" open
proc_read w2
[ "$ANSWER" = "ready $before" ] || fail "writer 2 not ready: $ANSWER $(proc_err w2)"
proc_expect r2 read "rows $before" # notices the writer (tick 0) and marks tick 0
for ((i = 0; i < 10 * lag; i++)); do
    total=$((total + 100))
    proc_expect w2 "append 100" "flushed $total"
    proc_expect w2 tick ticked
done
proc_expect r2 read "rows $before"
proc_expect r2 "verify $total" "rows $total"
proc_expect w2 close closed
proc_end w2
[ "$PROC_STATUS" = 0 ] || fail "writer 2: $(proc_err w2)"
proc_expect r2 quit closed
proc_end r2
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check $total 2>&1) || fail "plain HDF5: $out"
ok "a reader open before its writer started read its view for $((10 * lag)) ticks without an error, then all $total rows"
finish
