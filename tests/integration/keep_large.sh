#!/usr/bin/env bash
# Frees larger than the writer keeps at the free (VFDSWMR_KEEP_OLD_MAX,
# 16 MiB): their old bytes are kept when HDF5 allocates raw data there
# (vfd-swmr-writer/eoa.c keep_at_alloc), as metadata file entries written
# from the HDF5 file a batch at a time (keepdisk.c), so a program replacing
# a large dataset puts it where sec2 does and its file stays sec2's size,
# session after session. `eoaclose again` opens a file holding a 20 MiB /x
# (round 1, made on sec2), deletes /x and creates it again (round 2).
# 1. Three sessions in a row, no reader, with tick_len=0 (nothing published
#    before the flush) and tick_len=5: round 2 goes where sec2 puts it, into
#    the file at once; the file closes at sec2's size every time; plain HDF5
#    reads round 2. Before the change the file grew by 20 MiB a session.
# 2. A reader opening after round 2 reached the file, before the flush,
#    reads round 1 (the kept images); one opening after it round 2.
# 3. A reader holding tick 0 (the file as found) while the writer rewrites:
#    it still reads round 1 afterwards (the copy kept for it), and round 2
#    still goes where sec2 puts it.
# 4. Killed after round 2 reached the file, before the flush: recovery
#    gives back the file as found, byte for byte.
# 5. Killed between the keep's two publishes (16 MiB of images each): the
#    same.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"
. "$(dirname "$0")/eoaclose_steps.sh"

P=$VFDSWMR_PROGS/eoaclose
kib=20480

env -u HDF5_DRIVER "$P" cycle "$WORK/found.h5" $kib 1 >/dev/null 2>&1 || fail "sec2: cannot make the file"
cp "$WORK/found.h5" "$WORK/sec2.h5"
out=$(printf '\n\n\n' | env -u HDF5_DRIVER "$P" again "$WORK/sec2.h5" $kib 2>&1) || fail "sec2: $out"
[[ $out =~ opened\ ([0-9]+).*rewritten\ ([0-9]+).*closed\ ([0-9]+) ]] || fail "sec2: $out"
A1=${BASH_REMATCH[1]} A2=${BASH_REMATCH[2]} sec2=${BASH_REMATCH[3]}
[ "$A2" = "$A1" ] || fail "sec2 did not put round 2 into round 1's space: $out"

# The 4-byte ints at element 1 and 2 of /x in FILE at ADDR, as the file holds them.
on_disk() { od -An -t d4 -j $(($2 + 4)) -N 8 "$1" | xargs; }

