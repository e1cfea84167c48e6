#!/usr/bin/env bash
# The shared raw-data chunk cache through HDF5, in real processes:
#  - a randomized model (tests/progs/cctest.c: hyperslab writes and reads,
#    H5Dwrite_chunk/H5Dread_chunk at the same and at new addresses,
#    H5Dset_extent shrink and regrow, evictions, budget changes; HDF5's own
#    chunk cache off and on) checks every value read and the statistics'
#    identities, through vfd_chunk_cache and through vfd_swmr_writer;
#  - reads are attributed to their datasets (HDF5's API context), and a
#    registered chunk is loaded whole once for a column read -- but not when
#    it is larger than the budget (chunk_cache_max_entry above the size);
#  - without registration, read-ahead serves a column read from a few
#    growing windows, and a column rewritten in place reads new;
#  - h5dump prints the same through the cache (a budget small enough to
#    evict) as through sec2, for the standalone driver and the reader;
#  - an SWMR reader with the cache sees every row the writer appends into
#    chunks at the same address, at every step, and keeps (hits) the chunks
#    the writer no longer writes: it drops only what the raw-data write log
#    says the ticks since its last snapshot wrote;
#    -- also across whole writer sessions that begin and end between two of
#    its refreshes, and with vfd_chunk_cache below or above it;
#  - with chunk_cache_size=0 the lower driver sees exactly the calls it sees
#    without vfd_chunk_cache (vfd_fault's trace of every read and write);
#  - a legacy SWMR reader (H5F_ACC_SWMR_READ) through vfd_chunk_cache sees
#    appends and rewrites in place after H5Drefresh (no cache on such a file);
#  - H5FDctl with NULL or absurd arguments fails or does no harm;
#  - a bad chunk_cache_size is refused with a message naming it.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cc=$VFDSWMR_PROGS/cctest
run() { ${VFDSWMR_VALGRIND:-} "$cc" "$@"; }

for seed in 1 2 3; do
    out=$(with_driver vfd_chunk_cache "chunk_cache_size=256K" run "$WORK/model.h5" model $seed 2>&1) ||
        fail "vfd_chunk_cache, seed $seed: $out"
    ok "vfd_chunk_cache: $out"
done
out=$(with_driver vfd_swmr_writer "tick_len=1;max_lag=3;chunk_cache_size=256K" run "$WORK/wmodel.h5" model 4 2>&1) ||
    fail "vfd_swmr_writer: $out"
ok "vfd_swmr_writer with the cache: $out"
[ ! -e "$WORK/wmodel.h5.md" ] || fail "the writer left its metadata file"

out=$(with_driver vfd_chunk_cache "chunk_cache_size=64M" run "$WORK/attr.h5" attribution 2>&1) || fail "$out"
ok "$out"
# Without the tag, registration attributes every read, misses included.
out=$(with_driver vfd_chunk_cache "chunk_cache_size=64M;chunk_cache_tag=0" run "$WORK/attr0.h5" attribution register 2>&1) \
    || fail "chunk_cache_tag=0: $out"
ok "chunk_cache_tag=0: $out"
out=$(with_driver vfd_chunk_cache "chunk_cache_size=64M" run "$WORK/col.h5" column 2>&1) || fail "$out"
ok "$out"
# Without registration, read-ahead finds the column's chunk itself (and a
# column rewritten in place reads new through the windows); off, nothing.
for drv in vfd_chunk_cache vfd_swmr_writer; do
    out=$(with_driver $drv "tick_len=1;max_lag=3;chunk_cache_size=64M" run "$WORK/ra.h5" readahead on 2>&1) ||
        fail "$drv: $out"
    ok "$drv: $out"
done
out=$(with_driver vfd_chunk_cache "chunk_cache_size=64M;chunk_cache_readahead=0" run "$WORK/ra0.h5" readahead off 2>&1) ||
    fail "$out"
ok "$out"
# A largest entry above the budget (key, then configure): a chunk too big to
# keep is not loaded whole for each small read of it.
for drv in vfd_chunk_cache vfd_swmr_writer; do
    out=$(with_driver $drv "tick_len=1;max_lag=3;chunk_cache_size=64K;chunk_cache_max_entry=1T" run "$WORK/big.h5" bigentry 2>&1) ||
        fail "$drv: $out"
    ok "$drv: $out"
done

