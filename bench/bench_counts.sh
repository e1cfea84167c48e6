#!/usr/bin/env bash
# System calls per operation, sec2 against the drivers (strace -f -c), for
# the overheads docs/BENCHMARKS.md explains: what each driver adds to a read
# of a closed file, a read beside a live writer, a short write session and
# an append round. Counts, not times: they do not depend on the machine's
# load. Uses bench_ops (same directory as this script's BENCH_OPS).
#   bench/bench_counts.sh BENCH_OPS DIR
set -euo pipefail
ops=$1
dir=$2
mkdir -p "$dir"
if ! command -v strace >/dev/null 2>&1; then
    echo "strace is not installed: no counts taken (apt-get install strace)."
    exit 0
fi
tab=$(mktemp)
trap 'rm -f "$tab" "$dir"/counts.*' EXIT

# count LABEL CONFIG PER ENV... -- CMD...: one table row, calls divided by PER.
count() {
    local label=$1 config=$2 per=$3
    shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" strace -f -c -o "$dir/counts.txt" "$@" >/dev/null
    awk -v label="$label" -v config="$config" -v per="$per" '
        $1 ~ /^[0-9.]+$/ && NF >= 5 {
            name = $NF; calls = $4
            if (name == "total") next
            if (name ~ /^(pread64|preadv|read)$/) r += calls
            else if (name ~ /^(pwrite64|pwritev|write)$/) w += calls
            else if (name ~ /^(openat|open|close)$/) o += calls
            else if (name ~ /stat/) s += calls
            else if (name ~ /^(fcntl|flock)$/) l += calls
            else if (name ~ /xattr/) x += calls
            else if (name ~ /^(rename|link|unlink|ftruncate|getdents64|fsync|fdatasync)$/) n += calls
            else if (name ~ /^(clone3|futex|mmap|munmap|madvise|brk|mprotect|rt_sigprocmask|set_robust_list|rseq)$/) m += calls
            else z += calls
            t += calls
        }
        END { printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
              label, config, t / per, r / per, w / per, o / per, s / per, l / per, x / per, n / per, m / per, z / per }
    ' "$dir/counts.txt" >> "$tab"
}

small=$dir/counts.small.h5
apf=$dir/counts.400.h5
cyc=$dir/counts.cycle.h5
HDF5_DRIVER= "$ops" make "$small"
count "read a closed file (per pass)" sec2 5 -- "$ops" read "$small" 5
count "read a closed file (per pass)" vfd_swmr_reader 5 HDF5_DRIVER=vfd_swmr_reader -- "$ops" read "$small" 5
fifo=$dir/counts.fifo
rm -f "$fifo"
mkfifo "$fifo"
HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=50;max_lag=3" "$ops" idle "$small" <"$fifo" >"$dir/counts.idle" &
idle=$!
exec 9>"$fifo"
for _ in $(seq 600); do grep -q open "$dir/counts.idle" 2>/dev/null && break; sleep 0.05; done
count "read beside an idle writer (per pass)" vfd_swmr_reader 5 HDF5_DRIVER=vfd_swmr_reader -- "$ops" read "$small" 5
exec 9>&-
wait "$idle"
for mode in cyclenew cycle; do
    label="create a new file, write, flush, close (per session)"
    [ $mode = cyclenew ] || label="the same over the previous file (H5F_ACC_TRUNC, h5py's \"w\") (per session)"
    count "$label" sec2 50 -- "$ops" $mode "$cyc" 50
    count "$label" vfd_swmr_writer 50 HDF5_DRIVER=vfd_swmr_writer \
        HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" -- "$ops" $mode "$cyc" 50
done
for cfg in sec2 "tick_len=1;max_lag=3" "tick_len=1;max_lag=3;publish=tick"; do
    HDF5_DRIVER= "$ops" make400 "$apf"
    if [ "$cfg" = sec2 ]; then
        count "400 appends and a flush (per round)" sec2 20 -- "$ops" append "$apf" 20
    else
        label="vfd_swmr_writer, publish=flush"
        [ "${cfg%publish=tick}" = "$cfg" ] || label="vfd_swmr_writer, publish=tick"
        count "400 appends and a flush (per round)" "$label" 20 \
            HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$cfg" -- "$ops" append "$apf" 20
    fi
done
echo "| operation | driver | all | reads | writes | open/close | stat | fcntl/flock | xattr | rename/link/unlink/truncate/dir | thread/memory | other |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
cat "$tab"
