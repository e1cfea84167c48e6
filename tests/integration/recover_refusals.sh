#!/usr/bin/env bash
# When recovery must not happen, the next writer and vfd_swmr_recover say
# why and change nothing:
# (a) the crashed writer's HDF5 file was rewritten in place, shorter (a plain
#     H5Fcreate(H5F_ACC_TRUNC) of the same path: same inode, so the metadata
#     file still "belongs" to it): both refuse with "shorter than the" ...
#     "truncated or replaced after its writer died"; neither file changes a
#     byte and plain HDF5 reads the new file's rows;
# (b) the HDF5 file is missing: vfd_swmr_recover says "No such file or
#     directory" (exit 1), a writer creating a file there is refused with
#     "does not exist, but metadata file", and nothing is created; with the
#     file put back, recovery works;
# (c) no metadata file at the default place (the writer kept it elsewhere):
#     the file records where (mdfile/sessname.h), so a reader with the
#     default configuration reads the 1000 published rows, vfd_swmr_recover
#     without --config recovers from there, and so does the next writer with
#     the default configuration (its session then keeps the metadata file
#     there, and its close removes it and the record). Without the record
#     (a file system without extended attributes): the file's superblock is
#     on disk, sealed (a new file shows it from its first publish on), so
#     vfd_swmr_recover refuses it (exit 1), saying its writer died and to
#     give the writer's place with --config, with which it then recovers;
# (d) a recovery holding the metadata file's lock (lockmd stands for it, at a
#     known point): a second vfd_swmr_recover exits 3 with "a writer is
#     running, or another recovery" and a writer is refused, both files
#     byte-identical; once it lets go, one recovery recovers and the next
#     finds nothing to do. Then two vfd_swmr_recover started together, a
#     few times: whichever way they interleave, exactly one recovers and the
#     other exits 3 or finds nothing to recover;
# (e) a symbolic link at the metadata file's name (the crashed writer's file
#     moved aside, a link to it in its place): the reader, the next writer
#     and vfd_swmr_recover refuse it alike, naming the link's target and the
#     md_file_path/md_file_name that name the file itself; nothing changes;
#     vfd_swmr_recover given those recovers;
# (f) a crashed file re-created by plain HDF5 (H5F_ACC_TRUNC: same inode,
#     no seal) and written longer than the snapshot: the dead writer's
#     metadata file does not describe it. The next writer and
#     vfd_swmr_recover refuse ("is not sealed by a writer ... differs from
#     it"), both files unchanged, plain HDF5 reads the new 3000 rows; with
#     the metadata file elsewhere and the record left on the file, the
#     record is not followed (the superblock is not sealed): a default
#     reader and writer read and keep the new 3000 rows;
# (g) a writer killed in its close after the seal went, before FINAL (test
#     hook 'unsealed'): the file is whole and unsealed, the metadata file
#     says the writer died; nothing in it differs from the file, so the next
#     writer goes on and plain HDF5 reads every row.
# Writers use explicit ticks (tick_len=0); every file is checked with plain
# HDF5.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=0;max_lag=3;publish=tick" # flushes between ticks stay unpublished
data=$WORK/data
mkdir "$data"
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"
recover() { ${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" "$@"; }

# plain_check FILE ROWS GROUPS: plain HDF5 (no driver) reads exactly ROWS
# rows and GROUPS groups, every value right.
plain_check() {
    local out
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$1" check "$2" "$3" 2>&1) || fail "plain HDF5, $1: $out"
    [ "$out" = "verified $2 rows, 0 more (0 written, 0 unwritten), $3 groups" ] || fail "plain HDF5, $1: $out"
}

# crashed_writer FILE ROWS CONFIG: a writer creates FILE, publishes ROWS rows
# and 5 groups, flushes 100 more rows without publishing them and is killed.
crashed_writer() {
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$3" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$1" create
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "$1: writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append $2" "flushed $2"
    proc_expect w tick ticked
    proc_expect w "groups 5" "flushed groups 5"
    proc_expect w tick ticked
    proc_expect w "append 100" "flushed $(($2 + 100))"
    proc_kill w
}

# recovers CONFIG FILE MDFILE: vfd_swmr_recover --config CONFIG recovers
# FILE (crashed_writer's 1000 rows, 5 groups) from MDFILE, removes MDFILE,
# and plain HDF5 reads it all.
recovers() {
    local out
    out=$(recover --config "$1" "$2" 2>&1) || fail "vfd_swmr_recover --config '$1': $out"
    [[ $out == "vfd_swmr_recover: $2: recovered tick 2 of writer session "* ]] || fail "vfd_swmr_recover --config '$1': $out"
    [ ! -e "$3" ] || fail "vfd_swmr_recover --config '$1' left the metadata file $3"
    plain_check "$2" 1000 5
}

# files: what $data holds, but for read-mark tables (<metadata file>.readers)
# and raw-data write logs (<metadata file>.raw): a dead writer's serve no
# writer (readers of its session find them stale and drop their caches),
# and a writer refused only at recovery -- after it made its own -- removes
# them (as of this test).
files() { find "$data" -mindepth 1 -maxdepth 1 ! -name '*.readers' ! -name '*.raw' -printf '%f\n' | sort; }
# keep FILE...: copies FILE.before for unchanged, and the listing of $data.
keep() {
    local f
    for f in "$@"; do
        cp "$f" "$f.before"
    done
    listing=$(files)
}
# unchanged WHAT FILE...: each FILE is byte-identical to FILE.before and
# $data lists what it did at keep.
unchanged() {
    local what=$1 f
    shift
    for f in "$@"; do
        cmp "$f" "$f.before" || fail "$what changed $f"
    done
    [ "$(files)" = "$listing" ] || fail "$what: files appeared or vanished: $(files)"
}

# (a) rewritten in place, shorter
f=$data/a.h5
crashed_writer "$f" 3000 "$cfg"
ino=$(stat -c %i "$f")
out=$(printf 'append 3\nclose\n' | ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowwriter" "$f" create 2>&1) \
    || fail "plain HDF5 could not re-create $f: $out"
[ "$out" = $'ready 0\nflushed 3\nclosed' ] || fail "plain HDF5 could not re-create $f: $out"
[ "$(stat -c %i "$f")" = "$ino" ] || fail "H5F_ACC_TRUNC gave $f a new inode: the case is not tested"
size=$(stat -c %s "$f")
keep "$f" "$f.md"
why="$f is $size bytes, shorter than the "
why2=" bytes of the snapshot in metadata file $f.md (the writer kept it at least that long): it was truncated or replaced after its writer died, and the metadata file does not describe it; nothing was written (vfd_swmr_recover --force writes the snapshot anyway)"
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" open </dev/null 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == "H5Fopen failed"$'\n'* ]] || fail "the next writer opened the re-created file (status $rc): $out"
[[ $out == *"vfd_swmr_writer: a writer of \"$f\" crashed and its file cannot be recovered: $why"*"$why2"* ]] \
    || fail "the next writer's refusal does not say why: $out"
unchanged "the refused next writer" "$f" "$f.md"
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/tryopen" "$f" rdwr --config "$cfg" 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"$why"*"$why2"* ]] || fail "a writer through vfdswmr_set_fapl_writer: status $rc: $out"
unchanged "the refused writer (vfdswmr_set_fapl_writer)" "$f" "$f.md"
ok "a crashed file re-created shorter in place (same inode): the next writer is refused (\"shorter than the\", \"truncated or replaced after its writer died\"); both files byte-identical"
out=$(recover --config "$cfg" "$f" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "vfd_swmr_recover of the re-created file exited with $rc: $out"
[[ $out == "vfd_swmr_recover: $why"*"$why2" ]] || fail "vfd_swmr_recover does not say why: $out"
unchanged "the refused vfd_swmr_recover" "$f" "$f.md"
plain_check "$f" 3 0
ok "vfd_swmr_recover refuses it too (exit 1, same reason); both files byte-identical; plain HDF5 reads the new file's 3 rows"

# (b) the HDF5 file is missing
f=$data/b.h5
crashed_writer "$f" 1000 "$cfg"
mv "$f" "$WORK/b.h5.away"
keep "$f.md"
out=$(recover --config "$cfg" "$f" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "vfd_swmr_recover of a missing file exited with $rc: $out"
[ "$out" = "vfd_swmr_recover: cannot open $f for writing: No such file or directory; nothing done (the metadata file $f.md stays)" ] \
    || fail "vfd_swmr_recover of a missing file: $out"
unchanged "vfd_swmr_recover of a missing file" "$f.md"
ok "HDF5 file missing: vfd_swmr_recover says \"No such file or directory\" (exit 1); nothing changed or created"
missing="vfd_swmr_writer: \"$f\" does not exist, but metadata file $f.md, left by a writer of it that died, does: nothing was changed (put the HDF5 file back and recover it, or remove the metadata file)"
for mode in trunc excl trunc_swmr; do
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/tryopen" "$f" "$mode" 2>&1)
    rc=$?
    [ "$rc" = 1 ] && [[ $out == *refused ]] || fail "a writer created $f ($mode, status $rc): $out"
    [[ $out == *"$missing"* ]] || fail "$mode: the refusal does not say why: $out"
    unchanged "the refused writer ($mode)" "$f.md"
done
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create </dev/null 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == "H5Fcreate failed"$'\n'* ]] || fail "rowwriter created $f (status $rc): $out"
[[ $out == *"$missing"* ]] || fail "rowwriter create: the refusal does not say why: $out"
unchanged "the refused rowwriter" "$f.md"
ok "HDF5 file missing: writers creating it (trunc, excl, trunc_swmr, rowwriter) are refused (\"does not exist, but metadata file\"); nothing created"
mv "$WORK/b.h5.away" "$f"
recovers "$cfg" "$f" "$f.md"
ok "the HDF5 file put back: vfd_swmr_recover recovers it; plain HDF5 reads 1000 rows and 5 groups"

# (c) the metadata file is not at the default place
mkdir "$WORK/md"
sessname() { "$VFDSWMR_PROGS/sessname" "$@"; }
# md_files NAME: the metadata files and side files of NAME (a killed
# writer's temporary is left for a later writer to remove once stale).
md_files() { find "$data" "$WORK/md" -name "$1*.md*" ! -name '*.tmp' -printf '%f\n'; }
f=$data/c1.h5
crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
[ "$(sessname show "$f")" = "$(realpath "$WORK/md")/c1.h5.md" ] || fail "the crashed file records: $(sessname show "$f")"
check_rows "$f" vfd_swmr_reader "$cfg" 1000 5
out=$(recover "$f" 2>&1) || fail "vfd_swmr_recover without --config, the file recording its metadata file: $out"
[ "$out" = "vfd_swmr_recover: $f: using metadata file $(realpath "$WORK/md")/c1.h5.md, which the file records as its writer's"$'\n'"vfd_swmr_recover: $f: recovered tick 2 of writer session ${out##*writer session }" ] ||
    fail "vfd_swmr_recover without --config: $out"
plain_check "$f" 1000 5
[ -z "$(md_files c1.h5)" ] || fail "vfd_swmr_recover left $(md_files c1.h5)"
[ "$(sessname show "$f")" = none ] || fail "vfd_swmr_recover left the record: $(sessname show "$f")"
ok "metadata file elsewhere, recorded on the file: a reader with the default configuration reads the 1000 published rows; vfd_swmr_recover without --config recovers from it, removes it with its side files and the record"

f=$data/c3.h5
crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
rec=$(sessname show "$f")
proc_start l ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/lockmd" "$WORK/md/c3.h5.md"
proc_read l
[ "$ANSWER" = locked ] || fail "lockmd: $ANSWER $(proc_err l)"
cp "$f" "$f.before"
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"metadata file $WORK/md/c3.h5.md is locked: another writer has \"$f\" open (or is recovering it)"* ]] ||
    fail "a writer while the recorded metadata file is locked: status $rc: $out"
cmp -s "$f" "$f.before" || fail "the refused writer changed $f"
[ "$(sessname show "$f")" = "$rec" ] || fail "the refused writer changed the record: $(sessname show "$f")"
[ ! -e "$f.md" ] || fail "the refused writer left a metadata file at its own name"
proc_expect l "" released
proc_end l
out=$(recover "$f" 2>&1) || fail "vfd_swmr_recover once the lock is gone: $out"
plain_check "$f" 1000 5
ok "the recorded metadata file locked (a recovery under way): a writer with the default configuration is refused (\"is locked\"), the file and its record unchanged; then vfd_swmr_recover recovers from the record"

f=$data/c2.h5
crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
out=$(printf 'append 7\nclose\n' | HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" open 2>&1) || fail "the next writer (default configuration): $out"
[ "$out" = $'ready 1000\nflushed 1007\nclosed' ] || fail "the next writer (default configuration): $out"
plain_check "$f" 1007 5
[ -z "$(md_files c2.h5)" ] || fail "the next writer left $(md_files c2.h5)"
[ "$(sessname show "$f")" = none ] || fail "the next writer's close left the record: $(sessname show "$f")"
ok "the next writer with the default configuration recovers from the recorded metadata file (the 1000 published rows), appends 7, closes: no metadata file or record left"

f=$data/c.h5
crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
[ -s "$WORK/md/c.h5.md" ] || fail "the killed writer left no metadata file in $WORK/md"
sessname erase "$f"
keep "$f"
out=$(recover "$f" 2>&1) && fail "vfd_swmr_recover without --config succeeded: $out"
[[ $out == "vfd_swmr_recover: $f was left by a vfd_swmr_writer that died (its superblock is sealed: plain HDF5 refuses it), but there is no metadata file $f.md to recover it from: give the writer's md_file_path/md_file_name with --config;"* ]] \
    || fail "vfd_swmr_recover without --config: $out"
unchanged "vfd_swmr_recover without --config" "$f"
ok "no metadata file at the default place, none recorded: refused (a writer died: sealed), pointing at --config; nothing changed"
recovers "$cfg;md_file_path=$WORK/md" "$f" "$WORK/md/c.h5.md"
ok "with the writer's md_file_path in --config it recovers; plain HDF5 reads 1000 rows and 5 groups"

# (d) recoveries against each other
f=$data/d.h5
crashed_writer "$f" 1000 "$cfg"
cp "$f" "$WORK/d.h5.crashed"
cp "$f.md" "$WORK/d.h5.md.crashed"
proc_start l ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/lockmd" "$f.md"
proc_read l
[ "$ANSWER" = locked ] || fail "lockmd: $ANSWER $(proc_err l)"
keep "$f" "$f.md"
busy="vfd_swmr_recover: $f: a writer is running, or another recovery (it holds metadata file $f.md); nothing done"
out=$(recover --config "$cfg" "$f" 2>&1)
rc=$?
[ "$rc" = 3 ] && [ "$out" = "$busy" ] || fail "vfd_swmr_recover while the metadata file is locked: exit $rc: $out"
unchanged "vfd_swmr_recover while another holds the lock" "$f" "$f.md"
ok "a recovery holds the metadata file: a second vfd_swmr_recover exits 3 (\"a writer is running, or another recovery\"); both files byte-identical"
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"metadata file $f.md is locked: another writer has \"$f\" open (or is recovering it)"* ]] \
    || fail "a writer while the metadata file is locked: status $rc: $out"
