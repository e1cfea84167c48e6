"""examples/python/: watch.py started first (it waits for the file and the writer's
first flush), then writer.py (h5py's SWMR idiom); the watcher must print every row
exactly once with its value (i / 4), every group with its row count, and stop when
the writer closes the file."""
import os
import re
import subprocess
import sys

import swmrtest as t

t.need_h5py()
examples = os.path.join(t.HERE, "..", "..", "examples", "python")
work = t.workdir()
path = os.path.join(work, "live.h5")
steps, rows = 40, 5
watch = subprocess.Popen([sys.executable, os.path.join(examples, "watch.py"), path, "--poll", "0.05"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=t.python_env())
try:
    writer = subprocess.run([sys.executable, os.path.join(examples, "writer.py"), path, "--steps", str(steps),
                             "--rows", str(rows), "--interval", "0.02"],
                            capture_output=True, text=True, env=t.python_env(), timeout=t.TIMEOUT)
    if writer.returncode != 0:
        t.fail("writer.py failed: %s" % writer.stderr)
    if "%d rows, %d groups" % (steps * rows, steps // 5) not in writer.stdout:
        t.fail("writer.py said: %s" % writer.stdout)
    t.ok("writer.py wrote %d rows and %d groups" % (steps * rows, steps // 5))
    out, err = watch.communicate(timeout=t.TIMEOUT)
    if watch.returncode != 0:
        t.fail("watch.py failed (status %d): %s" % (watch.returncode, err))
finally:
    if watch.poll() is None:
        watch.kill()
lines = out.splitlines()
got_rows = [(int(m.group(1)), m.group(2)) for m in map(re.compile(r"^row (\d+) = (\S+)$").match, lines) if m]
want_rows = [(i, "%g" % (i / 4)) for i in range(steps * rows)]
if got_rows != want_rows:
    bad = next((g, w) for g, w in zip(got_rows + [None] * len(want_rows), want_rows) if g != w)
    t.fail("watch.py printed %d rows; first difference: got %r, want %r" % (len(got_rows), bad[0], bad[1]))
t.ok("watch.py printed rows 0..%d exactly once, each with its value" % (steps * rows - 1))
got_groups = sorted(l for l in lines if l.startswith("group "))
want_groups = sorted("group /step%d rows=%d" % (s, s * rows) for s in range(5, steps + 1, 5))
if got_groups != want_groups:
    t.fail("watch.py printed the groups %r, want %r" % (got_groups, want_groups))
if not lines[-1].startswith("watch: the writer closed the file: %d rows, %d groups" % (steps * rows, steps // 5)):
    t.fail("watch.py's last line: %r" % lines[-1])
t.ok("watch.py saw every new group with its row count, and stopped at the writer's close")
import shutil  # noqa: E402
shutil.rmtree(work, ignore_errors=True)
t.finish()
