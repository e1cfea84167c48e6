#!/usr/bin/env bash
# One writer per file, also against writers that do not look at the
# metadata file. Writers use explicit ticks (tick_len=0), so neither of their
# files changes between two commands.
# (a) A plain HDF5 program (sec2, HDF5's own file locking) opening a live
#     vfd_swmr_writer's default-format file (version 0 superblock: no "open
#     for writing" flags to stop it) read-write is refused by HDF5's file
#     lock, which the vfd writer holds like a plain writer; the HDF5 file and
#     the metadata file stay byte-identical. So are plain read-only opens
#     (the file on disk is some ticks behind: they could see it
#     inconsistent); vfd_swmr_reader reads every row. (Not tested: a plain
#     H5Fcreate(H5F_ACC_TRUNC), which HDF5 1.14 truncates before it asks
#     for the lock -- it destroys a plain sec2 writer's file just the same.)
# (b) A live writer's metadata file is removed. A second vfd_swmr_writer --
#     every open HDF5 may use -- is still refused, by the writer lock on the
#     HDF5 file itself, with "another writer has FILE open (it holds the
#     file's writer lock"; the HDF5 file stays byte-identical and nothing is
#     created. The first writer goes on, closes, and plain HDF5 reads all
#     its rows and groups.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=0;max_lag=3"
data=$WORK/data
mkdir "$data"

# plain_check FILE ROWS GROUPS: plain HDF5 (no driver) reads exactly ROWS
# rows and GROUPS groups, every value right.
plain_check() {
    local out
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$1" check "$2" "$3" 2>&1) || fail "plain HDF5, $1: $out"
    [ "$out" = "verified $2 rows, 0 more (0 written, 0 unwritten), $3 groups" ] || fail "plain HDF5, $1: $out"
}

# start_writer NAME FILE: a vfd_swmr_writer (default file format) creates
# FILE and publishes 1000 rows and 3 groups.
start_writer() {
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$2" create
    proc_read "$1"
    [ "$ANSWER" = "ready 0" ] || fail "$1: writer not ready: $ANSWER $(proc_err "$1")"
    proc_expect "$1" "append 1000" "flushed 1000"
    proc_expect "$1" tick ticked
    proc_expect "$1" "groups 3" "flushed groups 3"
    proc_expect "$1" tick ticked
}

# unchanged WHAT FILE...: each FILE is byte-identical to its copy FILE.before,
# and $data lists what it listed before.
unchanged() {
    local what=$1 f
    shift
    for f in "$@"; do
        cmp "$f" "$f.before" || fail "$what changed $f"
    done
    [ "$(ls -A "$data")" = "$listing" ] || fail "$what: files appeared or vanished: $(ls -A "$data")"
}

# (a) plain HDF5 against a live vfd writer
f=$data/a.h5
start_writer w "$f"
# plain_refused WHAT CMD...: CMD, a plain HDF5 open of the live file, is
# refused by HDF5's file lock and changes nothing.
plain_refused() {
    local what=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" != 0 ] || fail "$what: a plain HDF5 program opened the live file: $out"
    [[ $out == *"unable to lock file, errno = 11"* ]] || fail "$what: not refused by HDF5's file lock: $out"
}

cp "$f" "$f.before"
cp "$f.md" "$f.md.before"
listing=$(ls -A "$data")
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowwriter" "$f" open </dev/null 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "a plain writer opened the live file read-write (status $rc): $out"
[[ $out == "H5Fopen failed"$'\n'* ]] || fail "the plain writer did not fail in H5Fopen: $out"
[[ $out == *"unable to lock file, errno = 11, error message = 'Resource temporarily unavailable'"* ]] \
    || fail "the plain writer was not refused by HDF5's file lock: $out"
unchanged "the refused plain writer" "$f" "$f.md"
ok "a plain writer's H5Fopen(H5F_ACC_RDWR) is refused by HDF5's file lock; both files byte-identical"
for mode in rdwr rdwr_swmr; do
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/tryopen" "$f" "$mode" 2>&1)
    rc=$?
    [ "$rc" = 1 ] && [[ $out == *refused ]] || fail "plain $mode: not refused (status $rc): $out"
    [[ $out == *"unable to lock file, errno = 11"* ]] || fail "plain $mode: not refused by HDF5's file lock: $out"
    unchanged "the refused plain $mode" "$f" "$f.md"
    ok "plain $mode: refused by HDF5's file lock; both files byte-identical"
done
plain_refused "plain read-only open" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 1000 3
unchanged "the refused plain reader" "$f" "$f.md"
ok "a plain read-only open is refused by HDF5's file lock too; both files byte-identical"
proc_start r env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r
[ "$ANSWER" = "ready 1000" ] || fail "reader not ready: $ANSWER $(proc_err r)"
proc_expect r "verify 1000" "rows 1000"
ok "a vfd_swmr_reader reads all 1000 rows"

proc_expect w "append 500" "flushed 1500"
proc_expect w tick ticked
proc_expect r "verify 1500" "rows 1500"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "the writer exited with status $PROC_STATUS: $(proc_err w)"
proc_expect r quit closed
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "the reader exited with status $PROC_STATUS: $(proc_err r)"
[ ! -e "$f.md" ] || fail "the writer closed but left its metadata file"
plain_check "$f" 1500 3
ok "the writer went on and closed; plain HDF5 reads 1500 rows and 3 groups"

# (b) a second vfd writer after the live writer's metadata file was removed
f=$data/b.h5
start_writer w "$f"
rm "$f.md"
cp "$f" "$f.before"
listing=$(ls -A "$data")
lockmsg="another writer has \"$f\" open (it holds the file's writer lock"
for mode in rdwr rdwr_swmr excl trunc trunc_swmr; do
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/tryopen" "$f" "$mode" 2>&1)
    rc=$?
    [ "$rc" = 1 ] && [[ $out == *refused ]] || fail "second writer $mode: not refused (status $rc): $out"
    # excl may be refused by HDF5 itself: the file exists.
    [[ $out == *"$lockmsg"* || ($mode == excl && $out == *"File exists"*) ]] \
        || fail "second writer $mode: the refusal does not say \"$lockmsg\": $out"
    unchanged "the refused second writer ($mode)" "$f"
    ok "second writer $mode, metadata file removed: refused (the HDF5 file's writer lock); byte-identical, nothing created"
done
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" open </dev/null 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == "H5Fopen failed"$'\n'* ]] || fail "a second rowwriter opened the file (status $rc): $out"
[[ $out == *"$lockmsg"* ]] || fail "the second rowwriter's refusal does not say \"$lockmsg\": $out"
unchanged "the refused second rowwriter" "$f"
ok "a second rowwriter through the environment: refused with \"$lockmsg\"; byte-identical"

proc_expect w "append 500" "flushed 1500"
proc_expect w tick ticked
proc_expect w "groups 2" "flushed groups 5"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "the first writer exited with status $PROC_STATUS: $(proc_err w)"
[ ! -e "$f.md" ] || fail "a metadata file appeared: $(ls -A "$data")"
plain_check "$f" 1500 5
ok "the first writer went on without its metadata file's name and closed; plain HDF5 reads 1500 rows and 5 groups"
finish
