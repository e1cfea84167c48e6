#!/usr/bin/env bash
# Read-only opens through vfd_swmr_writer (HDF5_DRIVER=vfd_swmr_writer set
# for a whole job, h5dump and HDF5's flush2 included) would read the HDF5
# file as it is -- wrong while a writer runs or after one died, since
# metadata reaches the file max_lag ticks after it was published. They read
# through vfd_swmr_reader instead, as vfd_swmr_reader does:
#  - while a writer runs: every published row and group;
#  - after the writer was SIGKILLed: every published row and group and
#    nothing of the state flushed after the last tick; a live reader's
#    status says the writer died;
# neither changes a byte of either file. After vfd_swmr_recover, a
# read-only open through vfd_swmr_writer reads the published state, as
# plain HDF5 does. Explicit ticks (tick_len=0) make every step exact.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=0;max_lag=3;publish=tick" # flushes between ticks stay unpublished
f=$WORK/f.h5
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"

# check_through DRIVER ROWS GROUPS: rowreader reads exactly ROWS rows and GROUPS groups.
check_through() { check_rows "$f" "$1" "$cfg" "$2" "$3"; }
# through_writer ROWS GROUPS: a read-only open through vfd_swmr_writer reads
# exactly ROWS rows and GROUPS groups; neither file changes.
through_writer() {
    cp "$f" "$WORK/f.before"
    cp "$f.md" "$WORK/md.before"
    check_through vfd_swmr_writer "$1" "$2"
    cmp "$f" "$WORK/f.before" || fail "a read-only open through vfd_swmr_writer changed the HDF5 file"
    cmp "$f.md" "$WORK/md.before" || fail "a read-only open through vfd_swmr_writer changed the metadata file"
}

proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
proc_expect w "append 1000" "flushed 1000"
proc_expect w tick ticked
proc_expect w "groups 5" "flushed groups 5"
proc_expect w tick ticked
through_writer 1000 5
check_through vfd_swmr_reader 1000 5
ok "writer running: a read-only open through vfd_swmr_writer reads 1000 rows and 5 groups, as vfd_swmr_reader does; both files byte-identical"

# Some pages reach the HDF5 file (published max_lag ticks ago), newer ones
# stay in the metadata file: the HDF5 file alone mixes ticks.
proc_expect w tick ticked
proc_expect w tick ticked
proc_expect w "append 1000" "flushed 2000"
proc_expect w "groups 2" "flushed groups 7"
proc_expect w tick ticked
proc_start r env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r
[ "$ANSWER" = "ready 2000" ] || fail "reader not ready: $ANSWER $(proc_err r)"
proc_expect r status "status tick=5 writer_state=1 tick_len=0 max_lag=3"
# flushed, never published: lost with the writer
proc_expect w "append 500" "flushed 2500"
proc_expect w "groups 1" "flushed groups 8"
proc_kill w
[ -s "$f.md" ] || fail "the killed writer left no metadata file"

proc_expect r status "status tick=5 writer_state=3 tick_len=0 max_lag=3"
proc_expect r read "rows 2000"
through_writer 2000 7
ok "writer killed: a read-only open through vfd_swmr_writer reads the 2000 published rows and 7 groups, both files byte-identical"
# Without vfd_swmr_reader on the plugin path it fails with the reason.
cp "$f" "$WORK/f.before"
cp "$f.md" "$WORK/md.before"
only_writer=$(printf '%s\n' "${HDF5_PLUGIN_PATH//:/$'\n'}" | grep -v vfd-swmr-reader | paste -sd:)
[ "$only_writer" != "$HDF5_PLUGIN_PATH" ] || fail "HDF5_PLUGIN_PATH=$HDF5_PLUGIN_PATH: no directory of vfd_swmr_reader's own to leave out"
out=$(HDF5_PLUGIN_PATH=$only_writer HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" \
    "$VFDSWMR_PROGS/rowreader" "$f" check 0 2>&1) && fail "opened without vfd_swmr_reader on the plugin path: $out"
[[ $out == *"its writer died: a read-only open reads it through vfd_swmr_reader, which could not open it"* ]] ||
    fail "no reason given: $out"
cmp "$f" "$WORK/f.before" || fail "the failed open changed the HDF5 file"
cmp "$f.md" "$WORK/md.before" || fail "the failed open changed the metadata file"
ok "without vfd_swmr_reader on HDF5_PLUGIN_PATH the read-only open fails saying so, both files byte-identical"
check_through vfd_swmr_reader 2000 7
proc_expect r read "rows 2000"
ok "writer killed: vfd_swmr_reader reads the 2000 published rows and 7 groups, not the unpublished ones; a live reader's status says died"
proc_expect r quit closed
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "the reader exited with status $PROC_STATUS: $(proc_err r)"

out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$f" 2>&1) || fail "vfd_swmr_recover: $out"
[[ $out == "vfd_swmr_recover: $f: recovered tick 5 of writer session "* ]] || fail "vfd_swmr_recover: $out"
[ ! -e "$f.md" ] || fail "vfd_swmr_recover left the metadata file"
check_through vfd_swmr_writer 2000 7
check_through plain 2000 7
check_through vfd_swmr_reader 2000 7
ok "after vfd_swmr_recover: read-only through vfd_swmr_writer, plain HDF5 and vfd_swmr_reader read 2000 rows and 7 groups"
finish
