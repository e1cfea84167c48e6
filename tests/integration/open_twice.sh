#!/usr/bin/env bash
# One process, one file, opened twice: through the writer and through the
# reader it works as on sec2 (HDF5 shares the file it finds open through
# the driver's cmp), and H5Fcreate(TRUNC) of the open file fails as there.
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/twice.h5
twice() { ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/twice" "$@"; }
twice "$f" write 2>"$WORK/err" || fail "on sec2: $(cat "$WORK/err")"
want=$("$H5DUMP" -d /d "$f" | sed 1d)
rm -f "$f"
HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG='tick_len=1;max_lag=3' twice "$f" write 2>"$WORK/err" \
    || fail "through vfd_swmr_writer: $(cat "$WORK/err")"
[ "$("$H5DUMP" -d /d "$f" | sed 1d)" = "$want" ] || fail "the file differs from sec2's"
[ ! -e "$f.md" ] || fail "a metadata file was left behind"
ok "the writer: the same file opened twice in one process is shared, as on sec2"
HDF5_DRIVER=vfd_swmr_reader twice "$f" read 2>"$WORK/err" || fail "through vfd_swmr_reader: $(cat "$WORK/err")"
ok "the reader: the same file opened twice in one process"
finish
