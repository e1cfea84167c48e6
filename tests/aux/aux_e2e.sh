#!/usr/bin/env bash
# vfd_swmr_aux end to end, with real processes: a writer through the
# vfd_swmr_writer driver that keeps no metadata file of its own and publishes
# updater files into $WORK/<case>/nfs (standing in for an NFS directory, with
# the HDF5 file); the daemon keeps the local metadata file
# $WORK/<case>/local/f.h5.md from them; two readers through vfd_swmr_reader
# read the HDF5 file with that local metadata file (md_file_path) and must
# verify every dataset (tests/progs/evict.c: only flushed states, every value).
#
#   plain    readers and writer start before the daemon (the readers wait for
#            the local file); garbage names in the directory are ignored;
#            --verbose and --stats report what the log says
#   reorder  updater files reach the directory late and out of order
#            (reorder.sh): the daemon applies them in sequence all the same
#   kill     the daemon is killed with SIGKILL three times at random points
#            and restarted: no updater is ever applied twice, none is left
#            out. "applied seq=N" is logged after the apply, so a kill can
#            fall between an apply and its log line: after each kill the local
#            file's header (its tick) says exactly which updater was applied
#            last, and that one counts as applied (once) whether logged or not
#
#   cli      --help, --version, exit statuses 2 and 1 with their messages,
#            SIGTERM (exit 0, statistics printed)
#
# Every other case ends with the writer's FINAL updater: the daemon removes the
# local file and exits 0; the closed HDF5 file verifies with plain HDF5.
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
. "${VFDSWMR_TESTLIB:?}"
: "${VFDSWMR_AUX:?run through make check: VFDSWMR_AUX names the built vfd_swmr_aux}"
here=$(cd "$(dirname "$0")" && pwd)

groups=12 per_group=25 batch=10
total=$((groups * per_group))
# Under valgrind everything is slow: readers need many more ticks before
# they count as fallen behind, and the writer must keep its updater files
# longer than a restarted daemon needs to start.
# Otherwise the writer removes each updater 20 ticks (2 s) after its tick, well
# within a run, so restarts also meet a directory the writer is pruning.
if [ -n "${VFDSWMR_VALGRIND:-}" ]; then lag=300 keep=1000; else lag=7 keep=20; fi

