#!/usr/bin/env bash
# reorder.sh STAGE_BASE DEST_DIR DONE_FILE [SEED]
#
# A slow, unordered file transport for the vfd_swmr_aux tests: moves the
# updater files <STAGE_BASE>.<n> a writer leaves in its directory into
# DEST_DIR late and out of order -- it waits until a window of 3 to 5 files
# is ready (fewer once DONE_FILE exists: the writer has finished), moves the
# window's files in a shuffled order with a random pause of 0-30 ms before
# each, and repeats. Files being written (<n>.tmp) are never touched. Ends
# when DONE_FILE exists and nothing is left to move; prints how many files it
# moved. mv within one file system is a rename: each file appears whole.
set -u
stage_base=$1 dest=$2 done_file=$3
RANDOM=${4:-1}
dir=${stage_base%/*} base=${stage_base##*/}
pattern="^$(printf '%s' "$base" | sed 's/[].[^$*\/]/\\&/g')\\.\\([0-9][0-9]*\\)\$"
moved=0 want=$((3 + RANDOM % 3))
while :; do
    finished=0
    [ -e "$done_file" ] && finished=1
    mapfile -t seqs < <(find "$dir" -maxdepth 1 -type f -printf '%f\n' | sed -n "s/$pattern/\\1/p" | sort -n)
    if [ ${#seqs[@]} -eq 0 ] && [ $finished = 1 ]; then
        break
    fi
    if [ ${#seqs[@]} -lt $want ] && [ $finished = 0 ] || [ ${#seqs[@]} -eq 0 ]; then
        sleep 0.01
        continue
    fi
    window=("${seqs[@]:0:$want}")
    for ((i = ${#window[@]} - 1; i > 0; i--)); do
        j=$((RANDOM % (i + 1)))
        t=${window[i]} window[i]=${window[j]} window[j]=$t
    done
    for s in "${window[@]}"; do
        sleep "0.0$((RANDOM % 4))"
        mv -f "$dir/$base.$s" "$dest/$base.$s" || exit 1
        moved=$((moved + 1))
    done
    want=$((3 + RANDOM % 3))
done
echo "reorder: moved $moved updater files"
