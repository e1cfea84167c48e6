#!/usr/bin/env bash
# The crash harness (tests/crash/README.md):
#
#   crash_harness.sh [--baseline] TRIALS SEED
#
# Each trial runs crash_writer through vfd_swmr_writer and one or two crash_readers through
# vfd_swmr_reader, kills the writer with SIGKILL (inside a chosen operation, at a random
# moment, or inside H5Fclose), then recovers the crashed file and checks with plain HDF5 that
# it is exactly the last published snapshot (crash_verify --exact, and h5dump equal to
# h5dump through vfd_swmr_reader before recovery). Trial t uses seed SEED*1000+t; everything
# it checks follows from that seed, whatever the timing.
#
# Recovery, per trial one of two plans, both on the crashed original and on a copy of the
# file pair (a copy has a new inode):
#   reopen: the original by the next writer (crash_reopen through vfd_swmr_writer), the copy
#           by "vfd_swmr_recover --force";
#   command: the original by "vfd_swmr_recover" (no --force); on the copy the next writer and
#           the command without --force must refuse ("belongs to another HDF5 file") and
#           change nothing, then "vfd_swmr_recover --force" recovers it.
# In some trials the first recovery is killed (VFDSWMR_TEST_KILL_AT=recover:K) and run again.
# After each recovery a second run of the command must find nothing to do and change nothing.
#
# Before recovery, and after a killed recovery, plain HDF5 (tryopen: read-only, read-write,
# SWMR-read) must refuse the crashed file and change no byte of it (the writer's seal,
# docs/DESIGN.md): only a writer killed inside H5Fclose after every page reached the file may
# leave one plain HDF5 opens.
#
# Existing files (two trials in five): the file is first written and closed by plain HDF5 (no
# driver) for 20 to 219 operations, then reopened through vfd_swmr_writer (crash_writer
# --resume, with or without H5F_ACC_SWMR_WRITE) and killed: in half of them within the first
# ticks (the writer holds before its first operation until the readers have read the file,
# then dies after 1 to 40 progress lines), in the others as in the other trials. Without
# H5F_ACC_SWMR_WRITE, half the trials (new or existing files) use HDF5's default bounds
# (crash_writer --earliest: a version 2 superblock, whose flags HDF5 does not check; version 0
# superblocks are tested in tests/integration/sealed.sh, since H5F_FSPACE_STRATEGY_NONE needs 2).
#
# --baseline: no recovery (for a build without it): each crashed file is checked with plain
# HDF5 after "h5clear -s" on a copy, and the next writer's open is tried; the harness reports
# how many trials lose data or are unreadable and exits 0.
#
# Environment: CRASH_PROGS (crash_writer, crash_reader, crash_verify, crash_reopen), VFDSWMR_PROGS
# (tryopen), H5DUMP,
# HDF5_PLUGIN_PATH (the plugins), VFDSWMR_RECOVER (vfd_swmr_recover), CRASH_CONFIG (driver
# configuration, default 'tick_len=1;max_lag=5'), CRASH_KEEP=1 (keep every trial's files),
# CRASH_HANG (seconds after which a trial that makes no progress counts as hung, default 120),
# TMPDIR.
#
# Prints one line per trial and at the end
#   crash harness: T trials, F files recovered, O objects and E elements verified
# Exit 1 when any trial failed; its files stay in the directory named in the message.
set -u

usage() { echo "usage: crash_harness.sh [--baseline] TRIALS SEED" >&2; exit 2; }
BASELINE=0
if [ "${1:-}" = --baseline ]; then BASELINE=1; shift; fi
[ $# = 2 ] || usage
TRIALS=$1 SEED=$2
[[ $TRIALS =~ ^[0-9]+$ && $SEED =~ ^[0-9]+$ ]] || usage

: "${CRASH_PROGS:?set CRASH_PROGS to the directory of crash_writer etc. (make check does)}"
: "${H5DUMP:?set H5DUMP to h5dump (make check does)}"
: "${HDF5_PLUGIN_PATH:?set HDF5_PLUGIN_PATH to the vfd_swmr plugins (make check does)}"
CONFIG=${CRASH_CONFIG:-tick_len=1;max_lag=5}
# publish=flush (the default): every flush that returned is in the last
# snapshot, so recovery restores at least the newest state a flush returned for.
case ";$CONFIG;" in *";publish=tick;"*) FLUSHED_KEPT=() ;; *) FLUSHED_KEPT=(--flushed-kept) ;; esac
# The kill hooks (VFDSWMR_TEST_KILL_AT, common/recover.h) exist in invariant builds only:
# without them, writers are killed inside H5Fclose from outside only, and recoveries are not killed.
HOOKS=${VFDSWMR_TEST_HOOKS:-1}
HANG=${CRASH_HANG:-120}
RECOVER=${VFDSWMR_RECOVER:-}
H5CLEAR=$(dirname "$H5DUMP")/h5clear
for p in crash_writer crash_reader crash_verify crash_reopen; do
    [ -x "$CRASH_PROGS/$p" ] || { echo "crash harness: no $p in $CRASH_PROGS" >&2; exit 1; }