# new_case NAME: fresh directories; sets C (the case's directory) and the configurations.
new_case() {
    C=$WORK/$1
    mkdir -p "$C/nfs" "$C/local" "$C/stage"
    CASE_LAG=${2:-$lag}
    BASE="tick_len=1;max_lag=$CASE_LAG"
    READER_CONFIG="$BASE;md_file_path=$C/local;presume_posix_semantics=0;open_timeout=300"
}
writer_config() { # writer_config UD_BASE KEEP_TICKS
    echo "$BASE;maintain_metadata_file=0;generate_updater_files=1;updater_file_path=$1;updater_keep_ticks=$2"
}
start_readers() {
    for r in 1 2; do
        HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG=$READER_CONFIG ${VFDSWMR_VALGRIND:-} \
            "$VFDSWMR_PROGS/evict" read "$C/nfs/f.h5" $groups $per_group $batch >"$C/r$r" 2>&1 &
        eval "R$r=\$!"
    done
}
start_writer() { # start_writer UD_BASE KEEP_TICKS
    HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG=$(writer_config "$1" "$2") ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/evict" write "$C/nfs/f.h5" $groups $per_group $batch >"$C/w" 2>&1 &
    W=$!
}
start_aux() { # start_aux RUN [options]: the daemon, logging to aux.RUN.log, output in aux.RUN.out
    local run=$1
    shift
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_AUX" --tick_len 1 --max_lag "$CASE_LAG" --stats --log_file "$C/aux.$run.log" \
        "$@" "$C/local/f.h5.md" "$C/nfs/f.h5.ud" >"$C/aux.$run.out" 2>&1 &
    A=$!
}
# wait_for TEST TIMEOUT_S WHAT: poll (every 10 ms) until the shell test succeeds.
wait_for() {
    local i
    for ((i = 0; i < $2 * 100; i++)); do
        eval "$1" && return 0
        sleep 0.01
    done
    fail "$C: timed out waiting for $3"
}
finish_case() { # the writer (unless W is empty: waited for already), both readers, the daemon (run $1) end well
    [ -z "$W" ] || wait "$W" || fail "$C: writer failed: $(cat "$C/w")"
    wait "$R1" || fail "$C: reader 1 failed: $(tail -n 20 "$C/r1")"
    wait "$R2" || fail "$C: reader 2 failed: $(tail -n 20 "$C/r2")"
    wait "$A" || fail "$C: vfd_swmr_aux failed: $(tail -n 20 "$C/aux.$1.out")"
    cat "$C/w" "$C/r1" "$C/r2"
    grep -q "all $total datasets verified" "$C/r1" || fail "$C: reader 1 did not verify everything"
    grep -q "all $total datasets verified" "$C/r2" || fail "$C: reader 2 did not verify everything"
    [ ! -e "$C/local/f.h5.md" ] || fail "$C: the local metadata file is still there after FINAL"
    ! compgen -G "$C/local/f.h5.md.*" >/dev/null || fail "$C: files left behind: $(ls "$C/local")"
    "$VFDSWMR_PROGS/evict" read "$C/nfs/f.h5" $groups $per_group $batch >/dev/null ||
        fail "$C: the closed file does not verify with plain HDF5"
}
# stat_of RUN NAME: a counter of the daemon's --stats output
stat_of() { sed -n "s/^  $2: *\([0-9]*\).*/\1/p" "$C/aux.$1.out"; }
applied_seqs() { sed -n 's/.* applied seq=\([0-9]*\) .*/\1/p' "$@"; }
# header_tick FILE: the tick in the header of the metadata file FILE (offset
# 20, docs/FORMAT.md), or "none" when it has no header yet (created by
# updater 0, nothing applied since). A header is one pwrite of its own, so a
# killed daemon leaves the old one or the new one.
header_tick() {
    [ "$(head -c 4 "$1")" = VHDR ] || { echo none; return; }
    od -An -t u8 -j 20 -N 8 "$1" | tr -d ' '
}
# account_kill RUN: run RUN was just killed. The local file's header names the
# last updater applied: the one the run's log shows as "applying" that tick
# (0 when there is no header yet). It must be the run's last "applied" one, or
# the one after it whose "applied" line the kill prevented -- noted in
# $C/unlogged so that check_history counts it once. Anything else fails.
account_kill() {
    local log="$C/aux.$1.log" tick s last applying
    tick=$(header_tick "$C/local/f.h5.md")
    if [ "$tick" = none ]; then
        s=0
    else
        s=$(grep -v ' create_only' "$log" | sed -n "s/.* applying seq=\([0-9]*\) tick=$tick images=.*/\1/p" | tail -n 1)
        [ -n "$s" ] || fail "$C: run $1: the local file is at tick $tick, which the run never applied"
    fi
    last=$(applied_seqs "$log" | tail -n 1)
    applying=$(sed -n 's/.* applying seq=\([0-9]*\) .*/\1/p' "$log" | tail -n 1)
    if [ "$s" = "$last" ]; then
        echo "run $1: killed after updater $s was applied and logged"
    elif [ "$s" = $((last + 1)) ] && [ "$applying" = "$s" ]; then
        echo "$s" >>"$C/unlogged"
        echo "run $1: killed after updater $s was applied, before its \"applied\" line"
    else
        fail "$C: run $1: the local file shows updater $s (tick $tick), the log's last applied is $last"
    fi
}
# check_history LOG...: over all these logs and the applies the kills kept
# from being logged ($C/unlogged), every sequence from 0 to the last was
# applied exactly once, and the last was the writer's FINAL.
check_history() {
    local dup n last
    touch "$C/unlogged"
    dup=$({ applied_seqs "$@"; cat "$C/unlogged"; } | sort -n | uniq -d | head -n 5 | tr '\n' ' ')
    [ -z "$dup" ] || fail "$C: updaters applied twice: $dup"
    n=$({ applied_seqs "$@"; cat "$C/unlogged"; } | wc -l)
    last=$({ applied_seqs "$@"; cat "$C/unlogged"; } | sort -n | tail -n 1)
    if [ "$n" -le 10 ] || [ "$n" -ne $((last + 1)) ]; then
        fail "$C: $n updaters applied, but the last was $last"
    fi
    grep -q " applying seq=$last .* final\$" "$@" || fail "$C: the last updater applied ($last) was not FINAL"
    HISTORY=$n
}

