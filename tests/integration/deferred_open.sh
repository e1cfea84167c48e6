#!/usr/bin/env bash
# The writer's deferred open (DESIGN.md 6, "Deferred setup";
# tests/progs/deferred.c): an existing file opened for writing without
# TRUNC/CREAT holds only the writer's lock until the first call that
# reaches the file -- a second writer is refused meanwhile, an open closed
# unused changes nothing, and H5Fcreate(H5F_ACC_TRUNC) over an existing
# file (HDF5's tentative open first) makes one metadata file, not two.
. "${VFDSWMR_TESTLIB:?}"

# (a lower driver without a descriptor -- stdio -- holds no writer lock: its
# open sets up at once, as before)
for cfg in "tick_len=1;max_lag=3" "tick_len=0;max_lag=3;publish=tick"; do
    rm -f "$WORK/df.h5" "$WORK"/df.h5.md*
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/deferred" "$WORK/df.h5" "$cfg" 2>&1) ||
        fail "$cfg: $(printf '%s\n' "$out" | tail -3)"
    ok "$cfg: $(printf '%s\n' "$out" | grep -c '^ok:') checks: $(printf '%s\n' "$out" | tr '\n' ' ' | cut -c1-400)"
done
finish
