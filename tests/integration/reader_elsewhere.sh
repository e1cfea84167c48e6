#!/usr/bin/env bash
# A reader that reaches a live writer's file by another name -- a symbolic
# link, a hard link -- or with another md_file_path than the writer's finds
# no metadata file where it looks. It used to read the HDF5 file as it sits
# on disk (inconsistent while the writer runs: HDF5 errors, or an old state
# without a word). Now the writer's lock on the HDF5 file, with the writer's
# seal on its superblock, tells it a writer runs: its open fails at once,
# saying it reached the file by another name or configuration and what to
# do; the file is unchanged. Through the writer's own name and
# configuration it reads the writer's rows; once the writer has closed,
# every name reads the file -- also while another process still holds the
# writer's lock (a process the writer forked keeps it with the descriptor):
# the seal is gone.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/f.h5
cfg="tick_len=1;max_lag=3"
mkdir "$WORK/elsewhere" "$WORK/other"
ln -s "$f" "$WORK/link.h5"
writer_start w "$cfg" "$f"
proc_expect w "append 500" "flushed 500"
proc_expect w "groups 3" "flushed groups 3"
ln "$f" "$WORK/hard.h5"
check_rows "$f" vfd_swmr_reader "$cfg" 500 3
ok "through the writer's name and configuration the reader reads the 500 flushed rows and 3 groups"

# name | configuration | the metadata file the reader looks for
cases=(
    "$WORK/link.h5|$cfg|$WORK/link.h5.md"
    "$WORK/hard.h5|$cfg|$WORK/hard.h5.md"
    "$f|$cfg;md_file_path=$WORK/elsewhere|$WORK/elsewhere/f.h5.md"
)
for c in "${cases[@]}"; do
    IFS='|' read -r name config md <<<"$c"
    cp "$f" "$WORK/before"
    out=$(HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$config" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowreader" "$name" check 500 3 2>&1) && fail "a reader through $name ($config) read the live file: $out"
    want="vfd_swmr_reader: \"$name\" is open for writing by a vfd_swmr_writer (it holds the file's writer lock), but there is no metadata file $md: this reader reached the file by another name (a symbolic or hard link, another path) or with another md_file_path/md_file_name than its writer's"
    [[ $out == *"$want"* ]] || fail "a reader through $name ($config) refused without saying why: $out"
    cmp -s "$f" "$WORK/before" || fail "the refused reader through $name changed the file"
    [ ! -e "$md" ] || fail "the refused reader made $md"
    ok "a reader through $(basename "$name") (configuration \"$config\"): refused at once (\"is open for writing by a vfd_swmr_writer ... no metadata file $(basename "$md")\"); nothing changed"
done

proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer exit status $PROC_STATUS: $(proc_err w)"
for name in "$f" "$WORK/link.h5" "$WORK/hard.h5"; do
    check_rows "$name" vfd_swmr_reader "$cfg" 500 3
    check_rows "$name" plain "" 500 3
done
check_rows "$f" vfd_swmr_reader "$cfg;md_file_path=$WORK/other" 500 3
ok "the writer closed: through every name and configuration, vfd_swmr_reader and plain HDF5 read the 500 rows and 3 groups"
proc_start l ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/lockmd" --hdf5 "$f"
proc_read l
[ "$ANSWER" = locked ] || fail "lockmd --hdf5: $ANSWER $(proc_err l)"
check_rows "$WORK/link.h5" vfd_swmr_reader "$cfg" 500 3
proc_expect l "" released
proc_end l
ok "the writer's lock held by another process after the close (a forked child's): the reader through the link reads the 500 rows and 3 groups"
finish
