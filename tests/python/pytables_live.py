"""PyTables through the drivers, live: a PyTables writer (HDF5_DRIVER=vfd_swmr_writer, its
programs unchanged) appends to a Table and an EArray and calls File.flush() after each
step, answering when the flush returned; a PyTables reader process (HDF5_DRIVER=
vfd_swmr_reader) opens the file again for each step -- PyTables has no refresh -- and
reads every row of both, each value checked, while the writer keeps the file open. After
the writer's close plain PyTables reads everything."""
import os
import sys

import swmrtest

try:
    import tables  # noqa: F401
except ImportError as e:
    swmrtest.skip("no PyTables (%s); scripts/test-debian 13 runs this test with Debian's python3-tables" % e)
swmrtest.need_h5py()  # the same HDF5 >= 1.14 check (Debian's python3-tables and python3-h5py share libhdf5)

CONFIG = "tick_len=100;max_lag=5"  # no tick ends during the test: each flush publishes
COMMON = r"""
import sys
import numpy as np
import tables
sys.path.insert(0, %r)
from swmrtest import row_value


class Row(tables.IsDescription):
    i = tables.Int64Col(pos=0)
    v = tables.Int64Col(pos=1)
    x = tables.Float64Col(pos=2)


def table_rows(lo, hi):
    a = np.zeros(hi - lo, dtype=[("i", "<i8"), ("v", "<i8"), ("x", "<f8")])
    a["i"] = np.arange(lo, hi)
    a["v"] = [row_value(k) for k in range(lo, hi)]
    a["x"] = np.arange(lo, hi) * 0.5
    return a


def earray_rows(lo, hi):
    k = np.arange(lo, hi, dtype="<i4")
    return np.stack([k, 2 * k, 3 * k, -k], axis=1)
""" % swmrtest.HERE
WRITER = COMMON + r"""
f = tables.open_file(sys.argv[1], "w")
t = f.create_table("/", "t", Row, expectedrows=10000)
e = f.create_earray("/", "e", tables.Int32Atom(), shape=(0, 4), expectedrows=10000)
f.flush()
print("ready", flush=True)
total = 0
for line in sys.stdin:
    n = int(line)
    t.append(table_rows(total, total + n))
    e.append(earray_rows(total, total + n))
    total += n
    f.flush()
    print("flushed %d" % total, flush=True)
f.close()
print("closed", flush=True)
"""
READER = COMMON + r"""
for line in sys.stdin:
    want = int(line)
    with tables.open_file(sys.argv[1], "r") as f:
        t, e = f.root.t.read(), f.root.e.read()
    if len(t) != want or e.shape != (want, 4):
        print("rows table=%d earray=%s, expected %d" % (len(t), e.shape, want), flush=True)
        continue
    ok = np.array_equal(t, table_rows(0, want)) and np.array_equal(e, earray_rows(0, want))
    print("rows %d %s" % (want, "right" if ok else "WRONG"), flush=True)
"""


def env(driver):
    return swmrtest.driver_env(driver, CONFIG)


d = swmrtest.workdir()
path = os.path.join(d, "tables.h5")
w = swmrtest.Proc("writer", [sys.executable, "-c", WRITER, path], env=env("vfd_swmr_writer"), workdir=d)
if w.read() != "ready":
    swmrtest.fail("the PyTables writer did not start: %s" % w.stderr())
r = swmrtest.Proc("reader", [sys.executable, "-c", READER, path], env=env("vfd_swmr_reader"), workdir=d)
r.expect("0", "rows 0 right")
total, steps = 0, 0
for n in (1, 7, 100, 513, 2000, 3, 4096):
    total += n
    steps += 1
    w.expect(str(n), "flushed %d" % total)
    r.expect(str(total), "rows %d right" % total)
swmrtest.ok("a PyTables writer appended to a Table and an EArray in %d steps of 1 to 4096 rows, File.flush() "
            "after each: a PyTables reader opening the live file through vfd_swmr_reader read all %d rows of "
            "both after each flush returned, every value right" % (steps, total))
w.p.stdin.close()  # end of input: the writer closes the file
if w.read() != "closed" or w.end() != 0:
    swmrtest.fail("the PyTables writer's close: %s" % w.stderr())
r.expect(str(total), "rows %d right" % total)
if r.end() != 0:
    swmrtest.fail("the reader: %s" % r.stderr())
p = swmrtest.Proc("plain", [sys.executable, "-c", READER, path], env=env(None), workdir=d)
p.expect(str(total), "rows %d right" % total)
if p.end() != 0:
    swmrtest.fail("plain PyTables: %s" % p.stderr())
swmrtest.ok("after the writer's close the reader and plain PyTables read all %d rows of both" % total)
swmrtest.finish()
