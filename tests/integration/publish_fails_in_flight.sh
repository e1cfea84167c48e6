#!/usr/bin/env bash
# A publish of the tick thread fails while the application goes on writing
# raw data (DESIGN section 6, "Publishing off the application's path" and
# "Publishing fails"). The writer publishes each tick to updater files too;
# their directory is removed while the writer appends as fast as it can, so
# the next publish fails -- after it has written the metadata file, fdatasync
# (flush_raw_data) included, so raw data is written while the publish is in
# flight and again after it failed. The raw-data write log must keep its
# ticks in order through that (rawlog.h; invariant builds assert it at every
# write): the writer reports the failure on later calls instead of dying,
# H5Fclose succeeds (the HDF5 file gets everything: nothing is lost) and
# removes the metadata file, and plain HDF5 then reads every row and group
# whose H5Fflush returned success.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/f.h5
mkdir "$WORK/ud"
cfg="tick_len=1;max_lag=3;flush_raw_data=1;generate_updater_files=1;updater_file_path=$WORK/ud/f"
proc_start w env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowwriter" "$f" create
proc_read w
[ "$ANSWER" = "ready 0" ] || fail "writer not ready: $ANSWER $(proc_err w)"
proc_expect w "append 25600" "flushed 25600"
# Renamed away first: the writer may create an updater file while rm empties
# the directory ("Directory not empty"); a rename takes the path in one step.
mv "$WORK/ud" "$WORK/ud.gone"
rm -rf "$WORK/ud.gone"
rows=25600 groups=0 tried=25600 failed=0
# Appends of 10 chunks and groups, until calls fail (the tick thread's
# failure is reported by the next callback), and a few calls more.
for ((i = 1; i <= 1000 && failed < 4; i++)); do
    tried=$((tried + 2560))
    proc_ask w "append 2560"
    case $ANSWER in
    "flushed $tried") rows=$tried ;;
    "failed $tried") failed=$((failed + 1)) ;;
    *) fail "append answered \"$ANSWER\": $(proc_err w)" ;;
    esac
    proc_ask w "groups 20"
    case $ANSWER in
    "flushed groups "*) [ "$failed" = 0 ] && groups=${ANSWER#flushed groups } ;;
    "failed groups "*) failed=$((failed + 1)) ;;
    *) fail "groups answered \"$ANSWER\": $(proc_err w)" ;;
    esac
done
[ "$failed" -gt 0 ] || fail "no call failed after the updater files' directory was removed"
grep -q "vfd_swmr_writer: cannot publish tick [0-9]*: cannot write updater file" "$WORK/w.err" ||
    fail "the writer's stack does not say it cannot publish: $(proc_err w)"
ok "publishing failed while the writer appended (\"cannot write updater file\"); $failed calls failed from then on"

proc_ask w close
[ "$ANSWER" = closed ] || fail "close answered \"$ANSWER\" although the HDF5 file can take everything: $(proc_err w)"
proc_end w
[ "$PROC_STATUS" = 3 ] || fail "writer exit status $PROC_STATUS, expected its own 3 (the failed calls'): $(proc_err w)"
[ ! -e "$f.md" ] || fail "the metadata file is left although the HDF5 file got everything"
ok "H5Fclose succeeded and removed the metadata file (exit status 3: the failed calls')"

out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$f" check "$rows" "$groups" 2>&1) ||
    fail "after H5Fclose, plain HDF5: $out"
[[ $out == "verified $rows rows, "*", $groups groups" ]] || fail "after H5Fclose: $out"
ok "plain HDF5 reads all $rows flushed rows and $groups groups ($out)"
finish
