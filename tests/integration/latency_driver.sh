#!/usr/bin/env bash
# The test and benchmark vfd_latency driver (tests/fault/latency.c) passes
# data through unchanged, alone and under vfd_chunk_cache, and refuses a bad
# configuration with its parser's message before touching any file. Times
# are never checked (the sleeps are small and only make the test slower).
. "${VFDSWMR_TESTLIB:?}"

for c in 'bogus=1|vfd_latency: bad configuration: unknown key "bogus"; accepted keys: read_latency_us, write_latency_us' \
    'read_latency_us=-5|vfd_latency: bad configuration: read_latency_us=-5: expected an integer from 0 to 10000000 (microseconds)' \
    'write_latency_us=1ms|vfd_latency: bad configuration: write_latency_us=1ms: expected an integer from 0 to 10000000' \
    'read_latency_us=10000001|read_latency_us=10000001: expected an integer from 0 to 10000000' \
    'read_latency_us=|read_latency_us=: expected an integer' \
    'read_latency_us=1;read_latency_us=2|vfd_latency: bad configuration: duplicate key "read_latency_us"' \
    'read_latency_us|vfd_latency: bad configuration: expected key=value at "read_latency_us"'; do
    config=${c%%|*} want=${c#*|}
    out=$(with_driver vfd_latency "$config" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/tryopen" "$WORK/bad.h5" trunc 2>&1) &&
        fail "[$config] accepted"
    [[ $out == *"$want"* ]] || fail "[$config]: no \"$want\" in: $out"
    [ ! -e "$WORK/bad.h5" ] || fail "[$config]: a file was created"
    ok "vfd_latency refuses '$config': \"$want\""
done
# ... also as the lower driver of vfd_chunk_cache (the message comes up the stack)
out=$(with_driver vfd_chunk_cache "chunk_cache_size=1M;under=vfd_latency(read_latency_us=x)" \
    "$VFDSWMR_PROGS/tryopen" "$WORK/bad.h5" trunc 2>&1) && fail "under=vfd_latency(read_latency_us=x) accepted"
[[ $out == *"vfd_latency: bad configuration: read_latency_us=x: expected an integer"* ]] ||
    fail "under=vfd_latency(read_latency_us=x): $out"
[ ! -e "$WORK/bad.h5" ] || fail "under=vfd_latency(read_latency_us=x): a file was created"
ok "vfd_chunk_cache with under=vfd_latency(read_latency_us=x) is refused with vfd_latency's message"

# Writes and reads through it: roundtrip writes a file of chunked (plain and
# deflate) datasets and verifies every element on reopening.
with_driver vfd_latency "read_latency_us=20;write_latency_us=20" roundtrip write "$WORK/rt.h5" >/dev/null ||
    fail "roundtrip write through vfd_latency"
roundtrip verify "$WORK/rt.h5" >/dev/null || fail "sec2 cannot verify the file written through vfd_latency"
with_driver vfd_chunk_cache "chunk_cache_size=64K;under=vfd_latency(read_latency_us=20)" roundtrip verify "$WORK/rt.h5" >/dev/null ||
    fail "roundtrip verify through vfd_chunk_cache over vfd_latency"
ok "a file written through vfd_latency verifies through sec2 and through vfd_chunk_cache over vfd_latency"

# h5dump prints the same through sec2, vfd_latency and vfd_chunk_cache over
# it (16 KiB: the cache evicts). h5dump falls back to other drivers when
# the selected one cannot open a file, so tryopen checks first that each
# one opens it (tryopen has no fallback).
"$VFDSWMR_PROGS/cctest" "$WORK/zoo.h5" make >/dev/null || fail "cctest make"
dump() { tool "$H5DUMP" "$WORK/zoo.h5" | sed -e '1s/".*"/FILE/'; }
want=$(dump) || fail "h5dump through sec2"
[ "$(printf '%s\n' "$want" | wc -l)" -gt 100 ] || fail "h5dump printed too little: $want"
for dc in 'vfd_latency|read_latency_us=100' \
    'vfd_chunk_cache|chunk_cache_size=16K;chunk_cache_max_entry=8K;under=vfd_latency(read_latency_us=100)'; do
    drv=${dc%%|*} config=${dc#*|}
    out=$(with_driver "$drv" "$config" "$VFDSWMR_PROGS/tryopen" "$WORK/zoo.h5" rdwr 2>&1) ||
        fail "$drv [$config] cannot open the file: $out"
    got=$(with_driver "$drv" "$config" dump) || fail "h5dump through $drv [$config]"
    [ "$got" = "$want" ] || fail "h5dump through $drv [$config] differs: $(diff <(echo "$want") <(echo "$got") | head)"
    ok "h5dump through $drv [$config] prints what sec2 does"
done
finish
