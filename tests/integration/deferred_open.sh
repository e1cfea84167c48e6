#!/usr/bin/env bash
# The writer's deferred open (DESIGN.md 6, "Deferred setup";
# tests/progs/deferred.c): an existing file opened for writing without
# TRUNC/CREAT holds only the writer's lock until the first call that
# reaches the file -- a second writer is refused meanwhile, an open closed
# unused changes nothing, and H5Fcreate(H5F_ACC_TRUNC) over an existing
# file (HDF5's tentative open first) makes one metadata file, not two.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

# (a lower driver without a descriptor -- stdio -- holds no writer lock: its
# open sets up at once, as before)
for cfg in "tick_len=1;max_lag=3" "tick_len=0;max_lag=3;publish=tick"; do
    rm -f "$WORK/df.h5" "$WORK"/df.h5.md*
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/deferred" "$WORK/df.h5" "$cfg" 2>&1) ||
        fail "$cfg: $(printf '%s\n' "$out" | tail -3)"
    ok "$cfg: $(printf '%s\n' "$out" | grep -c '^ok:') checks: $(printf '%s\n' "$out" | tr '\n' ' ' | cut -c1-400)"
done
# A writer truncating the file (H5Fcreate(H5F_ACC_TRUNC)) that found no
# writer at its step 2 and is stopped right there (test hook "claimed"; its
# second open -- the first is HDF5's tentative one); then another writer
# opens the file and waits with its setup deferred: it holds the writer's
# lock but no metadata file has its name. The truncating writer, let go,
# must be refused without truncating (it takes the writer's lock before
# its truncating open); the waiting writer then sets up and reads the file.
if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
  # the truncating writer by the file's name, and through a symbolic link to it
  for via in name link; do
    f=$WORK/race.h5
    rm -f "$f" "$f".md* "$WORK/link.h5"*
    target=$f
    [ $via = name ] || { ln -s race.h5 "$WORK/link.h5"; target=$WORK/link.h5; }
    HDF5_DRIVER= "$VFDSWMR_PROGS/rowwriter" "$f" create <<<"append 10" >/dev/null || fail "cannot make $f"
    sum=$(md5sum <"$f")
    hook_start "the truncating writer" "$WORK/race.out" env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" VFDSWMR_TEST_STOP_AT=claimed:2 \
        "$VFDSWMR_PROGS/tryopen" "$target" trunc
    proc_start a ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/deferred" hold "$f" "tick_len=1;max_lag=3"
    proc_read a
    [ "$ANSWER" = pending ] || fail "the waiting writer: $ANSWER $(proc_err a)"
    kill -CONT "$HOOK_PID"
    wait $HOOK_BG && fail "the truncating writer was not refused: $(cat "$WORK/race.out")"
    grep -q "not truncated; nothing was changed" "$WORK/race.out" ||
        fail "the truncating writer's refusal does not say why: $(cat "$WORK/race.out")"
    [ "$(md5sum <"$f")" = "$sum" ] || fail "the refused truncating writer changed the file ($(stat -c %s "$f") bytes)"
    ok "by $via: a truncating writer that found no writer, then met one whose setup waits, is refused and truncates nothing"
    proc_expect a go "set up"
    proc_expect a go closed
    proc_end a
    [ "$PROC_STATUS" = 0 ] || fail "the waiting writer: exit $PROC_STATUS $(proc_err a)"
    out=$("$VFDSWMR_PROGS/rowreader" "$f" check 10 2>&1) || fail "plain HDF5 after both: $out"
    ok "by $via: the waiting writer then set up, read the file and closed; plain HDF5 reads its 10 rows ($out)"
  done
else
    echo "# no test hooks in this build (not configured --enable-invariants): the race not tried"
fi
finish
