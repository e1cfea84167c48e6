#!/usr/bin/env bash
# Temporary metadata files of writers killed while opening (<md>.<random>.tmp,
# created and locked before they take the metadata file's name) are removed
# by the next writer of that file -- only those: not one a writer that is
# opening holds locked, not a young one (a writer between creating and
# locking it), not a symbolic link or its target, not another file's.
. "${VFDSWMR_TESTLIB:?}"
. "${VFDSWMR_PROCLIB:?}"

f=$WORK/f.h5
stale=$f.md.AAAAAAAAAAAA.tmp young=$f.md.BBBBBBBBBBBB.tmp locked=$f.md.CCCCCCCCCCCC.tmp
link=$f.md.DDDDDDDDDDDD.tmp other=$WORK/g.h5.md.EEEEEEEEEEEE.tmp
for t in "$stale" "$young" "$locked" "$other"; do printf 'VSMD' >"$t"; done
touch -d '2 hours ago' "$stale" "$locked" "$other"
echo keep >"$WORK/target"
ln -s "$WORK/target" "$link"
touch -h -d '2 hours ago' "$link"
proc_start l "$VFDSWMR_PROGS/lockmd" "$locked"
proc_read l
[ "$ANSWER" = locked ] || fail "lockmd: $ANSWER $(proc_err l)"

out=$(HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="tick_len=1;max_lag=3" \
    ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/eoaclose" write "$f" 2>&1) || fail "writer: $out"
[ ! -e "$stale" ] || fail "the stale temporary $stale is still there"
for t in "$young" "$locked" "$link" "$other"; do
    [ -e "$t" ] || [ -L "$t" ] || fail "$t was removed"
done
[ "$(cat "$WORK/target")" = keep ] || fail "the link's target changed"
[ "$(cat "$young")" = VSMD ] && [ "$(cat "$locked")" = VSMD ] && [ "$(cat "$other")" = VSMD ] ||
    fail "a kept temporary changed"
proc_ask l go
[ "$ANSWER" = released ] || fail "lockmd: $ANSWER $(proc_err l)"
proc_end l
out=$(env -u HDF5_DRIVER "$VFDSWMR_PROGS/eoaclose" read "$f" </dev/null 2>&1) || fail "plain HDF5: $out"
ok "the next writer removed the stale temporary only (kept: a locked one, a young one, a link, another file's), and wrote its file"
finish