unchanged "a writer while another holds the lock" "$f" "$f.md"
ok "a writer meanwhile is refused (\"or is recovering it\"); both files byte-identical"
proc_expect l "" released
proc_end l
[ "$PROC_STATUS" = 0 ] || fail "lockmd exited with status $PROC_STATUS: $(proc_err l)"
recovers "$cfg" "$f" "$f.md"
out=$(recover --config "$cfg" "$f" 2>&1) || fail "vfd_swmr_recover once more: $out"
[[ $out == "vfd_swmr_recover: $f: nothing to recover: there is no metadata file $f.md "* ]] \
    || fail "vfd_swmr_recover once more: $out"
ok "the lock released: one vfd_swmr_recover recovers, the next has nothing to do; plain HDF5 reads 1000 rows and 5 groups"

# Two at once: the crashed state back in the same inode (so the metadata
# file still names it), both started together.
busy_n=0 nothing_n=0
for round in 1 2 3; do
    cp "$WORK/d.h5.crashed" "$f"
    cp "$WORK/d.h5.md.crashed" "$f.md"
    for p in p1 p2; do
        (
            recover --config "$cfg" "$f" >"$WORK/$p.out" 2>&1
            echo $? >"$WORK/$p.rc"
        ) &
    done
    wait
    won=0
    for p in p1 p2; do
        rc=$(cat "$WORK/$p.rc")
        out=$(cat "$WORK/$p.out")
        if [ "$rc" = 0 ] && [[ $out == "vfd_swmr_recover: $f: recovered tick 2 of writer session "* ]]; then
            won=$((won + 1))
        elif [ "$rc" = 3 ] && [ "$out" = "$busy" ]; then
            busy_n=$((busy_n + 1))
        elif [ "$rc" = 0 ] && [[ $out == "vfd_swmr_recover: $f: nothing to recover: there is no metadata file "* ]]; then
            nothing_n=$((nothing_n + 1))
        else
            fail "round $round: $p exited with $rc: $out"
        fi
    done
    [ "$won" = 1 ] || fail "round $round: $won recoveries recovered: $(cat "$WORK/p1.out" "$WORK/p2.out")"
    [ ! -e "$f.md" ] || fail "round $round: the metadata file is left"
    plain_check "$f" 1000 5
