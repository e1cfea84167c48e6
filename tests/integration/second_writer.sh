#!/usr/bin/env bash
# A refused writer changes nothing. A first writer holds a file (explicit
# ticks, tick_len=0, so neither of its files changes between two commands)
# while two readers verify it; a second writer process then tries every open
# HDF5 may use -- H5Fcreate with H5F_ACC_TRUNC or H5F_ACC_EXCL, H5Fopen with
# H5F_ACC_RDWR, each also with H5F_ACC_SWMR_WRITE -- selected through the
# environment and through vfdswmr_set_fapl_writer. Each is refused with a
# message containing "another writer", and the HDF5 file and the metadata
# file stay byte-identical, nothing is created, and the readers keep
# verifying every row. Then the first writer goes on and closes, and plain
# HDF5 reads every value. Last, writers refused for an unusable md_file_path
# leave the closed file byte-identical and create nothing.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

data=$WORK/data
mkdir "$data"
f=$data/live.h5 cfg="tick_len=0;max_lag=3"
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create --swmr
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER"
proc_expect w "append 1000" "flushed 1000"
proc_expect w tick ticked
for r in r1 r2; do
    proc_start $r env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowreader" "$f" watch
    proc_read $r
    [ "$ANSWER" = "ready 1000" ] || fail "$r not ready: $ANSWER $(proc_err $r)"
    proc_expect $r "verify 1000" "rows 1000"
done
ok "a writer holds $f with 1000 rows published; two readers verified them"

cp "$f" "$WORK/live.h5.before"
cp "$f.md" "$WORK/live.h5.md.before"
listing=$(ls -A "$data")
# attempt HOW MODE: one open attempt of a second writer; HOW is env (HDF5_DRIVER)
# or fapl (vfdswmr_set_fapl_writer).
attempt() {
    local how=$1 mode=$2 out
    if [ "$how" = env ]; then
        out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
            "$VFDSWMR_PROGS/tryopen" "$f" "$mode" 2>&1)
    else
        out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/tryopen" "$f" "$mode" --config "$cfg" 2>&1)
    fi
    local rc=$?
    [ "$rc" = 1 ] && [[ $out == *refused ]] || fail "$how $mode: a second writer was not refused (status $rc): $out"
    [[ $out == *"another writer"* ]] || fail "$how $mode: the refusal does not say \"another writer\": $out"
    cmp "$f" "$WORK/live.h5.before" || fail "$how $mode: the refused writer changed the HDF5 file"
    cmp "$f.md" "$WORK/live.h5.md.before" || fail "$how $mode: the refused writer changed the metadata file"
    [ "$(ls -A "$data")" = "$listing" ] || fail "$how $mode: files appeared or vanished: $(ls -A "$data")"
    for r in r1 r2; do
        proc_expect $r "verify 1000" "rows 1000"
    done
    ok "$how $mode: refused with \"another writer\"; both files byte-identical; both readers verified 1000 rows"
}
for how in env fapl; do
    for mode in rdwr rdwr_swmr excl trunc trunc_swmr; do
        attempt $how $mode
    done
done

proc_expect w "append 1000" "flushed 2000"
proc_expect w tick ticked
for r in r1 r2; do
    proc_expect $r "verify 2000" "rows 2000"
done
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "the first writer exited with status $PROC_STATUS: $(proc_err w)"
for r in r1 r2; do
    proc_expect $r quit closed
    proc_end $r
    [ "$PROC_STATUS" = 0 ] || fail "$r exited with status $PROC_STATUS: $(proc_err $r)"
done
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 2000 2>&1) || fail "plain HDF5: $out"
[ "$out" = "verified 2000 rows, 0 more (0 written, 0 unwritten), 0 groups" ] || fail "plain HDF5: $out"
ok "the first writer went on and closed; readers and plain HDF5 read all 2000 rows"

# A writer whose metadata file cannot be created: as root a path under a
# file (nothing may be created there), otherwise a read-only directory.
if [ "$(id -u)" = 0 ]; then
    md_dir=/dev/null/x
else
    md_dir=$WORK/ro
    mkdir "$md_dir"
    chmod 555 "$md_dir"
fi
cp "$f" "$WORK/live.h5.before"
listing=$(ls -A "$data")
for mode in rdwr rdwr_swmr excl trunc trunc_swmr; do
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;md_file_path=$md_dir" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/tryopen" "$f" "$mode" 2>&1)
    rc=$?
    [ "$rc" = 1 ] && [[ $out == *refused ]] || fail "md_file_path=$md_dir $mode: not refused (status $rc): $out"
    # excl may be refused by HDF5 itself: the file exists.
    [[ $out == *"metadata file $md_dir/live.h5.md"* || ($mode == excl && $out == *"File exists"*) ]] \
        || fail "md_file_path=$md_dir $mode: the refusal does not name the metadata file: $out"
    cmp "$f" "$WORK/live.h5.before" || fail "md_file_path=$md_dir $mode: the refused writer changed the HDF5 file"
    [ "$(ls -A "$data")" = "$listing" ] || fail "md_file_path=$md_dir $mode: files appeared in $data: $(ls -A "$data")"
    [ ! -d "$WORK/ro" ] || [ -z "$(ls -A "$WORK/ro")" ] || fail "$mode: files appeared in $WORK/ro"
    ok "md_file_path=$md_dir $mode: refused; the HDF5 file byte-identical, nothing created"
done
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 2000 2>&1) || fail "plain HDF5: $out"
[ "$out" = "verified 2000 rows, 0 more (0 written, 0 unwritten), 0 groups" ] || fail "plain HDF5: $out"
ok "plain HDF5 still reads all 2000 rows"
finish
