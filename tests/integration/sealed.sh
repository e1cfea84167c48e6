#!/usr/bin/env bash
# The writer's seal (docs/DESIGN.md, "The seal"): from the writer's open of an
# existing file until the file is closed or recovered, plain HDF5 refuses it
# -- read-only, SWMR-read, read-write, SWMR-write, h5dump, h5clear -- and no
# refused attempt changes a byte; readers through vfd_swmr_reader do not
# notice. For each format: HDF5's default (a version 0 superblock, whose
# flags HDF5 never checks), the same after a 1024-byte user block, and the
# latest (version 3):
#  1. a file written and closed by plain HDF5 (30 rows), reopened through
#     vfd_swmr_writer: sealed at once, before any flush (plain opens without
#     HDF5's file locking, so that the seal alone is tested);
#  2. rows and groups added and published, the writer SIGKILLed within its
#     first max_lag ticks (no page has reached the HDF5 file): still sealed,
#     every refused plain attempt leaves the file byte-identical;
#     vfd_swmr_reader reads what was published;
#  3. the metadata file moved away: the next writer and vfd_swmr_recover refuse
#     the sealed file (naming the metadata file), and a reader says why;
#     nothing changes;
#  4. a recovery killed after its first page write leaves the file sealed;
#  5. vfd_swmr_recover: plain HDF5 reads every published row and group;
#  6. a crashed file whose metadata file is lost: vfd_swmr_recover --force
#     clears the seal, and plain HDF5 reads the file as it was on disk.
# Explicit ticks (tick_len=0) make every step exact.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=0;max_lag=3"
f=$WORK/f.h5
H5CLEAR=$(dirname "$H5DUMP")/h5clear
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"
[ -x "$H5CLEAR" ] || fail "no h5clear next to h5dump ($H5CLEAR)"

