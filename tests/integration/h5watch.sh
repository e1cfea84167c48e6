#!/usr/bin/env bash
# HDF5's h5watch follows a growing dataset through vfd_swmr_reader (selected
# by HDF5_DRIVER alone) while a writer appends rows through vfd_swmr_writer:
# after each publish it prints the new extent and every new row, and every
# row it prints holds its value (tests/progs/rows.h). Its banner names the
# driver: HDF5's tools know only the built-in drivers by name, so a plugin
# shows as "unknown" (a fallback to sec2 would show "sec2").
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

if [ -z "${H5WATCH:-}" ] || [ ! -x "$H5WATCH" ]; then
    echo "no h5watch (HDF5 built without its high-level library; scripts/bootstrap builds it with)"
    exit 77
fi
export HDF5_DRIVER_CONFIG='tick_len=1;max_lag=7'
f=$WORK/watched.h5
out=$WORK/h5watch.out

# row_value I: rows.h's row_value in bash's 64-bit arithmetic (a logical shift).
row_value() {
    local x=$((($1 + 1) * 0x9E3779B97F4A7C15))
    echo $((((x >> 1) & 0x7FFFFFFFFFFFFFFF) | 1))
}
# wait_output TEXT: until h5watch (which answers no commands; it polls the
# dataset every second) has printed the line TEXT, or has ended.
wait_output() {
    local i
    for i in $(seq 1 $((PROC_TIMEOUT * 20))); do
        grep -qxF -- "$1" "$out" && return 0
        kill -0 "$watch" 2>/dev/null || fail "h5watch ended before printing \"$1\": $(cat "$out" "$WORK/h5watch.err")"
        sleep 0.05
    done
    fail "h5watch did not print \"$1\" within $PROC_TIMEOUT s: $(tail -n 20 "$out")"
}

proc_start w env HDF5_DRIVER=vfd_swmr_writer "$VFDSWMR_PROGS/rowwriter" "$f" create --latest
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "the writer answered \"$ANSWER\": $(proc_err w)"
proc_expect w "append 10" "flushed 10"
proc_expect w tick ticked # published now: a reader can open the new file

# (tool, lib.sh: the sanitizer runtimes for an ASan build; exec: $! is h5watch's pid)
HDF5_DRIVER=vfd_swmr_reader tool exec "$H5WATCH" "$f/rows" >"$out" 2>"$WORK/h5watch.err" &
watch=$!
CLEANUP+=("kill -9 $watch 2>/dev/null")
wait_output "Monitoring dataset /rows..."
grep -qxF "Opened \"$f\" with unknown driver." "$out" \
    || fail "h5watch's banner does not show the plugin driver: $(head -n 2 "$out")"
ok "h5watch opens the live file through vfd_swmr_reader (its banner: \"unknown driver\")"

# Three publishes, each awaited in h5watch's output: a small append, one
# across a chunk boundary (256 rows a chunk), and H5Dflush appends in
# SWMR-write mode (h5py's swmr_mode idiom).
proc_expect w "append 5" "flushed 15"
wait_output "dimension 0: 10->15 (increases)"
proc_expect w "append 300" "flushed 315"
wait_output "dimension 0: 15->315 (increases)"
proc_expect w start_swmr "swmr started"
proc_expect w "dappend 200" "dflushed 515"
wait_output "dimension 0: 315->515 (increases)"
ok "h5watch saw each publish: 10->15->315->515 rows"

kill -TERM "$watch"
wait "$watch" || fail "h5watch exited with status $? after SIGTERM: $(cat "$WORK/h5watch.err")"
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "the writer failed: $(proc_err w)"

# Every "(INDEX) v, v, ..." line after "Data:": each row 10..514 exactly once, with its value.
awk '/^    Data:$/ {on = 1; next} /^dimension/ {on = 0} on' "$out" \
    | tr -d ' ' | tr ',' '\n' | awk -F')' '/^\(/ {i = substr($1, 2); v = $2} !/^\(/ && NF {i++; v = $0} NF {print i, v}' \
    >"$WORK/rows"
n=$(wc -l <"$WORK/rows")
[ "$n" = 505 ] || fail "h5watch printed $n rows, not the 505 appended ones: $(head -n 40 "$out")"
expect=10
while read -r i v; do
    [ "$i" = "$expect" ] || fail "h5watch printed row $i where row $expect was due"
    [ "$v" = "$(row_value "$i")" ] || fail "h5watch printed row $i = $v, not $(row_value "$i")"
    expect=$((expect + 1))
done <"$WORK/rows"
ok "every row h5watch printed (10..514) holds its value"
finish
