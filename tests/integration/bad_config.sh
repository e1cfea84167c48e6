#!/usr/bin/env bash
# A bad HDF5_DRIVER_CONFIG makes H5Fcreate/H5Fopen fail with the parser's
# message on the printed HDF5 error stack, and no file is created or modified.
. "${VFDSWMR_TESTLIB:?}"

roundtrip write "$WORK/existing.h5" >/dev/null || fail "cannot make the existing file"
before=$(sha256sum < "$WORK/existing.h5")

# config | the message the error stack must contain
cases=(
    'max_lag=2|max_lag=2: out of range; expected an integer from 3 to 100000 (ticks)'
    'tick_len=fast|tick_len=fast: not a number'
    'bogus=1|unknown key "bogus"; accepted keys: tick_len,'
    'max_lag=7;max_lag=8|duplicate key "max_lag"'
    'flush_raw_data=maybe|flush_raw_data=maybe: expected 0, 1, false or true'
    'under=sec2(|under='
    'maintain_metadata_file=0|the writer must do at least one of them'
    'under=no_such_driver|cannot select the lower driver "no_such_driver"'
)
for c in "${cases[@]}"; do
    config=${c%%|*} want=${c#*|}
    for driver in vfd_swmr_writer vfd_swmr_reader; do
        # maintain_metadata_file=0 alone is a writer-only error.
        [[ $driver == vfd_swmr_reader && $config == maintain_metadata_file=0 ]] && continue
        f=$WORK/new-$RANDOM.h5
        if out=$(with_driver "$driver" "$config" roundtrip write "$f" 2>&1); then
            fail "$driver [$config]: H5Fcreate succeeded"
        fi
        [[ $out == *"HDF5-DIAG: Error detected"* ]] || fail "$driver [$config]: no HDF5 error stack printed: $out"
        [[ $out == *"$want"* ]] || fail "$driver [$config]: error stack lacks \"$want\": $out"
        [ ! -e "$f" ] || fail "$driver [$config]: a file was created"
        if out=$(with_driver "$driver" "$config" roundtrip open "$WORK/existing.h5" 2>&1); then
            fail "$driver [$config]: H5Fopen succeeded"
        fi
        [[ $out == *"$want"* ]] || fail "$driver [$config]: H5Fopen error stack lacks \"$want\": $out"
        [ "$(sha256sum < "$WORK/existing.h5")" = "$before" ] || fail "$driver [$config]: existing file modified"
        ok "$driver rejects '$config' with \"$want\""
    done
done
# HDF5's own page buffer would hold metadata back from the writer driver.
if out=$(HDF5_DRIVER=vfd_swmr_writer roundtrip pagebuf "$WORK/pb.h5" 2>&1); then
    fail "the writer accepted HDF5's page buffer"
fi
[[ $out == *"HDF5's page buffer is enabled (H5Pset_page_buffer_size)"* ]] || fail "unclear page buffer error: $out"
[ ! -e "$WORK/pb.h5.md" ] || fail "a metadata file was left behind"
ok "the writer refuses HDF5's page buffer with a clear message"

# A reader that must wait for a writer (presume_posix_semantics=0) gives up
# after open_timeout with the path it waited for; the file is untouched.
if out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG='presume_posix_semantics=0;open_timeout=5' \
    roundtrip verify "$WORK/existing.h5" 2>&1); then
    fail "the reader opened although no metadata file appeared"
fi
[[ $out == *"$WORK/existing.h5.md"* && $out == *"open_timeout=5"* ]] || fail "unclear timeout error: $out"
ok "a reader waiting for a missing metadata file times out with a clear message"

roundtrip verify "$WORK/existing.h5" >/dev/null || fail "existing file no longer verifies"
ok "existing file intact after every rejected open"
finish
