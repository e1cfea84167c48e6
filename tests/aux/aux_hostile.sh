#!/usr/bin/env bash
# vfd_swmr_aux and the writer's updater files against a hostile directory,
# with real processes:
#
#   refused   a FIFO or a directory where the next updater is expected, a
#             FIFO or a symbolic link at the local metadata file, a link, a
#             dangling link or a FIFO at the log file: exit 1 at once with
#             the exact message; nothing is created, no link is followed
#   links     symbolic links planted at every predictable name -- the
#             writer's old temporary names <ud_base>.<n>.tmp, the daemon's
#             old <md_file>.aux.tmp and others, half of them dangling: a
#             writer, the daemon and a reader run to the end; every link and
#             every link target is as it was, nothing else is left behind
#   tail      a valid updater with a sparse 2 GiB tail: exit 1, "trailing
#             bytes" with the exact sizes, the local file byte for byte as it
#             was, and the daemon's peak memory (/usr/bin/time -f %M) small
#
# `timeout` only guards against a hang (status 124 fails the test); the
# processes are synchronised through their logs and exit statuses.
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
. "${VFDSWMR_TESTLIB:?}"
: "${VFDSWMR_AUX:?run through make check: VFDSWMR_AUX names the built vfd_swmr_aux}"
# A failing check leaves no process of this test running.
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT

groups=8 per_group=25 batch=5
total=$((groups * per_group))
if [ -n "${VFDSWMR_VALGRIND:-}" ]; then
    lag=300 guard=600 mem_kib=$((1024 * 1024)) # valgrind's own memory counts too
else
    lag=7 guard=60 mem_kib=$((64 * 1024))
fi

new_case() { # new_case NAME: sets C, MD (the local metadata file) and UD (the updater base)
    C=$WORK/$1
    mkdir -p "$C/nfs" "$C/local"
    MD=$C/local/f.h5.md UD=$C/nfs/f.h5.ud
    echo precious >"$C/victim"
}
# refused WHAT WANT [aux arguments]: the daemon exits 1 at once with exactly WANT on stderr.
refused() {
    local what=$1 want=$2 rc=0
    shift 2
    timeout "$guard" "${VFDSWMR_AUX_RUNNER[@]}" "$@" >"$C/out" 2>"$C/err" || rc=$?
    [ $rc -ne 124 ] || fail "$what: vfd_swmr_aux hung"
    [ $rc -eq 1 ] || fail "$what: exit status $rc: $(cat "$C/err")"
    printf '%s\n' "vfd_swmr_aux: error: $want" | cmp -s - "$C/err" || fail "$what: $(cat "$C/err")"
    [ "$(cat "$C/victim")" = precious ] || fail "$what: a link target was changed"
}
# The daemon, under valgrind with make check-valgrind; run it directly (not
# from a shell function) so that $! is its process.
# shellcheck disable=SC2206
AUX=(${VFDSWMR_VALGRIND:-} "$VFDSWMR_AUX" --tick_len 1 --max_lag "$lag")
VFDSWMR_AUX_RUNNER=("${AUX[@]}")

# ---- refused -----------------------------------------------------------------
new_case refused
mkfifo "$UD.0"
refused "FIFO updater" "updater file $UD.0 is not a regular file (a FIFO); the local metadata file $MD stays not created" \
    "$MD" "$UD"
[ ! -e "$MD" ] || fail "FIFO updater: a local metadata file was created"
rm "$UD.0"
mkdir "$UD.0"
refused "directory updater" \
    "updater file $UD.0 is not a regular file (a directory); the local metadata file $MD stays not created" "$MD" "$UD"
rmdir "$UD.0"
ok "refused: a FIFO or a directory where the next updater is expected: exit 1 at once, named"

mkfifo "$MD"
refused "FIFO local file" "the local metadata file $MD is not a regular file (a FIFO)" "$MD" "$UD"
rm "$MD"
ln -s "$C/victim" "$MD"
refused "linked local file" \
    "the local metadata file $MD is a symbolic link; vfd_swmr_aux does not follow links to the files it writes" "$MD" "$UD"
rm "$MD"
ok "refused: a FIFO or a symbolic link at the local metadata file"

log=$C/aux.log
for kind in link dangling fifo; do
    case $kind in
    link) ln -s "$C/victim" "$log" ;;
    dangling) ln -s "$C/absent" "$log" ;;
    fifo) mkfifo "$log" ;;
    esac
    if [ $kind = fifo ]; then
        want="the log file $log is not a regular file (a FIFO)"
    else
        want="the log file $log is a symbolic link; vfd_swmr_aux does not follow links to the files it writes"
    fi
    refused "log file: $kind" "$want" --log_file "$log" "$MD" "$UD"
    [ ! -e "$C/absent" ] || fail "log file: $kind: the dangling link's target was created"
    rm "$log"
done
[ ! -e "$MD" ] || fail "log file: a local metadata file was created"
ok "refused: a link, a dangling link or a FIFO at the log file; no target created or changed"