done
ok "two vfd_swmr_recover started together, 3 times: exactly one recovers, the other exits 3 ($busy_n times) or finds nothing ($nothing_n times); plain HDF5 reads 1000 rows and 5 groups"

# (e) a symbolic link at the metadata file's name
f=$data/e.h5
crashed_writer "$f" 1000 "$cfg"
mv "$f.md" "$WORK/e-real.md"
ln -s "$WORK/e-real.md" "$f.md"
keep "$f" "$WORK/e-real.md"
link="metadata file $f.md is a symbolic link (to $WORK/e-real.md): writers make metadata files as regular files, and no writer, reader or vfd_swmr_recover uses one through a link (a writer or a recovery would write through it into another file); name the file itself (md_file_path=$WORK;md_file_name=e-real.md), or remove the link"
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 1000 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"vfd_swmr_reader: $link"* ]] || fail "a reader through the link: status $rc: $out"
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"vfd_swmr_writer: $link; nothing was changed (\"$f\")"* ]] \
    || fail "a writer through the link: status $rc: $out"
out=$(recover --config "$cfg" "$f" 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$out" = "vfd_swmr_recover: $link; nothing done" ] || fail "vfd_swmr_recover through the link: exit $rc: $out"
unchanged "the reader, writer and recovery refused by the link" "$f" "$WORK/e-real.md"
[ -L "$f.md" ] || fail "the link is gone"
ok "a symbolic link at the metadata file's name: the reader, the next writer and vfd_swmr_recover (exit 1) refuse it alike, naming the file itself; nothing changed"
recovers "$cfg;md_file_path=$WORK;md_file_name=e-real.md" "$f" "$WORK/e-real.md"
ok "vfd_swmr_recover given the md_file_path/md_file_name the message names recovers; plain HDF5 reads 1000 rows and 5 groups"

# (f) re-created by plain HDF5, longer
plain_recreate() {
    local out
    out=$(printf 'append 3000\ngroups 2\nclose\n' | env -u HDF5_DRIVER ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$1" create 2>&1) || fail "plain HDF5 could not re-create $1: $out"
    [ "$out" = $'ready 0\nflushed 3000\nflushed groups 2\nclosed' ] || fail "plain HDF5 re-creating $1: $out"
}
f=$data/f.h5
crashed_writer "$f" 1000 "$cfg"
ino=$(stat -c %i "$f")
plain_recreate "$f"
[ "$(stat -c %i "$f")" = "$ino" ] || fail "H5F_ACC_TRUNC gave $f a new inode: the case is not tested"
keep "$f" "$f.md"
why="$f is not sealed by a writer, but metadata file $f.md holds the last snapshot (tick 2) of a writer of it that died, and the file's metadata differs from it: the file was written since without vfd_swmr_writer"
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"vfd_swmr_writer: a writer of \"$f\" crashed and its file cannot be recovered: $why"* ]] ||
    fail "the next writer of the re-created file: status $rc: $out"
