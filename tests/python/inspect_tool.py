"""vfdswmr.inspect(): vfd_swmr_inspect from Python, against what the drivers themselves report.
 - a C writer (rowwriter, explicit ticks, publish=tick) and an h5py reader in this process
   holding an older tick: inspect() says "running", the session, tick, tick_len and max_lag
   vfdswmr.status() gives, one reader registered holding the reader's tick, its lag; the
   reader reads every row afterwards;
 - pages=True lists as many entries as the reader's snapshot has, once it holds the newest;
   verify=True of the live session: ok, nothing listed;
 - the writer killed: "died", and the recovery predicted is what vfd_swmr_recover does;
 - verify=True of a damaged metadata file (tests/fixtures/md/hdr_checksum.md) returns the
   problems (the header) instead of raising; a FIFO as the metadata file and a usage error
   raise VfdSwmrError with the tool's message;
 - without $VFDSWMR_INSPECT the tool beside the loaded libvfdswmr is found.
"""
import os
import re
import struct
import subprocess
import sys

import swmrtest as t

t.need_h5py()
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import vfdswmr  # noqa: E402

if not os.environ.get("VFDSWMR_INSPECT"):
    t.skip("run through make check-python: VFDSWMR_INSPECT names the built vfd_swmr_inspect")
for var in ("HDF5_DRIVER", "HDF5_DRIVER_CONFIG"):
    if var in os.environ:
        t.fail("%s is set: these tests choose drivers per file" % var)
work = t.workdir()
path = os.path.join(work, "live.h5")
CONFIG = "tick_len=0;max_lag=5;publish=tick"  # ticks only when told: nothing changes between steps


def md_index(md):
    """The entries in the index of the metadata file md and its header's tick, decoded here
    (docs/FORMAT.md: VHDR tick at 20, index offset at 28; VIDX entry count at 20)."""
    with open(md, "rb") as fh:
        h = fh.read(80)
        tick, offset = struct.unpack_from("<QQ", h, 20)
        fh.seek(offset)
        x = fh.read(28)
    if h[:4] != b"VHDR" or x[:4] != b"VIDX":
        t.fail("%s: no header and index to compare with" % md)
    return struct.unpack_from("<I", x, 20)[0], tick


def writer_tick(w):
    ans = w.ask("status")
    m = re.match(r"status tick=(\d+)$", ans)
    if not m:
        t.fail("writer status: %r %s" % (ans, w.stderr()))
    return int(m.group(1))