plain() { env -u HDF5_DRIVER -u HDF5_DRIVER_CONFIG HDF5_USE_FILE_LOCKING=FALSE "$@"; }
recover() { env -u HDF5_DRIVER ${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$@"; }

# check_through DRIVER ROWS GROUPS: rowreader reads exactly ROWS rows and GROUPS groups.
check_through() { check_rows "$f" "$1" "$cfg" "$2" "$3"; }

# refused_plain WHAT: every plain HDF5 open of $f fails and leaves it byte-identical.
refused_plain() {
    local m out
    cp "$f" "$WORK/before"
    for m in rdonly rdonly_swmr rdwr rdwr_swmr; do
        out=$(plain "$VFDSWMR_PROGS/tryopen" "$f" $m 2>"$WORK/tryopen.err")
        [ "$out" = refused ] || fail "$1: plain HDF5 opened the file ($m): $out"
        grep -q 'bad flag value for superblock\|bad superblock status flags' "$WORK/tryopen.err" \
            || fail "$1: plain $m refused for another reason: $(tail -c 600 "$WORK/tryopen.err")"
        cmp -s "$f" "$WORK/before" || fail "$1: a refused plain open ($m) changed the file"
    done
    plain "$H5DUMP" -H "$f" >"$WORK/h5dump.out" 2>&1 && fail "$1: h5dump read the file"
    plain "$H5CLEAR" -s "$f" >"$WORK/h5clear.out" 2>&1 && fail "$1: h5clear opened the file"
    cmp -s "$f" "$WORK/before" || fail "$1: h5dump or h5clear changed the file"
}

# start_writer: the writer through vfd_swmr_writer on the existing $f (ROWS rows).
start_writer() {
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" open
    proc_read w
    [ "$ANSWER" = "ready $1" ] || fail "writer not ready: $ANSWER $(proc_err w)"
}

for format in "earliest" "earliest --userblock 1024" "latest"; do
    rm -f "$f" "$f".md*
    # shellcheck disable=SC2086
    out=$(printf 'append 30\nclose\n' | "$VFDSWMR_PROGS/rowwriter" "$f" create --libver $format 2>&1) ||
        fail "plain writer ($format): $out"
    check_through plain 30 0

    start_writer 30
    refused_plain "$format: writer open, nothing flushed"
    check_through vfd_swmr_reader 30 0
    ok "$format: reopened through vfd_swmr_writer, before any flush: plain HDF5 refuses the file in every mode (h5dump, h5clear too), unchanged; vfd_swmr_reader reads it"

    # killed before its first publish: its last snapshot is its tick 0 (the
    # file as it was, end of allocation 0): recovery still clears the seal
    proc_kill w
    refused_plain "$format: writer killed before its first publish"
    out=$(recover "$f" 2>&1) || fail "$format: vfd_swmr_recover after a writer killed before its first publish: $out"
    check_through plain 30 0
    ok "$format: writer killed before its first publish: refused until vfd_swmr_recover, then plain HDF5 reads the 30 rows"

    start_writer 30

    proc_expect w "append 10" "flushed 40"
    proc_expect w tick ticked
    proc_expect w "groups 2" "flushed groups 2"
    proc_expect w tick ticked
    proc_kill w
    [ -s "$f.md" ] || fail "$format: the killed writer left no metadata file"
    refused_plain "$format: writer killed within its first ticks"
    check_through vfd_swmr_reader 40 2
    ok "$format: writer killed within its first max_lag ticks: plain HDF5 refuses the file, unchanged; vfd_swmr_reader reads the 40 published rows and 2 groups"

    mv "$f.md" "$WORK/md.away"
    cp "$f" "$WORK/before"
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1) &&
        fail "$format: a writer opened the sealed file without its metadata file: $out"
    [[ $out == *"was left by a vfd_swmr_writer that died, and its metadata file is not at $f.md"* ]] ||
        fail "$format: the next writer refused without naming the missing metadata file: $out"
    out=$(recover "$f" 2>&1) && fail "$format: vfd_swmr_recover without the metadata file exited 0: $out"
    [[ $out == *"$f was left by a vfd_swmr_writer that died (its superblock is sealed"*"nothing done"* ]] ||
        fail "$format: vfd_swmr_recover without the metadata file: $out"
    out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$cfg" "$VFDSWMR_PROGS/rowreader" "$f" check 40 2 2>&1) &&
        fail "$format: a reader read the sealed file without its metadata file: $out"
    [[ $out == *"the superblock says a vfd_swmr_writer has this file, or had it and died"* ]] ||
        fail "$format: the reader refused without saying why: $out"
    cmp -s "$f" "$WORK/before" || fail "$format: a refusal changed the file"
    mv "$WORK/md.away" "$f.md"
    ok "$format: its metadata file elsewhere: the next writer, vfd_swmr_recover and vfd_swmr_reader refuse the sealed file, saying why; nothing changed"

    cp "$f" "$WORK/crashed.h5"
    cp "$f.md" "$WORK/crashed.md"
    if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
        (exec env -u HDF5_DRIVER VFDSWMR_TEST_KILL_AT=recover:1 "$VFDSWMR_RECOVER" --config "$cfg" "$f" >/dev/null 2>&1)
        rc=$?
        [ "$rc" = 137 ] || fail "$format: vfd_swmr_recover with VFDSWMR_TEST_KILL_AT=recover:1 exited $rc, not killed"
        refused_plain "$format: recovery killed after its first page write"
        ok "$format: a recovery killed after its first page write leaves the file sealed: plain HDF5 refuses it, unchanged"
    else
        echo "# $format: no kill hooks in this build (not configured --enable-invariants): killed recovery not tried"
    fi

    out=$(recover "$f" 2>&1) || fail "$format: vfd_swmr_recover: $out"
    [[ $out == "vfd_swmr_recover: $f: recovered tick "*" of writer session "* ]] || fail "$format: vfd_swmr_recover: $out"
    check_through plain 40 2
    out=$(plain "$VFDSWMR_PROGS/tryopen" "$f" rdwr 2>&1) || fail "$format: plain read-write open after recovery: $out"
    check_through plain 40 2
    ok "$format: after vfd_swmr_recover plain HDF5 reads the 40 rows and 2 groups, also after a read-write open"

    mv "$WORK/crashed.h5" "$f"
    rm -f "$WORK/crashed.md" "$f".md*
    out=$(recover --force "$f" 2>&1) || fail "$format: vfd_swmr_recover --force without the metadata file: $out"
    [[ $out == *"the seal of its dead writer cleared (--force)"* ]] || fail "$format: vfd_swmr_recover --force: $out"
    check_through plain 30 0
    ok "$format: metadata file lost: vfd_swmr_recover --force clears the seal; plain HDF5 reads the file as it was on disk (30 rows)"

    start_writer 30
    proc_expect w "append 5" "flushed 35"
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "$format: the writer exited with status $PROC_STATUS: $(proc_err w)"
    check_through plain 35 0
    ok "$format: a writer that closes leaves no seal: plain HDF5 reads 35 rows"
done
finish
