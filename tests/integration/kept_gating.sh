#!/usr/bin/env bash
# The writer lists copies of freed space's old bytes (vfd-swmr-writer/kept.c)
# only while every registered reader reads that list -- readers marked in
# its own read-mark table (DESIGN.md, "Kept old bytes for registered
# readers", *Only while every registered reader reads the list*). Each part
# has a reader that reads no list of this writer's hold round 1 of /x while
# a writer opening the file deletes /x and creates it again before anything
# is published (`eoaclose again`, tick_len=0; sec2 puts round 2 where round
# 1 was):
# 1. a reader that opened the file with no writer (registered on a byte of
#    its own);
# 2. a reader holding a dead writer's last snapshot (on a slot byte of
#    that writer's table, which the new writer cannot tell from its own
#    readers').
# Each time the writer must keep the space from raw data: round 2 goes
# elsewhere, and nothing is listed. The first reader, reading /x again,
# still reads round 1 (with the space given to round 2 it would read round
# 2: it lays over no list but its own snapshot's writer's); the second
# reads round 1 or fails naming the new session. 3. The same writer with no reader
# registered, and with a reader marked in its table, puts round 2 where
# sec2 does (keep_old.sh checks what those readers read).
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

P=$VFDSWMR_PROGS/eoaclose
kib=1024
cfg="tick_len=0;max_lag=3"

# again NAME: the writer (tick_len=0) on $WORK/NAME.h5 up to "rewritten";
# OPENED and REWRITTEN are /x's addresses before and after.
again() {
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;log_file_path=$WORK/$1.log" \
        ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/$1.h5" $kib
    proc_read "$1"
    [[ $ANSWER =~ ^opened\ ([0-9]+)$ ]] || fail "writer $1: $ANSWER $(proc_err "$1")"
    OPENED=${BASH_REMATCH[1]}
    proc_ask "$1" go
    [[ $ANSWER =~ ^rewritten\ ([0-9]+)$ ]] || fail "writer $1: $ANSWER $(proc_err "$1")"
    REWRITTEN=${BASH_REMATCH[1]}
}

# done_writer NAME: flush and close the writer; plain HDF5 reads round 2.
done_writer() {
    proc_ask "$1" go
    [ "$ANSWER" = "round 2" ] || fail "writer $1: $ANSWER $(proc_err "$1")"
    proc_ask "$1" go
    [[ $ANSWER == closed* ]] || fail "writer $1: $ANSWER $(proc_err "$1")"
    proc_end "$1"
    [ "$PROC_STATUS" = 0 ] || fail "writer $1 exit status $PROC_STATUS: $(proc_err "$1")"
    out=$(env -u HDF5_DRIVER "$P" cyclecheck "$WORK/$1.h5" 2 2>&1) || fail "plain HDF5 after $1 closed: $out"
}

# still_one READER: the reader reads /x again, through the view it holds.
still_one() {
    proc_ask "$1" go
    [ "$ANSWER" = "still 1" ] || fail "reader $1 answered \"$ANSWER\": $(proc_err "$1")"
    proc_end "$1"
}

env -u HDF5_DRIVER "$P" cycle "$WORK/found.h5" $kib 1 >/dev/null 2>&1 || fail "sec2: cannot make the file"
for f in own control marked; do cp "$WORK/found.h5" "$WORK/$f.h5"; done

# 1.
proc_start own-r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/own.h5"
proc_read own-r
[ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err own-r)"
again own
[ "$REWRITTEN" != "$OPENED" ] ||
    fail "with a reader that opened with no writer, round 2 went into round 1's space: $(grep -E 'kept' "$WORK/own.log")"
! grep -q ' kept_list ' "$WORK/own.log" || fail "the writer listed a copy: $(grep kept "$WORK/own.log")"
still_one own-r
done_writer own
ok "a reader that opened with no writer: round 2 went elsewhere ($REWRITTEN, not $OPENED), nothing was listed, the reader still reads round 1"

# 2. W1 makes the file and flushes round 1; the reader opens while it runs
# (marked in W1's table); W1 dies; W2 opens the file (recovering W1's last
# snapshot, the reader's).
proc_start w1 env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" \
    ${VFDSWMR_VALGRIND:-} "$P" cycle "$WORK/old.h5" $kib 2 wait
proc_read w1
[ "$ANSWER" = "round 1" ] || fail "writer w1: $ANSWER $(proc_err w1)"
proc_start old-r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/old.h5"
proc_read old-r
[ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err old-r)"
proc_kill w1
again old
[ "$REWRITTEN" != "$OPENED" ] ||
    fail "with a reader holding the last writer's snapshot, round 2 went into round 1's space: $(grep -E 'kept' "$WORK/old.log")"
! grep -q ' kept_list ' "$WORK/old.log" || fail "the writer listed a copy: $(grep kept "$WORK/old.log")"
# Its next read either reads round 1 or fails, naming the new session (the
# reader checks whose the metadata file is after each read) -- never round 2.
proc_ask old-r go
[ "$ANSWER" = "still 1" ] || { [ "$ANSWER" = failed ] && grep -q 'belongs to another writer session' "$WORK/old-r.err"; } ||
    fail "reader old-r answered \"$ANSWER\": $(proc_err old-r)"
read_was=${ANSWER/failed/refused (another writer session)}
proc_end old-r
done_writer old
ok "a reader holding a dead writer's last snapshot: round 2 went elsewhere ($REWRITTEN, not $OPENED), nothing was listed, the reader's next read: $read_was"

# 3.
again control
[ "$REWRITTEN" = "$OPENED" ] || fail "with no reader, round 2 did not go into round 1's space: $(grep -E 'kept' "$WORK/control.log")"
done_writer control
proc_start marked-w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;log_file_path=$WORK/marked.log" \
    ${VFDSWMR_VALGRIND:-} "$P" again "$WORK/marked.h5" $kib
proc_read marked-w
[[ $ANSWER =~ ^opened\ ([0-9]+)$ ]] || fail "writer: $ANSWER $(proc_err marked-w)"
OPENED=${BASH_REMATCH[1]}
proc_start marked-r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$P" cycleread "$WORK/marked.h5"
proc_read marked-r
[ "$ANSWER" = "round 1" ] || fail "reader: $ANSWER $(proc_err marked-r)"
proc_ask marked-w go
[ "$ANSWER" = "rewritten $OPENED" ] || fail "with a marked reader, round 2 did not go into round 1's space: $ANSWER"
grep -q ' kept_list ' "$WORK/marked.log" || fail "no copy was listed for the marked reader"
still_one marked-r
ok "no reader, and a reader marked in the writer's table: round 2 went where sec2 puts it (a copy listed for the reader)"
finish