w = t.Proc("writer", t.writer_argv("c", path, CONFIG), workdir=work)
try:
    if w.read() != "ready 0":
        t.fail("the writer did not get ready: %s" % w.stderr())
    w.expect("append 100", "flushed 100")
    w.expect("tick", "ticked")
    r = vfdswmr.File(path, "r")
    t.rows_ok(r, 100, "the reader")
    held = vfdswmr.status(r)
    w.expect("append 100", "flushed 200")
    w.expect("tick", "ticked")
    w.expect("append 100", "flushed 300")
    w.expect("tick", "ticked")
    tw = writer_tick(w)
    d = vfdswmr.inspect(path)
    want = {"state": "running", "session": "%016x" % held.session, "tick": tw, "tick_len": 0, "max_lag": 5,
            "page_size": 4096, "registered": 1, "marked": [(held.tick, tw - held.tick)]}
    got = {"state": d["writer"]["state"], "session": d["session"], "tick": d["tick"], "tick_len": d["tick_len"],
           "max_lag": d["max_lag"], "page_size": d["page_size"], "registered": d["readers"]["registered"],
           "marked": [(m["epoch"], m["lag"]) for m in d["readers"]["marked"]]}
    if got != want:
        t.fail("inspect() of the live session: %r, expected %r" % (got, want))
    t.ok("running: session %s, tick %d, the reader at tick %d, lag %d" % (d["session"], tw, held.tick,
                                                                          tw - held.tick))
    t.rows_ok(r, 100, "the reader after inspect()")
    if vfdswmr.status(r).tick != held.tick:
        t.fail("the reader's snapshot moved from tick %d to %d" % (held.tick, vfdswmr.status(r).tick))
    t.ok("the reader still holds tick %d and reads its 100 rows" % held.tick)

    vfdswmr.refresh(r)
    t.rows_ok(r, 300, "the reader after its refresh")
    now = vfdswmr.status(r)
    entries, md_tick = md_index(path + ".md")
    if md_tick != now.tick:
        t.fail("the metadata file is at tick %d, the reader at %d: the writer was to be idle" % (md_tick, now.tick))
    p = vfdswmr.inspect(path, pages=True)
    if (p["tick"], len(p["entries"]), p["session"]) != (now.tick, entries, "%016x" % now.session):
        t.fail("pages=True: tick %r, %d entries, session %r; the reader's snapshot: tick %d, %d entries, %016x"
               % (p["tick"], len(p["entries"]), p["session"], now.tick, entries, now.session))
    v = vfdswmr.inspect(path, verify=True)
    if v["ok"] is not True or v["problems"] != []:
        t.fail("verify=True of the live session: %r" % v)
    t.ok("pages=True: %d entries at tick %d, as the reader's snapshot; verify=True: ok" % (entries, now.tick))
    r.close()

    w.kill()
    dead = vfdswmr.inspect(path)
    out = subprocess.run([os.environ["VFDSWMR_RECOVER"], path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True).stdout
    m = re.search(r"recovered tick (\d+) of writer session ([0-9a-f]{16}): (\d+) pages \((\d+) bytes of metadata\) "
                  r"written back, end of file (\d+)", out)
    if not m:
        t.fail("vfd_swmr_recover: %s" % out)
    rec = dead.get("recovery") or {}
    got = (dead["writer"]["state"], rec.get("refused"), rec.get("tick"), dead["session"], rec.get("pages"),
           rec.get("bytes"), rec.get("eoa"))
    want = ("died", None, int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    if got != want:
        t.fail("inspect() of the dead writer's file: %r; vfd_swmr_recover did %r" % (got, want))
    t.ok("died: recovery of tick %s, %s pages, %s bytes, end of file %s, as vfd_swmr_recover did" % m.group(1, 3, 4, 5))
    with h5py.File(path, "r") as f:
        t.rows_ok(f, 300, "plain h5py after the recovery")
finally:
    w.kill()

fx = os.path.join(os.environ.get("VFDSWMR_FIXTURES", os.path.join(t.HERE, "..", "fixtures")), "md")
v = vfdswmr.inspect(os.path.join(work, "none.h5"), config="md_file_path=%s;md_file_name=hdr_checksum.md" % fx,
                    verify=True)
if v["ok"] is not False or not v["problems"] or v["problems"][0]["structure"] != "header":
    t.fail("verify=True of hdr_checksum.md: %r" % v)
t.ok("verify=True of a damaged header returns the problem: %s" % v["problems"][0]["error"])

fifo = os.path.join(work, "fifo.h5")
with h5py.File(fifo, "w") as f:
    f["x"] = np.arange(3)
os.mkfifo(fifo + ".md")
try:
    vfdswmr.inspect(fifo)
    t.fail("inspect() of a file whose metadata file is a FIFO returned")
except vfdswmr.VfdSwmrError as e:
    if fifo + ".md" not in str(e):
        t.fail("the error does not name the metadata file: %s" % e)
    t.ok("a FIFO as the metadata file: VfdSwmrError: ...%s" % str(e)[-80:])
try:
    vfdswmr.inspect(None)
    t.fail("inspect(None) without updater returned")
except vfdswmr.VfdSwmrError as e:
    if "exit status 2" not in str(e):
        t.fail("a usage error: %s" % e)
    t.ok("a usage error: VfdSwmrError (%s)" % str(e).splitlines()[0][:80])

env = dict(os.environ)
del env["VFDSWMR_INSPECT"]
env["PATH"] = "/usr/bin:/bin"
found = subprocess.run([sys.executable, "-c", "import vfdswmr; print(vfdswmr._inspect_tool())"], env=env,
                       stdout=subprocess.PIPE, text=True).stdout.strip()
if os.path.realpath(found) != os.path.realpath(os.environ["VFDSWMR_INSPECT"]):
    t.fail("without VFDSWMR_INSPECT the tool found is %r, not %s" % (found, os.environ["VFDSWMR_INSPECT"]))
t.ok("without VFDSWMR_INSPECT: %s, beside libvfdswmr" % found)
t.finish()