done
TRYOPEN=${VFDSWMR_PROGS:-$CRASH_PROGS/../progs}/tryopen
[ -x "$TRYOPEN" ] || { echo "crash harness: no tryopen at $TRYOPEN (set VFDSWMR_PROGS)" >&2; exit 1; }
if [ "$BASELINE" = 0 ] && [ ! -x "$RECOVER" ]; then
    echo "crash harness: no recovery command (VFDSWMR_RECOVER='$RECOVER'); --baseline measures a build without it" >&2
    exit 1
fi
if [ "$BASELINE" = 1 ] && [ ! -x "$H5CLEAR" ]; then
    echo "crash harness: --baseline needs h5clear next to h5dump ($H5CLEAR)" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/crash-harness.XXXXXX")
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    done
    if [ "${CRASH_KEEP:-0}" = 1 ] || [ "${FAILED:-0}" -gt 0 ]; then
        echo "crash harness: files kept in $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

# --- helpers -----------------------------------------------------------------------------

plain() { env -u HDF5_DRIVER -u HDF5_DRIVER_CONFIG -u VFDSWMR_TEST_KILL_AT "$@"; }
as_writer() { env -u VFDSWMR_TEST_KILL_AT HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$CONFIG" "$@"; }
as_reader() { env -u VFDSWMR_TEST_KILL_AT HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$CONFIG" "$@"; }
recover_cmd() { env -u HDF5_DRIVER -u VFDSWMR_TEST_KILL_AT HDF5_DRIVER_CONFIG="$CONFIG" "$RECOVER" "$@"; }

# short_err: the first FAIL line of stdin, its HDF5 stack cut to the innermost frame (the
# whole text stays in the trial's log files).
short_err() {
    grep -m1 'FAIL:' | sed -e 's/^[^:]*: FAIL: //' -e 's/\(.*\): #0 .*; #[0-9]* \([^;]*\)$/\1: ... \2/' \
        -e "s|$D/||g" | cut -c1-600
}

TRIAL_ERR=""
# tfail MESSAGE: the trial failed (first message wins); returns 1.
tfail() { [ -n "$TRIAL_ERR" ] || TRIAL_ERR=$*; return 1; }

count_lines() { # count_lines FILE PATTERN
    local n
    n=$(grep -c -- "$2" "$1" 2>/dev/null) || n=${n:-0}
    echo "${n:-0}"
}

alive() { kill -0 "$1" 2>/dev/null; }

# wait_for DESCRIPTION COMMAND...: poll COMMAND (every 10 ms) until it succeeds; fail when a
# started process exits with a failure, or nothing happened for $HANG seconds.
wait_for() {
    local what=$1 t0=$SECONDS
    shift
    until "$@"; do
        if [ $((SECONDS - t0)) -ge "$HANG" ]; then
            tfail "hung: no $what within $HANG s"
            return 1
        fi
        if procs_failed; then
            tfail "while waiting for $what: $(procs_failed_msg)"
            return 1
        fi
        sleep 0.01
    done
}

# Processes of the trial: writer W and readers R[i]; a process that already exited with a
# FAIL message counts as failed.
procs_failed() { grep -qs 'FAIL:' "$D"/writer.log "$D"/reader*.log; }
procs_failed_msg() { grep -hs 'FAIL:' "$D"/writer.log "$D"/reader*.log | head -n 3 | cut -c1-1500; }

# wait_exit PID: until the process has exited (collect the status with wait afterwards).
wait_exit() {
    local t0=$SECONDS
    while alive "$1"; do
        if [ $((SECONDS - t0)) -ge "$HANG" ]; then
            kill -KILL "$1" 2>/dev/null
            tfail "hung: process $1 did not exit within $HANG s"
            return 1
        fi
        sleep 0.01
    done
}

readers_logged() { # readers_logged N: every reader logged at least N walks
    local i
    for i in $(seq 1 "$NREADERS"); do
        [ "$(count_lines "$D/seen$i" '^end ')" -ge "$1" ] || return 1
    done
}
writer_gone_or_far() { ! alive "$WPID" || progress_at_least "$FAR"; }
progress_at_least() { [ "$(wc -l <"$D/progress" 2>/dev/null || echo 0)" -ge "$1" ]; }
close_begun() { grep -qs '^begin [0-9]* close' "$D/progress"; }
writer_flushed_once() { grep -qs '^flushed ' "$D/progress"; }

# h5dump is not built with the sanitizers: to load the plugins of an
# AddressSanitizer build (scripts/build --sanitize) it needs their runtime
# preloaded (and leak checking off: h5dump itself is not under test).
ASAN_RT=
for d in ${HDF5_PLUGIN_PATH//:/ }; do
    [ -n "$ASAN_RT" ] || ASAN_RT=$(ldd "$d"/libvfd_swmr_reader.so 2>/dev/null | awk '/libasan/ {print $3}')
done
h5dump_tool() {
    if [ -n "$ASAN_RT" ]; then
        LD_PRELOAD=$ASAN_RT ASAN_OPTIONS=detect_leaks=0 "$H5DUMP" "$@"
    else
        "$H5DUMP" "$@"
    fi
}
# dump_plain FILE / dump_snapshot FILE: h5dump without the file name line.
dump_plain() {
    (unset HDF5_DRIVER HDF5_DRIVER_CONFIG VFDSWMR_TEST_KILL_AT && h5dump_tool "$1") | sed '1s/^HDF5 ".*" {$/HDF5 FILE {/'
}
dump_snapshot() {
    (unset VFDSWMR_TEST_KILL_AT && export HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$CONFIG" &&
        h5dump_tool "$1") | sed '1s/^HDF5 ".*" {$/HDF5 FILE {/'
}

SEEN_ARGS=()
# verify FILE LABEL: plain HDF5 must find exactly the snapshot state; adds to the totals.
verify() {
    local f=$1 label=$2 out
    if ! out=$(plain "$CRASH_PROGS/crash_verify" --file "$f" --progress "$D/progress" --seed "$TSEED" \
        --mix "$MIX" "${SEEN_ARGS[@]}" --exact "$SNAP" --label "$label" 2>&1); then
        printf '%s\n' "$out" >"$D/verify-$label.log"
        tfail "$label: $(short_err <<<"$out")"
        return 1
    fi
    printf '%s\n' "$out" >"$D/verify-$label.log"
    local line
    line=$(grep '^verified ' <<<"$out")
    T_OBJ=$((T_OBJ + $(sed 's/.* objects=\([0-9]*\).*/\1/' <<<"$line")))
    T_ELEM=$((T_ELEM + $(sed 's/.* elements=\([0-9]*\) .*/\1/' <<<"$line")))
    if ! dump_plain "$f" >"$D/dump-$label" 2>"$D/dump-$label.err"; then
        tfail "$label: plain h5dump of the recovered file failed: $(head -c 500 "$D/dump-$label.err")"
        return 1
    fi
    if ! cmp -s "$D/dump-$label" "$D/dump-snapshot"; then
        tfail "$label: plain h5dump of the recovered file differs from h5dump of the last snapshot (through vfd_swmr_reader): $(diff "$D/dump-snapshot" "$D/dump-$label" | head -n 8 | tr '\n' '|')"
        return 1
    fi
    T_FILES=$((T_FILES + 1))
}

# run_recovery METHOD DIR LABEL [KILL_K]: recover DIR/f.h5 by METHOD (reopen | command |
# command-force); with KILL_K the first attempt dies at its K-th page write, then it runs again.
run_recovery() {
    local method=$1 dir=$2 label=$3 k=${4:-} rc envs=() cmd=()
    case $method in
    reopen)
        envs=(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$CONFIG")
        cmd=("$CRASH_PROGS/crash_reopen" ${WSWMR:+--swmr} "$dir/f.h5") ;;
    command) envs=(-u HDF5_DRIVER HDF5_DRIVER_CONFIG="$CONFIG") cmd=("$RECOVER" "$dir/f.h5") ;;
    command-force) envs=(-u HDF5_DRIVER HDF5_DRIVER_CONFIG="$CONFIG") cmd=("$RECOVER" --force "$dir/f.h5") ;;
    esac
    if [ -n "$k" ]; then
        env -u VFDSWMR_TEST_KILL_AT "${envs[@]}" VFDSWMR_TEST_KILL_AT="recover:$k" "${cmd[@]}" >"$D/$label-killed.log" 2>&1
        rc=$?
        case $rc in
        137) NOTE="$NOTE, $label: recovery killed at page write $k"
            plain_refused "$dir/f.h5" "$label (recovery killed)" || return 1 ;;
        0) NOTE="$NOTE, $label: recovery finished before page write $k" ;;
        *) tfail "$label: recovery with VFDSWMR_TEST_KILL_AT=recover:$k exited $rc: $(tail -c 600 "$D/$label-killed.log")"; return 1 ;;
        esac
    fi
    env -u VFDSWMR_TEST_KILL_AT "${envs[@]}" "${cmd[@]}" >"$D/$label.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || { tfail "$label: $method exited $rc: $(tail -c 800 "$D/$label.log")"; return 1; }
    verify "$dir/f.h5" "$label" || return 1
    # recovering again finds nothing to do and changes nothing
    cp "$dir/f.h5" "$D/$label.after"
    local force=()
    [ "$method" = command-force ] && force=(--force)
    recover_cmd "${force[@]}" "$dir/f.h5" >"$D/$label-again.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || { tfail "$label: a second vfd_swmr_recover exited $rc: $(tail -c 600 "$D/$label-again.log")"; return 1; }
    cmp -s "$dir/f.h5" "$D/$label.after" || { tfail "$label: a second vfd_swmr_recover changed the recovered file"; return 1; }
    rm -f "$D/$label.after"
}

