#!/usr/bin/env bash
# Freed space goes back to HDF5 at once, as on sec2, while no reader is
# registered: the writer publishes the newest snapshot again with the freed
# space's old bytes as images (vfd-swmr-writer/eoa.c keep_old), so a reader
# registering later and crash recovery read them there, and new raw data
# goes straight into the HDF5 file. `eoaclose rewrite` flushes a 1 MiB /x
# (round 1), deletes it and creates it again (round 2), which on sec2 goes
# into the space the first held, and flushes only when told.
# 1. Live: round 2 goes where it goes on sec2 and is in the file before any
#    flush; a reader opening then reads round 1 (the flushed state) intact;
#    after the flush a reader opening reads round 2 (the page that kept the
#    old bytes is published again without them); the file closes at sec2's
#    size and plain HDF5 reads round 2.
# 2. Crash: the writer killed after round 2 reached the file, before the
#    flush: vfd_swmr_recover gives back round 1, what the last flush left.
# 3. Before the first publish (tick_len=0: nothing is published before the
#    flush): `eoaclose again` opens a file holding round 1 and rewrites /x
#    at once, which sec2 puts where round 1 was. Through the writer too,
#    while a reader holds tick 0 (the file as found): that reader still
#    reads round 1 after round 2 reached the file, a reader opening then
#    reads round 1, one opening after the flush round 2, and the file
#    closes at sec2's size. Killed instead of flushing, the file recovers
#    byte for byte to what the writer found. On a file whose writer died
#    (recovered at the open), round 2 goes there too, and only /x's free
#    is kept (HDF5's search for the signature frees nothing).
# 4. Crash at the flush's truncate of a file longer than HDF5's end, after
#    a keep at tick 0 (tick 0 ends at the file's size): recovered byte for
#    byte. Crash at every truncate of `eoaclose write` (a 1 MiB dataset flushed,
#    deleted -- kept -- and the file closed; test hooks: killed right after
#    HDF5's truncate, before that flush or close publishes), and of
#    `eoaclose persist` (the same with persistent free-space managers):
#    recovery succeeds every time, and once the flush had returned plain
#    HDF5 reads the file. A file cut to HDF5's end at the keep would be
#    shorter than the kept snapshot's end, which recovery refuses; a
#    snapshot of H5Fclose's flush with persistent free-space managers holds
#    the free-space info HDF5 marks invalid while the file is open, which
#    HDF5 refuses.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"
. "$(dirname "$0")/eoaclose_steps.sh"

P=$VFDSWMR_PROGS/eoaclose
kib=1024
cfg="tick_len=5;max_lag=3"

out=$(printf '\n\n\n' | env -u HDF5_DRIVER "$P" rewrite "$WORK/sec2.h5" $kib 2>&1) || fail "sec2: $out"
[[ $out =~ round\ 1\ ([0-9]+).*rewritten\ ([0-9]+).*closed\ ([0-9]+) ]] || fail "sec2: $out"
A1=${BASH_REMATCH[1]} A2=${BASH_REMATCH[2]} sec2=${BASH_REMATCH[3]}
[ "$A2" -lt $((A1 + kib * 1024)) ] || fail "sec2 did not put round 2 into round 1's space: $out"

# The 4-byte ints at element 1 and 2 of /x in FILE at ADDR, as the file holds them.
on_disk() { od -An -t d4 -j $(($2 + 4)) -N 8 "$1" | xargs; }

# rewritten NAME FILE: start the writer and take it to "rewritten", with
# /x where sec2 puts it each round.
rewritten() {
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;log_file_path=$WORK/$1.log" \
        ${VFDSWMR_VALGRIND:-} "$P" rewrite "$2" $kib
    proc_read "$1"
    [ "$ANSWER" = "round 1 $A1" ] || fail "writer: $ANSWER (sec2: round 1 $A1) $(proc_err "$1")"
    proc_ask "$1" go
    [ "$ANSWER" = "rewritten $A2" ] ||
        fail "round 2 is not where sec2 puts it ($A2): $ANSWER; $(grep -E 'kept_old|error' "$WORK/$1.log")"
    grep -q ' kept_old ' "$WORK/$1.log" || fail "the writer did not keep the old bytes: $(proc_err "$1")"
    # round 2 is i * 3 + 2: in the file before any flush, as on sec2
    [ "$(on_disk "$2" "$A2")" = "5 8" ] || fail "the file holds $(on_disk "$2" "$A2") at /x, not round 2's 5 8"
}


