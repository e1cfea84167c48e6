#!/usr/bin/env bash
# The read-mark table is made by the first reader that needs it (DESIGN.md
# 6, "Read marks"): a session no reader sees never has one; a reader's
# table is honoured as the writer's own was (a reader stopped for 10 x
# max_lag ticks reads its old snapshot without an error) and goes with the
# writer; a reader killed while making it leaves nothing a writer does not
# clear; a reader that makes it just after the writer closed removes it
# itself; a table removed by hand costs its readers one failed read, never
# a wrong one. Explicit ticks (tick_len=0): no timing anywhere.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/lazy.h5 lag=3
table=$f.md.readers
cfg="tick_len=0;max_lag=$lag"
reader=(env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f")

# leftovers: the table and any temporary of it
leftovers() { find "$WORK" -maxdepth 1 -name "$(basename "$table")*" -printf '%f ' | sort; }

# ticks W N: N ticks of writer W, each after 100 more rows (total in $total)
ticks() {
    local i
    for ((i = 0; i < $2; i++)); do
        total=$((total + 100))
        proc_expect "$1" "append 100" "flushed $total"
        proc_expect "$1" tick ticked
    done
}

# stalled R W: reader R (ready at 500 rows) stopped for 10 x max_lag ticks
# of W reads its old snapshot without an error, then everything
stalled() {
    kill -STOP "${PROC_PID[$1]}"
    ticks "$2" $((10 * lag))
    kill -CONT "${PROC_PID[$1]}"
    proc_expect "$1" read "rows 500"
    proc_expect "$1" "verify $total" "rows $total"
}

# 1. nobody reads: no table, at any point of the session
writer_start w "$cfg;log_file_path=$WORK/w1.log" "$f"
total=0
ticks w 5
[ -z "$(leftovers)" ] || fail "a session no reader saw has side files: $(leftovers)"
INSPECT=${VFDSWMR_INSPECT:-${VFDSWMR_PROGS%/tests/progs}/tools/inspect/vfd_swmr_inspect}
out=$(${VFDSWMR_VALGRIND:-} "$INSPECT" "$f" 2>&1)
grep -q "^readers: *0 registered; no read-mark table" <<<"$out" || fail "vfd_swmr_inspect on it: $out"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
[ -z "$(leftovers)" ] || fail "left behind: $(leftovers)"
grep -q '^[0-9.]* marks ' "$WORK/w1.log" && fail "the writer found a read-mark table nobody made: $(grep ' marks ' "$WORK/w1.log")"
ok "a session no reader sees: no read-mark table, during or after (5 ticks, $total rows)"

# 2. the first reader makes it; the writer honours it from its next publish
writer_start w "$cfg;log_file_path=$WORK/w2.log" "$f"
proc_expect w "append 500" "flushed 500"
proc_expect w tick ticked
total=500
[ -z "$(leftovers)" ] || fail "a table before any reader: $(leftovers)"
proc_start r "${reader[@]}" watch
proc_read r
[ "$ANSWER" = "ready 500" ] || fail "reader not ready: $ANSWER $(proc_err r)"
[ -f "$table" ] || fail "the reader made no read-mark table: $(leftovers)"
[ "$(stat -c '%u %a' "$table")" = "$(stat -c '%u %a' "$f.md")" ] ||
    fail "the table's owner and mode ($(stat -c '%u %a' "$table")) are not the metadata file's ($(stat -c '%u %a' "$f.md"))"
# a second reader uses it (one table, two marks)
proc_start r2 "${reader[@]}" watch
proc_read r2
[ "$ANSWER" = "ready 500" ] || fail "second reader not ready: $ANSWER $(proc_err r2)"
proc_expect w tick ticked
grep -q '^[0-9.]* marks ' "$WORK/w2.log" || fail "the writer did not find the reader's table: $(tail -5 "$WORK/w2.log")"
stalled r w
proc_expect r2 read "rows 500"
ok "the first reader made the table (the metadata file's owner and mode), a second used it; stopped for $((10 * lag)) ticks (max_lag=$lag), both read their snapshot without an error"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
[ -z "$(leftovers)" ] || fail "the reader-made table outlived its writer: $(leftovers)"
proc_expect r "verify $total" "rows $total"
for p in r r2; do
    proc_expect $p quit closed
    proc_end $p
done
ok "the writer removed the table at close; the readers then read all $total rows"

# 3. the table removed by hand, before and after the writer adopted it:
# the readers registered in it are told (their next read fails), register
# again at their refresh, and are honoured again
writer_start w "$cfg;log_file_path=$WORK/w3.log" "$f"
proc_expect w "append 500" "flushed 500"
proc_expect w tick ticked
total=500
proc_start r "${reader[@]}" watch
proc_read r
[ "$ANSWER" = "ready 500" ] || fail "reader not ready: $ANSWER $(proc_err r)"
rm "$table" # before the writer's next publish: it never had it
proc_expect r read failed
grep -q "was removed before its writer found it" "$WORK/r.err" || fail "no error for the lost table: $(proc_err r)"
proc_expect r "verify 500" "rows 500"
[ -f "$table" ] || fail "the reader did not register again"
stalled r w
ok "removed before the writer had it: the reader's next read failed saying so; refreshed, it registered again and was honoured for $((10 * lag)) ticks"
rm "$table" # the writer has it now: it releases its marks at its next publish
total=$((total + 100))
proc_expect w "append 100" "flushed $total"
proc_expect w tick ticked
grep -q "read-mark table was removed or replaced" "$WORK/w3.log" || fail "the writer did not notice: $(tail -3 "$WORK/w3.log")"
proc_expect r read failed
grep -q "the writer released its snapshot" "$WORK/r.err" || fail "no release error: $(proc_err r)"
proc_expect r "verify $total" "rows $total"
[ -f "$table" ] || fail "the reader did not register again"
proc_expect w tick ticked
[ "$(grep -c '^[0-9.]* marks ' "$WORK/w3.log")" = 2 ] || fail "the writer did not take the new table: $(grep '^[0-9.]* marks ' "$WORK/w3.log")"
kill -STOP "${PROC_PID[r]}"
seen=$total
ticks w $((10 * lag))
kill -CONT "${PROC_PID[r]}"
proc_expect r read "rows $seen"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
proc_expect r quit closed
proc_end r
[ -z "$(leftovers)" ] || fail "left behind: $(leftovers)"
ok "removed after the writer had it: the writer released its marks (the reader's next read failed), took the table the reader made at its refresh and honoured it for $((10 * lag)) ticks"

if [ "${VFDSWMR_TEST_HOOKS:-1}" = 1 ]; then
    # 4. a reader killed between making the table and naming it
    for how in unnamed named; do
        flags=
        [ $how = named ] && flags=no_tmpfile # a file system without O_TMPFILE: a named temporary
        writer_start w "$cfg;log_file_path=$WORK/w3.log" "$f"
        proc_expect w "append 500" "flushed 500"
        proc_expect w tick ticked
        total=500
        out=$(env VFDSWMR_TEST_FLAGS=$flags VFDSWMR_TEST_KILL_AT=linking:1 "${reader[@]}" check 500 2>&1 </dev/null)
        rc=$?
        [ $rc = 137 ] || fail "$how: the reader was not killed at its hook (status $rc): $out"
        [ -e "$table" ] && fail "$how: a table after the reader was killed before naming it"
        left=$(leftovers)
        if [ $how = unnamed ]; then
            [ -z "$left" ] || fail "$how: the killed reader left $left"
        else
            [ -n "$left" ] || fail "$how: no temporary left: was the named path taken?"
        fi
        # the next reader makes the table and is honoured
        proc_start r env VFDSWMR_TEST_FLAGS=$flags "${reader[@]}" watch
        proc_read r
        [ "$ANSWER" = "ready 500" ] || fail "$how: reader not ready: $ANSWER $(proc_err r)"
        [ -f "$table" ] || fail "$how: the next reader made no table"
        proc_expect w tick ticked
        stalled r w
        proc_expect w close closed
        proc_end w
        [ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
        proc_expect r quit closed
        proc_end r
        [ -e "$table" ] && fail "$how: the table outlived its writer"
        if [ $how = named ]; then
            # a writer's open clears temporaries over a minute old
            tmp=$(find "$WORK" -maxdepth 1 -name "$(basename "$table").*.tmp")
            [ -n "$tmp" ] || fail "$how: the killed reader's temporary is gone early: $(leftovers)"
            touch -d '-2 minutes' $tmp
            writer_start w "$cfg" "$f"
            proc_expect w close closed
            proc_end w
            [ -z "$(leftovers)" ] || fail "$how: the next writer did not clear the killed reader's temporary: $(leftovers)"
        fi
        ok "$how: a reader killed before naming the table left $([ $how = unnamed ] && echo nothing || echo 'a temporary the next writer cleared'); the next reader made it and was honoured for $((10 * lag)) ticks"
    done

    # 5. a reader names its table just after the writer closed: it removes it
    writer_start w "$cfg" "$f"
    proc_expect w "append 500" "flushed 500"
    proc_expect w tick ticked
    hook_start "the reader" "$WORK/r4.out" env VFDSWMR_TEST_STOP_AT=linking:1 "${reader[@]}" check 500
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "writer: $(proc_err w)"
    [ -e "$f.md" ] && fail "the writer left its metadata file"
    kill -CONT "$HOOK_PID"
    wait $HOOK_BG || fail "the reader failed after the writer closed: $(cat "$WORK/r4.out")"
    grep -q "verified 500 rows" "$WORK/r4.out" || fail "the reader: $(cat "$WORK/r4.out")"
    [ -z "$(leftovers)" ] || fail "a table named after its writer closed stayed: $(leftovers)"
    ok "a reader that named its table after the writer had closed removed it, and read all 500 rows"
fi

out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 500 2>&1) || fail "plain HDF5: $out"
finish
