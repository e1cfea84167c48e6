#!/usr/bin/env bash
# A full disk under the metadata file: the metadata file lives on a small
# tmpfs (mounted here; root only). A writer (explicit ticks: tick_len=0)
# publishes five batches that a reader verifies; then the tmpfs is filled
# and the next publish fails. The writer gets a clear error ("cannot
# publish", "No space left on device"), the reader learns that the writer
# stopped publishing (vfdswmr_get_status: VFDSWMR_WRITER_FAILED; vfd_swmr_inspect
# says "failed" too) instead of
# a silently frozen view, and after H5Fclose plain HDF5 reads every row and
# group whose H5Fflush returned success -- also those flushed after the last
# publish (DESIGN section 6). Twice: with publish=tick the failing publish
# is an end of tick after flushes that returned success; with publish=flush
# (the default) it is the flush itself, which then fails -- and there with
# keep_metadata_file=1, which must not keep a metadata file whose snapshot
# is older than the file (recovery would take the file back to it).
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root to mount a tmpfs"
    exit 77
fi
mnt=$WORK/mnt
mkdir "$mnt"
mount -t tmpfs -o size=1m vfdswmr-test "$mnt" 2>"$WORK/mount.err" \
    || { echo "SKIP: cannot mount a tmpfs: $(cat "$WORK/mount.err")"; exit 77; }
CLEANUP+=("umount '$mnt' || umount -l '$mnt'")

VFDSWMR_WRITER_FAILED=4 # include/vfdswmr.h

