"""A flush is a flush, from h5py (publish=flush, the default): an h5py writer appends rows
and flushes -- File.flush(), or in SWMR-write mode (f.swmr_mode = True, h5py's idiom)
Dataset.flush() -- answering after each flush returned, and is SIGKILLed right after
an answer, long before any tick ends (tick_len=100: 10 s). A reader's next refresh
(vfdswmr.refresh) saw every answered row while the writer ran; after vfd_swmr_recover
plain h5py reads exactly the rows whose flush returned, each value right."""
import os
import subprocess
import sys

import swmrtest

swmrtest.need_h5py()
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import vfdswmr  # noqa: E402

CONFIG = "tick_len=100;max_lag=5"  # no tick ends during the test: only flushes publish
WRITER = r"""
import sys
import numpy as np
import vfdswmr
sys.path.insert(0, %r)
from swmrtest import row_value
swmr = sys.argv[3] == "swmr"
f = vfdswmr.File(sys.argv[1], "w", config=sys.argv[2], libver="latest")
rows = f.create_dataset("rows", shape=(0,), maxshape=(None,), dtype="<i8", chunks=(64,))
f.flush()
if swmr:
    f.swmr_mode = True
print("ready", flush=True)
for line in sys.stdin:
    n = int(line)
    old = rows.shape[0]
    rows.resize((old + n,))
    rows[old:] = np.array([row_value(i) for i in range(old, old + n)], dtype="<i8")
    if swmr:
        rows.flush()
    else:
        f.flush()
    print("flushed %%d" %% rows.shape[0], flush=True)
""" % swmrtest.HERE


d = swmrtest.workdir()
for mode in ("file", "swmr"):
    for trial, steps in enumerate((1, 4, 9)):
        path = os.path.join(d, "%s%d.h5" % (mode, trial))
        w = swmrtest.Proc("pywriter", [sys.executable, "-c", WRITER, path, CONFIG, mode],
                          env=swmrtest.python_env(), workdir=d)
        if w.read() != "ready":
            swmrtest.fail("%s: the writer did not start: %s" % (mode, w.stderr()))
        total = 0
        with vfdswmr.File(path, "r", config=CONFIG) as r:
            for k in range(1, steps + 1):
                total += 7 * k
                w.expect(str(7 * k), "flushed %d" % total)
                vfdswmr.refresh(r)
                swmrtest.rows_ok(r, total, "%s: the reader's next refresh after flush %d" % (mode, k))
        w.kill()  # right after its last answer: every answered flush had returned
        rec = subprocess.run([os.environ["VFDSWMR_RECOVER"], "--config", CONFIG, path], capture_output=True,
                             text=True)
        if rec.returncode != 0 or "recovered tick" not in rec.stdout:
            swmrtest.fail("%s: vfd_swmr_recover: %s %s" % (mode, rec.stdout, rec.stderr))
        with h5py.File(path, "r") as f:
            swmrtest.rows_ok(f, total, "%s: plain h5py after the kill and vfd_swmr_recover" % mode)
    swmrtest.ok("%s: %s -- 3 writers killed after 1, 4 and 9 flushes, no tick ended: each flushed row was "
                "visible at the reader's next refresh, and recovered for plain h5py"
                % (mode, "Dataset.flush() in swmr_mode" if mode == "swmr" else "File.flush()"))
swmrtest.finish()
