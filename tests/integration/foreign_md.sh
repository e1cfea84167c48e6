#!/usr/bin/env bash
# A metadata file is tied to its HDF5 file. A metadata file that belongs to
# another HDF5 file -- a crashed writer's metadata file of A copied next to
# B under B's metadata file name, or two files with the same base name
# sharing md_file_path -- is refused by a reader, by a writer opening the
# file read-write (which must NOT "recover" it from the other file's
# snapshot: it stays byte-identical) and by vfd_swmr_recover (exit 1), each
# with a message containing "belongs to another HDF5 file".
# vfd_swmr_recover --force accepts a pair copied together.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

foreign="belongs to another HDF5 file"

# crashed_writer NAME FILE CONFIG ROWS: a writer creates FILE, publishes ROWS
# rows in two ticks, and is killed (SIGKILL) after it said so.
crashed_writer() {
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$3" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$2" create
    proc_read "$1"
    [ "$ANSWER" = "ready 0" ] || fail "$1: writer not ready: $ANSWER"
    proc_expect "$1" "append $(($4 / 2))" "flushed $(($4 / 2))"
    proc_expect "$1" tick ticked
    proc_expect "$1" "append $(($4 / 2))" "flushed $4"
    proc_expect "$1" tick ticked
    proc_kill "$1"
}

# closed_file FILE CONFIG ROWS: FILE written through the writer driver with
# ROWS rows and closed (its metadata file is gone).
closed_file() {
    proc_start c env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$2" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$1" create
    proc_read c
    proc_expect c "append $3" "flushed $3"
    proc_expect c close closed
    proc_end c
    [ "$PROC_STATUS" = 0 ] || fail "writing $1 failed: $(proc_err c)"
}

# refused_all FILE MD CONFIG ROWS: a reader, a read-write writer and the
# recovery command refuse FILE's metadata file MD as foreign; FILE and MD stay
# byte-identical, and FILE still holds its ROWS rows for plain HDF5.
refused_all() {
    local f=$1 md=$2 cfg=$3 rows=$4 out rc
    cp "$f" "$WORK/file.before"
    cp "$md" "$WORK/md.before"
    out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowreader" "$f" check "$rows" 2>&1) && fail "$f: a reader accepted the foreign $md: $out"
    [[ $out == *"$foreign"* ]] || fail "$f: the reader's refusal does not say \"$foreign\": $out"
    ok "$f: a reader refuses the foreign $md"
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1) && fail "$f: a writer accepted the foreign $md: $out"
    [[ $out == *"$foreign"* ]] || fail "$f: the writer's refusal does not say \"$foreign\": $out"
    cmp "$f" "$WORK/file.before" || fail "$f: changed by the refused writer (recovered from another file's snapshot?)"
    cmp "$md" "$WORK/md.before" || fail "$f: the refused writer changed $md"
    ok "$f: a read-write open refuses the foreign $md; both files byte-identical"
    [ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$f" 2>&1)
    rc=$?
    [ "$rc" = 1 ] || fail "$f: vfd_swmr_recover exited with $rc, expected 1: $out"
    [[ $out == *"$foreign"* ]] || fail "$f: vfd_swmr_recover does not say \"$foreign\": $out"
    cmp "$f" "$WORK/file.before" || fail "$f: changed by the refused recovery"
    cmp "$md" "$WORK/md.before" || fail "$f: the refused recovery changed $md"
    ok "$f: vfd_swmr_recover refuses the foreign $md (exit 1); both files byte-identical"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check "$rows" 2>&1) || fail "$f: plain HDF5: $out"
    [ "$out" = "verified $rows rows, 0 more (0 written, 0 unwritten), 0 groups" ] || fail "$f: plain HDF5: $out"
    ok "$f: plain HDF5 reads its own $rows rows"
}

# recovered FILE ROWS [OPTIONS...]: vfd_swmr_recover OPTIONS FILE succeeds and
# plain HDF5 then reads exactly ROWS rows.
recovered() {
    local f=$1 rows=$2 out
    shift 2
    [ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" "$@" "$f" 2>&1) || fail "vfd_swmr_recover $* $f: $out"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check "$rows" 2>&1) || fail "$f after recovery: $out"
    [ "$out" = "verified $rows rows, 0 more (0 written, 0 unwritten), 0 groups" ] || fail "$f after recovery: $out"
    ok "vfd_swmr_recover $* $f: plain HDF5 reads all $rows published rows"
}

# 1. A crashed writer's metadata file of A copied next to B as B's.
cfg="tick_len=0;max_lag=3"
crashed_writer a "$WORK/a.h5" "$cfg" 2000
[ -s "$WORK/a.h5.md" ] || fail "the killed writer left no metadata file"
closed_file "$WORK/b.h5" "$cfg" 500
cp "$WORK/a.h5.md" "$WORK/b.h5.md"
refused_all "$WORK/b.h5" "$WORK/b.h5.md" "$cfg" 500

# A pair copied together: the recorded HDF5 file is another inode, so only
# --force recovers it.
cp "$WORK/a.h5" "$WORK/c.h5"
cp "$WORK/a.h5.md" "$WORK/c.h5.md"
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$WORK/c.h5" 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"$foreign"* ]] || fail "a copied pair without --force: exit $rc: $out"
ok "a copied pair is refused without --force (exit 1, \"$foreign\")"
recovered "$WORK/c.h5" 2000 --force --config "$cfg"
recovered "$WORK/a.h5" 2000 --config "$cfg"

# 2. Two files named x.h5 in different directories sharing md_file_path.
mkdir "$WORK/d1" "$WORK/d2" "$WORK/md"
cfg="tick_len=0;max_lag=3;md_file_path=$WORK/md"
closed_file "$WORK/d2/x.h5" "$cfg" 500
crashed_writer x1 "$WORK/d1/x.h5" "$cfg" 1000
[ -s "$WORK/md/x.h5.md" ] || fail "the killed writer left no metadata file"
refused_all "$WORK/d2/x.h5" "$WORK/md/x.h5.md" "$cfg" 500
recovered "$WORK/d1/x.h5" 1000 --config "$cfg"
finish