# run MODE [CONFIG]: the whole scenario with publish=MODE (and CONFIG), in a
# fresh tmpfs state.
run() {
local mode=$1 f=$WORK/$1.h5 cfg="tick_len=0;max_lag=3;publish=$1;md_file_path=$mnt${2:+;$2}" rows groups=0 refresh closed out
rm -rf "${mnt:?}"/* # the other run's files
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER"
proc_expect w tick ticked
[ -s "$mnt/$mode.h5.md" ] || fail "no metadata file on the tmpfs"
proc_start r env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r
[ "$ANSWER" = "ready 0" ] || fail "reader not ready: $ANSWER $(proc_err r)"
rows=0
for ((i = 1; i <= 5; i++)); do
    proc_expect w "append 1000" "flushed $((rows + 1000))"
    rows=$((rows + 1000))
    proc_expect w tick ticked
    proc_expect r "verify $rows" "rows $rows"
done
ok "publish=$mode: 5 batches of 1000 rows flushed and published; the reader verified each"

head -c 2M /dev/zero >"$mnt/filler" 2>/dev/null
[ "$(df -B1 --output=avail "$mnt" | tail -n 1 | tr -d ' ')" = 0 ] || fail "the tmpfs is not full: $(df "$mnt")"
if [ "$mode" = tick ]; then
    # Flushed, not yet published: H5Fflush does not touch the metadata file.
    proc_expect w "append 1000" "flushed 6000"
    rows=6000
    proc_expect w "groups 200" "flushed groups 200"
    groups=200
    proc_expect w tick "tick failed"
    stack_check "$WORK/w.err" vfdswmr_end_tick
else
    # The flush publishes: it fails, and says why.
    proc_expect w "groups 200" "failed groups 200"
    stack_check "$WORK/w.err" H5Fflush
fi
[[ $STACK == *"vfd_swmr_writer: cannot publish tick "*"$mnt/$mode.h5.md"*": No space left on device"* ]] \
    || fail "the writer's stack does not say it cannot publish for lack of space: $STACK"
ok "publish=$mode: the publish after 200 new groups failed: \"cannot publish\" with \"No space left on device\" on the stack"

# The reader: a refresh may fail or keep the last snapshot, but the status
# must tell that the writer stopped publishing.
proc_ask r refresh
refresh=$ANSWER
proc_ask r status
[[ $ANSWER == "status tick="*" writer_state=$VFDSWMR_WRITER_FAILED tick_len=0 max_lag=3" ]] \
    || fail "the reader's status after the failed publish is \"$ANSWER\", expected writer_state=$VFDSWMR_WRITER_FAILED (VFDSWMR_WRITER_FAILED); refresh answered \"$refresh\""
ok "publish=$mode: the reader's status says VFDSWMR_WRITER_FAILED (refresh: $refresh)"
# vfd_swmr_inspect, from outside: the writer runs but failed (the header's FAILED flag, the lock held)
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_INSPECT" --json "$f" 2>&1) || fail "vfd_swmr_inspect of the failed writer's file: $out"
python3 -c 'import json, sys; w = json.loads(sys.argv[1])["writer"]; sys.exit((w["state"], w["lock_held"]) != ("failed", True))' "$out" ||
    fail "vfd_swmr_inspect after the failed publish: $out"
ok "publish=$mode: vfd_swmr_inspect says the writer failed"

# The writer goes on: what H5Fflush reports as flushed must be kept.
proc_ask w "append 1000"
case $ANSWER in
"flushed $((rows + 1000))") rows=$((rows + 1000)) ;;
"failed $((rows + 1000))") ;;
*) fail "append after the failed publish answered \"$ANSWER\"" ;;
esac
proc_ask w close
# The HDF5 file gets everything at close: H5Fclose succeeds (its value says
# whether data was lost); the failed publish failed its own call.
[ "$ANSWER" = closed ] || fail "close answered \"$ANSWER\" although the HDF5 file can take everything: $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 3 ] || fail "writer exit status $PROC_STATUS, expected its own 3 (a failed command): $(proc_err w)"
[ ! -e "$mnt/$mode.h5.md" ] || fail "the metadata file is left although the HDF5 file got everything"
ok "publish=$mode: H5Fclose succeeded and removed the metadata file (the writer's exit status 3 is the failed command's)"
proc_ask r quit
proc_end r

out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check "$rows" "$groups" 2>&1) \
    || fail "after H5Fclose, plain HDF5: $out"
# Rows of a failed H5Fflush may be there too; each holds its value or 0.
[[ $out == "verified $rows rows, "*" more ("*" written, "*" unwritten), $groups groups" ]] || fail "after H5Fclose: $out"
ok "publish=$mode: plain HDF5 reads all $rows flushed rows and $groups groups ($out)"
}

run tick
run flush keep_metadata_file=1

# A writer refused at the end of its open changes nothing: with the
# updater files' directory full, opening a file fails writing the first
# updater file (open.c go_live), after the writer sealed the superblock --
# the seal must go with it. Once on a closed file (byte for byte as found
# afterwards), once on a file whose writer died (recovered by the refused
# open: plain HDF5 then reads the flushed round).
rm -rf "${mnt:?}"/*
dd if=/dev/zero of="$mnt/fill" bs=4k >/dev/null 2>&1 # ENOSPC ends it
E=$VFDSWMR_PROGS/eoaclose
ucfg="tick_len=0;max_lag=3;generate_updater_files=1;updater_file_path=$mnt/u"
env -u HDF5_DRIVER "$E" cycle "$WORK/found.h5" 16 1 >/dev/null 2>&1 || fail "sec2: cannot make the file"
cp "$WORK/found.h5" "$WORK/refused.h5"
out=$(env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$ucfg" "$E" again "$WORK/refused.h5" 16 </dev/null 2>&1) &&
    fail "the writer opened with a full updater directory: $out"
[[ $out == *"cannot write updater file $mnt/u.0: No space left on device"* ]] || fail "the open failed, but: $out"
cmp "$WORK/refused.h5" "$WORK/found.h5" >/dev/null ||
    fail "the refused writer changed the file: $(cmp "$WORK/refused.h5" "$WORK/found.h5" 2>&1)"
out=$(env -u HDF5_DRIVER "$E" cyclecheck "$WORK/refused.h5" 1 2>&1) || fail "plain HDF5 after the refused open: $out"
ok "a writer refused at the end of its open (updater directory full) leaves the file byte for byte as found"

proc_start dead env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" \
    ${VFDSWMR_VALGRIND:-} "$E" cycle "$WORK/dead.h5" 16 2 wait
proc_read dead
[ "$ANSWER" = "round 1" ] || fail "writer: $ANSWER $(proc_err dead)"
proc_kill dead
out=$(env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$ucfg" "$E" again "$WORK/dead.h5" 16 </dev/null 2>&1) &&
    fail "the writer opened with a full updater directory: $out"
[[ $out == *"No space left on device"* ]] || fail "the open failed, but: $out"
out=$(env -u HDF5_DRIVER "$E" cyclecheck "$WORK/dead.h5" 1 2>&1) ||
    fail "plain HDF5 after the refused open recovered the dead writer's file: $out"
ok "the same on a file whose writer died: recovered by the refused open, and plain HDF5 reads the flushed round"
finish