# refuse_copy DIR: the copy's metadata file records the original's inode: the next writer and
# the command without --force must refuse it and change nothing.
refuse_copy() {
    local dir=$1 rc
    cp "$dir/f.h5" "$D/copy.h5.before"; cp "$dir/f.h5.md" "$D/copy.md.before"
    as_writer "$CRASH_PROGS/crash_reopen" ${WSWMR:+--swmr} "$dir/f.h5" >"$D/copy-reopen-refused.log" 2>&1
    rc=$?
    [ "$rc" != 0 ] || { tfail "copy: the next writer opened a copy whose metadata file belongs to the original"; return 1; }
    grep -q 'belongs to another HDF5 file' "$D/copy-reopen-refused.log" ||
        { tfail "copy: the next writer refused the copy without saying its metadata file belongs to another HDF5 file: $(tail -c 600 "$D/copy-reopen-refused.log")"; return 1; }
    recover_cmd "$dir/f.h5" >"$D/copy-recover-refused.log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || { tfail "copy: vfd_swmr_recover without --force exited $rc, expected 1"; return 1; }
    grep -q 'belongs to another HDF5 file' "$D/copy-recover-refused.log" ||
        { tfail "copy: vfd_swmr_recover refused without saying the metadata file belongs to another HDF5 file: $(tail -c 600 "$D/copy-recover-refused.log")"; return 1; }
    cmp -s "$dir/f.h5" "$D/copy.h5.before" && cmp -s "$dir/f.h5.md" "$D/copy.md.before" ||
        { tfail "copy: a refused recovery changed the files"; return 1; }
    rm -f "$D/copy.h5.before" "$D/copy.md.before"
    NOTE="$NOTE, copy refused without --force"
}

