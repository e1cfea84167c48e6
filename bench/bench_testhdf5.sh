#!/usr/bin/env bash
# HDF5's own regression module for files (`testhdf5 -o file`: thousands of
# create/open-work-close sessions) on sec2 and through vfd_swmr_writer with
# its defaults, alternating runs; prints a Markdown table of the medians of
# elapsed and CPU time. The test programs come from tests/hdf5/build (HDF5
# 1.14.5's test/ directory, cached); without them it says so and exits 0.
#   bench/bench_testhdf5.sh [-n runs] DIR RESULTS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/common.sh"

runs=5
[ "${1:-}" = -n ] && { runs=$2; shift 2; }
dir=${1:?DIR} results=${2:?RESULTS}
if ! bin=$("$here/../tests/hdf5/build" 2>/dev/null | tail -n1) || [ ! -x "$bin/testhdf5" ]; then
    echo "HDF5's test programs cannot be built here (tests/hdf5/build): not measured."
    exit 0
fi
work=$dir/testhdf5
mkdir -p "$dir" "$results"
csv=$results/testhdf5.csv
echo "mode,elapsed_s,cpu_s" >"$csv"
# one MODE: run the module once in a fresh directory; prints "elapsed cpu".
one() {
    rm -rf "$work" && mkdir -p "$work"
    (
        cd "$work"
        if [ "$1" = writer ]; then export HDF5_DRIVER=vfd_swmr_writer; else unset HDF5_DRIVER; fi
        unset HDF5_DRIVER_CONFIG
        # Through the writer the module reports its tolerated file-size
        # checks (tests/hdf5/tolerated) and exits 1; only a crash counts here.
        rc=0
        /usr/bin/time -f '%e %U %S' -o "$work/../testhdf5.time" "$bin/testhdf5" -o file >/dev/null 2>&1 || rc=$?
        [ "$rc" -le 1 ]
    ) || { echo "testhdf5 -o file crashed ($1)" >&2; exit 1; }
    tail -n1 "$dir/testhdf5.time" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}
declare -A el cpu
for ((i = 0; i < runs; i++)); do
    for m in sec2 writer; do
        read -r e c < <(one $m)
        el[$m]+="$e " cpu[$m]+="$c "
        echo "$m,$e,$c" >>"$csv"
    done
done
rm -rf "$work" "$dir/testhdf5.time"
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
s_el=$(median <<<"${el[sec2]}") s_cpu=$(median <<<"${cpu[sec2]}")
w_el=$(median <<<"${el[writer]}") w_cpu=$(median <<<"${cpu[writer]}")
echo "| driver | runs | elapsed, median | user+sys CPU, median | elapsed / sec2 |"
echo "| --- | ---: | ---: | ---: | ---: |"
echo "| sec2 | $runs | $s_el s | $s_cpu s | 1.00x |"
awk -v r="$runs" -v e="$w_el" -v c="$w_cpu" -v b="$s_el" \
    'BEGIN { printf "| vfd_swmr_writer (defaults) | %d | %s s | %s s | %.2fx |\n", r, e, c, e / b }'
