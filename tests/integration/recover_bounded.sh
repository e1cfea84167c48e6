#!/usr/bin/env bash
# Crash recovery in bounded memory and time, on crafted metadata files whose
# index states far more than the file holds (tests/progs/craftmd: images that
# are holes, checksums of zeros). vfd_swmr_recover is a fresh process each
# time, its peak resident size taken by tests/progs/peakrss (wait4):
#   index   an index of 2^21 entries (80 MiB) whose last image is damaged:
#           refused with the damaged page named, nothing written to the HDF5
#           file, and the peak no more than 16 MiB above a recovery of 16
#           entries (it read the whole index into memory, then decoded it:
#           about 170 MiB);
#   images  8 images of 64 MiB, the last damaged: refused the same way, the
#           peak as bounded (images are read in pieces of 1 MiB);
#   whole   2^16 entries (2.5 MiB of index), every image valid: recovered,
#           every one of the 2^16 pages written back, as bounded.
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/f.h5
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"

# recover N LEN good|bad: a fresh file and crafted metadata file; runs the
# recovery; OUT, RC and KIB (its peak resident size) for the caller.
recover() {
    rm -f "$f" "$f.md"
    : >"$f"
    "$VFDSWMR_PROGS/craftmd" "$f" "$f.md" "$1" "$2" "$3" >/dev/null || fail "craftmd $*"
    BLOCKS=$(stat -c %b "$f")
    OUT=$("$VFDSWMR_PROGS/peakrss" "$WORK/maxrss" ${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" "$f" 2>&1)
    RC=$?
    KIB=$(tail -n 1 "$WORK/maxrss")
}

recover 16 4096 good
[ "$RC" = 0 ] || fail "baseline: a recovery of 16 valid entries failed ($RC): $OUT"
base=$KIB

# refused N LEN: the last of N images is damaged
refused() {
    local want="metadata file $f.md is damaged: the image of HDF5 page $((1 + ($1 - 1) * ($2 / 4096))) (tick 5): checksum mismatch (torn write or damage); nothing was written to the HDF5 file"
    recover "$1" "$2" bad
    [ "$RC" = 1 ] || fail "$1 x $2: exit $RC, not 1: $OUT"
    [[ $OUT == *"$want"* ]] || fail "$1 x $2: the refusal does not say \"$want\": $OUT"
    [ "$(stat -c %b "$f")" = "$BLOCKS" ] || fail "$1 x $2: the refused recovery wrote to $f"
    [ $((KIB - base)) -le 16384 ] || fail "$1 x $2: peak resident size $KIB KiB, $((KIB - base)) KiB above the baseline"
    ok "$1 images of $2 bytes, the last damaged: refused, nothing written, peak $((KIB - base)) KiB above the baseline ($base KiB)"
}
refused $((1 << 21)) 4096
refused 8 $((64 << 20))

recover $((1 << 16)) 4096 good
[ "$RC" = 0 ] || fail "2^16 valid entries: exit $RC: $OUT"
[[ $OUT == *"65536 pages (268435456 bytes of metadata) written back"* ]] || fail "2^16 valid entries: $OUT"
[ $((KIB - base)) -le 16384 ] || fail "2^16 valid entries: peak $KIB KiB, $((KIB - base)) KiB above the baseline"
ok "2^16 valid entries recovered: every page written back, peak $((KIB - base)) KiB above the baseline"