# HDF5's own SWMR: a reader through vfd_chunk_cache (H5F_ACC_SWMR_READ) sees
# every append into the chunk it read and every rewrite in place after
# H5Drefresh, as through sec2 -- the driver does not cache such a file
out=$(run "$WORK/legacy0.h5" legacy 2>&1) || fail "sec2: $out"
out=$(with_driver vfd_chunk_cache "chunk_cache_size=1M" run "$WORK/legacy.h5" legacy 2>&1) ||
    fail "vfd_chunk_cache: $out"
ok "vfd_chunk_cache: $out"
# the same reader through vfd_swmr_writer (read-only: a plain handle) and
# vfd_swmr_reader (no metadata file: the HDF5 file as it is), writer sec2
for drv in vfd_swmr_writer vfd_swmr_reader; do
    out=$(run "$WORK/legacy-$drv.h5" legacy $drv "chunk_cache_size=1M" 2>&1) || fail "$drv: $out"
    ok "$drv: $out"
done

# H5FDctl on the driver's handle with NULL and absurd arguments: errors or
# harmless, never a crash
for drv in vfd_chunk_cache vfd_swmr_writer; do
    out=$(with_driver $drv "tick_len=1;max_lag=3;chunk_cache_size=64K" run "$WORK/ctl.h5" ctl 2>&1) || fail "$drv: $out"
    ok "$drv: $out"
done

# h5dump: the same text through sec2 and through the cache (16 KiB: evictions)
run "$WORK/zoo.h5" make >/dev/null || fail "cctest make"
dump() { tool "$H5DUMP" "$WORK/zoo.h5" | sed -e '1s/".*"/FILE/'; }
want=$(dump) || fail "h5dump through sec2"
[ "$(printf '%s\n' "$want" | wc -l)" -gt 100 ] || fail "h5dump printed too little: $want"
for drv in vfd_chunk_cache vfd_swmr_reader; do
    got=$(with_driver $drv "chunk_cache_size=16K;chunk_cache_max_entry=8K" dump) || fail "h5dump through $drv"
    [ "$got" = "$want" ] || fail "h5dump through $drv with the cache differs: $(diff <(echo "$want") <(echo "$got") | head)"
    ok "h5dump through $drv with a 16 KiB cache prints what sec2 does ($(printf '%s\n' "$want" | wc -l) lines)"
done

# SWMR: appends into partly filled chunks (256 rows a chunk, 100 at a time)
f=$WORK/rows.h5
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=20" \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
proc_expect w "append 100" "flushed 100"
proc_expect w tick ticked # published: the reader can open
proc_start r "$VFDSWMR_PROGS/rowreader" "$f" watch --config "chunk_cache_size=1M"
proc_read r
[[ $ANSWER == ready* ]] || fail "reader not ready: $ANSWER $(proc_err r)"
for ((total = 200; total <= 1200; total += 100)); do
    proc_expect w "append 100" "flushed $total"
    proc_expect r "verify $total" "rows $total"
done
ok "a reader with the cache saw every row of 12 appends into shared chunks, each right"
proc_ask r ccstats
hits=$(sed -n 's/.* hits=\([0-9]*\) .*/\1/p' <<<"$ANSWER") inval=$(sed -n 's/.* invalidations=\([0-9]*\) .*/\1/p' <<<"$ANSWER")
[ "${hits:-0}" -gt 0 ] || fail "the reader's cache never hit across refreshes: $ANSWER"
[ "${inval:-0}" -gt 0 ] || fail "the reader's cache never dropped a rewritten chunk: $ANSWER"
ok "across refreshes the reader kept the full chunks and dropped the rewritten ones ($ANSWER)"
proc_expect w close closed
proc_end w
proc_expect r "verify 1200" "rows 1200"
proc_expect r quit closed
proc_end r
[ "$PROC_STATUS" = 0 ] || fail "reader exit status $PROC_STATUS: $(proc_err r)"

# chunk_cache_size=0: the same reads and writes reach the lower driver
for t in direct cached; do
    rm -f "$WORK/t.h5" "$WORK/$t.trace"
    if [ $t = direct ]; then
        drv=vfd_fault cfg="trace_file=$WORK/$t.trace"
    else
        drv=vfd_chunk_cache cfg="chunk_cache_size=0;under=vfd_fault(trace_file=$WORK/$t.trace)"
    fi
    with_driver $drv "$cfg" "$cc" "$WORK/t.h5" make >/dev/null || fail "cctest make through $drv"
    with_driver $drv "$cfg" tool "$H5DUMP" "$WORK/t.h5" >/dev/null || fail "h5dump through $drv"
