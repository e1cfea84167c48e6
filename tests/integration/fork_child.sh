#!/usr/bin/env bash
# A writer that forks while its file is open (a daemon, a worker pool, a
# failed exec) keeps its session whatever the child does (common/forked.h):
# 1. the child calls exit(0), whose HDF5 atexit handler closes the child's
#    copy of the file; 2. the child calls H5Fclose on its copy (refused,
#    and a read through it too: forkchild's child exits 0 only then). Each
#    time the parent's metadata file stays, a reader opening after the
#    child ended reads /a, the parent's next flush (/b) reaches readers,
#    its close succeeds and plain HDF5 reads both. Before, the child's close
#    published a final snapshot, cleared the seal and removed the parent's
#    metadata file. 3. A child that lives on (waits to be killed): once the
#    parent closed, a new writer opens the file -- before, the child's
#    copies of the parent's descriptors kept its locks, and every writer was
#    refused ("another writer has ... open") until the child ended; the
#    same for a program it started with posix_spawn (no fork handler runs:
#    close-on-exec on the HDF5 file's descriptor). Also: a child that opens
#    the file again (read-only) before closing its copy reads the parent's
#    published state, not the refused copy; and a reader whose child exits
#    reads on and keeps its read mark.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

P=$VFDSWMR_PROGS/forkchild
cfg="tick_len=1;max_lag=3"
# Under valgrind, the parents only, and no leak check under ASan: a fork
# child of a threaded process leaks what the other threads (the ticker)
# held at the fork, which it cannot free.
VG="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 ${VFDSWMR_VALGRIND:+$VFDSWMR_VALGRIND --child-silent-after-fork=yes}"

for mode in exit close reread; do
    f=$WORK/$mode.h5
    proc_start "$mode" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" $VG "$P" write "$f" $mode
    proc_read "$mode"
    [ "$ANSWER" = "flushed a" ] || fail "$mode: writer: $ANSWER $(proc_err "$mode")"
    proc_read "$mode"
    [ "$ANSWER" = "child 0" ] ||
        fail "$mode: the child ended with \"$ANSWER\" (2: its H5Fclose succeeded; 3: it read /a; 4-6: reopening failed): $(proc_err "$mode")"
    [ -f "$f.md" ] || fail "$mode: the child's exit removed the parent's metadata file"
    out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" check "$f" a 2>&1) || fail "$mode: a reader after the child ended: $out"
    proc_ask "$mode" go
    [ "$ANSWER" = "flushed b" ] || fail "$mode: writer: $ANSWER $(proc_err "$mode")"
    out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" check "$f" ab 2>&1) || fail "$mode: a reader after /b: $out"
    proc_ask "$mode" go
    [ "$ANSWER" = closed ] || fail "$mode: writer: $ANSWER $(proc_err "$mode")"
    proc_end "$mode"
    [ "$PROC_STATUS" = 0 ] || fail "$mode: writer exit status $PROC_STATUS: $(proc_err "$mode")"
    out=$(env -u HDF5_DRIVER "$P" check "$f" ab 2>&1) || fail "$mode: plain HDF5 after close: $out"
    ok "a child that ${mode}s: the parent's session goes on (metadata file kept, readers see /a and /b), its close succeeds, plain HDF5 reads both"
done

# A reader that forks: its child's exit closes the child's copy, which
# must not unmark or unregister the parent; the parent reads on.
f=$WORK/r.h5
proc_start rw env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" $VG "$P" write "$f" close
proc_read rw
proc_read rw
[ "$ANSWER" = "child 0" ] || fail "reader part: writer: $ANSWER $(proc_err rw)"
proc_start r env HDF5_DRIVER=vfd_swmr_reader $VG "$P" read "$f"
proc_read r
[ "$ANSWER" = "child 0" ] || fail "reader: $ANSWER $(proc_err r)"
proc_ask r go
[ "$ANSWER" = ok ] || fail "the reader, after its child ended: $ANSWER $(proc_err r)"
proc_ask rw go
[ "$ANSWER" = "flushed b" ] || fail "reader part: writer: $ANSWER $(proc_err rw)"
# the reader is still registered on its read mark's slot byte (its child
# did not unregister it: one open file description, one lock)
marked=$("$VFDSWMR_PROGS/lockmd" --marked "$f" 2>&1)
[ "$marked" = "marked 1" ] || fail "after the reader's child exited: $marked, not one reader on a mark's byte"
proc_ask r go
[ "$ANSWER" = closed ] || fail "reader: $ANSWER $(proc_err r)"
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
proc_ask rw go
[ "$ANSWER" = closed ] || fail "reader part: writer: $ANSWER $(proc_err rw)"
proc_end rw
ok "a reader whose child exits reads on, through the same open file, and keeps its read mark"

for mode in hold spawn; do
f=$WORK/$mode.h5
proc_start $mode env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" $VG "$P" write "$f" $mode
proc_read $mode
[ "$ANSWER" = "flushed a" ] || fail "$mode: writer: $ANSWER $(proc_err $mode)"
proc_read $mode
[[ $ANSWER =~ ^child\ ([0-9]+)$ ]] || fail "$mode: writer: $ANSWER $(proc_err $mode)"
child=${BASH_REMATCH[1]}
CLEANUP+=("kill -KILL $child 2>/dev/null")
proc_ask $mode go
[ "$ANSWER" = "flushed b" ] || fail "$mode: writer: $ANSWER $(proc_err $mode)"
proc_ask $mode go
[ "$ANSWER" = closed ] || fail "$mode: writer: $ANSWER $(proc_err $mode)"
proc_end $mode
[ "$PROC_STATUS" = 0 ] || fail "$mode: writer exit status $PROC_STATUS: $(proc_err $mode)"
kill -0 "$child" 2>/dev/null || fail "$mode: the child is gone before the check"
out=$(env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} "$P" reopen "$f" 2>&1) ||
    fail "$mode: a new writer while the closed writer's child lives: $out"
kill -0 "$child" 2>/dev/null || fail "$mode: the child ended during the check"
kill -KILL "$child"
out=$(env -u HDF5_DRIVER "$P" check "$f" ab 2>&1) || fail "$mode: plain HDF5: $out"
done
ok "a fork child that lives on, and a program started with posix_spawn: once the parent closed, a new writer opens the file"
finish