rewritten w "$WORK/w.h5"
out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cyclecheck "$WORK/w.h5" 1 2>&1) ||
    fail "a reader opening before the flush does not read round 1: $out"
ok "round 2 went where sec2 puts it, into round 1's space, and into the file at once; a reader opening before the flush reads round 1"
flushed_closed w "$sec2"
ok "after the flush a reader opening reads round 2; the file closed at $sec2 bytes, as on sec2; plain HDF5 reads round 2"

rewritten c "$WORK/c.h5"
proc_kill c
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$WORK/c.h5" 2>&1) || fail "vfd_swmr_recover: $out"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/c.h5" 1 2>&1) || fail "after recovery plain HDF5 does not read round 1: $out"
ok "killed after round 2 reached the file, before the flush: recovery gives back round 1"

cfg0="tick_len=0;max_lag=3"
env -u HDF5_DRIVER "$P" cycle "$WORK/found.h5" $kib 1 >/dev/null 2>&1 || fail "sec2: cannot make the file"
for f in sec2a w0 c0; do cp "$WORK/found.h5" "$WORK/$f.h5"; done
out=$(printf '\n\n\n' | env -u HDF5_DRIVER "$P" again "$WORK/sec2a.h5" $kib 2>&1) || fail "sec2: $out"
[[ $out =~ opened\ ([0-9]+).*rewritten\ ([0-9]+).*closed\ ([0-9]+) ]] || fail "sec2: $out"
B1=${BASH_REMATCH[1]} B2=${BASH_REMATCH[2]} sec2a=${BASH_REMATCH[3]}
[ "$B2" -lt $((B1 + kib * 1024)) ] || fail "sec2 did not put round 2 into round 1's space: $out"

# again_rewritten NAME: the writer on $WORK/NAME.h5 up to "rewritten",
# with a reader (NAME-r) holding tick 0 from before.
again_rewritten() {
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg0;log_file_path=$WORK/$1.log" \
        ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/$1.h5" $kib
    proc_read "$1"
    [ "$ANSWER" = "opened $B1" ] || fail "writer: $ANSWER (sec2: opened $B1) $(proc_err "$1")"
    proc_start "$1-r" env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/$1.h5"
    proc_read "$1-r"
    [ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err "$1-r")"
    proc_ask "$1" go
    [ "$ANSWER" = "rewritten $B2" ] ||
        fail "before the first publish, round 2 is not where sec2 puts it ($B2): $ANSWER; $(grep -E 'kept|error|end_of_tick' "$WORK/$1.log")"
    grep -q ' kept_list ' "$WORK/$1.log" || fail "no copy was listed for the reader: $(grep kept "$WORK/$1.log")"
    [ "$(on_disk "$WORK/$1.h5" "$B2")" = "5 8" ] ||
        fail "the file holds $(on_disk "$WORK/$1.h5" "$B2") at /x, not round 2's 5 8"
    proc_ask "$1-r" go
    [ "$ANSWER" = "still 1" ] || fail "the reader holding tick 0 answered \"$ANSWER\": $(proc_err "$1-r")"
    proc_end "$1-r"
    out=$(HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cyclecheck "$WORK/$1.h5" 1 2>&1) ||
        fail "a reader opening before the flush does not read round 1: $out"
}

again_rewritten w0
ok "before the first publish: round 2 went where sec2 puts it, into the file at once; the reader holding tick 0 and a reader opening then read round 1"
flushed_closed w0 "$sec2a"
ok "after the flush a reader opening reads round 2; the file closed at $sec2a bytes, as on sec2; plain HDF5 reads round 2"

again_rewritten c0
proc_kill c0
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg0" "$WORK/c0.h5" 2>&1) || fail "vfd_swmr_recover: $out"
cmp "$WORK/c0.h5" "$WORK/found.h5" >/dev/null || fail "recovered, the file is not what the writer found: $(cmp "$WORK/c0.h5" "$WORK/found.h5" 2>&1)"
ok "killed after round 2 reached the file, before any publish of a flush: recovery gives back the file as found, byte for byte"

