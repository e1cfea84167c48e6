#!/usr/bin/env bash
# Acceptance 4 (two files open in one writer process) and 7: one writer process writes two
# files in lockstep, each with its own values (the second file's seed is the first's + 1, so
# data landing in the wrong file is caught); two readers per file check every element.
# Both finished files' h5dump equal those of the same program under plain sec2.
. "$(dirname "$0")/run_swmr.sh"
skip_in_nfs_mode "nfs mode covers the append and zoo workloads"

steps=$(scale 150)
args="--workload append --dsets earray,btree2:z,single --steps $steps"
n=0
for wf in swmr plain; do
    [ "$SWMR_MODE" = legacy ] && [ $n = 1 ] && break # legacy SWMR: only with H5F_ACC_SWMR_WRITE
    new_run "$wf"
    a=$RUN/a.h5 b=$RUN/b.h5
    # shellcheck disable=SC2086
    reference "$RUN/ref_a.h5" $args --file2 "$RUN/ref_b.h5"
    # shellcheck disable=SC2046,SC2086
    swmr_start writer w --file "$a" --file2 "$b" $(writer_flags "$wf") $args --interval-ms 5
    # shellcheck disable=SC2046,SC2086
    swmr_start reader ra0 --file "$a" $(reader_flags plain) $args --seed 1
    # shellcheck disable=SC2046,SC2086
    swmr_start reader ra1 --file "$a" $(reader_flags swmr) $args --seed 1
    # shellcheck disable=SC2046,SC2086
    swmr_start reader rb0 --file "$b" $(reader_flags swmr) $args --seed 2
    # shellcheck disable=SC2046,SC2086
    swmr_start reader rb1 --file "$b" $(reader_flags plain) $args --seed 2
    swmr_wait || fail "a process failed"
    swmr_compare_dump "$a" "$RUN/ref_a.h5"
    swmr_compare_dump "$b" "$RUN/ref_b.h5"
    cmp -s "$a.dump" "$b.dump" && fail "the two files hold the same data: the seeds did not apply"
    ok "two files written by one process $(with_or_without "$wf"), $steps steps each; 2 readers per file verified every element; both h5dumps equal sec2's"
    n=$((n + 1))
done
finish
