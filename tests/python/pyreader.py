"""pyreader: an h5py reader of a row file (tests/progs/rows.h) through vfd_swmr_reader
(vfdswmr.File), driven from stdin like tests/progs/rowreader.c's watch mode, checking
every value it reads.

    pyreader.py FILE

Opens FILE and /rows, prints "ready ROWS". Then, one answer line per command:

  verify MIN  Dataset.refresh() (H5Drefresh) every 10 ms until /rows has at least MIN
              rows, then read and check every row      "rows N" | "failed: ..."
  follow MIN  vfdswmr.refresh(file) every 10 ms, /rows reopened each time (f["rows"]),
              until it has at least MIN rows, then check every row    "rows N"
  groups MIN  vfdswmr.refresh(file) until /groups has at least MIN members; each gK
              must have attribute n = K                 "groups N"
  top MIN     vfdswmr.refresh(file) until the root group has at least MIN groups tK;
              each has n = K and v = [K, K+1, K+2]     "top N"
  status      vfdswmr.status  "status state=S tick=T writer_tick=W lag=L writer=0|1"
  driver      "driver NAME h5py=NAME"
  quit        close the file                            "closed"

Rows below MIN must hold their value, later ones their value or 0 (not written yet).
Waiting gives up after $ROWS_TIMEOUT seconds (default 120). Exit status 0, or 3 when a
command failed, 1 when the file could not be opened.
"""
import os
import sys
import time
import traceback

import numpy as np
import vfdswmr

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from swmrtest import row_value, serve  # noqa: E402

LIMIT = float(os.environ.get("ROWS_TIMEOUT", "120"))


def wait(what, cond, step):
    start = time.monotonic()
    while True:
        step()
        n = cond()
        if n is not None:
            return n
        if time.monotonic() - start > LIMIT:
            raise RuntimeError("%s: still not there after %.0f s" % (what, LIMIT))
        time.sleep(0.01)


def check_rows(d, exact):
    v = d[:]
    want = np.array([row_value(i) for i in range(len(v))], dtype="<i8")
    bad = np.nonzero((v != want) & ~((np.arange(len(v)) >= exact) & (v == 0)))[0]
    if len(bad):
        i = bad[0]
        raise RuntimeError("row %d of %d holds %d, expected %d%s" % (i, len(v), v[i], want[i],
                                                                    " or 0" if i >= exact else ""))
    return len(v)


def main():
    path = sys.argv[1]
    # /rows as last opened, and no other reference to it: "follow" reopens it, and an
    # object still open elsewhere would keep the old snapshot's metadata (HDF5 shares it)
    rows = {}
    try:
        f = vfdswmr.File(path, "r")
        rows["d"] = f["rows"]
    except Exception:
        traceback.print_exc()
        return 1
    print("ready %d" % rows["d"].shape[0], flush=True)

    def handle(cmd):
        if cmd[0] == "verify":
            m, d = int(cmd[1]), rows["d"]
            n = wait("/rows", lambda: d.shape[0] if d.shape[0] >= m else None, d.refresh)
            return "rows %d" % check_rows(d, n)
        if cmd[0] == "follow":
            m = int(cmd[1])
            n = wait("/rows", lambda: f["rows"].shape[0] if f["rows"].shape[0] >= m else None,
                     lambda: vfdswmr.refresh(f))
            rows["d"] = f["rows"]
            return "rows %d" % check_rows(rows["d"], n)
        if cmd[0] == "groups":
            m = int(cmd[1])
            n = wait("/groups", lambda: len(f["groups"]) if len(f["groups"]) >= m else None,
                     lambda: vfdswmr.refresh(f))
            for k in range(n):
                got = np.asarray(f["groups/g%d" % k].attrs["n"]).item()  # a 1-element array or a scalar
                if got != k:
                    raise RuntimeError("/groups/g%d: n = %r, expected %d" % (k, got, k))
            return "groups %d" % n
        if cmd[0] == "top":
            m = int(cmd[1])

            def ntop():
                n = sum(1 for name in f if name.startswith("t"))
                return n if n >= m else None
            n = wait("top-level groups", ntop, lambda: vfdswmr.refresh(f))
            for k in range(n):
                g = f["t%d" % k]
                if g.attrs["n"] != k or list(g["v"][:]) != [k, k + 1, k + 2]:
                    raise RuntimeError("/t%d: n = %r, v = %r" % (k, g.attrs["n"], list(g["v"][:])))
            return "top %d" % n
        return None

    return serve("pyreader", f, handle, "quit")


if __name__ == "__main__":
    sys.exit(main())
