"""PyTables' own test suite (the light one, as tables.test() runs it) three times: plain,
with every file it creates or opens going through vfd_swmr_writer (HDF5_DRIVER, the
suite's programs unchanged), and through vfd_chunk_cache with a 64 MiB budget. Fails on
any test that fails or errors through a driver but passes plain; a test that fails plain
too is reported, not hidden. Prints each run's counts and time. Long (minutes a run):
`make check-pytables` runs it, scripts/test-debian 13 runs that.

PyTables sizes a Blosc2 table's chunks by the CPU's L3 cache as py-cpuinfo reports it
(it keeps the report in ~/.pytables-cpuinfo.json), and by its own default without one. A
virtual machine may report anything: one of ours said 260 MiB, and every small table of
the suite then moved 260 MiB chunks, so that the suite ran for hours, plain as slowly as
through the drivers (with 32 MiB it was still in test_tables after 12 minutes, which
takes 26 s with PyTables' default). Each run here has a HOME of its own whose report
names no cache (CPUINFO), so PyTables uses its default, as without py-cpuinfo, and the
suite does the same work on every machine."""
import json
import os
import subprocess
import sys
import time

import swmrtest

try:
    import tables
except ImportError as e:
    swmrtest.skip("no PyTables (%s); scripts/test-debian 13 runs this test with Debian's python3-tables" % e)
swmrtest.need_h5py()

# One run: the suite's failing and erroring test ids, one a line ("bad ID"), then
# "ran N skipped S". PyTables writes its temporary files under TMPDIR.
RUN = r"""
import os
import sys
import unittest
import tables
from tables.tests import common, test_suite
common.verbose = False
common.heavy = False
result = unittest.TextTestRunner(verbosity=0, stream=open(os.devnull, "w")).run(test_suite.suite())
for test, _ in result.failures + result.errors:
    print("bad", test.id())
print("ran", result.testsRun, "skipped", len(result.skipped))
"""

# The CPU report PyTables reads: no cache size (not empty: PyTables asks py-cpuinfo
# again when the report is empty).
CPUINFO = {"brand_raw": "not reported: tests/python/pytables_suite.py"}

RUNS = (
    ("plain", {}),
    ("vfd_swmr_writer", {"HDF5_DRIVER": "vfd_swmr_writer", "HDF5_DRIVER_CONFIG": "tick_len=1;max_lag=7"}),
    ("vfd_chunk_cache", {"HDF5_DRIVER": "vfd_chunk_cache", "HDF5_DRIVER_CONFIG": "chunk_cache_size=64M"}),
)


def start(name, extra):
    """One run of the suite, started: (name, process, its output file, start time)."""
    d = swmrtest.workdir()
    env = swmrtest.python_env()
    env.pop("HDF5_DRIVER", None)
    env.pop("HDF5_DRIVER_CONFIG", None)
    env.update(extra)
    env["TMPDIR"] = d
    env["HOME"] = d
    with open(os.path.join(d, ".pytables-cpuinfo.json"), "w") as f:
        json.dump(CPUINFO, f)
    out = open(os.path.join(d, "suite.out"), "w+")
    err = open(os.path.join(d, "suite.err"), "w+")
    p = subprocess.Popen([sys.executable, "-c", RUN], env=env, cwd=d, stdout=out, stderr=err, text=True)
    return name, p, out, err, time.monotonic()


def result(run):
    """Wait for a run: (tests run, set of failing test ids); its counts and time printed."""
    name, p, out, err, t0 = run
    rc = p.wait()
    seconds = time.monotonic() - t0
    out.seek(0)
    err.seek(0)
    lines = out.read().splitlines()
    bad = {line.split(" ", 1)[1] for line in lines if line.startswith("bad ")}
    last = [line for line in lines if line.startswith("ran ")]
    if rc != 0 or not last:
        swmrtest.fail("%s: the suite did not complete (exit status %d): %s %s"
                      % (name, rc, "\n".join(lines)[-2000:], err.read()[-3000:]))
    words = last[-1].split()
    ran, skipped = int(words[1]), int(words[3])
    print("pytables %s: %d tests, %d failed or errored, %d skipped, %.0f s" % (name, ran, len(bad), skipped, seconds))
    for t in sorted(bad):
        print("  %s: %s" % (name, t))
    sys.stdout.flush()
    return ran, bad


print("PyTables %s on HDF5 %s (the three runs at once)" % (tables.__version__, tables.hdf5_version))
runs = [start(name, extra) for name, extra in RUNS]
try:
    plain_ran, plain_bad = result(runs[0])
    if plain_ran < 1000:
        swmrtest.fail("plain: only %d tests ran: not PyTables' suite" % plain_ran)
    for run in runs[1:]:
        name = run[0]
        ran, bad = result(run)
        if ran != plain_ran:
            swmrtest.fail("%s: %d tests ran, plain %d" % (name, ran, plain_ran))
        new = sorted(bad - plain_bad)
        if new:
            swmrtest.fail("%s: %d tests fail through the driver and pass plain: %s"
                          % (name, len(new), ", ".join(new)))
        swmrtest.ok("PyTables' suite through %s: %d tests, none fails that passes plain (%d fail plain too)"
                    % (name, ran, len(bad & plain_bad)))
finally:
    for run in runs:  # a failure leaves no run behind
        if run[1].poll() is None:
            run[1].kill()
            run[1].wait()
swmrtest.finish()
