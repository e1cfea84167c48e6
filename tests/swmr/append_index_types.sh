#!/usr/bin/env bash
# Acceptance 1 (and 7): appends for each chunk index type -- single chunk (written in
# pieces), implicit, fixed array, extensible array, version 2 B-tree; in vfd mode also
# version 1 B-tree (libver earliest, which legacy SWMR cannot write) -- each with and
# without deflate (implicit: without only; HDF5 allows it no filter). One writer, two
# concurrent readers looping H5Drefresh/H5Dget_space/H5Dread and checking every element;
# each reader reports publish-to-visible latency. The writer's and readers' programs check
# with H5Dget_chunk_index_type that every dataset got the index type it was meant to. The
# finished file's h5dump equals that of a plain sec2 run.
. "$(dirname "$0")/run_swmr.sh"

steps=$(scale 150)
kinds="single implicit farray earray btree2"
if [ "$SWMR_MODE" != legacy ]; then
    kinds="$kinds btree1"
else
    echo "legacy SWMR: btree1 (libver earliest) skipped: H5F_ACC_SWMR_WRITE needs the latest file format"
fi
n=0
for kind in $kinds; do
    case $kind in
    implicit) dsets=implicit ;;
    *) dsets=$kind,$kind:z ;;
    esac
    extra=
    wf=$(flip $n)
    if [ "$kind" = btree1 ]; then
        extra=--earliest
        wf=plain # a version 0 superblock: no H5F_ACC_SWMR_WRITE
    fi
    args="--workload append --dsets $dsets --steps $steps $extra"
    new_run "$kind"
    # shellcheck disable=SC2086
    reference "$RUN/ref.h5" $args
    # shellcheck disable=SC2046,SC2086
    swmr_start writer w --file "$RUN/f.h5" $(writer_flags "$wf") $args --interval-ms 5
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r0 --file "$RUN/f.h5" $(reader_flags plain) $args
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r1 --file "$RUN/f.h5" $(reader_flags swmr) $args
    swmr_wait || fail "$kind: a process failed"
    swmr_compare_dump "$RUN/f.h5" "$RUN/ref.h5"
    ok "$kind ($dsets): $steps appends, writer $(with_or_without "$wf"), 2 readers saw every step; h5dump equals sec2's"
    n=$((n + 1))
done
finish
