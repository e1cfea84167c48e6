#!/usr/bin/env bash
# pb_expansion_threshold: with ticks ending only by explicit calls
# (tick_len=0), a writer whose page buffer grows past the threshold ends a
# tick by itself at the flush that made it grow, and readers then see
# everything that flush covered; with the threshold off (0) no tick ends.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

# run_writer THRESHOLD ATTRS: a writer adding one 4000-byte attribute per
# flush, ATTRS times, asking for the published tick after each flush. Each
# time the tick moves, a separate reader process must see every attribute
# flushed so far (the last one's values checked). Leaves TICKS (the last
# tick) and READS (how many reader checks ran).
run_writer() {
    local thr=$1 n=$2 f=$WORK/exp$1.h5 last=0 k tick
    proc_start w env HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3;publish=tick;pb_expansion_threshold=$thr;log_file_path=$WORK/exp$thr.log" \
        ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowwriter" "$f" create
    proc_read w
    [ "$ANSWER" = "ready 0" ] || fail "the writer answered \"$ANSWER\": $(proc_err w)"
    READS=0
    for k in $(seq 1 "$n"); do
        proc_expect w "attrs 1" "flushed attrs $k"
        proc_ask w status
        [[ $ANSWER =~ ^status\ tick=([0-9]+)$ ]] || fail "status answered \"$ANSWER\": $(proc_err w)"
        tick=${BASH_REMATCH[1]}
        [ "$tick" -ge "$last" ] || fail "the tick went back from $last to $tick"
        if [ "$tick" -gt "$last" ]; then
            # Attribute a<k-1> holds (k-1) * 1000 + i: its first and last values.
            local a=$((k - 1)) want
            want="$((a * 1000)), $((a * 1000 + 1)),"
            out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG= tool "$H5DUMP" -y -w 0 -a "/groups/a$a" "$f" 2>&1) \
                || fail "after tick $tick a reader cannot read attribute a$a: $out"
            [[ $out == *"$want"* && $out == *"$((a * 1000 + 999))"* ]] \
                || fail "after tick $tick the reader read wrong values of a$a: $out"
            READS=$((READS + 1))
        fi
        last=$tick
    done
    TICKS=$last
    proc_expect w close closed
    proc_end w
    [ "$PROC_STATUS" = 0 ] || fail "the writer failed: $(proc_err w)"
}

run_writer 1 400
[ "$TICKS" -ge 2 ] || fail "pb_expansion_threshold=1: only $TICKS ticks ended while the page buffer grew"
early=$(grep -c 'end_of_tick.* early=1 ' "$WORK/exp1.log")
[ "$early" -ge "$TICKS" ] || fail "the log shows $early early ends of tick for $TICKS ticks"
ok "pb_expansion_threshold=1 with tick_len=0: $TICKS ticks ended early, readers saw each one's last flush ($READS checks)"

run_writer 0 150
[ "$TICKS" = 0 ] || fail "with pb_expansion_threshold=0 and tick_len=0 a tick ended by itself (tick $TICKS)"
ok "pb_expansion_threshold=0: no tick ends without an explicit call"

# The closed files read back with plain HDF5, every attribute whole.
for a in 0 149 399; do
    [ "$a" -lt 150 ] && g=$WORK/exp0.h5 || g=
    for h in "$WORK/exp1.h5" $g; do
        out=$("$H5DUMP" -y -w 0 -a "/groups/a$a" "$h" 2>&1) || fail "$h: a$a: $out"
        [[ $out == *"$((a * 1000)), $((a * 1000 + 1)),"* && $out == *"$((a * 1000 + 999))"* ]] \
            || fail "$h: wrong values of a$a: $out"
    done
done
ok "the closed files hold every attribute"
finish
