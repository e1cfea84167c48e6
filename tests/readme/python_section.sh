#!/usr/bin/env bash
# README's "Python (h5py)" section, run literally, as a new user would: its
# shell block (eval "$(scripts/env)", which bootstraps and builds, and the
# PYTHONPATH export) from the top of the source tree; its two Python blocks,
# the writer and the reader ("in another process"), started together in an
# empty directory; its example commands (watch.py in the background,
# then writer.py). The blocks are taken from README.md, not copied here, so
# an edit that breaks them fails this test.
#
# Checked: every block exits 0; the file the writer snippet wrote holds x =
# 0 .. 4999 and a group "done" whose attribute rows is 5000 (plain h5py); each
# line the reader snippet printed shows a whole number of the writer's
# 100-value blocks, and it printed while the writer was live (the writer's
# 10th flush waits for the reader's first line); the examples print what examples.py checks in detail
# (writer.py's summary, watch.py's end).
#
# Needs h5py on HDF5 >= 1.14 (Debian 13: scripts/test-debian 13 runs it).
# Usage: tests/readme/python_section.sh [SOURCE_TREE]   (exit 0: passed)
set -uo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/readme-python.XXXXXX")

# The section's fenced blocks, in order: sh1, python1 (the writer), python2
# (the reader), sh2 (the examples).
python3 - "$src/README.md" "$tmp" <<'EOF' || fail "README.md has no Python section with its blocks"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^## Python \(h5py\)\n(.*?)^## ", text, re.S | re.M)
blocks = re.findall(r"^```(sh|python)\n(.*?)^```", m.group(1), re.S | re.M) if m else []
count = {}
for kind, body in blocks:
    count[kind] = count.get(kind, 0) + 1
    open("%s/%s%d" % (sys.argv[2], kind, count[kind]), "w").write(body)
sys.exit(0 if count.get("sh", 0) >= 2 and count.get("python", 0) >= 2 else 1)
EOF

cd "$src" || fail "no source tree at $src"
echo "# README's first shell block, from $src:"
sed 's/^/#   /' "$tmp/sh1"
# shellcheck disable=SC1091
. "$tmp/sh1" >"$tmp/sh1.out" 2>&1 || { tail -n 30 "$tmp/sh1.out"; fail "README's shell block failed"; }
[ -n "${HDF5_PLUGIN_PATH:-}" ] && [ -n "${PYTHONPATH:-}" ] || fail "README's shell block exported no HDF5_PLUGIN_PATH or PYTHONPATH"
ok "README's shell block (eval \"\$(scripts/env)\", PYTHONPATH) ran and exported the plugin path"

mkdir "$tmp/run" && cd "$tmp/run" || fail "no work directory"
# The writer block as it is, with one hook: its 10th Dataset.flush() returns
# only once the reader has printed a line (a handshake, so the reader is
# sure to see the file live; 120 s at most).
: >"$tmp/reader.out"
python3 - "$tmp/python1" "$tmp/reader.out" >"$tmp/writer.out" 2>&1 <<'HOLD' &
import os, sys, time
import h5py
block, seen = sys.argv[1], sys.argv[2]
flush, count = h5py.Dataset.flush, [0]
def held_flush(self):
    flush(self)
    count[0] += 1
    if count[0] == 10:
        end = time.monotonic() + 120
        while os.path.getsize(seen) == 0 and time.monotonic() < end:
            time.sleep(0.01)
h5py.Dataset.flush = held_flush
sys.argv = [block]
exec(compile(open(block).read(), block, "exec"))
HOLD
wpid=$!
# The reader opens once the writer's first flush is published; until then
# its open fails ("has no published snapshot yet"), as README says, and it
# is started again.
tries=0
# Only its standard output goes to reader.out, which the writer's hold
# watches: a refused open's message (standard error) must not release it.
until PYTHONUNBUFFERED=1 python3 "$tmp/python2" >"$tmp/reader.out" 2>"$tmp/reader.err"; do
    [ ! -s "$tmp/reader.out" ] || { cat "$tmp/reader.out" "$tmp/reader.err"; fail "README's reader printed and then failed"; }
    grep -q "no published snapshot yet\|No such file" "$tmp/reader.err" || { cat "$tmp/reader.err"; fail "README's reader failed"; }
    tries=$((tries + 1))
    [ $tries -lt 2000 ] || fail "README's reader could not open the file in 2000 tries: $(tail -n 3 "$tmp/reader.err")"
done
[ ! -s "$tmp/reader.err" ] || { cat "$tmp/reader.err"; fail "README's reader wrote to standard error"; }
wait $wpid || { cat "$tmp/writer.out"; fail "README's writer failed"; }
python3 - "$tmp/reader.out" <<'EOF' || fail "README's reader printed something else: $(head -n 5 "$tmp/reader.out")"
import re, sys
sizes = []
for line in open(sys.argv[1]):
    m = re.fullmatch(r"\((\d+),\) \[(.*)\] (\d+)\n", line)
    n = int(m.group(1))
    assert n % 100 == 0 and n <= 5000 and m.group(2) in ("'x'", "'done', 'x'"), line
    sizes.append(n)
assert sizes and min(sizes) <= 1000, sizes[:5]  # it saw the file live, held at the 10th flush
EOF
python3 - <<'EOF' || fail "the file README's writer wrote does not hold what it wrote"
import h5py, numpy as np
with h5py.File("live.h5", "r") as f:
    assert np.array_equal(f["x"][:], np.arange(5000, dtype="f8")), f["x"][:10]
    assert f["done"].attrs["rows"] == 5000
EOF
ok "README's Python writer and reader ran together: the reader printed $(wc -l <"$tmp/reader.out") consistent line(s) after $tries refused open(s); the file holds x = 0 .. 4999 and done.rows = 5000"

cd "$src" || exit 1
sed -e 's|/tmp/live.h5|'"$tmp"'/examples.h5|g' "$tmp/sh2" >"$tmp/sh2.run"
echo "# README's example commands (file name moved into $tmp):"
sed 's/^/#   /' "$tmp/sh2.run"
(set -e; . "$tmp/sh2.run"; wait) >"$tmp/sh2.out" 2>&1 || { tail -n 20 "$tmp/sh2.out"; fail "README's example commands failed"; }
grep -q "^writer: [0-9]* rows, [0-9]* groups" "$tmp/sh2.out" || fail "writer.py did not report its rows: $(tail -n 5 "$tmp/sh2.out")"
grep -q "^watch: the writer closed the file" "$tmp/sh2.out" || fail "watch.py did not see the writer close: $(tail -n 5 "$tmp/sh2.out")"
ok "README's example commands (watch.py in the background, writer.py) ran"
rm -rf "$tmp"
echo "README's Python section: passed"
