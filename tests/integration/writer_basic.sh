#!/usr/bin/env bash
# The writer driver on its own: the metadata file exists exactly while a
# writer has the file open, a second writer is refused, configurations that
# cannot work are refused, and the HDF5 file is whole and plain afterwards.
. "${VFDSWMR_TESTLIB:?}"

export HDF5_DRIVER_CONFIG='tick_len=1;max_lag=3'
f=$WORK/held.h5

# Start a writer that holds the file open; talk to it through two FIFOs.
mkfifo "$WORK/in" "$WORK/out"
HDF5_DRIVER=vfd_swmr_writer ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/hold" create "$f" <"$WORK/in" >"$WORK/out" 2>"$WORK/err1" &
pid=$!
exec 3>"$WORK/in" 4<"$WORK/out"
read -r -t 60 line <&4 || fail "the writer did not get ready: $(cat "$WORK/err1")"
[ "$line" = ready ] || fail "unexpected output from the writer: $line"
[ -s "$f.md" ] || fail "no metadata file next to the HDF5 file while the writer runs"
ok "a live writer keeps a metadata file $f.md"

# A second writer on the same file is refused -- also one that creates the
# file anew (HDF5 retries a failed open with TRUNC) -- and changes nothing.
# (The live writer keeps publishing ticks into its metadata file, so that
# file is compared by identity, the HDF5 file by content.)
before=$(sha256sum < "$f") md_before=$(stat -c %i "$f.md")
for mode in open write; do
    if out=$(HDF5_DRIVER=vfd_swmr_writer roundtrip $mode "$f" 2>&1); then
        fail "a second writer ($mode) was allowed to open the file"
    fi
    [[ $out == *"another writer has \"$f\" open"* ]] \
        || fail "the second writer's error ($mode) does not say why: $out"
    [ "$(sha256sum < "$f")" = "$before" ] || fail "a refused writer ($mode) changed the HDF5 file"
    [ "$(stat -c %i "$f.md")" = "$md_before" ] || fail "a refused writer ($mode) replaced the metadata file"
done
ok "a second writer is refused with a clear message, and changes nothing"

echo close >&3
exec 3>&- 4<&-
wait $pid || fail "the writer failed at close: $(cat "$WORK/err1")"
[ ! -e "$f.md" ] || fail "the metadata file outlived the writer"
ok "the metadata file is removed at close"

# The closed file is a plain HDF5 file with the right contents.
# held_ok FILE: /held holds 0, 3, ..., 297 (h5dump without indices, one line)
want=$(seq -s ', ' 0 3 297)
held_ok() { "$H5DUMP" -y -w 0 -d /held "$1" | grep -qF "$want"; }
held_ok "$f" || fail "wrong data in the closed file: $("$H5DUMP" -d /held "$f")"
ok "the closed file reads back with plain HDF5"

# A writer on the existing file, again through the driver.
echo | HDF5_DRIVER=vfd_swmr_writer "$VFDSWMR_PROGS/hold" open "$f" >/dev/null 2>"$WORK/err2" \
    || fail "reopening the file for writing failed: $(cat "$WORK/err2")"
held_ok "$f" || fail "wrong data after the second session"
ok "an existing file reopens for writing"

# A metadata file in a directory that does not exist: clear error, file untouched.
before=$(sha256sum < "$f")
if out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="md_file_path=$WORK/no/such/dir" roundtrip open "$f" 2>&1); then
    fail "a writer without a writable metadata file path was allowed"
fi
[[ $out == *"cannot create metadata file $WORK/no/such/dir/held.h5.md"* ]] || fail "unclear error: $out"
[ "$(sha256sum < "$f")" = "$before" ] || fail "the HDF5 file changed although the open failed"
ok "an unwritable metadata file path is refused and the file left intact"

# The metadata file name and directory can be chosen.
mkdir "$WORK/mdd"
out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="md_file_path=$WORK/mdd;md_file_name=x.md;keep_metadata_file=1" \
    roundtrip write "$WORK/named.h5" 2>&1) || fail "md_file_path/md_file_name: $out"
[ -s "$WORK/mdd/x.md" ] || fail "keep_metadata_file=1 did not keep $WORK/mdd/x.md"
ok "md_file_path, md_file_name and keep_metadata_file are honoured"
finish
