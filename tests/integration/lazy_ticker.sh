#!/usr/bin/env bash
# The writer's tick thread (vfd-swmr-writer/ticker.c): with publish=flush it
# starts only at the first call after the first tick has ended, so a
# session shorter than a tick never starts one; once started it ends ticks
# with the application idle. publish=tick starts it at open; tick_len=0
# never. Each run writes, flushes, rewrites and closes, and the values are
# read back through plain HDF5 (tests/progs/lazytick.c).
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/lt.h5
run() { # WHEN CONFIG
    rm -f "$f" "$f".md* "$WORK/lt.log"
    local out
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/lazytick" "$f" "$2;log_file_path=$WORK/lt.log" "$1") ||
        fail "$1 ($2): $(printf '%s\n' "$out" | tail -1) $(cat "$WORK/lt.log" 2>/dev/null | tail -3)"
    ok "$1 ($2): $(printf '%s\n' "$out" | tr '\n' ';')"
}
run deferred "tick_len=1;max_lag=3"
grep -q "ticker started: the first tick ended" "$WORK/lt.log" || fail "the writer did not log the thread's start: $(cat "$WORK/lt.log")"
run at-open "tick_len=1;max_lag=3;publish=tick"
run never "tick_len=0;max_lag=3"

# An ordinary program's sessions, each shorter than a tick (10 s): no thread
# is ever started, and every element reads back.
rm -f "$f" "$f".md* "$WORK/lt.log"
HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=100;max_lag=3;log_file_path=$WORK/lt.log" \
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/roundtrip" write "$f" || fail "roundtrip write through the writer"
"$VFDSWMR_PROGS/roundtrip" verify "$f" || fail "roundtrip verify through plain HDF5"
grep -q " ticker started" "$WORK/lt.log" && fail "a session shorter than a tick started the thread: $(cat "$WORK/lt.log")"
grep -q "close" "$WORK/lt.log" || fail "no close in the writer's log: $(cat "$WORK/lt.log")"
ok "sessions shorter than a tick start no tick thread; every element reads back"
finish
