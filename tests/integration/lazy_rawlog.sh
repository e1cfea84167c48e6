#!/usr/bin/env bash
# The raw-data write log (mdfile/rawlog.h) is created at the first publish
# that finds a reader registered on the HDF5 file: a session no reader
# sees has none. Created mid-session it lists only the ticks after the last
# one the writer wrote in unlogged (first_tick, FORMAT.md "VRAW"), never an
# earlier one as empty; a reader following the writer reads every row.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/lr.h5
log=$WORK/lr.log
raw=$f.md.raw
# first_tick and last_tick of the log on disk (u64 at offsets 16 and 24)
ticks() { od -An -t u8 -j 16 -N 16 "$raw" | awk '{ print $1, $2 }'; }

writer_start w "tick_len=0;max_lag=3;log_file_path=$log" "$f"
proc_expect w "append 100" "flushed 100"
proc_expect w tick ticked
[ -e "$f.md" ] || fail "no metadata file while the writer runs"
[ ! -e "$raw" ] || fail "a raw-data log with no reader registered: $(ls -l "$f".md*)"
ok "no reader registered: the session has a metadata file and no raw-data log"

proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read r
[ "$ANSWER" = "ready 100" ] || fail "reader: $ANSWER $(proc_err r)"
proc_expect r "verify 100" "rows 100"
proc_expect w "append 100" "flushed 200" # rows written unlogged, then the publish that finds the reader
[ -e "$raw" ] || fail "a reader is registered and the publish made no raw-data log: $(ls -l "$f".md*)"
line=$(grep ' rawlog created at tick ' "$log") || fail "the writer did not log the log's creation: $(cat "$log")"
read -r first last <<<"$(ticks)"
created=$(sed -E 's/.* created at tick ([0-9]+):.*/\1/' <<<"$line")
[ "$last" = "$created" ] && [ "$first" = $((created + 1)) ] ||
    fail "log created at tick $created (the rows of that tick unlogged) has first_tick=$first last_tick=$last"
ok "the publish that found the reader (tick $created) made the log, listing ticks $first on"
proc_expect r "verify 200" "rows 200"
proc_expect w "append 100" "flushed 300"
read -r first2 last2 <<<"$(ticks)"
[ "$first2" = "$first" ] && [ "$last2" = $((created + 1)) ] ||
    fail "after the next publish: first_tick=$first2 last_tick=$last2, expected $first and $((created + 1))"
count=$(od -An -t u4 -j 32 -N 4 "$raw" | tr -d ' ')
[ "$count" -ge 1 ] || fail "the rows appended in tick $((created + 1)) are not in the log (count $count)"
ok "the next publish lists tick $last2's writes ($count ranges)"
proc_expect r "verify 300" "rows 300"
proc_expect r quit closed
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
[ ! -e "$raw" ] || fail "the raw-data log outlived the session"
out=$("$VFDSWMR_PROGS/rowreader" "$f" check 300 2>&1) || fail "plain HDF5: $out"
ok "closed: the log is gone; plain HDF5 reads 300 rows ($out)"
finish
