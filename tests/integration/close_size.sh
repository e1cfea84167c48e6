#!/usr/bin/env bash
# Files close at sec2's size. A program creates a file with a 1 MiB
# dataset and a small one, flushes, deletes the big one and closes: HDF5
# frees the space at the end of the file. During the session the writer
# keeps its end-of-allocation high-water mark while a registered reader
# may still read there; at close, once no reader can, the file takes
# HDF5's own end of allocation: the same size as on sec2, with no reader
# and with a reader attached during the session, and plain HDF5 reads it.
# With persistent free-space managers the close succeeds at sec2's size,
# by default (no reader: the freed space's old bytes are kept in a
# republished snapshot and the space goes back to HDF5 at once,
# vfd-swmr-writer/eoa.c keep_old) and with the versioned zone.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

cfg="tick_len=1;max_lag=3"
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" write "$WORK/sec2.h5" 2>&1) || fail "sec2: $out"
[[ $out =~ closed\ ([0-9]+) ]] || fail "sec2: $out"
want=${BASH_REMATCH[1]}
[ "$want" -lt 100000 ] || fail "sec2's file is $want bytes: the program did not free the space"

out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/eoaclose" write "$WORK/w.h5" 2>&1) || fail "writer: $out"
[[ $out =~ closed\ ([0-9]+) ]] || fail "writer: $out"
[ "${BASH_REMATCH[1]}" = "$want" ] || fail "through vfd_swmr_writer the file closed at ${BASH_REMATCH[1]} bytes, on sec2 at $want"
[ "$(stat -c %s "$WORK/w.h5")" = "$want" ] || fail "the file is $(stat -c %s "$WORK/w.h5") bytes"
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" read "$WORK/w.h5" </dev/null 2>&1) || fail "plain HDF5: $out"
ok "no reader: the file closed at $want bytes, as on sec2, and plain HDF5 reads it"

proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/eoaclose" write "$WORK/r.h5" wait
proc_read w
[ "$ANSWER" = flushed ] || fail "writer: $ANSWER $(proc_err w)"
proc_start r env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/eoaclose" read "$WORK/r.h5"
proc_read r
[ "$ANSWER" = opened ] || fail "reader: $ANSWER $(proc_err r)"
proc_ask w go
[ "$ANSWER" = "closed $want" ] || fail "with a reader attached the writer answered \"$ANSWER\", on sec2 the file closed at $want bytes: $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
proc_ask r go
proc_end r
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" read "$WORK/r.h5" </dev/null 2>&1) || fail "plain HDF5: $out"
ok "a reader attached during the session: the file closed at $want bytes, as on sec2, and plain HDF5 reads it"

# Persistent free-space managers: HDF5 settles them before the last flush of
# H5Fclose and fails the close if they change after it, which a change of
# the end of allocation HDF5 sees would do (two datasets deleted at the end
# of the file, the second freed while the first's space was kept for
# readers).
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" persist "$WORK/psec2.h5" 2>&1) || fail "sec2: $out"
psec2=$(stat -c %s "$WORK/psec2.h5")
for vm in 0 16M; do
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;versioned_max=$vm" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/eoaclose" persist "$WORK/p$vm.h5" 2>&1) || fail "persistent free space: the writer failed: $out"
    [[ $out =~ closed\ ([0-9]+) ]] || fail "writer: $out"
    size=${BASH_REMATCH[1]}
    out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" read "$WORK/p$vm.h5" </dev/null 2>&1) || fail "plain HDF5: $out"
    [ "$size" = "$psec2" ] || fail "persistent free space, versioned_max=$vm: the file closed at $size bytes, sec2's at $psec2"
    ok "persistent free-space managers, versioned_max=$vm: the close succeeds at $size bytes (sec2: $psec2), and plain HDF5 reads it"
done

# MIB MiB deleted after a flush published them, then 1 MiB of new raw data,
# no reader. 8 MiB: the old bytes are kept in a republished snapshot and
# the new data goes where the old was, as on sec2, straight into the file
# (a program reading it there, as PyTables' Blosc2 path does, finds it).
# 32 MiB, more than the writer keeps at the free (VFDSWMR_KEEP_OLD_MAX):
# with versioned_max=64M the new data goes there too but is kept in the
# writer's memory until no reader can read the old bytes; with
# versioned_max=0, the default, the old bytes the new data's block covers
# are kept when HDF5 allocates it (eoa.c keep_at_alloc), so it goes there,
# straight into the file, and the file closes at sec2's size. Plain HDF5
# reads each.
for case in "8 0" "32 64M" "32 0"; do
    read -r mib vm <<<"$case"
    out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" reuse "$WORK/usec2.h5" "$mib" 2>&1) || fail "sec2: $out"
    usec2=$(stat -c %s "$WORK/usec2.h5")
    [ "$usec2" -lt $((3 << 20)) ] || fail "sec2's file is $usec2 bytes: the new data did not reuse the freed space"
    out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg;versioned_max=$vm;log_file_path=$WORK/u$mib$vm.log" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/eoaclose" reuse "$WORK/u$mib$vm.h5" "$mib" 2>&1) || fail "$mib MiB, versioned_max=$vm: the writer failed: $out"
    [[ $out =~ closed\ ([0-9]+) ]] || fail "writer: $out"
    size=${BASH_REMATCH[1]}
    disk=$(sed -n 's/^on disk //p' <<<"$out")
    out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" read "$WORK/u$mib$vm.h5" </dev/null 2>&1) || fail "plain HDF5: $out"
    if [ "$vm" = 0 ]; then
        # raw data is in the file at once, for programs that read it there
        [ "$disk" = right ] || fail "$mib MiB, versioned_max=0: the new data is $disk in the file before close"
    fi
    [ "$size" = "$usec2" ] || fail "$mib MiB, versioned_max=$vm: the file closed at $size bytes, sec2's at $usec2"
    if [ "$mib$vm" = 320 ]; then
        grep -q ' kept_at_alloc ' "$WORK/u$mib$vm.log" || fail "32 MiB, versioned_max=0: not kept at the allocation"
    fi
    ok "$mib MiB freed and 1 MiB written, versioned_max=$vm: the new data is ${disk} in the file before close; the file closes at $size bytes (sec2: $usec2), plain HDF5 reads it"
done
finish