# ---- the command: exit statuses, messages, SIGTERM ---------------------------
new_case cli
aux() { ${VFDSWMR_VALGRIND:-} "$VFDSWMR_AUX" "$@"; }
aux --help >"$C/out" 2>&1 || fail "--help: exit status $?"
[ "$(head -n 1 "$C/out")" = "Usage: vfd_swmr_aux [options] <md_file> <ud_base>" ] || fail "--help: $(head -n 1 "$C/out")"
aux --version >"$C/out" 2>&1 || fail "--version: exit status $?"
grep -q '^vfd_swmr_aux (vfd-swmr) [0-9]' "$C/out" || fail "--version: $(cat "$C/out")"
rc=0
aux --polls_per_tick=0 "$C/local/f.h5.md" "$C/nfs/f.h5.ud" >"$C/out" 2>"$C/err" || rc=$?
[ $rc -eq 2 ] || fail "usage error: exit status $rc"
[ ! -s "$C/out" ] || fail "usage error: output $(cat "$C/out")"
printf '%s\n' "vfd_swmr_aux: --polls_per_tick=0: out of range; expected an integer from 1 to 1000 (polls per tick)" \
    "Try 'vfd_swmr_aux --help' for more information." | cmp -s - "$C/err" || fail "usage error: $(cat "$C/err")"
rc=0
aux "$C/local/f.h5.md" "$C/nfs" 2>"$C/err" || rc=$?
[ $rc -eq 1 ] || fail "<ud_base> a directory: exit status $rc"
grep -qx "vfd_swmr_aux: error: <ud_base> $C/nfs is a directory; give the base path of the updater files, e.g. $C/nfs/FILE.h5.md.ud" \
    "$C/err" || fail "<ud_base> a directory: $(cat "$C/err")"
start_aux 1
wait_for "grep -q ' resume ' '$C/aux.1.log' 2>/dev/null" 60 "the daemon to start"
kill -TERM "$A"
wait "$A" || fail "SIGTERM: exit status $?"
grep -q ' stop signal: stopping before sequence 0$' "$C/aux.1.log" || fail "SIGTERM: $(cat "$C/aux.1.log")"
[ "$(stat_of 1 'updater files applied')" = 0 ] || fail "SIGTERM: no statistics: $(cat "$C/aux.1.out")"
ok "command line: --help, --version, usage errors (2), fatal errors (1), SIGTERM (0, with statistics)"

# ---- plain ------------------------------------------------------------------
new_case plain
for g in f.h5.ud.junk f.h5.ud.007 f.h5.ud.3.bak f.h5.ud.77.tmp notes.txt; do echo junk >"$C/nfs/$g"; done
start_readers
start_writer "$C/nfs/f.h5.ud" 1000 # the daemon starts late: the writer keeps every updater
wait_for "[ -e '$C/nfs/f.h5.ud.5' ]" 60 "the writer's updater 5"
[ ! -e "$C/local/f.h5.md" ] || fail "$C: a local metadata file exists before the daemon started"
kill -0 "$R1" || fail "$C: reader 1 did not wait for the local metadata file"
kill -0 "$R2" || fail "$C: reader 2 did not wait for the local metadata file"
ok "plain: readers started before the local metadata file existed are waiting for it"
start_aux 1 --verbose
echo junk >"$C/nfs/f.h5.ud.later-garbage"
finish_case 1
check_history "$C/aux.1.log"
grep -v " applied seq=\| applying seq=" "$C/aux.1.out"
[ "$(stat_of 1 'updater files applied')" -eq "$HISTORY" ] || fail "$C: --stats disagrees with the log"
[ "$(grep -c ' applied seq=' "$C/aux.1.out")" -eq "$HISTORY" ] || fail "$C: --verbose did not show the log"
[ "$(stat_of 1 'garbage files ignored')" -eq 4 ] || fail "$C: garbage counted $(stat_of 1 'garbage files ignored') times, not 4"
[ "$(stat_of 1 'gaps seen')" -eq 0 ] || fail "$C: gaps in an orderly run"
[ "$(stat_of 1 'updater files skipped')" -eq 0 ] || fail "$C: skips in an orderly run"
ok "plain: $HISTORY updaters applied in order, each once; the readers verified all $total datasets; 4 garbage names ignored"

