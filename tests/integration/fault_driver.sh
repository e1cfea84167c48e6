#!/usr/bin/env bash
# The test-only vfd_fault driver (tests/fault/fault.c) does what the error
# tests rely on: a bad configuration is refused with its parser's message;
# fail_after_writes and fail_errno fail exactly the writes they name, with
# the errno's text on the stack; max_eof writes the bytes below the limit;
# under the writer driver, flush_raw_data=1 can fsync through it (sec2's
# descriptor and POSIX-compatible flag).
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

for c in 'bogus=1|vfd_fault: bad configuration: unknown key "bogus"; accepted keys: max_eof, fail_after_writes, fail_errno, split_write_us, state_file' \
    'max_eof=-1|vfd_fault: bad configuration: max_eof=-1: expected a non-negative integer' \
    'fail_errno=EPERM|vfd_fault: bad configuration: fail_errno=EPERM: expected ENOSPC, EIO, EDQUOT or EFBIG' \
    'max_eof|vfd_fault: bad configuration: expected key=value at "max_eof"' \
    ' =5;|vfd_fault: bad configuration: expected key=value at " =5"'; do
    config=${c%%|*} want=${c#*|}
    out=$(HDF5_DRIVER=vfd_fault HDF5_DRIVER_CONFIG="$config" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/tryopen" "$WORK/bad.h5" trunc 2>&1) && fail "[$config] accepted"
    [[ $out == *"$want"* ]] || fail "[$config]: no \"$want\" in: $out"
    [ ! -e "$WORK/bad.h5" ] || fail "[$config]: a file was created"
    ok "vfd_fault refuses '$config': \"$want\""
done

# fail_after_writes=N with fail_errno=EIO: the (N+1)-th write fails. The
# file's creation and each flushed batch of 100 rows (one chunk under 2 KiB:
# few writes) pass until the limit; the message names the limit and EIO.
f=$WORK/eio.h5
proc_start w env HDF5_DRIVER=vfd_fault HDF5_DRIVER_CONFIG="fail_after_writes=12;fail_errno=EIO" "${FAULTY[@]}" \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "not ready: $ANSWER $(proc_err w)"
rows=0
for ((i = 1; i <= 20; i++)); do
    proc_ask w "append 100"
    [ "$ANSWER" = "flushed $((rows + 100))" ] || break
    rows=$((rows + 100))
done
[ "$ANSWER" = "failed $((rows + 100))" ] || fail "no write failed in 20 batches: $ANSWER"
stack_check "$WORK/w.err" H5Fflush
[[ $STACK == *"vfd_fault: cannot write "*" of \"$f\": Input/output error (injected: after 12 writes)"* ]] \
    || fail "the stack does not show the injected EIO: $STACK"
ok "fail_after_writes=12;fail_errno=EIO: $((rows / 100)) batches flushed, then EIO \"after 12 writes\""
proc_ask w close
proc_end w
[ "$PROC_STATUS" = 3 ] || fail "exit status $PROC_STATUS: $(proc_err w)"

# max_eof: a write across the limit leaves exactly the bytes below it.
f=$WORK/eof.h5
printf 'append 100\nappend 100000\nclose\n' | HDF5_DRIVER=vfd_fault HDF5_DRIVER_CONFIG="max_eof=40000" \
    "${FAULTY[@]}" "$VFDSWMR_PROGS/rowwriter" "$f" create >"$WORK/eof.out" 2>"$WORK/eof.err"
[ "$(head -n 3 "$WORK/eof.out")" = "$(printf 'ready 0\nflushed 100\nfailed 100100')" ] \
    || fail "max_eof=40000: $(cat "$WORK/eof.out" "$WORK/eof.err")"
stack_check "$WORK/eof.err" H5Fflush
[[ $STACK == *"No space left on device (injected: max_eof=40000)"* ]] || fail "max_eof: $STACK"
# The failed write that crosses 40000: its bytes below the limit are in the
# file (row values are never 0), the rest is not (the file's tail is zeros
# from the truncate at close).
cross=$(sed -n 's/.*cannot write \([0-9]*\) bytes at address \([0-9]*\) .*/\2 \1/p' "$WORK/eof.err" |
    awk '$1 < 40000 && $1 + $2 > 40000 {print $1, $1 + $2; exit}')
[ -n "$cross" ] || fail "max_eof=40000: no failed write crosses the limit: $(grep 'cannot write' "$WORK/eof.err")"
set -- $cross
below=$(od -v -A n -t x1 -j 39992 -N 8 "$f" | tr -d ' ')
above=$(od -v -A n -t x1 -j 40000 -N $(($2 - 40000)) "$f" | tr -d ' \n')
[ "$below" != 0000000000000000 ] && [ -z "${above//0/}" ] \
    || fail "max_eof=40000, write [$1, $2): below the limit $below, above it $above"
ok "max_eof=40000: the write of [$1, $2) fails with ENOSPC after writing its bytes below 40000"

# Under the writer with flush_raw_data=1 (fsync of sec2's descriptor).
f=$WORK/sync.h5
out=$(printf 'append 5000\ntick\nclose\n' | HDF5_DRIVER=vfd_swmr_writer \
    HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3;flush_raw_data=1;under=vfd_fault(max_eof=100000000)" \
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowwriter" "$f" create 2>&1) || fail "flush_raw_data over vfd_fault: $out"
[ "$out" = "$(printf 'ready 0\nflushed 5000\nticked\nclosed')" ] || fail "flush_raw_data over vfd_fault: $out"
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 5000 2>&1) || fail "$out"
[ "$out" = "verified 5000 rows, 0 more (0 written, 0 unwritten), 0 groups" ] || fail "$out"
ok "vfd_swmr_writer with flush_raw_data=1 over vfd_fault: fsync works; plain HDF5 reads all 5000 rows"
finish
