#!/usr/bin/env bash
# A program that closes a file while a dataset in it stays open (HDF5 keeps
# the file open), removes it and creates a new file at the same path works
# through the writer driver as on sec2: the new file is whole and plain, its
# metadata file is its own, and nothing of the old session is left behind.
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/re.h5
recreate() { ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/recreate" "$@"; }

recreate "$f" 2>"$WORK/err.sec2" || fail "the program fails on sec2: $(cat "$WORK/err.sec2")"
want=$("$H5DUMP" -d /b "$f" | sed 1d)
rm -f "$f"

HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG='tick_len=1;max_lag=3' recreate "$f" 2>"$WORK/err" \
    || fail "through vfd_swmr_writer: $(cat "$WORK/err")"
got=$("$H5DUMP" -d /b "$f" | sed 1d) || fail "the new file does not read with plain HDF5"
[ "$got" = "$want" ] || fail "the new file differs from sec2's: $got"
if "$H5DUMP" -d /a "$f" >/dev/null 2>&1; then fail "the new file holds the old file's /a"; fi
[ ! -e "$f.md" ] || fail "a metadata file was left behind"
ok "a file removed while open and created anew at the same path works as on sec2"
finish
