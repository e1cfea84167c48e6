#!/usr/bin/env bash
# HDF5 closed and opened again in one process (H5close, H5open): the
# drivers' lower-driver property list, kept across opens, never outlives
# the library it was made in, so an application's list that gets its old
# number after H5open is neither used nor closed by the drivers -- also when
# the application's shutdown hook opens the file while HDF5 closes.
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/relib.h5
relib() { ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/relib" "$@"; }
plugins=()
for d in ${HDF5_PLUGIN_PATH//:/ }; do
    for so in "$d"/libvfd_swmr_writer.so "$d"/libvfd_swmr_reader.so; do
        [ -e "$so" ] && plugins+=("$so")
    done
done
[ ${#plugins[@]} -eq 2 ] || fail "the writer and reader plugins are not on HDF5_PLUGIN_PATH ($HDF5_PLUGIN_PATH)"
for pinned in no yes; do
    rm -f "$f"
    if [ $pinned = yes ]; then set -- "${plugins[@]}"; else set --; fi
    HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG='tick_len=1;max_lag=3' relib "$f" write "$@" 2>"$WORK/err" \
        || fail "through vfd_swmr_writer (plugins held: $pinned): $(cat "$WORK/err")"
    [ ! -e "$f.md" ] || fail "a metadata file was left behind"
    ! grep -q "infinite loop closing library" "$WORK/err" || fail "HDF5 could not close: $(cat "$WORK/err")"
    got=$("$H5DUMP" -d /d -d /e "$f" 2>&1) || fail "h5dump (sec2) cannot read the file: $got"
    grep -q "0, 1, 2, 3, 4, 5, 6, 7, 8, 9" <<<"$got" || fail "/d is not 0..9 on disk: $got"
    grep -q "100, 101, 102, 103, 104, 105, 106, 107, 108, 109" <<<"$got" \
        || fail "/e, written after H5close + H5open, is not on disk (plugins held: $pinned): $got"
    ok "the writer: H5close + H5open between two sessions, the second one's data on disk (plugins held: $pinned)"
    HDF5_DRIVER=vfd_swmr_reader relib "$f" read "$@" 2>"$WORK/err" \
        || fail "through vfd_swmr_reader (plugins held: $pinned): $(cat "$WORK/err")"
    ok "the reader: H5close + H5open between two opens (plugins held: $pinned)"
done
finish
