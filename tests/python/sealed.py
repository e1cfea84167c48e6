"""h5py and a dead writer's file (docs/DESIGN.md, "The seal"): a file written and closed by
plain h5py, reopened by an h5py writer through vfd_swmr_writer (vfdswmr.File, mode "r+"),
which appends and flushes, and is SIGKILLed within its first ticks. Plain h5py must then
refuse the file, read-only and read-write, saying "bad flag value for superblock", and
leave it byte-identical; a reader through vfdswmr.File reads every flushed row; after
vfd_swmr_recover plain h5py reads every flushed row, each value right."""
import os
import subprocess
import sys

import swmrtest

swmrtest.need_h5py()
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import vfdswmr  # noqa: E402

CONFIG = "tick_len=1;max_lag=50"  # 5 s of lag: no page of the session reaches the file before the kill
WRITER = r"""
import sys
import numpy as np
import vfdswmr
sys.path.insert(0, %r)
from swmrtest import row_value
f = vfdswmr.File(sys.argv[1], "r+", config=sys.argv[2])
rows = f["rows"]
for line in sys.stdin:
    n = int(line)
    old = rows.shape[0]
    rows.resize((old + n,))
    rows[old:] = np.array([row_value(i) for i in range(old, old + n)], dtype="<i8")
    f.flush()
    vfdswmr.end_tick(f)
    print("flushed %%d" %% rows.shape[0], flush=True)
""" % swmrtest.HERE


d = swmrtest.workdir()
path = os.path.join(d, "f.h5")
with h5py.File(path, "w") as f:
    f.create_dataset("rows", data=np.array([swmrtest.row_value(i) for i in range(30)], dtype="<i8"),
                     maxshape=(None,), chunks=(256,))

w = swmrtest.Proc("pywriter", [sys.executable, "-c", WRITER, path, CONFIG], env=swmrtest.python_env(), workdir=d)
w.expect("10", "flushed 40")
w.expect("5", "flushed 45")
w.kill()
with open(path, "rb") as fp:
    before = fp.read()
for mode in ("r", "r+"):
    try:
        h5py.File(path, mode).close()
        swmrtest.fail("plain h5py opened the dead writer's file (mode %r)" % mode)
    except OSError as e:
        if "bad flag value for superblock" not in str(e):
            swmrtest.fail("plain h5py (mode %r) refused for another reason: %s" % (mode, e))
    with open(path, "rb") as fp:
        if fp.read() != before:
            swmrtest.fail("a refused plain h5py open (mode %r) changed the file" % mode)
swmrtest.ok("h5py writer killed within its first ticks: plain h5py refuses the file read-only and read-write "
            "(\"bad flag value for superblock\"), byte-identical")

with vfdswmr.File(path, "r", config=CONFIG) as f:
    swmrtest.rows_ok(f, 45, "through vfd_swmr_reader")
swmrtest.ok("vfdswmr.File reads the 45 flushed rows of the dead writer's file")

rec = subprocess.run([os.environ["VFDSWMR_RECOVER"], "--config", CONFIG, path], capture_output=True, text=True)
if rec.returncode != 0 or "recovered tick" not in rec.stdout:
    swmrtest.fail("vfd_swmr_recover: %s %s" % (rec.stdout, rec.stderr))
with h5py.File(path, "r") as f:
    swmrtest.rows_ok(f, 45, "plain h5py after vfd_swmr_recover")
swmrtest.ok("after vfd_swmr_recover plain h5py reads the 45 flushed rows, each value right")
swmrtest.finish()
