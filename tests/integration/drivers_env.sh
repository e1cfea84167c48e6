#!/usr/bin/env bash
# An unmodified HDF5 program creates, writes, closes and re-reads chunked
# datasets through the writer driver, selected by environment variables only,
# on each lower driver; the file then reads back with plain sec2 and through
# the reader driver, and its data dump equals that of a file written by plain
# sec2.
. "${VFDSWMR_TESTLIB:?}"

# Every plugin carries all of the project's code it calls: no symbol of ours
# left undefined (lazy binding would hide one until the call that crashes).
IFS=: read -r -a plugin_dirs <<<"$HDF5_PLUGIN_PATH"
nplugins=0
for so in $(find "${plugin_dirs[@]}" -maxdepth 1 -name 'lib*.so'); do
    undef=$(nm -D --undefined-only "$so" | awk '$2 ~ /^vfdswmr_/ { print $2 }')
    [ -z "$undef" ] || fail "$so leaves symbols of ours undefined: $undef"
    nplugins=$((nplugins + 1))
done
[ "$nplugins" -ge 4 ] || fail "found only $nplugins plugins on HDF5_PLUGIN_PATH ($HDF5_PLUGIN_PATH)"
ok "none of the $nplugins plugins leaves a symbol of ours undefined"

roundtrip write "$WORK/ref.h5" >/dev/null || fail "plain sec2 reference run failed"
dump_data "$WORK/ref.h5" > "$WORK/ref.dump" || fail "h5dump of the reference failed"
grep -q "DATASET \"/data\"" "$WORK/ref.dump" || fail "reference dump has no /data"

for driver in vfd_swmr_writer; do
    # durable=1 over core: fsync reaches core's backing store (stack.c,
    # vfdswmr_lower_fd: core hands out its memory image unless asked for the
    # descriptor, and fsync of that number failed with EINVAL)
    for under in "" "under=sec2" "under=core" "under=sec2()" "max_lag=9; under = core ;" "durable=1;under=core"; do
        f=$WORK/$driver.${RANDOM}.h5
        out=$(with_driver "$driver" "$under" roundtrip write "$f" 2>&1) \
            || fail "$driver [$under]: write/re-read failed: $out"
        [[ $out == "verified 154200 elements"* ]] || fail "$driver [$under]: unexpected output: $out"
        out=$(roundtrip verify "$f" 2>&1) || fail "$driver [$under]: sec2 cannot read the file back: $out"
        out=$(with_driver vfd_swmr_reader "$under" roundtrip verify "$f" 2>&1) \
            || fail "[$under]: the reader driver cannot read the file back: $out"
        dump_data "$f" > "$f.dump" || fail "$driver [$under]: h5dump failed"
        cmp -s "$WORK/ref.dump" "$f.dump" || { diff "$WORK/ref.dump" "$f.dump" | head; fail "$driver [$under]: data differs from sec2's"; }
        ok "$driver, config '$under': written, re-read, read by sec2 and by the reader, same data as sec2's"
    done
done

# A driver stacked on another through a nested configuration: the reader on
# HDF5's core driver (which reads the whole file into memory).
out=$(with_driver vfd_swmr_reader "under=core;max_lag=9" roundtrip verify "$WORK/ref.h5" 2>&1) \
    || fail "reader over core failed: $out"
ok "reader stacked on core"

# The lower driver really is the one named: HDF5's log driver reports every
# write it performs (to stdout, with its default settings).
f=$WORK/log.h5
out=$(with_driver vfd_swmr_writer "under=log" roundtrip write "$f" 2>&1) || fail "under=log failed: $out"
[[ $out == *"(H5FD_MEM_DRAW) Written"* ]] || fail "under=log: the log driver reported no raw data write"
roundtrip verify "$f" >/dev/null || fail "under=log: sec2 cannot read the file back"
ok "under=log: the writes reach the log driver"

# The nested configuration reaches the lower driver, which rejects it itself.
out=$(with_driver vfd_swmr_writer "under=vfd_swmr_reader(max_lag=1)" roundtrip write "$WORK/n2.h5" 2>&1) \
    && fail "a bad nested configuration was accepted"
[[ $out == *'vfd_swmr_reader: bad configuration (HDF5_DRIVER_CONFIG): max_lag=1: out of range'* ]] \
    || fail "the lower driver's message is missing: $out"
[[ $out == *'vfd_swmr_writer: the lower driver "vfd_swmr_reader" cannot open'* ]] \
    || fail "the upper driver's message is missing: $out"
[ ! -e "$WORK/n2.h5" ] || fail "a file was created despite the bad nested configuration"
ok "nested configuration is parsed by the lower driver, both messages on the stack"

# The file a driver wrote reads back through the other driver.
with_driver vfd_swmr_reader "" roundtrip verify "$WORK/ref.h5" >/dev/null || fail "reader driver cannot read a sec2 file"
ok "reader driver reads a file written by sec2"
finish