# The same on a file whose writer died (recovered by this writer's open):
# HDF5's search for the signature lowers the end recovery left before HDF5
# set its own, which frees nothing.
proc_start dead env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" \
    ${VFDSWMR_VALGRIND:-} "$P" cycle "$WORK/dead.h5" $kib 2 wait
proc_read dead
[ "$ANSWER" = "round 1" ] || fail "writer: $ANSWER $(proc_err dead)"
proc_kill dead
out=$(printf '\n\n\n' | env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg0;log_file_path=$WORK/dead.log" \
    ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/dead.h5" $kib 2>&1) || fail "writer after the crash: $out"
[[ $out =~ opened\ ([0-9]+).*rewritten\ ([0-9]+) ]] || fail "writer after the crash: $out"
[ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[1]}" ] ||
    fail "after recovery at open, round 2 did not go into round 1's space: $out; $(grep -E 'recovered|kept' "$WORK/dead.log")"
grep -q ' recovered ' "$WORK/dead.log" || fail "the writer did not recover the file"
[ "$(grep -c ' kept_old ' "$WORK/dead.log")" = 1 ] || fail "kept old bytes other than /x's: $(grep kept_old "$WORK/dead.log")"
out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/dead.h5" 2 2>&1) || fail "plain HDF5 after close: $out"
ok "after recovery at open too: round 2 went into round 1's space, the one free kept"

if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
    # A file longer than HDF5's end (bytes appended past it; a file
    # recovered at open): tick 0, and the keep's republish of it, end at
    # the file's size, so the flush's truncate must not cut below that
    # before the flush is published -- killed right after it, the file
    # recovers to what the writer found, byte for byte.
    cp "$WORK/found.h5" "$WORK/long.h5"
    truncate -s +4096 "$WORK/long.h5"
    cp "$WORK/long.h5" "$WORK/long0.h5"
    out=$(printf '\n\n\n' | env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg0" VFDSWMR_TEST_KILL_AT=truncated:1 \
        "$P" again "$WORK/long.h5" $kib 2>&1)
    rc=$?
    [ $rc = 137 ] && [[ $out == *rewritten* ]] || fail "writer on a file longer than HDF5's end: exit status $rc: $out"
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg0" "$WORK/long.h5" 2>&1) ||
        fail "killed at the flush's truncate of a file longer than HDF5's end: vfd_swmr_recover: $out"
    cmp "$WORK/long.h5" "$WORK/long0.h5" >/dev/null ||
        fail "recovered, the file is not what the writer found: $(cmp "$WORK/long.h5" "$WORK/long0.h5" 2>&1)"
    ok "a file longer than HDF5's end, killed at the flush's truncate after a keep at tick 0: recovered byte for byte"

    for mode in write persist; do
        after=0
        for k in $(seq 1 20); do
            rm -f "$WORK/t.h5" "$WORK/t.h5.md"*
            out=$(cd "$WORK" && exec env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" \
                VFDSWMR_TEST_KILL_AT=truncated:$k "$P" $mode t.h5 </dev/null 2>&1)
            rc=$?
            [ $rc = 0 ] && break
            [ $rc = 137 ] || fail "$mode: writer killed at truncate $k: exit status $rc: $out"
            rec=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" --config "$cfg" "$WORK/t.h5" 2>&1) ||
                fail "$mode: killed at truncate $k${out:+ (it printed: $out)}: vfd_swmr_recover: $rec"
            if [[ $out == *flushed* ]]; then
                r=$(env -u HDF5_DRIVER "$P" read "$WORK/t.h5" </dev/null 2>&1) ||
                    fail "$mode: killed at truncate $k after its flush returned: recovered ($rec), plain HDF5 cannot read it: $r"
                after=$((after + 1))
            fi
        done
        [ $rc = 0 ] || fail "$mode: the writer was still killed at truncate 20"
        [ $after -ge 2 ] || fail "$mode: only $after kills came after the flush returned"
        ok "$mode: killed at each of $((k - 1)) truncates: recovery succeeded each time; after the flush returned ($after of them) plain HDF5 reads the file"
    done
else
    echo "# no kill hooks in this build (not configured --enable-invariants): kills at truncates not tried"
fi
finish
