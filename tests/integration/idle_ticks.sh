#!/usr/bin/env bash
# The writer's ticks end while the application makes no call: the tick
# thread (vfd-swmr-writer/ticker.c) runs from the open for tick_len > 0,
# whatever the publish mode, and not at all for tick_len=0
# (tests/progs/idletick.c counts the process's threads and watches the
# published tick). Each run writes, flushes, rewrites and closes, and the
# values are read back through plain HDF5.
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/it.h5
run() { # WHEN CONFIG
    rm -f "$f" "$f".md*
    local out
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/idletick" "$f" "$2" "$1") ||
        fail "$1 ($2): $(printf '%s\n' "$out" | tail -1)"
    ok "$1 ($2): $(printf '%s\n' "$out" | tr '\n' ';')"
}
run at-open "tick_len=1;max_lag=3"
run at-open "tick_len=1;max_lag=3;publish=tick"
run never "tick_len=0;max_lag=3"
finish