# plain_refused FILE LABEL: plain HDF5 refuses FILE read-only, read-write and SWMR-read, and no
# attempt changes a byte. A writer killed inside H5Fclose may have written every page (and
# cleared its seal) already: then plain HDF5 reads it, and only that is allowed.
plain_refused() {
    local f=$1 label=$2 m out
    cp "$f" "$D/pre-plain.h5"
    for m in rdonly rdonly_swmr rdwr; do
        out=$(plain "$TRYOPEN" "$f" $m 2>"$D/plain-$m.err")
        case $out in
        refused) ;;
        opened)
            if [ "${MODE#close}" != "$MODE" ] && [ "$label" = crashed ]; then
                NOTE="$NOTE, closed far enough that plain HDF5 opens it"
                rm -f "$D/pre-plain.h5"
                return 0
            fi
            tfail "$label: plain HDF5 opened the file before it was recovered ($m)"
            return 1 ;;
        *) tfail "$label: tryopen $m: $out $(head -c 300 "$D/plain-$m.err")"; return 1 ;;
        esac
        cmp -s "$f" "$D/pre-plain.h5" || { tfail "$label: a refused plain open ($m) changed the file"; return 1; }
    done
    rm -f "$D/pre-plain.h5"
    T_REFUSED=$((T_REFUSED + 1))
}