unchanged "the refused next writer" "$f" "$f.md"
out=$(recover --config "$cfg" "$f" 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == "vfd_swmr_recover: $why"*"nothing was written"* ]] || fail "vfd_swmr_recover of the re-created file: exit $rc: $out"
unchanged "the refused vfd_swmr_recover" "$f" "$f.md"
out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 3000 2 2>&1) &&
    fail "a reader read the dead snapshot over the re-created file: $out"
[[ $out == *"vfd_swmr_reader: metadata file \"$f.md\" holds the last snapshot (tick 2) of a writer of \"$f\" that died, but the file's superblock carries no writer's seal"* ]] ||
    fail "the reader of the re-created file refused without saying why: $out"
unchanged "the refused reader" "$f" "$f.md"
plain_check "$f" 3000 2
f=$data/f0.h5
crashed_writer "$f" 1000 "$cfg"
: >"$f"
out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 1000 5 2>&1) &&
    fail "a reader read the dead snapshot over the emptied file: $out"
[[ $out == *"vfd_swmr_reader: \"$f\" is 0 bytes, shorter than the "*" bytes of the last snapshot of its writer that died"* ]] ||
    fail "the reader of the emptied file refused without saying why: $out"
ok "a crashed file emptied since (truncate -s 0): the reader refuses the dead snapshot (\"shorter than ... the last snapshot\"), as recovery does"
ok "a crashed file re-created longer by plain HDF5 (same inode, no seal): the next writer, vfd_swmr_recover and vfd_swmr_reader refuse it (\"not sealed ... differs\", \"carries no writer's seal\"), both files unchanged; plain HDF5 reads the new 3000 rows"

