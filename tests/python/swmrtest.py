"""What the h5py tests share (make check-python runs them; tests/python/README.md).

- skip(): exit 77 (automake's SKIP) when there is no h5py on HDF5 >= 1.14 here.
- row_value(i): the value of row i of a row file (tests/progs/rows.h).
- Proc: a program driven one command line at a time, one answer line each
  (tests/progs/rowwriter.c, rowreader.c, tests/python/pywriter.py, pyreader.py),
  with the time each answer arrived (time.monotonic()).
- Delays: publish-to-reader delays, printed (measured, never asserted).
- serve(): the command loop of pywriter.py and pyreader.py.
"""

import os
import select
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.environ.get("VFDSWMR_PROGS", "")
TIMEOUT = float(os.environ.get("PROC_TIMEOUT", "120"))
CHECKS = 0


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(77)


def need_h5py():
    """Skip unless h5py on HDF5 >= 1.14 is importable (Debian 13's python3-h5py is;
    Debian 12's is built on HDF5 1.10, which loads no driver plugins)."""
    try:
        import h5py
    except ImportError as e:
        skip("no h5py (%s)" % e)
    if h5py.version.hdf5_version_tuple < (1, 14, 0):
        skip("h5py %s is built on HDF5 %s: driver plugins need HDF5 1.14 (scripts/test-debian13 runs these "
             "tests with Debian 13's h5py)" % (h5py.__version__, h5py.version.hdf5_version))
    if not PROGS:
        skip("run through make check-python")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(msg):
    global CHECKS
    CHECKS += 1
    print("ok %d - %s" % (CHECKS, msg))
    sys.stdout.flush()


def finish():
    print("%d checks passed" % CHECKS)
    sys.exit(0)


def row_value(i):
    """tests/progs/rows.h: row i's value, never 0 (the fill value)."""
    return (((i + 1) * 0x9E3779B97F4A7C15 % (1 << 64)) >> 1) | 1


def rows_ok(f, n, how):
    """f's /rows holds exactly n rows, each row_value(i); else fail, saying `how` it was read."""
    import numpy as np
    d = f["rows"]
    if d.shape != (n,):
        fail("%s: %s rows, expected %d" % (how, d.shape, n))
    want = np.array([row_value(i) for i in range(n)], dtype="<i8")
    if not np.array_equal(d[...], want):
        fail("%s: wrong row values" % how)


def serve(name, f, handle, last):
    """The command loop of pywriter.py and pyreader.py: a command a line on stdin, one
    answer line each on stdout. handle(words) answers the program's own commands (None:
    not one of them); "status", "driver" and `last` (close the file: "closed") are common.
    A failing command answers "failed: REASON" (traceback on stderr). End of input closes
    too. Returns the exit status: 0, 3 when a command failed, 2 on an unknown command."""
    import traceback

    import vfdswmr

    failed = False
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == last:
                f.close()
                print("closed", flush=True)
                return 3 if failed else 0
            ans = handle(cmd)
            if ans is None and cmd[0] == "status":
                s = vfdswmr.status(f)
                ans = "status state=%s tick=%d writer_tick=%d lag=%d writer=%d" % (
                    s.writer_state, s.tick, s.writer_tick, s.lag, s.is_writer)
            elif ans is None and cmd[0] == "driver":
                ans = "driver %s h5py=%s" % (vfdswmr.driver(f), f.driver)
            elif ans is None:
                print("%s: unknown command %r" % (name, line), file=sys.stderr)
                return 2
        except Exception as e:
            traceback.print_exc()
            ans = "failed: %s" % e
            failed = True
        print(ans, flush=True)
    f.close()
    return 3 if failed else 0


def workdir():
    d = tempfile.mkdtemp(prefix="vfdswmr-py.")
    return d


def python_env(extra=None):
    """The environment of a Python test process: the helper on PYTHONPATH (make check-python sets it)."""
    env = dict(os.environ)
    env.update(extra or {})
    return env


def driver_env(driver, config):
    """python_env() selecting `driver` with `config` through HDF5_DRIVER(_CONFIG), or plain HDF5
    (neither set) when driver is None: for programs that do not know the drivers."""
    env = python_env({"HDF5_DRIVER_CONFIG": config})
    if driver:
        env["HDF5_DRIVER"] = driver
    else:
        env.pop("HDF5_DRIVER", None)
        env.pop("HDF5_DRIVER_CONFIG", None)
    return env


class Proc:
    """A command-driven test program: ask() sends a line and returns the answer line."""

    def __init__(self, name, argv, env=None, workdir="."):
        self.name = name
        self.err_path = os.path.join(workdir, name + ".err")
        self.err = open(self.err_path, "w")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                  env=env, text=True, bufsize=1)
        self.answered = None  # time.monotonic() of the last answer

    def stderr(self):
        self.err.flush()
        with open(self.err_path) as f:
            return f.read()[-3000:]

    def read(self):
        r, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
        if not r:
            fail("%s: no answer within %.0f s; its stderr: %s" % (self.name, TIMEOUT, self.stderr()))
        line = self.p.stdout.readline()
        self.answered = time.monotonic()
        if not line:
            rc = self.p.wait()
            fail("%s ended (exit status %s) without answering; its stderr: %s" % (self.name, rc, self.stderr()))
        return line.rstrip("\n")

    def send(self, cmd):
        try:
            self.p.stdin.write(cmd + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            fail("%s is gone (command %r): %s" % (self.name, cmd, self.stderr()))

    def ask(self, cmd):
        self.send(cmd)
        return self.read()

    def expect(self, cmd, want):
        got = self.ask(cmd)
        if got != want:
            fail("%s: %r answered %r, expected %r; its stderr: %s" % (self.name, cmd, got, want, self.stderr()))
        return got

    def end(self):
        """Close its input (end of input) and wait; the exit status."""
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        rc = self.p.wait(timeout=TIMEOUT)
        self.err.close()
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class Delays:
    """Delays from a writer's publish to a reader's having read it, in seconds."""

    def __init__(self, label):
        self.label = label
        self.values = []

    def add(self, seconds):
        self.values.append(seconds)

    def report(self):
        v = sorted(self.values)
        if not v:
            return
        print("delay %s: %d samples, min %.0f ms, median %.0f ms, max %.0f ms" % (
            self.label, len(v), v[0] * 1e3, statistics.median(v) * 1e3, v[-1] * 1e3))
        sys.stdout.flush()


def writer_argv(kind, path, config):
    """A row writer: the C rowwriter or the h5py pywriter.py, same commands and answers."""
    if kind == "c":
        return [os.path.join(PROGS, "rowwriter"), path, "create", "--latest", "--config", config]
    return [sys.executable, os.path.join(HERE, "pywriter.py"), path, config]


def reader_argv(kind, path):
    """A row reader in watch mode: the C rowreader or the h5py pyreader.py."""
    if kind == "c":
        return [os.path.join(PROGS, "rowreader"), path, "watch", "--config", ""]
    return [sys.executable, os.path.join(HERE, "pyreader.py"), path]
