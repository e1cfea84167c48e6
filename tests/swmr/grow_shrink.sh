#!/usr/bin/env bash
# Acceptance 2 (and 7): two- and three-dimensional datasets (version 2 B-tree index, with
# and without deflate) grow one dimension per step, then shrink, then regrow past their
# first size; every step also overwrites one plane in place. Two concurrent readers check
# every element of every observation against the schedule: the extent is that of a step no
# earlier than the last one seen, shapes change monotonically within each phase, regrown
# regions show the fill value until rewritten, nothing goes back. Run twice: flushing with
# H5Fflush, and with H5Dflush per dataset. The finished file's h5dump equals sec2's.
. "$(dirname "$0")/run_swmr.sh"
skip_in_nfs_mode "nfs mode covers the append and zoo workloads (make check-swmr-nfs)"

steps=$(scale 120)
dsets=grow2d,grow3d,grow2d:z,grow3d:z
n=0
for flush in file dset; do
    args="--workload grow --dsets $dsets --steps $steps --flush $flush"
    wf=$(flip $n)
    rtol=
    # Legacy SWMR frees the old space of a rewritten filtered chunk at once and may reuse it
    # while a reader still follows the old index: such a read fails or decompresses garbage,
    # and the next poll is fine. Only in legacy mode are those retried, not failed.
    [ "$SWMR_MODE" = legacy ] && rtol=--tolerate-transient
    new_run "flush-$flush"
    # shellcheck disable=SC2086
    reference "$RUN/ref.h5" $args
    # shellcheck disable=SC2046,SC2086
    swmr_start writer w --file "$RUN/f.h5" $(writer_flags "$wf") $args --interval-ms 5
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r0 --file "$RUN/f.h5" $(reader_flags plain) $args $rtol
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r1 --file "$RUN/f.h5" $(reader_flags swmr) $args $rtol --poll-us 0
    swmr_wait || fail "flush $flush: a process failed"
    grep -h '^reader.*OK' "$RUN"/r*.log | sed 's/^/  /' | cut -c1-300
    swmr_compare_dump "$RUN/f.h5" "$RUN/ref.h5"
    ok "grow/shrink/regrow 2-D and 3-D ($dsets), $steps steps, $([ "$flush" = file ] && echo H5Fflush || echo "H5Dflush per dataset"), writer $(with_or_without "$wf"): 2 readers verified every observation; h5dump equals sec2's"
    n=$((n + 1))
done
finish
