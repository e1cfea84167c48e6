#!/usr/bin/env bash
# Acceptance 4 (a writer on an existing file) and 7: a first writer creates the file and
# performs the first half of the steps, then closes it; a second writer opens it with
# H5Fopen(H5F_ACC_RDWR[|H5F_ACC_SWMR_WRITE]), checks that it holds exactly the state after
# the first half, and continues. Readers check every element while the second writer
# runs. The append run's first half is written by plain sec2 without SWMR (a file from an
# ordinary program); the grow run's by the mode's writer. One reader opens the closed file
# before the second writer starts, one once it has reopened the file, one a third of the
# way into its steps.
# The finished file's h5dump equals that of the same two runs under plain sec2.
. "$(dirname "$0")/run_swmr.sh"
skip_in_nfs_mode "nfs mode covers the append and zoo workloads"

steps=$(scale 120)
half=$((steps / 2))
n=0
for workload in append grow; do
    case $workload in
    append) dsets=earray,farray:z,btree2 ;;
    grow) dsets=grow2d,grow3d:z ;;
    esac
    args="--workload $workload --dsets $dsets --steps $steps"
    rtol=
    [ "$SWMR_MODE" = legacy ] && [ "$workload" = grow ] && rtol=--tolerate-transient # see grow_shrink.sh
    new_run "$workload"
    f=$RUN/f.h5
    # shellcheck disable=SC2086
    reference "$RUN/ref.h5" $args --last-step $((half - 1))
    # shellcheck disable=SC2086
    reference "$RUN/ref.h5" $args --existing --first-step "$half"

    # first half
    if [ "$workload" = append ]; then
        # shellcheck disable=SC2086
        plain_env "$WRITER" --name w1 --file "$f" $args "${SWMR_WRITER_EXTRA[@]}" --last-step $((half - 1)) --interval-ms 0 >"$RUN/w1.log" 2>&1 ||
            { cat "$RUN/w1.log" >&2; fail "$workload: the plain sec2 first half failed"; }
        first="plain sec2"
    else
        # shellcheck disable=SC2046,SC2086
        swmr_start writer w1 --file "$f" $(writer_flags swmr) $args --last-step $((half - 1)) --interval-ms 0
        swmr_wait || fail "$workload: the first writer failed"
        first="the $SWMR_MODE writer"
    fi
    grep -q '^done 1' "$f.progress" || fail "$workload: the first writer did not close the file"

    # second half, on the existing file
    SWMR_PIDS=() SWMR_NAMES=()
    wf=$(flip $((n + 1)))
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r_pre --file "$f" $(reader_flags plain) $args $rtol
    # shellcheck disable=SC2046,SC2086
    swmr_start writer w2 --file "$f" $(writer_flags "$wf") $args --existing --first-step "$half" --interval-ms 5
    t0=$SECONDS
    until grep -q '^done 0' "$f.progress" 2>/dev/null; do # the second writer has reopened the file
        [ $((SECONDS - t0)) -lt "$SWMR_TIMEOUT" ] || fail "$workload: the second writer never reopened the file"
        swmr_any_failed && { swmr_wait; fail "$workload: a process failed"; }
        sleep 0.02
    done
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r_open --file "$f" $(reader_flags swmr) $args $rtol
    wait_step "$f" $((half + (steps - half) / 3))
    # shellcheck disable=SC2046,SC2086
    swmr_start reader r_during --file "$f" $(reader_flags plain) $args $rtol
    swmr_wait || fail "$workload: a process failed"
    swmr_compare_dump "$f" "$RUN/ref.h5"
    ok "$workload ($dsets): steps 0..$((half - 1)) by $first, $half..$((steps - 1)) by a writer reopening the file $(with_or_without "$wf"); readers verified every element; h5dump equals sec2's"
    n=$((n + 1))
done
finish