# 1. Three sessions.
for tl in 0 5; do
    cp "$WORK/found.h5" "$WORK/s$tl.h5"
    for s in 1 2 3; do
        out=$(printf '\n\n\n' | env HDF5_DRIVER=vfd_swmr_writer \
            HDF5_DRIVER_CONFIG="tick_len=$tl;max_lag=3;log_file_path=$WORK/s$tl-$s.log" \
            ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/s$tl.h5" $kib 2>&1) || fail "tick_len=$tl, session $s: $out"
        [[ $out =~ rewritten\ ([0-9]+).*closed\ ([0-9]+) ]] || fail "tick_len=$tl, session $s: $out"
        [ "${BASH_REMATCH[1]}" = "$A2" ] ||
            fail "tick_len=$tl, session $s: round 2 went to ${BASH_REMATCH[1]}, sec2 puts it at $A2: $(grep -E 'kept|hole|error' "$WORK/s$tl-$s.log")"
        [ "${BASH_REMATCH[2]}" = "$sec2" ] ||
            fail "tick_len=$tl, session $s: the file closed at ${BASH_REMATCH[2]} bytes, on sec2 at $sec2"
        grep -q ' kept_at_alloc ' "$WORK/s$tl-$s.log" || fail "tick_len=$tl, session $s: the old bytes were not kept at the allocation"
        out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/s$tl.h5" 2 2>&1) || fail "tick_len=$tl, session $s: plain HDF5: $out"
    done
    ok "tick_len=$tl: 3 sessions each replacing a 20 MiB dataset: it went where sec2 puts it, the file closed at $sec2 bytes each time, as on sec2; plain HDF5 reads round 2"
done

# again_rewritten NAME [reader]: the writer on $WORK/NAME.h5 (the file as
# found) up to "rewritten"; with `reader`, a reader (NAME-r) holds tick 0
# from before.
again_rewritten() {
    cp "$WORK/found.h5" "$WORK/$1.h5"
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3;log_file_path=$WORK/$1.log" ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/$1.h5" $kib
    proc_read "$1"
    [ "$ANSWER" = "opened $A1" ] || fail "writer: $ANSWER (sec2: opened $A1) $(proc_err "$1")"
    if [ "${2:-}" = reader ]; then
        proc_start "$1-r" env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/$1.h5"
        proc_read "$1-r"
        [ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err "$1-r")"
    fi
    proc_ask "$1" go
    [ "$ANSWER" = "rewritten $A2" ] ||
        fail "round 2 is not where sec2 puts it ($A2): $ANSWER; $(grep -E 'kept|hole|error' "$WORK/$1.log")"
    [ "$(on_disk "$WORK/$1.h5" "$A2")" = "5 8" ] ||
        fail "the file holds $(on_disk "$WORK/$1.h5" "$A2") at /x, not round 2's 5 8"
}

# 1 (aligned). With an alignment (H5Pset_alignment) HDF5 pads a block for
#    the address get_eoa answers, which is above the kept space: no keep at
#    the allocation then; round 2 is aligned and right, and plain HDF5
#    reads it (kept at the allocation, the padding was freed inside the
#    new dataset and the file cut through it).
cp "$WORK/found.h5" "$WORK/al.h5"
out=$(printf '\n\n\n' | env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3" EOACLOSE_ALIGN=1000 \
    ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/al.h5" $kib 2>&1) || fail "alignment 1000: $out"
[[ $out =~ rewritten\ ([0-9]+) ]] || fail "alignment 1000: $out"
[ $((BASH_REMATCH[1] % 1000)) = 0 ] || fail "alignment 1000: round 2 at ${BASH_REMATCH[1]}"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/al.h5" 2 2>&1) || fail "alignment 1000: plain HDF5: $out"
ok "alignment 1000: round 2 aligned and right; plain HDF5 reads it"

# 1 (small blocks). Replaced by a chunked dataset written a chunk (4,000
#    bytes) at a time: every block goes where sec2 puts it, and the keeps
#    come 16 MiB at a time, not a publish per block (each a publish of the
#    whole index): a handful for 4,000 chunks (the keeps, the close's), counted in the
#    writer's log. Plain HDF5 reads every chunk.
cp "$WORK/found.h5" "$WORK/sm.h5"
cp "$WORK/found.h5" "$WORK/smsec2.h5"
out=$(env -u HDF5_DRIVER "$P" small "$WORK/smsec2.h5" 4000 2>&1) || fail "sec2: $out"
smsec2=${out#closed }
out=$(env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3;log_file_path=$WORK/sm.log" \
    ${VFDSWMR_VALGRIND:-} "$P" small "$WORK/sm.h5" 4000 2>&1) || fail "small blocks: $out"
[ "$out" = "closed $smsec2" ] || fail "small blocks: the writer answered \"$out\", sec2 closed at $smsec2 bytes"
n=$(grep -c ' end_of_tick ' "$WORK/sm.log")
[ "$n" -le 6 ] || fail "small blocks: $n publishes for 4,000 chunks: $(grep -c ' kept_old ' "$WORK/sm.log") keeps"
out=$(env -u HDF5_DRIVER "$P" smallcheck "$WORK/sm.h5" 4000 2>&1) || fail "small blocks: plain HDF5: $out"
ok "4,000 small chunks into a freed 20 MiB: $n publishes in all, the file closed at sec2's $smsec2 bytes, plain HDF5 reads every chunk"

# 2. A reader opening before and after the flush.
again_rewritten w
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cyclecheck "$WORK/w.h5" 1 2>&1) ||
    fail "a reader opening after round 2 reached the file, before the flush, does not read round 1: $out"
flushed_closed w "$sec2"
ok "a reader opening before the flush reads round 1 (kept), one opening after it round 2; closed at sec2's size"

# 3. A reader holding tick 0 throughout.
again_rewritten r reader
grep -q ' kept_list ' "$WORK/r.log" || fail "no copy was listed for the reader: $(grep -E 'kept|hole' "$WORK/r.log")"
proc_ask r-r go
[ "$ANSWER" = "still 1" ] || fail "the reader holding tick 0 answered \"$ANSWER\": $(proc_err r-r)"
proc_end r-r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r-r)"
flushed_closed r "$sec2"
ok "a reader holding tick 0 still reads round 1 after round 2 went where sec2 puts it; closed at sec2's size"

# 4. Killed before the flush.
again_rewritten c
proc_kill c
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "tick_len=0;max_lag=3" "$WORK/c.h5" 2>&1) ||
    fail "vfd_swmr_recover: $out"
cmp "$WORK/c.h5" "$WORK/found.h5" >/dev/null ||
    fail "recovered, the file is not what the writer found: $(cmp "$WORK/c.h5" "$WORK/found.h5" 2>&1)"
ok "killed after round 2 reached the file, before the flush: recovery gives back the file as found, byte for byte"

# 5. Killed between the keep's batches (16 MiB of images a publish: the
#    first publish holds part of the old bytes, the file the rest).
if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
    cp "$WORK/found.h5" "$WORK/b.h5"
    out=$(printf '\n\n\n' | env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3" \
        VFDSWMR_TEST_KILL_AT=kept_batch:1 "$P" again "$WORK/b.h5" $kib 2>&1)
    rc=$?
    [ $rc = 137 ] && [[ $out == opened* ]] && [[ $out != *rewritten* ]] ||
        fail "killed after the keep's first batch: exit status $rc: $out"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "tick_len=0;max_lag=3" "$WORK/b.h5" 2>&1) ||
        fail "vfd_swmr_recover: $out"
    cmp "$WORK/b.h5" "$WORK/found.h5" >/dev/null ||
        fail "recovered, the file is not what the writer found: $(cmp "$WORK/b.h5" "$WORK/found.h5" 2>&1)"
    ok "killed between the keep's batches: recovery gives back the file as found, byte for byte"
else
    echo "# no kill hooks in this build (not configured --enable-invariants): the kill between batches not tried"
fi
finish
