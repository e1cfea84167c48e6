#!/usr/bin/env bash
# Acceptance 4 (readers' timing) and 7: readers started before the writer (they retry
# H5Fopen until the file exists and opens, then refresh the root group until the datasets
# appear), during the run (once the writer has announced a third of its steps: a
# handshake, not a sleep), and after the writer closed the file. Each must reach the last
# step having checked every element; in vfd mode the readers alternate between
# H5F_ACC_RDONLY and H5F_ACC_RDONLY|H5F_ACC_SWMR_READ. The finished file's h5dump equals
# sec2's.
. "$(dirname "$0")/run_swmr.sh"
skip_in_nfs_mode "readers of a local metadata copy cannot open after the writer closed (presume_posix_semantics=0); nfs mode covers the append and zoo workloads"

steps=$(scale 200)
args="--workload append --dsets earray,btree2:z,farray --steps $steps"
new_run timing
# shellcheck disable=SC2086
reference "$RUN/ref.h5" $args
f=$RUN/f.h5

# before: the file does not exist yet
# shellcheck disable=SC2046,SC2086
swmr_start reader r_before0 --file "$f" $(reader_flags plain) $args
# shellcheck disable=SC2046,SC2086
swmr_start reader r_before1 --file "$f" $(reader_flags swmr) $args
sleep 0.2 # give them time to poll for a missing file (not a handshake: they must cope either way)
# shellcheck disable=SC2046,SC2086
swmr_start writer w --file "$f" $(writer_flags swmr) $args --interval-ms 10

# during: after a third of the steps
wait_step "$f" $((steps / 3))
# shellcheck disable=SC2046,SC2086
swmr_start reader r_during0 --file "$f" $(reader_flags swmr) $args
# shellcheck disable=SC2046,SC2086
swmr_start reader r_during1 --file "$f" $(reader_flags plain) $args

# after: the writer has closed the file
wait_exit w
grep -q '^done 1' "$f.progress" || fail "the writer exited without announcing that it closed the file"
# shellcheck disable=SC2046,SC2086
swmr_start reader r_after0 --file "$f" $(reader_flags plain) $args
# shellcheck disable=SC2046,SC2086
swmr_start reader r_after1 --file "$f" $(reader_flags swmr) $args

swmr_wait || fail "a process failed"
for r in r_before0 r_before1; do
    grep -q "opened .* after [0-9]* attempts" "$RUN/$r.log" ||
        echo "  note: $r found the file on its first attempt (the writer was quicker than it)"
done
grep -h '^reader.*OK' "$RUN"/r*.log | sed 's/^/  /' | cut -c1-200
swmr_compare_dump "$f" "$RUN/ref.h5"
ok "readers started before the writer, during ($((steps / 3)) steps announced) and after it closed all saw every one of $steps steps; h5dump equals sec2's"
finish