# ---- links --------------------------------------------------------------------
new_case links
# Links at the names earlier versions used or a guess might use; odd ones dangling.
planted=()
for n in $(seq 0 400); do planted+=("$UD.$n.tmp"); done
planted+=("$MD.aux.tmp" "$MD.tmp" "$C/nfs/f.h5.md.tmp" "$C/nfs/f.h5.tmp")
i=0
for p in "${planted[@]}"; do
    if ((i++ % 2)); then ln -s "$C/absent" "$p"; else ln -s "$C/victim" "$p"; fi
done
BASE="tick_len=1;max_lag=$lag"
HDF5_DRIVER=vfd_swmr_writer \
    HDF5_DRIVER_CONFIG="$BASE;maintain_metadata_file=0;generate_updater_files=1;updater_file_path=$UD;updater_keep_ticks=100000" \
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/evict" write "$C/nfs/f.h5" $groups $per_group $batch >"$C/w" 2>&1 &
W=$!
HDF5_DRIVER=vfd_swmr_reader \
    HDF5_DRIVER_CONFIG="$BASE;md_file_path=$C/local;presume_posix_semantics=0;open_timeout=3000" \
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/evict" read "$C/nfs/f.h5" $groups $per_group $batch >"$C/r" 2>&1 &
R=$!
"${AUX[@]}" --log_file "$C/aux.log" "$MD" "$UD" >"$C/aux.out" 2>&1 &
A=$!
wait "$W" || fail "links: the writer failed: $(cat "$C/w")"
wait "$R" || fail "links: the reader failed: $(tail -n 20 "$C/r")"
wait "$A" || fail "links: vfd_swmr_aux failed: $(cat "$C/aux.out")"
grep -q "all $total datasets verified" "$C/r" || fail "links: the reader did not verify everything"
grep -q ' final sequence ' "$C/aux.log" || fail "links: the daemon did not apply the FINAL updater"
nud=$(find "$C/nfs" -maxdepth 1 -type f -name 'f.h5.ud.*' | wc -l)
[ "$nud" -gt 5 ] || fail "links: only $nud updater files"
[ "$(cat "$C/victim")" = precious ] || fail "links: the link target was changed"
[ ! -e "$C/absent" ] || fail "links: a dangling link's target was created"
i=0
for p in "${planted[@]}"; do
    if ((i++ % 2)); then t=$C/absent; else t=$C/victim; fi
    [ "$(readlink "$p")" = "$t" ] || fail "links: $p is no longer the link planted there"
done
left=$(find "$C" -name '*.tmp' -type f)
[ -z "$left" ] || fail "links: temporary files left behind: $left"
[ ! -e "$MD" ] || fail "links: the local metadata file is still there after FINAL"
ok "links: ${#planted[@]} links planted at predictable names: $nud updaters written and applied, the reader verified all $total datasets, no link followed"

# ---- tail ------------------------------------------------------------------------
new_case tail
for n in 0 1 2 3 4 5; do cp "$WORK/links/nfs/f.h5.ud.$n" "$C/stage.$n"; done
for n in 0 1 2 3 4; do mv "$C/stage.$n" "$UD.$n"; done
"${AUX[@]}" --log_file "$C/aux.1.log" "$MD" "$UD" >"$C/aux.1.out" 2>&1 &
A=$!
for ((i = 0; i < guard * 100; i++)); do
    grep -q ' applied seq=4 ' "$C/aux.1.log" 2>/dev/null && break
    sleep 0.01
done
grep -q ' applied seq=4 ' "$C/aux.1.log" || fail "tail: the daemon did not apply updaters 0 to 4"
kill -TERM "$A"
wait "$A" || fail "tail: SIGTERM: exit status $?"
before=$(sha256sum <"$MD")
len=$(stat -c %s "$C/stage.5")
truncate -s 2G "$C/stage.5"
mv "$C/stage.5" "$UD.5"
tick=$(od -An -t u8 -j 20 -N 8 "$MD" | tr -d ' ')
want="updater file $UD.5 is damaged: trailing bytes after the updater's last image (the file has 2147483648 bytes, the updater ends at byte $len); the local metadata file $MD stays at tick $tick"
if [ -x /usr/bin/time ]; then
    VFDSWMR_AUX_RUNNER=(/usr/bin/time -f %M -o "$C/maxrss" "${AUX[@]}")
fi
refused "2 GiB tail" "$want" --log_file "$C/aux.2.log" "$MD" "$UD"
[ "$(sha256sum <"$MD")" = "$before" ] || fail "tail: the local metadata file changed"
if [ -x /usr/bin/time ]; then
    kib=$(tail -n 1 "$C/maxrss")
    [ "$kib" -lt "$mem_kib" ] || fail "tail: vfd_swmr_aux peaked at $kib KiB (bound $mem_kib KiB)"
    ok "tail: a valid updater with a 2 GiB tail: exit 1, trailing bytes named, local file unchanged, peak $kib KiB"
else
    ok "tail: a valid updater with a 2 GiB tail: exit 1, trailing bytes named, local file unchanged (no /usr/bin/time: peak memory not measured)"
fi
finish
