#!/usr/bin/env bash
# A metadata file that is not a regular file -- a FIFO (nobody at its other
# end), a directory, a link (to a device; no metadata file is used through a
# link) -- fails the reader's H5Fopen at once, with "<path> is not a regular
# file" (a link: "is a symbolic link (to ...)") on the HDF5 error stack, both when the
# reader takes an absent metadata file for "no writer" (presume_posix_semantics=1)
# and when it would wait for one (=0, open_timeout=300 s). The HDF5 file is
# untouched. `timeout` only guards against a hang (it would end the test with
# status 124, a failure); nothing here waits on it.
. "${VFDSWMR_TESTLIB:?}"

if [ -n "${VFDSWMR_VALGRIND:-}" ]; then guard=300; else guard=20; fi
f=$WORK/f.h5
roundtrip write "$f" >/dev/null || fail "cannot make the HDF5 file"
before=$(sha256sum <"$f")

# kind | how to make it | what the message says
cases=(
    'FIFO|mkfifo "$f.md"|the metadata file $f.md is not a regular file (a FIFO)'
    'directory|mkdir "$f.md"|the metadata file $f.md is not a regular file (a directory)'
    'link to /dev/null|ln -s /dev/null "$f.md"|metadata file $f.md is a symbolic link (to /dev/null): '
)
for c in "${cases[@]}"; do
    IFS='|' read -r kind make says <<<"$c"
    eval "$make"
    eval "says=\"$says\""
    for posix in 1 0; do
        config="presume_posix_semantics=$posix;open_timeout=3000"
        rc=0
        out=$(timeout "$guard" env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$config" \
            ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/roundtrip" verify "$f" 2>&1) || rc=$?
        [ $rc -ne 124 ] || fail "$kind, presume_posix_semantics=$posix: the reader hung in H5Fopen"
        [ $rc -eq 1 ] || fail "$kind, presume_posix_semantics=$posix: exit status $rc: $out"
        [[ $out == *"HDF5-DIAG: Error detected"* ]] || fail "$kind: no HDF5 error stack: $out"
        want="vfd_swmr_reader: $says"
        [[ $out == *"$want"* ]] || fail "$kind, presume_posix_semantics=$posix: the stack lacks \"$want\": $out"
        [ "$(sha256sum <"$f")" = "$before" ] || fail "$kind: the HDF5 file changed"
        ok "a metadata file that is a $kind fails the reader's open at once (presume_posix_semantics=$posix)"
    done
    rm -rf "$f.md"
done
roundtrip verify "$f" >/dev/null || fail "the HDF5 file no longer verifies"
finish
