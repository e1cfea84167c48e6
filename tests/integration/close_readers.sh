#!/usr/bin/env bash
# How long H5Fclose waits depends on the readers registered on the file:
# with none (never any, or one that crashed while registered) the writer
# closes at once, with the last snapshot written to the HDF5 file; with 1
# or 5 readers attached that do not refresh it keeps publishing until every
# page has been in the index max_lag ticks; with readers that follow the
# writer (refreshing every 10 ms) it stops waiting as soon as every one of
# them holds the snapshot published at the close. Each reader reads every
# row right through the close and after it. Then readers the close must not
# overlook: through links in other directories, and a 65th reader with no
# read-mark slot left; and readers opening during the close. The writer's
# log says which it did (no timing).
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/close.h5 log=$WORK/writer.log
# explicit ticks: nobody falls behind on a slow machine
cfg="tick_len=0;max_lag=4;log_file_path=$log"
# session NREADERS KILLED [follow]: a writer with NREADERS readers, KILLED of
# them SIGKILLed before the close, the others following the writer through
# the close or not; prints the writer's close_wait log line.
session() {
    local n=$1 killed=$2 mode=${3:-} i
    rm -f "$f" "$log"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$f" create
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append 500" "flushed 500"
    proc_expect w tick ticked
    for ((i = 0; i < n; i++)); do
        proc_start r$i env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" watch
        proc_read r$i
        [ "$ANSWER" = "ready 500" ] || fail "reader $i not ready: $ANSWER $(proc_err r$i)"
    done
    for ((i = 0; i < killed; i++)); do
        kill -9 "${PROC_PID[r$i]}"
        proc_end r$i
    done
    proc_expect w "append 500" "flushed 1000"
    if [ "$mode" = follow ]; then
        for ((i = 0; i < n; i++)); do
            printf 'follow 1000\n' >&"${PROC_IN[r$i]}"
        done
    fi
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "the writer exited with $PROC_STATUS: $(proc_err w)"
    for ((i = killed; i < n; i++)); do
        if [ "$mode" = follow ]; then
            proc_read r$i
            [ "$ANSWER" = "rows 1000" ] || fail "reader $i: follow answered \"$ANSWER\": $(proc_err r$i)"
        else
            proc_expect r$i "verify 1000" "rows 1000" # refreshes to the final state
        fi
        proc_expect r$i quit closed
        proc_end r$i
    done
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check 1000 2>&1) || fail "plain HDF5: $out"
    grep ' close_wait ' "$log" || fail "no close_wait line in the writer's log"
}

line=$(session 0 0)
[[ $line == *"readers=0 all_current=1 waited_ticks=0"* ]] || fail "no reader: the close waited: $line"
ok "no reader: the writer closed at once; plain HDF5 reads all 1000 rows"
line=$(session 1 1)
[[ $line == *"readers=0 all_current=1 waited_ticks=0"* ]] || fail "a crashed reader held the close: $line"
ok "a reader that crashed while registered does not hold the close"
for n in 1 5; do
    line=$(session $n 0)
    # Idle readers hold older snapshots. (How many ticks it then waited
    # depends on how long ago the pages entered the index.)
    [[ $line == *"readers=$n all_current=0"* ]] || fail "$n idle readers: the close did not wait for them: $line"
    ok "$n idle reader(s) attached: the close waited ($line); every reader read every row"
done
# Readers that follow reach the close's snapshot within a few ticks; a max_lag
# of 300 ticks (30 s) leaves them all the time a loaded machine needs, so the
# close ends because they are current, not because the pages became due.
cfg="tick_len=0;max_lag=300;log_file_path=$log"
for n in 1 5; do
    line=$(session $n 0 follow)
    [[ $line == *"readers=$n all_current=1"* ]] || fail "$n following readers: the close waited for pages: $line"
    ok "$n reader(s) following: the close ended once all held its snapshot ($line); every row right"
done

