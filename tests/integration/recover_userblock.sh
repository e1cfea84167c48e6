#!/usr/bin/env bash
# Files with a user block: the superblock is not at offset 0 but after the
# user block (512, 1024, ... bytes). For a 512- and an 8192-byte user block,
# each in the default (version 0 superblock) and the latest file format
# (version 3 superblock, whose "open for writing" flags a writer sets):
#  - a reader through vfd_swmr_reader opens the file while its writer runs
#    without SWMR-write mode (the reader must clear those flags where the
#    superblock is) and verifies every published row;
#  - the writer publishes rows and groups (explicit ticks, tick_len=0), then
#    flushes more rows without publishing them and is SIGKILLed;
#  - vfd_swmr_recover recovers one such file, and the next writer's
#    read-write open through vfd_swmr_writer another (it then appends and
#    closes); afterwards plain HDF5 -- no driver, no h5clear -- reads every
#    row and group of the published state, and nothing of the unpublished
#    one, and the user block is still all zeros (HDF5 never writes it).
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=0;max_lag=3;publish=tick" # flushes between ticks stay unpublished
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"

# plain_check FILE ROWS GROUPS: plain HDF5 (no driver) reads exactly ROWS
# rows and GROUPS groups, every value right.
plain_check() {
    local out
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$1" check "$2" "$3" 2>&1) || fail "plain HDF5, $1: $out"
    [ "$out" = "verified $2 rows, 0 more (0 written, 0 unwritten), $3 groups" ] || fail "plain HDF5, $1: $out"
}

# user_block_intact FILE UB: the superblock signature is at byte UB and the
# UB bytes before it are zeros.
user_block_intact() {
    cmp -s -n 8 <(tail -c +$(($2 + 1)) "$1") <(printf '\211HDF\r\n\032\n') \
        || fail "$1: no superblock signature at byte $2: $(od -An -tx1 -j "$2" -N 8 "$1")"
    cmp -s -n "$2" "$1" /dev/zero || fail "$1: the $2-byte user block is no longer all zeros"
}

# crashed_writer FILE UB LIBVER: a writer (not in SWMR-write mode) creates
# FILE with a UB-byte user block in format LIBVER, publishes 1000 rows and 5
# groups, a reader through vfd_swmr_reader verifies the rows while it runs;
# then the writer flushes 500 more rows without publishing them and is
# killed (SIGKILL).
crashed_writer() {
    local f=$1 ub=$2 libver=$3
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" create --userblock "$ub" --libver "$libver"
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "$f: writer not ready: $ANSWER"
    proc_expect w "append 1000" "flushed 1000"
    proc_expect w tick ticked
    proc_start r env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowreader" "$f" watch
    proc_read r
    [ "$ANSWER" = "ready 1000" ] || fail "$f: a reader cannot open the live file: $ANSWER $(proc_err r)"
    proc_expect r "verify 1000" "rows 1000"
    proc_expect w "groups 5" "flushed groups 5"
    proc_expect w tick ticked
    proc_expect r "verify 1000" "rows 1000"
    proc_expect r quit closed
    proc_end r
    [ "$PROC_STATUS" = 0 ] || fail "$f: the reader exited with status $PROC_STATUS: $(proc_err r)"
    proc_expect w "append 500" "flushed 1500"
    proc_kill w
    [ -s "$f.md" ] || fail "$f: the killed writer left no metadata file"
}

for ub in 512 8192; do
    for libver in earliest latest; do
        # Recovered by vfd_swmr_recover.
        f=$WORK/ub$ub-$libver.h5
        crashed_writer "$f" "$ub" "$libver"
        ok "$ub-byte user block, $libver format: a reader verified 1000 rows while the writer ran; writer killed"
        [ -e "$f.md.raw" ] && [ -e "$f.md.readers" ] || fail "$f: the killed writer left no raw-data log or read-mark table"
        out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$f" 2>&1) || fail "vfd_swmr_recover $f: $out"
        [[ $out == "vfd_swmr_recover: $f: recovered tick 2 of writer session "* ]] \
            || fail "vfd_swmr_recover $f did not recover tick 2: $out"
        [ ! -e "$f.md" ] || fail "$f: vfd_swmr_recover left the metadata file"
        left=$(ls "$f".md* 2>/dev/null || true)
        [ -z "$left" ] || fail "$f: vfd_swmr_recover left side files of the dead session: $left"
        plain_check "$f" 1000 5
        user_block_intact "$f" "$ub"
        ok "$ub-byte user block, $libver format: after vfd_swmr_recover plain HDF5 reads 1000 rows and 5 groups"

        # Recovered by the next writer's read-write open.
        f=$WORK/ub$ub-$libver-next.h5
        crashed_writer "$f" "$ub" "$libver"
        proc_start n env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
            "$VFDSWMR_PROGS/rowwriter" "$f" open
        proc_read n
        [ "$ANSWER" = "ready 1000" ] || fail "$f: the next writer did not open the recovered file: $ANSWER $(proc_err n)"
        proc_expect n "append 500" "flushed 1500"
        proc_expect n "groups 2" "flushed groups 7"
        proc_expect n close closed
        proc_end n
        [ "$PROC_STATUS" = 0 ] || fail "$f: the next writer exited with status $PROC_STATUS: $(proc_err n)"
        [ ! -e "$f.md" ] || fail "$f: the next writer closed but left its metadata file"
        left=$(ls "$f".md* 2>/dev/null || true)
        [ -z "$left" ] || fail "$f: the next writer closed but left side files: $left"
        plain_check "$f" 1500 7
        user_block_intact "$f" "$ub"
        ok "$ub-byte user block, $libver format: the next writer recovered 1000 rows, wrote to 1500 rows and 7 groups; plain HDF5 reads them"
    done
done
finish
