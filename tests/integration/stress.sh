#!/usr/bin/env bash
# Stress: a writer creates 2,000 datasets over about 6 seconds (60 ticks)
# with one reserved metadata page, so its index outgrows the reserved space
# and is relocated, and metadata file space is recycled many times; two
# readers verify every object meanwhile. From the writer's log: the index was
# relocated and moved back, space was reused many times over, and the
# metadata file stayed within a bound derived from what was live.
. "${VFDSWMR_TESTLIB:?}"

f=$WORK/stress.h5 log=$WORK/writer.log
groups=80 per_group=25 batch=10
lag=$([ -n "${VFDSWMR_VALGRIND:-}" ] && echo 300 || echo 30)
export HDF5_DRIVER_CONFIG="tick_len=1;max_lag=$lag;md_pages_reserved=1"
for r in 1 2; do
    HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/evict" read "$f" $groups $per_group $batch \
        >"$WORK/r$r" 2>&1 &
    eval "r$r=\$!"
done
HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$HDF5_DRIVER_CONFIG;log_file_path=$log" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/evict" write "$f" $groups $per_group $batch >"$WORK/w" 2>&1 || fail "writer: $(cat "$WORK/w")"
wait "$r1" || fail "reader 1: $(tail -n 20 "$WORK/r1")"
wait "$r2" || fail "reader 2: $(tail -n 20 "$WORK/r2")"
cat "$WORK/r1" "$WORK/r2"
ok "two readers verified all $((groups * per_group)) datasets"

# field NAME: the values of NAME= on every end_of_tick line, one per line
field() { sed -n "s/.* end_of_tick .*$1=\([0-9]*\).*/\1/p" "$log"; }
ticks=$(field tick | wc -l)
moves=$(field relocated | uniq | wc -l)
max_md=$(field md_pages | sort -n | tail -n1)
max_index=$(field index | sort -n | tail -n1)
max_tick_pages=$(field pages | sort -n | tail -n1)
published=$(field pages | awk '{s += $1} END {print s}')
echo "ticks=$ticks index_moves=$moves max_index=$max_index max_md_pages=$max_md published_pages=$published"
[ "$moves" -ge 3 ] || fail "the index was not relocated and moved back (changes of place: $moves)"
ok "the index was relocated when it outgrew the reserved page, and moved back"
[ "$published" -ge $((3 * max_md)) ] || fail "metadata file space was not recycled: $published pages published, file at most $max_md pages"
ok "metadata file space was reused: $published pages published through a file of at most $max_md pages"
# live: the reserved page, the index entries (one page each) and the relocated
# index; superseded: at most max_lag + 1 ticks of published pages.
bound=$(( 2 * (1 + max_index + max_index * 24 / 4096 + 1 + (lag + 1) * max_tick_pages) ))
[ "$max_md" -le "$bound" ] || fail "metadata file grew to $max_md pages, above the bound $bound"
ok "metadata file stayed bounded: at most $max_md pages (bound $bound)"
"$VFDSWMR_PROGS/evict" read "$f" $groups $per_group $batch >/dev/null || fail "the closed file does not verify with plain HDF5"
ok "the closed file verifies with plain HDF5"
finish