# Readers the close must not overlook (each idle at 500 rows while the
# writer closes at 1000): one through a symbolic link elsewhere, one through
# a hard link elsewhere (both naming the writer's metadata directory), and
# the 65th of 65 readers, which finds every slot of the read-mark table
# taken by 64 readers that follow the writer: all the marks are current,
# but one registered reader has none. Each must keep the close waiting.
cfg="tick_len=0;max_lag=4;log_file_path=$log"
start_writer() {
    rm -f "$f" "$log"
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" "$VFDSWMR_PROGS/rowwriter" "$f" create
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append 500" "flushed 500"
    proc_expect w tick ticked
}
idle_reader() { # NAME PATH [ENV...]
    local name=$1 path=$2
    shift 2
    proc_start "$name" env HDF5_DRIVER=vfd_swmr_reader "$@" "$VFDSWMR_PROGS/rowreader" "$path" watch
    proc_read "$name"
    [ "$ANSWER" = "ready 500" ] || fail "reader $name not ready: $ANSWER $(proc_err "$name")"
}
mkdir "$WORK/elsewhere"
for link in symbolic hard; do
    start_writer
    rm -f "$WORK/elsewhere/close.h5"
    if [ $link = symbolic ]; then ln -s "$f" "$WORK/elsewhere/close.h5"; else ln "$f" "$WORK/elsewhere/close.h5"; fi
    idle_reader r "$WORK/elsewhere/close.h5" HDF5_DRIVER_CONFIG="md_file_path=$WORK"
    proc_expect w "append 500" "flushed 1000"
    proc_expect w close closed
    proc_end w
    line=$(grep ' close_wait ' "$log")
    [[ $line == *"readers=1 all_current=0"* ]] || fail "a reader through a $link link: the close did not wait: $line"
    if [ $link = symbolic ]; then
        # max_lag ticks behind the closing writer: released, and told so
        proc_expect r read failed
        grep -q "released its snapshot.*or max_lag ticks while the writer was closing" "$WORK/r.err" ||
            fail "the idle reader's error: $(grep 'fell behind' "$WORK/r.err")"
    fi
    proc_expect r "verify 1000" "rows 1000"
    proc_expect r quit closed
    proc_end r
    ok "a reader through a $link link in another directory holds the close ($line)"
done
start_writer
for ((i = 0; i < 65; i++)); do
    idle_reader r$i "$f"
done
proc_expect w "append 500" "flushed 1000"
for ((i = 0; i < 64; i++)); do
    printf 'follow 1000\n' >&"${PROC_IN[r$i]}"
done
proc_expect w close closed
proc_end w
line=$(grep ' close_wait ' "$log")
[[ $line == *"readers=65 all_current=0"* ]] || fail "65 readers, 64 marked: the close did not wait: $line"
for ((i = 0; i < 64; i++)); do
    proc_read r$i
    [ "$ANSWER" = "rows 1000" ] || fail "reader $i: follow answered \"$ANSWER\": $(proc_err r$i)"
    proc_expect r$i quit closed
    proc_end r$i
done
proc_expect r64 "verify 1000" "rows 1000"
proc_expect r64 quit closed
proc_end r64
ok "64 current readers in every slot of the read-mark table and an idle 65th: the close waits ($line)"

# Readers that open while the close waits for an idle one hold its final
# snapshot at once: the close ends as soon as the idle reader goes (with
# max_lag 300 ticks of 0.1 s it would otherwise wait 30 s), and the idle
# reader read its older snapshot whole meanwhile.
cfg="tick_len=1;max_lag=300;log_file_path=$log"
start_writer
idle_reader old "$f"
proc_expect w "append 500" "flushed 1000"
printf 'close\n' >&"${PROC_IN[w]}"
for i in 1 2 3; do
    proc_start new$i env HDF5_DRIVER=vfd_swmr_reader "$VFDSWMR_PROGS/rowreader" "$f" watch
    proc_read new$i
    [ "$ANSWER" = "ready 1000" ] || fail "a reader opening during the close: $ANSWER $(proc_err new$i)"
done
proc_expect old read "rows 500"
proc_expect old quit closed
proc_end old
proc_read w
[ "$ANSWER" = closed ] || fail "the writer's close: $ANSWER $(proc_err w)"
proc_end w
line=$(grep ' close_wait ' "$log")
[[ $line == *"readers=3 all_current=1"* ]] || fail "readers opened during the close: $line"
for i in 1 2 3; do
    proc_expect new$i read "rows 1000"
    proc_expect new$i quit closed
    proc_end new$i
done
ok "3 readers opened during the close read its final state; the close ended with the idle reader ($line)"
finish
