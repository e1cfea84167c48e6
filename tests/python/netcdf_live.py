"""netCDF readers of a new live file: an h5py writer (HDF5_DRIVER=vfd_swmr_writer) creates a
file, writes 10 values, calls File.flush() and then goes idle -- no tick ends during the
test (tick_len=100), so the delayed-write rule writes nothing to the HDF5 file before close.
The netCDF C library looks for HDF5's signature with its own I/O before it opens a file
through HDF5 ("NetCDF: Unknown file format" without it): `ncdump` and netCDF4-python, with
HDF5_DRIVER=vfd_swmr_reader, must open the file at the first try after the flush returned
and read every value; again after a second flush (100 values); plain after the close.
nccopy of the live file: refused through vfd_swmr_reader with advice, done through
vfd_swmr_writer."""
import os
import re
import shutil
import subprocess
import sys
import time

import swmrtest

try:
    import netCDF4
except ImportError as e:
    swmrtest.skip("no netCDF4-python (%s); scripts/test-debian 13 runs this test with Debian's python3-netcdf4" % e)
NCDUMP = shutil.which("ncdump")
if NCDUMP is None:
    swmrtest.skip("no ncdump; scripts/test-debian 13 runs this test with Debian's netcdf-bin")
swmrtest.need_h5py()
if tuple(int(x) for x in netCDF4.__hdf5libversion__.split(".")[:2]) < (1, 14):
    swmrtest.skip("netCDF4-python is built on HDF5 %s: driver plugins need HDF5 1.14" % netCDF4.__hdf5libversion__)

CONFIG = "tick_len=100;max_lag=5"  # no tick ends during the test: the flushes alone publish
WRITER = r"""
import sys
import h5py
import numpy as np
f = h5py.File(sys.argv[1], "w")
x = f.create_dataset("x", shape=(0,), maxshape=(None,), dtype="<f8", chunks=(64,))
x.attrs["units"] = "m"
print("created", flush=True)
total = 0
for line in sys.stdin:
    n = int(line)
    x.resize((total + n,))
    x[total:] = np.arange(total, total + n) * 0.5
    total += n
    f.flush()
    print("flushed %d" % total, flush=True)
f.close()
print("closed", flush=True)
"""
READER = r"""
import sys
import netCDF4
import numpy as np
with netCDF4.Dataset(sys.argv[1], "r") as d:
    x = d.variables["x"][:]
    units = d.variables["x"].units
n = int(sys.argv[2])
right = x.shape == (n,) and np.array_equal(np.asarray(x), np.arange(n) * 0.5) and units == "m"
print("%d values %s" % (x.shape[0], "right" if right else "WRONG: %r" % (x[:20],)))
"""


def env(driver):
    return swmrtest.driver_env(driver, CONFIG)


def run(argv, driver):
    """Run once; (exit status, stdout + stderr, seconds)."""
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env(driver), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=swmrtest.TIMEOUT)
    return p.returncode, p.stdout, time.monotonic() - t0


def ncdump_values(path, n, driver):
    """ncdump -v x: check the header and every value; the seconds it took."""
    rc, out, secs = run([NCDUMP, "-v", "x", path], driver)
    if rc != 0:
        swmrtest.fail("ncdump (%s) of the live file failed (exit status %d): %s" % (driver or "plain", rc, out))
    if not re.search(r"double x\(phony_dim_0\) ;", out) or 'x:units = "m" ;' not in out:
        swmrtest.fail("ncdump (%s) shows another header: %s" % (driver or "plain", out))
    m = re.search(r"\bx = ([^;]*);", out)
    got = [float(v) for v in m.group(1).split(",")] if m else None
    if got != [i * 0.5 for i in range(n)]:
        swmrtest.fail("ncdump (%s) read %s, expected the %d values 0, 0.5, ...: %s" % (driver or "plain", got, n, out))
    return secs


def netcdf4_values(path, n, driver):
    rc, out, secs = run([sys.executable, "-c", READER, path, str(n)], driver)
    if rc != 0 or out.strip() != "%d values right" % n:
        swmrtest.fail("netCDF4-python (%s): exit status %d: %s" % (driver or "plain", rc, out))
    return secs


d = swmrtest.workdir()
path = os.path.join(d, "live.nc")
w = swmrtest.Proc("writer", [sys.executable, "-c", WRITER, path], env=env("vfd_swmr_writer"), workdir=d)
if w.read() != "created":
    swmrtest.fail("the h5py writer did not start: %s" % w.stderr())
rc, out, _ = run([NCDUMP, "-h", path], "vfd_swmr_reader")
if rc == 0:
    swmrtest.fail("ncdump opened the file before the writer's first flush: %s" % out)
swmrtest.ok("before the writer's first flush ncdump cannot open the new file (%s)" % out.strip().splitlines()[-1])

w.expect("10", "flushed 10")
flushed = w.answered
a = ncdump_values(path, 10, "vfd_swmr_reader")
b = netcdf4_values(path, 10, "vfd_swmr_reader")
swmrtest.ok("the writer's first flush returned and it went idle: ncdump and netCDF4-python opened the new file "
            "through vfd_swmr_reader at the first try and read all 10 values (ncdump done %.0f ms after the flush "
            "returned, netCDF4-python in %.0f ms)" % ((time.monotonic() - flushed - b) * 1000, b * 1000))
del a

w.expect("90", "flushed 100")
ncdump_values(path, 100, "vfd_swmr_reader")
netcdf4_values(path, 100, "vfd_swmr_reader")
swmrtest.ok("after a second flush both read all 100 values of the live file")

# nccopy opens its output through the same HDF5_DRIVER: vfd_swmr_reader refuses to write
# it and says so on stderr (netCDF hides HDF5's error stack: "Permission denied" alone);
# through vfd_swmr_writer the live input is read through vfd_swmr_reader and the copy written.
NCCOPY = shutil.which("nccopy")
if NCCOPY is None:
    swmrtest.fail("no nccopy next to ncdump (%s)" % NCDUMP)
copy = os.path.join(d, "copy_r.nc")
rc, out, _ = run([NCCOPY, path, copy], "vfd_swmr_reader")
if rc == 0 or "vfd_swmr_reader opens files read-only" not in out or "HDF5_DRIVER=vfd_swmr_writer" not in out:
    swmrtest.fail("nccopy through vfd_swmr_reader: exit status %d, without the driver's advice: %s" % (rc, out))
if os.path.exists(copy):
    swmrtest.fail("nccopy through vfd_swmr_reader created %s" % copy)
copy = os.path.join(d, "copy_w.nc")
rc, out, _ = run([NCCOPY, path, copy], "vfd_swmr_writer")
if rc != 0:
    swmrtest.fail("nccopy of the live file through vfd_swmr_writer failed (exit status %d): %s" % (rc, out))
ncdump_values(copy, 100, None)
swmrtest.ok("nccopy through vfd_swmr_reader is refused with the advice on stderr, and creates nothing; through "
            "vfd_swmr_writer it copies the live file, and plain ncdump reads the copy's 100 values")

w.p.stdin.close()  # end of input: the writer closes the file
if w.read() != "closed" or w.end() != 0:
    swmrtest.fail("the h5py writer's close: %s" % w.stderr())
ncdump_values(path, 100, None)
netcdf4_values(path, 100, None)
swmrtest.ok("after the writer's close plain ncdump and plain netCDF4-python read all 100 values")
swmrtest.finish()
