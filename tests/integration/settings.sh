#!/usr/bin/env bash
# One source of truth for shared settings: the writer records tick_len and
# max_lag in the metadata file. A reader that sets neither adopts the
# writer's (its status says so, and with the writer's max_lag=11 it reads a
# snapshot 9 ticks old, which its own default of 7 would call fallen
# behind); a reader that sets either to a different value is refused at open
# with a message naming both values; the same values are accepted.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

# 1. Adoption: writer tick_len=0 (explicit ticks), max_lag=11.
f=$WORK/adopt.h5
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=11" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER"
proc_expect w "append 1000" "flushed 1000"
proc_expect w tick ticked
proc_start r env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG= ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r
[ "$ANSWER" = "ready 1000" ] || fail "reader not ready: $ANSWER $(proc_err r)"
proc_expect r "verify 1000" "rows 1000"
proc_ask r status
[[ $ANSWER == "status tick="*" writer_state=1 tick_len=0 max_lag=11" ]] \
    || fail "the reader's status does not show a running writer's tick_len=0 max_lag=11: $ANSWER"
ok "a reader without tick_len/max_lag adopts the writer's: its status says tick_len=0, max_lag=11"

for ((i = 1; i <= 9; i++)); do
    proc_expect w tick ticked
done
proc_expect r read "rows 1000"
ok "its snapshot 9 ticks behind the writer still reads (max_lag=11, not the default 7)"
# This reader is on the writer's host: its read mark holds its snapshot for
# 20 x max_lag ticks (the release point), past max_lag; then the writer
# releases it and it gets "fell behind", with the writer's max_lag (11).
for ((i = 10; i < 20 * 11; i++)); do
    proc_expect w tick ticked
done
proc_expect r read "rows 1000"
ok "registered (read mark): $((20 * 11 - 1)) ticks behind it still reads"
proc_expect w tick ticked
proc_expect w tick ticked
proc_expect r read failed
grep "fell behind" "$WORK/r.err" | grep -q "20 times max_lag=11" \
    || fail "past the release point: no \"fell behind\" error naming max_lag 11: $(proc_err r)"
ok "past 20 x max_lag ticks it was released: fell behind, with max_lag 11 in the message"
proc_expect r "verify 1000" "rows 1000"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
proc_expect r quit closed
proc_end r

# 2. Contradicting explicit settings: writer tick_len=0 (explicit ticks, so
# no reader can fall behind however slow it is), max_lag=7.
f=$WORK/strict.h5
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=7" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
proc_expect w "append 100" "flushed 100"
proc_expect w tick ticked
# config | the message (empty: accepted, and every row verified)
cases=(
    "max_lag=9|max_lag=9 in the reader's configuration contradicts the writer's max_lag=7"
    "tick_len=5|tick_len=5 in the reader's configuration contradicts the writer's tick_len=0"
    "tick_len=0;max_lag=9|max_lag=9 in the reader's configuration contradicts the writer's max_lag=7"
    "tick_len=4;max_lag=7|tick_len=4 in the reader's configuration contradicts the writer's tick_len=0"
    "max_lag=7|"
    "tick_len=0;max_lag=7|"
)
for c in "${cases[@]}"; do
    config=${c%%|*} want=${c#*|}
    out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$config" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowreader" "$f" check 100 2>&1)
    rc=$?
    if [ -z "$want" ]; then
        [ "$rc" = 0 ] && [ "$out" = "verified 100 rows, 0 more (0 written, 0 unwritten), 0 groups" ] \
            || fail "reader [$config] against the writer's tick_len=0;max_lag=7: $out"
        ok "reader [$config]: the writer's own values are accepted; 100 rows verified"
    else
        [ "$rc" = 1 ] || fail "reader [$config] was not refused: $out"
        [[ $out == *"$want"* ]] || fail "reader [$config]: the refusal lacks \"$want\": $out"
        ok "reader [$config] refused at open: \"$want\""
    fi
done
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
finish
