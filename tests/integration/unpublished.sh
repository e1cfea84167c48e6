#!/usr/bin/env bash
# A reader that opens a file before its writer's first flush is told to wait
# for that flush (not HDF5's "file signature not found"), opens the file
# once the writer has flushed, and is told plainly when the writer died
# without ever flushing. A writer that opened an existing file and has not
# flushed yet does not stop readers: the file on disk is whole.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

export HDF5_DRIVER_CONFIG='tick_len=1;max_lag=3'
f=$WORK/new.h5
want=$(seq -s ', ' 0 3 297) # /held of tests/progs/hold.c, as h5dump -y -w 0 prints it
# reader_try FILE: one read-only open through vfd_swmr_reader (rowreader
# checks /rows, which hold.c files do not have: only the open matters here),
# its stderr into OUT; true when the open itself succeeded.
reader_try() {
    OUT=$(HDF5_DRIVER=vfd_swmr_reader "$VFDSWMR_PROGS/rowreader" "$1" check 0 2>&1)
    [[ $OUT != *"H5Fopen failed"* ]]
}

proc_start w env HDF5_DRIVER=vfd_swmr_writer ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/hold" create "$f" unflushed
proc_read w
[ "$ANSWER" = opened ] || fail "the writer answered \"$ANSWER\": $(proc_err w)"
# The writer's ticks go on meanwhile: whatever tick the reader finds, it holds no page.
reader_try "$f" && fail "a reader opened a file its writer had not flushed: $OUT"
[[ $OUT == *"\"$f\" has no published snapshot yet: its writer has created it and not published a flush of it yet"* ]] \
    || fail "the reader's error does not say the writer has not flushed: $OUT"
[[ $OUT == *"Wait for the writer's first flush"* ]] || fail "the reader's error does not say to wait: $OUT"
ok "a reader before the writer's first flush is told to wait for it"

[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' ')" = "" ] || fail "the new file holds bytes on disk before its first flush"
proc_expect w go ready # hold.c writes /held and calls H5Fflush, then waits (idle)
# The flush was published before it returned, and the superblock's page
# written (sealed) right after: programs that look for HDF5's signature
# themselves (the netCDF library) recognise the file from now on, though
# the writer is idle and the delayed-write rule would write the page only
# max_lag ticks later.
sig=$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')
[ "$sig" = 894844460d0a1a0a ] || fail "after the writer's first flush the file does not start with HDF5's signature on disk: '$sig'"
ok "after the writer's first flush HDF5's signature is on disk at once"
OUT=$(env -u HDF5_DRIVER tool "$H5DUMP" -H "$f" 2>&1) && fail "plain HDF5 opened the live file: $OUT"
reader_try "$f" || fail "no reader could open the file when the writer's first flush returned: $OUT"
HDF5_DRIVER=vfd_swmr_reader tool "$H5DUMP" -y -w 0 -d /held "$f" | grep -qF "$want" \
    || fail "a reader after the first flush does not see /held: $(HDF5_DRIVER=vfd_swmr_reader tool "$H5DUMP" -d /held "$f" 2>&1)"
ok "after the writer's first flush the reader opens the file at once and reads every value; plain HDF5 refuses it (sealed)"
proc_end w # end of input: hold.c closes the file
[ "$PROC_STATUS" = 0 ] || fail "the writer failed: $(proc_err w)"

# A reader that loaded the metadata file before the writer's first publish
# (tick 0, no page) and looks at the HDF5 file after it (the test hook stops
# it right there): the signature is on disk by then, so the reader loads the
# metadata file again -- tick 0 is the file as the writer found it, empty --
# and reads what the flush published.
if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
    # 300 groups: metadata on many pages, not only the superblock's (with
    # that page alone on disk, tick 0 would read zeros for the rest)
    h=$WORK/race.h5
    proc_start w env HDF5_DRIVER=vfd_swmr_writer "$VFDSWMR_PROGS/rowwriter" "$h" create --unflushed
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "the writer (race) answered \"$ANSWER\": $(proc_err w)"
    hook_start "the reader" "$WORK/race.out" env HDF5_DRIVER=vfd_swmr_reader \
        VFDSWMR_TEST_STOP_AT=reader_attached:1 ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$h" check 0 300
    proc_ask w "groups 300" # the first flush: published, then the superblock's page on disk
    [ "$ANSWER" = "flushed groups 300" ] || fail "the writer (race) answered \"$ANSWER\": $(proc_err w)"
    kill -CONT "$HOOK_PID"
    wait $HOOK_BG || fail "the reader that loaded tick 0 before the writer's first flush failed: $(cat "$WORK/race.out")"
    ok "a reader that loaded tick 0 before the writer's first flush and opened the file after it reads the 300 groups the flush published"
    proc_ask w close
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "the writer (race) failed: $(proc_err w)"
else
    echo "# no test hooks in this build (not configured --enable-invariants): the tick-0 race not tried"
fi

# A writer on the existing (now plain) file that has not flushed yet: the
# file on disk has its superblock, and readers open it.
proc_start w env HDF5_DRIVER=vfd_swmr_writer "$VFDSWMR_PROGS/hold" open "$f" unflushed
proc_read w
[ "$ANSWER" = opened ] || fail "the writer (open) answered \"$ANSWER\": $(proc_err w)"
reader_try "$f" || fail "a reader was refused while a writer had an existing file open: $OUT"
HDF5_DRIVER=vfd_swmr_reader tool "$H5DUMP" -y -w 0 -d /held "$f" | grep -qF "$want" \
    || fail "a reader of an existing file does not see /held before the writer's flush"
ok "a writer that opened an existing file does not stop readers before its first flush"
proc_expect w go ready
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "the writer (open) failed: $(proc_err w)"

# A writer that dies before its first flush: the reader says so.
g=$WORK/died.h5
proc_start w env HDF5_DRIVER=vfd_swmr_writer "$VFDSWMR_PROGS/hold" create "$g" unflushed
proc_read w
[ "$ANSWER" = opened ] || fail "the writer (died) answered \"$ANSWER\": $(proc_err w)"
proc_kill w
reader_try "$g" && fail "a reader opened a file whose writer died before flushing: $OUT"
[[ $OUT == *"its writer created it and ended before any flush of it was published"* ]] \
    || fail "the reader's error does not say the writer died without flushing: $OUT"
ok "a writer that died before its first flush: the reader says the file holds nothing"
finish