# --- one trial ---------------------------------------------------------------------------

# (7 entries: prime to the cycles of the mix, the SWMR-write flag and the recovery plan)
MODES=(op-mid op-preflush external op-mid close-hook op-preflush close-external)
MIXES=(mixed objects append)

# structural_kinds MIX SWMR / other_kinds MIX: operation kinds the writer can be killed in.
# Without deletions (SWMR-write mode, the append mix) groups and datasets stop being created
# once there are 12 groups or 14 datasets (after about 50 to 200 operations): see short_warmup.
structural_kinds() {
    case $1 in
    append) echo "dcreate" ;;
    *) if [ "$2" = 1 ]; then echo "gcreate dcreate"; else echo "gcreate gdelete dcreate ddelete"; fi ;;
    esac
}
other_kinds() {
    case $1 in
    append) echo "append acreate awrite" ;;
    *) echo "append acreate awrite adelete" ;;
    esac
}

# pick VAR ITEMS...: VAR = one of ITEMS (no command substitution: RANDOM must stay in this shell,
# so that a trial's choices follow from its seed alone).
pick() { local -n _v=$1; shift; local a=("$@"); _v=${a[$((RANDOM % ${#a[@]}))]}; }

trial() {
    local t=$1 c=$(($1 + $2)) t0=$SECONDS wargs=() wenv=() i kind nth phase rkill="" rtarget plan fmt=() n0
    TSEED=$(($2 * 1000 + $1))
    RANDOM=$TSEED
    D=$WORK/trial-$t
    mkdir -p "$D/copy"
    TRIAL_ERR="" NOTE="" SEEN_ARGS=() PIDS=() SHORT_WARMUP=""
    MODE=${MODES[$((c % ${#MODES[@]}))]}
    MIX=${MIXES[$(((c / 2) % ${#MIXES[@]}))]}
    WSWMR=""; [ $((c % 2)) = 1 ] && WSWMR=1
    NREADERS=$((1 + RANDOM % 2))
    plan=$([ $(((c / 3) % 2)) = 0 ] && echo reopen || echo command)
    [ $((c % 3)) = 1 ] && rkill=$((1 + RANDOM % 24))
    [ "$HOOKS" = 1 ] || rkill=""
    [ "$HOOKS" = 1 ] || [ "$MODE" != close-hook ] || MODE=close-external
    pick rtarget original copy
    EXISTING=""; [ $((c % 5)) -lt 2 ] && EXISTING=1
    [ -z "$WSWMR" ] && [ $((RANDOM % 2)) = 1 ] && fmt=(--earliest)
    wargs=(--file "$D/f.h5" --progress "$D/progress" --seed "$TSEED" --mix "$MIX" --gate "$D/gate" "${fmt[@]}")
    [ -n "$WSWMR" ] && wargs+=(--swmr)
    if [ -n "$EXISTING" ]; then
        # written and closed by plain HDF5 first
        n0=$((20 + RANDOM % 200))
        plain "$CRASH_PROGS/crash_writer" --file "$D/f.h5" --progress "$D/progress0" --seed "$TSEED" --mix "$MIX" \
            "${fmt[@]}" ${WSWMR:+--swmr} --close-after "$n0" --pace-us 0 \
            >"$D/writer0.log" 2>&1 || { tfail "the plain writer of the existing file failed: $(tail -c 800 "$D/writer0.log")"; return 1; }
        wargs+=(--resume "$n0")
        [ $((RANDOM % 2)) = 1 ] && MODE=early && wargs+=(--hold "$D/gate")
    fi
    case $MODE in
    op-*)
        # groups and datasets created or deleted in 60 % of these trials
        # shellcheck disable=SC2046
        if [ $((RANDOM % 5)) -lt 3 ]; then pick kind $(structural_kinds "$MIX" "${WSWMR:-0}")
        else pick kind $(other_kinds "$MIX"); fi
        nth=$((1 + RANDOM % 4)) phase=${MODE#op-}
        case $kind in
        gcreate | dcreate) if [ -n "$WSWMR" ] || [ "$MIX" = append ]; then SHORT_WARMUP=1 nth=1; fi ;;
        esac
        wargs+=(--kill-op "$kind:$nth:$phase")
        WHAT="to be killed in $kind #$nth after the gate ($phase)" ;;
    external) WHAT="killed from outside" ;;
    close-hook)
        wargs+=(--close-after $((${n0:-0} + 60 + RANDOM % 900)))
        # the number of page writes inside H5Fclose grows with the file: often a few
        wenv=(VFDSWMR_TEST_KILL_AT="close:$((1 + (RANDOM % 2 ? RANDOM % 4 : RANDOM % 16)))")
        WHAT="killed inside H5Fclose (${wenv[0]#VFDSWMR_TEST_KILL_AT=})" ;;
    close-external)
        wargs+=(--close-after $((${n0:-0} + 60 + RANDOM % 900)))
        WHAT="killed inside H5Fclose (from outside)" ;;
    early) WHAT="killed within its first ticks" ;;
    esac
    printf 'trial %d seed %d: %s mix, %s, %s, %s, %d reader(s), %s' "$t" "$TSEED" "$MIX" \
        "$([ -n "$EXISTING" ] && echo "existing file (state $n0) reopened" || echo "new file")" \
        "$([ -n "$WSWMR" ] && echo "H5F_ACC_SWMR_WRITE" || echo "no SWMR-write flag")" \
        "$([ ${#fmt[@]} -gt 0 ] && echo "superblock v2" || echo "superblock v3")" "$NREADERS" "$MODE" >"$D/plan"

    # the writer, then the readers once it has flushed
    (exec env "${wenv[@]}" HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$CONFIG" \
        "$CRASH_PROGS/crash_writer" "${wargs[@]}") >"$D/writer.log" 2>&1 &
    WPID=$!
    PIDS+=("$WPID")
    wait_for "first flush of the writer" writer_flushed_once || return 1
    RPIDS=()
    for i in $(seq 1 "$NREADERS"); do
        local rargs=(--file "$D/f.h5" --progress "$D/progress" --seen "$D/seen$i" --seed "$TSEED" --mix "$MIX"
            --name "r$i" --timeout $((HANG * 4)))
        [ $((RANDOM % 2)) = 1 ] && rargs+=(--swmr)
        (exec env -u VFDSWMR_TEST_KILL_AT HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$CONFIG" \
            "$CRASH_PROGS/crash_reader" "${rargs[@]}") >"$D/reader$i.log" 2>&1 &
        RPIDS+=("$!")
        PIDS+=("$!")
        SEEN_ARGS+=(--seen "$D/seen$i")
    done

    # readers have seen the file: open the gate, then the kill
    # (a closing writer waits at the gate with all its operations done, so its readers may see
    # just one state; a writer to be killed creating the few objects that a workload without
    # deletions creates must be killed early: SHORT_WARMUP)
    # (early: the writer holds before its first operation, so its readers see one state)
    local few=2
    { [ "${MODE#close}" != "$MODE" ] || [ -n "$SHORT_WARMUP" ] || [ "$MODE" = early ]; } && few=1
    wait_for "walks logged by every reader" readers_logged "$few" || return 1
    # and the writer has run for a while (so that some pages are due for the HDF5 file: it
    # mixes ticks then), for 0 to 1500 progress lines (about 0 to 750 operations)
    if [ "$few" = 2 ]; then
        wait_for "writer progress" progress_at_least "$(($(wc -l <"$D/progress") + RANDOM % 1500))" || return 1
    fi
    : >"$D/gate"
    FAR=$(($(wc -l <"$D/progress") + 6000))
    case $MODE in
    op-*)
        wait_for "the writer's death" writer_gone_or_far || return 1
        if alive "$WPID"; then
            kill -KILL "$WPID"
            WHAT="$WHAT: not reached within 6000 progress lines, killed from outside"
        fi ;;
    external | early)
        local lines
        lines=$(wc -l <"$D/progress")
        wait_for "writer progress" progress_at_least $((lines + 1 + RANDOM % 40)) || return 1
        kill -KILL "$WPID" ;;
    close-external)
        wait_for "the writer's H5Fclose" close_begun || return 1
        kill -KILL "$WPID" 2>/dev/null ;;
    esac
    wait_exit "$WPID" || return 1
    wait "$WPID"
    local wrc=$?
    case $wrc in
    137) ;;
    0) case $MODE in
       close-*) WHAT="$WHAT: H5Fclose finished first (nothing to recover)" ;;
       *) tfail "the writer exited normally instead of being killed"; return 1 ;;
       esac ;;
    *) tfail "the writer exited $wrc: $(tail -c 1500 "$D/writer.log")"; return 1 ;;
    esac
    local killed
    killed=$(sed -n 's/^kill \([0-9]*\) \([a-z]*\) \([a-z]*\)\(.*\)/killed in operation \1, \2 (\3)\4/p' "$D/progress")
    killed=${killed/ instead-of / (no }
    [ "$killed" = "${killed% (no *}" ] || killed="$killed possible for 200 operations)"
    [ -z "$killed" ] || WHAT=$killed

    # the readers finish their walk and stop
    for i in "${!RPIDS[@]}"; do kill -TERM "${RPIDS[$i]}" 2>/dev/null; done
    for i in "${!RPIDS[@]}"; do
        wait_exit "${RPIDS[$i]}" || return 1
        wait "${RPIDS[$i]}" || { tfail "reader r$((i + 1)) failed: $(tail -c 1500 "$D/reader$((i + 1)).log")"; return 1; }
    done

    # the last snapshot, through vfd_swmr_reader, before anything recovers
    local out
    if ! out=$(as_reader "$CRASH_PROGS/crash_verify" --file "$D/f.h5" --progress "$D/progress" --seed "$TSEED" \
        --mix "$MIX" "${SEEN_ARGS[@]}" "${FLUSHED_KEPT[@]}" --label snapshot 2>&1); then
        printf '%s\n' "$out" >"$D/verify-snapshot.log"
        tfail "the crashed file read through vfd_swmr_reader: $(short_err <<<"$out")"
        return 1
    fi
    printf '%s\n' "$out" >"$D/verify-snapshot.log"
    SNAP=$(sed -n 's/^state \([0-9]*\)$/\1/p' <<<"$out")
    SNAPLINE=$(grep -o 'state [0-9]* (readers saw up to [0-9]*, the writer began to publish up to [0-9]*)' <<<"$out")
    dump_snapshot "$D/f.h5" >"$D/dump-snapshot" 2>"$D/dump-snapshot.err" ||
        { tfail "h5dump through vfd_swmr_reader of the crashed file failed: $(head -c 500 "$D/dump-snapshot.err")"; return 1; }
    if [ "$wrc" = 137 ] && [ "$BASELINE" = 0 ]; then
        plain_refused "$D/f.h5" crashed || return 1
    fi
    cp "$D/f.h5" "$D/copy/f.h5"
    [ -e "$D/f.h5.md" ] && cp "$D/f.h5.md" "$D/copy/f.h5.md"

    if [ "$BASELINE" = 1 ]; then
        baseline
        return $?
    fi
    local ko="" kc=""
    [ -n "$rkill" ] && { [ "$rtarget" = original ] && ko=$rkill || kc=$rkill; }
    if [ "$plan" = reopen ]; then
        run_recovery reopen "$D" original-reopen $ko || return 1
        run_recovery command-force "$D/copy" copy-recover-force $kc || return 1
        NOTE="; recovered: original by the next writer, copy by vfd_swmr_recover --force$NOTE"
    else
        run_recovery command "$D" original-recover $ko || return 1
        if [ -e "$D/copy/f.h5.md" ] && [ "$wrc" = 137 ] && [ "${MODE#close}" = "$MODE" ]; then
            refuse_copy "$D/copy" || return 1
        fi
        run_recovery command-force "$D/copy" copy-recover-force $kc || return 1
        NOTE="; recovered: original by vfd_swmr_recover, copy by vfd_swmr_recover --force$NOTE"
    fi
    return 0
}

# --baseline: what a build without recovery leaves.
baseline() {
    local rc
    if [ ! -e "$D/copy/f.h5.md" ]; then
        NOTE="; no metadata file left (the writer closed)"
    fi
    plain "$H5CLEAR" -s "$D/copy/f.h5" >"$D/h5clear.log" 2>&1
    if plain "$CRASH_PROGS/crash_verify" --file "$D/copy/f.h5" --progress "$D/progress" --seed "$TSEED" --mix "$MIX" \
        "${SEEN_ARGS[@]}" --exact "$SNAP" --label after-h5clear >"$D/verify-after-h5clear.log" 2>&1; then
        NOTE="$NOTE; after h5clear -s plain HDF5 reads the last snapshot"
    else
        B_FAIL=$((B_FAIL + 1))
        local why
        why=$(short_err <"$D/verify-after-h5clear.log" | cut -c1-300)
        case $why in
        *"cannot open"* | *"cannot be read"* | *"root group"*) B_UNREADABLE=$((B_UNREADABLE + 1)) ;;
        *"no state of the workload"*) B_MIXED=$((B_MIXED + 1)) ;;
        *"older than"* | *", not state"*) B_OLD=$((B_OLD + 1)) ;;
        *"wrong value"*) B_WRONG=$((B_WRONG + 1)) ;;
        esac
        NOTE="$NOTE; BASELINE FAIL after h5clear -s: $why"
    fi
    as_writer "$CRASH_PROGS/crash_reopen" ${WSWMR:+--swmr} "$D/f.h5" >"$D/reopen.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        B_REOPEN=$((B_REOPEN + 1))
        NOTE="$NOTE; the next writer cannot open it"
    fi
    return 0
}

# --- the trials --------------------------------------------------------------------------

FAILED=0 T_FILES=0 T_OBJ=0 T_ELEM=0 T_REFUSED=0 B_FAIL=0 B_UNREADABLE=0 B_MIXED=0 B_OLD=0 B_WRONG=0 B_REOPEN=0
echo "crash harness: $TRIALS trials from seed $SEED, HDF5_DRIVER_CONFIG='$CONFIG'$([ "$BASELINE" = 1 ] && echo ", baseline (no recovery)")$([ "$HOOKS" = 1 ] || echo ", no kill hooks (not an invariant build)"), work directory $WORK"
for t in $(seq 0 $((TRIALS - 1))); do
    start=$SECONDS
    # the shell's own notes ("Killed" for each SIGKILL'd writer) go to a file
    trial "$t" "$SEED" 2>"$WORK/trial-$t.stderr"
    rc=$?
    for pid in "${PIDS[@]}"; do alive "$pid" && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    if [ "$rc" = 0 ] && [ -z "$TRIAL_ERR" ]; then
        echo "$(cat "$D/plan"): $WHAT; snapshot $SNAPLINE$NOTE ($((SECONDS - start)) s)"
        [ "${CRASH_KEEP:-0}" = 1 ] || rm -rf "$D" "$WORK/trial-$t.stderr"
    else
        FAILED=$((FAILED + 1))
        [ -n "$TRIAL_ERR" ] || TRIAL_ERR="the harness failed: $(grep -v 'Killed' "$WORK/trial-$t.stderr" | head -n 5)"
        echo "$(cat "$D/plan" 2>/dev/null): ${WHAT:-}: FAIL: $TRIAL_ERR ($((SECONDS - start)) s; files kept in $D)"
    fi
done
if [ "$BASELINE" = 1 ]; then
    echo "crash harness (baseline, no recovery): $TRIALS trials: $B_FAIL crashed files fail plain HDF5 verification after h5clear -s ($B_UNREADABLE unreadable, $B_MIXED mixing states or missing data, $B_OLD older than the last snapshot, $B_WRONG wrong values); the next writer cannot open $B_REOPEN; $FAILED trials failed otherwise"
    [ "$FAILED" = 0 ]
    exit
fi
echo "crash harness: $TRIALS trials, $T_FILES files recovered, $T_OBJ objects and $T_ELEM elements verified, $T_REFUSED crashed or half-recovered files refused by plain HDF5 unchanged"
if [ "$FAILED" -gt 0 ]; then
    echo "crash harness: FAIL: $FAILED of $TRIALS trials failed (files kept in $WORK)" >&2
    exit 1
fi
exit 0