done
[ "$(wc -l <"$WORK/direct.trace")" -gt 50 ] || fail "the trace is too short: $(cat "$WORK/direct.trace")"
cmp -s "$WORK/direct.trace" "$WORK/cached.trace" ||
    fail "chunk_cache_size=0 changed the lower driver's calls: $(diff "$WORK/direct.trace" "$WORK/cached.trace" | head)"
ok "chunk_cache_size=0: the lower driver sees the same $(wc -l <"$WORK/direct.trace") reads and writes as without the cache"

# A reader that holds no live writer's snapshot -- none ran when it opened,
# or the one it followed closed -- across whole writer sessions between two
# refreshes: each appends into the partly filled chunk the reader has cached.
f=$WORK/sessions.h5
session() { # ROWS_BEFORE: open the file, append 100 rows, close
    proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=0;max_lag=3" \
        "$VFDSWMR_PROGS/rowwriter" "$f" "$([ "$1" = 0 ] && echo create || echo open)"
    proc_read w
    [ "$ANSWER" = "ready $1" ] || fail "writer not ready: $ANSWER $(proc_err w)"
    proc_expect w "append 100" "flushed $(($1 + 100))"
    [ "${2:-}" = keep ] && return
    proc_expect w close closed
    proc_end w
}
session 0
proc_start r "$VFDSWMR_PROGS/rowreader" "$f" watch --config "chunk_cache_size=1M"
proc_read r
[[ $ANSWER == ready* ]] || fail "reader not ready: $ANSWER $(proc_err r)"
proc_expect r "verify 100" "rows 100"
session 100
proc_expect r "verify 200" "rows 200"
ok "a reader with the cache opened without a writer sees the rows a whole writer session appended"
session 200 keep
proc_expect w tick ticked
proc_expect r "verify 300" "rows 300" # follows the writer ...
proc_expect w close closed
proc_end w
proc_expect r "verify 300" "rows 300" # ... to its final snapshot
session 300
proc_expect r "verify 400" "rows 400"
ok "... and so does one whose writer closed, after the next whole session"
proc_expect r quit closed
proc_end r

# vfd_chunk_cache below the reader (under=...) hears of no writer: the reader
# empties it with its own at every new snapshot. Above the reader
# (vfd_chunk_cache with under=vfd_swmr_reader) it empties itself at every
# refresh, which on a read-only file is what a flush is.
f=$WORK/under.h5
for stack in below above; do
    session 0 keep
    proc_expect w tick ticked
    if [ $stack = below ]; then
        proc_start r "$VFDSWMR_PROGS/rowreader" "$f" watch --config "under=vfd_chunk_cache(chunk_cache_size=1M)"
    else
        proc_start r env HDF5_DRIVER=vfd_chunk_cache HDF5_DRIVER_CONFIG="chunk_cache_size=1M;under=vfd_swmr_reader" \
            "$VFDSWMR_PROGS/rowreader" "$f" watch
    fi
    proc_read r
    [[ $ANSWER == ready* ]] || fail "reader not ready: $ANSWER $(proc_err r)"
    for ((total = 200; total <= 500; total += 100)); do
        proc_expect w "append 100" "flushed $total"
        proc_expect w tick ticked
        proc_expect r "verify $total" "rows $total"
    done
    proc_expect w close closed
    proc_end w
    proc_expect r quit closed
    proc_end r
    ok "vfd_chunk_cache $stack the reader: every row of 4 appends into shared chunks seen"
done

before=$(md5sum <"$WORK/zoo.h5")
for drv in vfd_chunk_cache vfd_swmr_writer; do
    out=$(with_driver $drv "chunk_cache_size=12Q" "$VFDSWMR_PROGS/tryopen" "$WORK/zoo.h5" rdwr 2>&1) &&
        fail "$drv: 12Q accepted: $out"
    [[ $out == *"chunk_cache_size=12Q: expected a byte count"* ]] || fail "$drv: no clear message for 12Q: $out"
done
[ "$(md5sum <"$WORK/zoo.h5")" = "$before" ] || fail "a refused open changed the file"
ok "chunk_cache_size=12Q is refused by both drivers, naming the key; the file is unchanged"
finish
