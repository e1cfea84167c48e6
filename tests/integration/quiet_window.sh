#!/usr/bin/env bash
# The quiet window (mdfile/mdlock.h): a reader holding a file no writer had
# when it looked last does not look again for 20 ms; a writer that starts
# meanwhile waits that out before it writes, whatever its lower driver --
# also one without a descriptor of its own (stdio), where the writer looks
# for registered readers through the file's name. The writer is started
# and ready before the reader's first read, then opens, rewrites an
# attribute in place and ends 6 ticks (tick_len=0, max_lag=3: the old
# bytes may go at once); the reader's next read must be refused (it fell
# behind), never return the writer's bytes as the file it holds. The
# writer logs that it waited.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

quiet() { "$VFDSWMR_PROGS/quiet" "$@"; }
f=$WORK/q.h5
for under in sec2 stdio; do
    rm -f "$f" "$f".md* "$WORK/q.log"
    quiet make "$f" || fail "make $f"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3;under=$under;log_file_path=$WORK/q.log" \
        ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/quiet" write "$f"
    proc_read w
    [ "$ANSWER" = ready ] || fail "under=$under: writer: $ANSWER $(proc_err w)"
    proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/quiet" read "$f"
    proc_read r
    [ "$ANSWER" = "read1 ok" ] || fail "under=$under: reader: $ANSWER $(proc_err r)"
    proc_expect w go done
    proc_ask r again
    case $ANSWER in
    "refused: "*"fell behind: its snapshot (tick 0) is max_lag=3 or more"*) ok "under=$under: the reader's next read is refused: ${ANSWER#refused: }" ;;
    *) fail "under=$under: the reader's next read after the writer's in-place write: $ANSWER $(proc_err r)" ;;
    esac
    grep -q "waited 40 ms for readers holding the file as it was" "$WORK/q.log" ||
        fail "under=$under: the writer did not wait for the reader: $(cat "$WORK/q.log")"
    ok "under=$under: the writer waited for the reader holding the file as it was"
    proc_end r
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "under=$under: writer exit $PROC_STATUS $(proc_err w)"
done
# No reader registered: no wait.
rm -f "$f" "$f".md* "$WORK/q.log"
quiet make "$f" || fail "make $f"
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3;log_file_path=$WORK/q.log" \
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/quiet" write "$f"
proc_read w
proc_expect w go done
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer alone: exit $PROC_STATUS $(proc_err w)"
! grep -q "waited 40 ms" "$WORK/q.log" || fail "a writer with no reader waited: $(grep "waited 40" "$WORK/q.log")"
ok "a writer with no reader registered does not wait"