# ---- reorder ------------------------------------------------------------------
# Delivery delays add to the readers' lag behind the writer: allow for them
# with a larger max_lag (advisable over NFS, where updater files arrive late).
new_case reorder "$([ -n "${VFDSWMR_VALGRIND:-}" ] && echo 300 || echo 20)"
start_readers
start_aux 1
bash "$here/reorder.sh" "$C/stage/f.h5.ud" "$C/nfs" "$C/writer-done" "$$" >"$C/reorder.out" 2>&1 &
P=$!
# The transport holds files back for as long as the machine's load makes it
# take: the writer must not delete them meanwhile (updater_keep_ticks is the
# transport's budget; the keep case below tests the deletion).
start_writer "$C/stage/f.h5.ud" 100000
wait "$W" || fail "$C: writer failed: $(cat "$C/w")"
touch "$C/writer-done"
wait "$P" || fail "$C: reorder.sh failed: $(cat "$C/reorder.out")"
W=
finish_case 1
check_history "$C/aux.1.log"
cat "$C/reorder.out"
moved=$(sed -n 's/^reorder: moved \([0-9]*\) .*/\1/p' "$C/reorder.out")
[ "$moved" -eq "$HISTORY" ] || fail "$C: $moved files moved, $HISTORY applied"
gaps=$(stat_of 1 'gaps seen')
[ "$gaps" -gt 0 ] || fail "$C: no gap seen: were the files reordered at all?"
ok "reorder: $HISTORY updaters delivered late and out of order ($gaps gaps) were applied in sequence; readers verified all"

# ---- kill ---------------------------------------------------------------------
# A killed daemon is restarted by the test, which on a loaded machine takes
# a while: its readers (max_lag contract, no read marks) must not fall behind
# meanwhile, so the lag is as large as in the reorder case.
new_case kill "$([ -n "${VFDSWMR_VALGRIND:-}" ] && echo 300 || echo 20)"
groups=30 total=$((30 * per_group)) # a longer writer: room for three kills
start_readers
start_aux 1
start_writer "$C/nfs/f.h5.ud" "$keep"
RANDOM=$$
for run in 1 2 3; do
    # let this run apply something, then kill it at a random moment
    wait_for "grep -q ' applied seq=' '$C/aux.$run.log' 2>/dev/null" 60 "run $run to apply an updater"
    sleep "0.$((RANDOM % 5))$((RANDOM % 10))"
    kill -0 "$W" 2>/dev/null || fail "$C: the writer ended before kill $run: make it longer"
    kill -9 "$A"
    wait "$A" 2>/dev/null
    account_kill $run
    start_aux $((run + 1))
done
finish_case 4
logs=("$C"/aux.[1-4].log)
check_history "${logs[@]}"
for run in 1 2 3; do
    echo "run $run: applied $(applied_seqs "$C/aux.$run.log" | head -n 1)..$(applied_seqs "$C/aux.$run.log" | tail -n 1)," \
        "last event: $(tail -n 1 "$C/aux.$run.log" | cut -d' ' -f2-4)"
done
[ "$(stat_of 4 'updater files skipped')" -eq 0 ] || fail "$C: the last run re-read applied updaters"
if [ "$HISTORY" -gt $((keep + 2)) ] && [ -e "$C/nfs/f.h5.ud.0" ]; then
    fail "$C: the writer did not remove old updater files (updater_keep_ticks=$keep)"
fi
ok "kill: the daemon was killed 3 times and restarted; $HISTORY updaters, each applied exactly once; readers verified all"
finish
