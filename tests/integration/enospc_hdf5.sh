#!/usr/bin/env bash
# A full disk under the HDF5 file: a writer through vfd_swmr_writer on the
# test-only vfd_fault (max_eof=2000000, through its state file) appends
# batches of rows, H5Fflush after each, until a write fails with ENOSPC. The
# writer gets clean error stacks (at most 32 entries, "No space left on
# device") and keeps its own exit status (no abort). It closes on a disk
# that stays full (max_eof=0), which cannot complete the HDF5 file, so the
# metadata file must be kept. Then, with space freed (plain sec2
# underneath), the recovery command brings the file to the last published
# state and plain HDF5 reads every row of every batch whose H5Fflush
# returned success.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/full.h5 limit=2000000 batch=8192 state=$WORK/fault.state
echo "max_eof=$limit" >"$state"
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3;under=vfd_fault(state_file=$state)" \
    "${FAULTY[@]}" "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER"
flushed=0
for ((i = 1; i <= 100; i++)); do
    proc_ask w "append $batch"
    case $ANSWER in
    "flushed $((flushed + batch))") flushed=$((flushed + batch)) && echo "$flushed" >>"$WORK/flushed" ;;
    "failed $((flushed + batch))") break ;;
    *) fail "append $batch after $flushed rows answered \"$ANSWER\"" ;;
    esac
done
[ "$ANSWER" = "failed $((flushed + batch))" ] || fail "no write failed in 100 batches of $batch rows"
[ "$flushed" -ge $((10 * batch)) ] || fail "a write failed after only $flushed rows (limit $limit bytes)"
ok "$((flushed / batch)) batches flushed, then H5Fflush failed (recorded in $WORK/flushed)"

stack_check "$WORK/w.err" H5Fflush
[[ $STACK == *'vfd_fault: cannot write '*' bytes at address '*": No space left on device (injected: max_eof=$limit)"* ]] \
    || fail "the H5Fflush stack does not show the injected ENOSPC: $STACK"
ok "H5Fflush failed with one stack of $(grep -c '^  #' <<<"$STACK") entries showing \"No space left on device\""

# The disk stays full (what was left is taken by others): no write of the
# close reaches the file, so the metadata file alone holds the flushed state.
echo "max_eof=0" >"$state.tmp" && mv "$state.tmp" "$state"
proc_ask w close
case $ANSWER in closed | "close failed") ;; *) fail "close answered \"$ANSWER\"" ;; esac
proc_end w
[ "$PROC_STATUS" = 3 ] || fail "writer exit status $PROC_STATUS, expected its own 3: $(proc_err w)"
stacks=$(stacks_check "$WORK/w.err") || fail "$stacks"
ok "close: \"$ANSWER\"; no abort (exit status 3), all $stacks stacks within HDF5's 32 entries"

[ -s "$f.md" ] || fail "the writer's close could not complete the HDF5 file, yet it left no metadata file to recover from"
ok "the metadata file is kept for recovery"
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" "$f" 2>&1) || fail "vfd_swmr_recover failed (status $?): $out"
[ "$(wc -l <<<"$out")" = 1 ] || fail "vfd_swmr_recover should say in one line what it did: $out"
ok "vfd_swmr_recover with plain sec2 underneath: $out"

out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check "$flushed" 2>&1) || fail "after recovery: $out"
[[ $out == "verified $flushed rows, "*", 0 groups" ]] || fail "after recovery: $out"
ok "plain HDF5 reads all $flushed rows whose H5Fflush returned success ($out)"
finish