f=$data/f2.h5
crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
plain_recreate "$f"
[ "$(sessname show "$f")" = "$(realpath "$WORK/md")/f2.h5.md" ] || fail "the re-created file lost the record: the case is not tested"
[ "$(sessname find "$f")" = none ] || fail "the unsealed file's record is followed by readers: $(sessname find "$f")"
cp "$WORK/md/f2.h5.md" "$WORK/f2.md.before"
cp "$f" "$f.before"
check_rows "$f" vfd_swmr_reader "$cfg" 3000 2
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"$f is not sealed by a writer, but metadata file $(realpath "$WORK/md")/f2.h5.md holds the last snapshot (tick 2) of a writer of it that died, and the file's metadata differs from it"* ]] ||
    fail "a default writer of the re-created file with the record left: status $rc: $out"
cmp -s "$f" "$f.before" || fail "the refused writer changed $f"
cmp -s "$WORK/md/f2.h5.md" "$WORK/f2.md.before" || fail "the dead session's metadata file elsewhere changed"
rm "$WORK/md/f2.h5.md"
out=$(printf 'append 5\nclose\n' | HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" open 2>&1) || fail "a default writer once the stale metadata file is gone: $out"
[ "$out" = $'ready 3000\nflushed 3005\nclosed' ] || fail "a default writer once the stale metadata file is gone: $out"
plain_check "$f" 3005 2
ok "re-created by plain HDF5 with the dead session's record left on it: readers do not follow it (no seal) and read the 3000 new rows; a writer follows it to the stale metadata file and is refused (\"differs\"), nothing changed; once that file is removed a default writer appends 5"

# (g) killed in the close after the seal went
if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
    f=$data/g.h5
    out=$(printf 'append 800\ngroups 4\nclose\n' | env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" \
        VFDSWMR_TEST_KILL_AT=unsealed:1 "$VFDSWMR_PROGS/rowwriter" "$f" create 2>&1)
    rc=$?
    [ "$rc" = 137 ] && [[ $out == *"flushed groups 4"* ]] || fail "a writer killed in its close after the seal went: status $rc: $out"
    [ -s "$f.md" ] || fail "the writer killed in its close left no metadata file"
    check_rows "$f" vfd_swmr_reader "$cfg" 800 4
    out=$(printf 'append 10\nclose\n' | HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" open 2>&1) || fail "the next writer after a close killed unsealed: $out"
    [ "$out" = $'ready 800\nflushed 810\nclosed' ] || fail "the next writer after a close killed unsealed: $out"
    plain_check "$f" 810 4
    [ ! -e "$f.md" ] || fail "the metadata file is left"
    ok "a writer killed in its close after the seal went (whole, unsealed, not FINAL): a reader reads its 800 rows; the next writer finds nothing differing, goes on; plain HDF5 reads 810 rows and 4 groups"

    # (h) killed the same way, then reached by a hard link: the writer there
    # follows the record to the dead session at the first name (its snapshot
    # is the file's: nothing differs), takes its place, publishes 1600 rows
    # and dies; the next writer at the first name recovers those 1600 (it
    # used to find the first session's metadata file and roll them back)
    f=$data/h.h5
    out=$(printf 'append 800\ngroups 4\nclose\n' | env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" \
        VFDSWMR_TEST_KILL_AT=unsealed:1 "$VFDSWMR_PROGS/rowwriter" "$f" create 2>&1)
    rc=$?
    [ "$rc" = 137 ] || fail "$f: a writer killed in its close after the seal went: status $rc: $out"
    ln "$f" "$data/h-link.h5"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$data/h-link.h5" open
    proc_read w
    [ "$ANSWER" = "ready 800" ] || fail "the writer through the hard link: $ANSWER $(proc_err w)"
    proc_expect w "append 800" "flushed 1600"
    proc_expect w tick ticked
    proc_expect w "groups 2" "flushed groups 6"
    proc_expect w tick ticked
    proc_kill w
    [ ! -e "$data/h-link.h5.md" ] || fail "the writer through the hard link kept its own metadata file, not the recorded one"
    out=$(printf 'close\n' | HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" open 2>&1) || fail "the writer at the first name after the link's writer died: $out"
    [ "$out" = $'ready 1600\nclosed' ] || fail "the writer at the first name after the link's writer died: $out"
    plain_check "$f" 1600 6
    ok "a writer killed in its close after the seal went, then a writer through a hard link: it follows the record to that session (nothing differs), publishes 1600 rows and dies; the writer at the first name recovers all 1600 rows and 6 groups"

    # (i) a finished recovery of a version 3 superblock whose metadata file
    # outlived it (vfd_swmr_recover killed before its removal): the next
    # writer finds the file already holding the snapshot
    f=$data/i.h5
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" create --latest
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "$f: writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append 700" "flushed 700"
    proc_expect w "groups 3" "flushed groups 3"
    proc_expect w tick ticked
    proc_kill w
    ln "$f.md" "$WORK/i.md.kept"
    out=$(recover --config "$cfg" "$f" 2>&1) || fail "vfd_swmr_recover of the version 3 file: $out"
    mv "$WORK/i.md.kept" "$f.md"
    out=$(printf 'append 1\nclose\n' | HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" open --latest 2>&1) || fail "the next writer of a recovered version 3 file: $out"
    [ "$out" = $'ready 700\nflushed 701\nclosed' ] || fail "the next writer of a recovered version 3 file: $out"
    plain_check "$f" 701 3
    ok "a recovered file (version 3 superblock) whose metadata file outlived the recovery: the next writer finds nothing differing (the superblock as recovery patched it), appends 1; plain HDF5 reads 701 rows"

    # (j) a writer that took over a dead session's recorded metadata file
    # and died before its own got that name (test hook 'sealed'): the file
    # still records the dead session there, and every name finds it
    f=$data/j.h5
    crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
    out=$(env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" VFDSWMR_TEST_KILL_AT=sealed:1 \
        "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
    rc=$?
    [ "$rc" = 137 ] || fail "a writer killed after sealing: status $rc: $out"
    ln "$f" "$data/j-link.h5"
    [ "$(sessname find "$data/j-link.h5")" = "$(realpath "$WORK/md")/j.h5.md" ] ||
        fail "the dead session is not found through a hard link: $(sessname find "$data/j-link.h5")"
    check_rows "$data/j-link.h5" vfd_swmr_reader "$cfg" 1000 5
    out=$(printf 'append 3\nclose\n' | HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$data/j-link.h5" open 2>&1) || fail "the next writer through the hard link: $out"
    [ "$out" = $'ready 1000\nflushed 1003\nclosed' ] || fail "the next writer through the hard link: $out"
    plain_check "$f" 1003 5
    [ -z "$(md_files j.h5)" ] || fail "metadata files left: $(md_files j.h5)"
    ok "a writer killed after it took over a recorded dead session and sealed, before its metadata file got the name: the file still records the dead session; through a hard link a reader reads its 1000 rows and the next writer recovers it and appends 3"

    # (k) a writer that keeps no metadata file (updater files only; its
    # md_file_path names a directory that does not exist) seals a file whose
    # record names a dead session, publishes and dies: it records its own
    # session ("/(no metadata file)"), so the dead session's
    # metadata file is stale for every opener, also one given its
    # configuration -- recovery from it would roll 4000 rows back to 1000
    f=$data/k.h5
    crashed_writer "$f" 1000 "$cfg;md_file_path=$WORK/md"
    plain_recreate "$f"
    mkdir -p "$WORK/ud"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="$cfg;maintain_metadata_file=0;generate_updater_files=1;updater_file_path=$WORK/ud/k;md_file_path=$WORK/no-such-dir" \
        ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowwriter" "$f" open
    proc_read w
    [ "$ANSWER" = "ready 3000" ] || fail "the updater-only writer: $ANSWER $(proc_err w)"
    [ "$(sessname show "$f")" = "/(no metadata file)" ] ||
        fail "the updater-only writer's record: $(sessname show "$f")"
    out=$(recover --config "$cfg;md_file_path=$WORK/md" "$f" 2>&1)
    rc=$?
    [ "$rc" = 3 ] && [[ $out == *"a writer is running (it holds the file's writer lock); nothing done"* ]] ||
        fail "vfd_swmr_recover while the updater-only writer runs: exit $rc: $out"
    proc_expect w "append 1000" "flushed 4000"
    proc_expect w tick ticked
    proc_kill w
    keep "$f" "$WORK/md/k.h5.md"
    stale="holds session * of $f, but the file records session * as its own, whose writer kept no metadata file"
    out=$(recover --config "$cfg;md_file_path=$WORK/md" "$f" 2>&1)
    rc=$?
    [ "$rc" = 1 ] && [[ $out == *$stale*"this one is stale; nothing was written"* ]] ||
        fail "vfd_swmr_recover with the dead session's configuration: exit $rc: $out"
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;md_file_path=$WORK/md" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1)
    rc=$?
    [ "$rc" = 1 ] && [[ $out == *$stale* ]] || fail "a writer with the dead session's configuration: status $rc: $out"
    out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg;md_file_path=$WORK/md" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowreader" "$f" check 1000 2>&1)
    rc=$?
    [ "$rc" != 0 ] && [[ $out == *"whose writer kept no metadata file (read through vfd_swmr_aux's copy): this metadata file is stale"* ]] ||
        fail "a reader with the dead session's configuration: status $rc: $out"
    unchanged "the refused recovery, writer and reader" "$f" "$WORK/md/k.h5.md"
    ok "an updater-only writer records its session over a dead session's record: vfd_swmr_recover is refused while it runs (exit 3), and after its crash the dead session's metadata file is stale for vfd_swmr_recover, a writer and a reader given its configuration; nothing changed"
else
    echo "# no kill hooks in this build: a close killed after the seal went not tried"
fi
finish
